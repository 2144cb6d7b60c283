package oauth_test

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"strings"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mrtrkit/mrtrkit/oauth"
)

// staticVerifier returns a verifier that knows key, on clk.
func staticVerifier(t *testing.T, clk *clock, keys ...signingKey) *oauth.Verifier {
	t.Helper()
	var ks []oauth.Key
	for _, k := range keys {
		ks = append(ks, oauth.Key{ID: k.kid, Public: k.public()})
	}
	v, err := oauth.NewVerifier(oauth.Config{
		Issuer: testIssuer, Audience: testResource, Keys: ks, Now: clk.Now,
		Algorithms: []string{"RS256", "ES256", "EdDSA"},
	})
	require.NoError(t, err)
	return v
}

func TestVerifyValidToken(t *testing.T) {
	clk := newClock()
	for _, alg := range []jose.SignatureAlgorithm{jose.ES256, jose.RS256, jose.EdDSA} {
		t.Run(string(alg), func(t *testing.T) {
			k := newKey(t, "k1", alg)
			v := staticVerifier(t, clk, k)
			info, err := v.Verify(context.Background(), sign(t, k, claimsAt(clk.Now())))
			require.NoError(t, err)
			assert.Equal(t, "ada", info.Subject)
			assert.Equal(t, []string{"files:read", "files:write"}, info.Scopes)
			assert.Equal(t, []string{testResource}, info.Audience)
			assert.Equal(t, clk.Now().Add(5*time.Minute).Unix(), info.Expiry.Unix())
			assert.Equal(t, "client-1", info.Extra["client_id"])
			assert.Equal(t, testIssuer, info.Extra["iss"])
			assert.Equal(t, "t-1", info.Extra["jti"])
			for _, c := range []string{"sub", "aud", "exp", "scope", "scp"} {
				assert.NotContains(t, info.Extra, c)
			}
		})
	}
}

// Every refusal wraps ErrInvalidToken, says what was wrong, and never
// contains the token.
func TestVerifyRefusals(t *testing.T) {
	clk := newClock()
	now := clk.Now()
	good := newKey(t, "k1", jose.ES256)
	other := newKey(t, "k2", jose.ES256)
	sameKid := newKey(t, "k1", jose.ES256) // another key under a known kid
	v := staticVerifier(t, clk, good)
	base := claimsAt(now)

	none := func(claims map[string]any) string {
		h, _ := json.Marshal(map[string]string{"alg": "none", "typ": "JWT", "kid": "k1"})
		p, _ := json.Marshal(claims)
		return base64.RawURLEncoding.EncodeToString(h) + "." + base64.RawURLEncoding.EncodeToString(p) + "."
	}

	cases := []struct {
		name  string
		token string
		want  string
	}{
		{"wrong audience", sign(t, good, with(base, "aud", "https://other.example.com/mcp")), "wrong audience"},
		{"audience array without ours", sign(t, good, with(base, "aud", []string{"https://a.example", "https://b.example"})), "wrong audience"},
		{"audience with trailing slash", sign(t, good, with(base, "aud", testResource+"/")), "wrong audience"},
		{"no audience", sign(t, good, with(base, "aud", nil)), "no audience"},
		{"expired", sign(t, good, with(base, "exp", now.Add(-time.Minute).Unix())), "expired"},
		{"not yet valid", sign(t, good, with(base, "nbf", now.Add(time.Minute).Unix())), "not valid before"},
		{"issued in the future", sign(t, good, with(base, "iat", now.Add(time.Hour).Unix())), "issued in the future"},
		{"wrong issuer", sign(t, good, with(base, "iss", "https://evil.example.com")), "wrong issuer"},
		{"no issuer", sign(t, good, with(base, "iss", nil)), "wrong issuer"},
		{"unknown key", sign(t, other, base), "unknown key"},
		{"known kid, other key", sign(t, sameKid, base), "bad signature"},
		{"alg none", none(base), "algorithm \"none\" is not accepted"},
		{"missing sub", sign(t, good, with(base, "sub", nil)), "no subject"},
		{"empty sub", sign(t, good, with(base, "sub", "")), "no subject"},
		{"missing exp", sign(t, good, with(base, "exp", nil)), "no expiry"},
		{"exp not a number", sign(t, good, with(base, "exp", "tomorrow")), "malformed claims"},
		{"scope not a string", sign(t, good, with(base, "scope", 7)), "scope claim"},
		{"malformed", "not.a.jwt", "malformed"},
		{"empty", "", "empty token"},
		{"too long", strings.Repeat("a", oauth.MaxTokenBytes+1), "longer than"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			info, err := v.Verify(context.Background(), c.token)
			require.Error(t, err)
			assert.Nil(t, info)
			assert.True(t, errors.Is(err, oauth.ErrInvalidToken), "%v", err)
			assert.Contains(t, err.Error(), c.want)
			if c.token != "" {
				assert.NotContains(t, err.Error(), c.token)
				if parts := strings.Split(c.token, "."); len(parts) == 3 && parts[2] != "" {
					assert.NotContains(t, err.Error(), parts[2], "the signature is not echoed")
				}
			}
		})
	}
}

