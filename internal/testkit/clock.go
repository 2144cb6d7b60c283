package testkit

import (
	"sync"
	"time"
)

// Start is the instant at which test clocks usually start.
var Start = time.Date(2026, 7, 28, 12, 0, 0, 0, time.UTC)

// Clock is an adjustable clock, safe for concurrent use, whose Now method
// can be given to state.WithClock.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// NewClock returns a Clock that reads start until it is advanced.
func NewClock(start time.Time) *Clock { return &Clock{now: start} }

// Now returns the clock's current time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock forward by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}
