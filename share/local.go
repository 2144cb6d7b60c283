package share

import (
	"context"
	"errors"
	"sync"
	"time"
)

// DefaultMaxClaims is how many unexpired keys (claims and records) a
// Local Bus holds by default.
const DefaultMaxClaims = 1 << 20

// ErrFull is returned by Claim and Put of a Local Bus that holds its
// maximum of unexpired keys. Refusing is the safe answer: forgetting a
// live claim would let its key be claimed twice.
var ErrFull = errors.New("share: too many unexpired claims")

// LocalBus is the in-process Bus returned by Local: events reach the
// subscribers of this process only, and claims and records are kept in
// memory.
type LocalBus struct {
	mu     sync.Mutex
	subs   map[string]map[*localSub]struct{}
	claims map[string]entry // claims and records, by key
	heap   []claimExpiry    // min-heap by expiry, for pruning
	max    int
	now    func() time.Time
	closed bool
}

// entry is one unexpired key: a claim (val nil) or a record.
type entry struct {
	at  time.Time // expiry
	val []byte
}

type claimExpiry struct {
	at  time.Time
	key string
}

// localSub is one subscription: events queue here and one goroutine
// delivers them in order, so Publish never waits on a subscriber.
type localSub struct {
	fn      func([]byte)
	mu      sync.Mutex
	queue   [][]byte
	running bool
	stopped bool
}

// maxQueued bounds the events waiting for one slow subscriber; beyond
// it, new events for that subscriber are dropped (delivery is best
// effort).
const maxQueued = 1024

// LocalOption configures Local.
type LocalOption interface{ applyLocal(*LocalBus) }

type localOptionFunc func(*LocalBus)

func (f localOptionFunc) applyLocal(v *LocalBus) { f(v) }

// WithMaxClaims bounds how many unexpired keys (claims and records) the
// Local Bus holds (DefaultMaxClaims by default); past it, Claim and Put
// of a new key return ErrFull.
func WithMaxClaims(n int) LocalOption {
	return localOptionFunc(func(b *LocalBus) {
		if n > 0 {
			b.max = n
		}
	})
}

// WithClock replaces time.Now as the clock claims expire by, for tests.
func WithClock(now func() time.Time) LocalOption {
	return localOptionFunc(func(b *LocalBus) {
		if now != nil {
			b.now = now
		}
	})
}

// Local returns a new in-process Bus. Its Claim, Put and Get prune
// expired keys as they go, so memory follows the keys that are live.
func Local(opts ...LocalOption) *LocalBus {
	b := &LocalBus{subs: map[string]map[*localSub]struct{}{}, claims: map[string]entry{}, max: DefaultMaxClaims, now: time.Now}
	for _, o := range opts {
		if o != nil {
			o.applyLocal(b)
		}
	}
	return b
}

// Publish implements Bus. It never blocks on a subscriber.
func (b *LocalBus) Publish(ctx context.Context, channel string, payload []byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return ErrClosed
	}
	subs := make([]*localSub, 0, len(b.subs[channel]))
	for s := range b.subs[channel] {
		subs = append(subs, s)
	}
	b.mu.Unlock()
	if len(subs) == 0 {
		return nil
	}
	p := append([]byte(nil), payload...)
	for _, s := range subs {
		s.push(p)
	}
	return nil
}

func (s *localSub) push(p []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped || len(s.queue) >= maxQueued {
		return
	}
	s.queue = append(s.queue, p)
	if !s.running {
		s.running = true
		go s.run()
	}
}

func (s *localSub) run() {
	for {
		s.mu.Lock()
		if s.stopped || len(s.queue) == 0 {
			s.running = false
			s.queue = nil
			s.mu.Unlock()
			return
		}
		p := s.queue[0]
		s.queue[0] = nil
		s.queue = s.queue[1:]
		s.mu.Unlock()
		s.fn(p)
	}
}

// Subscribe implements Bus. stop does not wait for a call of fn in
// progress, so fn may call it.
func (b *LocalBus) Subscribe(channel string, fn func(payload []byte)) (func(), error) {
	if fn == nil {
		return nil, errors.New("share: subscribe needs a function")
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil, ErrClosed
	}
	s := &localSub{fn: fn}
	if b.subs[channel] == nil {
		b.subs[channel] = map[*localSub]struct{}{}
	}
	b.subs[channel][s] = struct{}{}
	var once sync.Once
	stop := func() {
		once.Do(func() {
			b.mu.Lock()
			delete(b.subs[channel], s)
			if len(b.subs[channel]) == 0 {
				delete(b.subs, channel)
			}
			b.mu.Unlock()
			s.mu.Lock()
			s.stopped = true
			s.mu.Unlock()
		})
	}
	return stop, nil
}

