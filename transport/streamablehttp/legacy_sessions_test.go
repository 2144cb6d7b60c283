package streamablehttp

import (
	"context"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mrtrkit/mrtrkit/mrtr/legacy"
)

const lgInitBody = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`

// tryInitialize sends initialize and, when it succeeds, takes the
// session; it returns the status and body either way.
func (c *lgClient) tryInitialize() (int, []byte) {
	c.t.Helper()
	c.sid, c.version = "", ""
	resp, body := c.post(lgInitBody)
	if resp.StatusCode == http.StatusOK {
		c.sid, c.version = resp.Header.Get(hdrSessionID), "2025-11-25"
	}
	return resp.StatusCode, body
}

// holdCall starts a call of the hold tool on c's session and returns once
// the handler runs; cancel ends it.
func (c *lgClient) holdCall(ctx context.Context, id int) {
	c.t.Helper()
	go func() {
		resp, err := c.hc.Do(c.request(ctx, http.MethodPost, lgCall(id, "hold", `{}`)))
		if err == nil {
			resp.Body.Close()
		}
	}()
	select {
	case <-c.f.holding:
	case <-time.After(5 * time.Second):
		c.t.Fatal("the hold call did not start")
	}
}

// TestLegacySessionsPerPrincipal is L5 on the wire: one principal (or one
// anonymous peer) holding as many busy sessions as it may is refused a
// new one with 429, and as many bridged calls as it may is refused another
// call, while other principals and peers are served; a principal whose
// sessions are idle makes room with its own.
func TestLegacySessionsPerPrincipal(t *testing.T) {
	f := newLegacyFixture(t, nil, []legacy.Option{legacy.WithMaxSessionsPerPrincipal(2), legacy.WithMaxCallsPerPrincipal(3)})
	ctx, cancel := context.WithCancel(context.Background())
	defer func() {
		cancel()
		for range 3 {
			select {
			case <-f.held:
			case <-time.After(5 * time.Second):
			}
		}
	}()

	m1, m2, m3 := f.client(t, "mallory"), f.client(t, "mallory"), f.client(t, "mallory")
	for _, c := range []*lgClient{m1, m2} {
		status, body := c.tryInitialize()
		require.Equal(t, http.StatusOK, status, "%s", body)
	}
	m1.holdCall(ctx, 1)
	m2.holdCall(ctx, 2)
	status, body := m3.tryInitialize()
	assert.Equal(t, http.StatusTooManyRequests, status, "%s", body)
	assert.Contains(t, string(body), "Too many sessions for this caller")
	alice := f.client(t, "alice")
	status, body = alice.tryInitialize()
	require.Equal(t, http.StatusOK, status, "another principal is served: %s", body)

	// Calls over all of mallory's sessions: the third is its last.
	m1.holdCall(ctx, 3)
	_, body = m2.post(lgCall(4, "echo", `{}`))
	assert.Contains(t, string(body), "Too many calls in flight for this caller (at most 3")
	_, body = alice.post(lgCall(5, "echo", `{}`))
	assert.Contains(t, string(body), "echo {}", "another principal's call is served")

	// Anonymous callers count per peer.
	a1, a2, a3 := f.client(t, ""), f.client(t, ""), f.client(t, "")
	a1.hc, a2.hc, a3.hc = clientFrom(t, "127.0.0.1"), clientFrom(t, "127.0.0.1"), clientFrom(t, "127.0.0.2")
	for _, c := range []*lgClient{a1, a2} {
		status, body := c.tryInitialize()
		require.Equal(t, http.StatusOK, status, "%s", body)
	}
	// Idle sessions: the peer's third session makes room with its own
	// least recently used one.
	first := a1.sid
	status, body = a1.tryInitialize()
	require.Equal(t, http.StatusOK, status, "%s", body)
	a1.sid = first
	status, body = a3.tryInitialize()
	require.Equal(t, http.StatusOK, status, "%s", body)
	resp, _ := a1.post(`{"jsonrpc":"2.0","id":9,"method":"ping"}`)
	assert.Equal(t, http.StatusOK, resp.StatusCode, "an evicted idle session lives on: only its extras were forgotten")
}

// TestLegacyDeletedSessionStaysDeleted is the review's L4 reproduction on
// the wire: a deleted session id stays unknown after many other deletions
// (by another principal, or by its own), and after a restart.
func TestLegacyDeletedSessionStaysDeleted(t *testing.T) {
	f := newLegacyFixture(t, nil, []legacy.Option{legacy.WithMaxSessions(2), legacy.WithMaxSessionsPerPrincipal(1)})
	alice := f.client(t, "alice")
	alice.initialize(`{}`, "2025-11-25")
	deleted := alice.sid
	resp, _ := alice.do(http.MethodDelete, "")
	require.Equal(t, http.StatusNoContent, resp.StatusCode)

	gone := func(why string) {
		t.Helper()
		c := f.client(t, "alice")
		c.sid, c.version = deleted, "2025-11-25"
		resp, body := c.post(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)
		assert.Equal(t, http.StatusNotFound, resp.StatusCode, "%s: %s", why, body)
	}
	gone("right after DELETE")

	mallory := f.client(t, "mallory")
	for range 40 {
		status, body := mallory.tryInitialize()
		require.Equal(t, http.StatusOK, status, "%s", body)
		resp, _ := mallory.do(http.MethodDelete, "")
		require.Equal(t, http.StatusNoContent, resp.StatusCode)
	}
	gone("after 40 deletions by another principal")

	for range 40 {
		status, body := alice.tryInitialize()
		require.Equal(t, http.StatusOK, status, "%s", body)
		resp, _ := alice.do(http.MethodDelete, "")
		require.Equal(t, http.StatusNoContent, resp.StatusCode)
	}
	gone("after 40 deletions of its own")
	status, body := alice.tryInitialize()
	require.Equal(t, http.StatusOK, status, "%s", body)
	resp, body = alice.post(`{"jsonrpc":"2.0","id":2,"method":"ping"}`)
	assert.Equal(t, http.StatusOK, resp.StatusCode, "a session made after them is served: %s", body)

	// A restart: a new Engine with the same keys and audience.
	g := newLegacyFixture(t, nil, nil)
	c := g.client(t, "alice")
	c.sid, c.version = deleted, "2025-11-25"
	resp, body = c.post(`{"jsonrpc":"2.0","id":3,"method":"ping"}`)
	assert.Equal(t, http.StatusNotFound, resp.StatusCode, "after a restart: %s", body)
}

// TestLegacyRestartWithPortableSessions: the restart check above means
// something: with WithPortableSessions, another Engine serves the session
// (and, as documented, would serve a deleted one too).
func TestLegacyRestartWithPortableSessions(t *testing.T) {
	f := newLegacyFixture(t, nil, []legacy.Option{legacy.WithPortableSessions()})
	c := f.client(t, "alice")
	c.initialize(`{}`, "2025-11-25")
	g := newLegacyFixture(t, nil, []legacy.Option{legacy.WithPortableSessions()})
	c.f = g
	resp, body := c.post(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	assert.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
}

// TestLegacyFloodKeepsOthersSubscriptions is the review's L4 extras
// reproduction on the wire: with the process's session table full, another
// principal's initialize flood (of sessions that subscribe too) does not
// make an idle session forget its subscriptions.
func TestLegacyFloodKeepsOthersSubscriptions(t *testing.T) {
	f := newLegacyFixture(t, nil, []legacy.Option{legacy.WithMaxSessions(3)})
	alice := f.client(t, "alice")
	alice.initialize(`{}`, "2025-11-25")
	resp, body := alice.post(`{"jsonrpc":"2.0","id":1,"method":"resources/subscribe","params":{"uri":"file:///plain.txt"}}`)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Nil(t, decodeRPC(t, body).Error)

	mallory := f.client(t, "mallory")
	for i := range 6 {
		status, body := mallory.tryInitialize()
		require.Equal(t, http.StatusOK, status, "%s", body)
		resp, body := mallory.post(`{"jsonrpc":"2.0","id":` + strconv.Itoa(i+10) + `,"method":"resources/subscribe","params":{"uri":"file:///m/` + strconv.Itoa(i) + `"}}`)
		require.Equal(t, http.StatusOK, resp.StatusCode)
		require.Nil(t, decodeRPC(t, body).Error)
	}

	s := alice.open(http.MethodGet, "")
	defer s.cancel()
	e, ok := s.next(5 * time.Second)
	require.True(t, ok)
	require.NotEmpty(t, e.comment)
	time.Sleep(100 * time.Millisecond) // the stream listens
	f.srv.NotifyResourceUpdated("file:///plain.txt")
	m, _, ok := s.msg(5 * time.Second)
	require.True(t, ok)
	assert.Equal(t, "notifications/resources/updated", m.Method, "alice's subscription survived the flood")
}

// TestLegacyFullTableServesNewcomer: when every caller holds one idle
// session that holds subscriptions, a newcomer is still served (the least
// recently used one gives up its extras) rather than refused until the
// idle timeout.
func TestLegacyFullTableServesNewcomer(t *testing.T) {
	f := newLegacyFixture(t, nil, []legacy.Option{legacy.WithMaxSessions(2)})
	for i, user := range []string{"alice", "bob"} {
		c := f.client(t, user)
		c.initialize(`{}`, "2025-11-25")
		resp, body := c.post(`{"jsonrpc":"2.0","id":` + strconv.Itoa(i+1) + `,"method":"resources/subscribe","params":{"uri":"file:///plain.txt"}}`)
		require.Equal(t, http.StatusOK, resp.StatusCode)
		require.Nil(t, decodeRPC(t, body).Error)
	}
	status, body := f.client(t, "carol").tryInitialize()
	assert.Equal(t, http.StatusOK, status, "%s", body)
}