// An audience array containing this resource is accepted, and so is a
// token within the leeway of its expiry.
func TestVerifyAccepts(t *testing.T) {
	clk := newClock()
	now := clk.Now()
	k := newKey(t, "k1", jose.ES256)
	v := staticVerifier(t, clk, k)
	for name, claims := range map[string]map[string]any{
		"audience array":        with(claimsAt(now), "aud", []string{"https://other.example", testResource}),
		"expired within leeway": with(claimsAt(now), "exp", now.Add(-10*time.Second).Unix()),
		"nbf within leeway":     with(claimsAt(now), "nbf", now.Add(10*time.Second).Unix()),
		"no iat":                with(claimsAt(now), "iat", nil),
		"no kid":                claimsAt(now),
	} {
		t.Run(name, func(t *testing.T) {
			key := k
			if name == "no kid" {
				key.kid = ""
			}
			info, err := v.Verify(context.Background(), sign(t, key, claims))
			require.NoError(t, err)
			assert.Equal(t, "ada", info.Subject)
		})
	}
}

// A key given without an ID checks tokens whatever their kid.
func TestVerifyKeyWithoutID(t *testing.T) {
	clk := newClock()
	k := newKey(t, "issuer-kid", jose.ES256)
	v, err := oauth.NewVerifier(oauth.Config{Issuer: testIssuer, Audience: testResource, Now: clk.Now,
		Keys: []oauth.Key{{Public: k.public()}}})
	require.NoError(t, err)
	_, err = v.Verify(context.Background(), sign(t, k, claimsAt(clk.Now())))
	require.NoError(t, err)
	other := newKey(t, "issuer-kid", jose.ES256)
	_, err = v.Verify(context.Background(), sign(t, other, claimsAt(clk.Now())))
	require.ErrorIs(t, err, oauth.ErrInvalidToken)
	assert.Contains(t, err.Error(), "unknown key")
}

func TestVerifyLeewayConfig(t *testing.T) {
	clk := newClock()
	now := clk.Now()
	k := newKey(t, "k1", jose.ES256)
	v, err := oauth.NewVerifier(oauth.Config{Issuer: testIssuer, Audience: testResource, Now: clk.Now,
		Keys: []oauth.Key{{ID: "k1", Public: k.public()}}, Leeway: -1})
	require.NoError(t, err)
	_, err = v.Verify(context.Background(), sign(t, k, with(claimsAt(now), "exp", now.Add(-time.Second).Unix())))
	assert.ErrorContains(t, err, "expired", "no leeway")
}

