package streamablehttp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mrtrkit/mrtrkit/mrtr"
)

func TestUnauthorized(t *testing.T) {
	verify := func(_ context.Context, token string) (*mrtr.TokenInfo, error) {
		if token == "good-token" {
			return &mrtr.TokenInfo{Subject: "alice"}, nil
		}
		return nil, errors.New("unknown token")
	}
	const challenge = `Bearer resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource"`
	custom := func(r *http.Request) (*mrtr.TokenInfo, error) {
		if r.Header.Get("X-Key") == "k" {
			return &mrtr.TokenInfo{Subject: "bob"}, nil
		}
		return nil, fmt.Errorf("%w: no key", ErrUnauthorized)
	}
	tests := []struct {
		name          string
		auth          Authenticator
		authorization []string
		xKey          string
		wantStatus    int
		wantChallenge string
		wantPrincipal string
	}{
		{name: "no token", auth: BearerAuthenticator(verify, challenge), wantStatus: 401, wantChallenge: challenge},
		{name: "invalid token", auth: BearerAuthenticator(verify, challenge), authorization: []string{"Bearer bad-token"}, wantStatus: 401, wantChallenge: challenge},
		{name: "other scheme", auth: BearerAuthenticator(verify, challenge), authorization: []string{"Basic Z29vZC10b2tlbg=="}, wantStatus: 401, wantChallenge: challenge},
		{name: "scheme only", auth: BearerAuthenticator(verify, challenge), authorization: []string{"Bearer"}, wantStatus: 401, wantChallenge: challenge},
		{name: "token with a space", auth: BearerAuthenticator(verify, challenge), authorization: []string{"Bearer good token"}, wantStatus: 401, wantChallenge: challenge},
		{name: "two Authorization headers", auth: BearerAuthenticator(verify, challenge), authorization: []string{"Bearer good-token", "Bearer good-token"}, wantStatus: 401, wantChallenge: challenge},
		{name: "default challenge", auth: BearerAuthenticator(verify, ""), wantStatus: 401, wantChallenge: "Bearer"},
		{name: "valid token", auth: BearerAuthenticator(verify, challenge), authorization: []string{"Bearer good-token"}, wantStatus: 200, wantPrincipal: "alice"},
		{name: "scheme in any case", auth: BearerAuthenticator(verify, challenge), authorization: []string{"bEARER good-token"}, wantStatus: 200, wantPrincipal: "alice"},
		{name: "custom authenticator refuses", auth: custom, wantStatus: 401, wantChallenge: defaultChallenge},
		{name: "custom authenticator accepts", auth: custom, xKey: "k", wantStatus: 200, wantPrincipal: "bob"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, WithAuthenticator(tt.auth))
			c := toolCall(1, "whoami", `{}`)
			for _, a := range tt.authorization {
				c.headers = append(c.headers, [2]string{"Authorization", a})
			}
			if tt.xKey != "" {
				c.headers = append(c.headers, [2]string{"X-Key", tt.xKey})
			}
			resp, body := f.do(t, c)
			require.Equal(t, tt.wantStatus, resp.StatusCode, "body: %s", body)
			if tt.wantStatus == http.StatusUnauthorized {
				assert.Equal(t, tt.wantChallenge, resp.Header.Get("WWW-Authenticate"))
				m := decodeRPC(t, body)
				require.NotNil(t, m.Error)
				assert.Nil(t, m.ID, "an authentication failure carries no id")
				assert.NotContains(t, string(body), "unknown token", "the verifier's error stays in the log")
				return
			}
			assert.Empty(t, resp.Header.Get("WWW-Authenticate"))
			assert.Contains(t, string(body), "principal="+tt.wantPrincipal)
		})
	}
}

