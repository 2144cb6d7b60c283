package testkit

import (
	"time"

	"github.com/mrtrkit/mrtrkit/internal/testkit/clock"
)

// Start is the instant at which test clocks usually start.
var Start = time.Date(2026, 7, 28, 12, 0, 0, 0, time.UTC)

// Clock is the adjustable clock of package clock, named here for the
// tests that already import testkit.
type Clock = clock.Clock

// NewClock returns a Clock that reads start until it is advanced.
func NewClock(start time.Time) *Clock { return clock.New(start) }
