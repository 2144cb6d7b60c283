package oauth_test

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mrtrkit/mrtrkit/oauth"
)

const refreshEvery = time.Minute

// remoteVerifier returns a verifier that fetches its keys from s.
func remoteVerifier(t *testing.T, clk *clock, s *jwksServer, tweak ...func(*oauth.Config)) *oauth.Verifier {
	t.Helper()
	cfg := oauth.Config{
		Issuer: testIssuer, Audience: testResource, Now: clk.Now,
		JWKSURL: s.URL + "/jwks", HTTPClient: s.Client(), JWKSRefreshInterval: refreshEvery,
	}
	for _, f := range tweak {
		f(&cfg)
	}
	v, err := oauth.NewVerifier(cfg)
	require.NoError(t, err)
	return v
}

// Two verifications, one fetch: the set is cached.
func TestJWKSCaching(t *testing.T) {
	clk := newClock()
	k := newKey(t, "k1", jose.ES256)
	s := newJWKSServer(t, k)
	v := remoteVerifier(t, clk, s)
	for range 2 {
		info, err := v.Verify(context.Background(), sign(t, k, claimsAt(clk.Now())))
		require.NoError(t, err)
		assert.Equal(t, "ada", info.Subject)
	}
	assert.EqualValues(t, 1, s.fetches.Load())

	// Later, past the refresh interval but within the default hour the
	// set is kept, still no fetch.
	clk.Advance(30 * time.Minute)
	_, err := v.Verify(context.Background(), sign(t, k, claimsAt(clk.Now())))
	require.NoError(t, err)
	assert.EqualValues(t, 1, s.fetches.Load())

	// The set is fetched again once it is older than the default hour.
	clk.Advance(30*time.Minute + time.Second)
	_, err = v.Verify(context.Background(), sign(t, k, claimsAt(clk.Now())))
	require.NoError(t, err)
	assert.EqualValues(t, 2, s.fetches.Load())
}

// Cache-Control max-age sets how long the set is kept, within the refresh
// interval and the maximum age.
func TestJWKSMaxAge(t *testing.T) {
	for _, c := range []struct {
		cacheControl string
		keptFor      time.Duration
	}{
		{"public, max-age=300", 300 * time.Second},
		{"max-age=5", refreshEvery},       // raised to the refresh interval
		{"no-store", refreshEvery},        // likewise
		{"max-age=999999", 2 * time.Hour}, // lowered to JWKSMaxAge
		{"", time.Hour},                   // the default
		{"max-age=junk", time.Hour},       // ignored
	} {
		t.Run(c.cacheControl, func(t *testing.T) {
			clk := newClock()
			k := newKey(t, "k1", jose.ES256)
			s := newJWKSServer(t, k)
			s.set(func(s *jwksServer) { s.cacheControl = c.cacheControl })
			v := remoteVerifier(t, clk, s, func(cfg *oauth.Config) { cfg.JWKSMaxAge = 2 * time.Hour })
			verify := func() {
				t.Helper()
				_, err := v.Verify(context.Background(), sign(t, k, claimsAt(clk.Now())))
				require.NoError(t, err)
			}
			verify()
			clk.Advance(c.keptFor - time.Second)
			verify()
			assert.EqualValues(t, 1, s.fetches.Load(), "still fresh")
			clk.Advance(2 * time.Second)
			verify()
			assert.EqualValues(t, 2, s.fetches.Load(), "expired")
		})
	}
}

