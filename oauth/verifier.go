package oauth

import (
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	josejson "github.com/go-jose/go-jose/v4/json"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/mrtrkit/mrtrkit/mrtr"
)

// ErrInvalidToken is wrapped by every error Verify returns for a token it
// refuses. The error's text says what was wrong, for logs; it never
// contains the token.
var ErrInvalidToken = errors.New("oauth: invalid token")

// ErrKeySetUnavailable is wrapped, beside ErrInvalidToken, by the error
// of a token whose key could not be looked up because the JWK set could
// not be fetched.
var ErrKeySetUnavailable = errors.New("oauth: JWK set unavailable")

// Defaults of Config.
const (
	// DefaultLeeway is the clock skew allowed when checking exp, nbf and
	// iat.
	DefaultLeeway = 30 * time.Second
	// DefaultJWKSRefreshInterval is the shortest time between two fetches
	// of the JWK set.
	DefaultJWKSRefreshInterval = time.Minute
	// DefaultJWKSMaxAge is the longest time a fetched JWK set is used
	// before it is fetched again.
	DefaultJWKSMaxAge = 24 * time.Hour
	// DefaultJWKSMaxBytes bounds the size of a JWK set document.
	DefaultJWKSMaxBytes = 1 << 20
	// DefaultJWKSTimeout bounds one fetch of the JWK set, whatever the
	// http.Client's own timeout.
	DefaultJWKSTimeout = 10 * time.Second
)

// MaxTokenBytes bounds the length of a token Verify will parse.
const MaxTokenBytes = 16 << 10

// DefaultAlgorithms are the signature algorithms accepted when
// Config.Algorithms is empty.
var DefaultAlgorithms = []string{"RS256", "ES256", "EdDSA"}

// TypeAccessToken is the typ header of a JWT access token (RFC 9068
// section 2.1), the only one accepted unless Config.Types or
// Config.AllowAnyType says otherwise; "application/at+jwt" is the same
// type.
const TypeAccessToken = "at+jwt"

// Key is one key that may have signed tokens: an asymmetric public key,
// or a shared secret for HMAC.
type Key struct {
	// ID is the key ID, matched against the token's kid header. A token
	// with a kid is checked with the keys of that ID and those without
	// an ID; a token without a kid with every key that fits its
	// algorithm.
	ID string
	// Algorithm, when set, is the only algorithm the key is used with.
	Algorithm string
	// Public is an *rsa.PublicKey (of at least 2048 bits), an
	// *ecdsa.PublicKey (P-256, P-384 or P-521) or an ed25519.PublicKey.
	Public any
	// Secret is an HMAC key, used only when Config.Algorithms names an
	// HS algorithm; it must be at least as long as the hash (32 bytes
	// for HS256). Set Public or Secret, not both.
	Secret []byte
}