// TestCheckOrder sends requests that break two rules at once: the status
// tells which check came first.
func TestCheckOrder(t *testing.T) {
	f := newFixture(t, WithMaxBodyBytes(64), WithAuthenticator(BearerAuthenticator(func(_ context.Context, tok string) (*mrtr.TokenInfo, error) {
		if tok == "ok" {
			return &mrtr.TokenInfo{Subject: "p"}, nil
		}
		return nil, errors.New("no")
	}, "")))
	const (
		good   = "Bearer ok"
		ctJSON = "application/json"
		both   = "application/json, text/event-stream"
	)
	small := `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`
	big := strings.Repeat(" ", 100) + small
	tests := []struct {
		name, method, host, auth, contentType, accept, body string
		want                                                int
	}{
		{name: "host before method", method: "GET", host: "evil.example.com", want: 403},
		{name: "host before authentication", host: "evil.example.com", contentType: ctJSON, accept: both, body: small, want: 403},
		{name: "method before authentication", method: "DELETE", want: 405},
		{name: "authentication before body size", contentType: ctJSON, accept: both, body: big, want: 401},
		{name: "body size before content type", auth: good, contentType: "text/plain", accept: both, body: big, want: 413},
		{name: "content type before accept", auth: good, contentType: "text/plain", accept: "text/html", body: small, want: 415},
		{name: "accept before parsing", auth: good, contentType: ctJSON, accept: "text/html", body: "{", want: 406},
		{name: "parsing before the protocol headers", auth: good, contentType: ctJSON, accept: both, body: "{", want: 400},
		{name: "all good but the protocol headers", auth: good, contentType: ctJSON, accept: both, body: small, want: 400},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := call{method: tt.method, host: tt.host, body: tt.body}
			for _, h := range [][2]string{{"Authorization", tt.auth}, {"Content-Type", tt.contentType}, {"Accept", tt.accept}} {
				if h[1] != "" {
					c.headers = append(c.headers, h)
				}
			}
			resp, body := f.do(t, c)
			assert.Equal(t, tt.want, resp.StatusCode, "%s", body)
		})
	}
}

func TestBodyLimit(t *testing.T) {
	c := toolCall(1, "echo", `{"text":"limit"}`)
	size := int64(len(c.body))
	f := newFixture(t, WithMaxBodyBytes(size))

	resp, body := f.do(t, c)
	assert.Equal(t, http.StatusOK, resp.StatusCode, "a body of exactly the limit is accepted: %s", body)

	over := c
	over.body += " "
	resp, body = f.do(t, over)
	assert.Equal(t, http.StatusRequestEntityTooLarge, resp.StatusCode)
	m := decodeRPC(t, body)
	require.NotNil(t, m.Error)
	assert.Equal(t, int(mrtr.CodeInvalidRequest), m.Error.Code)
	assert.Nil(t, m.ID, "the id of an unread body is unknown")

	// Without Content-Length (chunked), the limit holds as the body is read.
	for _, extra := range []int{0, 1} {
		req, err := c.request(context.Background(), f.url)
		require.NoError(t, err)
		req.Body = io.NopCloser(io.MultiReader(strings.NewReader(c.body), strings.NewReader(strings.Repeat(" ", extra))))
		req.ContentLength = -1
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		want := http.StatusOK
		if extra > 0 {
			want = http.StatusRequestEntityTooLarge
		}
		assert.Equal(t, want, resp.StatusCode, "chunked body of limit+%d", extra)
	}
}

func TestBodyLimitDefault(t *testing.T) {
	f := newFixture(t)
	c := toolCall(1, "echo", `{"text":"`+strings.Repeat("a", int(defaultMaxBodyBytes))+`"}`)
	resp, _ := f.do(t, c)
	assert.Equal(t, http.StatusRequestEntityTooLarge, resp.StatusCode)
}

func TestStreamsProgress(t *testing.T) {
	f := newFixture(t)
	c := toolCall("p-1", "progress", `{"steps":3}`).withMeta(`{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"progressToken":"tok"}`)
	resp, body := f.do(t, c)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	assert.Equal(t, "no-cache", resp.Header.Get("Cache-Control"))
	assert.Equal(t, "no", resp.Header.Get("X-Accel-Buffering"))
	assert.Empty(t, resp.Header.Get("Mcp-Session-Id"))

	events, _ := readSSE(t, body)
	require.Len(t, events, 4, "three progress events, then the result")
	for i, ev := range events[:3] {
		assert.Equal(t, "message", ev.event)
		m := decodeRPC(t, []byte(ev.data))
		assert.Equal(t, "notifications/progress", m.Method)
		assert.Nil(t, m.ID)
		assert.JSONEq(t, fmt.Sprintf(`{"progressToken":"tok","progress":%d,"total":3}`, i+1), string(m.Params))
	}
	last := decodeRPC(t, []byte(events[3].data))
	assert.JSONEq(t, `"p-1"`, string(last.ID))
	assert.Nil(t, last.Error)
	assert.Contains(t, string(last.Result), `"text":"done"`)
}

