package mrtr

import (
	"context"
	"sync"
	"time"
)

// handlerContext is the context a handler runs in under WithHandlerTimeout.
// It behaves as the one context.WithTimeout(parent, timeout) returns, with
// the end of the call as its cancel, but it makes that context (several
// allocations and a runtime timer) only once something needs it: Done (a
// handler that waits, or derives a context), Value, or Err once the
// deadline has passed, the parent is done or the call has ended. A handler
// that returns without any of these (most quick tools) costs one small
// allocation instead.
//
// Until the real context is made, nothing can tell the difference: no one
// holds its Done channel, Err reports what the real one would (nil before
// the deadline while the parent lives), and Value defers to the parent,
// which holds every value the real one would.
type handlerContext struct {
	parent   context.Context
	deadline time.Time

	mu     sync.Mutex
	ctx    context.Context // the real context; nil until made
	cancel context.CancelFunc
	ended  bool // end was called
}

func newHandlerContext(parent context.Context, timeout time.Duration) *handlerContext {
	h := new(handlerContext)
	h.start(parent, timeout)
	return h
}

// start readies a zero handlerContext.
func (h *handlerContext) start(parent context.Context, timeout time.Duration) {
	h.parent, h.deadline = parent, time.Now().Add(timeout)
}

// real returns the real context, making it first when create is true;
// nil when it is not made and create is false.
func (h *handlerContext) real(create bool) context.Context {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.ctx == nil && create {
		h.ctx, h.cancel = context.WithDeadline(h.parent, h.deadline)
		if h.ended {
			h.cancel()
		}
	}
	return h.ctx
}

// end is the cancel of the context: called once the handler returned.
func (h *handlerContext) end() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.ended = true
	if h.cancel != nil {
		h.cancel()
	}
}

// Deadline returns the earlier of the handler's deadline and the parent's.
func (h *handlerContext) Deadline() (time.Time, bool) {
	if d, ok := h.parent.Deadline(); ok && d.Before(h.deadline) {
		return d, true
	}
	return h.deadline, true
}

// Done makes the real context and returns its channel.
func (h *handlerContext) Done() <-chan struct{} { return h.real(true).Done() }

// Err reports nil while the call runs, its parent lives and the deadline
// has not passed, without making the real context; otherwise it makes it
// (whose error, and cause, are then those context.WithDeadline gives).
func (h *handlerContext) Err() error {
	h.mu.Lock()
	c, ended := h.ctx, h.ended
	h.mu.Unlock()
	if c != nil {
		return c.Err()
	}
	if !ended && h.parent.Err() == nil && time.Now().Before(h.deadline) {
		return nil
	}
	return h.real(true).Err()
}

// Value looks key up in the real context once made, in the parent before
// (which holds the same values). context.Cause asks Err first, which
// makes the real context once there is a cause to find.
func (h *handlerContext) Value(key any) any {
	if c := h.real(false); c != nil {
		return c.Value(key)
	}
	return h.parent.Value(key)
}

// String names the context as context.WithDeadline's does.
func (h *handlerContext) String() string {
	return "mrtr.handlerContext(" + h.deadline.String() + ")"
}
