package streamablehttp

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mrtrkit/mrtrkit/internal/testkit"
	"github.com/mrtrkit/mrtrkit/mrtr"
	"github.com/mrtrkit/mrtrkit/mrtr/legacy"
)

const appOrigin = "https://app.example.com"

// preflightCall is the OPTIONS a browser sends before a tools/call.
func preflightCall(origin, headers string) call {
	return call{method: http.MethodOptions, headers: [][2]string{
		{"Origin", origin},
		{"Access-Control-Request-Method", "POST"},
		{"Access-Control-Request-Headers", headers},
	}}
}

// splitList splits a comma-separated header value.
func splitList(v string) []string {
	var out []string
	for _, p := range strings.Split(v, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

var wantProtocolHeaders = []string{"Content-Type", "Accept", "Authorization", "MCP-Protocol-Version",
	"Mcp-Method", "Mcp-Name", "Mcp-Session-Id", "Last-Event-ID"}

// A preflight from an allowed origin is granted with exactly the
// protocol's headers and the Mcp-Param-* headers of the tools registered
// at that moment; the actual call is granted too.
func TestCORSPreflightAndCall(t *testing.T) {
	f := newFixture(t, WithAllowedOrigins(appOrigin), WithCORS(CORS{}))
	resp, body := f.do(t, preflightCall(appOrigin, "content-type,accept,mcp-protocol-version,mcp-method,mcp-name,mcp-param-region"))
	require.Equal(t, http.StatusNoContent, resp.StatusCode, "%s", body)
	assert.Empty(t, body)
	assert.Equal(t, appOrigin, resp.Header.Get("Access-Control-Allow-Origin"))
	assert.Contains(t, splitList(resp.Header.Get("Vary")), "Origin")
	assert.Equal(t, "POST", resp.Header.Get("Access-Control-Allow-Methods"))
	assert.Equal(t, "600", resp.Header.Get("Access-Control-Max-Age"))
	assert.Empty(t, resp.Header.Get("Access-Control-Allow-Credentials"), "credentials only on request")
	want := append(append([]string(nil), wantProtocolHeaders...), "Mcp-Param-Limit", "Mcp-Param-Region")
	assert.Equal(t, want, splitList(resp.Header.Get("Access-Control-Allow-Headers")))

	// The tool set changes at run time, and so does the answer.
	require.NoError(t, f.srv.AddTool(mrtr.Tool{Name: "zoned", InputSchema: json.RawMessage(
		`{"type":"object","properties":{"z":{"type":"string","x-mcp-header":"Zone"}}}`)},
		mrtr.HandlerFunc(func(context.Context, *mrtr.Request) (mrtr.Result, error) { return mrtr.TextResult("z"), nil })))
	require.True(t, f.srv.RemoveTool("regional"))
	resp, _ = f.do(t, preflightCall(appOrigin, "mcp-param-zone"))
	want = append(append([]string(nil), wantProtocolHeaders...), "Mcp-Param-Zone")
	assert.Equal(t, want, splitList(resp.Header.Get("Access-Control-Allow-Headers")))

	// The call itself, as the browser then sends it.
	resp, body = f.do(t, toolCall(1, "zoned", `{"z":"eu"}`, [2]string{"Origin", appOrigin}, [2]string{"Mcp-Param-Zone", "eu"}))
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
	assert.Contains(t, string(body), `"z"`)
	assert.Equal(t, appOrigin, resp.Header.Get("Access-Control-Allow-Origin"))
	assert.Equal(t, []string{"Origin"}, resp.Header.Values("Vary"))
	assert.Equal(t, []string{"Mcp-Session-Id", "WWW-Authenticate", "Allow"}, splitList(resp.Header.Get("Access-Control-Expose-Headers")))

	// A request without Origin (not a browser) gets no grant, only Vary.
	resp, _ = f.do(t, toolCall(2, "echo", `{"text":"x"}`))
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Empty(t, resp.Header.Get("Access-Control-Allow-Origin"))
	assert.Equal(t, "Origin", resp.Header.Get("Vary"))
}

// An origin that is not allowed gets 403 and no CORS header, for the
// preflight and for the call; so does an allowed origin at a Host that is
// not.
func TestCORSRefusesOtherOrigins(t *testing.T) {
	f := newFixture(t, WithAllowedOrigins(appOrigin), WithCORS(CORS{}))
	for _, c := range []call{
		preflightCall("https://evil.example.com", "content-type"),
		preflightCall("null", "content-type"),
		toolCall(1, "echo", `{"text":"x"}`, [2]string{"Origin", "https://evil.example.com"}),
		func() call { c := preflightCall(appOrigin, "content-type"); c.host = "evil.example.com"; return c }(),
	} {
		resp, body := f.do(t, c)
		assert.Equal(t, http.StatusForbidden, resp.StatusCode, "%s", body)
		for name := range resp.Header {
			assert.False(t, strings.HasPrefix(name, "Access-Control-"), "header %s in a refusal", name)
		}
	}
}

// Without WithCORS a preflight is refused 405 with no grant, as before.
func TestNoCORSWithoutTheOption(t *testing.T) {
	f := newFixture(t, WithAllowedOrigins(appOrigin))
	resp, _ := f.do(t, preflightCall(appOrigin, "content-type"))
	assert.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode)
	assert.Empty(t, resp.Header.Get("Access-Control-Allow-Origin"))
	resp, _ = f.do(t, toolCall(1, "echo", `{"text":"x"}`, [2]string{"Origin", appOrigin}))
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Empty(t, resp.Header.Get("Access-Control-Allow-Origin"))
	assert.Empty(t, resp.Header.Get("Vary"))
}

// The default allow-list (loopback origins) is the CORS allow-list too.
func TestCORSDefaultLoopbackOrigins(t *testing.T) {
	f := newFixture(t, WithCORS(CORS{MaxAge: 90 * time.Second}))
	resp, _ := f.do(t, preflightCall("http://localhost:5173", "content-type"))
	assert.Equal(t, http.StatusNoContent, resp.StatusCode)
	assert.Equal(t, "http://localhost:5173", resp.Header.Get("Access-Control-Allow-Origin"))
	assert.Equal(t, "90", resp.Header.Get("Access-Control-Max-Age"))
	resp, _ = f.do(t, preflightCall(appOrigin, "content-type"))
	assert.Equal(t, http.StatusForbidden, resp.StatusCode)
}

// Preflights carry no credentials, so they are answered before
// authentication; a refused call still carries the grant, so that the
// page can read WWW-Authenticate. Credentials are granted only on
// request, extra headers are listed, and the initialize era's methods
// are offered with WithLegacy.
func TestCORSWithAuthCredentialsAndLegacy(t *testing.T) {
	desc := testkit.Desc("cors", "1.0.0")
	desc.LegacyVersions = []string{"2025-11-25"}
	srv := testkit.Server(t, desc, mrtr.WithCodec(testkit.Codec(t)))
	eng, err := legacy.New(srv, legacy.WithKeyRing(testkit.Ring(t)), legacy.WithLogger(quiet))
	require.NoError(t, err)
	auth := BearerAuthenticator(func(context.Context, string) (*mrtr.TokenInfo, error) {
		return nil, errors.New("no")
	}, "")
	h, err := New(srv, WithLogger(quiet), WithLegacy(eng), WithAuthenticator(auth), WithAllowedOrigins(appOrigin),
		WithCORS(CORS{AllowCredentials: true, AllowHeaders: []string{"x-tenant"}, ExposeHeaders: []string{"Retry-After"}}))
	require.NoError(t, err)
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	f := &fixture{url: ts.URL}

	resp, body := f.do(t, preflightCall(appOrigin, "authorization,content-type"))
	require.Equal(t, http.StatusNoContent, resp.StatusCode, "%s", body)
	assert.Equal(t, "GET, POST, DELETE", resp.Header.Get("Access-Control-Allow-Methods"))
	assert.Equal(t, "true", resp.Header.Get("Access-Control-Allow-Credentials"))
	assert.Equal(t, append(append([]string(nil), wantProtocolHeaders...), "X-Tenant"), splitList(resp.Header.Get("Access-Control-Allow-Headers")))

	resp, _ = f.do(t, toolCall(1, "echo", `{}`, [2]string{"Origin", appOrigin}, [2]string{"Authorization", "Bearer x"}))
	assert.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	assert.Equal(t, appOrigin, resp.Header.Get("Access-Control-Allow-Origin"))
	assert.Equal(t, "true", resp.Header.Get("Access-Control-Allow-Credentials"))
	assert.Contains(t, splitList(resp.Header.Get("Access-Control-Expose-Headers")), "WWW-Authenticate")
	assert.Contains(t, splitList(resp.Header.Get("Access-Control-Expose-Headers")), "Retry-After")
	assert.NotEmpty(t, resp.Header.Get("WWW-Authenticate"))

	// Credentials for every origin are refused outright.
	_, err = New(srv, WithAllowedOrigins("*"), WithCORS(CORS{AllowCredentials: true}))
	assert.Error(t, err)
	_, err = New(srv, WithCORS(CORS{MaxAge: -time.Second}))
	assert.Error(t, err)
	// Every origin without credentials: the grant names the origin, not *.
	h, err = New(srv, WithLogger(quiet), WithAllowedOrigins("*"), WithCORS(CORS{}))
	require.NoError(t, err)
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodOptions, "http://127.0.0.1/mcp", nil)
	req.Header.Set("Origin", "https://anywhere.example")
	req.Header.Set("Access-Control-Request-Method", "POST")
	h.ServeHTTP(rec, req)
	assert.Equal(t, http.StatusNoContent, rec.Code)
	assert.Equal(t, "https://anywhere.example", rec.Header().Get("Access-Control-Allow-Origin"))
}