// Config configures a Verifier. Issuer, Audience and at least one key
// source (Keys or JWKSURL) are required.
type Config struct {
	// Issuer is the authorization server's issuer identifier; the
	// token's iss must equal it.
	Issuer string
	// Audience is this resource's identifier, its canonical URL (the
	// Resource of its Metadata); the token's aud must contain it,
	// compared exactly (RFC 8707, RFC 9068 section 4).
	Audience string
	// Algorithms are the JWS algorithms accepted (default
	// DefaultAlgorithms). "none" is never accepted; an HS algorithm only
	// with a Key that has a Secret.
	Algorithms []string
	// Leeway is the clock skew allowed when checking exp, nbf and iat:
	// 0 means DefaultLeeway, a negative value none.
	Leeway time.Duration
	// Types are the typ header values accepted, compared without case
	// and without an "application/" prefix. When empty, only
	// TypeAccessToken is: "at+jwt" or "application/at+jwt", as RFC 9068
	// section 4 requires, so that another JWT of the issuer (an ID token
	// whose aud is a client ID equal to this resource, say) is not taken
	// for an access token.
	Types []string
	// AllowAnyType turns the typ check off, for authorization servers
	// that send "JWT" or no typ on access tokens. Any JWT the issuer
	// signs with this resource in aud, a sub and an exp is then accepted
	// as an access token, ID tokens and other issuer-signed JWTs
	// included; prefer naming the issuer's typ in Types. It cannot be
	// combined with Types.
	AllowAnyType bool
	// Keys are keys given in code (see ParseJWKS for a JWK set). They
	// are tried before those of JWKSURL.
	Keys []Key
	// JWKSURL is where the issuer publishes its JWK set, usually the
	// jwks_uri of its metadata. It must be https (http is accepted on
	// loopback hosts), and it must be the final address: a fetch
	// answered with a redirect (30x) fails, as a redirect could lead to
	// plain http or to another host. The set is fetched when first
	// needed, kept as long as its Cache-Control max-age says (within
	// JWKSRefreshInterval and JWKSMaxAge; an hour when it says
	// nothing), and fetched again early when a token names a kid it
	// lacks, but never twice within JWKSRefreshInterval. When a fetch
	// fails, the keys fetched last are kept.
	JWKSURL string
	// HTTPClient fetches the JWK set (default: one with a timeout of
	// DefaultJWKSTimeout). The Verifier uses a copy of it whose
	// CheckRedirect refuses every redirect, so that keys come only from
	// JWKSURL itself; the client given is not changed.
	HTTPClient *http.Client
	// JWKSRefreshInterval is the shortest time between two fetches
	// (default DefaultJWKSRefreshInterval), so that tokens naming
	// unknown keys cannot make the verifier flood the issuer.
	JWKSRefreshInterval time.Duration
	// JWKSMaxAge is the longest a fetched set is used before it is
	// fetched again (default DefaultJWKSMaxAge).
	JWKSMaxAge time.Duration
	// JWKSMaxBytes bounds the JWK set document (default
	// DefaultJWKSMaxBytes).
	JWKSMaxBytes int64
	// Now returns the current time (default time.Now); for tests.
	Now func() time.Time
}

// Verifier checks JWT access tokens (RFC 9068) issued for one resource by
// one issuer. It is safe for concurrent use.
type Verifier struct {
	issuer   string
	audience string
	algs     []jose.SignatureAlgorithm
	leeway   time.Duration
	types    []string
	static   []Key
	remote   *remoteKeys
	now      func() time.Time
}

// hashSize is the minimum HMAC key length of each HS algorithm.
var hashSize = map[string]int{"HS256": 32, "HS384": 48, "HS512": 64}

// knownAlgorithms are the signature algorithms a Verifier can check.
var knownAlgorithms = []string{
	"RS256", "RS384", "RS512", "PS256", "PS384", "PS512",
	"ES256", "ES384", "ES512", "EdDSA", "HS256", "HS384", "HS512",
}

