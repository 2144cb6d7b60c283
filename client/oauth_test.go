package client_test

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mrtrkit/mrtrkit/client"
)

// fakeAuth is an MCP resource server with its authorization server,
// both on loopback, recording the flow.
type fakeAuth struct {
	mu          sync.Mutex
	rs, as      *httptest.Server
	issuer      string // what the metadata claims (default: the AS URL)
	resource    string // what the PRM claims (default: rs URL + /mcp)
	iss         string // iss of the redirect ("-" for none; default the issuer)
	needScope   map[string]string
	authorizeQ  []url.Values
	tokenForms  []url.Values
	registered  []map[string]any
	challenge   string
	tokenScopes map[string]string // token → scope
	expiresIn   int               // of issued tokens (default 3600)
	n           int
}

func newFakeAuth(t *testing.T, setup func(*fakeAuth)) *fakeAuth {
	f := &fakeAuth{tokenScopes: map[string]string{}, needScope: map[string]string{}}
	f.as = httptest.NewServer(http.HandlerFunc(f.serveAS))
	t.Cleanup(f.as.Close)
	f.rs = httptest.NewServer(http.HandlerFunc(f.serveRS))
	t.Cleanup(f.rs.Close)
	if setup != nil {
		setup(f)
	}
	return f
}

func (f *fakeAuth) rsURL() string { return f.rs.URL + "/mcp" }

func (f *fakeAuth) serveRS(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if r.URL.Path == "/.well-known/oauth-protected-resource/mcp" {
		res := f.resource
		if res == "" {
			res = f.rsURL()
		}
		json.NewEncoder(w).Encode(map[string]any{"resource": res, "authorization_servers": []string{f.as.URL}})
		return
	}
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	_ = json.NewDecoder(r.Body).Decode(&m)
	tok := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
	granted, ok := f.tokenScopes[tok]
	if !ok {
		w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer error="invalid_token", error_description="no, token", resource_metadata="%s/.well-known/oauth-protected-resource/mcp"%s`, f.rs.URL, f.challenge))
		w.WriteHeader(401)
		return
	}
	if need := f.needScope[m.Method]; need != "" && !strings.Contains(" "+granted+" ", " "+need+" ") {
		w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer error="insufficient_scope", scope="%s"`, need))
		w.WriteHeader(403)
		return
	}
	switch m.Method {
	case "server/discover":
		writeJSON(w, 200, m.ID, discoverResult)
	default:
		writeJSON(w, 200, m.ID, `"result":{"resultType":"complete","tools":[],"content":[]}`)
	}
}

func (f *fakeAuth) serveAS(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	issuer := f.issuer
	if issuer == "" {
		issuer = f.as.URL
	}
	switch r.URL.Path {
	case "/.well-known/oauth-authorization-server":
		json.NewEncoder(w).Encode(map[string]any{
			"issuer": issuer, "authorization_endpoint": f.as.URL + "/authorize", "token_endpoint": f.as.URL + "/token",
			"registration_endpoint": f.as.URL + "/register", "code_challenge_methods_supported": []string{"S256"},
			"authorization_response_iss_parameter_supported": true, "token_endpoint_auth_methods_supported": []string{"client_secret_post"},
		})
	case "/register":
		var m map[string]any
		_ = json.NewDecoder(r.Body).Decode(&m)
		f.registered = append(f.registered, m)
		w.WriteHeader(201)
		json.NewEncoder(w).Encode(map[string]any{"client_id": "cid", "client_secret": "sec", "token_endpoint_auth_method": "client_secret_post"})
	case "/authorize":
		q := r.URL.Query()
		f.authorizeQ = append(f.authorizeQ, q)
		back, _ := url.Parse(q.Get("redirect_uri"))
		bq := url.Values{"code": {"code-" + q.Get("scope")}, "state": {q.Get("state")}}
		switch f.iss {
		case "":
			bq.Set("iss", issuer)
		case "-":
		default:
			bq.Set("iss", f.iss)
		}
		back.RawQuery = bq.Encode()
		http.Redirect(w, r, back.String(), http.StatusFound)
	case "/token":
		_ = r.ParseForm()
		f.tokenForms = append(f.tokenForms, r.PostForm)
		f.n++
		tok := fmt.Sprintf("tok-%d", f.n)
		scope := strings.TrimPrefix(r.PostForm.Get("code"), "code-")
		if r.PostForm.Get("grant_type") == "refresh_token" {
			scope = strings.TrimPrefix(r.PostForm.Get("refresh_token"), "refresh-")
		}
		f.tokenScopes[tok] = scope
		exp := f.expiresIn
		if exp == 0 {
			exp = 3600
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"access_token": tok, "token_type": "Bearer", "expires_in": exp, "scope": scope, "refresh_token": "refresh-" + scope})
	default:
		http.NotFound(w, r)
	}
}

func (f *fakeAuth) connect(t *testing.T) (*client.Client, error) {
	o := client.NewOAuth(client.OAuthConfig{RedirectURL: "http://localhost:1/cb", Browser: headlessForTest})
	return client.Connect(ctxT(t), client.HTTP(f.rsURL(), client.WithAuthorizer(o)))
}

func headlessForTest(ctx context.Context, authURL string) (string, error) {
	hc := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := hc.Get(authURL)
	if err != nil {
		return "", err
	}
	resp.Body.Close()
	return resp.Header.Get("Location"), nil
}

