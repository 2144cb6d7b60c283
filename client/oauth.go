package client

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
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

	"golang.org/x/oauth2"
)

// OAuthConfig configures an OAuth 2.1 authorization-code client for MCP
// servers (NewOAuth).
type OAuthConfig struct {
	// RedirectURL is the redirect_uri (for a native client, a loopback
	// URL the application listens on).
	RedirectURL string
	// ClientName is the client_name of a dynamic registration.
	ClientName string
	// ClientID and ClientSecret are pre-registered credentials, used
	// first when set; ClientIssuer, when set, binds them to that
	// authorization server (issuer) only.
	ClientID, ClientSecret, ClientIssuer string
	// ClientMetadataURL is the URL of the client's metadata document,
	// used as client_id when the authorization server supports client ID
	// metadata documents.
	ClientMetadataURL string
	// Browser sends the user to authURL and returns the URL the
	// authorization server redirected back to (with code, state, iss).
	Browser func(ctx context.Context, authURL string) (redirected string, err error)
	// HTTPClient fetches metadata and tokens (default: one that follows
	// no redirects).
	HTTPClient *http.Client
	// DPoP, when set, binds the tokens to its key (RFC 9449): token
	// requests and MCP requests carry its proofs.
	DPoP *DPoP
}

// OAuth is an Authorizer that runs the MCP authorization flow: protected
// resource metadata (RFC 9728), authorization server metadata (RFC 8414,
// OpenID discovery) with the exact issuer check, a client identity
// (pre-registered, metadata document, or dynamic registration), scope
// selection and step-up, PKCE S256, the resource indicator, the
// authorization response's iss check (RFC 9207), and the code exchange
// on golang.org/x/oauth2. Tokens and client credentials go to an http
// endpoint only on loopback.
type OAuth struct {
	cfg OAuthConfig
	hc  *http.Client

	mu       sync.Mutex
	endpoint *url.URL // the MCP endpoint, learnt from the first challenge
	token    string
	tokenTyp string     // token_type: Bearer, or DPoP for a bound token
	refresh  *refresher // nil: no refresh token
	granted  []string
	issuer   string
	clients  map[string]clientAuth // by issuer
	attempts int
}

// refresher refreshes an access token (RFC 6749 §6) with the resource
// indicator (RFC 8707 §2.2), which golang.org/x/oauth2's refresher cannot
// send.
type refresher struct {
	token    string // the refresh token
	expiry   time.Time
	endpoint string
	resource string
	client   clientAuth
}

// MaxAuthorizations bounds the authorizations one OAuth runs in all.
const MaxAuthorizations = 3

// NewOAuth returns an OAuth for cfg; pass it to WithAuthorizer.
func NewOAuth(cfg OAuthConfig) *OAuth {
	hc := cfg.HTTPClient
	if hc == nil {
		hc = noRedirectClient()
	}
	return &OAuth{cfg: cfg, hc: hc, clients: map[string]clientAuth{}}
}

// Token returns the current access token ("" before authorization). An
// expired token is refreshed first when there is a refresh token; when
// the refresh fails the old token is returned, so that the server's 401
// starts a new authorization.
func (o *OAuth) Token(ctx context.Context) (string, error) {
	tok, _ := o.current(ctx)
	return tok, nil
}

// current is Token with the token's type, both read under one lock so
// that they belong to the same token.
func (o *OAuth) current(ctx context.Context) (tok, typ string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if r := o.refresh; r != nil && o.token != "" && !r.expiry.IsZero() && time.Until(r.expiry) < 10*time.Second {
		if err := o.doRefresh(ctx, r); err != nil {
			o.refresh = nil
		}
	}
	return o.token, o.tokenTyp
}

// doRefresh runs one refresh_token grant.
func (o *OAuth) doRefresh(ctx context.Context, r *refresher) error {
	ca := r.client
	if ca.method != "client_secret_basic" && ca.method != "client_secret_post" {
		// none, or a registered method this client does not perform:
		// the client_id alone.
		ca = clientAuth{id: ca.id, method: "none"}
	}
	form := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {r.token}, "resource": {r.resource}}
	t, err := postToken(ctx, o.tokenClient(), r.endpoint, "", form, ca)
	if err != nil {
		return fmt.Errorf("refreshing the token: %w", err)
	}
	o.token, o.tokenTyp = t.AccessToken, t.TokenType
	if t.RefreshToken != "" {
		r.token = t.RefreshToken
	}
	r.expiry = time.Time{}
	if t.ExpiresIn > 0 {
		r.expiry = time.Now().Add(time.Duration(t.ExpiresIn) * time.Second)
	}
	return nil
}