// An HS256 token whose secret is the RSA public key (the classic
// algorithm confusion) is refused: HS256 is not accepted by default, and
// even where it is, a public key is never used as an HMAC secret.
func TestVerifyAlgorithmConfusion(t *testing.T) {
	clk := newClock()
	rk := newKey(t, "rsa", jose.RS256)
	der, err := x509.MarshalPKIXPublicKey(rk.public())
	require.NoError(t, err)
	pemBytes := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
	hmacSign := func(secret []byte, kid string) string {
		signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.HS256, Key: secret},
			(&jose.SignerOptions{}).WithType("at+jwt").WithHeader("kid", kid))
		require.NoError(t, err)
		tok, err := jwt.Signed(signer).Claims(claimsAt(clk.Now())).Serialize()
		require.NoError(t, err)
		return tok
	}
	confused := hmacSign(pemBytes, "rsa")

	v := staticVerifier(t, clk, rk)
	_, err = v.Verify(context.Background(), confused)
	require.ErrorIs(t, err, oauth.ErrInvalidToken)
	assert.Contains(t, err.Error(), `algorithm "HS256" is not accepted`)

	// HS256 explicitly accepted with a real secret: the RSA key under the
	// token's kid is still not taken for an HMAC key.
	secret := make([]byte, 32)
	_, _ = rand.Read(secret)
	v2, err := oauth.NewVerifier(oauth.Config{Issuer: testIssuer, Audience: testResource, Now: clk.Now,
		Algorithms: []string{"RS256", "HS256"},
		Keys:       []oauth.Key{{ID: "rsa", Public: rk.public()}, {ID: "hmac", Secret: secret}}})
	require.NoError(t, err)
	_, err = v2.Verify(context.Background(), confused)
	require.ErrorIs(t, err, oauth.ErrInvalidToken)
	assert.Contains(t, err.Error(), "unknown key")
	// The shared secret itself works.
	info, err := v2.Verify(context.Background(), hmacSign(secret, "hmac"))
	require.NoError(t, err)
	assert.Equal(t, "ada", info.Subject)
	// And the RSA key still verifies RS256.
	_, err = v2.Verify(context.Background(), sign(t, rk, claimsAt(clk.Now())))
	require.NoError(t, err)
}

func TestVerifyScopes(t *testing.T) {
	clk := newClock()
	k := newKey(t, "k1", jose.ES256)
	v := staticVerifier(t, clk, k)
	base := with(claimsAt(clk.Now()), "scope", nil)
	for _, c := range []struct {
		name   string
		claims map[string]any
		want   []string
	}{
		{"scope string, split on SP", with(base, "scope", "files:read files:write"), []string{"files:read", "files:write"}},
		{"every allowed character", with(base, "scope", "!#$%&'()*+,-./09:;<=>?@AZ[]^_`az{|}~"), []string{"!#$%&'()*+,-./09:;<=>?@AZ[]^_`az{|}~"}},
		{"empty string", with(base, "scope", ""), nil},
		{"scope array", with(base, "scope", []string{"a", "b"}), []string{"a", "b"}},
		{"scp array, one token each", with(base, "scp", []string{"files:read", "admin"}), []string{"files:read", "admin"}},
		{"scp string, like scope", with(base, "scp", "files:read admin"), []string{"files:read", "admin"}},
		{"both, merged", with(base, "scope", "a b", "scp", []string{"b", "c"}), []string{"a", "b", "c"}},
		{"none", base, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			info, err := v.Verify(context.Background(), sign(t, k, c.claims))
			require.NoError(t, err)
			assert.Equal(t, c.want, info.Scopes)
		})
	}
}

// With Types set, only RFC 9068 access tokens are accepted.
func TestVerifyTypes(t *testing.T) {
	clk := newClock()
	k := newKey(t, "k1", jose.ES256)
	v, err := oauth.NewVerifier(oauth.Config{Issuer: testIssuer, Audience: testResource, Now: clk.Now,
		Keys: []oauth.Key{{ID: "k1", Public: k.public()}}, Types: []string{"application/at+jwt"}})
	require.NoError(t, err)
	_, err = v.Verify(context.Background(), sign(t, k, claimsAt(clk.Now())))
	require.NoError(t, err)

	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: k.alg, Key: jose.JSONWebKey{Key: k.priv, KeyID: k.kid}},
		(&jose.SignerOptions{}).WithType("JWT"))
	require.NoError(t, err)
	idToken, err := jwt.Signed(signer).Claims(claimsAt(clk.Now())).Serialize()
	require.NoError(t, err)
	_, err = v.Verify(context.Background(), idToken)
	require.ErrorIs(t, err, oauth.ErrInvalidToken)
	assert.Contains(t, err.Error(), `token type "JWT"`)
}

