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

	"github.com/mrtrkit/mrtrkit/discover"
	"github.com/mrtrkit/mrtrkit/internal/testkit"
	"github.com/mrtrkit/mrtrkit/mrtr"
)

// A client that sends its headers and then trickles the body is cut off
// at the read deadline with 408, not served for as long as it trickles.
func TestSlowBodyIsCutAtTheReadDeadline(t *testing.T) {
	f := newFixture(t, WithReadTimeout(200*time.Millisecond))
	conn, err := net.Dial("tcp", strings.TrimPrefix(f.url, "http://"))
	require.NoError(t, err)
	defer conn.Close()
	c := toolCall(1, "echo", `{"text":"x"}`)
	var head strings.Builder
	fmt.Fprintf(&head, "POST /mcp HTTP/1.1\r\nHost: %s\r\nContent-Length: %d\r\n", strings.TrimPrefix(f.url, "http://"), len(c.body))
	for _, h := range c.headers {
		fmt.Fprintf(&head, "%s: %s\r\n", h[0], h[1])
	}
	head.WriteString("\r\n")
	_, err = conn.Write([]byte(head.String()))
	require.NoError(t, err)
	start := time.Now()
	stop := make(chan struct{})
	defer close(stop)
	go func() { // one byte every 50ms: the whole body would take seconds
		for i := 0; i < len(c.body); i++ {
			select {
			case <-stop:
				return
			case <-time.After(50 * time.Millisecond):
			}
			if _, err := conn.Write([]byte{c.body[i]}); err != nil {
				return
			}
		}
	}()
	// The whole body would take about 9s to trickle in.
	require.NoError(t, conn.SetReadDeadline(time.Now().Add(5*time.Second)))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	require.NoError(t, err, "no answer within 5s")
	defer resp.Body.Close()
	elapsed := time.Since(start)
	assert.Equal(t, http.StatusRequestTimeout, resp.StatusCode)
	assert.Less(t, elapsed, 2500*time.Millisecond, "cut off after %v", elapsed)
	m := decodeRPC(t, readAll(t, resp))
	require.NotNil(t, m.Error)
	assert.Equal(t, int(mrtr.CodeInvalidRequest), m.Error.Code)
	t.Logf("trickled body cut off after %v", elapsed)
}

// returns wraps a handler and reports each time ServeHTTP returns.
func returns(h http.Handler) (http.Handler, <-chan struct{}) {
	done := make(chan struct{}, 8)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() { done <- struct{}{} }()
		h.ServeHTTP(w, r)
	}), done
}

// bigServer serves one tool answering n bytes of text.
func bigServer(t *testing.T, n int) *mrtr.Server {
	srv := testkit.Server(t, testkit.Desc("big", "1"), mrtr.WithCodec(testkit.Codec(t)))
	text := strings.Repeat("x", n)
	require.NoError(t, srv.AddTool(mrtr.Tool{Name: "big", InputSchema: json.RawMessage(`{"type":"object","properties":{"emit":{"type":"boolean"}}}`)},
		mrtr.HandlerFunc(func(_ context.Context, req *mrtr.Request) (mrtr.Result, error) {
			var args struct{ Emit bool }
			_ = json.Unmarshal(req.Arguments, &args)
			if args.Emit { // answer over SSE
				_ = req.Progress(0, nil, "big")
			}
			return mrtr.TextResult(text), nil
		})))
	return srv
}

// A client that asks for a large answer and stops reading does not hold
// the handler past the write deadline, for a JSON answer and for an
// event stream.
func TestStalledReaderIsCutAtTheWriteDeadline(t *testing.T) {
	for _, emit := range []bool{false, true} {
		t.Run(fmt.Sprintf("sse=%v", emit), func(t *testing.T) {
			h, err := New(bigServer(t, 16<<20), WithLogger(quiet), WithWriteTimeout(200*time.Millisecond))
			require.NoError(t, err)
			wrapped, done := returns(h)
			ts := httptest.NewServer(wrapped)
			defer ts.Close()

			conn, err := net.Dial("tcp", ts.Listener.Addr().String())
			require.NoError(t, err)
			defer conn.Close()
			_ = conn.(*net.TCPConn).SetReadBuffer(4 << 10)
			c := toolCall(1, "big", fmt.Sprintf(`{"emit":%v}`, emit))
			wantType := "application/json"
			if emit { // a progress token lets the progress notification through
				c = c.withMeta(`{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"progressToken":"b"}`)
				wantType = "text/event-stream"
			}
			var req strings.Builder
			fmt.Fprintf(&req, "POST /mcp HTTP/1.1\r\nHost: %s\r\nContent-Length: %d\r\n", ts.Listener.Addr(), len(c.body))
			for _, h := range c.headers {
				fmt.Fprintf(&req, "%s: %s\r\n", h[0], h[1])
			}
			req.WriteString("\r\n" + c.body)
			start := time.Now()
			_, err = conn.Write([]byte(req.String()))
			require.NoError(t, err)
			// The client reads nothing from now on.
			select {
			case <-done:
				t.Logf("handler released %v after the request", time.Since(start))
			case <-time.After(15 * time.Second):
				// Generous: encoding the answer takes a while under -race
				// on a busy machine; without a deadline the handler would
				// not return at all while the client holds the connection.
				t.Fatal("the handler is still writing to a client that stopped reading")
			}
			// What did reach the client is the start of the expected answer.
			require.NoError(t, conn.SetReadDeadline(time.Now().Add(2*time.Second)))
			resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
			require.NoError(t, err)
			resp.Body.Close()
			assert.Equal(t, wantType, resp.Header.Get("Content-Type"))
		})
	}
}

