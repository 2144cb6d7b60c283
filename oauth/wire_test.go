package oauth_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mrtrkit/mrtrkit/internal/testkit"
	"github.com/mrtrkit/mrtrkit/mrtr"
	"github.com/mrtrkit/mrtrkit/oauth"
)

// The whole kit over the wire: an MCP endpoint and its metadata document
// on one mux, tokens checked against a JWK set served over HTTP, and a
// tool that requires a scope.
func TestEndToEnd(t *testing.T) {
	key := newKey(t, "k1", jose.ES256)
	jwks := newJWKSServer(t, key)

	mux := http.NewServeMux()
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close)
	resource := ts.URL + "/mcp"
	metaURL, err := oauth.MetadataURL(resource)
	require.NoError(t, err)
	metaPath, err := oauth.MetadataPath(resource)
	require.NoError(t, err)

	v, err := oauth.NewVerifier(oauth.Config{
		Issuer: testIssuer, Audience: resource,
		JWKSURL: jwks.URL + "/jwks", HTTPClient: jwks.Client(),
	})
	require.NoError(t, err)

	srv := testkit.Server(t, testkit.Desc("files", "1.0.0"), mrtr.WithCodec(testkit.Codec(t)))
	require.NoError(t, srv.AddTool(mrtr.Tool{Name: "read", InputSchema: json.RawMessage(`{"type":"object"}`)},
		mrtr.HandlerFunc(func(_ context.Context, req *mrtr.Request) (mrtr.Result, error) {
			return mrtr.TextResult("read by " + req.Principal), nil
		}), mrtr.RequireScopes("files:read")))
	mountProtected(t, mux, srv, v, metaURL)
	mux.Handle(metaPath, oauth.MetadataHandler(oauth.Metadata{
		Resource:             resource,
		AuthorizationServers: []string{testIssuer},
		ScopesSupported:      []string{"files:read"},
	}))

	call := func(token string) (*http.Response, string) {
		t.Helper()
		return postTool(t, resource, "read", token)
	}
	now := time.Now()
	claims := with(claimsAt(now), "aud", resource, "scope", nil)
	challenge := `Bearer resource_metadata="` + metaURL + `"`

	// No token: 401 pointing to the metadata.
	resp, body := call("")
	assert.Equal(t, http.StatusUnauthorized, resp.StatusCode, body)
	assert.Equal(t, challenge, resp.Header.Get("WWW-Authenticate"))

	// A token issued for another resource: 401.
	resp, body = call(sign(t, key, with(claims, "aud", "https://other.example.com/mcp", "scope", "files:read")))
	assert.Equal(t, http.StatusUnauthorized, resp.StatusCode, body)
	assert.Equal(t, challenge, resp.Header.Get("WWW-Authenticate"))

	// An expired one: 401.
	resp, body = call(sign(t, key, with(claims, "exp", now.Add(-time.Hour).Unix(), "scope", "files:read")))
	assert.Equal(t, http.StatusUnauthorized, resp.StatusCode, body)

	// A valid token without the scope: 403 insufficient_scope.
	resp, body = call(sign(t, key, with(claims, "scope", "files:write")))
	assert.Equal(t, http.StatusForbidden, resp.StatusCode, body)
	assert.Equal(t, `Bearer error="insufficient_scope", scope="files:read", resource_metadata="`+metaURL+`"`,
		resp.Header.Get("WWW-Authenticate"))

	// With the scope: served.
	resp, body = call(sign(t, key, with(claims, "scope", "files:read")))
	assert.Equal(t, http.StatusOK, resp.StatusCode, body)
	assert.Contains(t, body, "read by ada")
	assert.Empty(t, resp.Header.Get("WWW-Authenticate"))
	assert.EqualValues(t, 1, jwks.fetches.Load(), "the JWK set was fetched once")

	// The metadata document, from the well-known path on the same mux.
	mresp, err := http.Get(metaURL)
	require.NoError(t, err)
	defer mresp.Body.Close()
	assert.Equal(t, http.StatusOK, mresp.StatusCode)
	var doc oauth.Metadata
	require.NoError(t, json.NewDecoder(mresp.Body).Decode(&doc))
	assert.Equal(t, resource, doc.Resource)
	assert.Equal(t, []string{testIssuer}, doc.AuthorizationServers)
	assert.Equal(t, []string{"header"}, doc.BearerMethodsSupported)
	assert.Equal(t, "/.well-known/oauth-protected-resource/mcp", strings.TrimPrefix(metaURL, ts.URL))
}