// NewVerifier returns a Verifier for cfg, or an error naming what is
// missing or unsafe in it.
func NewVerifier(cfg Config) (*Verifier, error) {
	if cfg.Issuer == "" {
		return nil, errors.New("oauth: Config.Issuer is required")
	}
	if cfg.Audience == "" {
		return nil, errors.New("oauth: Config.Audience (the resource identifier) is required")
	}
	v := &Verifier{issuer: cfg.Issuer, audience: cfg.Audience, now: cfg.Now}
	if v.now == nil {
		v.now = time.Now
	}
	switch {
	case cfg.Leeway == 0:
		v.leeway = DefaultLeeway
	case cfg.Leeway > 0:
		v.leeway = cfg.Leeway
	}
	algs := cfg.Algorithms
	if len(algs) == 0 {
		algs = DefaultAlgorithms
	}
	hmac := false
	for _, a := range algs {
		if !slices.Contains(knownAlgorithms, a) {
			return nil, fmt.Errorf("oauth: algorithm %q is not supported", a)
		}
		if !slices.Contains(v.algs, jose.SignatureAlgorithm(a)) {
			v.algs = append(v.algs, jose.SignatureAlgorithm(a))
		}
		hmac = hmac || hashSize[a] > 0
	}
	secret := false
	for i, k := range cfg.Keys {
		if err := checkKey(k); err != nil {
			return nil, fmt.Errorf("oauth: Config.Keys[%d]: %w", i, err)
		}
		if k.Algorithm != "" && !slices.Contains(algs, k.Algorithm) {
			return nil, fmt.Errorf("oauth: Config.Keys[%d]: algorithm %q is not among Config.Algorithms", i, k.Algorithm)
		}
		secret = secret || k.Secret != nil
		v.static = append(v.static, k)
	}
	if hmac && !secret {
		return nil, errors.New("oauth: an HS algorithm is accepted only with a Key that has a Secret")
	}
	if secret && !hmac {
		return nil, errors.New("oauth: a Key with a Secret needs an HS algorithm in Config.Algorithms")
	}
	switch {
	case cfg.AllowAnyType && len(cfg.Types) > 0:
		return nil, errors.New("oauth: set Config.Types or Config.AllowAnyType, not both")
	case cfg.AllowAnyType:
	case len(cfg.Types) == 0:
		v.types = []string{TypeAccessToken}
	default:
		for _, t := range cfg.Types {
			v.types = append(v.types, normalType(t))
		}
	}
	if cfg.JWKSURL != "" {
		r, err := newRemoteKeys(cfg, v.now)
		if err != nil {
			return nil, err
		}
		v.remote = r
	}
	if len(v.static) == 0 && v.remote == nil {
		return nil, errors.New("oauth: no keys: set Config.Keys or Config.JWKSURL")
	}
	return v, nil
}

// checkKey reports what makes k unusable.
func checkKey(k Key) error {
	switch {
	case k.Public != nil && k.Secret != nil:
		return errors.New("set Public or Secret, not both")
	case k.Secret != nil:
		if len(k.Secret) < 32 {
			return errors.New("an HMAC secret must be at least 32 bytes")
		}
		if k.Algorithm != "" && hashSize[k.Algorithm] == 0 {
			return fmt.Errorf("a secret cannot be used with %q", k.Algorithm)
		}
		return nil
	}
	switch p := k.Public.(type) {
	case *rsa.PublicKey:
		if p == nil || p.N == nil || p.N.BitLen() < 2048 {
			return errors.New("RSA keys must have at least 2048 bits")
		}
	case *ecdsa.PublicKey:
		if p == nil || (p.Curve != elliptic.P256() && p.Curve != elliptic.P384() && p.Curve != elliptic.P521()) {
			return errors.New("EC keys must be on P-256, P-384 or P-521")
		}
	case ed25519.PublicKey:
		if len(p) != ed25519.PublicKeySize {
			return errors.New("bad Ed25519 public key")
		}
	case nil:
		return errors.New("no key: set Public or Secret")
	default:
		return fmt.Errorf("unsupported key type %T (give a public key)", k.Public)
	}
	if k.Algorithm != "" && !fits(k.Algorithm, k) {
		return fmt.Errorf("algorithm %q does not fit a %T", k.Algorithm, k.Public)
	}
	return nil
}

// curveOf is the curve of each ES algorithm.
var curveOf = map[string]elliptic.Curve{"ES256": elliptic.P256(), "ES384": elliptic.P384(), "ES512": elliptic.P521()}

// fits reports whether k can check a signature made with alg.
func fits(alg string, k Key) bool {
	if k.Algorithm != "" && k.Algorithm != alg {
		return false
	}
	switch alg {
	case "RS256", "RS384", "RS512", "PS256", "PS384", "PS512":
		_, ok := k.Public.(*rsa.PublicKey)
		return ok
	case "ES256", "ES384", "ES512":
		p, ok := k.Public.(*ecdsa.PublicKey)
		if !ok {
			return false
		}
		return p.Curve == curveOf[alg]
	case "EdDSA":
		_, ok := k.Public.(ed25519.PublicKey)
		return ok
	case "HS256", "HS384", "HS512":
		return k.Public == nil && len(k.Secret) >= hashSize[alg]
	}
	return false
}

// normalType lower-cases a media type and drops "application/".
func normalType(t string) string {
	t = strings.ToLower(strings.TrimSpace(t))
	return strings.TrimPrefix(t, "application/")
}

