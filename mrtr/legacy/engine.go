package legacy

import (
	"bytes"
	"container/list"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/mrtrkit/mrtrkit/internal/wire"
	"github.com/mrtrkit/mrtrkit/mrtr"
	"github.com/mrtrkit/mrtrkit/share"
	"github.com/mrtrkit/mrtrkit/state"
)

// Defaults of the Engine's limits.
const (
	// DefaultMaxSessions bounds the sessions whose mutable extras (log
	// level, subscriptions, streams, calls in flight) one process keeps.
	DefaultMaxSessions = 10000
	// DefaultSessionLifetime is how long a session id stays valid after
	// initialize, whatever its use.
	DefaultSessionLifetime = 24 * time.Hour
	// DefaultIdleTimeout is how long a session's extras stay in memory
	// without a request; a later request finds a session that has
	// forgotten its log level and subscriptions, not a dead one.
	DefaultIdleTimeout = time.Hour
	// DefaultMaxCalls bounds the bridged calls in flight per session.
	DefaultMaxCalls = 8
	// DefaultLegTimeout bounds the wait for the client's answer to one
	// server-to-client request. It stays below the requestState lifetime
	// (10 minutes, state's default TTL), so that an answer that arrives in
	// time still finds a valid state to retry with.
	DefaultLegTimeout = 9 * time.Minute
	// DefaultCallTimeout bounds one bridged call, all its rounds together.
	DefaultCallTimeout = 30 * time.Minute
	// DefaultMaxSubscriptionBytes bounds the URIs one session subscribes
	// to (resources/subscribe), their lengths added up, with or without a
	// shared bus.
	DefaultMaxSubscriptionBytes = 64 << 10
	// MaxSubscriptionURI bounds one URI a session subscribes to, as the
	// replicas bound the URI of a change they pass on.
	MaxSubscriptionURI = 8 << 10
	// DefaultMaxSessionsPerPrincipal bounds the sessions one principal
	// (for anonymous callers, one peer) has extras for in a process.
	DefaultMaxSessionsPerPrincipal = 16
	// DefaultMaxCallsPerPrincipal bounds the bridged calls one principal
	// (for anonymous callers, one peer) has in flight in a process, over
	// all its sessions, waiting for answers or not.
	DefaultMaxCallsPerPrincipal = 32
)

// Errors the Engine returns to its host.
var (
	// ErrUnknownSession: the session id is not one this server issued to
	// the caller, or it expired, or it was deleted. Streamable HTTP
	// answers 404, which tells the client to initialize again.
	ErrUnknownSession = errors.New("legacy: unknown session")
	// ErrBusy: the process holds as many sessions as it may, all busy.
	ErrBusy = errors.New("legacy: too many sessions")
	// ErrTooManySessions: the caller (its principal, or for an anonymous
	// caller its peer) holds as many sessions as it may
	// (WithMaxSessionsPerPrincipal), all busy; other callers are served.
	// errors.Is(err, ErrBusy) holds for it too. Streamable HTTP answers
	// 429.
	ErrTooManySessions error = tooManySessions{}
)

type tooManySessions struct{}

func (tooManySessions) Error() string        { return "legacy: too many sessions for this caller" }
func (tooManySessions) Is(target error) bool { return target == ErrBusy }

