package client_test

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mrtrkit/mrtrkit/client"
)

// proofClaims are the claims of a DPoP proof.
type proofClaims struct {
	JTI   string  `json:"jti"`
	HTM   string  `json:"htm"`
	HTU   string  `json:"htu"`
	IAT   float64 `json:"iat"`
	ATH   string  `json:"ath"`
	Nonce string  `json:"nonce"`
}

// checkProof validates a DPoP proof as a server does (RFC 9449 §4.3):
// one proof, typ dpop+jwt, an asymmetric algorithm, a public key in the
// header that verifies the signature, htm and htu of the request, a
// recent iat, a jti, and ath the hash of token (none when token is "").
// It returns the claims and the key's thumbprint, or an error.
func checkProof(proof, method, htu, token string) (*proofClaims, string, error) {
	if proof == "" || strings.Contains(proof, ",") {
		return nil, "", fmt.Errorf("want exactly one proof, got %q", proof)
	}
	jws, err := jose.ParseSigned(proof, []jose.SignatureAlgorithm{jose.ES256, jose.ES384, jose.ES512, jose.RS256, jose.PS256, jose.EdDSA})
	if err != nil {
		return nil, "", err
	}
	h := jws.Signatures[0].Protected
	if h.ExtraHeaders[jose.HeaderType] != "dpop+jwt" {
		return nil, "", fmt.Errorf("typ %v", h.ExtraHeaders[jose.HeaderType])
	}
	if h.JSONWebKey == nil || !h.JSONWebKey.IsPublic() {
		return nil, "", fmt.Errorf("the header must carry a public jwk")
	}
	payload, err := jws.Verify(h.JSONWebKey)
	if err != nil {
		return nil, "", fmt.Errorf("signature: %w", err)
	}
	var c proofClaims
	if err := json.Unmarshal(payload, &c); err != nil {
		return nil, "", err
	}
	switch {
	case c.JTI == "":
		return nil, "", fmt.Errorf("no jti")
	case c.HTM != method:
		return nil, "", fmt.Errorf("htm %q, want %q", c.HTM, method)
	case c.HTU != htu:
		return nil, "", fmt.Errorf("htu %q, want %q", c.HTU, htu)
	case math.Abs(float64(time.Now().Unix())-c.IAT) > 60:
		return nil, "", fmt.Errorf("iat %v is not now", c.IAT)
	}
	wantATH := ""
	if token != "" {
		sum := sha256.Sum256([]byte(token))
		wantATH = base64.RawURLEncoding.EncodeToString(sum[:])
	}
	if c.ATH != wantATH {
		return nil, "", fmt.Errorf("ath %q, want %q", c.ATH, wantATH)
	}
	tp, err := h.JSONWebKey.Thumbprint(crypto.SHA256)
	if err != nil {
		return nil, "", err
	}
	return &c, base64.RawURLEncoding.EncodeToString(tp), nil
}

// dpopFake is an MCP resource server and its authorization server, both
// requiring DPoP (and, when asked, server nonces): the token endpoint
// binds tokens to the proof's key, the resource server accepts a token
// only with the DPoP scheme and a proof of that key.
type dpopFake struct {
	t      *testing.T
	mu     sync.Mutex
	rs, as *httptest.Server

	asNonce func(n int) string // the nonce the token endpoint wants of its n-th request ("" none)
	rsNonce string             // the nonce the resource server wants ("" none)
	rsStuck bool               // challenge even a proof carrying the nonce

	bound      map[string]string // token → jkt
	tokenReqs  int
	asNonces   []string // the nonce of each token request's proof
	rsAuthed   int      // MCP requests with a token
	rsNonceHit int      // use_dpop_nonce challenges of the resource server
	jtis       map[string]bool
}

func newDPoPFake(t *testing.T) *dpopFake {
	f := &dpopFake{t: t, bound: map[string]string{}, jtis: map[string]bool{}, asNonce: func(int) string { return "" }}
	f.as = httptest.NewServer(http.HandlerFunc(f.serveAS))
	t.Cleanup(f.as.Close)
	f.rs = httptest.NewServer(http.HandlerFunc(f.serveRS))
	t.Cleanup(f.rs.Close)
	return f
}

func (f *dpopFake) rsURL() string { return f.rs.URL + "/mcp" }

func (f *dpopFake) fresh(jti string) {
	if f.jtis[jti] {
		f.t.Errorf("jti %q used twice", jti)
	}
	f.jtis[jti] = true
}

