//go:build unix

package main

import (
	"context"
	"io"
	"net"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mrtrkit/mrtrkit/transport/streamablehttp"
)

// Held connections come from 127.0.0.x addresses and go to loopback
// targets only.
func TestHoldSourcesLoopbackOnly(t *testing.T) {
	ips, err := holdSources("http://127.0.0.1:3001/mcp", 10, 3)
	require.NoError(t, err)
	require.Len(t, ips, 3)
	assert.Equal(t, "127.0.0.10", ips[0].String())
	assert.Equal(t, "127.0.0.12", ips[2].String())
	ips, err = holdSources("http://127.0.0.1:3001/mcp", 10, 0)
	require.NoError(t, err)
	assert.Equal(t, []net.IP{nil}, ips, "0 addresses: the system's choice")
	_, err = holdSources("http://192.0.2.1:3001/mcp", 10, 3)
	assert.ErrorContains(t, err, "loopback")
	_, err = holdSources("http://example.com/mcp", 10, 3)
	assert.ErrorContains(t, err, "loopback")
	_, err = holdSources("http://127.0.0.1:3001/mcp", 250, 10)
	assert.Error(t, err)
}

// Holders count the answers and tell connections the server closed (a
// refusal under NewHTTPServer) from those it keeps.
func TestHoldersCountClosedAndHeld(t *testing.T) {
	for _, tc := range []struct {
		name   string
		status int
		closed int64
	}{{"refused", http.StatusTooManyRequests, 4}, {"served", http.StatusOK, 0}} {
		t.Run(tc.name, func(t *testing.T) {
			hs := streamablehttp.NewHTTPServer("", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				_, _ = io.Copy(io.Discard, r.Body)
				w.WriteHeader(tc.status)
			}))
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			require.NoError(t, err)
			go func() { _ = hs.Serve(ln) }()
			defer hs.Close()
			u := "http://" + ln.Addr().String() + "/mcp"
			from, err := holdSources(u, 10, 2)
			require.NoError(t, err)

			h := newHolders()
			ctx, cancel := context.WithCancel(context.Background())
			opened := make(chan struct{})
			done := make(chan struct{})
			go func() {
				defer close(done)
				h.run(ctx, u, "listen", 4, 2, 0, from, 0, func() { close(opened) })
			}()
			<-opened
			require.Eventually(t, func() bool { return h.closedBy.Load() == tc.closed }, 5*time.Second, 10*time.Millisecond)
			time.Sleep(100 * time.Millisecond)
			cancel()
			<-done
			assert.Equal(t, int64(4), h.opened.Load())
			assert.Equal(t, tc.closed, h.closedBy.Load())
			assert.Equal(t, 4, h.answers.get(strconv.Itoa(tc.status)))
			assert.Equal(t, int(4-tc.closed), h.ends.get("open at end"))
			assert.Zero(t, h.open.Load())
		})
	}
}