// Verify checks a JWT access token: its typ header (at+jwt unless
// Config.Types or Config.AllowAnyType says otherwise), its signature
// (with an accepted algorithm and a known key), its issuer, that its
// audience contains this resource, that it has an expiry and is within
// its validity period (exp, and nbf and iat when present, with the
// leeway), and that it names a subject. It returns what the token says:
// the subject, the scopes of its scope claim and scp claim (each a scope
// list separated by single spaces, or an array of scope tokens; RFC 6749
// section 3.3 syntax, or the token is refused), the audience, the expiry,
// and in Extra every claim but sub, aud, exp, scope and scp (iss, iat,
// jti, client_id and the like). Its signature fits
// streamablehttp.BearerAuthenticator.
func (v *Verifier) Verify(ctx context.Context, token string) (*mrtr.TokenInfo, error) {
	if token == "" {
		return nil, invalid("empty token")
	}
	if len(token) > MaxTokenBytes {
		return nil, invalid("token longer than %d bytes", MaxTokenBytes)
	}
	jws, err := jose.ParseSignedCompact(token, v.algs)
	if err != nil {
		var alg *jose.ErrUnexpectedSignatureAlgorithm
		if errors.As(err, &alg) {
			return nil, invalid("signature algorithm %s is not accepted", short(string(alg.Got)))
		}
		return nil, invalid("malformed token (not a compact JWS)")
	}
	if len(jws.Signatures) != 1 {
		return nil, invalid("not exactly one signature")
	}
	hdr := jws.Signatures[0].Header
	if len(v.types) > 0 {
		typ, _ := hdr.ExtraHeaders[jose.HeaderType].(string)
		if !slices.Contains(v.types, normalType(typ)) {
			return nil, invalid("token type %s is not accepted", short(typ))
		}
	}
	payload, err := v.check(ctx, jws, hdr.Algorithm, hdr.KeyID)
	if err != nil {
		return nil, err
	}
	return v.claims(payload)
}

// check verifies the signature with the keys that fit the token's kid and
// alg, asking the JWK set again when none does, and returns the payload.
func (v *Verifier) check(ctx context.Context, jws *jose.JSONWebSignature, alg, kid string) ([]byte, error) {
	tried, named := 0, 0 // keys tried, and those among them named by kid
	try := func(keys []Key) []byte {
		for _, k := range keys {
			if (kid != "" && k.ID != "" && k.ID != kid) || !fits(alg, k) {
				continue
			}
			tried++
			if kid != "" && k.ID == kid {
				named++
			}
			var key any = k.Public
			if k.Secret != nil {
				key = k.Secret
			}
			if payload, err := jws.Verify(key); err == nil {
				return payload
			}
		}
		return nil
	}
	if p := try(v.static); p != nil {
		return p, nil
	}
	var fetchErr error
	if v.remote != nil {
		keys, err := v.remote.keys(ctx, false)
		if p := try(keys); p != nil {
			return p, nil
		}
		// The issuer may have rotated its keys since the set was
		// fetched: ask again (at most once per refresh interval).
		if kid == "" || named == 0 {
			keys, err = v.remote.keys(ctx, true)
			if p := try(keys); p != nil {
				return p, nil
			}
		}
		fetchErr = err
	}
	switch {
	case tried > 0 && (kid == "" || named > 0):
		return nil, invalid("bad signature (key %s, algorithm %s)", short(kid), alg)
	case fetchErr != nil:
		return nil, fmt.Errorf("%w: no key %s for algorithm %s: %w", ErrInvalidToken, short(kid), alg, fetchErr)
	default:
		return nil, invalid("unknown key %s for algorithm %s", short(kid), alg)
	}
}

// scopeClaims are the claims scopes are read from.
type scopeClaims struct {
	Scope any `json:"scope"`
	Scp   any `json:"scp"`
}

