package streamablehttp

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mrtrkit/mrtrkit/mrtr"
	"github.com/mrtrkit/mrtrkit/oauth"
)

// get sends a GET for path with the given Host (the server's address when
// empty) and returns the response with its whole body.
func get(t *testing.T, base, path, host string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, base+path, nil)
	require.NoError(t, err)
	if host != "" {
		req.Host = host
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp, body
}

// The path WithPath takes is literal: braces are braces, not a template,
// so "/t/{tenant}/mcp" is served at exactly that path and "/t/acme/mcp"
// is not the endpoint.
func TestPathIsLiteral(t *testing.T) {
	f := newFixture(t, WithPath("/t/{tenant}/mcp"))
	c := toolCall(1, "echo", `{"text":"p"}`)

	c.path = "/t/{tenant}/mcp"
	resp, body := f.do(t, c)
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
	assert.NotNil(t, decodeRPC(t, body).Result)

	for _, p := range []string{"/t/acme/mcp", "/t/%7Bacme%7D/mcp", "/t/{tenant}/mcp/", "/t/{tenant}"} {
		c.path = p
		resp, body = f.do(t, c)
		assert.Equal(t, http.StatusNotFound, resp.StatusCode, "%s: %s", p, body)
		m := decodeRPC(t, body)
		require.NotNil(t, m.Error, p)
		assert.Equal(t, "Not found: no MCP endpoint at this path", m.Error.Message, p)
	}
}

// One Handler serves the endpoint, the protected resource metadata and
// the probes, each at its own path: the documents and the probes without
// the endpoint's Host check, the endpoint with every check as before, and
// every other path 404 with a JSON-RPC body.
func TestOneHandlerServesEverything(t *testing.T) {
	const resource = "http://127.0.0.1/mcp"
	metaPath, err := oauth.MetadataPath(resource)
	require.NoError(t, err)
	srv := newTestServer(t, &fixture{})
	ready := Readiness(srv)
	h, err := New(srv, WithLogger(quiet),
		WithResourceMetadataHandler(metaPath, oauth.MetadataHandler(oauth.Metadata{
			Resource:             resource,
			AuthorizationServers: []string{"https://auth.example.com"},
		})),
		WithLiveness("/livez"),
		WithReadiness("/readyz", ready))
	require.NoError(t, err)
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)

	// The metadata document, whatever the Host: a public document.
	resp, body := get(t, ts.URL, metaPath, "mcp.example.com")
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
	assert.Equal(t, "public, max-age=3600", resp.Header.Get("Cache-Control"))
	assert.JSONEq(t, `{"resource":"http://127.0.0.1/mcp","authorization_servers":["https://auth.example.com"],"bearer_methods_supported":["header"]}`, string(body))

	// The probes, whatever the Host (an orchestrator probes an address).
	resp, body = get(t, ts.URL, "/livez", "10.0.0.7:8080")
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.JSONEq(t, `{"status":"ok"}`, string(body))
	resp, body = get(t, ts.URL, "/readyz", "10.0.0.7:8080")
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.JSONEq(t, `{"status":"ready"}`, string(body))
	ready.Drain()
	resp, body = get(t, ts.URL, "/readyz", "")
	assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
	assert.JSONEq(t, `{"status":"unavailable","reason":"draining"}`, string(body))

	// The endpoint: a call, the Host check first, then the method.
	f := &fixture{url: ts.URL}
	resp, body = f.do(t, toolCall(1, "echo", `{"text":"x"}`))
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
	resp, _ = get(t, ts.URL, "/mcp", "evil.example.com")
	assert.Equal(t, http.StatusForbidden, resp.StatusCode)
	c := toolCall(2, "echo", `{"text":"x"}`)
	c.method = http.MethodPut
	resp, body = f.do(t, c)
	assert.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode)
	assert.Equal(t, "POST", resp.Header.Get("Allow"))
	assert.Equal(t, int(mrtr.CodeInvalidRequest), decodeRPC(t, body).Error.Code)

	// Anything else, including a path that only cleans to a served one.
	for _, p := range []string{"/", "/livez/", "//livez", "/readyz/x", metaPath + "/", "/.well-known/oauth-protected-resource"} {
		resp, body = get(t, ts.URL, p, "")
		assert.Equal(t, http.StatusNotFound, resp.StatusCode, p)
		m := decodeRPC(t, body)
		require.NotNil(t, m.Error, p)
		assert.Equal(t, "Not found: no MCP endpoint at this path", m.Error.Message, p)
	}
}

// A path served beside the endpoint must be a path, have a handler and be
// served once.
func TestNewRejectsBadRoutes(t *testing.T) {
	srv := newTestServer(t, &fixture{})
	ok := http.NotFoundHandler()
	tests := []struct {
		name string
		opts []Option
	}{
		{"relative metadata path", []Option{WithResourceMetadataHandler(".well-known/x", ok)}},
		{"nil metadata handler", []Option{WithResourceMetadataHandler("/.well-known/x", nil)}},
		{"nil readiness probe", []Option{WithReadiness("/readyz", nil)}},
		{"empty liveness path", []Option{WithLiveness("")}},
		{"the endpoint's path", []Option{WithLiveness("/mcp")}},
		{"the endpoint's moved path", []Option{WithPath("/rpc"), WithReadiness("/rpc", Readiness(srv))}},
		{"a path twice", []Option{WithLiveness("/health"), WithReadiness("/health", Readiness(srv))}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(srv, tt.opts...)
			assert.Error(t, err)
		})
	}
}
