package testkit

import (
	"github.com/mrtrkit/mrtrkit/mrtr"
	"github.com/mrtrkit/mrtrkit/mrtr/mrtrtest"
)

// ThreeRounds is mrtrtest.ThreeRounds, named here for the tests that
// already import testkit: a tool that asks a form, a model completion and
// the roots, and completes with "name|completion|root" and suffix.
func ThreeRounds(suffix string) mrtr.Handler { return mrtrtest.ThreeRounds(suffix) }
