package client_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mrtrkit/mrtrkit/client"
	"github.com/mrtrkit/mrtrkit/mrtr"
)

func sse(w http.ResponseWriter, format string, args ...any) {
	fmt.Fprintf(w, format, args...)
	w.(http.Flusher).Flush()
}

// legacyRaw is a server of 2025-11-25 only: it refuses server/discover as
// the TypeScript SDK does, opens a session, and asks the client for a
// model's answer on the tools/call stream and for roots on the GET
// stream.
func legacyRaw(t *testing.T) (*rawServer, chan json.RawMessage) {
	answers := make(chan json.RawMessage, 4)
	var once sync.Once
	rs := newRawServer(t, func(w http.ResponseWriter, s *seen) {
		switch {
		case s.Method == http.MethodDelete:
			w.WriteHeader(200)
		case s.Method == http.MethodGet:
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(200)
			once.Do(func() {
				sse(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":\"g1\",\"method\":\"roots/list\"}\n\n")
			})
			time.Sleep(200 * time.Millisecond)
		case s.RPC.Method == "server/discover":
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(400)
			fmt.Fprint(w, `{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"Bad Request: Server not initialized"}}`)
		case s.RPC.Method == "initialize":
			w.Header().Set("Mcp-Session-Id", "sess-1")
			writeJSON(w, 200, s.RPC.ID, `"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"old","version":"1"}}`)
		case s.RPC.Method == "notifications/initialized":
			w.WriteHeader(202)
		case s.RPC.Method == "" && len(s.RPC.ID) > 0:
			var m struct {
				Result json.RawMessage `json:"result"`
			}
			_ = json.Unmarshal(s.Body, &m)
			answers <- m.Result
			w.WriteHeader(202)
		case s.RPC.Method == "tools/call":
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(200)
			sse(w, "data: {\"jsonrpc\":\"2.0\",\"id\":\"s1\",\"method\":\"sampling/createMessage\",\"params\":{\"messages\":[{\"role\":\"user\",\"content\":{\"type\":\"text\",\"text\":\"hi\"}}],\"maxTokens\":5}}\n\n")
			sse(w, "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":0,\"progress\":1}}\n\n")
			var a json.RawMessage
			for a == nil || !json.Valid(a) || string(a) == "null" {
				a = <-answers
				if !containsModel(a) {
					a = nil // the roots answer of the GET stream
				}
			}
			sse(w, "data: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"content\":[{\"type\":\"text\",\"text\":%q}]}}\n\n", s.RPC.ID, string(a))
		default:
			writeJSON(w, 200, s.RPC.ID, `"result":{}`)
		}
	})
	return rs, answers
}

func containsModel(b json.RawMessage) bool {
	var m map[string]json.RawMessage
	return json.Unmarshal(b, &m) == nil && m["model"] != nil
}

// The initialize era: discover refused, initialize, the session id on
// every request, the server's requests answered on the POST stream while
// the call is pending and on the GET stream, ids never 0, DELETE on
// close.
func TestLegacySessionOverRawServer(t *testing.T) {
	rs, _ := legacyRaw(t)
	var rootsAsked sync.WaitGroup
	rootsAsked.Add(1)
	var rootsOnce sync.Once
	c, err := client.Connect(ctxT(t), client.HTTP(rs.url), client.OnSampling(answerModel),
		client.OnRoots(func(ctx context.Context) (*mrtr.RootsResult, error) {
			rootsOnce.Do(rootsAsked.Done)
			return &mrtr.RootsResult{Roots: roots}, nil
		}))
	require.NoError(t, err)
	assert.True(t, c.Legacy())
	assert.Equal(t, "2025-11-25", c.Version())
	assert.Equal(t, "old", c.ServerInfo().Name)
	var got []client.Progress
	res, err := c.CallTool(ctxT(t), "ask", nil, client.WithProgress(0, func(p client.Progress) { got = append(got, p) }))
	require.NoError(t, err)
	assert.JSONEq(t, `{"role":"assistant","content":{"type":"text","text":"gpt"},"model":"m"}`, res.Text())
	assert.Len(t, got, 1, "progress of token 0 reaches the call")
	rootsAsked.Wait()
	require.NoError(t, c.Close())

	rs.mu.Lock()
	defer rs.mu.Unlock()
	var deleted bool
	for _, s := range rs.seen {
		if s.RPC.Method != "initialize" && s.RPC.Method != "server/discover" {
			assert.Equal(t, "sess-1", s.Header.Get("Mcp-Session-Id"), "%s %s", s.Method, s.RPC.Method)
			assert.Equal(t, "2025-11-25", s.Header.Get("MCP-Protocol-Version"))
		}
		if s.RPC.Method != "" {
			assert.NotEqual(t, "0", string(s.RPC.ID))
		}
		if s.RPC.Method == "tools/call" {
			assert.Empty(t, s.Header.Values("Mcp-Method"), "no 2026 headers in a session")
			assert.NotContains(t, string(s.Body), "io.modelcontextprotocol/protocolVersion")
		}
		deleted = deleted || s.Method == http.MethodDelete
	}
	assert.True(t, deleted, "Close ends the session with DELETE")
}

