package client

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/cryptosigner"
)

// DPoP binds access tokens to a key the client holds (RFC 9449): every
// token request carries a proof signed with the key, so the authorization
// server binds the token to it, and every request that presents the token
// carries a fresh proof (method, URL, time, a unique id and the token's
// hash). A server that wants a nonce in the proofs answers use_dpop_nonce
// with a DPoP-Nonce header; the request is sent again once with a new
// proof carrying it. Nonces are kept per origin.
//
// Set it as OAuthConfig.DPoP or GrantConfig.DPoP. One DPoP may serve
// several authorizers; it is safe for concurrent use.
type DPoP struct {
	signer jose.Signer
	alg    jose.SignatureAlgorithm
	jkt    string

	mu     sync.Mutex
	nonces map[string]string // by origin
}

// NewDPoP returns a DPoP whose proofs are signed with key: an ECDSA key
// (P-256, P-384 or P-521: ES256, ES384, ES512), an RSA key (RS256) or an
// Ed25519 key (EdDSA). The key may live outside the process (a
// crypto.Signer of a hardware module).
func NewDPoP(key crypto.Signer) (*DPoP, error) {
	if key == nil {
		return nil, errors.New("DPoP needs a key")
	}
	alg, err := signingAlg(key.Public())
	if err != nil {
		return nil, err
	}
	opts := (&jose.SignerOptions{EmbedJWK: true}).WithType("dpop+jwt")
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: alg, Key: cryptosigner.Opaque(key)}, opts)
	if err != nil {
		return nil, fmt.Errorf("DPoP key: %w", err)
	}
	pub := jose.JSONWebKey{Key: key.Public()}
	tp, err := pub.Thumbprint(crypto.SHA256)
	if err != nil {
		return nil, fmt.Errorf("DPoP key: %w", err)
	}
	return &DPoP{signer: signer, alg: alg, jkt: base64.RawURLEncoding.EncodeToString(tp), nonces: map[string]string{}}, nil
}

// GenerateDPoP returns a DPoP with a new P-256 key (ES256), held in
// memory only.
func GenerateDPoP() (*DPoP, error) {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	return NewDPoP(k)
}

// signingAlg is the JWS algorithm for a public key.
func signingAlg(pub crypto.PublicKey) (jose.SignatureAlgorithm, error) {
	switch k := pub.(type) {
	case *ecdsa.PublicKey:
		switch k.Curve {
		case elliptic.P256():
			return jose.ES256, nil
		case elliptic.P384():
			return jose.ES384, nil
		case elliptic.P521():
			return jose.ES512, nil
		}
	case *rsa.PublicKey:
		if k.N.BitLen() < 2048 {
			return "", errors.New("an RSA key needs 2048 bits at least")
		}
		return jose.RS256, nil
	case ed25519.PublicKey:
		return jose.EdDSA, nil
	}
	return "", fmt.Errorf("unsupported key type %T (want ECDSA P-256/384/521, RSA or Ed25519)", pub)
}

// Thumbprint is the JWK SHA-256 thumbprint of the key (RFC 7638), the
// value a bound token names in cnf.jkt.
func (d *DPoP) Thumbprint() string { return d.jkt }

// Algorithm is the JWS algorithm of the proofs (ES256, say).
func (d *DPoP) Algorithm() string { return string(d.alg) }

// Proof returns a proof for a request: typ dpop+jwt with the public key
// in the header, and the claims jti, htm (method), htu (rawURL without
// query and fragment), iat, ath (the hash of accessToken, when not
// empty) and the origin's nonce, when a server sent one.
func (d *DPoP) Proof(method, rawURL, accessToken string) (string, error) {
	u, err := url.Parse(rawURL)
	if err != nil || u.Host == "" {
		return "", fmt.Errorf("DPoP proof for %q: not an absolute URL", clip(rawURL, 100))
	}
	return d.proof(method, u, accessToken, d.nonce(origin(u)))
}