func (f *dpopFake) serveAS(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch r.URL.Path {
	case "/.well-known/oauth-authorization-server":
		_ = json.NewEncoder(w).Encode(map[string]any{
			"issuer": f.as.URL, "authorization_endpoint": f.as.URL + "/authorize", "token_endpoint": f.as.URL + "/token",
			"code_challenge_methods_supported": []string{"S256"}, "dpop_signing_alg_values_supported": []string{"ES256"},
		})
	case "/authorize":
		q := r.URL.Query()
		back, _ := url.Parse(q.Get("redirect_uri"))
		back.RawQuery = url.Values{"code": {"c"}, "state": {q.Get("state")}, "iss": {f.as.URL}}.Encode()
		http.Redirect(w, r, back.String(), http.StatusFound)
	case "/token":
		f.tokenReqs++
		c, jkt, err := checkProof(r.Header.Get("DPoP"), http.MethodPost, f.as.URL+"/token", "")
		if err != nil {
			f.t.Errorf("token request proof: %v", err)
			w.WriteHeader(400)
			_, _ = w.Write([]byte(`{"error":"invalid_dpop_proof"}`))
			return
		}
		f.fresh(c.JTI)
		f.asNonces = append(f.asNonces, c.Nonce)
		if want := f.asNonce(f.tokenReqs); want != "" && c.Nonce != want {
			w.Header().Set("DPoP-Nonce", want)
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(400)
			_, _ = w.Write([]byte(`{"error":"use_dpop_nonce"}`))
			return
		}
		tok := fmt.Sprintf("bound-%d", len(f.bound)+1)
		f.bound[tok] = jkt
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"access_token": tok, "token_type": "DPoP", "expires_in": 3600})
	default:
		http.NotFound(w, r)
	}
}

func (f *dpopFake) serveRS(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	prm := f.rs.URL + "/.well-known/oauth-protected-resource/mcp"
	if r.URL.Path == "/.well-known/oauth-protected-resource/mcp" {
		_ = json.NewEncoder(w).Encode(map[string]any{"resource": f.rsURL(), "authorization_servers": []string{f.as.URL}})
		return
	}
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	_ = json.NewDecoder(r.Body).Decode(&m)
	authz := r.Header.Get("Authorization")
	if authz == "" {
		w.Header().Set("WWW-Authenticate", fmt.Sprintf(`DPoP resource_metadata="%s"`, prm))
		w.WriteHeader(401)
		return
	}
	f.rsAuthed++
	tok, ok := strings.CutPrefix(authz, "DPoP ")
	if !ok {
		f.t.Errorf("the token went with %q, not the DPoP scheme", authz)
		w.WriteHeader(401)
		return
	}
	c, jkt, err := checkProof(r.Header.Get("DPoP"), http.MethodPost, f.rsURL(), tok)
	if err != nil {
		f.t.Errorf("resource request proof: %v", err)
		w.WriteHeader(401)
		return
	}
	f.fresh(c.JTI)
	if f.bound[tok] != jkt {
		f.t.Errorf("the proof's key %q is not the one token %q is bound to", jkt, tok)
		w.WriteHeader(401)
		return
	}
	if f.rsNonce != "" && (c.Nonce != f.rsNonce || f.rsStuck) {
		f.rsNonceHit++
		w.Header().Set("WWW-Authenticate", fmt.Sprintf(`DPoP error="use_dpop_nonce", resource_metadata="%s"`, prm))
		w.Header().Set("DPoP-Nonce", f.rsNonce)
		w.WriteHeader(401)
		return
	}
	if m.Method == "server/discover" {
		writeJSON(w, 200, m.ID, discoverResult)
		return
	}
	writeJSON(w, 200, m.ID, `"result":{"resultType":"complete","tools":[],"content":[]}`)
}

func (f *dpopFake) oauth(t *testing.T) *client.OAuth {
	d, err := client.GenerateDPoP()
	require.NoError(t, err)
	return client.NewOAuth(client.OAuthConfig{RedirectURL: "http://localhost:1/cb", ClientID: "pub", Browser: headlessForTest, DPoP: d})
}

func (f *dpopFake) run(t *testing.T, a client.Authorizer) error {
	c, err := client.Connect(ctxT(t), client.HTTP(f.rsURL(), client.WithAuthorizer(a)))
	if err != nil {
		return err
	}
	defer c.Close()
	if _, err := c.ListTools(ctxT(t)); err != nil {
		return err
	}
	_, err = c.CallTool(ctxT(t), "x", nil)
	return err
}

