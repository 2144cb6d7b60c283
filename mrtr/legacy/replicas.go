package legacy

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mrtrkit/mrtrkit/mrtr"
	"github.com/mrtrkit/mrtrkit/share"
)

// This file is the Engine's side of a shared bus (mrtr.WithShare): what
// lets any replica serve any request of a session, without affinity.
// Without a bus, nothing here runs.

// Bounds of what crosses the bus.
const (
	// MaxForwardedAnswer bounds the result (or error) of a client's
	// answer that one replica passes to another. A bigger answer reaches
	// the waiting call as a refusal saying so, at once, rather than never.
	MaxForwardedAnswer = 4 << 20
	// maxRecord bounds a session's shared record (log level and
	// subscribed URIs, as JSON).
	maxRecord = 64 << 10
	// maxEventID bounds a request id carried by an event.
	maxEventID = 256
	// maxPendingLegs bounds the server-to-client requests waiting for an
	// answer on one session, on one replica.
	maxPendingLegs = 256
	// storeTimeout bounds one read or write of the shared store, and one
	// publish.
	storeTimeout = 3 * time.Second
	// listenRefresh is how often a session's stream reads its record
	// again, in case an event about it was missed.
	listenRefresh = 30 * time.Second
)

// ErrUnavailable is returned by Engine.Session when the Engine shares a
// bus and cannot tell whether the session was deleted because the shared
// store did not answer: the session is refused rather than served when it
// might have been deleted (fail closed). errors.Is(err, ErrBusy) holds for
// it too, so a host that knows only ErrBusy answers "retry later" (503 on
// Streamable HTTP) instead of "unknown session", which would make the
// client start a new session for nothing.
var ErrUnavailable error = unavailable{}

type unavailable struct{}

func (unavailable) Error() string        { return "legacy: the shared store cannot be read" }
func (unavailable) Is(target error) bool { return target == ErrBusy }

// replicas is what an Engine with a shared bus keeps: who it is on the
// bus and its subscriptions.
type replicas struct {
	bus    share.Bus
	id     string // this replica's prefix of leg ids, 12 hex digits
	events string // channel of session changes and cancellations, every replica
	inbox  string // channel of answers for this replica's legs
	salt   string // what session digests are made from beside the sid
	stops  []func()
}

// event is what the Engine publishes on the bus.
type event struct {
	Replica string          `json:"r"`
	Kind    string          `json:"k"`             // evRecord, evDeleted, evCancel, evAnswer
	Session string          `json:"s"`             // digest of the session
	Record  *record         `json:"rec,omitempty"` // evRecord
	ID      string          `json:"id,omitempty"`  // evCancel: the call; evAnswer: the leg (JSON text)
	Result  json.RawMessage `json:"res,omitempty"` // evAnswer
	Error   json.RawMessage `json:"err,omitempty"` // evAnswer
}

const (
	evRecord  = "rec"
	evDeleted = "del"
	evCancel  = "cancel"
	evAnswer  = "ans"
)

// record is the mutable part of a session every replica shares.
type record struct {
	Level mrtr.LogLevel `json:"l,omitempty"`
	Subs  []string      `json:"u,omitempty"`
}

// digest names something on the bus without showing it: a session id or
// a principal never appears in a channel, a key or a payload.
func digest(parts ...string) string {
	sum := sha256.Sum256([]byte("mrtrkit legacy\x00" + strings.Join(parts, "\x00")))
	return hex.EncodeToString(sum[:16])
}

// startReplicas joins the bus: this replica's inbox and the channel of
// session events.
func (e *Engine) startReplicas(bus share.Bus) error {
	var id [6]byte
	if _, err := rand.Read(id[:]); err != nil {
		return err
	}
	r := &replicas{bus: bus, id: hex.EncodeToString(id[:]), salt: digest("deployment", e.audience)}
	r.events = "mrtrkit/legacy/events/" + r.salt
	r.inbox = "mrtrkit/legacy/replica/" + r.id
	e.rep = r
	for ch, fn := range map[string]func([]byte){r.events: e.receiveEvent, r.inbox: e.receiveAnswer} {
		stop, err := bus.Subscribe(ch, fn)
		if err != nil {
			e.closeReplicas()
			return err
		}
		r.stops = append(r.stops, stop)
	}
	return nil
}

func (e *Engine) closeReplicas() {
	if e.rep == nil {
		return
	}
	for _, stop := range e.rep.stops {
		stop()
	}
	e.rep.stops = nil
}

// Close leaves the shared bus (mrtr.WithShare): the Engine stops
// receiving the answers, cancellations and session changes other
// replicas pass on. Call it when the replica shuts down, with the
// Server's Close. It does nothing without a bus, and is safe to call more
// than once.
func (e *Engine) Close() error {
	e.closeOnce.Do(e.closeReplicas)
	return nil
}