// Engine serves clients of the initialize era (MCP 2025-11-25 and
// 2025-06-18) with an mrtr.Server. It is safe for concurrent use.
type Engine struct {
	srv         *mrtr.Server
	ring        *state.KeyRing
	codec       *state.RingCodec
	log         *slog.Logger
	versions    []string // legacy versions served, newest first
	modern      string   // the modern version the bridge claims
	audience    string
	lifetime    time.Duration
	idle        time.Duration
	maxCalls    int
	leg         time.Duration
	callLimit   time.Duration
	pace        time.Duration // pause before retrying a state-only round
	maxSubBytes int           // bound of a session's subscribed URIs together
	now         func() time.Time

	maxPerOwner      int
	maxCallsPerOwner int
	// epoch is sealed into the session ids of an Engine without a bus,
	// and required of them: another process (a restart) knows nothing of
	// the deletions this one saw, so it serves none of its sessions.
	epoch    string
	portable bool // WithPortableSessions: no epoch

	mu        sync.Mutex
	max       int
	table     map[string]*extras // by session id (the sealed sid)
	lru       *list.List         // of *extras, most recent first
	owners    map[string]*owner  // by owner key: what each caller holds
	revoked   map[string]revocation
	revokedBy map[string]int // deletions remembered one by one, per owner
	order     []string       // revoked sids, oldest first, to bound and prune revoked
	// cut, per owner: its sessions issued at or before this time are
	// refused; what a deletion becomes when the owner's own deletions,
	// or all deletions, are too many to remember one by one.
	cut  map[string]time.Time
	skew time.Duration

	// With a shared bus (mrtr.WithShare on the Server): the Engine's side
	// of it, and the extras by session digest, for what other replicas
	// pass on. rep is nil without a bus.
	rep       *replicas
	byDigest  map[string]*extras
	busCodec  *state.RingCodec // the keys of the Engine's own sealing; nil when none
	closeOnce sync.Once
}

// Option configures an Engine.
type Option interface{ apply(*Engine) }

type optionFunc func(*Engine)

func (f optionFunc) apply(v *Engine) { f(v) }

// WithKeyRing sets the key ring session ids are sealed with (under their
// own purpose, so that a session id never opens as a requestState). By
// default the ring comes from the MRTRKIT_STATE_KEYS environment variable,
// as the Server's does; without it a random key is made, which replicas do
// not share. To rotate keys without a restart, give SessionCodec to the
// state.KeyRingFile that reloads the Server's codec.
func WithKeyRing(ring *state.KeyRing) Option {
	return optionFunc(func(e *Engine) { e.ring = ring })
}

// WithMaxSessions bounds the sessions one process keeps extras for
// (default DefaultMaxSessions). When it is reached, the least recently
// used idle session is forgotten; when every session is busy, initialize
// is refused with ErrBusy.
func WithMaxSessions(n int) Option { return optionFunc(func(e *Engine) { e.max = n }) }

// WithMaxSessionsPerPrincipal bounds the sessions one principal keeps
// extras for in a process (default DefaultMaxSessionsPerPrincipal);
// anonymous callers count per peer (the peer given to InitializeFrom). A
// principal at its bound that opens another session makes its own least
// recently used idle session forget its extras; when all its sessions are
// busy, initialize is refused with ErrTooManySessions, for that principal
// only.
func WithMaxSessionsPerPrincipal(n int) Option {
	return optionFunc(func(e *Engine) { e.maxPerOwner = n })
}

// WithMaxCallsPerPrincipal bounds the bridged calls (tools/call,
// prompts/get, resources/read) one principal has in flight in a process,
// over all its sessions, including calls waiting for the client's answers
// (default DefaultMaxCallsPerPrincipal); anonymous callers count per
// peer. A call past it is refused with -32603 saying so.
func WithMaxCallsPerPrincipal(n int) Option {
	return optionFunc(func(e *Engine) { e.maxCallsPerOwner = n })
}

// WithPortableSessions lets any process holding the key ring serve the
// sessions of an Engine without a shared bus, as replicas with a bus do:
// a session then outlives a restart of the process that made it. The
// price is that a deletion (DELETE) is known only to the process that got
// it, and only until it restarts: another process, or the same one
// restarted, serves a deleted session id again until it expires
// (WithSessionLifetime). By default an Engine without a bus serves only
// the sessions it issued itself, so that a deleted session never comes
// back; after a restart, clients get "session not found" and initialize
// again. With a bus the option changes nothing: deletions are shared.
func WithPortableSessions() Option { return optionFunc(func(e *Engine) { e.portable = true }) }