func TestNewVerifierConfig(t *testing.T) {
	k := newKey(t, "k1", jose.ES256)
	keys := []oauth.Key{{ID: "k1", Public: k.public()}}
	small, err := rsa.GenerateKey(rand.Reader, 1024)
	require.NoError(t, err)
	for _, c := range []struct {
		name string
		cfg  oauth.Config
		want string
	}{
		{"no issuer", oauth.Config{Audience: testResource, Keys: keys}, "Issuer"},
		{"no audience", oauth.Config{Issuer: testIssuer, Keys: keys}, "Audience"},
		{"no keys", oauth.Config{Issuer: testIssuer, Audience: testResource}, "no keys"},
		{"alg none", oauth.Config{Issuer: testIssuer, Audience: testResource, Keys: keys, Algorithms: []string{"none"}}, `"none" is not supported`},
		{"HS without secret", oauth.Config{Issuer: testIssuer, Audience: testResource, Keys: keys, Algorithms: []string{"ES256", "HS256"}}, "HS algorithm"},
		{"secret without HS", oauth.Config{Issuer: testIssuer, Audience: testResource, Keys: []oauth.Key{{Secret: make([]byte, 32)}}}, "HS algorithm"},
		{"short secret", oauth.Config{Issuer: testIssuer, Audience: testResource, Algorithms: []string{"HS256"}, Keys: []oauth.Key{{Secret: make([]byte, 16)}}}, "32 bytes"},
		{"small RSA key", oauth.Config{Issuer: testIssuer, Audience: testResource, Keys: []oauth.Key{{Public: &small.PublicKey}}}, "2048"},
		{"private key", oauth.Config{Issuer: testIssuer, Audience: testResource, Keys: []oauth.Key{{Public: k.priv}}}, "public key"},
		{"JWKS over http", oauth.Config{Issuer: testIssuer, Audience: testResource, JWKSURL: "http://auth.example.com/jwks"}, "https"},
		{"key algorithm not accepted", oauth.Config{Issuer: testIssuer, Audience: testResource, Keys: []oauth.Key{{Public: k.public(), Algorithm: "ES256"}}, Algorithms: []string{"RS256"}}, "not among"},
		{"key algorithm does not fit", oauth.Config{Issuer: testIssuer, Audience: testResource, Keys: []oauth.Key{{Public: k.public(), Algorithm: "ES384"}}}, "does not fit"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := oauth.NewVerifier(c.cfg)
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
		})
	}
}

func TestParseJWKS(t *testing.T) {
	clk := newClock()
	k := newKey(t, "k1", jose.ES256)
	priv := jose.JSONWebKey{Key: k.priv, KeyID: "k1", Algorithm: "ES256"}
	enc := jose.JSONWebKey{Key: k.public(), KeyID: "e1", Use: "enc"}
	doc, err := json.Marshal(map[string]any{"keys": []any{priv, enc, map[string]string{"kty": "unknown", "kid": "x"}}})
	require.NoError(t, err)
	keys, err := oauth.ParseJWKS(doc)
	require.NoError(t, err)
	require.Len(t, keys, 1, "the encryption key and the unknown kind are left out")
	assert.Equal(t, "k1", keys[0].ID)
	assert.Equal(t, "ES256", keys[0].Algorithm)
	v, err := oauth.NewVerifier(oauth.Config{Issuer: testIssuer, Audience: testResource, Keys: keys, Now: clk.Now})
	require.NoError(t, err)
	_, err = v.Verify(context.Background(), sign(t, k, claimsAt(clk.Now())))
	require.NoError(t, err)

	_, err = oauth.ParseJWKS([]byte(`{"keys":[]}`))
	assert.Error(t, err)
	_, err = oauth.ParseJWKS([]byte(`nope`))
	assert.Error(t, err)
}