func TestLogStreamsWhenRequested(t *testing.T) {
	f := newFixture(t)
	c := toolCall(1, "progress", `{"steps":0}`).withMeta(`{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/logLevel":"debug"}`)
	resp, body := f.do(t, c)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	events, _ := readSSE(t, body)
	require.Len(t, events, 2)
	assert.Equal(t, "notifications/message", decodeRPC(t, []byte(events[0].data)).Method)
	assert.NotNil(t, decodeRPC(t, []byte(events[1].data)).Result)
}

func TestPlainJSONWithoutProgressToken(t *testing.T) {
	f := newFixture(t)
	resp, body := f.do(t, toolCall(1, "progress", `{"steps":3}`))
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "application/json", resp.Header.Get("Content-Type"))
	assert.Empty(t, resp.Header.Get("X-Accel-Buffering"))
	m := decodeRPC(t, body)
	assert.Contains(t, string(m.Result), `"text":"done"`)
}

func TestErrorAfterStreamStarted(t *testing.T) {
	f := newFixture(t)
	c := toolCall(7, "progress", `{"steps":1,"fail":true}`).withMeta(`{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"progressToken":1}`)
	resp, body := f.do(t, c)
	require.Equal(t, http.StatusOK, resp.StatusCode, "the status went out with the first event")
	require.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	events, _ := readSSE(t, body)
	require.Len(t, events, 2)
	last := decodeRPC(t, []byte(events[1].data))
	assert.JSONEq(t, `7`, string(last.ID))
	require.NotNil(t, last.Error)
	assert.Equal(t, int(mrtr.CodeInternalError), last.Error.Code)
}

func TestKeepAlive(t *testing.T) {
	meta := `{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"progressToken":"k"}`
	t.Run("sent while a streamed request runs", func(t *testing.T) {
		f := newFixture(t, WithKeepAlive(5*time.Millisecond))
		req, err := toolCall(1, "hold", `{}`).withMeta(meta).request(context.Background(), f.url)
		require.NoError(t, err)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode)
		// The tool holds the call open until a keep-alive has arrived.
		var got []byte
		buf := make([]byte, 512)
		for !bytes.Contains(got, []byte("\n\n: keep-alive\n\n")) {
			n, err := resp.Body.Read(buf)
			got = append(got, buf[:n]...)
			require.NoError(t, err, "the stream ended before a keep-alive: %q", got)
		}
		close(f.release)
		rest, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		events, comments := readSSE(t, append(got, rest...))
		require.Len(t, events, 2)
		assert.Positive(t, comments)
		assert.Contains(t, events[1].data, "released")
	})
	t.Run("disabled", func(t *testing.T) {
		f := newFixture(t, WithKeepAlive(0))
		_, body := f.do(t, toolCall(1, "progress", `{"steps":1,"sleepMs":30}`).withMeta(meta))
		_, comments := readSSE(t, body)
		assert.Zero(t, comments)
	})
	t.Run("never on a JSON answer", func(t *testing.T) {
		f := newFixture(t, WithKeepAlive(time.Millisecond))
		resp, body := f.do(t, toolCall(1, "progress", `{"steps":1,"sleepMs":30}`))
		assert.Equal(t, "application/json", resp.Header.Get("Content-Type"))
		assert.NotContains(t, string(body), "keep-alive")
	})
}

func TestClientDisconnectCancelsHandler(t *testing.T) {
	f := newFixture(t)
	c := toolCall(1, "wait", `{}`).withMeta(`{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"progressToken":"w"}`)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, err := c.request(ctx, f.url)
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	// The first event proves the handler is running; then hang up.
	buf := make([]byte, 64)
	_, err = resp.Body.Read(buf)
	require.NoError(t, err)
	cancel()
	resp.Body.Close()
	select {
	case err := <-f.observed:
		require.Error(t, err, "emitting after the client went must fail")
		assert.ErrorIs(t, err, errClientGone)
	case <-time.After(5 * time.Second):
		t.Fatal("the handler's context was not cancelled when the client disconnected")
	}
}