// claims checks the verified payload's claims and returns the TokenInfo.
func (v *Verifier) claims(payload []byte) (*mrtr.TokenInfo, error) {
	// go-jose's JSON decoder matches names exactly, so "ISS" or "Aud" is
	// not taken for iss or aud.
	var std jwt.Claims
	var sc scopeClaims
	var extra map[string]any
	if josejson.Unmarshal(payload, &std) != nil || josejson.Unmarshal(payload, &sc) != nil || josejson.Unmarshal(payload, &extra) != nil {
		return nil, invalid("malformed claims")
	}
	if std.Issuer != v.issuer {
		return nil, invalid("wrong issuer %s", short(std.Issuer))
	}
	if len(std.Audience) == 0 {
		return nil, invalid("no audience (aud)")
	}
	if !std.Audience.Contains(v.audience) {
		return nil, invalid("wrong audience: %s does not include this resource", short(strings.Join(std.Audience, " ")))
	}
	if std.Expiry == nil {
		return nil, invalid("no expiry (exp)")
	}
	now := v.now()
	if exp := std.Expiry.Time(); now.Add(-v.leeway).After(exp) {
		return nil, invalid("expired at %s", exp.UTC().Format(time.RFC3339))
	}
	if std.NotBefore != nil {
		if nbf := std.NotBefore.Time(); now.Add(v.leeway).Before(nbf) {
			return nil, invalid("not valid before %s", nbf.UTC().Format(time.RFC3339))
		}
	}
	if std.IssuedAt != nil {
		if iat := std.IssuedAt.Time(); now.Add(v.leeway).Before(iat) {
			return nil, invalid("issued in the future, at %s", iat.UTC().Format(time.RFC3339))
		}
	}
	if std.Subject == "" {
		return nil, invalid("no subject (sub)")
	}
	scopes, err := scopeList(nil, sc.Scope)
	if err == nil {
		scopes, err = scopeList(scopes, sc.Scp)
	}
	if err != nil {
		return nil, invalid("%v", err)
	}
	for _, c := range []string{"sub", "aud", "exp", "scope", "scp"} {
		delete(extra, c)
	}
	return &mrtr.TokenInfo{
		Subject:  std.Subject,
		Scopes:   scopes,
		Audience: []string(std.Audience),
		Expiry:   std.Expiry.Time(),
		Extra:    extra,
	}, nil
}

// scopeList appends the scopes of a scope or scp claim to list, leaving
// out duplicates. A string is a scope list in the syntax of RFC 6749
// section 3.3: scope tokens separated by single spaces (U+0020), each
// token 1*( %x21 / %x23-5B / %x5D-7E ); "" is no scope. Each element of
// an array is one scope token, never split. A claim that breaks this
// syntax is an error: splitting it any other way (on any Unicode space,
// say) would grant scopes hidden inside another, such as "admin" in a
// user-named "note:x\u00a0admin".
func scopeList(list []string, claim any) ([]string, error) {
	add := func(tok string) error {
		if !isScopeToken(tok) {
			return fmt.Errorf("scope %s is not a scope token (RFC 6749 section 3.3)", short(tok))
		}
		if !slices.Contains(list, tok) {
			list = append(list, tok)
		}
		return nil
	}
	switch c := claim.(type) {
	case nil:
	case string:
		if c == "" {
			break
		}
		for tok := range strings.SplitSeq(c, " ") {
			if err := add(tok); err != nil {
				return nil, err
			}
		}
	case []any:
		for _, e := range c {
			s, ok := e.(string)
			if !ok {
				return nil, errors.New("a scope is not a string")
			}
			if err := add(s); err != nil {
				return nil, err
			}
		}
	default:
		return nil, errors.New("the scope claim is neither a string nor an array")
	}
	return list, nil
}

// isScopeToken reports whether s is a scope-token of RFC 6749 section
// 3.3: one or more of the printable ASCII characters but space, '"' and
// '\'.
func isScopeToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x21 || c > 0x7e || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

// invalid returns an error wrapping ErrInvalidToken.
func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrInvalidToken}, args...)...)
}

// short quotes a value taken from a token for an error message, cut to a
// length fit for logs.
func short(s string) string {
	const max = 64
	if len(s) > max {
		return fmt.Sprintf("%q...", s[:max])
	}
	return fmt.Sprintf("%q", s)
}