// WithSessionLifetime sets how long a session stays valid after
// initialize (default DefaultSessionLifetime).
func WithSessionLifetime(d time.Duration) Option {
	return optionFunc(func(e *Engine) { e.lifetime = d })
}

// WithIdleTimeout sets how long an idle session's extras are kept
// (default DefaultIdleTimeout).
func WithIdleTimeout(d time.Duration) Option { return optionFunc(func(e *Engine) { e.idle = d }) }

// WithMaxCalls bounds the bridged calls in flight per session (default
// DefaultMaxCalls).
func WithMaxCalls(n int) Option { return optionFunc(func(e *Engine) { e.maxCalls = n }) }

// WithLegTimeout bounds the wait for the client's answer to one
// server-to-client request (default DefaultLegTimeout). Keep it below the
// Server's requestState lifetime.
func WithLegTimeout(d time.Duration) Option { return optionFunc(func(e *Engine) { e.leg = d }) }

// WithCallTimeout bounds one bridged call, all rounds together (default
// DefaultCallTimeout).
func WithCallTimeout(d time.Duration) Option { return optionFunc(func(e *Engine) { e.callLimit = d }) }

// WithMaxSubscriptionBytes bounds the URIs one session subscribes to,
// their lengths added up (default DefaultMaxSubscriptionBytes). A
// resources/subscribe past it is refused with -32602 saying so; each URI
// is bounded by MaxSubscriptionURI besides. With a shared bus, a session's
// record (its URIs as JSON, and its log level) must also fit in 64 KiB.
func WithMaxSubscriptionBytes(n int) Option { return optionFunc(func(e *Engine) { e.maxSubBytes = n }) }

// WithLogger sets the logger (default: the Server's, mrtr.Server.Logger).
func WithLogger(l *slog.Logger) Option { return optionFunc(func(e *Engine) { e.log = l }) }

