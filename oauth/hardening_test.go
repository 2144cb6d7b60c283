package oauth_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mrtrkit/mrtrkit/internal/testkit"
	"github.com/mrtrkit/mrtrkit/mrtr"
	"github.com/mrtrkit/mrtrkit/oauth"
)

// endpoint serves an MCP endpoint on httptest whose bearer tokens v
// checks, with a tool "whoami" that answers the principal and a tool
// "admin" that requires the scope admin. It returns the function that
// posts a tools/call with a token and answers the status and body.
func endpoint(t *testing.T, cfg oauth.Config) (call func(tool, token string) (int, string), resource string) {
	t.Helper()
	mux := http.NewServeMux()
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close)
	resource = ts.URL + "/mcp"
	metaURL, err := oauth.MetadataURL(resource)
	require.NoError(t, err)
	if cfg.Audience == "" {
		cfg.Audience = resource
	}
	v, err := oauth.NewVerifier(cfg)
	require.NoError(t, err)

	srv := testkit.Server(t, testkit.Desc("files", "1.0.0"), mrtr.WithCodec(testkit.Codec(t)))
	whoami := mrtr.HandlerFunc(func(_ context.Context, req *mrtr.Request) (mrtr.Result, error) {
		return mrtr.TextResult("served " + req.Principal), nil
	})
	require.NoError(t, srv.AddTool(mrtr.Tool{Name: "whoami", InputSchema: json.RawMessage(`{"type":"object"}`)}, whoami))
	require.NoError(t, srv.AddTool(mrtr.Tool{Name: "admin", InputSchema: json.RawMessage(`{"type":"object"}`)}, whoami,
		mrtr.RequireScopes("admin")))
	mountProtected(t, mux, srv, v, metaURL)

	return func(tool, token string) (int, string) {
		t.Helper()
		resp, body := postTool(t, resource, tool, token)
		return resp.StatusCode, body
	}, resource
}

// redirector answers every request with status and a Location of to,
// counting the requests.
func redirector(t *testing.T, status int, to string) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var hits atomic.Int32
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		http.Redirect(w, r, to, status)
	}))
	t.Cleanup(s.Close)
	return s, &hits
}

// L1 of the security review: a JWKSURL that redirects elsewhere (here to
// an attacker's set on another port) is not followed, with the default
// client or the caller's own, for every redirect status; the keys there
// are never fetched, so the attacker's token is refused.
func TestJWKSRedirectIsNotFollowed(t *testing.T) {
	clk := newClock()
	mallory := newKey(t, "k1", jose.ES256)
	evil := newJWKSServer(t, mallory)
	for _, status := range []int{http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther,
		http.StatusTemporaryRedirect, http.StatusPermanentRedirect} {
		for _, client := range []string{"default", "caller's"} {
			t.Run(http.StatusText(status)+"/"+client, func(t *testing.T) {
				before := evil.fetches.Load()
				redir, hits := redirector(t, status, evil.URL+"/jwks")
				cfg := oauth.Config{Issuer: testIssuer, Audience: testResource, Now: clk.Now, JWKSURL: redir.URL + "/jwks"}
				var own *http.Client
				if client == "caller's" {
					own = &http.Client{Timeout: 5 * time.Second} // follows redirects by default
					cfg.HTTPClient = own
				}
				v, err := oauth.NewVerifier(cfg)
				require.NoError(t, err)
				info, err := v.Verify(context.Background(), sign(t, mallory, with(claimsAt(clk.Now()), "sub", "mallory")))
				require.Error(t, err)
				assert.Nil(t, info)
				assert.ErrorIs(t, err, oauth.ErrInvalidToken)
				assert.ErrorIs(t, err, oauth.ErrKeySetUnavailable)
				assert.Contains(t, err.Error(), "redirects are not followed")
				assert.EqualValues(t, 1, hits.Load(), "the configured URL was asked")
				assert.Equal(t, before, evil.fetches.Load(), "the redirect target was never fetched")
				if own != nil {
					assert.Nil(t, own.CheckRedirect, "the caller's client is left as it was")
				}
			})
		}
	}

	// Without the redirect the same set is fetched and trusted: the
	// refusal above is the redirect's.
	v, err := oauth.NewVerifier(oauth.Config{Issuer: testIssuer, Audience: testResource, Now: clk.Now, JWKSURL: evil.URL + "/jwks"})
	require.NoError(t, err)
	_, err = v.Verify(context.Background(), sign(t, mallory, claimsAt(clk.Now())))
	require.NoError(t, err)
}

