package streamablehttp

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mrtrkit/mrtrkit/internal/testkit"
	"github.com/mrtrkit/mrtrkit/mrtr"
	"github.com/mrtrkit/mrtrkit/mrtr/legacy"
)

const testMetadataURL = "https://mcp.example.com/.well-known/oauth-protected-resource"

// scopedFixture serves, in both eras, a "deploy" tool that requires the
// deploy scope and a "tenant" tool that answers the X-Tenant header it
// was passed. A bearer token "name.scope1.scope2" authenticates name with
// those scopes.
func scopedFixture(t *testing.T) *lgFixture {
	t.Helper()
	desc := testkit.Desc("scoped", "1.0.0")
	desc.LegacyVersions = []string{"2025-11-25"}
	srv := testkit.Server(t, desc, mrtr.WithCodec(testkit.Codec(t)))
	obj := []byte(`{"type":"object"}`)
	require.NoError(t, srv.AddTool(mrtr.Tool{Name: "deploy", InputSchema: obj}, mrtr.HandlerFunc(func(_ context.Context, req *mrtr.Request) (mrtr.Result, error) {
		return mrtr.TextResult("deployed by " + req.Principal), nil
	}), mrtr.RequireScopes("deploy")))
	require.NoError(t, srv.AddTool(mrtr.Tool{Name: "tenant", InputSchema: obj}, mrtr.HandlerFunc(func(_ context.Context, req *mrtr.Request) (mrtr.Result, error) {
		return mrtr.TextResult("tenant=" + req.Header("x-tenant") + " secret=" + req.Header("X-Secret")), nil
	})))
	eng, err := legacy.New(srv, legacy.WithKeyRing(testkit.Ring(t)), legacy.WithLogger(quiet))
	require.NoError(t, err)
	auth := BearerAuthenticator(func(_ context.Context, token string) (*mrtr.TokenInfo, error) {
		name, scopes, _ := strings.Cut(token, ".")
		info := &mrtr.TokenInfo{Subject: name}
		if scopes != "" {
			info.Scopes = strings.Split(scopes, ".")
		}
		return info, nil
	}, "")
	h, err := New(srv, WithLogger(quiet), WithLegacy(eng), WithAuthenticator(auth),
		WithResourceMetadata(testMetadataURL), WithForwardedHeaders("X-Tenant"))
	require.NoError(t, err)
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	return &lgFixture{url: ts.URL + defaultPath}
}

// A token without the scope a tool requires gets 403 with a challenge
// naming the scope and where to get a better token, in both eras; a
// token with it is served.
func TestRequiredScopeOnTheWire(t *testing.T) {
	f := scopedFixture(t)
	want := `Bearer error="insufficient_scope", scope="deploy", resource_metadata="` + testMetadataURL + `"`
	modern := func(token string) (*http.Response, []byte) {
		c := toolCall(1, "deploy", `{}`).withHeader("Authorization", "Bearer "+token)
		req, err := c.request(context.Background(), strings.TrimSuffix(f.url, defaultPath))
		require.NoError(t, err)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		return resp, readAll(t, resp)
	}
	resp, body := modern("ada.read")
	assert.Equal(t, http.StatusForbidden, resp.StatusCode, "%s", body)
	assert.Equal(t, want, resp.Header.Get("WWW-Authenticate"))
	m := decodeRPC(t, body)
	require.NotNil(t, m.Error)
	assert.Contains(t, m.Error.Message, "insufficient scope")
	resp, body = modern("ada.read.deploy")
	assert.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
	assert.Contains(t, string(body), "deployed by ada")
	assert.Empty(t, resp.Header.Get("WWW-Authenticate"))

	// The initialize era: the same refusal inside a session, where other
	// errors travel in-band with 200.
	c := f.client(t, "bob.read")
	c.initialize(`{}`, "2025-11-25")
	resp, body = c.post(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"deploy","arguments":{}}}`)
	assert.Equal(t, http.StatusForbidden, resp.StatusCode, "%s", body)
	assert.Equal(t, want, resp.Header.Get("WWW-Authenticate"))
	c = f.client(t, "bob.deploy")
	c.initialize(`{}`, "2025-11-25")
	resp, body = c.post(`{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"deploy","arguments":{}}}`)
	assert.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
	assert.Contains(t, string(body), "deployed by bob")
}

// Only the headers named by WithForwardedHeaders reach handlers, in both
// eras.
func TestForwardedHeadersOnTheWire(t *testing.T) {
	f := scopedFixture(t)
	c := toolCall(1, "tenant", `{}`).withHeader("Authorization", "Bearer ada").
		withHeader("x-tenant", "acme").withHeader("X-Secret", "hunter2")
	req, err := c.request(context.Background(), strings.TrimSuffix(f.url, defaultPath))
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body := readAll(t, resp)
	assert.Contains(t, string(body), "tenant=acme secret=", "%s", body)
	assert.NotContains(t, string(body), "hunter2", "a header not named is not passed")

	lc := f.client(t, "bob")
	lc.initialize(`{}`, "2025-11-25")
	_, body = lc.post(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"tenant","arguments":{}}}`, [2]string{"X-Tenant", "globex"})
	assert.Contains(t, string(body), "tenant=globex")
}

func readAll(t *testing.T, resp *http.Response) []byte {
	t.Helper()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return b
}