// New returns an Engine serving srv. The description of srv must list the
// legacy versions to serve in LegacyVersions (2025-11-25, 2025-06-18):
// that list is what initialize negotiates from and what server/discover
// advertises beside the modern versions.
func New(srv *mrtr.Server, opts ...Option) (*Engine, error) {
	if srv == nil {
		return nil, errors.New("legacy: nil server")
	}
	desc := srv.Description()
	if len(desc.LegacyVersions) == 0 {
		return nil, errors.New("legacy: the server's description lists no LegacyVersions to serve")
	}
	e := &Engine{
		srv: srv, max: DefaultMaxSessions, lifetime: DefaultSessionLifetime, idle: DefaultIdleTimeout,
		maxCalls: DefaultMaxCalls, leg: DefaultLegTimeout, callLimit: DefaultCallTimeout, maxSubBytes: DefaultMaxSubscriptionBytes,
		pace: 250 * time.Millisecond, now: time.Now, audience: srv.Audience(),
		table: map[string]*extras{}, lru: list.New(), revoked: map[string]revocation{}, revokedBy: map[string]int{},
		byDigest: map[string]*extras{}, owners: map[string]*owner{}, cut: map[string]time.Time{},
		maxPerOwner: DefaultMaxSessionsPerPrincipal, maxCallsPerOwner: DefaultMaxCallsPerPrincipal,
	}
	e.versions = slices.Clone(desc.LegacyVersions)
	slices.Sort(e.versions)
	slices.Reverse(e.versions)
	e.modern = desc.ModernVersions()[0]
	for _, o := range opts {
		if o != nil {
			o.apply(e)
		}
	}
	switch {
	case e.max < 1:
		return nil, errors.New("legacy: max sessions must be at least 1")
	case e.lifetime < time.Second:
		return nil, errors.New("legacy: session lifetime must be at least a second")
	case e.idle <= 0:
		return nil, errors.New("legacy: idle timeout must be positive")
	case e.maxCalls < 1:
		return nil, errors.New("legacy: max calls per session must be at least 1")
	case e.maxPerOwner < 1 || e.maxCallsPerOwner < 1:
		return nil, errors.New("legacy: the per-principal bounds must be at least 1")
	case e.maxSubBytes < 1:
		return nil, errors.New("legacy: max subscription bytes must be at least 1")
	case e.leg <= 0 || e.callLimit <= 0:
		return nil, errors.New("legacy: timeouts must be positive")
	}
	if e.log == nil {
		e.log = srv.Logger()
	}
	ring := e.ring
	if ring == nil {
		r, ok, err := state.KeyRingFromEnv()
		if err != nil {
			return nil, fmt.Errorf("legacy: %s: %w", state.EnvKeys, err)
		}
		if !ok {
			if r, err = state.GenerateKeyRing(); err != nil {
				return nil, fmt.Errorf("legacy: %w", err)
			}
		}
		ring = r
	}
	// The clock skew replicas are allowed stays small beside the lifetime,
	// so that a session ends when it says it does: state's default (30 s,
	// as state.WithClockSkew documents), or a tenth of a short lifetime.
	e.skew = min(30*time.Second, e.lifetime/10)
	codec, err := state.NewAEAD(ring, state.WithPurpose("session"), state.WithTTL(e.lifetime), state.WithClockSkew(e.skew))
	if err != nil {
		return nil, fmt.Errorf("legacy: %w", err)
	}
	e.codec = codec
	if bus := srv.SharedBus(); bus != nil {
		if a, ok := bus.(interface{ Authenticated() bool }); !ok || !a.Authenticated() {
			// The Server's bus is not authenticated: the Engine's own
			// messages are, with keys derived from its ring.
			sealer, err := state.NewBusSealer(ring)
			if err != nil {
				return nil, fmt.Errorf("legacy: %w", err)
			}
			bus = share.Sealed(bus, sealer, share.WithSealLogger(e.log))
			e.busCodec = sealer.Codec()
		}
		if err := e.startReplicas(bus); err != nil {
			return nil, fmt.Errorf("legacy: joining the shared bus: %w", err)
		}
	} else if !e.portable {
		var ep [8]byte
		if _, err := rand.Read(ep[:]); err != nil {
			return nil, fmt.Errorf("legacy: %w", err)
		}
		e.epoch = base64.RawURLEncoding.EncodeToString(ep[:])
	}
	return e, nil
}

// Server returns the server the Engine serves.
func (e *Engine) Server() *mrtr.Server { return e.srv }

// SessionCodec returns the codec that seals and opens session ids, so that
// a state.KeyRingFile can keep it in step with the key ring file beside
// the Server's own codec:
//
//	state.NewKeyRingFile(path, log, serverCodec, eng.SessionCodec())
//
// Without that, session ids stay sealed with the ring the Engine started
// with: after a rotation that drops a key, sessions a restarted replica
// issues are unknown to the others, and theirs to it.
func (e *Engine) SessionCodec() *state.RingCodec { return e.codec }

// BusCodec returns the codec holding the keys the Engine authenticates
// its messages on the shared bus with, when it made them itself: that is
// when the Server's bus (mrtr.WithShare) is not a share.SealedBus. Give it
// to the KeyRingFile beside SessionCodec, so that the keys rotate with the
// ring file. It is nil without a bus, and when the bus is already sealed
// (whose own state.BusSealer's Codec is then the one to reload).
func (e *Engine) BusCodec() *state.RingCodec { return e.busCodec }

// fixed is what a session id carries: what initialize settled, sealed.
type fixed struct {
	Version string           `json:"v"`
	Caps    uint8            `json:"c"`
	Client  *json.RawMessage `json:"i,omitempty"`
	// Peer is the peer an anonymous session was initialized from, which
	// its bounds count against; "" for a principal's session.
	Peer string `json:"p,omitempty"`
	// Epoch is the epoch of the Engine without a bus that issued it.
	Epoch string `json:"e,omitempty"`
}

// owner is what one caller holds in the process.
type owner struct {
	sessions int // extras in the table
	calls    int // bridged calls in flight
}