// Authorize answers a 401 or a 403 insufficient_scope challenge of the
// MCP endpoint by running the flow again.
func (o *OAuth) Authorize(ctx context.Context, resp *http.Response) error {
	if d := o.cfg.DPoP; d != nil {
		if again, err := d.resourceNonce(resp); again || err != nil {
			return err
		}
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.attempts >= MaxAuthorizations {
		return fmt.Errorf("gave up after %d authorizations", o.attempts)
	}
	ch, scopes, stepUp, err := challengeScopes(resp, o.granted)
	if err != nil {
		return err
	}
	if !stepUp && o.token != "" {
		// A 401 while holding a token: drop it and everything learnt
		// with it; the resource may have moved to another server.
		o.token, o.granted, o.issuer, o.refresh = "", nil, "", nil
	}
	o.attempts++
	return o.authorize(ctx, resp.Request.URL, ch["resource_metadata"], scopes)
}

// challengeScopes reads the challenge of resp (its parameters, never nil)
// and the scopes to ask for: those the challenge names, or for a 403
// (stepUp) their union with granted, refused when that adds nothing.
func challengeScopes(resp *http.Response, granted []string) (ch map[string]string, scopes []string, stepUp bool, err error) {
	ch = authChallenge(resp.Header.Values("WWW-Authenticate"))
	if ch == nil {
		ch = map[string]string{}
	}
	scopes = strings.Fields(ch["scope"])
	if resp.StatusCode != http.StatusForbidden {
		return ch, scopes, false, nil
	}
	// Step-up: the union with what was granted; stop when it adds
	// nothing.
	union := append([]string(nil), granted...)
	added := false
	for _, s := range scopes {
		if !slices.Contains(union, s) {
			union = append(union, s)
			added = true
		}
	}
	if !added {
		return ch, nil, true, fmt.Errorf("the server wants scope %q, which was granted already", ch["scope"])
	}
	return ch, union, true, nil
}

func (o *OAuth) get(ctx context.Context, u string) (*http.Response, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, nil, err
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("MCP-Protocol-Version", LatestVersion)
	resp, err := o.hc.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return resp, b, err
}

// prm is protected resource metadata.
type prm struct {
	Resource             string   `json:"resource"`
	AuthorizationServers []string `json:"authorization_servers"`
	ScopesSupported      []string `json:"scopes_supported"`
}

// asMeta is authorization server metadata.
type asMeta struct {
	Issuer                            string   `json:"issuer"`
	AuthorizationEndpoint             string   `json:"authorization_endpoint"`
	TokenEndpoint                     string   `json:"token_endpoint"`
	RegistrationEndpoint              string   `json:"registration_endpoint"`
	ScopesSupported                   []string `json:"scopes_supported"`
	CodeChallengeMethodsSupported     []string `json:"code_challenge_methods_supported"`
	TokenEndpointAuthMethodsSupported []string `json:"token_endpoint_auth_methods_supported"`
	IssParameterSupported             bool     `json:"authorization_response_iss_parameter_supported"`
	CIMDSupported                     bool     `json:"client_id_metadata_document_supported"`
}

// discoverPRM finds the protected resource metadata: the challenge's
// URL, then the path-based well-known URL, then the root one.
func (o *OAuth) discoverPRM(ctx context.Context, endpoint *url.URL, hint string) (*prm, error) {
	origin := endpoint.Scheme + "://" + endpoint.Host
	var cands []string
	if hint != "" {
		cands = append(cands, hint)
	}
	if p := strings.TrimSuffix(endpoint.Path, "/"); p != "" {
		cands = append(cands, origin+"/.well-known/oauth-protected-resource"+p)
	}
	cands = append(cands, origin+"/.well-known/oauth-protected-resource")
	for _, u := range cands {
		resp, body, err := o.get(ctx, u)
		if err != nil {
			return nil, fmt.Errorf("protected resource metadata at %s: %w", u, err)
		}
		if resp.StatusCode != http.StatusOK {
			continue
		}
		var m prm
		if err := json.Unmarshal(body, &m); err != nil {
			return nil, fmt.Errorf("protected resource metadata at %s does not decode: %w", u, err)
		}
		// RFC 9728 §3.3: the resource must be this endpoint: the same
		// origin, and a path that is a prefix of the endpoint's.
		ru, err := url.Parse(m.Resource)
		if err != nil || ru.Scheme != endpoint.Scheme || ru.Host != endpoint.Host || !strings.HasPrefix(endpoint.Path, strings.TrimSuffix(ru.Path, "/")) {
			return nil, fmt.Errorf("protected resource metadata at %s names resource %q, not this server (%s)", u, clip(m.Resource, 100), endpoint)
		}
		if len(m.AuthorizationServers) == 0 {
			return nil, fmt.Errorf("protected resource metadata at %s names no authorization server", u)
		}
		return &m, nil
	}
	return nil, fmt.Errorf("no protected resource metadata for %s", endpoint)
}

// discoverAS fetches the authorization server's metadata and checks its
// issuer exactly.
func (o *OAuth) discoverAS(ctx context.Context, issuer string) (*asMeta, error) {
	iu, err := url.Parse(issuer)
	if err != nil || iu.Host == "" {
		return nil, fmt.Errorf("authorization server %q is not a URL", clip(issuer, 100))
	}
	if err := endpointAllowed(issuer); err != nil {
		return nil, err
	}
	origin := iu.Scheme + "://" + iu.Host
	p := strings.TrimSuffix(iu.Path, "/")
	var cands []string
	if p == "" {
		cands = []string{origin + "/.well-known/oauth-authorization-server", origin + "/.well-known/openid-configuration"}
	} else {
		cands = []string{origin + "/.well-known/oauth-authorization-server" + p, origin + "/.well-known/openid-configuration" + p, origin + p + "/.well-known/openid-configuration"}
	}
	for _, u := range cands {
		resp, body, err := o.get(ctx, u)
		if err != nil {
			return nil, fmt.Errorf("authorization server metadata at %s: %w", u, err)
		}
		if resp.StatusCode >= 400 && resp.StatusCode < 500 {
			continue
		}
		if resp.StatusCode != http.StatusOK {
			return nil, fmt.Errorf("authorization server metadata at %s: HTTP %s", u, resp.Status)
		}
		var m asMeta
		if err := json.Unmarshal(body, &m); err != nil {
			return nil, fmt.Errorf("authorization server metadata at %s does not decode: %w", u, err)
		}
		if m.Issuer != issuer {
			return nil, fmt.Errorf("authorization server metadata at %s names issuer %q, not %q: refused", u, clip(m.Issuer, 100), clip(issuer, 100))
		}
		for _, e := range []string{m.AuthorizationEndpoint, m.TokenEndpoint, m.RegistrationEndpoint} {
			if e != "" {
				if err := endpointAllowed(e); err != nil {
					return nil, err
				}
			}
		}
		return &m, nil
	}
	return nil, fmt.Errorf("no authorization server metadata for %s", issuer)
}

// endpointAllowed refuses an authorization endpoint over plain http off
// loopback: credentials and codes would travel in the clear.
func endpointAllowed(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("%q is not a URL", clip(raw, 100))
	}
	if u.Scheme == "https" || (u.Scheme == "http" && loopback(u.Hostname())) {
		return nil
	}
	return fmt.Errorf("%w: %s", ErrInsecureToken, clip(raw, 100))
}

