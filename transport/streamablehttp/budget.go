package streamablehttp

import (
	"context"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/mrtrkit/mrtrkit/mrtr"
)

// This file holds the budget of bytes in flight (WithMaxBytesInFlight):
// a bound, across all the requests a Handler serves, on the bytes of the
// large request bodies it reads and of the large JSON answers it writes.
// Small messages, up to largeMessage bytes, are never counted and never
// wait, so a flood of large ones cannot hold up an ordinary call.

// largeMessage is the size up to which a body or an answer is not counted
// against the budget: what the Handler's buffer pool keeps.
const largeMessage = maxPooled

// budget counts the bytes of large messages in flight. Waiters are served
// in the order they came, so that a large message is not starved by a
// stream of smaller ones.
type budget struct {
	limit int64

	mu      sync.Mutex
	used    int64
	waiting []*budgetWaiter
}

type budgetWaiter struct {
	n     int64
	ready chan struct{} // closed when the bytes are granted
}

func newBudget(limit int64) *budget {
	if limit <= 0 {
		return nil
	}
	return &budget{limit: limit}
}

// acquire takes n bytes (at most the whole limit, so that a message larger
// than the budget can go alone), waiting until they are free, ctx ends or
// wait passes (wait <= 0: no bound but ctx). It returns the bytes taken,
// to be given back with release, or 0 when none could be.
func (b *budget) acquire(ctx context.Context, n int64, wait time.Duration) int64 {
	if n <= 0 {
		return 0
	}
	n = min(n, b.limit)
	b.mu.Lock()
	if len(b.waiting) == 0 && b.used+n <= b.limit {
		b.used += n
		b.mu.Unlock()
		return n
	}
	w := &budgetWaiter{n: n, ready: make(chan struct{})}
	b.waiting = append(b.waiting, w)
	b.mu.Unlock()
	var expired <-chan time.Time
	if wait > 0 {
		t := time.NewTimer(wait)
		defer t.Stop()
		expired = t.C
	}
	select {
	case <-w.ready:
		return n
	case <-ctx.Done():
	case <-expired:
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	select {
	case <-w.ready:
		// Granted meanwhile.
		return n
	default:
	}
	for i, o := range b.waiting {
		if o == w {
			b.waiting = append(b.waiting[:i], b.waiting[i+1:]...)
			break
		}
	}
	// The waiter gone may have been holding up those behind it.
	b.grant()
	return 0
}

// release gives back n bytes taken with acquire.
func (b *budget) release(n int64) {
	if n <= 0 {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.used -= n
	b.grant()
}

// grant serves the waiters at the head of the queue that now fit. The
// caller holds b.mu.
func (b *budget) grant() {
	for len(b.waiting) > 0 {
		w := b.waiting[0]
		if b.used+w.n > b.limit {
			return
		}
		b.used += w.n
		close(w.ready)
		b.waiting[0] = nil
		b.waiting = b.waiting[1:]
	}
}

// share is what one request holds of the budget: the bytes of its large
// body while it is read and handled, then those of its large answer while
// it is written. The zero share (no budget) holds nothing and never
// waits.
type share struct {
	b    *budget
	held int64
}

// resize makes the share n bytes: at once when n is smaller than what is
// held (a message of up to largeMessage bytes counts as nothing), else
// waiting for the difference as acquire does. On failure the share is left
// as it was and resize returns false.
func (s *share) resize(ctx context.Context, n int64, wait time.Duration) bool {
	if s.b == nil {
		return true
	}
	if n <= largeMessage {
		n = 0
	}
	n = min(n, s.b.limit)
	switch {
	case n == s.held:
		return true
	case n < s.held:
		s.b.release(s.held - n)
		s.held = n
		return true
	}
	got := s.b.acquire(ctx, n-s.held, wait)
	if got == 0 {
		return false
	}
	s.held += got
	return true
}

// release gives back all the share holds.
func (s *share) release() {
	if s.b != nil {
		s.b.release(s.held)
		s.held = 0
	}
}

// shareOf returns the budget share of the request w answers: nil when w
// did not come through the Handler, whose shares live on its writers.
func shareOf(w http.ResponseWriter) *share {
	if t, ok := w.(*timedWriter); ok && t.share.b != nil {
		return &t.share
	}
	return nil
}

// admitAnswer makes the share of the request w answers the size of its
// answer, n bytes, before the answer is written: the body's bytes, which
// answering does not need, go back, and a large answer waits for room, at
// most the write timeout. It reports false when there was none, for the
// caller to answer with busyError instead.
func admitAnswer(ctx context.Context, w http.ResponseWriter, n int64) bool {
	s := shareOf(w)
	if s == nil {
		return true
	}
	return s.resize(ctx, n, writeTimeoutOf(w))
}

// busyError is the error that answers a request for whose large body or
// answer the budget had no room in time.
func busyError() *mrtr.Error {
	return mrtr.NewError(mrtr.CodeInternalError, "Server busy: too many large messages in flight; retry later", nil)
}

// writeBusy answers 503 with busyError and a Retry-After of one second.
func writeBusy(w http.ResponseWriter, id mrtr.ID, log *slog.Logger) {
	w.Header()["Retry-After"] = hvRetryAfter
	writeError(w, statusBusy, id, busyError(), log)
}

var hvRetryAfter = []string{"1"}
