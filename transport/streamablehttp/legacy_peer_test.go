package streamablehttp

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mrtrkit/mrtrkit/mrtr"
)

// TestLegacyAnonymousLimitsPerPeer is the review's M3 reproduction on the
// wire: anonymous 2025-11-25 clients count against the Server's limits per
// peer, as modern ones do. One anonymous client (127.0.0.1) holding its
// whole share of calls in flight, and of listen streams, neither refuses
// another's call nor ends another's GET stream (127.0.0.2); it is itself
// refused past its share.
func TestLegacyAnonymousLimitsPerPeer(t *testing.T) {
	f := newLegacyFixture(t, []mrtr.Option{mrtr.WithMaxInFlight(1), mrtr.WithMaxListeners(100, 1)}, nil)
	caps := `{"elicitation":{},"sampling":{},"roots":{}}`
	attacker, attacker2, victim := f.client(t, ""), f.client(t, ""), f.client(t, "")
	attacker.hc, attacker2.hc, victim.hc = clientFrom(t, "127.0.0.1"), clientFrom(t, "127.0.0.1"), clientFrom(t, "127.0.0.2")
	for _, c := range []*lgClient{attacker, attacker2, victim} {
		c.initialize(caps, "2025-11-25")
	}

	// Calls: the attacker's one call in flight is its whole share.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		resp, err := attacker.hc.Do(attacker.request(ctx, http.MethodPost, lgCall(1, "hold", `{}`)))
		if err == nil {
			resp.Body.Close()
		}
	}()
	<-f.holding
	resp, body := victim.post(lgCall(2, "echo", `{"x":1}`))
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.NotContains(t, string(body), "Too many requests", "another peer's call is served")
	assert.Contains(t, string(body), `echo {\"x\":1}`)
	_, body = attacker2.post(lgCall(3, "echo", `{}`))
	assert.Contains(t, string(body), "Too many requests in flight", "the holder's own peer is at its limit")
	cancel()
	<-f.held

	// Streams: the attacker's one GET stream is its whole share of
	// listeners; the victim's stream stays open.
	a := attacker.open(http.MethodGet, "")
	defer a.cancel()
	e, ok := a.next(5 * time.Second)
	require.True(t, ok)
	require.NotEmpty(t, e.comment, "the stream opens")
	time.Sleep(100 * time.Millisecond) // the attacker's listen is registered
	v := victim.open(http.MethodGet, "")
	defer v.cancel()
	e, ok = v.next(5 * time.Second)
	require.True(t, ok)
	require.NotEmpty(t, e.comment, "the stream opens")
	select {
	case e, ok := <-v.events:
		assert.True(t, ok, "another peer's GET stream ended at once")
		if ok {
			assert.NotEmpty(t, e.comment, "only keep-alive comments")
		}
	case <-time.After(500 * time.Millisecond):
	}
}

// TestLegacyRefusedStreamIsRefused: a session stream whose listen the
// Server refuses (the caller's listener limit) is answered 429 with the
// Server's message, not with a 200 stream that ends at once.
func TestLegacyRefusedStreamIsRefused(t *testing.T) {
	f := newLegacyFixture(t, []mrtr.Option{mrtr.WithMaxListeners(100, 1)}, nil)
	a, b := f.client(t, ""), f.client(t, "")
	a.initialize(`{}`, "2025-11-25")
	b.initialize(`{}`, "2025-11-25")
	s := a.open(http.MethodGet, "")
	defer s.cancel()
	e, ok := s.next(5 * time.Second)
	require.True(t, ok)
	require.NotEmpty(t, e.comment, "the first stream opens")

	resp, body := b.do(http.MethodGet, "")
	assert.Equal(t, http.StatusTooManyRequests, resp.StatusCode, "%s", body)
	assert.Contains(t, string(body), "Too many subscriptions/listen streams open for this caller (at most 1)")
	assert.NotContains(t, resp.Header.Get("Content-Type"), "text/event-stream")
}