func (d *DPoP) proof(method string, u *url.URL, accessToken, nonce string) (string, error) {
	claims := map[string]any{
		"jti": randomString(18),
		"htm": method,
		"htu": htu(u),
		"iat": time.Now().Unix(),
	}
	if accessToken != "" {
		sum := sha256.Sum256([]byte(accessToken))
		claims["ath"] = base64.RawURLEncoding.EncodeToString(sum[:])
	}
	if nonce != "" {
		claims["nonce"] = nonce
	}
	payload, err := json.Marshal(claims)
	if err != nil {
		return "", err
	}
	jws, err := d.signer.Sign(payload)
	if err != nil {
		return "", fmt.Errorf("signing the DPoP proof: %w", err)
	}
	return jws.CompactSerialize()
}

// htu is the request URL without query and fragment (RFC 9449 §4.2).
func htu(u *url.URL) string {
	v := url.URL{Scheme: strings.ToLower(u.Scheme), Host: strings.ToLower(u.Host), Path: u.Path, RawPath: u.RawPath}
	return v.String()
}

func origin(u *url.URL) string { return strings.ToLower(u.Scheme + "://" + u.Host) }

func (d *DPoP) nonce(origin string) string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.nonces[origin]
}

func (d *DPoP) setNonce(origin, nonce string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.nonces[origin] = nonce
}

// validNonce reports whether s is a nonce of RFC 9449's grammar: one or
// more of %x21 / %x23-5B / %x5D-7E.
func validNonce(s string) bool {
	if s == "" || len(s) > 1024 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x21 || c > 0x7e || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

// proofNonce is the nonce claim of a proof this client signed ("" when
// none, or when the proof does not decode).
func proofNonce(proof string) string {
	parts := strings.Split(proof, ".")
	if len(parts) != 3 {
		return ""
	}
	b, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return ""
	}
	var c struct {
		Nonce string `json:"nonce"`
	}
	_ = json.Unmarshal(b, &c)
	return c.Nonce
}

// nonceChallenge reads a use_dpop_nonce challenge (RFC 9449 §8, §9): a
// 400 from a token endpoint with error use_dpop_nonce in its JSON body,
// or a 401 from a resource server with a DPoP challenge whose error is
// use_dpop_nonce; either with the nonce in DPoP-Nonce. body is the
// response body, read already (nil for a 401). It returns the nonce, or
// "" when resp is no such challenge.
func nonceChallenge(status int, h http.Header, body []byte) string {
	nonce := h.Get("DPoP-Nonce")
	if !validNonce(nonce) {
		return ""
	}
	switch status {
	case http.StatusBadRequest:
		var e struct {
			Error string `json:"error"`
		}
		if json.Unmarshal(body, &e) == nil && e.Error == "use_dpop_nonce" {
			return nonce
		}
	case http.StatusUnauthorized:
		for _, c := range parseWWWAuthenticate(h.Values("WWW-Authenticate")) {
			if c.scheme == "dpop" && c.params["error"] == "use_dpop_nonce" {
				return nonce
			}
		}
	}
	return ""
}

// resourceNonce handles a resource server's use_dpop_nonce challenge
// (RFC 9449 §9) for an Authorizer's Authorize: it keeps the nonce and
// reports true when the request should be sent again with it, and an
// error when the refused proof carried that nonce already (no second
// retry).
func (d *DPoP) resourceNonce(resp *http.Response) (bool, error) {
	nonce := nonceChallenge(resp.StatusCode, resp.Header, nil)
	if nonce == "" || resp.Request == nil {
		return false, nil
	}
	if proofNonce(resp.Request.Header.Get("DPoP")) == nonce {
		return false, errors.New("the server refused a DPoP proof that carried its own nonce")
	}
	d.setNonce(origin(resp.Request.URL), nonce)
	return true, nil
}

// client returns an HTTP client for token requests: every request
// carries a proof, and a use_dpop_nonce answer is retried once with the
// nonce (RFC 9449 §8).
func (d *DPoP) client(hc *http.Client) *http.Client {
	base := hc.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	c := *hc
	c.Transport = &dpopTransport{d: d, base: base}
	return &c
}

