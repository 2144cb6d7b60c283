package state

import (
	"errors"
	"strings"
	"time"
)

// Defaults applied by NewAEAD and NewHMAC when no Option overrides them.
const (
	// defaultTTL is how long a token stays valid after Seal (10 minutes,
	// as WithTTL documents).
	defaultTTL = 10 * time.Minute
	// defaultMaxTokenSize is the longest token, in characters, that Seal
	// produces and Open examines (16 KiB).
	defaultMaxTokenSize = 16 << 10
	// defaultClockSkew is the tolerance applied to expiry and to an issue
	// time in the future, for replicas whose clocks disagree slightly (30
	// seconds, as WithClockSkew documents).
	defaultClockSkew = 30 * time.Second
)

// Option configures a codec built by NewAEAD or NewHMAC. Invalid option
// values are reported as an error by the constructor.
type Option interface {
	apply(*config) error
}

type optionFunc func(*config) error

func (f optionFunc) apply(c *config) error { return f(c) }

type config struct {
	ttl     time.Duration
	skew    time.Duration
	now     func() time.Time
	maxSize int
	purpose string
}

func newConfig(opts []Option) (config, error) {
	c := config{
		ttl:     defaultTTL,
		skew:    defaultClockSkew,
		now:     time.Now,
		maxSize: defaultMaxTokenSize,
	}
	for _, o := range opts {
		if o == nil {
			continue
		}
		if err := o.apply(&c); err != nil {
			return config{}, err
		}
	}
	return c, nil
}

// WithTTL sets how long a token stays valid after Seal (10 minutes when not
// given). The TTL is applied at millisecond precision; a value below one
// millisecond, including zero and negative values, is an error.
func WithTTL(d time.Duration) Option {
	return optionFunc(func(c *config) error {
		if d < time.Millisecond {
			return errors.New("state: TTL must be at least 1ms")
		}
		c.ttl = d
		return nil
	})
}

// WithClockSkew sets the tolerance for clocks that disagree between the
// replica that sealed a token and the one that opens it (30 seconds when
// not given). A token stays valid until ExpiresAt plus the skew, and a
// token whose IssuedAt lies more than the skew in the future is refused.
// Zero is allowed; a negative value is an error.
func WithClockSkew(d time.Duration) Option {
	return optionFunc(func(c *config) error {
		if d < 0 {
			return errors.New("state: clock skew must not be negative")
		}
		c.skew = d
		return nil
	})
}

// WithClock replaces time.Now as the codec's clock, for tests. nil is an
// error.
func WithClock(now func() time.Time) Option {
	return optionFunc(func(c *config) error {
		if now == nil {
			return errors.New("state: clock must not be nil")
		}
		c.now = now
		return nil
	})
}

// WithMaxTokenSize sets the longest token, in characters, that Seal produces
// and Open examines (16 KiB when not given). Open checks the
// length before any decoding or cryptography. n must be positive.
func WithMaxTokenSize(n int) Option {
	return optionFunc(func(c *config) error {
		if n <= 0 {
			return errors.New("state: max token size must be positive")
		}
		c.maxSize = n
		return nil
	})
}

// WithPurpose keys the codec for one purpose, such as "session": its
// subkeys are derived with the purpose in the HKDF info string, so tokens
// sealed for one purpose never open under another, even with the same key
// ring. The default purpose, "", is requestState. A purpose is 1 to 64
// characters of [a-z0-9_.-].
func WithPurpose(p string) Option {
	return optionFunc(func(c *config) error {
		if p == "" || len(p) > 64 || strings.Trim(p, "abcdefghijklmnopqrstuvwxyz0123456789_.-") != "" {
			return errors.New("state: a purpose is 1 to 64 characters of [a-z0-9_.-]")
		}
		c.purpose = p
		return nil
	})
}
