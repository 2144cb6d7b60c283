package oauth_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mrtrkit/mrtrkit/oauth"
)

func TestMetadataURL(t *testing.T) {
	for _, c := range []struct{ resource, url, path string }{
		{"https://mcp.example.com", "https://mcp.example.com/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource"},
		{"https://mcp.example.com/", "https://mcp.example.com/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource"},
		{"https://mcp.example.com/mcp", "https://mcp.example.com/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource/mcp"},
		{"https://mcp.example.com:8443/tenant/a/mcp", "https://mcp.example.com:8443/.well-known/oauth-protected-resource/tenant/a/mcp", "/.well-known/oauth-protected-resource/tenant/a/mcp"},
		{"https://mcp.example.com/mcp?x=1", "https://mcp.example.com/.well-known/oauth-protected-resource/mcp?x=1", "/.well-known/oauth-protected-resource/mcp"},
		{"https://mcp.example.com/a%2Fb", "https://mcp.example.com/.well-known/oauth-protected-resource/a%2Fb", "/.well-known/oauth-protected-resource/a%2Fb"},
		{"http://127.0.0.1:8080/mcp", "http://127.0.0.1:8080/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource/mcp"},
		{"http://localhost/mcp", "http://localhost/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource/mcp"},
	} {
		got, err := oauth.MetadataURL(c.resource)
		require.NoError(t, err, c.resource)
		assert.Equal(t, c.url, got, c.resource)
		p, err := oauth.MetadataPath(c.resource)
		require.NoError(t, err, c.resource)
		assert.Equal(t, c.path, p, c.resource)
	}
	for _, bad := range []string{"", "mcp.example.com/mcp", "/mcp", "http://mcp.example.com/mcp", "https://mcp.example.com/mcp#frag",
		"https://user@mcp.example.com/mcp", "ftp://mcp.example.com", "https:///mcp"} {
		_, err := oauth.MetadataURL(bad)
		assert.Error(t, err, bad)
		_, err = oauth.MetadataPath(bad)
		assert.Error(t, err, bad)
	}
}

func TestChallenge(t *testing.T) {
	u := "https://mcp.example.com/.well-known/oauth-protected-resource/mcp"
	assert.Equal(t, `Bearer resource_metadata="`+u+`"`, oauth.Challenge(u))
	assert.Equal(t, `Bearer resource_metadata="`+u+`", scope="files:read files:write"`, oauth.Challenge(u, "files:read", "files:write"))
	assert.Equal(t, `Bearer scope="a"`, oauth.Challenge("", "a"))
	assert.Equal(t, `Bearer`, oauth.Challenge(""))
	assert.Equal(t, `Bearer resource_metadata="a\"b\\c"`, oauth.Challenge("a\"b\\c\r\n"), "quoted-string escaping, no line breaks")
}

func TestMetadataValidate(t *testing.T) {
	ok := oauth.Metadata{Resource: testResource, AuthorizationServers: []string{testIssuer}}
	require.NoError(t, ok.Validate())
	for name, m := range map[string]oauth.Metadata{
		"no resource":            {AuthorizationServers: []string{testIssuer}},
		"http resource":          {Resource: "http://mcp.example.com/mcp", AuthorizationServers: []string{testIssuer}},
		"no server":              {Resource: testResource},
		"bad server":             {Resource: testResource, AuthorizationServers: []string{"auth.example.com"}},
		"resource with fragment": {Resource: testResource + "#x", AuthorizationServers: []string{testIssuer}},
	} {
		assert.Error(t, m.Validate(), name)
	}
}

// The document is served at its well-known path over HTTP, with the JSON
// names of RFC 9728, to GET and HEAD only.
func TestMetadataHandler(t *testing.T) {
	m := oauth.Metadata{
		Resource:              testResource,
		AuthorizationServers:  []string{testIssuer},
		ScopesSupported:       []string{"files:read", "files:write"},
		ResourceName:          "Files",
		ResourceDocumentation: "https://mcp.example.com/docs",
	}
	path, err := oauth.MetadataPath(m.Resource)
	require.NoError(t, err)
	mux := http.NewServeMux()
	mux.Handle(path, oauth.MetadataHandler(m))
	ts := httptest.NewServer(mux)
	defer ts.Close()

	resp, err := http.Get(ts.URL + path)
	require.NoError(t, err)
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "application/json", resp.Header.Get("Content-Type"))
	assert.Equal(t, "public, max-age=3600", resp.Header.Get("Cache-Control"))
	assert.Equal(t, "*", resp.Header.Get("Access-Control-Allow-Origin"))
	var doc map[string]any
	require.NoError(t, json.Unmarshal(body, &doc))
	assert.Equal(t, map[string]any{
		"resource":                 testResource,
		"authorization_servers":    []any{testIssuer},
		"scopes_supported":         []any{"files:read", "files:write"},
		"bearer_methods_supported": []any{"header"},
		"resource_name":            "Files",
		"resource_documentation":   "https://mcp.example.com/docs",
	}, doc)

	req, _ := http.NewRequest(http.MethodHead, ts.URL+path, nil)
	resp, err = http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.EqualValues(t, len(body), resp.ContentLength)

	for _, method := range []string{http.MethodPost, http.MethodPut, http.MethodDelete} {
		req, _ := http.NewRequest(method, ts.URL+path, strings.NewReader("{}"))
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		assert.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode, method)
		assert.Equal(t, "GET, HEAD, OPTIONS", resp.Header.Get("Allow"))
	}

	// A browser's CORS preflight for a request carrying the MCP version
	// header.
	req, _ = http.NewRequest(http.MethodOptions, ts.URL+path, nil)
	req.Header.Set("Origin", "https://app.example.org")
	req.Header.Set("Access-Control-Request-Method", "GET")
	req.Header.Set("Access-Control-Request-Headers", "mcp-protocol-version")
	resp, err = http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusNoContent, resp.StatusCode)
	assert.Equal(t, "*", resp.Header.Get("Access-Control-Allow-Origin"))
	assert.Equal(t, "mcp-protocol-version", resp.Header.Get("Access-Control-Allow-Headers"))
}
