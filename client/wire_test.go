package client_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mrtrkit/mrtrkit/client"
	"github.com/mrtrkit/mrtrkit/mrtr"
)

// seen is one request a raw server received.
type seen struct {
	Method string // HTTP method
	Header http.Header
	Body   []byte
	RPC    struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	}
}

// rawServer is a hand-written MCP server that records what the client
// sends, so that tests check the wire itself.
type rawServer struct {
	mu   sync.Mutex
	seen []*seen
	url  string
}

func newRawServer(t *testing.T, h func(w http.ResponseWriter, s *seen)) *rawServer {
	rs := &rawServer{}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		s := &seen{Method: r.Method, Header: r.Header.Clone(), Body: b}
		if len(b) > 0 {
			_ = json.Unmarshal(b, &s.RPC)
		}
		rs.mu.Lock()
		rs.seen = append(rs.seen, s)
		rs.mu.Unlock()
		h(w, s)
	}))
	t.Cleanup(ts.Close)
	rs.url = ts.URL + "/mcp"
	return rs
}

// calls returns the JSON-RPC requests of method the server saw.
func (rs *rawServer) calls(method string) []*seen {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	var out []*seen
	for _, s := range rs.seen {
		if s.RPC.Method == method {
			out = append(out, s)
		}
	}
	return out
}