// Claim implements Bus.
func (b *LocalBus) Claim(ctx context.Context, key string, ttl time.Duration) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	if ttl < time.Millisecond {
		return false, ErrBadTTL
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return false, ErrClosed
	}
	now := b.now()
	b.prune(now)
	if e, ok := b.claims[key]; ok && now.Before(e.at) {
		return false, nil
	}
	if len(b.claims) >= b.max {
		return false, ErrFull
	}
	b.setLocked(key, entry{at: now.Add(ttl)})
	return true, nil
}

// setLocked records e under key. The caller holds b.mu.
func (b *LocalBus) setLocked(key string, e entry) {
	b.claims[key] = e
	b.heapPush(claimExpiry{at: e.at, key: key})
	if len(b.heap) > 2*len(b.claims)+64 {
		// Keys put again and again leave stale heap entries behind:
		// rebuild from the live keys.
		b.heap = b.heap[:0]
		for k, v := range b.claims {
			b.heapPush(claimExpiry{at: v.at, key: k})
		}
	}
}

// Put implements Bus.
func (b *LocalBus) Put(ctx context.Context, key string, value []byte, ttl time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if ttl < time.Millisecond {
		return ErrBadTTL
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return ErrClosed
	}
	now := b.now()
	b.prune(now)
	if _, ok := b.claims[key]; !ok && len(b.claims) >= b.max {
		return ErrFull
	}
	v := make([]byte, len(value))
	copy(v, value)
	b.setLocked(key, entry{at: now.Add(ttl), val: v})
	return nil
}

// Get implements Bus.
func (b *LocalBus) Get(ctx context.Context, key string) ([]byte, bool, error) {
	if err := ctx.Err(); err != nil {
		return nil, false, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil, false, ErrClosed
	}
	now := b.now()
	b.prune(now)
	e, ok := b.claims[key]
	if !ok || !now.Before(e.at) {
		return nil, false, nil
	}
	if e.val == nil {
		return []byte("1"), true, nil // a claim, as Redis keeps it
	}
	return append([]byte(nil), e.val...), true, nil
}

// prune forgets the claims that expired by now. The caller holds b.mu.
func (b *LocalBus) prune(now time.Time) {
	for len(b.heap) > 0 && !now.Before(b.heap[0].at) {
		e := b.heapPop()
		if c, ok := b.claims[e.key]; ok && c.at.Equal(e.at) {
			delete(b.claims, e.key)
		}
	}
}

// Claims reports how many unexpired keys (claims and records) the Bus
// holds.
func (b *LocalBus) Claims() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.prune(b.now())
	return len(b.claims)
}

// Close stops every subscription and refuses later calls with ErrClosed.
func (b *LocalBus) Close() error {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return nil
	}
	b.closed = true
	var all []*localSub
	for _, set := range b.subs {
		for s := range set {
			all = append(all, s)
		}
	}
	b.subs = nil
	b.mu.Unlock()
	for _, s := range all {
		s.mu.Lock()
		s.stopped = true
		s.mu.Unlock()
	}
	return nil
}

func (b *LocalBus) heapPush(e claimExpiry) {
	b.heap = append(b.heap, e)
	i := len(b.heap) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !b.heap[i].at.Before(b.heap[p].at) {
			break
		}
		b.heap[i], b.heap[p] = b.heap[p], b.heap[i]
		i = p
	}
}

func (b *LocalBus) heapPop() claimExpiry {
	h := b.heap
	top := h[0]
	n := len(h) - 1
	h[0] = h[n]
	h[n] = claimExpiry{}
	h = h[:n]
	for i := 0; ; {
		l, r, m := 2*i+1, 2*i+2, i
		if l < n && h[l].at.Before(h[m].at) {
			m = l
		}
		if r < n && h[r].at.Before(h[m].at) {
			m = r
		}
		if m == i {
			break
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
	b.heap = h
	return top
}
