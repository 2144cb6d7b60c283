package oauth_test

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/mrtrkit/mrtrkit/mrtr"
	"github.com/mrtrkit/mrtrkit/oauth"
	"github.com/mrtrkit/mrtrkit/transport/streamablehttp"
	"github.com/stretchr/testify/require"
)

const (
	testIssuer   = "https://auth.example.com"
	testResource = "https://mcp.example.com/mcp"
)

// clock is a settable time source for Config.Now.
type clock struct{ ns atomic.Int64 }

func newClock() *clock {
	c := &clock{}
	c.ns.Store(time.Date(2026, 7, 28, 12, 0, 0, 0, time.UTC).UnixNano())
	return c
}

func (c *clock) Now() time.Time          { return time.Unix(0, c.ns.Load()) }
func (c *clock) Advance(d time.Duration) { c.ns.Add(int64(d)) }

// signingKey is a private key with its ID and algorithm.
type signingKey struct {
	kid  string
	alg  jose.SignatureAlgorithm
	priv crypto.Signer
}

func (k signingKey) public() crypto.PublicKey { return k.priv.Public() }

var (
	rsaOnce sync.Once
	rsaKey  *rsa.PrivateKey
)

// newKey generates a key for alg; RSA keys are generated once and shared,
// as generating them is slow.
func newKey(t *testing.T, kid string, alg jose.SignatureAlgorithm) signingKey {
	t.Helper()
	var priv crypto.Signer
	var err error
	switch alg {
	case jose.RS256, jose.PS256:
		rsaOnce.Do(func() { rsaKey, err = rsa.GenerateKey(rand.Reader, 2048) })
		priv = rsaKey
	case jose.ES256:
		priv, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	case jose.EdDSA:
		_, priv, err = ed25519.GenerateKey(rand.Reader)
	default:
		t.Fatalf("no key for %s", alg)
	}
	require.NoError(t, err)
	return signingKey{kid: kid, alg: alg, priv: priv}
}

// sign makes a JWT of claims signed with k, with the at+jwt type.
func sign(t *testing.T, k signingKey, claims map[string]any) string {
	t.Helper()
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: k.alg, Key: jose.JSONWebKey{Key: k.priv, KeyID: k.kid}},
		(&jose.SignerOptions{}).WithType("at+jwt"))
	require.NoError(t, err)
	tok, err := jwt.Signed(signer).Claims(claims).Serialize()
	require.NoError(t, err)
	return tok
}

// claimsAt returns valid claims for a token issued at now.
func claimsAt(now time.Time) map[string]any {
	return map[string]any{
		"iss":       testIssuer,
		"aud":       testResource,
		"sub":       "ada",
		"exp":       now.Add(5 * time.Minute).Unix(),
		"iat":       now.Unix(),
		"jti":       "t-1",
		"client_id": "client-1",
		"scope":     "files:read files:write",
	}
}

// with returns a copy of m with the given claims set, or removed when
// the value is nil.
func with(m map[string]any, kv ...any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	for i := 0; i < len(kv); i += 2 {
		if kv[i+1] == nil {
			delete(out, kv[i].(string))
		} else {
			out[kv[i].(string)] = kv[i+1]
		}
	}
	return out
}

// jwksServer is an issuer's JWK set endpoint whose keys the test changes
// and whose fetches it counts.
type jwksServer struct {
	*httptest.Server
	fetches      atomic.Int32
	mu           sync.Mutex
	keys         []signingKey
	cacheControl string
	status       int
	pad          int // bytes of padding to make the document larger
	delay        time.Duration
}

func newJWKSServer(t *testing.T, keys ...signingKey) *jwksServer {
	t.Helper()
	s := &jwksServer{keys: keys, status: http.StatusOK}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.fetches.Add(1)
		s.mu.Lock()
		keys, cc, status, pad, delay := s.keys, s.cacheControl, s.status, s.pad, s.delay
		s.mu.Unlock()
		time.Sleep(delay)
		set := struct {
			Keys []jose.JSONWebKey `json:"keys"`
			Pad  string            `json:"pad,omitempty"`
		}{}
		for _, k := range keys {
			set.Keys = append(set.Keys, jose.JSONWebKey{Key: k.public(), KeyID: k.kid, Algorithm: string(k.alg), Use: "sig"})
		}
		for range pad {
			set.Pad += "x"
		}
		body, err := json.Marshal(set)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		if cc != "" {
			w.Header().Set("Cache-Control", cc)
		}
		w.Header().Set("Content-Type", "application/jwk-set+json")
		w.WriteHeader(status)
		_, _ = w.Write(body)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *jwksServer) setKeys(keys ...signingKey) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.keys = keys
}

func (s *jwksServer) set(f func(s *jwksServer)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f(s)
}

// mountProtected mounts at /mcp on mux the Streamable HTTP endpoint of srv
// whose bearer tokens v checks, with challenges and metadata naming
// metaURL.
func mountProtected(t *testing.T, mux *http.ServeMux, srv *mrtr.Server, v *oauth.Verifier, metaURL string) {
	t.Helper()
	h, err := streamablehttp.New(srv,
		streamablehttp.WithLogger(slog.New(slog.DiscardHandler)),
		streamablehttp.WithAuthenticator(streamablehttp.BearerAuthenticator(v.Verify, oauth.Challenge(metaURL))),
		streamablehttp.WithResourceMetadata(metaURL))
	require.NoError(t, err)
	mux.Handle("/mcp", h)
}

// postTool POSTs a 2026-07-28 tools/call of tool, with no arguments, to
// the endpoint at url, with the bearer token (none when ""), and returns
// the response and its body.
func postTool(t *testing.T, url, tool, token string) (*http.Response, string) {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"` + tool + `","arguments":{},` +
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "tools/call")
	req.Header.Set("Mcp-Name", tool)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp, string(out)
}