// The issuer adds a key and signs with it: the verifier fetches the set
// again on the unknown kid and accepts. Later it removes the old key:
// tokens signed with it are refused once the set is fetched again.
func TestJWKSRotation(t *testing.T) {
	clk := newClock()
	old := newKey(t, "old", jose.ES256)
	s := newJWKSServer(t, old)
	v := remoteVerifier(t, clk, s)
	ctx := context.Background()
	_, err := v.Verify(ctx, sign(t, old, claimsAt(clk.Now())))
	require.NoError(t, err)
	require.EqualValues(t, 1, s.fetches.Load())

	fresh := newKey(t, "new", jose.EdDSA)
	s.setKeys(old, fresh)
	clk.Advance(refreshEvery) // past the refresh interval, well within the cache's hour
	info, err := v.Verify(ctx, sign(t, fresh, claimsAt(clk.Now())))
	require.NoError(t, err, "the unknown kid makes the verifier fetch again")
	assert.Equal(t, "ada", info.Subject)
	assert.EqualValues(t, 2, s.fetches.Load())
	_, err = v.Verify(ctx, sign(t, old, claimsAt(clk.Now())))
	require.NoError(t, err, "both keys are published")

	s.setKeys(fresh)
	clk.Advance(time.Hour + time.Second) // the cached set expires
	_, err = v.Verify(ctx, sign(t, old, claimsAt(clk.Now())))
	require.ErrorIs(t, err, oauth.ErrInvalidToken)
	assert.Contains(t, err.Error(), "unknown key")
	assert.EqualValues(t, 3, s.fetches.Load())
	_, err = v.Verify(ctx, sign(t, fresh, claimsAt(clk.Now())))
	require.NoError(t, err)
	assert.EqualValues(t, 3, s.fetches.Load())
}

// A removed key is refused as soon as a fetch happens for another reason,
// such as a token with an unknown kid.
func TestJWKSRemovedKeyAfterRefresh(t *testing.T) {
	clk := newClock()
	a := newKey(t, "a", jose.ES256)
	b := newKey(t, "b", jose.ES256)
	s := newJWKSServer(t, a)
	v := remoteVerifier(t, clk, s)
	ctx := context.Background()
	_, err := v.Verify(ctx, sign(t, a, claimsAt(clk.Now())))
	require.NoError(t, err)
	s.setKeys(b)
	clk.Advance(refreshEvery)
	_, err = v.Verify(ctx, sign(t, b, claimsAt(clk.Now())))
	require.NoError(t, err)
	_, err = v.Verify(ctx, sign(t, a, claimsAt(clk.Now())))
	require.ErrorIs(t, err, oauth.ErrInvalidToken)
	assert.Contains(t, err.Error(), "unknown key")
}

// Tokens with random unknown kids cannot make the verifier fetch more than
// once per refresh interval, sent one after another or all at once.
func TestJWKSRefreshRateLimited(t *testing.T) {
	clk := newClock()
	k := newKey(t, "k1", jose.ES256)
	s := newJWKSServer(t, k)
	s.set(func(s *jwksServer) { s.delay = 20 * time.Millisecond })
	v := remoteVerifier(t, clk, s)
	ctx := context.Background()
	attacker := newKey(t, "", jose.ES256)
	forged := func(i int) string {
		a := attacker
		a.kid = fmt.Sprintf("random-%d", i)
		return sign(t, a, claimsAt(clk.Now()))
	}
	tokens := make([]string, 100)
	for i := range tokens {
		tokens[i] = forged(i)
	}
	var wg sync.WaitGroup
	for _, tok := range tokens {
		wg.Go(func() {
			_, err := v.Verify(ctx, tok)
			assert.ErrorIs(t, err, oauth.ErrInvalidToken)
		})
	}
	wg.Wait()
	assert.EqualValues(t, 1, s.fetches.Load(), "concurrent first fetches are one")
	for _, tok := range tokens {
		_, err := v.Verify(ctx, tok)
		assert.ErrorContains(t, err, "unknown key")
	}
	assert.EqualValues(t, 1, s.fetches.Load(), "no fetch within the refresh interval")

	clk.Advance(refreshEvery)
	for _, tok := range tokens {
		_, _ = v.Verify(ctx, tok)
	}
	assert.EqualValues(t, 2, s.fetches.Load(), "one fetch per interval")
	_, err := v.Verify(ctx, sign(t, k, claimsAt(clk.Now())))
	require.NoError(t, err, "genuine tokens still pass")
	assert.EqualValues(t, 2, s.fetches.Load())
}

