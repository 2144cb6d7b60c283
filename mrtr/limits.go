package mrtr

import (
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// Defaults of the Server's limits.
const (
	// defaultMaxInFlight bounds the requests one principal may have in
	// flight at once (subscriptions/listen streams are bounded apart).
	// Anonymous callers count per peer (Inbound.Peer).
	defaultMaxInFlight = 64
	// defaultHandlerTimeout bounds one run of a handler; the handler sees
	// its context cancelled.
	defaultHandlerTimeout = 5 * time.Minute
	// defaultMaxListeners bounds the subscriptions/listen streams open at
	// once, all principals together.
	defaultMaxListeners = 1000
	// defaultMaxListenersPerPrincipal bounds the streams of one principal.
	defaultMaxListenersPerPrincipal = 16
)

// Limit says which limit refused a request, for a transport that answers
// such a refusal with a status of its own.
type Limit uint8

// The limits a request can meet.
const (
	// NoLimit: the error is not a refusal for load.
	NoLimit Limit = iota
	// CallerLimit: the caller has too much in flight (HTTP 429).
	CallerLimit
	// ServerLimit: the server is full, whoever asks (HTTP 503).
	ServerLimit
)

// limits holds the Server's bounds on concurrent work. The counts of
// each caller live in one of limitShards shards, chosen by the caller's
// key, each with a lock of its own: under a flood of requests from one
// caller, another caller's requests do not queue for the same lock.
type limits struct {
	maxInFlight    int
	handlerTimeout time.Duration
	maxListeners   int
	perPrincipal   int
	listenLifetime time.Duration

	listeners atomic.Int64 // listen streams open, all callers together
	shards    *[limitShards]limitShard
}

// limitShards is the number of shards of the per-caller counts.
const limitShards = 64

// limitShard holds the counts of the callers whose keys hash to it.
type limitShard struct {
	mu        sync.Mutex
	inFlight  map[caller]int
	listening map[caller]int
	_         [64]byte // keeps neighbouring shards' locks off one cache line
}

func defaultLimits() limits {
	return limits{maxInFlight: defaultMaxInFlight, handlerTimeout: defaultHandlerTimeout,
		maxListeners: defaultMaxListeners, perPrincipal: defaultMaxListenersPerPrincipal,
		shards: new([limitShards]limitShard)}
}

// shard returns the shard of key (FNV-1a).
func (l *limits) shard(key caller) *limitShard {
	h := uint32(2166136261)
	if key.anonymous {
		h = 84696351
	}
	for i := 0; i < len(key.id); i++ {
		h ^= uint32(key.id[i])
		h *= 16777619
	}
	return &l.shards[h%limitShards]
}

// limitError is a refusal for load.
func limitError(kind Limit, message string) *Error {
	return &Error{Code: CodeInternalError, Message: message, limit: kind}
}

// admit counts a request of principal in, or refuses it when the
// principal has its share in flight. release counts it out.
func (l *limits) admit(principal caller) *Error {
	if l.maxInFlight <= 0 {
		return nil
	}
	sh := l.shard(principal)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if sh.inFlight[principal] >= l.maxInFlight {
		return limitError(CallerLimit, "Too many requests in flight for this caller (at most "+strconv.Itoa(l.maxInFlight)+"); retry later")
	}
	if sh.inFlight == nil {
		sh.inFlight = map[caller]int{}
	}
	sh.inFlight[principal]++
	return nil
}

// release counts out a request admit let in. (A method rather than a
// closure admit returns: one allocation less on every request.)
func (l *limits) release(principal caller) {
	if l.maxInFlight <= 0 {
		return
	}
	sh := l.shard(principal)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if sh.inFlight[principal]--; sh.inFlight[principal] == 0 {
		delete(sh.inFlight, principal)
	}
}

// listen counts a listen stream of principal in, or refuses it.
func (l *limits) listen(principal caller) (release func(), err *Error) {
	sh := l.shard(principal)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	switch {
	case l.maxListeners > 0 && l.listeners.Load() >= int64(l.maxListeners):
		return nil, limitError(ServerLimit, "Too many subscriptions/listen streams open on this server; retry later")
	case l.perPrincipal > 0 && sh.listening[principal] >= l.perPrincipal:
		return nil, limitError(CallerLimit, "Too many subscriptions/listen streams open for this caller (at most "+strconv.Itoa(l.perPrincipal)+")")
	}
	if n := l.listeners.Add(1); l.maxListeners > 0 && n > int64(l.maxListeners) {
		l.listeners.Add(-1)
		return nil, limitError(ServerLimit, "Too many subscriptions/listen streams open on this server; retry later")
	}
	if sh.listening == nil {
		sh.listening = map[caller]int{}
	}
	sh.listening[principal]++
	return func() {
		sh.mu.Lock()
		defer sh.mu.Unlock()
		l.listeners.Add(-1)
		if sh.listening[principal]--; sh.listening[principal] == 0 {
			delete(sh.listening, principal)
		}
	}, nil
}

// caller is whom a request's limits count against: its principal, or for
// an anonymous request its peer, marked so that the two never mix.
type caller struct {
	id        string
	anonymous bool
}

// limitKey returns the caller of in.
func limitKey(in *Inbound) caller {
	if in.Principal != "" {
		return caller{id: in.Principal}
	}
	return caller{id: in.Peer, anonymous: true}
}

// WithMaxInFlight bounds the requests one principal may have in flight at
// once (default 64; 0 or less for no bound). A request
// past it is refused with -32603 "Too many requests in flight", whose
// Limit is CallerLimit (HTTP 429 on Streamable HTTP). Anonymous callers
// count per peer (Inbound.Peer).
func WithMaxInFlight(n int) Option { return optionFunc(func(s *Server) { s.limits.maxInFlight = n }) }

// WithHandlerTimeout bounds one run of a handler (default
// 5 minutes; 0 or less for no bound): the handler sees its
// context cancelled, and the request is answered with -32603 "Request
// timed out".
func WithHandlerTimeout(d time.Duration) Option {
	return optionFunc(func(s *Server) { s.limits.handlerTimeout = d })
}

// WithMaxListeners bounds the subscriptions/listen streams open at once:
// total for the server (default 1000) and perPrincipal for
// one principal (default 16); 0 or less for
// no bound. A stream past the total is refused with Limit ServerLimit
// (HTTP 503), one past the principal's share with CallerLimit (429).
func WithMaxListeners(total, perPrincipal int) Option {
	return optionFunc(func(s *Server) { s.limits.maxListeners, s.limits.perPrincipal = total, perPrincipal })
}

// WithListenLifetime ends every subscriptions/listen stream gracefully
// (with its final result, as Close does) once it has been open for d
// (default: no bound). Clients listen again; a bound keeps long-lived
// streams from pinning a replica forever.
func WithListenLifetime(d time.Duration) Option {
	return optionFunc(func(s *Server) { s.limits.listenLifetime = d })
}
