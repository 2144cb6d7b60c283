package client

import (
	"context"
	"crypto"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/cryptosigner"
	"github.com/go-jose/go-jose/v4/jwt"
)

// Grant types of the token requests a Grant makes.
const (
	GrantClientCredentials = "client_credentials"
	GrantJWTBearer         = "urn:ietf:params:oauth:grant-type:jwt-bearer"
	GrantTokenExchange     = "urn:ietf:params:oauth:grant-type:token-exchange"
)

// ClientKey authenticates a client at the token endpoint with a JWT it
// signs (private_key_jwt, RFC 7523 §2.2): iss and sub are the client_id,
// aud the authorization server's issuer, with a unique jti and a one-minute
// lifetime.
type ClientKey struct {
	// Key signs the assertions: ECDSA (ES256/384/512), RSA (RS256) or
	// Ed25519 (EdDSA).
	Key crypto.Signer
	// KeyID, when set, goes in the JWS header as kid.
	KeyID string
}

// GrantConfig configures a Grant.
type GrantConfig struct {
	// ClientID is the client's identifier at the authorization server.
	ClientID string
	// ClientSecret authenticates the client with client_secret_basic (or
	// client_secret_post when the server supports only that).
	ClientSecret string
	// ClientKey authenticates the client with a signed JWT
	// (private_key_jwt) instead of a secret.
	ClientKey *ClientKey
	// Scopes are the scopes to request; when empty, the challenge's scope,
	// else the protected resource's scopes_supported.
	Scopes []string
	// DPoP, when set, binds the tokens to its key (RFC 9449).
	DPoP *DPoP
	// HTTPClient fetches metadata and tokens (default: one that follows
	// no redirects).
	HTTPClient *http.Client
}

// AssertionRequest says what a JWT-bearer assertion is for.
type AssertionRequest struct {
	// Issuer is the authorization server's issuer: the assertion's
	// audience.
	Issuer string
	// Resource is the protected resource (the MCP server).
	Resource string
	// Scopes are the scopes the token request asks for.
	Scopes []string
}

// AssertionFunc returns the JWT to present in a JWT-bearer grant.
type AssertionFunc func(ctx context.Context, r AssertionRequest) (string, error)

// Grant is an Authorizer that gets tokens without a user at a browser:
// with the client credentials grant (NewClientCredentials) or the
// JWT-bearer grant (NewJWTBearer). On a challenge it finds the
// authorization server like OAuth does (protected resource metadata, then
// the server's metadata with the exact issuer check), then posts to its
// token endpoint with the resource indicator and the client's
// authentication. A failed token request is reported, never retried with
// another grant. Tokens are renewed with the same grant shortly before
// they expire.
type Grant struct {
	grant     string
	assertion AssertionFunc
	cfg       GrantConfig
	disc      *OAuth       // discovery
	hc        *http.Client // token requests

	mu       sync.Mutex
	token    string
	typ      string
	expiry   time.Time
	as       *asMeta
	resource string
	scopes   []string
	granted  []string
	attempts int
}

// NewClientCredentials returns a Grant for the client credentials grant
// (OAuth 2.1 §4.2), authenticated with cfg's secret or key; pass it to
// WithAuthorizer.
func NewClientCredentials(cfg GrantConfig) *Grant {
	return newGrant(GrantClientCredentials, nil, cfg)
}

// NewJWTBearer returns a Grant for the JWT-bearer grant (RFC 7523 §2.1):
// the token request presents the JWT that assertion returns: a workload
// identity token, or an identity assertion grant from the enterprise's
// identity provider (IDJAG). The client authenticates as cfg says; with
// a ClientID alone it sends just its client_id.
func NewJWTBearer(assertion AssertionFunc, cfg GrantConfig) *Grant {
	return newGrant(GrantJWTBearer, assertion, cfg)
}

func newGrant(grant string, assertion AssertionFunc, cfg GrantConfig) *Grant {
	disc := NewOAuth(OAuthConfig{HTTPClient: cfg.HTTPClient})
	hc := disc.hc
	if cfg.DPoP != nil {
		hc = cfg.DPoP.client(hc)
	}
	return &Grant{grant: grant, assertion: assertion, cfg: cfg, disc: disc, hc: hc}
}