// revocation is a deleted session, remembered until its id expires.
type revocation struct {
	owner   string
	issued  time.Time
	expires time.Time // with the skew
}

// ownerKey is the key a session's bounds count against: its principal
// digest, and for an anonymous session the peer it was initialized from.
func ownerKey(claims state.Claims, f fixed) string {
	return claims.Principal + "\x00" + f.Peer
}

// Capability bits of a session's client.
const (
	capSampling uint8 = 1 << iota
	capSamplingTools
	capSamplingContext
	capElicitForm
	capElicitURL
	capRoots
)

// principalKey is what a session binds its principal as: a digest, so
// that not even a readable token shows who it belongs to.
func principalKey(principal string) string {
	sum := principalSum(principal)
	return string(sum[:])
}

// isPrincipal reports whether key is principalKey(principal), without
// making the key.
func isPrincipal(key, principal string) bool {
	sum := principalSum(principal)
	return key == string(sum[:])
}

func principalSum(principal string) [sha256.Size]byte {
	const prefix = "mrtrkit legacy session\x00"
	var buf [128]byte
	return sha256.Sum256(append(append(buf[:0], prefix...), principal...))
}

var errBadFixed = errors.New("legacy: the fixed part of a session id does not read")

// readFixed reads the fixed part a session id carries, as mint wrote it
// (encoding/json's rendering of fixed), in one pass: a version among
// versions is not copied, and the client info aliases p.
func readFixed(p []byte, versions []string, f *fixed) error {
	return wire.EachMemberBytes(p, func(name []byte, v json.RawMessage) error {
		ok := true
		switch string(name) {
		case "v":
			f.Version, ok = wire.Interned(v, versions)
		case "c":
			n := 0
			for _, c := range v {
				if c < '0' || c > '9' || n > math.MaxUint8/10 {
					return errBadFixed
				}
				n = n*10 + int(c-'0')
			}
			if len(v) == 0 || n > math.MaxUint8 || (v[0] == '0' && len(v) > 1) {
				return errBadFixed
			}
			f.Caps = uint8(n)
		case "i":
			if string(v) == "null" {
				f.Client = nil
			} else {
				r := json.RawMessage(v)
				f.Client = &r
			}
		case "p":
			f.Peer, ok = wire.String(v)
		case "e":
			f.Epoch, ok = wire.String(v)
		}
		if !ok {
			return errBadFixed
		}
		return nil
	})
}

// mint seals a new session id for principal.
func (e *Engine) mint(principal string, f fixed) (string, string, error) {
	var sid [16]byte
	if _, err := rand.Read(sid[:]); err != nil {
		return "", "", err
	}
	id := base64.RawURLEncoding.EncodeToString(sid[:])
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // escaping would grow the client info six-fold
	if err := enc.Encode(f); err != nil {
		return "", "", err
	}
	payload := bytes.TrimSpace(buf.Bytes())
	tok, err := e.codec.Seal(state.Claims{Principal: principalKey(principal), Audience: e.audience, Method: "session", Target: id, Round: 1, Payload: payload})
	return tok, id, err
}

// maxSessionID bounds the session ids the Engine mints and opens.
const maxSessionID = 4096

