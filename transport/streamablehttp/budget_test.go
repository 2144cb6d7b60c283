package streamablehttp

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mrtrkit/mrtrkit/internal/testkit"
	"github.com/mrtrkit/mrtrkit/mrtr"
)

// sizedServer serves one tool, "sized", answering args.n bytes of text;
// its other arguments (padding) are ignored.
func sizedServer(t *testing.T) *mrtr.Server {
	srv := testkit.Server(t, testkit.Desc("sized", "1"), mrtr.WithCodec(testkit.Codec(t)))
	require.NoError(t, srv.AddTool(mrtr.Tool{Name: "sized", InputSchema: json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"},"pad":{"type":"string"}}}`)},
		mrtr.HandlerFunc(func(_ context.Context, req *mrtr.Request) (mrtr.Result, error) {
			var args struct{ N int }
			if err := json.Unmarshal(req.Arguments, &args); err != nil {
				return nil, err
			}
			return mrtr.TextResult(strings.Repeat("x", args.N)), nil
		})))
	return srv
}

// smallSendBuffers accepts connections whose kernel send buffer is small,
// so that an answer of a megabyte to a client that does not read stays
// mostly in the server's hands.
type smallSendBuffers struct{ net.Listener }

func (l smallSendBuffers) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetWriteBuffer(8 << 10)
	}
	return c, err
}

// rawCall writes c to conn as an HTTP/1.1 request.
func rawCall(t *testing.T, conn net.Conn, host string, c call) {
	t.Helper()
	var req strings.Builder
	fmt.Fprintf(&req, "POST /mcp HTTP/1.1\r\nHost: %s\r\nContent-Length: %d\r\n", host, len(c.body))
	for _, h := range c.headers {
		fmt.Fprintf(&req, "%s: %s\r\n", h[0], h[1])
	}
	req.WriteString("\r\n" + c.body)
	_, err := conn.Write([]byte(req.String()))
	require.NoError(t, err)
}

// A client that asks for a large answer and stops reading holds the
// answer's bytes of the budget until its connection goes; meanwhile a
// request with a large body finds no room and is answered 503 at the read
// timeout, while a small call is served at once. Once the stalled client
// is gone, the large request is served.
func TestBytesInFlightBoundStalledAnswers(t *testing.T) {
	const answer = 1 << 20
	h, err := New(sizedServer(t), WithLogger(quiet), WithMaxBytesInFlight(answer+answer/2),
		WithReadTimeout(300*time.Millisecond))
	require.NoError(t, err)
	wrapped, done := returns(h)
	ts := httptest.NewUnstartedServer(wrapped)
	ts.Listener = smallSendBuffers{ts.Listener}
	ts.Start()
	defer ts.Close()
	host := ts.Listener.Addr().String()

	// The stalled client: it reads the status line, so that the answer
	// has taken its share, and nothing more.
	stalled, err := net.Dial("tcp", host)
	require.NoError(t, err)
	defer stalled.Close()
	_ = stalled.(*net.TCPConn).SetReadBuffer(4 << 10)
	rawCall(t, stalled, host, toolCall(1, "sized", fmt.Sprintf(`{"n":%d}`, answer)))
	require.NoError(t, stalled.SetReadDeadline(time.Now().Add(10*time.Second)))
	line, err := bufio.NewReaderSize(stalled, 64).ReadString('\n')
	require.NoError(t, err)
	require.Contains(t, line, "200 OK")

	post := func(c call) (*http.Response, rpc) {
		t.Helper()
		req, err := c.request(context.Background(), ts.URL)
		require.NoError(t, err)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		return resp, decodeRPC(t, readAll(t, resp))
	}

	// A small call is neither counted nor held up.
	resp, m := post(toolCall(2, "sized", `{"n":10}`))
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Nil(t, m.Error)
	<-done

	// A large body (and a large answer) find no room.
	large := toolCall(3, "sized", `{"n":100000,"pad":"`+strings.Repeat("p", answer)+`"}`)
	resp, m = post(large)
	assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
	assert.Equal(t, "1", resp.Header.Get("Retry-After"))
	require.NotNil(t, m.Error)
	assert.Equal(t, int(mrtr.CodeInternalError), m.Error.Code)
	assert.Contains(t, m.Error.Message, "Server busy")
	<-done

	// The stalled client goes; its handler returns and gives its share
	// back.
	require.NoError(t, stalled.Close())
	<-done
	resp, m = post(large)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Nil(t, m.Error)
	<-done
}