// sessionDigest names session sid on the bus.
func (r *replicas) sessionDigest(sid string) string { return digest("session", r.salt, sid) }

func (r *replicas) recordKey(d string) string  { return "mrtrkit/legacy/record/" + d }
func (r *replicas) deletedKey(d string) string { return "mrtrkit/legacy/deleted/" + d }

// publish sends ev, logging a failure: delivery between replicas is best
// effort.
func (e *Engine) publish(channel string, ev event) {
	ev.Replica = e.rep.id
	b, err := json.Marshal(ev)
	if err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
		err = e.rep.bus.Publish(ctx, channel, b)
		cancel()
	}
	if err != nil {
		e.log.Warn("legacy: publishing to the other replicas failed", "kind", ev.Kind, "err", err)
	}
}

// receiveEvent applies what another replica published about a session
// this replica keeps extras for.
func (e *Engine) receiveEvent(payload []byte) {
	if len(payload) > maxRecord+4096 {
		return
	}
	var ev event
	if json.Unmarshal(payload, &ev) != nil || ev.Replica == e.rep.id {
		return
	}
	e.mu.Lock()
	x := e.byDigest[ev.Session]
	e.mu.Unlock()
	if x == nil {
		return
	}
	switch ev.Kind {
	case evRecord:
		if ev.Record != nil && ev.Record.valid() {
			x.apply(*ev.Record)
		}
	case evDeleted:
		e.revoke(x.sid, x.owner, x.issued, x.expires)
	case evCancel:
		x.mu.Lock()
		cancel := x.calls[ev.ID]
		x.mu.Unlock()
		if cancel != nil {
			cancel(errCancelled)
		}
	}
}

// receiveAnswer hands an answer another replica received to the leg of
// this replica waiting for it.
func (e *Engine) receiveAnswer(payload []byte) {
	if len(payload) > 2*MaxForwardedAnswer+4096 {
		return
	}
	var ev event
	if json.Unmarshal(payload, &ev) != nil || ev.Kind != evAnswer {
		return
	}
	e.mu.Lock()
	x := e.byDigest[ev.Session]
	e.mu.Unlock()
	if x != nil {
		x.deliver(ev.ID, ev.Result, ev.Error)
	}
}

// legID returns the JSON text of the next id of a server-to-client
// request of x: an integer counting from 1 in a process of its own; with a
// shared bus, a string naming this replica and 128 random bits
// ("<replica>-<32 hex digits>"), so that ids never repeat in a session
// whatever replica sends them, any replica that receives the answer knows
// where to pass it, and nobody who has not seen the request can guess
// its id. The caller holds x.mu.
func (e *Engine) legID(x *extras) string {
	if e.rep == nil {
		x.nextLeg++
		return strconv.FormatInt(x.nextLeg, 10)
	}
	var n [legRandom]byte
	if _, err := rand.Read(n[:]); err != nil {
		panic("legacy: crypto/rand failed: " + err.Error()) // never, as crypto/rand documents
	}
	return strconv.Quote(e.rep.id + "-" + hex.EncodeToString(n[:]))
}

// legRandom is how many random bytes a leg id of a replica carries.
const legRandom = 16

// replicaOf returns the replica prefix of a leg id's key, "" when the key
// is not a leg id the replicas make.
func replicaOf(key string) string {
	s, err := strconv.Unquote(key)
	if err != nil || len(key) > maxEventID {
		return ""
	}
	prefix, n, ok := strings.Cut(s, "-")
	if !ok || len(prefix) != 12 || len(n) != 2*legRandom || strings.Trim(prefix, "0123456789abcdef") != "" || strings.Trim(n, "0123456789abcdef") != "" {
		return ""
	}
	return prefix
}

// forward passes an answer that no leg of this replica waits for to the
// replica its id names.
func (s *Session) forward(key string, result, failure json.RawMessage) {
	r := s.e.rep
	to := replicaOf(key)
	if to == "" || to == r.id {
		s.e.log.Debug("legacy: dropped an answer nobody waits for", "id", clipped(key))
		return
	}
	if len(result) > MaxForwardedAnswer || len(failure) > MaxForwardedAnswer {
		result = nil
		failure = json.RawMessage(`{"code":-32603,"message":"The answer is larger than ` + strconv.Itoa(MaxForwardedAnswer) + ` bytes, more than replicas pass on"}`)
	}
	s.e.publish("mrtrkit/legacy/replica/"+to, event{Kind: evAnswer, Session: s.x.digest, ID: key, Result: result, Error: failure})
}