// open checks a session id presented by principal and returns its claims
// and fixed part.
func (e *Engine) open(token, principal string) (state.Claims, fixed, error) {
	var f fixed
	if token == "" || len(token) > maxSessionID {
		return state.Claims{}, f, ErrUnknownSession
	}
	claims, err := e.codec.Open(token)
	if err != nil {
		return state.Claims{}, f, ErrUnknownSession
	}
	if claims.Method != "session" || claims.Audience != e.audience || !isPrincipal(claims.Principal, principal) {
		return state.Claims{}, f, ErrUnknownSession
	}
	if readFixed(claims.Payload, e.versions, &f) != nil || !slices.Contains(e.versions, f.Version) {
		return state.Claims{}, f, ErrUnknownSession
	}
	if f.Epoch != e.epoch {
		// Issued by another process without a bus, or before a restart:
		// its deletion may have been seen there, and not here.
		return state.Claims{}, f, ErrUnknownSession
	}
	e.mu.Lock()
	_, gone := e.revoked[claims.Target]
	if len(e.cut) > 0 {
		if cut, ok := e.cut[ownerKey(claims, f)]; ok && !claims.IssuedAt.After(cut) {
			gone = true
		}
	}
	e.mu.Unlock()
	if gone {
		return state.Claims{}, f, ErrUnknownSession
	}
	if e.rep != nil {
		// A deletion on any replica counts; when the store cannot say,
		// the session is refused rather than served (fail closed).
		deleted, err := e.deleted(claims.Target)
		if err != nil {
			e.log.Warn("legacy: whether a session was deleted cannot be read from the shared store; refused", "err", err)
			return state.Claims{}, f, ErrUnavailable
		}
		if deleted {
			e.revoke(claims.Target, ownerKey(claims, f), claims.IssuedAt, claims.ExpiresAt)
			return state.Claims{}, f, ErrUnknownSession
		}
	}
	return claims, f, nil
}

// Session returns the session whose id is token, presented by caller
// (what the host authenticated for this request; nil when anonymous). Any replica holding the
// key ring can serve any session: its fixed part travels in the id, and
// the mutable extras are made afresh where none are kept.
//
// The caller must Release the session when the request is over: until
// then its extras stay in memory.
func (e *Engine) Session(token string, caller *mrtr.TokenInfo) (*Session, error) {
	principal := subject(caller)
	claims, f, err := e.open(token, principal)
	if err != nil {
		return nil, err
	}
	x, err := e.extras(claims, f)
	if err != nil {
		return nil, err
	}
	return &Session{e: e, id: token, sid: claims.Target, fixed: f, principal: principal, token: caller, x: x, issued: claims.IssuedAt, expires: claims.ExpiresAt}, nil
}

// subject is the principal of a caller: its token's subject, "" when
// anonymous.
func subject(caller *mrtr.TokenInfo) string {
	if caller == nil {
		return ""
	}
	return caller.Subject
}

// legIDsPerMilli spaces the leg ids of extras made afresh for an existing
// session: their counter starts past any id the session can have used.
const legIDsPerMilli = 16

// extras returns the mutable part of the session of claims and f,
// making it when the process keeps none, marks it used and takes a
// reference to it for the caller.
func (e *Engine) extras(claims state.Claims, f fixed) (*extras, error) {
	sid, issued, expires := claims.Target, claims.IssuedAt, claims.ExpiresAt
	e.mu.Lock()
	defer e.mu.Unlock()
	now := e.now()
	if x := e.table[sid]; x != nil {
		x.used = now
		x.refs++
		e.lru.MoveToFront(x.el)
		return x, nil
	}
	ownerKey := ownerKey(claims, f)
	e.pruneLocked(now)
	o := e.owners[ownerKey]
	if o != nil && o.sessions >= e.maxPerOwner {
		// The caller's own least recently used idle session makes room,
		// never another caller's.
		if !e.evictLocked(func(x *extras) bool { return x.owner == ownerKey }) {
			return nil, ErrTooManySessions
		}
	}
	if len(e.table) >= e.max && !e.makeRoomLocked(ownerKey) {
		return nil, ErrBusy
	}
	if o == nil {
		o = &owner{}
		e.owners[ownerKey] = o
	}
	o.sessions++
	x := &extras{sid: sid, owner: ownerKey, issued: issued, expires: expires, used: now, refs: 1, calls: map[string]context.CancelCauseFunc{}, legs: map[string]legWaiter{}}
	if e.rep != nil {
		x.digest = e.rep.sessionDigest(sid)
		e.byDigest[x.digest] = x
	}
	// A session's request ids must never repeat. Extras made again (after
	// an eviction, or on another replica) do not know which leg ids the
	// session used, so they start past any it can have used by now.
	if elapsed := now.Sub(issued).Milliseconds(); elapsed > 0 {
		x.nextLeg = elapsed * legIDsPerMilli
	}
	x.el = e.lru.PushFront(x)
	e.table[sid] = x
	return x, nil
}