// A JWK set that cannot be fetched or is too large is an error that names
// the cause; the keys fetched before it are kept.
func TestJWKSFailures(t *testing.T) {
	clk := newClock()
	k := newKey(t, "k1", jose.ES256)
	ctx := context.Background()

	s := newJWKSServer(t, k)
	s.set(func(s *jwksServer) { s.status = http.StatusServiceUnavailable })
	v := remoteVerifier(t, clk, s)
	_, err := v.Verify(ctx, sign(t, k, claimsAt(clk.Now())))
	require.ErrorIs(t, err, oauth.ErrInvalidToken)
	require.ErrorIs(t, err, oauth.ErrKeySetUnavailable)
	assert.Contains(t, err.Error(), "status 503")

	// It recovers after the refresh interval.
	s.set(func(s *jwksServer) { s.status = http.StatusOK })
	_, err = v.Verify(ctx, sign(t, k, claimsAt(clk.Now())))
	require.Error(t, err, "not fetched again within the interval")
	clk.Advance(refreshEvery)
	_, err = v.Verify(ctx, sign(t, k, claimsAt(clk.Now())))
	require.NoError(t, err)

	// A failing fetch keeps the set fetched before.
	s.set(func(s *jwksServer) { s.status = http.StatusInternalServerError })
	clk.Advance(2 * time.Hour)
	_, err = v.Verify(ctx, sign(t, k, claimsAt(clk.Now())))
	require.NoError(t, err, "the old set is kept")

	// Bounded size.
	big := newJWKSServer(t, k)
	big.set(func(s *jwksServer) { s.pad = 4096 })
	v = remoteVerifier(t, clk, big, func(c *oauth.Config) { c.JWKSMaxBytes = 1024 })
	_, err = v.Verify(ctx, sign(t, k, claimsAt(clk.Now())))
	require.ErrorIs(t, err, oauth.ErrKeySetUnavailable)
	assert.Contains(t, err.Error(), "larger than 1024 bytes")

	// The http.Client's timeout applies.
	slow := newJWKSServer(t, k)
	slow.set(func(s *jwksServer) { s.delay = 300 * time.Millisecond })
	client := slow.Client()
	client.Timeout = 50 * time.Millisecond
	v = remoteVerifier(t, clk, slow, func(c *oauth.Config) { c.HTTPClient = client })
	_, err = v.Verify(ctx, sign(t, k, claimsAt(clk.Now())))
	require.ErrorIs(t, err, oauth.ErrKeySetUnavailable)
}

// Static keys and the JWK set work together; symmetric keys in a fetched
// set are ignored.
func TestJWKSWithStaticKeys(t *testing.T) {
	clk := newClock()
	local := newKey(t, "local", jose.ES256)
	remote := newKey(t, "remote", jose.ES256)
	s := newJWKSServer(t, remote)
	v := remoteVerifier(t, clk, s, func(c *oauth.Config) {
		c.Keys = []oauth.Key{{ID: "local", Public: local.public()}}
	})
	ctx := context.Background()
	_, err := v.Verify(ctx, sign(t, local, claimsAt(clk.Now())))
	require.NoError(t, err)
	assert.EqualValues(t, 0, s.fetches.Load(), "a static key needs no fetch")
	_, err = v.Verify(ctx, sign(t, remote, claimsAt(clk.Now())))
	require.NoError(t, err)
	assert.EqualValues(t, 1, s.fetches.Load())
}

// Genuine tokens arriving together before the set was ever fetched all
// wait for the one fetch, and all pass.
func TestJWKSConcurrentFirstUse(t *testing.T) {
	clk := newClock()
	k := newKey(t, "k1", jose.ES256)
	s := newJWKSServer(t, k)
	s.set(func(s *jwksServer) { s.delay = 50 * time.Millisecond })
	v := remoteVerifier(t, clk, s)
	tok := sign(t, k, claimsAt(clk.Now()))
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			info, err := v.Verify(context.Background(), tok)
			if assert.NoError(t, err) {
				assert.Equal(t, "ada", info.Subject)
			}
		})
	}
	wg.Wait()
	assert.EqualValues(t, 1, s.fetches.Load())

	// A caller whose context ends stops waiting; the fetch goes on for
	// the others.
	s2 := newJWKSServer(t, k)
	s2.set(func(s *jwksServer) { s.delay = 200 * time.Millisecond })
	v2 := remoteVerifier(t, clk, s2)
	done := make(chan error, 1)
	go func() {
		_, err := v2.Verify(context.Background(), tok)
		done <- err
	}()
	require.Eventually(t, func() bool { return s2.fetches.Load() == 1 }, 5*time.Second, time.Millisecond,
		"the first caller's fetch has reached the server")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	_, err := v2.Verify(ctx, tok)
	require.ErrorIs(t, err, oauth.ErrInvalidToken)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.NoError(t, <-done)
}