// Token returns the current access token ("" before the first grant),
// renewing it first when it expires within ten seconds; when renewal
// fails the old token is returned, so that the server's 401 starts over.
func (g *Grant) Token(ctx context.Context) (string, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.renew(ctx)
	return g.token, nil
}

func (g *Grant) renew(ctx context.Context) {
	if g.token != "" && g.as != nil && !g.expiry.IsZero() && time.Until(g.expiry) < 10*time.Second {
		_ = g.fetch(ctx)
	}
}

func (g *Grant) authorizeRequest(ctx context.Context, req *http.Request) error {
	g.mu.Lock()
	g.renew(ctx)
	tok, typ := g.token, g.typ
	g.mu.Unlock()
	return presentToken(req, tok, typ, g.cfg.DPoP)
}

// Authorize answers a 401, or a 403 insufficient_scope challenge, with a
// new token; a use_dpop_nonce challenge only with the nonce.
func (g *Grant) Authorize(ctx context.Context, resp *http.Response) error {
	if d := g.cfg.DPoP; d != nil {
		if again, err := d.resourceNonce(resp); again || err != nil {
			return err
		}
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.attempts >= MaxAuthorizations {
		return fmt.Errorf("gave up after %d authorizations", g.attempts)
	}
	g.attempts++ // counted before a refused step-up, unlike OAuth
	ch, scopes, stepUp, err := challengeScopes(resp, g.granted)
	if err != nil {
		return err
	}
	if !stepUp {
		if len(g.cfg.Scopes) > 0 {
			scopes = g.cfg.Scopes
		}
		if g.token != "" {
			// A 401 while holding a token: start over, the resource may
			// have moved to another authorization server.
			g.token, g.granted, g.as = "", nil, nil
		}
	}
	pr, err := g.disc.discoverPRM(ctx, resp.Request.URL, ch["resource_metadata"])
	if err != nil {
		return err
	}
	as, err := g.disc.discoverAS(ctx, pr.AuthorizationServers[0])
	if err != nil {
		return err
	}
	if as.TokenEndpoint == "" {
		return fmt.Errorf("authorization server %s names no token endpoint", as.Issuer)
	}
	if len(scopes) == 0 {
		scopes = pr.ScopesSupported
	}
	g.as, g.resource, g.scopes = as, pr.Resource, scopes
	return g.fetch(ctx)
}

// fetch runs one token request of the grant.
func (g *Grant) fetch(ctx context.Context) error {
	form := url.Values{"grant_type": {g.grant}}
	if g.grant == GrantJWTBearer {
		if g.assertion == nil {
			return errors.New("the JWT-bearer grant has no assertion function")
		}
		a, err := g.assertion(ctx, AssertionRequest{Issuer: g.as.Issuer, Resource: g.resource, Scopes: g.scopes})
		if err != nil {
			return fmt.Errorf("getting the assertion: %w", err)
		}
		form.Set("assertion", a)
	}
	if g.resource != "" {
		form.Set("resource", g.resource)
	}
	if len(g.scopes) > 0 {
		form.Set("scope", strings.Join(g.scopes, " "))
	}
	ca := clientAuthFor(g.cfg.ClientID, g.cfg.ClientSecret, g.cfg.ClientKey, g.as.TokenEndpointAuthMethodsSupported)
	tr, err := postToken(ctx, g.hc, g.as.TokenEndpoint, g.as.Issuer, form, ca)
	if err != nil {
		return err
	}
	g.token, g.typ = tr.AccessToken, tr.TokenType
	g.expiry = time.Time{}
	if tr.ExpiresIn > 0 {
		g.expiry = time.Now().Add(time.Duration(tr.ExpiresIn) * time.Second)
	}
	g.granted = g.scopes
	if tr.Scope != "" {
		g.granted = strings.Fields(tr.Scope)
	}
	return nil
}

// clientAuth is a client identity and how it authenticates at a token
// endpoint (OAuth keeps one per issuer).
type clientAuth struct {
	id, secret, method string // method: none, client_secret_basic, client_secret_post, private_key_jwt
	key                *ClientKey
}

// clientAuthFor picks the authentication for a client: its key
// (private_key_jwt), its secret (client_secret_basic, or
// client_secret_post when the server lists only that), or none.
func clientAuthFor(id, secret string, key *ClientKey, supported []string) clientAuth {
	switch {
	case key != nil:
		return clientAuth{id: id, method: "private_key_jwt", key: key}
	case secret != "":
		m := "client_secret_basic"
		if len(supported) > 0 && !slices.Contains(supported, m) && slices.Contains(supported, "client_secret_post") {
			m = "client_secret_post"
		}
		return clientAuth{id: id, secret: secret, method: m}
	}
	return clientAuth{id: id, method: "none"}
}

// clientAssertion signs the private_key_jwt assertion for audience
// (RFC 7523 §3).
func clientAssertion(k *ClientKey, clientID, audience string) (string, error) {
	alg, err := signingAlg(k.Key.Public())
	if err != nil {
		return "", err
	}
	opts := (&jose.SignerOptions{}).WithType("JWT")
	if k.KeyID != "" {
		opts = opts.WithHeader("kid", k.KeyID)
	}
	s, err := jose.NewSigner(jose.SigningKey{Algorithm: alg, Key: cryptosigner.Opaque(k.Key)}, opts)
	if err != nil {
		return "", err
	}
	now := time.Now()
	return jwt.Signed(s).Claims(jwt.Claims{
		Issuer:   clientID,
		Subject:  clientID,
		Audience: jwt.Audience{audience},
		ID:       randomString(18),
		IssuedAt: jwt.NewNumericDate(now),
		Expiry:   jwt.NewNumericDate(now.Add(time.Minute)),
	}).Serialize()
}

// tokenResponse is a token endpoint's answer (RFC 6749 §5.1, RFC 8693
// §2.2.1).
type tokenResponse struct {
	AccessToken     string `json:"access_token"`
	TokenType       string `json:"token_type"`
	ExpiresIn       int64  `json:"expires_in"`
	Scope           string `json:"scope"`
	RefreshToken    string `json:"refresh_token"`
	IssuedTokenType string `json:"issued_token_type"`
}

// TokenError is an error answer of a token endpoint (RFC 6749 §5.2).
type TokenError struct {
	// Endpoint is the token endpoint.
	Endpoint string
	// Status is the HTTP status.
	Status int
	// Code is the error code (invalid_grant, say); "" when the body had
	// none.
	Code string
	// Description is error_description.
	Description string
}

func (e *TokenError) Error() string {
	if e.Code == "" {
		return fmt.Sprintf("the token request to %s: HTTP %d", e.Endpoint, e.Status)
	}
	return fmt.Sprintf("the token request to %s: %s: %s", e.Endpoint, e.Code, e.Description)
}

// parseTokenResponse decodes a token endpoint's answer. The body is
// untrusted.
func parseTokenResponse(endpoint string, status int, body []byte) (*tokenResponse, error) {
	if status != http.StatusOK {
		var e struct {
			Error       string `json:"error"`
			Description string `json:"error_description"`
		}
		_ = json.Unmarshal(body, &e)
		return nil, &TokenError{Endpoint: endpoint, Status: status, Code: clip(e.Error, 60), Description: clip(e.Description, 200)}
	}
	var tr tokenResponse
	if err := json.Unmarshal(body, &tr); err != nil {
		return nil, fmt.Errorf("the token response of %s does not decode: %w", endpoint, err)
	}
	if tr.AccessToken == "" {
		return nil, fmt.Errorf("the token response of %s has no access_token", endpoint)
	}
	if !validTokenValue(tr.AccessToken) {
		return nil, fmt.Errorf("the token response of %s has an access_token that cannot go in a header", endpoint)
	}
	if tr.TokenType == "" {
		tr.TokenType = "Bearer"
	}
	return &tr, nil
}

// validTokenValue reports whether a token is printable ASCII without
// spaces, so it can go in an Authorization header.
func validTokenValue(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] <= ' ' || s[i] > '~' {
			return false
		}
	}
	return true
}