func TestOAuthFlowOnTheWire(t *testing.T) {
	f := newFakeAuth(t, func(f *fakeAuth) { f.challenge = `, scope="mcp:basic"` })
	c, err := f.connect(t)
	require.NoError(t, err)
	defer c.Close()
	_, err = c.ListTools(ctxT(t))
	require.NoError(t, err)

	require.Len(t, f.registered, 1)
	assert.Equal(t, "native", f.registered[0]["application_type"])
	assert.Equal(t, "client_secret_post", f.registered[0]["token_endpoint_auth_method"])
	require.Len(t, f.authorizeQ, 1)
	q := f.authorizeQ[0]
	assert.Equal(t, f.rsURL(), q.Get("resource"), "the PRM resource, verbatim")
	assert.Equal(t, "mcp:basic", q.Get("scope"), "the challenge's scope")
	assert.Equal(t, "S256", q.Get("code_challenge_method"))
	require.Len(t, f.tokenForms, 1)
	form := f.tokenForms[0]
	sum := sha256.Sum256([]byte(form.Get("code_verifier")))
	assert.Equal(t, base64.RawURLEncoding.EncodeToString(sum[:]), q.Get("code_challenge"), "the verifier matches the challenge")
	assert.Equal(t, f.rsURL(), form.Get("resource"))
	assert.Equal(t, "sec", form.Get("client_secret"), "client_secret_post as registered")
}

func TestOAuthStepUpAsksForTheUnion(t *testing.T) {
	f := newFakeAuth(t, func(f *fakeAuth) {
		f.challenge = `, scope="mcp:basic"`
		f.needScope["tools/call"] = "mcp:write"
	})
	c, err := f.connect(t)
	require.NoError(t, err)
	defer c.Close()
	_, err = c.CallTool(ctxT(t), "x", nil)
	require.NoError(t, err)
	require.Len(t, f.authorizeQ, 2)
	assert.Equal(t, "mcp:basic mcp:write", f.authorizeQ[1].Get("scope"))
	assert.Len(t, f.registered, 1, "one registration per issuer")
}

func TestOAuthRefusals(t *testing.T) {
	cases := map[string]struct {
		setup      func(*fakeAuth)
		authorized bool // reached /authorize
		msg        string
	}{
		"resource mismatch": {func(f *fakeAuth) { f.resource = "https://evil.example.com/mcp" }, false, "not this server"},
		"issuer mismatch":   {func(f *fakeAuth) { f.issuer = "https://attacker.example.com" }, false, "refused"},
		"wrong iss":         {func(f *fakeAuth) { f.iss = "https://evil.example.com" }, true, "refused"},
		"normalized iss":    {func(f *fakeAuth) { f.iss = f.as.URL + "/" }, true, "refused"},
		"missing iss":       {func(f *fakeAuth) { f.iss = "-" }, true, "promised an iss"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			f := newFakeAuth(t, tc.setup)
			_, err := f.connect(t)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.msg)
			assert.Contains(t, err.Error(), "server/discover")
			assert.Equal(t, tc.authorized, len(f.authorizeQ) > 0)
			assert.Empty(t, f.tokenForms, "never at the token endpoint")
		})
	}
}

// An expiring token is refreshed with the resource indicator (RFC 8707
// §2.2) and the registered client authentication.
func TestOAuthRefreshCarriesResource(t *testing.T) {
	f := newFakeAuth(t, func(f *fakeAuth) {
		f.challenge = `, scope="mcp:basic"`
		f.expiresIn = 5
	})
	c, err := f.connect(t)
	require.NoError(t, err)
	defer c.Close()
	_, err = c.ListTools(ctxT(t))
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(f.tokenForms), 2, "a code exchange, then refreshes (the token expires within the 10 s margin)")
	form := f.tokenForms[1]
	assert.Equal(t, "refresh_token", form.Get("grant_type"))
	assert.Equal(t, "refresh-mcp:basic", form.Get("refresh_token"))
	assert.Equal(t, f.rsURL(), form.Get("resource"))
	assert.Equal(t, "cid", form.Get("client_id"))
	assert.Equal(t, "sec", form.Get("client_secret"))
	assert.Len(t, f.authorizeQ, 1, "no second authorization")
}

// The loopback redirect receives the authorization server's redirect
// itself.
func TestOAuthLoopbackRedirect(t *testing.T) {
	f := newFakeAuth(t, nil)
	lr, err := client.NewLoopbackRedirect(func(authURL string) error {
		// The user's browser: follows the authorization server's redirect
		// to the loopback listener.
		go func() {
			resp, err := http.Get(authURL)
			if err == nil {
				resp.Body.Close()
			}
		}()
		return nil
	})
	require.NoError(t, err)
	defer lr.Close()
	assert.True(t, strings.HasPrefix(lr.URL, "http://127.0.0.1:"))
	o := client.NewOAuth(client.OAuthConfig{RedirectURL: lr.URL, Browser: lr.Browser})
	c, err := client.Connect(ctxT(t), client.HTTP(f.rsURL(), client.WithAuthorizer(o)))
	require.NoError(t, err)
	defer c.Close()
	assert.Equal(t, lr.URL, f.authorizeQ[0].Get("redirect_uri"))
	assert.Equal(t, []any{lr.URL}, f.registered[0]["redirect_uris"])
}