func writeJSON(w http.ResponseWriter, status int, id json.RawMessage, result string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,%s}`, id, result)
}

const discoverResult = `"result":{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{"tools":{}},"ttlMs":0,"cacheScope":"private","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"raw","version":"1"}}}`

func meta(t *testing.T, s *seen) map[string]json.RawMessage {
	var p struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	require.NoError(t, json.Unmarshal(s.RPC.Params, &p))
	return p.Meta
}

const headerTools = `"result":{"resultType":"complete","tools":[
 {"name":"hdr","inputSchema":{"type":"object","properties":{
   "region":{"type":"string","x-mcp-header":"Region"},
   "count":{"type":"integer","x-mcp-header":"Count"},
   "flag":{"type":"boolean","x-mcp-header":"Flag"},
   "method":{"type":"string","x-mcp-header":"Method"},
   "nothing":{"type":"string","x-mcp-header":"Nothing"},
   "query":{"type":"string"},
   "nested":{"type":"object","properties":{"zone":{"type":"string","x-mcp-header":"Zone"}}}}}},
 {"name":"bad-empty","inputSchema":{"type":"object","properties":{"a":{"type":"string","x-mcp-header":""}}}},
 {"name":"bad-number","inputSchema":{"type":"object","properties":{"a":{"type":"number","x-mcp-header":"A"}}}},
 {"name":"bad-object","inputSchema":{"type":"object","properties":{"a":{"type":"object","x-mcp-header":"A"}}}},
 {"name":"bad-dup","inputSchema":{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"A"},"b":{"type":"string","x-mcp-header":"a"}}}},
 {"name":"bad-space","inputSchema":{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"A B"}}}},
 {"name":"bad-colon","inputSchema":{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"A:B"}}}},
 {"name":"bad-unicode","inputSchema":{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"Ä"}}}},
 {"name":"bad-items","inputSchema":{"type":"object","properties":{"l":{"type":"array","items":{"type":"string","x-mcp-header":"L"}}}}},
 {"name":"bad-ref","inputSchema":{"type":"object","$defs":{"x":{"type":"string","x-mcp-header":"X"}},"properties":{"q":{"$ref":"#/$defs/x"}}}},
 {"name":"plain","inputSchema":{"type":"object","$defs":{"x":{"type":"string"}},"properties":{"q":{"$ref":"#/$defs/x"}}}}
]}`

func modernRaw(t *testing.T, extra func(w http.ResponseWriter, s *seen) bool) *rawServer {
	return newRawServer(t, func(w http.ResponseWriter, s *seen) {
		if extra != nil && extra(w, s) {
			return
		}
		switch s.RPC.Method {
		case "server/discover":
			writeJSON(w, 200, s.RPC.ID, discoverResult)
		case "tools/list":
			writeJSON(w, 200, s.RPC.ID, headerTools)
		default:
			writeJSON(w, 200, s.RPC.ID, `"result":{"resultType":"complete","content":[{"type":"text","text":"ok"}]}`)
		}
	})
}

func TestWireMetaAndStandardHeaders(t *testing.T) {
	rs := modernRaw(t, nil)
	c, err := client.Connect(ctxT(t), client.HTTP(rs.url), client.WithClientInfo("tester", "9"), client.WithLogLevel("info"),
		client.OnElicitation(answerName), client.OnSampling(answerModel), client.WithRoots(roots...))
	require.NoError(t, err)
	defer c.Close()
	assert.Equal(t, "raw", c.ServerInfo().Name)
	_, err = c.CallTool(ctxT(t), "x y", map[string]any{"a": 1}, client.WithProgress(0, func(client.Progress) {}))
	require.NoError(t, err)
	_, err = c.ReadResource(ctxT(t), "file:///path/to/file%20name.txt")
	require.NoError(t, err)
	_, err = c.GetPrompt(ctxT(t), "p", nil)
	require.NoError(t, err)

	for _, s := range rs.seen {
		m := meta(t, s)
		assert.JSONEq(t, `"2026-07-28"`, string(m["io.modelcontextprotocol/protocolVersion"]))
		assert.Equal(t, "2026-07-28", s.Header.Get("MCP-Protocol-Version"), "the header equals the _meta version")
		assert.JSONEq(t, `{"elicitation":{"form":{},"url":{}},"roots":{},"sampling":{}}`, string(m["io.modelcontextprotocol/clientCapabilities"]))
		assert.JSONEq(t, `{"name":"tester","version":"9"}`, string(m["io.modelcontextprotocol/clientInfo"]))
		assert.JSONEq(t, `"info"`, string(m["io.modelcontextprotocol/logLevel"]))
		assert.Equal(t, s.RPC.Method, s.Header.Get("Mcp-Method"))
		assert.Equal(t, "application/json, text/event-stream", s.Header.Get("Accept"))
		assert.NotEqual(t, "0", string(s.RPC.ID), "request ids are never 0")
	}
	call := rs.calls("tools/call")[0]
	assert.Equal(t, "0", string(meta(t, call)["progressToken"]), "a progress token of 0 is a token")
	assert.Equal(t, "x y", call.Header.Get("Mcp-Name"))
	assert.Equal(t, "file:///path/to/file%20name.txt", rs.calls("resources/read")[0].Header.Get("Mcp-Name"), "the URI as given")
	assert.Equal(t, "p", rs.calls("prompts/get")[0].Header.Get("Mcp-Name"))
	assert.Empty(t, rs.calls("server/discover")[0].Header.Values("Mcp-Name"))
}

func TestWireCustomHeadersAndInvalidTools(t *testing.T) {
	rs := modernRaw(t, nil)
	c, err := client.Connect(ctxT(t), client.HTTP(rs.url), client.WithProtocolVersion(client.LatestVersion))
	require.NoError(t, err)
	defer c.Close()
	tools, err := c.ListTools(ctxT(t))
	require.NoError(t, err)
	var names []string
	for _, tl := range tools {
		names = append(names, tl.Name)
	}
	assert.Equal(t, []string{"hdr", "plain"}, names, "tools with broken x-mcp-header declarations are dropped, the others kept")
	assert.JSONEq(t, `{"type":"object","$defs":{"x":{"type":"string"}},"properties":{"q":{"$ref":"#/$defs/x"}}}`, string(tools[1].InputSchema), "schemas stay raw")

	cases := []struct {
		args map[string]any
		want map[string]string // header → value; "" value with absent=true below
		none []string
	}{
		{map[string]any{"region": "us-west 1", "count": 42, "flag": true, "method": "GET", "query": "q", "nothing": nil, "nested": map[string]any{"zone": "z"}},
			map[string]string{"Mcp-Param-Region": "us-west 1", "Mcp-Param-Count": "42", "Mcp-Param-Flag": "true", "Mcp-Param-Method": "GET", "Mcp-Param-Zone": "z", "Mcp-Method": "tools/call"},
			[]string{"Mcp-Param-Nothing", "Mcp-Param-Query"}},
		{map[string]any{"region": "Zürich", "count": 7.0, "flag": false, "method": " lead"},
			map[string]string{"Mcp-Param-Region": "=?base64?WsO8cmljaA==?=", "Mcp-Param-Count": "7", "Mcp-Param-Flag": "false", "Mcp-Param-Method": "=?base64?IGxlYWQ=?="},
			nil},
		{map[string]any{"region": "a\tb", "method": "line\nbreak", "nested": map[string]any{"zone": ""}},
			map[string]string{"Mcp-Param-Region": "=?base64?YQli?=", "Mcp-Param-Method": "=?base64?bGluZQpicmVhaw==?="},
			[]string{"Mcp-Param-Count"}},
		{map[string]any{"region": "=?base64?eA==?="},
			map[string]string{"Mcp-Param-Region": "=?base64?PT9iYXNlNjQ/ZUE9PT89?="}, nil},
	}
	for i, tc := range cases {
		_, err := c.CallTool(ctxT(t), "hdr", tc.args)
		require.NoError(t, err)
		calls := rs.calls("tools/call")
		got := calls[len(calls)-1].Header
		for k, v := range tc.want {
			assert.Equal(t, []string{v}, got.Values(k), "case %d %s", i, k)
		}
		for _, k := range tc.none {
			assert.Empty(t, got.Values(k), "case %d %s", i, k)
		}
	}
	// The empty string is sent as an empty value.
	calls := rs.calls("tools/call")
	assert.Equal(t, []string{""}, calls[2].Header.Values("Mcp-Param-Zone"))
}

// A server that refuses the headers (-32020) makes the client list the
// tools again and retry once.
func TestHeaderMismatchRefreshesToolsOnce(t *testing.T) {
	rs := modernRaw(t, func(w http.ResponseWriter, s *seen) bool {
		if s.RPC.Method == "tools/call" && s.Header.Get("Mcp-Param-Region") == "" {
			writeJSON(w, 400, s.RPC.ID, `"error":{"code":-32020,"message":"missing Mcp-Param-Region"}`)
			return true
		}
		return false
	})
	c, err := client.Connect(ctxT(t), client.HTTP(rs.url))
	require.NoError(t, err)
	defer c.Close()
	_, err = c.CallTool(ctxT(t), "hdr", map[string]any{"region": "eu"})
	require.NoError(t, err)
	assert.Len(t, rs.calls("tools/list"), 1)
	assert.Len(t, rs.calls("tools/call"), 2)
}

// The requestState goes back byte for byte, with a new id and the
// answers; it never leaks into another call, and a result without
// resultType is complete.
func TestWireRequestStateByteExact(t *testing.T) {
	const state = `"st\u0061te\/with\\escapes é"`
	rs := modernRaw(t, func(w http.ResponseWriter, s *seen) bool {
		if s.RPC.Method != "tools/call" {
			return false
		}
		var p struct {
			Name         string          `json:"name"`
			RequestState json.RawMessage `json:"requestState"`
		}
		_ = json.Unmarshal(s.RPC.Params, &p)
		switch {
		case p.Name == "nostate" && p.RequestState == nil && !strings.Contains(string(s.Body), "inputResponses"):
			writeJSON(w, 200, s.RPC.ID, `"result":{"resultType":"input_required","inputRequests":{"confirm":{"method":"elicitation/create","params":{"message":"ok?","requestedSchema":{"type":"object","properties":{}}}}}}`)
		case p.Name == "state" && p.RequestState == nil:
			writeJSON(w, 200, s.RPC.ID, `"result":{"resultType":"input_required","inputRequests":{"confirm":{"method":"elicitation/create","params":{"message":"ok?","requestedSchema":{"type":"object","properties":{}}}}},"requestState":`+state+`}`)
		default:
			writeJSON(w, 200, s.RPC.ID, `"result":{"content":[{"type":"text","text":"done"}]}`)
		}
		return true
	})
	c, err := client.Connect(ctxT(t), client.HTTP(rs.url), client.OnElicitation(func(ctx context.Context, r *mrtr.ElicitRequest) (*mrtr.ElicitResult, error) {
		return &mrtr.ElicitResult{Action: mrtr.Accepted, Content: map[string]any{}}, nil
	}))
	require.NoError(t, err)
	defer c.Close()
	res, err := c.CallTool(ctxT(t), "state", nil)
	require.NoError(t, err)
	assert.Equal(t, "done", res.Text())
	_, err = c.CallTool(ctxT(t), "nostate", nil)
	require.NoError(t, err)
	_, err = c.CallTool(ctxT(t), "unrelated", nil)
	require.NoError(t, err)

	calls := rs.calls("tools/call")
	require.Len(t, calls, 5)
	assert.Contains(t, string(calls[1].Body), `"requestState":`+state, "byte for byte")
	assert.Contains(t, string(calls[1].Body), `"inputResponses":{"confirm":{"action":"accept"}}`)
	assert.NotEqual(t, string(calls[0].RPC.ID), string(calls[1].RPC.ID), "a retry has a new id")
	assert.NotContains(t, string(calls[3].Body), "requestState", "no state when the server sent none")
	assert.Contains(t, string(calls[3].Body), "inputResponses")
	assert.NotContains(t, string(calls[4].Body), "requestState")
	assert.NotContains(t, string(calls[4].Body), "inputResponses")
}

// A -32022 naming a version the client speaks is retried once, in both
// the header and _meta; a second one is the answer.
func TestWireUnsupportedVersionRetriedOnce(t *testing.T) {
	first := true
	rs := modernRaw(t, func(w http.ResponseWriter, s *seen) bool {
		if first || s.RPC.Method == "tools/call" {
			first = false
			writeJSON(w, 400, s.RPC.ID, `"error":{"code":-32022,"message":"Unsupported protocol version","data":{"supported":["2026-07-28"],"requested":"x"}}`)
			return true
		}
		return false
	})
	c, err := client.Connect(ctxT(t), client.HTTP(rs.url))
	require.NoError(t, err)
	defer c.Close()
	assert.Len(t, rs.calls("server/discover"), 2)
	_, err = c.CallTool(ctxT(t), "t", nil)
	assert.Equal(t, client.CodeUnsupportedVersion, client.CodeOf(err))
	assert.Len(t, rs.calls("tools/call"), 2, "retried once, no loop")
	var ce *client.Error
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, 400, ce.HTTPStatus)
}

