package streamablehttp

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mrtrkit/mrtrkit/internal/testkit"
	"github.com/mrtrkit/mrtrkit/mrtr"
)

// clientFrom is an HTTP client whose connections leave from the loopback
// address ip, so that the server sees it as another peer.
func clientFrom(t *testing.T, ip string) *http.Client {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}, Timeout: 5 * time.Second}
	tr := &http.Transport{DialContext: d.DialContext}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: 10 * time.Second}
}

// Anonymous callers' in-flight limit counts per peer: one anonymous
// client holding its whole share does not lock out another.
func TestAnonymousLimitsPerPeer(t *testing.T) {
	srv := testkit.Server(t, testkit.Desc("peers", "1.0.0"), mrtr.WithCodec(testkit.Codec(t)), mrtr.WithMaxInFlight(1))
	entered, release := make(chan struct{}, 2), make(chan struct{})
	require.NoError(t, srv.AddTool(mrtr.Tool{Name: "hold", InputSchema: []byte(`{"type":"object"}`)}, mrtr.HandlerFunc(func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
		entered <- struct{}{}
		select {
		case <-release:
		case <-ctx.Done():
		}
		return mrtr.TextResult("held"), nil
	})))
	require.NoError(t, srv.AddTool(mrtr.Tool{Name: "quick", InputSchema: []byte(`{"type":"object"}`)}, mrtr.HandlerFunc(func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
		return mrtr.TextResult("quick"), nil
	})))
	h, err := New(srv, WithLogger(quiet))
	require.NoError(t, err)
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	send := func(c *http.Client, tool string) int {
		req, err := toolCall(1, tool, `{}`).request(context.Background(), ts.URL)
		require.NoError(t, err)
		resp, err := c.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		_, _ = io.Copy(io.Discard, resp.Body)
		return resp.StatusCode
	}
	a, a2, b := clientFrom(t, "127.0.0.1"), clientFrom(t, "127.0.0.1"), clientFrom(t, "127.0.0.2")
	done := make(chan int, 1)
	go func() { done <- send(a, "hold") }()
	<-entered
	assert.Equal(t, http.StatusTooManyRequests, send(a2, "quick"), "the same peer is past its share")
	assert.Equal(t, http.StatusOK, send(b, "quick"), "another peer has a share of its own")
	close(release)
	assert.Equal(t, http.StatusOK, <-done)
}
