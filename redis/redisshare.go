package redisshare

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/mrtrkit/mrtrkit/share"
)

// DefaultSubscribeTimeout bounds how long Subscribe waits for Redis to
// confirm a subscription.
const DefaultSubscribeTimeout = 5 * time.Second

// Bus is a share.Bus kept in Redis. It is safe for concurrent use.
type Bus struct {
	client  redis.UniversalClient
	prefix  string
	timeout time.Duration
}

var _ share.Bus = (*Bus)(nil)

// Option configures New.
type Option interface{ apply(*Bus) }

type optionFunc func(*Bus)

func (f optionFunc) apply(v *Bus) { f(v) }

// WithPrefix puts prefix before every channel and key the Bus uses, so
// that deployments sharing one Redis keep apart (mrtrkit already names
// its channels and keys after the server's audience). The default is
// none.
func WithPrefix(prefix string) Option { return optionFunc(func(b *Bus) { b.prefix = prefix }) }

// WithSubscribeTimeout bounds how long Subscribe waits for Redis to
// confirm a subscription (DefaultSubscribeTimeout by default).
func WithSubscribeTimeout(d time.Duration) Option {
	return optionFunc(func(b *Bus) {
		if d > 0 {
			b.timeout = d
		}
	})
}

// New returns a Bus over client: a *redis.Client, or a cluster, ring or
// failover client. The caller keeps ownership of client and closes it
// after the Bus's last use.
func New(client redis.UniversalClient, opts ...Option) *Bus {
	b := &Bus{client: client, timeout: DefaultSubscribeTimeout}
	for _, o := range opts {
		if o != nil {
			o.apply(b)
		}
	}
	return b
}

// Publish implements share.Bus with PUBLISH.
func (b *Bus) Publish(ctx context.Context, channel string, payload []byte) error {
	if err := b.client.Publish(ctx, b.prefix+channel, payload).Err(); err != nil {
		return fmt.Errorf("redisshare: publish: %w", err)
	}
	return nil
}

// Subscribe implements share.Bus with SUBSCRIBE on a connection of its
// own. It returns once Redis has confirmed the subscription, and fails
// when Redis cannot be reached within the subscribe timeout: a replica
// that cannot reach its Redis at start-up is better stopped than running
// deaf. After that, a lost connection is re-established and the channel
// subscribed again by the client; events published meanwhile are missed.
func (b *Bus) Subscribe(channel string, fn func(payload []byte)) (func(), error) {
	if fn == nil {
		return nil, errors.New("redisshare: subscribe needs a function")
	}
	ctx, cancel := context.WithTimeout(context.Background(), b.timeout)
	defer cancel()
	ps := b.client.Subscribe(ctx, b.prefix+channel)
	if _, err := ps.Receive(ctx); err != nil {
		ps.Close()
		return nil, fmt.Errorf("redisshare: subscribe: %w", err)
	}
	msgs := ps.Channel()
	var stopped atomic.Bool
	go func() {
		for m := range msgs {
			if stopped.Load() {
				continue // draining until Close closes msgs
			}
			fn([]byte(m.Payload))
		}
	}()
	return sync.OnceFunc(func() {
		stopped.Store(true)
		ps.Close()
	}), nil
}

// Claim implements share.Bus with SET key 1 NX PX ttl.
func (b *Bus) Claim(ctx context.Context, key string, ttl time.Duration) (bool, error) {
	if ttl < time.Millisecond {
		return false, share.ErrBadTTL
	}
	ok, err := b.client.SetNX(ctx, b.prefix+key, "1", ttl).Result()
	if err != nil {
		return false, fmt.Errorf("redisshare: claim: %w", err)
	}
	return ok, nil
}

// Put implements share.Bus with SET key value PX ttl.
func (b *Bus) Put(ctx context.Context, key string, value []byte, ttl time.Duration) error {
	if ttl < time.Millisecond {
		return share.ErrBadTTL
	}
	if err := b.client.Set(ctx, b.prefix+key, value, ttl).Err(); err != nil {
		return fmt.Errorf("redisshare: put: %w", err)
	}
	return nil
}

// Get implements share.Bus with GET key.
func (b *Bus) Get(ctx context.Context, key string) ([]byte, bool, error) {
	v, err := b.client.Get(ctx, b.prefix+key).Bytes()
	switch {
	case errors.Is(err, redis.Nil):
		return nil, false, nil
	case err != nil:
		return nil, false, fmt.Errorf("redisshare: get: %w", err)
	}
	return v, true, nil
}