// release drops a reference to x taken by extras.
func (e *Engine) release(x *extras) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if x.refs > 0 {
		x.refs--
	}
	x.used = e.now()
	if e.table[x.sid] == x {
		// The list stays ordered by last use, so that pruning stops at
		// the first entry it must keep.
		e.lru.MoveToFront(x.el)
	}
}

// pruneLocked forgets extras idle past the timeout, and revocations
// whose session expired anyway. The caller holds e.mu.
func (e *Engine) pruneLocked(now time.Time) {
	// From the least recently used: the walk ends at the first entry used
	// within the idle timeout, so that making a session costs the same
	// with 10 or 10,000 in the table.
	for el := e.lru.Back(); el != nil; {
		prev := el.Prev()
		x := el.Value.(*extras)
		if now.Sub(x.used) <= e.idle {
			break
		}
		if x.refs == 0 && x.idle() {
			e.forgetLocked(x)
		}
		el = prev
	}
	for len(e.order) > 0 {
		r, ok := e.revoked[e.order[0]]
		if ok && !now.After(r.expires) {
			break
		}
		if ok {
			e.unrevokeLocked(e.order[0], r)
		}
		e.order = e.order[1:]
	}
}

// forgetLocked drops x from the table. The caller holds e.mu.
func (e *Engine) forgetLocked(x *extras) {
	if e.table[x.sid] != x {
		return
	}
	e.lru.Remove(x.el)
	delete(e.table, x.sid)
	delete(e.byDigest, x.digest)
	if o := e.owners[x.owner]; o != nil {
		o.sessions--
		if o.sessions <= 0 && o.calls <= 0 {
			delete(e.owners, x.owner)
		}
	}
}

// evictLocked forgets the least recently used extras that nothing holds,
// that are idle and that match, reporting whether it found one. The
// caller holds e.mu.
func (e *Engine) evictLocked(match func(*extras) bool) bool {
	for el := e.lru.Back(); el != nil; el = el.Prev() {
		x := el.Value.(*extras)
		if x.refs == 0 && match(x) && x.idle() {
			e.forgetLocked(x)
			return true
		}
	}
	return false
}

// makeRoomLocked makes room in a full table for a session of caller, and
// reports whether it could. Extras that hold nothing worth keeping go
// first (with a bus, everything a session changes is in the shared store);
// then the least recently used idle extras of the caller holding the most
// sessions (the caller's own count taken one higher, for the session it
// is making): one caller's flood of new sessions gives up its own before
// it makes another's idle session forget its subscriptions or log level.
// Only when every caller holds as few sessions as the newcomer does the
// least recently used idle session go, whoever holds it. The caller holds
// e.mu.
func (e *Engine) makeRoomLocked(caller string) bool {
	if e.evictLocked(func(x *extras) bool { return e.rep != nil || x.blank() }) {
		return true
	}
	var victim *extras
	best := 0
	for el := e.lru.Back(); el != nil; el = el.Prev() {
		x := el.Value.(*extras)
		if x.refs != 0 {
			continue
		}
		n := 0
		if o := e.owners[x.owner]; o != nil {
			n = o.sessions
		}
		if x.owner == caller {
			n++
		}
		if n > best && x.idle() {
			victim, best = x, n
		}
	}
	if victim == nil {
		return false
	}
	e.forgetLocked(victim)
	return true
}

// maxRevokedFactor bounds the deletions a process remembers one by one:
// this many times its session limit in all, and this many times the
// per-principal session limit per principal (per peer when anonymous).
// Past either, the oldest deletion of the principal remembering the most
// becomes a cut: that principal's sessions issued up to that one's
// issue are refused from then on. A deleted id is so never served
// again while it is valid; what bounded memory costs is that a principal
// deleting many sessions may see some of its other, older sessions end
// with them.
const maxRevokedFactor = 4

