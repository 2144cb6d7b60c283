package client_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mrtrkit/mrtrkit/client"
)

// grantFake is an MCP resource server, its authorization server and an
// identity provider on loopback, for the grants without a browser. The
// token endpoint is the test's; the resource server accepts the tokens
// the test issued with issue.
type grantFake struct {
	mu        sync.Mutex
	rs, as    *httptest.Server
	idp       *httptest.Server
	meta      map[string]any // extra AS metadata
	challenge string         // extra Bearer challenge parameters
	token     func(w http.ResponseWriter, r *http.Request, form url.Values)
	exchange  func(w http.ResponseWriter, r *http.Request, form url.Values)
	issued    map[string]bool
	forms     []url.Values  // token requests
	headers   []http.Header // of the token requests
	rsAuth    []string      // Authorization of the MCP requests
}

func newGrantFake(t *testing.T) *grantFake {
	f := &grantFake{issued: map[string]bool{}, meta: map[string]any{}}
	f.as = httptest.NewServer(http.HandlerFunc(f.serveAS))
	t.Cleanup(f.as.Close)
	f.rs = httptest.NewServer(http.HandlerFunc(f.serveRS))
	t.Cleanup(f.rs.Close)
	f.idp = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		f.mu.Lock()
		defer f.mu.Unlock()
		f.exchange(w, r, r.PostForm)
	}))
	t.Cleanup(f.idp.Close)
	return f
}

func (f *grantFake) rsURL() string { return f.rs.URL + "/mcp" }

// issue answers a token request with a new bearer token.
func (f *grantFake) issue(w http.ResponseWriter, extra map[string]any) {
	tok := fmt.Sprintf("tok-%d", len(f.issued)+1)
	f.issued[tok] = true
	body := map[string]any{"access_token": tok, "token_type": "Bearer", "expires_in": 3600}
	for k, v := range extra {
		body[k] = v
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(body)
}

func (f *grantFake) serveAS(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/.well-known/oauth-authorization-server":
		// No authorization endpoint and no PKCE: a server for grants
		// without a user.
		m := map[string]any{"issuer": f.as.URL, "token_endpoint": f.as.URL + "/token", "grant_types_supported": []string{"client_credentials"}}
		f.mu.Lock()
		for k, v := range f.meta {
			m[k] = v
		}
		f.mu.Unlock()
		_ = json.NewEncoder(w).Encode(m)
	case "/token":
		_ = r.ParseForm()
		f.mu.Lock()
		defer f.mu.Unlock()
		f.forms = append(f.forms, r.PostForm)
		f.headers = append(f.headers, r.Header.Clone())
		f.token(w, r, r.PostForm)
	default:
		http.NotFound(w, r)
	}
}