// client returns the client identity to use at the authorization server
// as, registering one when needed. Identities are kept by issuer, so one
// server's client_id never goes to another.
func (o *OAuth) client(ctx context.Context, as *asMeta) (clientAuth, error) {
	if r, ok := o.clients[as.Issuer]; ok {
		return r, nil
	}
	var r clientAuth
	switch {
	case o.cfg.ClientID != "" && (o.cfg.ClientIssuer == "" || o.cfg.ClientIssuer == as.Issuer):
		r = clientAuthFor(o.cfg.ClientID, o.cfg.ClientSecret, nil, as.TokenEndpointAuthMethodsSupported)
	case o.cfg.ClientMetadataURL != "" && as.CIMDSupported:
		r = clientAuth{id: o.cfg.ClientMetadataURL, method: "none"}
	case as.RegistrationEndpoint != "":
		var err error
		if r, err = o.register(ctx, as); err != nil {
			return r, err
		}
	default:
		return r, fmt.Errorf("authorization server %s offers no way to get a client identity (no registration endpoint, no client metadata documents) and none is configured", as.Issuer)
	}
	o.clients[as.Issuer] = r
	return r, nil
}

// register registers the client dynamically (RFC 7591).
func (o *OAuth) register(ctx context.Context, as *asMeta) (clientAuth, error) {
	method := "none"
	if sup := as.TokenEndpointAuthMethodsSupported; len(sup) > 0 && !slices.Contains(sup, "none") {
		method = sup[0]
		for _, m := range []string{"client_secret_basic", "client_secret_post"} {
			if slices.Contains(sup, m) {
				method = m
				break
			}
		}
	}
	name := o.cfg.ClientName
	if name == "" {
		name = "mrtrkit-client"
	}
	body, _ := json.Marshal(map[string]any{
		"redirect_uris":              []string{o.cfg.RedirectURL},
		"client_name":                name,
		"grant_types":                []string{"authorization_code", "refresh_token"},
		"response_types":             []string{"code"},
		"token_endpoint_auth_method": method,
		"application_type":           "native",
	})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, as.RegistrationEndpoint, bytes.NewReader(body))
	if err != nil {
		return clientAuth{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := o.hc.Do(req)
	if err != nil {
		return clientAuth{}, fmt.Errorf("registering the client: %w", err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode != http.StatusCreated && resp.StatusCode != http.StatusOK {
		return clientAuth{}, fmt.Errorf("registering the client: HTTP %s: %s", resp.Status, clip(string(b), 200))
	}
	var out struct {
		ClientID     string `json:"client_id"`
		ClientSecret string `json:"client_secret"`
		Method       string `json:"token_endpoint_auth_method"`
	}
	if err := json.Unmarshal(b, &out); err != nil || out.ClientID == "" {
		return clientAuth{}, fmt.Errorf("the registration response has no client_id")
	}
	if out.Method == "" {
		out.Method = "client_secret_basic" // RFC 7591 §2
		if out.ClientSecret == "" {
			out.Method = "none"
		}
	}
	return clientAuth{id: out.ClientID, secret: out.ClientSecret, method: out.Method}, nil
}

func randomString(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// authorize runs one authorization: discovery, identity, the user's
// consent through Browser, the code exchange.
func (o *OAuth) authorize(ctx context.Context, endpoint *url.URL, hint string, scopes []string) error {
	if o.cfg.Browser == nil {
		return errors.New("the server wants authorization and OAuthConfig.Browser is not set")
	}
	pr, err := o.discoverPRM(ctx, endpoint, hint)
	if err != nil {
		return err
	}
	issuer := pr.AuthorizationServers[0]
	as, err := o.discoverAS(ctx, issuer)
	if err != nil {
		return err
	}
	if !slices.Contains(as.CodeChallengeMethodsSupported, "S256") {
		return fmt.Errorf("authorization server %s does not support PKCE S256", issuer)
	}
	cl, err := o.client(ctx, as)
	if err != nil {
		return err
	}
	if len(scopes) == 0 {
		scopes = pr.ScopesSupported
	}
	if len(scopes) > 0 && slices.Contains(as.ScopesSupported, "offline_access") && !slices.Contains(scopes, "offline_access") {
		scopes = append(append([]string(nil), scopes...), "offline_access")
	}
	style := oauth2.AuthStyleInParams
	if cl.method == "client_secret_basic" {
		style = oauth2.AuthStyleInHeader
	}
	secret := cl.secret
	if cl.method == "none" {
		secret = ""
	}
	conf := &oauth2.Config{
		ClientID:     cl.id,
		ClientSecret: secret,
		Endpoint:     oauth2.Endpoint{AuthURL: as.AuthorizationEndpoint, TokenURL: as.TokenEndpoint, AuthStyle: style},
		RedirectURL:  o.cfg.RedirectURL,
		Scopes:       scopes,
	}
	verifier := oauth2.GenerateVerifier()
	state := randomString(24)
	resource := oauth2.SetAuthURLParam("resource", pr.Resource)
	authURL := conf.AuthCodeURL(state, oauth2.S256ChallengeOption(verifier), resource)
	back, err := o.cfg.Browser(ctx, authURL)
	if err != nil {
		return fmt.Errorf("authorization at %s: %w", as.AuthorizationEndpoint, err)
	}
	bu, err := url.Parse(back)
	if err != nil {
		return fmt.Errorf("the authorization response %q is not a URL", clip(back, 100))
	}
	q := bu.Query()
	if e := q.Get("error"); e != "" {
		return fmt.Errorf("the authorization server refused: %s %s", clip(e, 60), clip(q.Get("error_description"), 200))
	}
	if q.Get("state") != state {
		return errors.New("the authorization response's state does not match the request's: refused")
	}
	// RFC 9207: a present iss must be the issuer, byte for byte; an
	// advertised one must be present.
	if iss, ok := q["iss"]; ok {
		if len(iss) != 1 || iss[0] != as.Issuer {
			return fmt.Errorf("the authorization response comes from issuer %q, not %q: refused", clip(strings.Join(iss, ","), 100), as.Issuer)
		}
	} else if as.IssParameterSupported {
		return errors.New("the authorization server promised an iss parameter and sent none: refused")
	}
	code := q.Get("code")
	if code == "" {
		return errors.New("the authorization response has no code")
	}
	hctx := context.WithValue(ctx, oauth2.HTTPClient, o.tokenClient())
	tok, err := conf.Exchange(hctx, code, oauth2.VerifierOption(verifier), resource)
	if err != nil {
		return fmt.Errorf("the token request to %s: %w", as.TokenEndpoint, err)
	}
	o.token, o.tokenTyp = tok.AccessToken, tok.Type()
	o.refresh = nil
	if tok.RefreshToken != "" {
		o.refresh = &refresher{token: tok.RefreshToken, expiry: tok.Expiry, endpoint: as.TokenEndpoint, resource: pr.Resource, client: cl}
	}
	o.issuer = as.Issuer
	o.granted = scopes
	if s, ok := tok.Extra("scope").(string); ok && s != "" {
		o.granted = strings.Fields(s)
	}
	return nil
}