// L1 on the wire: a bearer token whose keys sit behind a redirect is
// answered 401 by the transport, and the redirect target is never asked.
func TestJWKSRedirectRefusedOnTheWire(t *testing.T) {
	mallory := newKey(t, "k1", jose.ES256)
	evil := newJWKSServer(t, mallory)
	redir, hits := redirector(t, http.StatusFound, evil.URL+"/jwks")
	call, resource := endpoint(t, oauth.Config{Issuer: testIssuer, JWKSURL: redir.URL + "/jwks"})
	status, body := call("whoami", sign(t, mallory, with(claimsAt(time.Now()), "aud", resource, "sub", "mallory")))
	assert.Equal(t, http.StatusUnauthorized, status, body)
	assert.NotContains(t, body, "served")
	assert.EqualValues(t, 1, hits.Load())
	assert.Zero(t, evil.fetches.Load(), "the redirect target was never fetched")
}

// L2 of the security review: scopes follow RFC 6749 section 3.3. The
// scope string is split on U+0020 only, every token is 1*( %x21 /
// %x23-5B / %x5D-7E ), and each element of an scp array is one token;
// a claim that breaks the syntax makes the token invalid, so no scope
// named inside another (after a Unicode space, say) is ever granted.
func TestScopeSyntax(t *testing.T) {
	clk := newClock()
	k := newKey(t, "k1", jose.ES256)
	v := staticVerifier(t, clk, k)
	base := with(claimsAt(clk.Now()), "scope", nil)

	// What is granted: TestVerifyScopes. The review's reproductions, and
	// the other ways to hide a token:
	for _, c := range []struct {
		name   string
		claims map[string]any
	}{
		{"NBSP", with(base, "scope", "note:my-title\u00a0admin")},
		{"EM SPACE", with(base, "scope", "note:a\u2003admin")},
		{"NEL", with(base, "scope", "note:a\u0085admin")},
		{"tab", with(base, "scope", "note:a\tadmin")},
		{"newline", with(base, "scope", "note:a\nadmin")},
		{"two spaces", with(base, "scope", "note:a  admin")},
		{"leading space", with(base, "scope", " admin")},
		{"trailing space", with(base, "scope", "admin ")},
		{"double quote", with(base, "scope", `a"b admin`)},
		{"backslash", with(base, "scope", `a\b admin`)},
		{"DEL", with(base, "scope", "a\x7fb admin")},
		{"non-ASCII letter", with(base, "scope", "adm\u00efn admin")},
		{"scp element holding a space", with(base, "scp", []string{"note:my title admin"})},
		{"scp element holding NBSP", with(base, "scp", []string{"note:x\u00a0admin"})},
		{"scp empty element", with(base, "scp", []string{"", "admin"})},
		{"scp string with NBSP", with(base, "scp", "note:x\u00a0admin")},
	} {
		t.Run("refused/"+c.name, func(t *testing.T) {
			info, err := v.Verify(context.Background(), sign(t, k, c.claims))
			require.ErrorIs(t, err, oauth.ErrInvalidToken)
			assert.Nil(t, info)
			assert.Contains(t, err.Error(), "RFC 6749")
			assert.False(t, info.HasScope("admin"))
		})
	}
}