func TestEmitAfterAnswerFails(t *testing.T) {
	f := newFixture(t)
	meta := `{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"progressToken":"late"}`
	for _, tt := range []struct {
		args, contentType string
	}{
		{`{}`, "application/json"},
		{`{"emit":true}`, "text/event-stream"},
	} {
		t.Run(tt.contentType, func(t *testing.T) {
			resp, body := f.do(t, toolCall(1, "keep", tt.args).withMeta(meta))
			require.Equal(t, http.StatusOK, resp.StatusCode)
			assert.Equal(t, tt.contentType, resp.Header.Get("Content-Type"))
			assert.Contains(t, string(body), "kept")
			req := <-f.requests
			assert.ErrorIs(t, req.Progress(1, nil, "too late"), errAnswered)
			// Later requests do not overwrite what the handler kept.
			for range 3 {
				f.do(t, toolCall(2, "echo", `{"text":"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"}`))
			}
			assert.JSONEq(t, tt.args, string(req.Arguments))
		})
	}
}

func TestConcurrentEmit(t *testing.T) {
	f := newFixture(t)
	const n = 50
	c := toolCall(1, "fanout", fmt.Sprintf(`{"n":%d}`, n)).withMeta(`{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"progressToken":"f"}`)
	resp, body := f.do(t, c)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	events, _ := readSSE(t, body)
	require.Len(t, events, n+1)
	seen := map[float64]bool{}
	for _, ev := range events[:n] {
		var p struct {
			Params struct{ Progress float64 } `json:"params"`
		}
		require.NoError(t, json.Unmarshal([]byte(ev.data), &p), ev.data)
		seen[p.Params.Progress] = true
	}
	assert.Len(t, seen, n, "every notification arrives whole, once")
	assert.Contains(t, events[n].data, "fanned")
}

func TestMRTRRoundOverHTTP(t *testing.T) {
	f := newFixture(t)
	meta := `{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}`
	resp, body := f.do(t, toolCall(1, "confirm", `{"item":"x"}`).withMeta(meta))
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
	var first struct {
		Result struct {
			ResultType    string                     `json:"resultType"`
			InputRequests map[string]json.RawMessage `json:"inputRequests"`
			RequestState  string                     `json:"requestState"`
		} `json:"result"`
	}
	require.NoError(t, json.Unmarshal(body, &first))
	require.Equal(t, "input_required", first.Result.ResultType)
	require.Contains(t, first.Result.InputRequests, "ok")
	require.NotEmpty(t, first.Result.RequestState)

	retry := mrtrRetry(2, meta, first.Result.RequestState, `{"item":"x"}`)
	resp, body = f.do(t, retry)
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
	assert.Contains(t, string(body), `"resultType":"complete"`)
	assert.Contains(t, string(body), "confirmed=accept")

	// The state is bound to the arguments: changed arguments are refused.
	resp, body = f.do(t, mrtrRetry(3, meta, first.Result.RequestState, `{"item":"y"}`))
	require.Equal(t, http.StatusOK, resp.StatusCode)
	m := decodeRPC(t, body)
	require.NotNil(t, m.Error)
	assert.Equal(t, int(mrtr.CodeInvalidParams), m.Error.Code)
}

// mrtrRetry is the retry of a "confirm" call carrying the sealed state and
// an accepting answer.
func mrtrRetry(id int, meta, state, args string) call {
	c := toolCall(id, "confirm", args).withMeta(meta)
	c.body = strings.Replace(c.body, `"arguments":`+args, `"arguments":`+args+`,"inputResponses":{"ok":{"action":"accept","content":{"sure":true}}},"requestState":"`+state+`"`, 1)
	return c
}