// The authorization code flow with DPoP, both servers wanting nonces: the
// code exchange carries a proof and is sent again once with the
// authorization server's nonce; the token, bound to the key, goes with
// the DPoP scheme and a fresh proof (htm, htu, iat, jti, ath) on every
// MCP request, sent again once with the resource server's nonce.
func TestDPoPOnTheWire(t *testing.T) {
	f := newDPoPFake(t)
	f.asNonce = func(int) string { return "as-nonce-1" }
	f.rsNonce = "rs-nonce-1"
	require.NoError(t, f.run(t, f.oauth(t)))

	assert.Equal(t, 2, f.tokenReqs, "the code exchange, then once more with the nonce")
	assert.Equal(t, []string{"", "as-nonce-1"}, f.asNonces)
	assert.Equal(t, 1, f.rsNonceHit, "one nonce challenge; later proofs carry the nonce")
	assert.Equal(t, 4, f.rsAuthed, "discover (challenged, then again), tools/list, tools/call")
	assert.Len(t, f.jtis, 6, "a new jti on every proof")
}

// Without nonces, proofs carry none and nothing is sent twice.
func TestDPoPWithoutNonces(t *testing.T) {
	f := newDPoPFake(t)
	require.NoError(t, f.run(t, f.oauth(t)))
	assert.Equal(t, 1, f.tokenReqs)
	assert.Equal(t, []string{""}, f.asNonces)
	assert.Equal(t, 3, f.rsAuthed)
}

// A use_dpop_nonce answer is followed once: a token endpoint that wants a
// new nonce every time, or a resource server that refuses its own nonce,
// ends the flow with an error instead of a loop.
func TestDPoPNonceRetriedOnce(t *testing.T) {
	t.Run("authorization server", func(t *testing.T) {
		f := newDPoPFake(t)
		f.asNonce = func(n int) string { return fmt.Sprintf("as-nonce-%d", n+1) }
		err := f.run(t, f.oauth(t))
		require.Error(t, err)
		assert.Contains(t, err.Error(), "use_dpop_nonce")
		assert.Equal(t, 2, f.tokenReqs)
	})
	t.Run("resource server", func(t *testing.T) {
		f := newDPoPFake(t)
		f.rsNonce, f.rsStuck = "rs-nonce-1", true
		err := f.run(t, f.oauth(t))
		require.Error(t, err)
		assert.Contains(t, err.Error(), "carried its own nonce")
		assert.Equal(t, 2, f.rsAuthed, "the request, then once with the nonce")
	})
}

// The client credentials grant binds its token with DPoP too.
func TestDPoPWithClientCredentials(t *testing.T) {
	f := newDPoPFake(t)
	f.asNonce = func(int) string { return "as-n" }
	f.rsNonce = "rs-n"
	d, err := client.GenerateDPoP()
	require.NoError(t, err)
	require.NoError(t, f.run(t, client.NewClientCredentials(client.GrantConfig{ClientID: "svc", ClientSecret: "s", DPoP: d})))
	assert.Equal(t, 2, f.tokenReqs)
	assert.Equal(t, d.Thumbprint(), f.bound["bound-1"], "the token is bound to the DPoP key")
	assert.Equal(t, 1, f.rsNonceHit)
}

// Proofs of every supported key type verify, name the URL without query
// and fragment, and embed the public key only; the thumbprint is the
// key's RFC 7638 thumbprint.
func TestDPoPProofKeys(t *testing.T) {
	ec, err := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	require.NoError(t, err)
	rk, err := rsa.GenerateKey(rand.Reader, 2048)
	require.NoError(t, err)
	_, ed, err := ed25519.GenerateKey(rand.Reader)
	require.NoError(t, err)
	for name, k := range map[string]crypto.Signer{"ES384": ec, "RS256": rk, "EdDSA": ed} {
		t.Run(name, func(t *testing.T) {
			d, err := client.NewDPoP(k)
			require.NoError(t, err)
			assert.Equal(t, name, d.Algorithm())
			p, err := d.Proof(http.MethodGet, "https://MCP.example.com/mcp?x=1#f", "tok")
			require.NoError(t, err)
			c, jkt, err := checkProof(p, http.MethodGet, "https://mcp.example.com/mcp", "tok")
			require.NoError(t, err)
			assert.Empty(t, c.Nonce)
			assert.Equal(t, d.Thumbprint(), jkt)
			assert.NotContains(t, p, `"d":`)
		})
	}
	small, err := rsa.GenerateKey(rand.Reader, 1024)
	require.NoError(t, err)
	_, err = client.NewDPoP(small)
	assert.Error(t, err, "a weak RSA key is refused")
}