// A stream of the initialize era that breaks after a priming event is
// resumed with GET and Last-Event-ID after the server's retry interval,
// and the response arrives there.
func TestLegacyStreamResumedAfterRetry(t *testing.T) {
	var closedAt time.Time
	var resumedAfter time.Duration
	var lastEventID string
	var mu sync.Mutex
	rs := newRawServer(t, func(w http.ResponseWriter, s *seen) {
		switch {
		case s.Method == http.MethodGet && s.Header.Get("Last-Event-ID") == "":
			w.WriteHeader(http.StatusMethodNotAllowed)
		case s.Method == http.MethodGet:
			mu.Lock()
			resumedAfter = time.Since(closedAt)
			lastEventID = s.Header.Get("Last-Event-ID")
			mu.Unlock()
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(200)
			sse(w, "id: e2\ndata: {\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"resumed\"}]}}\n\n")
		case s.RPC.Method == "server/discover":
			writeJSON(w, 200, s.RPC.ID, `"result":{}`)
		case s.RPC.Method == "initialize":
			writeJSON(w, 200, s.RPC.ID, `"result":{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"sse","version":"1"}}`)
		case s.RPC.Method == "tools/call":
			require.Equal(t, "3", string(s.RPC.ID))
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(200)
			sse(w, "id: e1\nretry: 300\ndata: \n\n")
			mu.Lock()
			closedAt = time.Now()
			mu.Unlock()
		default:
			w.WriteHeader(202)
		}
	})
	c, err := client.Connect(ctxT(t), client.HTTP(rs.url))
	require.NoError(t, err)
	defer c.Close()
	assert.Equal(t, "2025-06-18", c.Version(), "discover answered {} means an old server")
	res, err := c.CallTool(ctxT(t), "t", nil)
	require.NoError(t, err)
	assert.Equal(t, "resumed", res.Text())
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, "e1", lastEventID)
	assert.GreaterOrEqual(t, resumedAfter, 300*time.Millisecond, "the retry interval is honoured")
	assert.Less(t, resumedAfter, 3*time.Second)
}

// Cancelling a call of the initialize era tells the server.
func TestLegacyCancelSendsNotification(t *testing.T) {
	cancelled := make(chan string, 1)
	rs := newRawServer(t, func(w http.ResponseWriter, s *seen) {
		switch {
		case s.Method == http.MethodGet:
			w.WriteHeader(405)
		case s.RPC.Method == "server/discover":
			writeJSON(w, 200, s.RPC.ID, `"result":{}`)
		case s.RPC.Method == "initialize":
			writeJSON(w, 200, s.RPC.ID, `"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"x","version":"1"}}`)
		case s.RPC.Method == "tools/call":
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(200)
			sse(w, ": waiting\n\n")
			time.Sleep(time.Second)
		case s.RPC.Method == "notifications/cancelled":
			var p struct {
				RequestID json.RawMessage `json:"requestId"`
			}
			_ = json.Unmarshal(s.RPC.Params, &p)
			cancelled <- string(p.RequestID)
			w.WriteHeader(202)
		default:
			w.WriteHeader(202)
		}
	})
	c, err := client.Connect(ctxT(t), client.HTTP(rs.url))
	require.NoError(t, err)
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err = c.CallTool(ctx, "slow", nil)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	select {
	case id := <-cancelled:
		assert.Equal(t, string(rs.calls("tools/call")[0].RPC.ID), id)
	case <-time.After(5 * time.Second):
		t.Fatal("no notifications/cancelled")
	}
}

// Connect returns only once the session's GET stream is open, so a
// server that sends its request on that stream in answer to the very
// next call (as the TypeScript SDK does with server.elicitInput) finds
// it there.
func TestLegacyGETStreamOpenBeforeConnectReturns(t *testing.T) {
	var mu sync.Mutex
	var get http.ResponseWriter
	var getDone chan struct{}
	answered := make(chan struct{}, 1)
	rs := newRawServer(t, func(w http.ResponseWriter, s *seen) {
		switch {
		case s.Method == http.MethodGet:
			time.Sleep(50 * time.Millisecond) // a slow stream set-up
			w.Header().Set("Content-Type", "text/event-stream")
			done := make(chan struct{})
			mu.Lock()
			get, getDone = w, done
			w.WriteHeader(200)
			w.(http.Flusher).Flush()
			mu.Unlock()
			select {
			case <-done:
			case <-time.After(5 * time.Second):
			}
		case s.Method == http.MethodDelete:
			w.WriteHeader(200)
		case s.RPC.Method == "server/discover":
			writeJSON(w, 200, s.RPC.ID, `"result":{}`)
		case s.RPC.Method == "initialize":
			w.Header().Set("Mcp-Session-Id", "s")
			writeJSON(w, 200, s.RPC.ID, `"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"x","version":"1"}}`)
		case s.RPC.Method == "tools/call":
			mu.Lock()
			g, done := get, getDone
			mu.Unlock()
			if g == nil {
				writeJSON(w, 200, s.RPC.ID, `"error":{"code":-32603,"message":"no GET stream to ask on"}`)
				return
			}
			sse(g, "data: {\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"roots/list\"}\n\n")
			select {
			case <-answered:
			case <-time.After(5 * time.Second):
			}
			close(done)
			writeJSON(w, 200, s.RPC.ID, `"result":{"content":[{"type":"text","text":"asked on GET"}]}`)
		case s.RPC.Method == "" && len(s.RPC.ID) > 0:
			answered <- struct{}{}
			w.WriteHeader(202)
		default:
			w.WriteHeader(202)
		}
	})
	c, err := client.Connect(ctxT(t), client.HTTP(rs.url), client.WithRoots(roots...))
	require.NoError(t, err)
	defer c.Close()
	res, err := c.CallTool(ctxT(t), "t", nil)
	require.NoError(t, err)
	assert.Equal(t, "asked on GET", res.Text())
}
