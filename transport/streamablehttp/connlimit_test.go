package streamablehttp

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mrtrkit/mrtrkit/discover"
	"github.com/mrtrkit/mrtrkit/internal/testkit"
	"github.com/mrtrkit/mrtrkit/mrtr"
)

// limitMux answers /ok with 200, /429 and /503 with those statuses, and
// /block with 200 only once release is closed, after telling entered.
func limitMux(entered chan<- struct{}, release <-chan struct{}) *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("/ok", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok") })
	mux.HandleFunc("/429", func(w http.ResponseWriter, _ *http.Request) { http.Error(w, "slow down", http.StatusTooManyRequests) })
	mux.HandleFunc("/503", func(w http.ResponseWriter, _ *http.Request) { http.Error(w, "busy", http.StatusServiceUnavailable) })
	mux.HandleFunc("/block", func(w http.ResponseWriter, _ *http.Request) {
		entered <- struct{}{}
		<-release
		_, _ = io.WriteString(w, "done")
	})
	return mux
}

// waitEntered waits for a /block request to reach its handler.
func waitEntered(t *testing.T, entered <-chan struct{}) {
	t.Helper()
	select {
	case <-entered:
	case <-time.After(5 * time.Second):
		require.FailNow(t, "the request did not reach the handler")
	}
}

// serveOn serves hs on a fresh 127.0.0.1 listener until the test ends and
// returns its address.
func serveOn(t *testing.T, hs *http.Server) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	go func() { _ = hs.Serve(ln) }()
	t.Cleanup(func() { _ = hs.Close() })
	return ln.Addr().String()
}

// wireConn is one client connection spoken to in raw HTTP/1.1.
type wireConn struct {
	t  *testing.T
	c  net.Conn
	br *bufio.Reader
}

func dialWire(t *testing.T, addr string) *wireConn {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return &wireConn{t: t, c: c, br: bufio.NewReader(c)}
}

// send writes a POST of body to path.
func (w *wireConn) send(path string, header http.Header, body string) {
	w.t.Helper()
	var b strings.Builder
	b.WriteString("POST " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\n")
	_ = header.Write(&b)
	b.WriteString("Content-Length: " + itoa(len(body)) + "\r\n\r\n" + body)
	require.NoError(w.t, w.c.SetWriteDeadline(time.Now().Add(5*time.Second)))
	_, err := io.WriteString(w.c, b.String())
	require.NoError(w.t, err)
}

// read reads one response (its whole body unless it is an event stream).
func (w *wireConn) read() (*http.Response, string) {
	w.t.Helper()
	require.NoError(w.t, w.c.SetReadDeadline(time.Now().Add(5*time.Second)))
	resp, err := http.ReadResponse(w.br, nil)
	require.NoError(w.t, err)
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		return resp, ""
	}
	b, err := io.ReadAll(resp.Body)
	require.NoError(w.t, err)
	return resp, string(b)
}

// do sends a request to path and reads its answer.
func (w *wireConn) do(path string) (*http.Response, string) {
	w.t.Helper()
	w.send(path, http.Header{}, "")
	return w.read()
}

// closedByServer reports whether the server has closed the connection
// (a read ends in EOF or a reset within the wait), as opposed to keeping
// it open.
func (w *wireConn) closedByServer(wait time.Duration) bool {
	w.t.Helper()
	require.NoError(w.t, w.c.SetReadDeadline(time.Now().Add(wait)))
	_, err := w.br.ReadByte()
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return false
	}
	require.Error(w.t, err, "the server sent bytes nobody asked for")
	return true
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for ; n > 0; n /= 10 {
		b = append([]byte{byte('0' + n%10)}, b...)
	}
	return string(b)
}

// At the cap, a new connection is served by closing the connection idle
// longest; the one idle for less time and the busy one stay.
func TestConnLimitShedsIdleLongestFirst(t *testing.T) {
	entered, release := make(chan struct{}, 1), make(chan struct{})
	defer close(release)
	limit := NewConnLimit(3)
	addr := serveOn(t, NewHTTPServer("", limitMux(entered, release), WithConnLimit(limit)))

	oldest := dialWire(t, addr)
	resp, body := oldest.do("/ok")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, "ok", body)
	time.Sleep(20 * time.Millisecond)
	newer := dialWire(t, addr)
	resp, _ = newer.do("/ok")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	busy := dialWire(t, addr)
	busy.send("/block", http.Header{}, "")
	waitEntered(t, entered)
	require.Eventually(t, func() bool { s := limit.Stats(); return s.Open == 3 && s.Idle == 2 }, 5*time.Second, 5*time.Millisecond)

	late := dialWire(t, addr)
	resp, body = late.do("/ok")
	require.Equal(t, http.StatusOK, resp.StatusCode, "the new connection is served")
	assert.Equal(t, "ok", body)
	assert.True(t, oldest.closedByServer(2*time.Second), "the connection idle longest is closed")
	assert.False(t, newer.closedByServer(100*time.Millisecond), "the connection idle for less time stays")
	resp, _ = newer.do("/ok")
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.False(t, resp.Close)
	s := limit.Stats()
	assert.Equal(t, uint64(1), s.Shed)
	assert.Zero(t, s.Refused)
	assert.Equal(t, 3, s.Open)
}