// cancelElsewhere passes a cancellation for a call this replica does not
// run to every replica.
func (s *Session) cancelElsewhere(key string) {
	if len(key) > maxEventID {
		return
	}
	s.e.publish(s.e.rep.events, event{Kind: evCancel, Session: s.x.digest, ID: key})
}

// valid reports whether a record read from the bus can be used.
func (r record) valid() bool {
	if r.Level != "" && !r.Level.Valid() {
		return false
	}
	return len(r.Subs) <= maxSubscriptions
}

// refresh reads the session's record from the shared store into its
// extras. Without a bus it does nothing.
func (s *Session) refresh(ctx context.Context) error {
	if s.e.rep == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, storeTimeout)
	defer cancel()
	b, found, err := s.e.rep.bus.Get(ctx, s.e.rep.recordKey(s.x.digest))
	if err != nil {
		return err
	}
	var r record
	if found {
		if len(b) > maxRecord || json.Unmarshal(b, &r) != nil || !r.valid() {
			return errors.New("legacy: the session's shared record does not read")
		}
	}
	s.x.apply(r)
	return nil
}

// refreshOrWarn refreshes the session's record, serving with what this
// replica knows when the store cannot be read.
func (s *Session) refreshOrWarn(ctx context.Context) {
	if err := s.refresh(ctx); err != nil {
		s.e.log.Warn("legacy: a session's shared record could not be read; serving with this replica's copy", "err", err)
	}
}

// store writes the session's record to the shared store, then tells the
// other replicas. Without a bus it does nothing.
func (s *Session) store(ctx context.Context, r record) error {
	if s.e.rep == nil {
		return nil
	}
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	if len(b) > maxRecord {
		return errRecordTooLarge
	}
	ttl := time.Until(s.expires.Add(s.e.skew))
	if ttl < time.Millisecond {
		ttl = time.Millisecond
	}
	ctx, cancel := context.WithTimeout(ctx, storeTimeout)
	defer cancel()
	if err := s.e.rep.bus.Put(ctx, s.e.rep.recordKey(s.x.digest), b, ttl); err != nil {
		return err
	}
	s.e.publish(s.e.rep.events, event{Kind: evRecord, Session: s.x.digest, Record: &r})
	return nil
}

var errRecordTooLarge = errors.New("legacy: the session's subscriptions are too large to share")

// deleted reports whether session sid was deleted on any replica. An
// error means the store could not tell.
func (e *Engine) deleted(sid string) (bool, error) {
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	_, found, err := e.rep.bus.Get(ctx, e.rep.deletedKey(e.rep.sessionDigest(sid)))
	return found, err
}

// deleteShared records the deletion of session sid for every replica and
// tells them, so that its calls and stream end wherever they run.
func (e *Engine) deleteShared(sid string, expires time.Time) error {
	d := e.rep.sessionDigest(sid)
	ttl := time.Until(expires.Add(e.skew))
	if ttl < time.Millisecond {
		ttl = time.Millisecond
	}
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	_, err := e.rep.bus.Claim(ctx, e.rep.deletedKey(d), ttl)
	cancel()
	// The event ends the session's calls and stream on the other replicas
	// even when the marker could not be written (best effort, as events
	// are); only the marker keeps them refusing it afterwards.
	e.publish(e.rep.events, event{Kind: evDeleted, Session: d})
	if err != nil {
		e.log.Error("legacy: the deletion of a session could not be shared; other replicas serve it until it expires", "err", err)
		return ErrUnavailable
	}
	return nil
}

// apply takes r as the session's log level and subscriptions; a change of
// the subscriptions restarts the session's stream with them.
func (x *extras) apply(r record) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.level = r.Level
	subs := make(map[string]bool, len(r.Subs))
	for _, u := range r.Subs {
		subs[u] = true
	}
	if maps.Equal(subs, x.subs) || (len(subs) == 0 && len(x.subs) == 0) {
		return
	}
	x.subs = subs
	if x.changed != nil {
		close(x.changed)
		x.changed, x.settled = nil, nil
	}
}

// recordLocked is x's shared part. The caller holds x.mu.
func (x *extras) recordLocked() record {
	r := record{Level: x.level, Subs: make([]string, 0, len(x.subs))}
	for u := range x.subs {
		r.Subs = append(r.Subs, u)
	}
	slices.Sort(r.Subs)
	return r
}

// deliver hands an answer to the leg of x waiting for it, reporting
// whether one was.
func (x *extras) deliver(key string, result, failure json.RawMessage) bool {
	x.mu.Lock()
	w, ok := x.legs[key]
	if ok {
		delete(x.legs, key)
	}
	x.mu.Unlock()
	if ok {
		w.call <- legAnswer{id: key, result: result, err: failure}
	}
	return ok
}