func TestWirePagination(t *testing.T) {
	rs := modernRaw(t, func(w http.ResponseWriter, s *seen) bool {
		if s.RPC.Method != "prompts/list" {
			return false
		}
		var p struct {
			Cursor string `json:"cursor"`
		}
		_ = json.Unmarshal(s.RPC.Params, &p)
		switch p.Cursor {
		case "":
			writeJSON(w, 200, s.RPC.ID, `"result":{"resultType":"complete","prompts":[{"name":"a"}],"nextCursor":"c1"}`)
		case "c1":
			writeJSON(w, 200, s.RPC.ID, `"result":{"resultType":"complete","prompts":[{"name":"b"}],"nextCursor":"c2"}`)
		default:
			writeJSON(w, 200, s.RPC.ID, `"result":{"resultType":"complete","prompts":[{"name":"c"}]}`)
		}
		return true
	})
	c, err := client.Connect(ctxT(t), client.HTTP(rs.url))
	require.NoError(t, err)
	defer c.Close()
	ps, err := c.ListPrompts(ctxT(t))
	require.NoError(t, err)
	require.Len(t, ps, 3)
	assert.Equal(t, "c", ps[2].Name)
	assert.Len(t, rs.calls("prompts/list"), 3)
}

func TestTokenNeverOverPlainHTTPOffLoopback(t *testing.T) {
	sent := false
	hc := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		sent = true
		return nil, fmt.Errorf("no network in tests")
	})}
	_, err := client.Connect(ctxT(t), client.HTTP("http://mcp.example.com/mcp", client.WithHTTPClient(hc), client.WithBearerToken("secret")))
	require.ErrorIs(t, err, client.ErrInsecureToken)
	assert.False(t, sent)

	// Loopback is fine, and the token goes on every request.
	rs := modernRaw(t, nil)
	c, err := client.Connect(ctxT(t), client.HTTP(rs.url, client.WithBearerToken("secret")))
	require.NoError(t, err)
	defer c.Close()
	assert.Equal(t, "Bearer secret", rs.calls("server/discover")[0].Header.Get("Authorization"))
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// Cancelling a modern call closes its request.
func TestCancelModernClosesTheRequest(t *testing.T) {
	gone := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		_ = json.NewDecoder(r.Body).Decode(&m)
		if m.Method == "server/discover" {
			writeJSON(w, 200, m.ID, discoverResult)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(200)
		w.(http.Flusher).Flush()
		<-r.Context().Done()
		close(gone)
	}))
	defer srv.Close()
	c, err := client.Connect(ctxT(t), client.HTTP(srv.URL))
	require.NoError(t, err)
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err = c.CallTool(ctx, "slow", nil)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	select {
	case <-gone:
	case <-time.After(5 * time.Second):
		t.Fatal("the server never saw the request end")
	}
}

// Call sends any method raw, with the standard headers, and answers no
// rounds.
func TestWireRawCall(t *testing.T) {
	rs := modernRaw(t, nil)
	c, err := client.Connect(ctxT(t), client.HTTP(rs.url))
	require.NoError(t, err)
	defer c.Close()
	res, err := c.Call(ctxT(t), "resources/read", map[string]any{"uri": "file:///a b", "_meta": map[string]any{"ignored": true}})
	require.NoError(t, err)
	assert.Contains(t, string(res), `"resultType":"complete"`)
	s := rs.calls("resources/read")[0]
	assert.Equal(t, "file:///a b", s.Header.Get("Mcp-Name"))
	assert.Equal(t, "resources/read", s.Header.Get("Mcp-Method"))
	assert.NotContains(t, string(s.Body), "ignored", "the client owns _meta")
}