// postToken posts form to a token endpoint with the client's
// authentication (audience is the assertion's aud for private_key_jwt)
// and decodes the answer.
func postToken(ctx context.Context, hc *http.Client, endpoint, audience string, form url.Values, ca clientAuth) (*tokenResponse, error) {
	if err := endpointAllowed(endpoint); err != nil {
		return nil, err
	}
	switch ca.method {
	case "none":
		if ca.id != "" {
			form.Set("client_id", ca.id)
		}
	case "client_secret_post":
		form.Set("client_id", ca.id)
		form.Set("client_secret", ca.secret)
	case "private_key_jwt":
		a, err := clientAssertion(ca.key, ca.id, audience)
		if err != nil {
			return nil, fmt.Errorf("signing the client assertion: %w", err)
		}
		if ca.id != "" {
			form.Set("client_id", ca.id)
		}
		form.Set("client_assertion_type", "urn:ietf:params:oauth:client-assertion-type:jwt-bearer")
		form.Set("client_assertion", a)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, strings.NewReader(form.Encode()))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	if ca.method == "client_secret_basic" {
		req.SetBasicAuth(url.QueryEscape(ca.id), url.QueryEscape(ca.secret))
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("the token request to %s: %w", endpoint, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return nil, fmt.Errorf("the token response of %s: %w", endpoint, err)
	}
	return parseTokenResponse(endpoint, resp.StatusCode, b)
}

// IDJAGConfig configures IDJAG: the client's identity provider, where it
// trades the user's identity token for an identity assertion grant.
type IDJAGConfig struct {
	// TokenURL is the identity provider's token endpoint.
	TokenURL string
	// ClientID and ClientSecret are the client's credentials at the
	// identity provider (client_secret_basic; the ClientID alone as
	// client_id when there is no secret).
	ClientID, ClientSecret string
	// IDToken returns the user's OpenID Connect ID token from the
	// identity provider.
	IDToken func(ctx context.Context) (string, error)
	// HTTPClient makes the request (default: one that follows no
	// redirects).
	HTTPClient *http.Client
}

// Token types of the identity assertion grant's token exchange.
const (
	TokenTypeIDToken = "urn:ietf:params:oauth:token-type:id_token"
	TokenTypeIDJAG   = "urn:ietf:params:oauth:token-type:id-jag"
)

// IDJAG returns an AssertionFunc for NewJWTBearer that implements
// enterprise-managed authorization: a token exchange (RFC 8693) at the
// identity provider of the user's ID token for an Identity Assertion JWT
// Authorization Grant (ID-JAG), with the authorization server's issuer as
// audience and the MCP server as resource. The authorization server then
// trades the ID-JAG for an access token in the JWT-bearer grant.
func IDJAG(cfg IDJAGConfig) AssertionFunc {
	hc := cfg.HTTPClient
	if hc == nil {
		hc = noRedirectClient()
	}
	return func(ctx context.Context, r AssertionRequest) (string, error) {
		if cfg.IDToken == nil {
			return "", errors.New("IDJAGConfig.IDToken is not set")
		}
		idt, err := cfg.IDToken(ctx)
		if err != nil {
			return "", fmt.Errorf("getting the ID token: %w", err)
		}
		form := url.Values{
			"grant_type":           {GrantTokenExchange},
			"requested_token_type": {TokenTypeIDJAG},
			"audience":             {r.Issuer},
			"subject_token":        {idt},
			"subject_token_type":   {TokenTypeIDToken},
		}
		if r.Resource != "" {
			form.Set("resource", r.Resource)
		}
		if len(r.Scopes) > 0 {
			form.Set("scope", strings.Join(r.Scopes, " "))
		}
		tr, err := postToken(ctx, hc, cfg.TokenURL, "", form, clientAuthFor(cfg.ClientID, cfg.ClientSecret, nil, nil))
		if err != nil {
			return "", err
		}
		if tr.IssuedTokenType != TokenTypeIDJAG {
			return "", fmt.Errorf("the identity provider issued a %q, not an ID-JAG", clip(tr.IssuedTokenType, 100))
		}
		return tr.AccessToken, nil
	}
}
