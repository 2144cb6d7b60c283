//go:build unix

package main

import (
	"fmt"
	"strconv"
	"testing"
	"time"
)

// A call reported by the child process reads back as it was, its time
// moved by the offset.
func TestGoodLineRoundTrip(t *testing.T) {
	g := &goodCaller{outcomes: newCounter()}
	tr := callTrace{total: 1500 * time.Millisecond, connect: 3 * time.Millisecond, wait: 1490 * time.Millisecond, dialed: true}
	line := fmt.Sprintf("call %d %d %d %d %d %s %s", 2*time.Second, tr.total, 1, tr.connect, tr.wait, "wrong", strconv.Quote("status 429: \"busy\" now"))
	parseGoodLine(line, 100*time.Millisecond, g)
	parseGoodLine("garbage", 0, g)
	if len(g.at) != 1 || g.at[0] != 2100*time.Millisecond || g.latency[0] != tr.total {
		t.Fatalf("recorded %v %v", g.at, g.latency)
	}
	if g.worst != tr || g.dials != 1 {
		t.Fatalf("worst %+v, dials %d", g.worst, g.dials)
	}
	if g.outcomes.get("wrong") != 1 || g.outcomes.examples()[0] != `wrong: status 429: "busy" now` {
		t.Fatalf("outcomes %v %v", g.outcomes, g.outcomes.examples())
	}
}