// The budget serves waiters in order, lets a message larger than the
// whole budget go alone, and gives nothing to a waiter whose context
// ends.
func TestBudgetQueue(t *testing.T) {
	b := newBudget(100)
	require.Nil(t, newBudget(0), "no bound")
	ctx := context.Background()
	require.Equal(t, int64(100), b.acquire(ctx, 500, 0), "clamped to the whole budget")

	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	assert.Zero(t, b.acquire(cancelled, 10, 0), "no room, and the waiter gave up")

	first, second := make(chan int64, 1), make(chan int64, 1)
	go func() { first <- b.acquire(ctx, 60, 0) }()
	// The second waiter queues behind the first, whatever their sizes.
	for {
		b.mu.Lock()
		n := len(b.waiting)
		b.mu.Unlock()
		if n == 1 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	go func() { second <- b.acquire(ctx, 30, 0) }()
	for {
		b.mu.Lock()
		n := len(b.waiting)
		b.mu.Unlock()
		if n == 2 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	b.release(100)
	assert.Equal(t, int64(60), <-first)
	assert.Equal(t, int64(30), <-second)
	b.mu.Lock()
	assert.Equal(t, int64(90), b.used)
	b.mu.Unlock()

	// A share counts small messages as nothing and shrinks without
	// waiting.
	s := share{b: newBudget(1 << 20)}
	require.True(t, s.resize(ctx, largeMessage, 0))
	assert.Zero(t, s.held)
	require.True(t, s.resize(ctx, 200<<10, 0))
	assert.Equal(t, int64(200<<10), s.held)
	require.True(t, s.resize(ctx, 100<<10, 0))
	assert.Equal(t, int64(100<<10), s.held)
	s.release()
	assert.Zero(t, s.b.used)
}

// A large result is answered whole and exact, as plain JSON when nothing
// was streamed and as the last event of a stream otherwise, with the
// request's id.
func TestLargeResultAnswers(t *testing.T) {
	srv := bigServer(t, 300<<10)
	h, err := New(srv, WithLogger(quiet))
	require.NoError(t, err)
	ts := httptest.NewServer(h)
	defer ts.Close()
	for _, emit := range []bool{false, true} {
		c := toolCall("a\u2028b", "big", fmt.Sprintf(`{"emit":%v}`, emit))
		if emit {
			c = c.withMeta(`{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"progressToken":"b"}`)
		}
		req, err := c.request(context.Background(), ts.URL)
		require.NoError(t, err)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		body := readAll(t, resp)
		resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode)
		if emit {
			require.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
			// The answer is the last data line (readSSE's scanner would
			// not take a line this long).
			var last string
			for l := range strings.SplitSeq(string(body), "\n") {
				if d, ok := strings.CutPrefix(l, "data: "); ok {
					last = d
				}
			}
			body = []byte(last)
		} else {
			require.Equal(t, "application/json", resp.Header.Get("Content-Type"))
			require.Equal(t, fmt.Sprint(len(body)), resp.Header.Get("Content-Length"))
		}
		var m struct {
			JSONRPC string `json:"jsonrpc"`
			ID      string `json:"id"`
			Result  struct {
				Content []struct{ Text string }
			}
		}
		require.NoError(t, json.Unmarshal(body, &m), "%.200s", body)
		assert.Equal(t, "2.0", m.JSONRPC)
		assert.Equal(t, "a\u2028b", m.ID)
		require.Len(t, m.Result.Content, 1)
		assert.Equal(t, strings.Repeat("x", 300<<10), m.Result.Content[0].Text)
	}
}

// A request whose answer becomes an event stream gives its body's share
// back when the stream begins: a long stream opened with a large body
// does not hold the budget.
func TestStreamGivesItsShareBack(t *testing.T) {
	srv := sizedServer(t)
	release := make(chan struct{})
	require.NoError(t, srv.AddTool(mrtr.Tool{Name: "stream", InputSchema: json.RawMessage(`{"type":"object","properties":{"pad":{"type":"string"}}}`)},
		mrtr.HandlerFunc(func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
			if err := req.Progress(0, nil, "started"); err != nil {
				return nil, err
			}
			select {
			case <-release:
			case <-ctx.Done():
			}
			return mrtr.TextResult("done"), nil
		})))
	h, err := New(srv, WithLogger(quiet), WithMaxBytesInFlight(256<<10), WithReadTimeout(300*time.Millisecond))
	require.NoError(t, err)
	ts := httptest.NewServer(h)
	defer ts.Close()
	pad := strings.Repeat("p", 200<<10)

	c := toolCall(1, "stream", `{"pad":"`+pad+`"}`).withMeta(`{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"progressToken":"s"}`)
	req, err := c.request(context.Background(), ts.URL)
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	// The first event is in: the stream has begun.
	line, err := bufio.NewReader(resp.Body).ReadString('\n')
	require.NoError(t, err)
	require.Contains(t, line, "event: message")

	// Another large body finds room while the stream stays open.
	req, err = toolCall(2, "sized", `{"n":10,"pad":"`+pad+`"}`).request(context.Background(), ts.URL)
	require.NoError(t, err)
	resp2, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	body := readAll(t, resp2)
	resp2.Body.Close()
	assert.Equal(t, http.StatusOK, resp2.StatusCode, "%s", body)
	close(release)
}