// L2 on the wire: a token whose scope hides "admin" behind a no-break
// space is answered 401, not served by the tool that requires admin.
func TestScopeSyntaxOnTheWire(t *testing.T) {
	key := newKey(t, "k1", jose.ES256)
	call, resource := endpoint(t, oauth.Config{Issuer: testIssuer, Keys: []oauth.Key{{ID: "k1", Public: key.public()}}})
	claims := with(claimsAt(time.Now()), "aud", resource)

	status, body := call("admin", sign(t, key, with(claims, "scope", "note:my-title\u00a0admin")))
	assert.Equal(t, http.StatusUnauthorized, status, body)
	assert.NotContains(t, body, "served")
	status, body = call("admin", sign(t, key, with(claims, "scope", nil, "scp", []string{"note:my title admin"})))
	assert.Equal(t, http.StatusUnauthorized, status, body)
	assert.NotContains(t, body, "served")

	status, body = call("admin", sign(t, key, with(claims, "scope", "note:my-title admin")))
	assert.Equal(t, http.StatusOK, status, body)
	assert.Contains(t, body, "served ada")
}

// signTyped signs claims with k under the typ header typ ("" for none).
func signTyped(t *testing.T, k signingKey, typ string, claims map[string]any) string {
	t.Helper()
	opts := &jose.SignerOptions{}
	if typ != "" {
		opts = opts.WithType(jose.ContentType(typ))
	}
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: k.alg, Key: jose.JSONWebKey{Key: k.priv, KeyID: k.kid}}, opts)
	require.NoError(t, err)
	tok, err := jwt.Signed(signer).Claims(claims).Serialize()
	require.NoError(t, err)
	return tok
}

// L3 of the security review: by default only RFC 9068 access tokens are
// accepted, typ at+jwt or application/at+jwt in any case; an ID token
// (typ JWT) or a JWT without typ, signed by the same issuer for the same
// audience, is refused. AllowAnyType turns the check off.
func TestTypeCheckedByDefault(t *testing.T) {
	clk := newClock()
	k := newKey(t, "k1", jose.ES256)
	claims := claimsAt(clk.Now())
	v := staticVerifier(t, clk, k)
	for _, typ := range []string{"at+jwt", "AT+JWT", "application/at+jwt", "Application/AT+JWT"} {
		_, err := v.Verify(context.Background(), signTyped(t, k, typ, claims))
		assert.NoError(t, err, typ)
	}
	for _, typ := range []string{"", "JWT", "jwt", "application/jwt", "id_token+jwt", "at+jwt2", "x-at+jwt", "application/jwt+at"} {
		_, err := v.Verify(context.Background(), signTyped(t, k, typ, claims))
		require.ErrorIs(t, err, oauth.ErrInvalidToken, typ)
		assert.Contains(t, err.Error(), "token type", typ)
	}

	anyType, err := oauth.NewVerifier(oauth.Config{Issuer: testIssuer, Audience: testResource, Now: clk.Now,
		Keys: []oauth.Key{{ID: "k1", Public: k.public()}}, AllowAnyType: true})
	require.NoError(t, err)
	for _, typ := range []string{"", "JWT", "at+jwt"} {
		_, err := anyType.Verify(context.Background(), signTyped(t, k, typ, claims))
		assert.NoError(t, err, typ)
	}

	_, err = oauth.NewVerifier(oauth.Config{Issuer: testIssuer, Audience: testResource,
		Keys: []oauth.Key{{ID: "k1", Public: k.public()}}, AllowAnyType: true, Types: []string{"JWT"}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "AllowAnyType")
}

// L3 on the wire: an ID-token-shaped JWT (typ JWT) is answered 401 by the
// transport's bearer authentication; the access token is served.
func TestTypeCheckedOnTheWire(t *testing.T) {
	key := newKey(t, "k1", jose.ES256)
	call, resource := endpoint(t, oauth.Config{Issuer: testIssuer, Keys: []oauth.Key{{ID: "k1", Public: key.public()}}})
	claims := with(claimsAt(time.Now()), "aud", resource)
	for _, typ := range []string{"JWT", ""} {
		status, body := call("whoami", signTyped(t, key, typ, claims))
		assert.Equal(t, http.StatusUnauthorized, status, "typ %q: %s", typ, body)
		assert.NotContains(t, body, "served")
	}
	status, body := call("whoami", signTyped(t, key, "at+jwt", claims))
	assert.Equal(t, http.StatusOK, status, body)
	assert.Contains(t, body, "served ada")
}