func TestAllowLists(t *testing.T) {
	list := func(c call) call {
		c.body = `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":` + metaJSON + `}}`
		c.headers = [][2]string{
			{"Content-Type", "application/json"},
			{"Accept", "application/json, text/event-stream"},
			{"MCP-Protocol-Version", "2026-07-28"},
			{"Mcp-Method", "tools/list"},
		}
		return c
	}
	tests := []struct {
		name   string
		opts   []Option
		host   string
		origin string
		want   int
	}{
		{name: "listed host, any port", opts: []Option{WithAllowedHosts("mcp.example.com")}, host: "mcp.example.com:443", want: 200},
		{name: "listed host in other case", opts: []Option{WithAllowedHosts("mcp.example.com")}, host: "MCP.Example.com", want: 200},
		{name: "listed host:port, other port", opts: []Option{WithAllowedHosts("mcp.example.com:8443")}, host: "mcp.example.com:9000", want: 403},
		{name: "listed host:port", opts: []Option{WithAllowedHosts("mcp.example.com:8443")}, host: "mcp.example.com:8443", want: 200},
		{name: "a configured list replaces the loopback default", opts: []Option{WithAllowedHosts("mcp.example.com")}, host: "localhost", want: 403},
		{name: "IPv6 entry", opts: []Option{WithAllowedHosts("[::1]:8080")}, host: "[::1]:8080", want: 200},
		{name: "any host", opts: []Option{WithAllowedHosts("*")}, host: "anything.example", want: 200},
		{name: "listed origin", opts: []Option{WithAllowedOrigins("https://app.example.com")}, origin: "https://app.example.com", want: 200},
		{name: "unlisted origin", opts: []Option{WithAllowedOrigins("https://app.example.com")}, origin: "https://app.example.com:8443", want: 403},
		{name: "configured origins replace the loopback default", opts: []Option{WithAllowedOrigins("https://app.example.com")}, origin: "http://localhost:3000", want: 403},
		{name: "no Origin is always fine", opts: []Option{WithAllowedOrigins("https://app.example.com")}, want: 200},
		{name: "any origin", opts: []Option{WithAllowedOrigins("*")}, origin: "https://elsewhere.example", want: 200},
		{name: "default refuses a non-http origin", origin: "file://localhost", want: 403},
		{name: "default refuses a public Host", host: "203.0.113.7:80", want: 403},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, tt.opts...)
			c := list(call{host: tt.host})
			if tt.origin != "" {
				c.headers = append(c.headers, [2]string{"Origin", tt.origin})
			}
			resp, body := f.do(t, c)
			assert.Equal(t, tt.want, resp.StatusCode, "%s", body)
		})
	}
}

func TestWithPath(t *testing.T) {
	f := newFixture(t, WithPath("/rpc"))
	c := toolCall(1, "echo", `{"text":"p"}`)
	c.path = "/rpc"
	resp, _ := f.do(t, c)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	c.path = "/mcp"
	resp, body := f.do(t, c)
	assert.Equal(t, http.StatusNotFound, resp.StatusCode)
	assert.Nil(t, decodeRPC(t, body).ID, "the body of a request to another path is not read")
	c.path = "/rpc/"
	resp, _ = f.do(t, c)
	assert.Equal(t, http.StatusNotFound, resp.StatusCode)
}

func TestNewRejectsBadOptions(t *testing.T) {
	srv := newTestServer(t, &fixture{})
	tests := []struct {
		name string
		opt  Option
	}{
		{"relative path", WithPath("mcp")},
		{"zero body limit", WithMaxBodyBytes(0)},
		{"negative keep-alive", WithKeepAlive(-time.Second)},
		{"bad host", WithAllowedHosts("example.com:http")},
		{"unbracketed IPv6 host", WithAllowedHosts("::1")},
		{"origin with a path", WithAllowedOrigins("https://app.example.com/")},
		{"origin without scheme", WithAllowedOrigins("app.example.com")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(srv, tt.opt)
			assert.Error(t, err)
		})
	}
	_, err := New(nil)
	assert.Error(t, err)
}

// A caller whose token is valid but lacks scope gets 403 with the
// insufficient_scope challenge, not 401.
func TestForbiddenScope(t *testing.T) {
	const challenge = `Bearer error="insufficient_scope", scope="files:read"`
	verify := func(_ context.Context, token string) (*mrtr.TokenInfo, error) {
		if token == "reader" {
			return nil, Forbidden(challenge)
		}
		return &mrtr.TokenInfo{Subject: "alice"}, nil
	}
	f := newFixture(t, WithAuthenticator(BearerAuthenticator(verify, "")))
	c := toolCall(1, "echo", `{"text":"p"}`)
	c.headers = append(c.headers, [2]string{"Authorization", "Bearer reader"})
	resp, body := f.do(t, c)
	assert.Equal(t, http.StatusForbidden, resp.StatusCode, "%s", body)
	assert.Equal(t, challenge, resp.Header.Get("WWW-Authenticate"))

	c = toolCall(2, "echo", `{"text":"p"}`)
	c.headers = append(c.headers, [2]string{"Authorization", "Bearer writer"})
	resp, _ = f.do(t, c)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
}
