package streamablehttp

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mrtrkit/mrtrkit/mrtr"
)

// This file checks the transport's own refusals (status.go) on the wire:
// each is a -32600 JSON-RPC error with its status and its message, and
// carries the request id only when the body was read and the id could be.

// TestRefusalsOnTheWire sends one request per refusal to a Handler with an
// authenticator and a small body limit.
func TestRefusalsOnTheWire(t *testing.T) {
	const scopeChallenge = `Bearer error="insufficient_scope", scope="tools"`
	auth := BearerAuthenticator(func(_ context.Context, token string) (*mrtr.TokenInfo, error) {
		switch token {
		case "ok":
			return &mrtr.TokenInfo{Subject: "alice"}, nil
		case "reader":
			return nil, Forbidden(scopeChallenge)
		}
		return nil, errors.New("unknown token")
	}, "")
	f := newFixture(t, WithMaxBodyBytes(1024), WithAuthenticator(auth))
	authed := func(c call) call { return c.withHeader("Authorization", "Bearer ok") }
	good := authed(toolCall(7, "echo", `{"text":"x"}`))

	tests := []struct {
		name    string
		req     call
		status  int
		message string
		id      string // the JSON id echoed; "" for none
		headers map[string]string
	}{
		{name: "foreign Host", req: func() call { c := good; c.host = "evil.example.com"; return c }(),
			status: 403, message: `Forbidden: host "evil.example.com" not allowed (only localhost, 127.0.0.1 and [::1] are allowed by default; list the names clients use to reach the server with streamablehttp.WithAllowedHosts)`},
		{name: "foreign Origin", req: good.withHeader("Origin", "https://evil.example.com"),
			status: 403, message: `Forbidden: origin "https://evil.example.com" not allowed (only loopback origins are allowed by default; list the origins of browser clients with streamablehttp.WithAllowedOrigins)`},
		{name: "GET", req: authed(call{method: http.MethodGet, headers: [][2]string{{"Accept", "text/event-stream"}}}),
			status: 405, message: "Method not allowed: use POST", headers: map[string]string{"Allow": "POST"}},
		{name: "no credentials", req: toolCall(7, "echo", `{"text":"x"}`),
			status: 401, message: "Unauthorized", headers: map[string]string{"WWW-Authenticate": defaultChallenge}},
		{name: "insufficient scope", req: good.withHeader("Authorization", "Bearer reader"),
			status: 403, message: "Forbidden: insufficient scope", headers: map[string]string{"WWW-Authenticate": scopeChallenge}},
		{name: "body over the limit", req: authed(toolCall(7, "echo", `{"text":"`+strings.Repeat("x", 1024)+`"}`)),
			status: 413, message: "Request body too large: the limit is 1024 bytes"},
		{name: "Content-Type", req: good.withHeader("Content-Type", "text/plain"),
			status: 415, message: "Unsupported media type: Content-Type must be application/json", id: "7"},
		{name: "Accept", req: good.withHeader("Accept", "application/json"),
			status: 406, message: "Not acceptable: Accept must allow both application/json and text/event-stream", id: "7"},
		{name: "another path", req: func() call { c := good; c.path = "/elsewhere"; return c }(),
			status: 404, message: "Not found: no MCP endpoint at this path"},
		{name: "a response", req: good.withBody(`{"jsonrpc":"2.0","id":"answer-3","result":{}}`),
			status: 400, message: "Invalid request: clients do not send responses in this protocol version", id: `"answer-3"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := f.do(t, tt.req)
			require.Equal(t, tt.status, resp.StatusCode, "%s", body)
			assert.Equal(t, "application/json", resp.Header.Get("Content-Type"))
			for k, v := range tt.headers {
				assert.Equal(t, v, resp.Header.Get(k), k)
			}
			m := decodeRPC(t, body)
			require.NotNil(t, m.Error, "%s", body)
			assert.Equal(t, int(mrtr.CodeInvalidRequest), m.Error.Code)
			assert.Equal(t, tt.message, m.Error.Message)
			assert.Nil(t, m.Error.Data)
			if tt.id == "" {
				assert.Nil(t, m.ID, "%s", body)
			} else {
				assert.JSONEq(t, tt.id, string(m.ID))
			}
		})
	}

	// The control: the same request, refused by nothing, is answered.
	resp, body := f.do(t, good)
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
	assert.Contains(t, string(body), `"text":"x"`)
}

// A JSON-RPC response posted by a client is parsed, then refused by the
// transport: 400 with -32600, the transport's own message and the
// response's own id (none for an error response with a null id).
func TestPostedResponseRefused(t *testing.T) {
	f := newFixture(t)
	tests := []struct {
		name, body, id string
	}{
		{"result, integer id", `{"jsonrpc":"2.0","id":41,"result":{"content":[]}}`, `41`},
		{"result, string id", `{"jsonrpc":"2.0","id":"elicit-1","result":{"action":"accept"}}`, `"elicit-1"`},
		{"error, string id", `{"jsonrpc":"2.0","id":"s","error":{"code":-1,"message":"declined"}}`, `"s"`},
		{"error, null id", `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}`, ``},
		{"members in another order", `{"result":{},"id":42,"jsonrpc":"2.0"}`, `42`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// With every header of a tools/call: they do not matter.
			c := toolCall(1, "echo", `{}`).withBody(tt.body)
			resp, body := f.do(t, c)
			require.Equal(t, http.StatusBadRequest, resp.StatusCode, "%s", body)
			assert.Equal(t, "application/json", resp.Header.Get("Content-Type"))
			m := decodeRPC(t, body)
			require.NotNil(t, m.Error, "%s", body)
			assert.Equal(t, int(mrtr.CodeInvalidRequest), m.Error.Code)
			assert.Equal(t, "Invalid request: clients do not send responses in this protocol version", m.Error.Message)
			assert.Nil(t, m.Result)
			if tt.id == "" {
				assert.Nil(t, m.ID)
			} else {
				assert.JSONEq(t, tt.id, string(m.ID))
			}
		})
	}
}

// rawExchange writes request to a new connection to the test server, as
// is, and reads one response. It is for requests net/http will not send.
func rawExchange(t *testing.T, base, request string) (*http.Response, []byte) {
	t.Helper()
	conn, err := net.DialTimeout("tcp", strings.TrimPrefix(base, "http://"), 5*time.Second)
	require.NoError(t, err)
	defer conn.Close()
	require.NoError(t, conn.SetDeadline(time.Now().Add(10*time.Second)))
	_, err = io.WriteString(conn, request)
	require.NoError(t, err)
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp, body
}

// A body that breaks off (here: a chunked body whose chunk size is not
// hexadecimal) is 400 with -32600 and no id, as nothing of it was read.
func TestUnreadableBody(t *testing.T) {
	f := newFixture(t)
	head := "POST /mcp HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n" +
		"Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\n" +
		"Mcp-Method: tools/list\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
	resp, body := rawExchange(t, f.url, head+"zz\r\n{}\r\n0\r\n\r\n")
	require.Equal(t, http.StatusBadRequest, resp.StatusCode, "%s", body)
	assert.Equal(t, "application/json", resp.Header.Get("Content-Type"))
	m := decodeRPC(t, body)
	require.NotNil(t, m.Error)
	assert.Equal(t, int(mrtr.CodeInvalidRequest), m.Error.Code)
	assert.Equal(t, "Invalid request: the body could not be read", m.Error.Message)
	assert.Nil(t, m.ID)

	// The control: the same request, well chunked, is answered.
	msg := `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":` + metaJSON + `}}`
	resp, body = rawExchange(t, f.url, head+strconv.FormatInt(int64(len(msg)), 16)+"\r\n"+msg+"\r\n0\r\n\r\n")
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
	assert.NotNil(t, decodeRPC(t, body).Result)
}

// The endpoint is its path exactly: a path that only cleans to it
// (//mcp, /x/../mcp) is 404 with a JSON-RPC body and no redirect, whatever
// its Host, Origin or method. A router that cleans paths (net/http's
// ServeMux, gorilla/mux unless told not to) would answer such a path with
// an empty 301 to the endpoint, before the endpoint's own checks.
func TestUncleanPathsAreNotFound(t *testing.T) {
	srv := newTestServer(t, &fixture{})
	h, err := New(srv, WithLogger(quiet))
	require.NoError(t, err)
	seen := make(chan string, 1)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen <- r.RequestURI
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	noRedirects := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

	tests := []struct {
		path, method, host, origin string
	}{
		{path: "//mcp"},
		{path: "/x/../mcp"},
		{path: "/./mcp"},
		{path: "/mcp/."},
		{path: "//mcp", host: "evil.example.com"},
		{path: "/x/../mcp", origin: "https://evil.example.com"},
		{path: "/x/../mcp", method: http.MethodGet},
		{path: "//mcp", method: http.MethodDelete},
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.path+" "+tt.host+tt.origin, func(t *testing.T) {
			c := toolCall(1, "echo", `{"text":"x"}`)
			c.method, c.path, c.host = tt.method, tt.path, tt.host
			if tt.origin != "" {
				c = c.withHeader("Origin", tt.origin)
			}
			req, err := c.request(context.Background(), ts.URL)
			require.NoError(t, err)
			resp, err := noRedirects.Do(req)
			require.NoError(t, err)
			defer resp.Body.Close()
			body, err := io.ReadAll(resp.Body)
			require.NoError(t, err)
			require.Equal(t, tt.path, <-seen, "the path reached the Handler as sent")

			require.Equal(t, http.StatusNotFound, resp.StatusCode, "Location %q, body %q", resp.Header.Get("Location"), body)
			assert.Empty(t, resp.Header.Values("Location"))
			assert.Equal(t, "application/json", resp.Header.Get("Content-Type"))
			m := decodeRPC(t, body)
			require.NotNil(t, m.Error)
			assert.Equal(t, int(mrtr.CodeInvalidRequest), m.Error.Code)
			assert.Equal(t, "Not found: no MCP endpoint at this path", m.Error.Message)
			assert.Nil(t, m.ID, "the body of a request to another path is not read")
		})
	}

	// The control: the endpoint itself is served through the same client.
	req, err := toolCall(1, "echo", `{"text":"x"}`).request(context.Background(), ts.URL)
	require.NoError(t, err)
	resp, err := noRedirects.Do(req)
	require.NoError(t, err)
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	assert.Equal(t, "/mcp", <-seen)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
}

