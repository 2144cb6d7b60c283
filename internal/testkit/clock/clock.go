// Package clock holds an adjustable clock for tests. It imports nothing
// of mrtrkit, so that the tests of every package, state's included, can
// use it (testkit itself imports mrtr, which imports state).
package clock

import (
	"sync"
	"time"
)

// Clock is an adjustable clock, safe for concurrent use, whose Now method
// can be given to state.WithClock.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// New returns a Clock that reads start until it is set or advanced.
func New(start time.Time) *Clock { return &Clock{now: start} }

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

// Set makes the clock read t.
func (c *Clock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = t
}