type dpopTransport struct {
	d    *DPoP
	base http.RoundTripper
}

func (t *dpopTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	o := origin(req.URL)
	for try := 0; ; try++ {
		r := req.Clone(req.Context())
		if try > 0 {
			if req.GetBody == nil {
				return nil, errors.New("the token request cannot be sent again with the DPoP nonce")
			}
			b, err := req.GetBody()
			if err != nil {
				return nil, err
			}
			r.Body = b
		}
		nonce := t.d.nonce(o)
		proof, err := t.d.proof(req.Method, req.URL, "", nonce)
		if err != nil {
			if r.Body != nil {
				r.Body.Close()
			}
			return nil, err
		}
		r.Header.Set("DPoP", proof)
		resp, err := t.base.RoundTrip(r)
		if err != nil {
			return nil, err
		}
		if n := resp.Header.Get("DPoP-Nonce"); validNonce(n) && resp.StatusCode < 300 {
			t.d.setNonce(o, n) // a fresh nonce for the next request
		}
		if resp.StatusCode != http.StatusBadRequest || try > 0 {
			return resp, nil
		}
		body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		resp.Body.Close()
		if err != nil {
			return nil, err
		}
		if n := nonceChallenge(resp.StatusCode, resp.Header, body); n != "" && n != nonce {
			t.d.setNonce(o, n)
			continue
		}
		resp.Body = io.NopCloser(bytes.NewReader(body))
		return resp, nil
	}
}

// requestAuthorizer is an Authorizer that sets a request's Authorization
// (and DPoP) headers itself.
type requestAuthorizer interface {
	authorizeRequest(ctx context.Context, req *http.Request) error
}

// setAuthorization authorizes req with a: through authorizeRequest when
// a has it, else as a bearer token. A token never goes over plain http
// off loopback.
func setAuthorization(ctx context.Context, a Authorizer, req *http.Request) error {
	if ra, ok := a.(requestAuthorizer); ok {
		return ra.authorizeRequest(ctx, req)
	}
	tok, err := a.Token(ctx)
	if err != nil {
		return fmt.Errorf("getting a token: %w", err)
	}
	return presentToken(req, tok, "Bearer", nil)
}

// presentToken sets req's Authorization for tok: with the DPoP scheme and
// a proof when d is set and the token is DPoP-bound (token_type DPoP),
// else as a bearer token.
func presentToken(req *http.Request, tok, tokenType string, d *DPoP) error {
	if tok == "" {
		return nil
	}
	if err := tokenAllowed(req.URL); err != nil {
		return err
	}
	if d != nil && strings.EqualFold(tokenType, "DPoP") {
		proof, err := d.proof(req.Method, req.URL, tok, d.nonce(origin(req.URL)))
		if err != nil {
			return err
		}
		req.Header.Set("Authorization", "DPoP "+tok)
		req.Header.Set("DPoP", proof)
		return nil
	}
	req.Header.Set("Authorization", "Bearer "+tok)
	return nil
}

// authChallenge returns the parameters of the Bearer challenge, else of
// the DPoP one, else nil.
func authChallenge(values []string) map[string]string {
	var dpop map[string]string
	for _, c := range parseWWWAuthenticate(values) {
		switch c.scheme {
		case "bearer":
			return c.params
		case "dpop":
			if dpop == nil {
				dpop = c.params
			}
		}
	}
	return dpop
}

// tokenClient is the HTTP client of o's token requests: o's client, with
// DPoP proofs when o binds its tokens.
func (o *OAuth) tokenClient() *http.Client {
	if o.cfg.DPoP != nil {
		return o.cfg.DPoP.client(o.hc)
	}
	return o.hc
}

func (o *OAuth) authorizeRequest(ctx context.Context, req *http.Request) error {
	tok, typ := o.current(ctx)
	return presentToken(req, tok, typ, o.cfg.DPoP)
}