// A listen stream outlives the read and write deadlines many times over,
// idle or with keep-alives, over HTTP/1.1 and HTTP/2: the deadlines bound
// each read and write, not the stream.
func TestListenStreamOutlivesTheDeadlines(t *testing.T) {
	for _, tc := range []struct {
		name      string
		h2        bool
		keepAlive time.Duration
	}{
		{"http1/keep-alive", false, 40 * time.Millisecond},
		{"http1/idle", false, 0},
		{"http2/keep-alive", true, 40 * time.Millisecond},
		{"http2/idle", true, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, err := mrtr.NewServer(discover.Description{
				Server:       discover.Implementation{Name: "t", Version: "1"},
				Capabilities: discover.Capabilities{Tools: &discover.ListChanged{ListChanged: true}},
			}, mrtr.WithCodec(testkit.Codec(t)), mrtr.WithLogger(quiet))
			require.NoError(t, err)
			noop := mrtr.HandlerFunc(func(context.Context, *mrtr.Request) (mrtr.Result, error) { return &mrtr.CallToolResult{}, nil })
			const deadline = 150 * time.Millisecond
			h, err := New(srv, WithLogger(quiet), WithKeepAlive(tc.keepAlive), WithReadTimeout(deadline), WithWriteTimeout(deadline))
			require.NoError(t, err)
			ts := httptest.NewUnstartedServer(h)
			client := http.DefaultClient
			if tc.h2 {
				ts.EnableHTTP2 = true
				ts.StartTLS()
				client = ts.Client()
			} else {
				ts.Start()
			}
			defer ts.Close()

			body := `{"jsonrpc":"2.0","id":"l","method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true},"_meta":` + metaJSON + `}}`
			req, err := http.NewRequest(http.MethodPost, ts.URL+defaultPath, strings.NewReader(body))
			require.NoError(t, err)
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			req.Header.Set("MCP-Protocol-Version", "2026-07-28")
			req.Header.Set("Mcp-Method", "subscriptions/listen")
			resp, err := client.Do(req)
			require.NoError(t, err)
			defer resp.Body.Close()
			require.Equal(t, http.StatusOK, resp.StatusCode)
			if tc.h2 {
				require.Equal(t, 2, resp.ProtoMajor)
			}
			lines := make(chan string, 256)
			go func() {
				defer close(lines)
				sc := bufio.NewScanner(resp.Body)
				for sc.Scan() {
					lines <- sc.Text()
				}
			}()
			comments := 0
			next := func(within time.Duration) (rpc, bool) {
				timeout := time.After(within)
				for {
					select {
					case l, ok := <-lines:
						if !ok {
							return rpc{}, false
						}
						if strings.HasPrefix(l, ":") {
							comments++
						}
						if data, ok := strings.CutPrefix(l, "data: "); ok {
							return decodeRPC(t, []byte(data)), true
						}
					case <-timeout:
						return rpc{}, true
					}
				}
			}
			ack, open := next(5 * time.Second)
			require.True(t, open)
			require.Equal(t, "notifications/subscriptions/acknowledged", ack.Method)
			// Idle for many deadlines: nothing but keep-alives may arrive,
			// and the stream must stay open.
			m, open := next(8 * deadline)
			require.True(t, open, "the stream ended while idle")
			require.Empty(t, m.Method, "unexpected message")
			require.NoError(t, srv.AddTool(mrtr.Tool{Name: "late"}, noop))
			changed, open := next(5 * time.Second)
			require.True(t, open, "the stream ended before the change")
			assert.Equal(t, "notifications/tools/list_changed", changed.Method)
			if tc.keepAlive > 0 {
				assert.Greater(t, comments, 3, "keep-alives were written meanwhile")
			}
			require.NoError(t, srv.Close())
			final, open := next(5 * time.Second)
			require.True(t, open)
			assert.Equal(t, `"l"`, string(final.ID))
		})
	}
}
