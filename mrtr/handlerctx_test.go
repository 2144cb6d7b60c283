package mrtr

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type ctxKey struct{}

// The handler's context must be indistinguishable from the one
// context.WithTimeout returns, whichever way a handler looks at it. Each
// case runs against both, so the real one is the oracle.
func TestHandlerContextActsAsWithTimeout(t *testing.T) {
	errParent := errors.New("client went away")
	type ctxs struct {
		ctx context.Context
		end func()
	}
	makers := map[string]func(parent context.Context, d time.Duration) ctxs{
		"context.WithTimeout": func(parent context.Context, d time.Duration) ctxs {
			c, cancel := context.WithTimeout(parent, d)
			return ctxs{c, cancel}
		},
		"handlerContext": func(parent context.Context, d time.Duration) ctxs {
			h := newHandlerContext(parent, d)
			return ctxs{h, h.end}
		},
	}
	for name, mk := range makers {
		t.Run(name, func(t *testing.T) {
			t.Run("running", func(t *testing.T) {
				parent := context.WithValue(context.Background(), ctxKey{}, "v")
				c := mk(parent, time.Hour)
				defer c.end()
				assert.NoError(t, c.ctx.Err())
				assert.NoError(t, context.Cause(c.ctx))
				assert.Equal(t, "v", c.ctx.Value(ctxKey{}))
				d, ok := c.ctx.Deadline()
				assert.True(t, ok)
				assert.WithinDuration(t, time.Now().Add(time.Hour), d, time.Minute)
				select {
				case <-c.ctx.Done():
					t.Fatal("done while running")
				default:
				}
			})
			t.Run("deadline passed, polled with Err", func(t *testing.T) {
				c := mk(context.Background(), 5*time.Millisecond)
				defer c.end()
				time.Sleep(20 * time.Millisecond)
				assert.ErrorIs(t, c.ctx.Err(), context.DeadlineExceeded)
				assert.ErrorIs(t, context.Cause(c.ctx), context.DeadlineExceeded)
				select {
				case <-c.ctx.Done():
				case <-time.After(5 * time.Second):
					t.Fatal("Done never closed")
				}
			})
			t.Run("deadline passed, seen by Cause first", func(t *testing.T) {
				// A cancellable parent, as net/http's request context is:
				// Cause then finds a cancelCtx among the values.
				parent, cancel := context.WithCancel(context.Background())
				defer cancel()
				c := mk(parent, 5*time.Millisecond)
				defer c.end()
				time.Sleep(20 * time.Millisecond)
				assert.ErrorIs(t, context.Cause(c.ctx), context.DeadlineExceeded)
			})
			t.Run("deadline passed while waiting on Done", func(t *testing.T) {
				c := mk(context.Background(), 10*time.Millisecond)
				defer c.end()
				select {
				case <-c.ctx.Done():
				case <-time.After(5 * time.Second):
					t.Fatal("Done never closed")
				}
				assert.ErrorIs(t, c.ctx.Err(), context.DeadlineExceeded)
			})
			t.Run("earlier parent deadline", func(t *testing.T) {
				parent, cancel := context.WithTimeout(context.Background(), time.Minute)
				defer cancel()
				c := mk(parent, time.Hour)
				defer c.end()
				pd, _ := parent.Deadline()
				d, ok := c.ctx.Deadline()
				assert.True(t, ok)
				assert.Equal(t, pd, d)
			})
			t.Run("parent cancelled, polled with Err", func(t *testing.T) {
				parent, cancel := context.WithCancelCause(context.Background())
				c := mk(parent, time.Hour)
				defer c.end()
				cancel(errParent)
				assert.ErrorIs(t, c.ctx.Err(), context.Canceled)
				assert.ErrorIs(t, context.Cause(c.ctx), errParent)
			})
			t.Run("parent cancelled while waiting on Done", func(t *testing.T) {
				parent, cancel := context.WithCancel(context.Background())
				c := mk(parent, time.Hour)
				defer c.end()
				done := c.ctx.Done()
				cancel()
				select {
				case <-done:
				case <-time.After(5 * time.Second):
					t.Fatal("Done never closed")
				}
				assert.ErrorIs(t, c.ctx.Err(), context.Canceled)
			})
			t.Run("ended, then looked at", func(t *testing.T) {
				c := mk(context.Background(), time.Hour)
				c.end()
				assert.ErrorIs(t, c.ctx.Err(), context.Canceled, "a goroutine the handler left behind must see the call ended")
				select {
				case <-c.ctx.Done():
				case <-time.After(5 * time.Second):
					t.Fatal("Done never closed")
				}
			})
			t.Run("ended while waiting on Done", func(t *testing.T) {
				c := mk(context.Background(), time.Hour)
				done := c.ctx.Done()
				c.end()
				select {
				case <-done:
				case <-time.After(5 * time.Second):
					t.Fatal("Done never closed")
				}
				assert.ErrorIs(t, c.ctx.Err(), context.Canceled)
			})
			t.Run("derived contexts and AfterFunc", func(t *testing.T) {
				c := mk(context.Background(), 10*time.Millisecond)
				defer c.end()
				child, cancel := context.WithCancel(c.ctx)
				defer cancel()
				ran := make(chan struct{})
				context.AfterFunc(c.ctx, func() { close(ran) })
				select {
				case <-child.Done():
				case <-time.After(5 * time.Second):
					t.Fatal("the derived context never ended")
				}
				assert.ErrorIs(t, child.Err(), context.DeadlineExceeded)
				select {
				case <-ran:
				case <-time.After(5 * time.Second):
					t.Fatal("AfterFunc never ran")
				}
			})
		})
	}
}

// Concurrent use: the race detector watches every path at once.
func TestHandlerContextConcurrent(t *testing.T) {
	for range 50 {
		h := newHandlerContext(context.Background(), time.Millisecond)
		var wg sync.WaitGroup
		for i := range 4 {
			wg.Go(func() {
				switch i {
				case 0:
					<-h.Done()
				case 1:
					for h.Err() == nil {
						time.Sleep(100 * time.Microsecond)
					}
				case 2:
					_ = h.Value(ctxKey{})
					_ = context.Cause(h)
				case 3:
					time.Sleep(500 * time.Microsecond)
					h.end()
				}
			})
		}
		wg.Wait()
		require.Error(t, h.Err())
	}
}

// A quick handler that never looks at its context costs no timer.
func BenchmarkHandlerContext(b *testing.B) {
	parent := context.Background()
	b.Run("handlerContext", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			h := newHandlerContext(parent, time.Minute)
			_ = h.Err()
			h.end()
		}
	})
	b.Run("context.WithTimeout", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			c, cancel := context.WithTimeout(parent, time.Minute)
			_ = c.Err()
			cancel()
		}
	})
}