// At the cap with no connection to shed, a new connection's request is
// answered 503 with Retry-After and Connection: close, and the connection
// is closed; once a slot is free, new connections are served again.
func TestConnLimitRefusesOverCapAndCloses(t *testing.T) {
	entered, release := make(chan struct{}, 2), make(chan struct{})
	limit := NewConnLimit(2)
	addr := serveOn(t, NewHTTPServer("", limitMux(entered, release), WithConnLimit(limit)))

	a, b := dialWire(t, addr), dialWire(t, addr)
	a.send("/block", http.Header{}, "")
	b.send("/block", http.Header{}, "")
	waitEntered(t, entered)
	waitEntered(t, entered)

	over := dialWire(t, addr)
	resp, body := over.do("/ok")
	assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
	assert.True(t, resp.Close, "Connection: close")
	assert.Equal(t, "1", resp.Header.Get("Retry-After"))
	assert.Contains(t, body, "too many connections")
	assert.True(t, over.closedByServer(2*time.Second), "the refused connection is closed")
	assert.Equal(t, uint64(1), limit.Stats().Refused)

	close(release)
	resp, _ = a.read()
	assert.Equal(t, http.StatusOK, resp.StatusCode, "the busy requests finish")
	resp, _ = b.read()
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	next := dialWire(t, addr)
	resp, _ = next.do("/ok")
	assert.Equal(t, http.StatusOK, resp.StatusCode, "an idle connection makes room again")
	assert.Equal(t, uint64(1), limit.Stats().Shed)
}

// A connection over the cap that sends no request is closed unanswered
// after the wait, and one that has not completed its first request in the
// grace period is shed like an idle one.
func TestConnLimitClosesSilentConnections(t *testing.T) {
	entered, release := make(chan struct{}, 1), make(chan struct{})
	defer close(release)
	limit := NewConnLimit(1)
	limit.refuseWait, limit.freshGrace = 100*time.Millisecond, 100*time.Millisecond
	addr := serveOn(t, NewHTTPServer("", limitMux(entered, release), WithConnLimit(limit)))

	silent := dialWire(t, addr)
	require.Eventually(t, func() bool { return limit.Stats().Open == 1 }, 5*time.Second, 5*time.Millisecond)
	time.Sleep(150 * time.Millisecond)
	busy := dialWire(t, addr)
	busy.send("/block", http.Header{}, "")
	waitEntered(t, entered)
	assert.True(t, silent.closedByServer(2*time.Second), "the silent connection makes room")

	waiting := dialWire(t, addr)
	assert.True(t, waiting.closedByServer(2*time.Second), "a connection over the cap that sends nothing is closed")
	s := limit.Stats()
	assert.Equal(t, uint64(1), s.Shed)
	assert.Equal(t, uint64(1), s.Dropped)
	assert.Zero(t, s.Refused)
}

// Answers refused for load (429, 503) close their connection under
// NewHTTPServer's defaults; other answers keep it.
func TestLoadRefusalsCloseTheConnection(t *testing.T) {
	addr := serveOn(t, NewHTTPServer("", limitMux(nil, nil)))
	for _, path := range []string{"/429", "/503"} {
		c := dialWire(t, addr)
		resp, _ := c.do(path)
		assert.Equal(t, path[1:], itoa(resp.StatusCode))
		assert.True(t, resp.Close, "%s answers Connection: close", path)
		assert.True(t, c.closedByServer(2*time.Second), "%s closes the connection", path)
	}
	c := dialWire(t, addr)
	for range 2 {
		resp, body := c.do("/ok")
		assert.Equal(t, http.StatusOK, resp.StatusCode)
		assert.Equal(t, "ok", body)
		assert.False(t, resp.Close)
	}
	assert.False(t, c.closedByServer(100*time.Millisecond), "a served connection stays for the next request")
}

