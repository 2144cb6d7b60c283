package oauth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	jose "github.com/go-jose/go-jose/v4"
)

// defaultJWKSTTL is how long a JWK set is kept when its response says
// nothing of caching.
const defaultJWKSTTL = time.Hour

// ParseJWKS reads a JWK set document (RFC 7517 section 5) into keys, for
// Config.Keys. Keys for encryption (use "enc") and of kinds the Verifier
// cannot use are left out; private keys contribute their public part;
// symmetric keys ("oct") become Secrets. It is an error when no key is
// left.
func ParseJWKS(data []byte) ([]Key, error) {
	return parseJWKS(data, true)
}

// parseJWKS reads a JWK set; secrets are kept only when allowed.
func parseJWKS(data []byte, secrets bool) ([]Key, error) {
	var doc struct {
		Keys []json.RawMessage `json:"keys"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("oauth: JWK set is not JSON: %w", err)
	}
	var keys []Key
	for _, raw := range doc.Keys {
		var jwk jose.JSONWebKey
		if err := jwk.UnmarshalJSON(raw); err != nil {
			continue // a kind of key go-jose does not know
		}
		if jwk.Use == "enc" {
			continue
		}
		k := Key{ID: jwk.KeyID, Algorithm: jwk.Algorithm}
		switch material := jwk.Key.(type) {
		case []byte:
			if !secrets {
				continue
			}
			k.Secret = material
		default:
			if !jwk.IsPublic() {
				jwk = jwk.Public()
			}
			if !jwk.Valid() {
				continue
			}
			k.Public = jwk.Key
		}
		if k.Algorithm != "" && !slices.Contains(knownAlgorithms, k.Algorithm) {
			continue // for an algorithm the Verifier does not check
		}
		if checkKey(k) != nil {
			continue
		}
		keys = append(keys, k)
	}
	if len(keys) == 0 {
		return nil, errors.New("oauth: JWK set has no usable signature verification key")
	}
	return keys, nil
}

// remoteKeys is the cached JWK set of an issuer.
type remoteKeys struct {
	url      string
	client   *http.Client
	every    time.Duration // shortest time between two fetches
	maxAge   time.Duration
	maxBytes int64
	now      func() time.Time

	mu       sync.Mutex
	set      []Key
	expires  time.Time     // when set is to be fetched again
	last     time.Time     // when the last fetch started; zero before the first
	lastErr  error         // the error of the last fetch, nil when it succeeded
	inflight chan struct{} // closed when the running fetch ends
}

func newRemoteKeys(cfg Config, now func() time.Time) (*remoteKeys, error) {
	if _, err := resourceURL(cfg.JWKSURL); err != nil {
		return nil, fmt.Errorf("oauth: Config.JWKSURL: %w", err)
	}
	r := &remoteKeys{
		url: cfg.JWKSURL, now: now,
		every: cfg.JWKSRefreshInterval, maxAge: cfg.JWKSMaxAge, maxBytes: cfg.JWKSMaxBytes,
	}
	// The client is a copy, so that the caller's own is left as it is,
	// with redirects refused: the https-or-loopback rule on JWKSURL holds
	// for the only address keys are fetched from, and a 30x to plain http
	// or to another host cannot hand the verifier someone else's keys.
	if cfg.HTTPClient != nil {
		c := *cfg.HTTPClient
		r.client = &c
	} else {
		r.client = &http.Client{Timeout: DefaultJWKSTimeout}
	}
	r.client.CheckRedirect = refuseRedirect
	if r.every <= 0 {
		r.every = DefaultJWKSRefreshInterval
	}
	if r.maxAge <= 0 {
		r.maxAge = DefaultJWKSMaxAge
	}
	if r.maxAge < r.every {
		return nil, errors.New("oauth: Config.JWKSMaxAge is shorter than Config.JWKSRefreshInterval")
	}
	if r.maxBytes <= 0 {
		r.maxBytes = DefaultJWKSMaxBytes
	}
	return r, nil
}

// errJWKSRedirect is the error of a JWK set fetch answered with a
// redirect.
var errJWKSRedirect = errors.New("the JWK set request was redirected, and redirects are not followed: set Config.JWKSURL to the final address")

// refuseRedirect is the CheckRedirect of the JWK set client: every
// redirect is refused, naming where it pointed.
func refuseRedirect(req *http.Request, _ []*http.Request) error {
	return fmt.Errorf("%w (redirect to %s)", errJWKSRedirect, short(req.URL.Redacted()))
}

// keys returns the current key set, fetching it first when none was
// fetched yet, when it has expired, or when refresh asks for it, but
// never when the last fetch started less than the refresh interval ago.
// A caller that finds a fetch running waits for it. The error is that of
// the last fetch, returned beside the keys kept from before it.
func (r *remoteKeys) keys(ctx context.Context, refresh bool) ([]Key, error) {
	r.mu.Lock()
	for {
		if ch := r.inflight; ch != nil {
			r.mu.Unlock()
			select {
			case <-ch:
			case <-ctx.Done():
				return nil, fmt.Errorf("%w: %w", ErrKeySetUnavailable, ctx.Err())
			}
			r.mu.Lock()
			refresh = false // the fetch waited for was the refresh
			continue
		}
		now := r.now()
		due := r.last.IsZero() || refresh || !now.Before(r.expires)
		if !due || (!r.last.IsZero() && now.Sub(r.last) < r.every) {
			set, err := r.set, r.lastErr
			r.mu.Unlock()
			return set, err
		}
		ch := make(chan struct{})
		r.inflight, r.last = ch, now
		r.mu.Unlock()

		set, ttl, err := r.fetch(ctx)

		r.mu.Lock()
		if err != nil {
			r.lastErr = fmt.Errorf("%w: %w", ErrKeySetUnavailable, err)
		} else {
			r.set, r.lastErr = set, nil
			r.expires = now.Add(ttl)
		}
		r.inflight = nil
		close(ch)
		set, err = r.set, r.lastErr
		r.mu.Unlock()
		return set, err
	}
}

// fetch gets and parses the JWK set, and says how long to keep it. It
// runs apart from the context of the request that caused it, so that a
// caller going away does not fail it for those waiting on it.
func (r *remoteKeys) fetch(ctx context.Context) ([]Key, time.Duration, error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), DefaultJWKSTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, r.url, nil)
	if err != nil {
		return nil, 0, err
	}
	req.Header.Set("Accept", "application/jwk-set+json, application/json")
	resp, err := r.client.Do(req)
	if err != nil {
		return nil, 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4<<10))
		return nil, 0, fmt.Errorf("fetching the JWK set: status %d", resp.StatusCode)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, r.maxBytes+1))
	if err != nil {
		return nil, 0, fmt.Errorf("reading the JWK set: %w", err)
	}
	if int64(len(body)) > r.maxBytes {
		return nil, 0, fmt.Errorf("the JWK set is larger than %d bytes", r.maxBytes)
	}
	set, err := parseJWKS(body, false)
	if err != nil {
		return nil, 0, err
	}
	return set, r.ttl(resp.Header.Get("Cache-Control")), nil
}

// ttl is how long to keep a set whose response had the given
// Cache-Control: its max-age, within the refresh interval and the
// maximum age.
func (r *remoteKeys) ttl(cacheControl string) time.Duration {
	ttl, noCache := defaultJWKSTTL, false
	for _, d := range strings.Split(cacheControl, ",") {
		name, val, _ := strings.Cut(strings.TrimSpace(d), "=")
		switch strings.ToLower(name) {
		case "no-store", "no-cache":
			noCache = true
		case "max-age":
			if n, err := strconv.ParseInt(strings.Trim(val, `"`), 10, 64); err == nil && n >= 0 {
				if n > int64(r.maxAge/time.Second) {
					n = int64(r.maxAge / time.Second)
				}
				ttl = time.Duration(n) * time.Second
			}
		}
	}
	if noCache {
		ttl = 0
	}
	return min(max(ttl, r.every), r.maxAge)
}