func (f *grantFake) serveRS(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/.well-known/oauth-protected-resource/mcp" {
		_ = json.NewEncoder(w).Encode(map[string]any{"resource": f.rsURL(), "authorization_servers": []string{f.as.URL}, "scopes_supported": []string{"mcp:a", "mcp:b"}})
		return
	}
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	_ = json.NewDecoder(r.Body).Decode(&m)
	f.mu.Lock()
	f.rsAuth = append(f.rsAuth, r.Header.Get("Authorization"))
	ok := f.issued[strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")]
	f.mu.Unlock()
	if !ok {
		w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer error="invalid_token", resource_metadata="%s/.well-known/oauth-protected-resource/mcp"%s`, f.rs.URL, f.challenge))
		w.WriteHeader(401)
		return
	}
	if m.Method == "server/discover" {
		writeJSON(w, 200, m.ID, discoverResult)
		return
	}
	writeJSON(w, 200, m.ID, `"result":{"resultType":"complete","tools":[],"content":[]}`)
}

func (f *grantFake) connect(t *testing.T, a client.Authorizer) error {
	c, err := client.Connect(ctxT(t), client.HTTP(f.rsURL(), client.WithAuthorizer(a)))
	if err != nil {
		return err
	}
	defer c.Close()
	_, err = c.ListTools(ctxT(t))
	return err
}

// The client credentials grant with client_secret_basic: the id and
// secret form-urlencoded before base64 (RFC 6749 §2.3.1), nothing secret
// in the body, the resource indicator and the challenge's scope; the
// server needs no PKCE for it.
func TestClientCredentialsBasicOnTheWire(t *testing.T) {
	f := newGrantFake(t)
	f.challenge = `, scope="mcp:a"`
	f.token = func(w http.ResponseWriter, r *http.Request, form url.Values) { f.issue(w, nil) }
	g := client.NewClientCredentials(client.GrantConfig{ClientID: "my client", ClientSecret: "s:e&c"})
	require.NoError(t, f.connect(t, g))

	require.Len(t, f.forms, 1)
	form, h := f.forms[0], f.headers[0]
	assert.Equal(t, "client_credentials", form.Get("grant_type"))
	assert.Equal(t, f.rsURL(), form.Get("resource"))
	assert.Equal(t, "mcp:a", form.Get("scope"))
	assert.Empty(t, form.Get("client_secret"))
	req := &http.Request{Header: h}
	id, secret, ok := req.BasicAuth()
	require.True(t, ok, "client_secret_basic")
	assert.Equal(t, "my+client", id, "form-urlencoded before base64")
	assert.Equal(t, "s%3Ae%26c", secret)
	assert.Contains(t, f.rsAuth, "Bearer tok-1")
}

// client_secret_post when the server lists only that.
func TestClientCredentialsSecretPost(t *testing.T) {
	f := newGrantFake(t)
	f.meta["token_endpoint_auth_methods_supported"] = []string{"client_secret_post"}
	f.token = func(w http.ResponseWriter, r *http.Request, form url.Values) { f.issue(w, nil) }
	require.NoError(t, f.connect(t, client.NewClientCredentials(client.GrantConfig{ClientID: "cid", ClientSecret: "sec"})))
	require.Len(t, f.forms, 1)
	assert.Equal(t, "cid", f.forms[0].Get("client_id"))
	assert.Equal(t, "sec", f.forms[0].Get("client_secret"))
	assert.Empty(t, f.headers[0].Get("Authorization"))
	assert.Equal(t, "mcp:a mcp:b", f.forms[0].Get("scope"), "no challenge scope: the resource's scopes_supported")
}

// verifyAssertion checks a private_key_jwt assertion the way an
// authorization server does, and returns its claims.
func verifyAssertion(t *testing.T, raw string, key *ecdsa.PublicKey, aud string) jwt.Claims {
	t.Helper()
	tok, err := jwt.ParseSigned(raw, []jose.SignatureAlgorithm{jose.ES256})
	require.NoError(t, err)
	var c jwt.Claims
	require.NoError(t, tok.Claims(key, &c), "signed with the client's key")
	require.NoError(t, c.ValidateWithLeeway(jwt.Expected{Issuer: "cc-client", Subject: "cc-client", AnyAudience: jwt.Audience{aud}, Time: time.Now()}, 0))
	require.NotNil(t, c.Expiry)
	require.NotNil(t, c.IssuedAt)
	assert.LessOrEqual(t, c.Expiry.Time().Sub(c.IssuedAt.Time()), 5*time.Minute, "a short-lived assertion")
	assert.Equal(t, "kid-1", tok.Headers[0].KeyID)
	return c
}

// private_key_jwt (RFC 7523 §2.2): a signed assertion with iss and sub
// the client_id, aud the issuer, and a jti that is new for every request;
// an expiring token is renewed with the same grant.
func TestClientCredentialsPrivateKeyJWT(t *testing.T) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	f := newGrantFake(t)
	f.token = func(w http.ResponseWriter, r *http.Request, form url.Values) {
		f.issue(w, map[string]any{"expires_in": 5})
	}
	g := client.NewClientCredentials(client.GrantConfig{ClientID: "cc-client", ClientKey: &client.ClientKey{Key: key, KeyID: "kid-1"}})
	require.NoError(t, f.connect(t, g))
	require.GreaterOrEqual(t, len(f.forms), 2, "the 5 s token is renewed before the next request")
	jtis := map[string]bool{}
	for _, form := range f.forms {
		assert.Equal(t, "urn:ietf:params:oauth:client-assertion-type:jwt-bearer", form.Get("client_assertion_type"))
		c := verifyAssertion(t, form.Get("client_assertion"), &key.PublicKey, f.as.URL)
		assert.NotEmpty(t, c.ID)
		assert.False(t, jtis[c.ID], "a new jti per assertion")
		jtis[c.ID] = true
	}
	assert.Empty(t, f.headers[0].Get("Authorization"), "no secret")
}

// Enterprise-managed authorization: the user's ID token is exchanged at
// the identity provider for an ID-JAG (RFC 8693, audience the
// authorization server, resource the MCP server), which the JWT-bearer
// grant presents with the client's authentication.
func TestJWTBearerWithIDJAG(t *testing.T) {
	f := newGrantFake(t)
	var exch []url.Values
	f.exchange = func(w http.ResponseWriter, r *http.Request, form url.Values) {
		exch = append(exch, form)
		_ = json.NewEncoder(w).Encode(map[string]any{"access_token": "the-id-jag", "issued_token_type": client.TokenTypeIDJAG, "token_type": "N_A"})
	}
	f.token = func(w http.ResponseWriter, r *http.Request, form url.Values) {
		if form.Get("assertion") != "the-id-jag" {
			w.WriteHeader(400)
			_, _ = w.Write([]byte(`{"error":"invalid_grant"}`))
			return
		}
		f.issue(w, nil)
	}
	a := client.IDJAG(client.IDJAGConfig{
		TokenURL: f.idp.URL + "/token", ClientID: "idp-client",
		IDToken: func(context.Context) (string, error) { return "the-id-token", nil },
	})
	g := client.NewJWTBearer(a, client.GrantConfig{ClientID: "xaa", ClientSecret: "xaa-secret"})
	require.NoError(t, f.connect(t, g))

	require.Len(t, exch, 1)
	e := exch[0]
	assert.Equal(t, "urn:ietf:params:oauth:grant-type:token-exchange", e.Get("grant_type"))
	assert.Equal(t, "urn:ietf:params:oauth:token-type:id-jag", e.Get("requested_token_type"))
	assert.Equal(t, "the-id-token", e.Get("subject_token"))
	assert.Equal(t, "urn:ietf:params:oauth:token-type:id_token", e.Get("subject_token_type"))
	assert.Equal(t, f.as.URL, e.Get("audience"), "the authorization server's issuer")
	assert.Equal(t, f.rsURL(), e.Get("resource"))
	assert.Equal(t, "idp-client", e.Get("client_id"))

	require.Len(t, f.forms, 1)
	assert.Equal(t, "urn:ietf:params:oauth:grant-type:jwt-bearer", f.forms[0].Get("grant_type"))
	assert.Equal(t, f.rsURL(), f.forms[0].Get("resource"))
	id, secret, ok := (&http.Request{Header: f.headers[0]}).BasicAuth()
	require.True(t, ok)
	assert.Equal(t, "xaa", id)
	assert.Equal(t, "xaa-secret", secret)
}

// An identity provider that issues something other than an ID-JAG is
// refused before the authorization server sees it.
func TestIDJAGRefusesAnotherTokenType(t *testing.T) {
	f := newGrantFake(t)
	f.exchange = func(w http.ResponseWriter, r *http.Request, form url.Values) {
		_ = json.NewEncoder(w).Encode(map[string]any{"access_token": "x", "issued_token_type": "urn:ietf:params:oauth:token-type:access_token"})
	}
	f.token = func(w http.ResponseWriter, r *http.Request, form url.Values) { f.issue(w, nil) }
	a := client.IDJAG(client.IDJAGConfig{TokenURL: f.idp.URL, IDToken: func(context.Context) (string, error) { return "t", nil }})
	err := f.connect(t, client.NewJWTBearer(a, client.GrantConfig{ClientID: "c"}))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "not an ID-JAG")
	assert.Empty(t, f.forms)
}

// A workload's JWT-bearer grant that fails is reported with the server's
// error code and never retried.
func TestJWTBearerErrorIsReportedNotRetried(t *testing.T) {
	f := newGrantFake(t)
	f.token = func(w http.ResponseWriter, r *http.Request, form url.Values) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(400)
		_, _ = w.Write([]byte(`{"error":"invalid_grant","error_description":"expired"}`))
	}
	workload := func(_ context.Context, r client.AssertionRequest) (string, error) {
		return "workload-jwt-for-" + r.Issuer, nil
	}
	err := f.connect(t, client.NewJWTBearer(workload, client.GrantConfig{ClientID: "wl"}))
	var te *client.TokenError
	require.True(t, errors.As(err, &te), "%v", err)
	assert.Equal(t, "invalid_grant", te.Code)
	assert.Equal(t, "expired", te.Description)
	require.Len(t, f.forms, 1, "no retry, no other grant")
	assert.Equal(t, "workload-jwt-for-"+f.as.URL, f.forms[0].Get("assertion"))
	assert.Equal(t, "wl", f.forms[0].Get("client_id"), "a public client sends its client_id")
}

// Token endpoints over plain http off loopback are refused before any
// credential is sent.
func TestGrantRefusesPlainHTTPEndpoints(t *testing.T) {
	a := client.IDJAG(client.IDJAGConfig{TokenURL: "http://idp.example.com/token", IDToken: func(context.Context) (string, error) { return "t", nil }})
	_, err := a(ctxT(t), client.AssertionRequest{Issuer: "https://as.example.com"})
	require.ErrorIs(t, err, client.ErrInsecureToken)

	f := newGrantFake(t)
	f.meta["token_endpoint"] = "http://as.example.com/token"
	f.token = func(w http.ResponseWriter, r *http.Request, form url.Values) { f.issue(w, nil) }
	err = f.connect(t, client.NewClientCredentials(client.GrantConfig{ClientID: "c", ClientSecret: "s"}))
	require.ErrorIs(t, err, client.ErrInsecureToken)
	assert.Empty(t, f.forms)
}