// The load this guards against, over the real Handler: a client whose
// subscriptions/listen is refused past the listener caps does not keep
// its connection; the accepted stream stays open.
func TestRefusedListenClosesItsConnection(t *testing.T) {
	srv, err := mrtr.NewServer(discover.Description{
		Server:       discover.Implementation{Name: "t", Version: "1"},
		Capabilities: discover.Capabilities{Tools: &discover.ListChanged{ListChanged: true}},
	}, mrtr.WithCodec(testkit.Codec(t)), mrtr.WithLogger(quiet), mrtr.WithMaxListeners(1, 1))
	require.NoError(t, err)
	defer srv.Close()
	h, err := New(srv, WithLogger(quiet))
	require.NoError(t, err)
	limit := NewConnLimit(0)
	addr := serveOn(t, NewHTTPServer("", h, WithConnLimit(limit)))

	body := `{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true},` +
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	header := http.Header{
		"Content-Type":         {"application/json"},
		"Accept":               {"application/json, text/event-stream"},
		"Mcp-Protocol-Version": {"2026-07-28"},
		"Mcp-Method":           {"subscriptions/listen"},
	}
	held := dialWire(t, addr)
	held.send(defaultPath, header, body)
	resp, _ := held.read()
	require.Equal(t, http.StatusOK, resp.StatusCode)

	refused := dialWire(t, addr)
	refused.send(defaultPath, header, body)
	resp, text := refused.read()
	assert.Contains(t, []int{http.StatusTooManyRequests, http.StatusServiceUnavailable}, resp.StatusCode, text)
	assert.True(t, resp.Close, "Connection: close")
	assert.True(t, refused.closedByServer(2*time.Second), "the refused client's connection is closed")
	require.Eventually(t, func() bool { return limit.Stats().Open == 1 }, 5*time.Second, 5*time.Millisecond,
		"only the listen stream's connection is left")
}

// Apply on a server of one's own keeps the hooks it had, and counts every
// connection until it closes.
func TestConnLimitApplyKeepsHooks(t *testing.T) {
	type key struct{}
	var states atomic.Int32
	hs := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			v, _ := r.Context().Value(key{}).(string)
			_, _ = io.WriteString(w, v)
		}),
		ConnContext: func(ctx context.Context, _ net.Conn) context.Context { return context.WithValue(ctx, key{}, "mine") },
		ConnState:   func(net.Conn, http.ConnState) { states.Add(1) },
	}
	limit := NewConnLimit(8)
	limit.Apply(hs)
	addr := serveOn(t, hs)
	c := dialWire(t, addr)
	resp, body := c.do("/")
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "mine", body, "the server's own ConnContext still runs")
	assert.Positive(t, states.Load(), "the server's own ConnState still runs")
	assert.Equal(t, 1, limit.Stats().Open)
	require.NoError(t, c.c.Close())
	require.Eventually(t, func() bool {
		limit.mu.Lock()
		defer limit.mu.Unlock()
		return limit.open == 0 && limit.idle.n == 0 && limit.fresh.n == 0 && len(limit.conns) == 0
	}, 5*time.Second, 5*time.Millisecond, "a closed connection is forgotten")
}

// The wrapper that closes refused connections passes flushes through, to
// middleware that asserts http.Flusher too, so event streams still flow.
func TestConnLimitWrapperFlushes(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	inner := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, "data: first\n\n")
		w.(http.Flusher).Flush()
		<-release
	})
	addr := serveOn(t, NewHTTPServer("", inner))
	c := dialWire(t, addr)
	resp, _ := c.do("/")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	line, err := bufio.NewReader(resp.Body).ReadString('\n')
	require.NoError(t, err)
	assert.Equal(t, "data: first\n", line)
}

// A connection accepted over the cap whose request comes once a slot has
// freed up is served, not refused.
func TestConnLimitServesWaitingConnectionWhenSlotFrees(t *testing.T) {
	entered, release := make(chan struct{}, 1), make(chan struct{})
	limit := NewConnLimit(1)
	limit.refuseWait = time.Minute // the waiting connection is not closed for its silence meanwhile
	addr := serveOn(t, NewHTTPServer("", limitMux(entered, release), WithConnLimit(limit)))

	busy := dialWire(t, addr)
	busy.send("/block", http.Header{}, "")
	waitEntered(t, entered)
	waiting := dialWire(t, addr)
	require.Eventually(t, func() bool { return limit.Stats().Refusing == 1 }, 5*time.Second, 5*time.Millisecond)

	close(release)
	resp, _ := busy.read()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.NoError(t, busy.c.Close())
	require.Eventually(t, func() bool { return limit.Stats().Open == 0 }, 5*time.Second, 5*time.Millisecond)

	resp, body := waiting.do("/ok")
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "ok", body)
	s := limit.Stats()
	assert.Equal(t, 1, s.Open)
	assert.Zero(t, s.Refusing)
	assert.Zero(t, s.Refused)
}
