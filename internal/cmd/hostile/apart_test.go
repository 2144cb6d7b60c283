//go:build unix

package main

import (
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A call reported by the child process reads back as it was, its time
// moved by the offset.
func TestGoodLineRoundTrip(t *testing.T) {
	g := &goodCaller{outcomes: newCounter()}
	tr := callTrace{total: 1500 * time.Millisecond, connect: 3 * time.Millisecond, wait: 1490 * time.Millisecond, dialed: true}
	line := fmt.Sprintf("call %d %d %d %d %d %s %s", 2*time.Second, tr.total, 1, tr.connect, tr.wait, "wrong", strconv.Quote("status 429: \"busy\" now"))
	parseGoodLine(line, 100*time.Millisecond, g)
	parseGoodLine("garbage", 0, g)
	require.Equal(t, []time.Duration{2100 * time.Millisecond}, g.at, "the time of the one good line, moved by the offset")
	require.Equal(t, []time.Duration{tr.total}, g.latency)
	assert.Equal(t, tr, g.worst)
	assert.Equal(t, 1, g.dials)
	assert.Equal(t, 1, g.outcomes.get("wrong"), "outcomes %v", g.outcomes)
	assert.Equal(t, []string{`wrong: status 429: "busy" now`}, g.outcomes.examples())
}
