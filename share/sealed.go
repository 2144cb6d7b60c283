package share

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
)

// A Sealer authenticates the messages of a Bus: Seal binds a payload to
// the channel it is published on and to the time, Open checks a message
// received on a channel and returns its payload, the time it was sealed
// and a message id that is unique per message (random, unguessable).
// *state.BusSealer (package github.com/mrtrkit/mrtrkit/state) is the
// Sealer keyed from the deployment's key ring.
type Sealer interface {
	Seal(channel string, payload []byte, now time.Time) ([]byte, error)
	Open(channel string, msg []byte) (payload []byte, sent time.Time, id string, err error)
}

// DefaultMaxMessageAge is how old (or how far in the future, for clock
// skew between replicas) a sealed message may be when it is received.
const DefaultMaxMessageAge = 30 * time.Second

// maxRemembered bounds the message ids one subscription remembers per
// window of the maximum age. Past it, authentic messages are dropped (and
// counted) rather than accepted unchecked for a replay.
const maxRemembered = 1 << 18

// SealedBus is a Bus whose events are authenticated: Publish seals every
// payload with its Sealer, and Subscribe hands fn only payloads that open
// for the channel they arrived on, that were sealed less than the maximum
// age ago, and whose message id the subscription has not seen before.
// Everything else (forged or altered messages, messages sealed with a key
// no longer held, replays, stale messages) is dropped, counted (Dropped)
// and logged at most once a second.
//
// Claims and records (Claim, Put, Get) pass through unchanged: their
// integrity rests with the store's access control (see the redis
// module's documentation on ACLs).
type SealedBus struct {
	Bus
	sealer  Sealer
	maxAge  time.Duration
	log     *slog.Logger
	now     func() time.Time
	dropped atomic.Uint64
	logged  atomic.Int64 // unix nanoseconds of the last log of a drop
}

// SealOption configures Sealed.
type SealOption interface{ applySeal(*SealedBus) }

type sealOptionFunc func(*SealedBus)

func (f sealOptionFunc) applySeal(v *SealedBus) { f(v) }

// WithMaxMessageAge sets how old a received message may be
// (DefaultMaxMessageAge by default). Keep it above the clock skew
// between replicas and the bus's delivery delay.
func WithMaxMessageAge(d time.Duration) SealOption {
	return sealOptionFunc(func(b *SealedBus) {
		if d > 0 {
			b.maxAge = d
		}
	})
}

// WithSealLogger sets where dropped messages are logged (slog.Default()
// by default).
func WithSealLogger(l *slog.Logger) SealOption {
	return sealOptionFunc(func(b *SealedBus) {
		if l != nil {
			b.log = l
		}
	})
}

// Sealed returns bus with its events authenticated by sealer. Every
// replica of a deployment must wrap its bus the same way, with a sealer
// keyed from the same key ring: a replica that does not seal is not heard
// by those that do.
func Sealed(bus Bus, sealer Sealer, opts ...SealOption) *SealedBus {
	b := &SealedBus{Bus: bus, sealer: sealer, maxAge: DefaultMaxMessageAge, log: slog.Default(), now: time.Now}
	for _, o := range opts {
		if o != nil {
			o.applySeal(b)
		}
	}
	return b
}

// Authenticated reports true: events on b are authenticated. Code that
// is handed a Bus (such as package mrtr/legacy) checks for it to avoid
// sealing twice.
func (b *SealedBus) Authenticated() bool { return true }

// Dropped returns how many received messages were dropped as not
// authentic, stale or replayed, over every subscription of b.
func (b *SealedBus) Dropped() uint64 { return b.dropped.Load() }

// Publish seals payload for channel and publishes it.
func (b *SealedBus) Publish(ctx context.Context, channel string, payload []byte) error {
	msg, err := b.sealer.Seal(channel, payload, b.now())
	if err != nil {
		return err
	}
	return b.Bus.Publish(ctx, channel, msg)
}

// Subscribe subscribes fn to the authentic, fresh, first-seen payloads of
// channel.
func (b *SealedBus) Subscribe(channel string, fn func(payload []byte)) (func(), error) {
	if fn == nil {
		return nil, errors.New("share: subscribe needs a function")
	}
	seen := &seenIDs{}
	return b.Bus.Subscribe(channel, func(msg []byte) {
		payload, sent, id, err := b.sealer.Open(channel, msg)
		if err != nil {
			b.drop(channel, "not authentic")
			return
		}
		now := b.now()
		if age := now.Sub(sent); age > b.maxAge || age < -b.maxAge {
			b.drop(channel, "stale")
			return
		}
		// A message may claim to be up to maxAge in the future: ids are kept
		// long enough that its replay is stale by the time they are forgotten.
		switch seen.add(id, now, 2*b.maxAge) {
		case seenRepeat:
			b.drop(channel, "replayed")
			return
		case seenFull:
			b.drop(channel, "too many messages to check for replays")
			return
		}
		fn(payload)
	})
}

// drop counts a dropped message and logs it, at most once a second.
func (b *SealedBus) drop(channel, why string) {
	n := b.dropped.Add(1)
	now := time.Now().UnixNano()
	last := b.logged.Load()
	if now-last >= int64(time.Second) && b.logged.CompareAndSwap(last, now) {
		b.log.Warn("share: dropped a message received on the bus", "channel", channel, "reason", why, "dropped", n)
	}
}

// seenIDs remembers the message ids one subscription received in the
// last two windows of the maximum age: any older message is stale anyway.
type seenIDs struct {
	mu        sync.Mutex
	cur, prev map[string]struct{}
	since     time.Time // when cur started
}

const (
	seenNew = iota
	seenRepeat
	seenFull
)

func (s *seenIDs) add(id string, now time.Time, window time.Duration) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cur == nil || now.Sub(s.since) > window {
		if s.cur != nil && now.Sub(s.since) <= 2*window {
			s.prev = s.cur
		} else {
			s.prev = nil
		}
		s.cur, s.since = map[string]struct{}{}, now
	}
	if _, ok := s.cur[id]; ok {
		return seenRepeat
	}
	if _, ok := s.prev[id]; ok {
		return seenRepeat
	}
	if len(s.cur) >= maxRemembered {
		return seenFull
	}
	s.cur[id] = struct{}{}
	return seenNew
}