// Invalid UTF-8 in arguments passes JSON parsing (encoding/json does not
// check it) and is refused by the strict door: -32602 in-band, on a plain
// call. testdata/golden/strict.txt holds the door's other cases.
func TestStrictDoorInvalidUTF8OverHTTP(t *testing.T) {
	f := newFixture(t)
	tests := []struct{ name, args string }{
		{"in a value", "{\"text\":\"a\xffb\"}"},
		{"in a member name", "{\"text\":\"a\",\"\xc3\x28\":1}"},
		{"a truncated sequence", "{\"text\":\"\xe2\x82\"}"},
		{"an encoded surrogate", "{\"text\":\"\xed\xa0\x80\"}"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := f.do(t, toolCall(1, "echo", tt.args))
			require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
			m := decodeRPC(t, body)
			require.NotNil(t, m.Error, "%s", body)
			assert.Equal(t, int(mrtr.CodeInvalidParams), m.Error.Code)
			assert.Contains(t, m.Error.Message, "UTF-8")
			assert.JSONEq(t, `1`, string(m.ID))
		})
	}
	resp, body := f.do(t, toolCall(1, "echo", `{"text":"aé€😀b"}`))
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Contains(t, string(body), `"text":"aé€😀b"`)
}

// TestMetaMembersOnTheWire pins how params._meta is split: each member
// name once (the reserved ones, and every other one), names compared
// after unescaping, and each reserved member judged by its own rule.
func TestMetaMembersOnTheWire(t *testing.T) {
	f := newFixture(t)
	const (
		version = `"io.modelcontextprotocol/protocolVersion":"2026-07-28"`
		caps    = `"io.modelcontextprotocol/clientCapabilities":{}`
	)
	tests := []struct {
		name    string
		meta    string
		message string // "" for served
	}{
		{name: "plain", meta: `{` + version + `,` + caps + `,"traceparent":"00-x","vendor/k":1}`},
		{name: "escaped reserved name", meta: `{"io.modelcontextprotocol\/protocolVersion":"2026-07-28",` + caps + `}`},
		{name: "reserved name twice", meta: `{` + version + `,` + caps + `,` + version + `}`,
			message: "Invalid _meta: params._meta has a duplicate member"},
		{name: "reserved name twice, once escaped", meta: `{` + version + `,` + caps + `,"io.modelcontextprotocol\/clientCapabilities":{}}`,
			message: "Invalid _meta: params._meta has a duplicate member"},
		{name: "other name twice", meta: `{` + version + `,` + caps + `,"vendor/k":1,"vendor/k":2}`,
			message: "Invalid _meta: params._meta has a duplicate member"},
		{name: "no capabilities", meta: `{` + version + `}`,
			message: "Invalid _meta: io.modelcontextprotocol/clientCapabilities is required and must be a ClientCapabilities object"},
		{name: "bad log level", meta: `{` + version + `,` + caps + `,"io.modelcontextprotocol/logLevel":"loud"}`,
			message: "Invalid _meta: io.modelcontextprotocol/logLevel must be one of debug, info, notice, warning, error, critical, alert, emergency"},
		{name: "bad progress token", meta: `{` + version + `,` + caps + `,"progressToken":{}}`,
			message: "Invalid _meta: progressToken must be a string or an integer"},
		{name: "client info without a name", meta: `{` + version + `,` + caps + `,"io.modelcontextprotocol/clientInfo":{"version":"1"}}`,
			message: "Invalid _meta: io.modelcontextprotocol/clientInfo must be an object with a name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := f.do(t, toolCall(3, "echo", `{"text":"x"}`).withMeta(tt.meta))
			m := decodeRPC(t, body)
			if tt.message == "" {
				require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
				require.Nil(t, m.Error, "%s", body)
				assert.Contains(t, string(body), `"text":"x"`)
				return
			}
			require.Equal(t, http.StatusBadRequest, resp.StatusCode, "%s", body)
			require.NotNil(t, m.Error, "%s", body)
			assert.Equal(t, int(mrtr.CodeInvalidParams), m.Error.Code)
			assert.Equal(t, tt.message, m.Error.Message)
		})
	}
}