// revoke ends session sid of owner ownerKey, issued at issued and whose
// id is valid until expires, in this process.
func (e *Engine) revoke(sid, ownerKey string, issued, expires time.Time) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if _, ok := e.revoked[sid]; !ok {
		e.order = append(e.order, sid)
		e.revokedBy[ownerKey]++
	}
	e.revoked[sid] = revocation{owner: ownerKey, issued: issued, expires: expires.Add(e.skew)}
	e.boundRevokedLocked(ownerKey)
	if x := e.table[sid]; x != nil {
		e.forgetLocked(x)
		x.close()
	}
}

// boundRevokedLocked keeps the deletions remembered one by one within
// their bounds, turning the oldest of the principal remembering the most
// into a cut. The caller holds e.mu.
func (e *Engine) boundRevokedLocked(last string) {
	for {
		victim := ""
		switch {
		case e.revokedBy[last] > maxRevokedFactor*e.maxPerOwner:
			victim = last
		case len(e.revoked) > maxRevokedFactor*e.max:
			n := 0
			for k, c := range e.revokedBy {
				if c > n {
					victim, n = k, c
				}
			}
		default:
			return
		}
		// The victim's oldest deletion becomes (or raises) its cut.
		found := false
		for i, sid := range e.order {
			r, ok := e.revoked[sid]
			if !ok || r.owner != victim {
				continue
			}
			if r.issued.After(e.cut[victim]) {
				e.cut[victim] = r.issued
			}
			e.unrevokeLocked(sid, r)
			e.order = append(e.order[:i:i], e.order[i+1:]...)
			found = true
			break
		}
		if !found {
			return // never: the counts follow the list
		}
		if len(e.cut) > maxRevokedFactor*e.max {
			e.pruneCutsLocked()
		}
	}
}

// unrevokeLocked forgets the deletion r of sid, one by one. The caller
// holds e.mu and removes sid from e.order.
func (e *Engine) unrevokeLocked(sid string, r revocation) {
	delete(e.revoked, sid)
	if e.revokedBy[r.owner]--; e.revokedBy[r.owner] <= 0 {
		delete(e.revokedBy, r.owner)
	}
}

// pruneCutsLocked forgets the cuts whose sessions all expired, and when
// that is not enough the one of the earliest time (logged: a session it
// covered could be served again). The caller holds e.mu.
func (e *Engine) pruneCutsLocked() {
	now := e.now()
	oldest, at := "", time.Time{}
	for k, c := range e.cut {
		if now.After(c.Add(e.lifetime + 2*e.skew)) {
			delete(e.cut, k)
			continue
		}
		if oldest == "" || c.Before(at) {
			oldest, at = k, c
		}
	}
	if len(e.cut) > maxRevokedFactor*e.max {
		delete(e.cut, oldest)
		e.log.Warn("legacy: too many deleted sessions to remember; the oldest deletions of one caller are forgotten")
	}
}

// cutOf returns the cut of owner, if it has one.
func (e *Engine) cutOf(ownerKey string) (time.Time, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	c, ok := e.cut[ownerKey]
	return c, ok
}

// startCall counts a bridged call of owner, reporting false when owner
// has as many in flight as it may.
func (e *Engine) startCall(ownerKey string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	o := e.owners[ownerKey]
	if o == nil {
		o = &owner{}
		e.owners[ownerKey] = o
	}
	if o.calls >= e.maxCallsPerOwner {
		return false
	}
	o.calls++
	return true
}

// endCall ends a call counted by startCall.
func (e *Engine) endCall(ownerKey string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if o := e.owners[ownerKey]; o != nil {
		o.calls--
		if o.sessions <= 0 && o.calls <= 0 {
			delete(e.owners, ownerKey)
		}
	}
}

// Sessions returns how many sessions the process keeps extras for.
func (e *Engine) Sessions() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.table)
}
