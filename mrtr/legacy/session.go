package legacy

import (
	"container/list"
	"context"
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/mrtrkit/mrtrkit/internal/wire"
	"github.com/mrtrkit/mrtrkit/mrtr"
)

// A Sender delivers one encoded JSON-RPC message to the client: on
// Streamable HTTP, an event of a response stream; on stdio, a line of
// stdout. Send must be safe for concurrent use.
type Sender interface {
	Send(msg []byte) error
}

// SenderFunc adapts a function to Sender.
type SenderFunc func(msg []byte) error

// Send calls f.
func (f SenderFunc) Send(msg []byte) error { return f(msg) }

// extras is the mutable part of a session, kept per process.
type extras struct {
	sid     string
	owner   string    // what the session's bounds count against (ownerKey)
	issued  time.Time // when the session id was issued
	digest  string    // names the session on a shared bus; "" without one
	expires time.Time // when the session id expires
	el      *list.Element
	used    time.Time // guarded by Engine.mu
	refs    int       // requests holding the session; guarded by Engine.mu

	// change serialises the changes of level and subscriptions made in
	// this process, each a read, a change and a write.
	change sync.Mutex

	mu        sync.Mutex
	level     mrtr.LogLevel
	subs      map[string]bool
	listen    context.CancelFunc // the session stream's listener, while one runs
	listenGen int                // which Listen call listen belongs to
	stream    Sender             // the session's own stream, while one runs
	changed   chan struct{}      // closed when subs change, to restart the listener
	settled   chan struct{}      // closed once the listener restarted for that change listens
	calls     map[string]context.CancelCauseFunc
	legs      map[string]legWaiter
	nextLeg   int64
	closed    bool
}

// legWaiter is one server-to-client request waiting for its answer.
type legWaiter struct {
	call chan legAnswer
	key  string
}

// legAnswer is the client's response to one server-to-client request.
type legAnswer struct {
	id     string
	result json.RawMessage
	err    json.RawMessage
}

// blank reports whether x holds nothing a client set: no log level, no
// subscriptions. Forgetting it costs the session nothing.
func (x *extras) blank() bool {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.level == "" && len(x.subs) == 0
}

func (x *extras) idle() bool {
	x.mu.Lock()
	defer x.mu.Unlock()
	return len(x.calls) == 0 && x.listen == nil
}

// close cancels everything the session has running.
func (x *extras) close() {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.closed = true
	for _, cancel := range x.calls {
		cancel(errSessionClosed)
	}
	if x.listen != nil {
		x.listen()
	}
}

var (
	errSessionClosed = errors.New("legacy: session deleted")
	errCancelled     = errors.New("legacy: cancelled by the client")
)

// Session is one session of a client of the initialize era, as seen by
// one request. Get one with Engine.Session.
type Session struct {
	e         *Engine
	id        string // the session id as the client sends it
	sid       string
	fixed     fixed
	principal string
	token     *mrtr.TokenInfo
	headers   map[string]string
	peer      string
	x         *extras
	issued    time.Time
	expires   time.Time
	released  bool
}

// SetHeaders sets the request headers the host passes on to handlers
// for the request that got s (mrtr.Inbound.Headers: by lower-cased name).
func (s *Session) SetHeaders(h map[string]string) { s.headers = h }

// SetPeer sets who the transport sees at the other end of the request
// that got s (the client's IP address on Streamable HTTP), passed on as
// mrtr.Inbound.Peer with every request the session makes of the Server,
// so that the Server's limits count anonymous callers per peer: one
// anonymous client holding calls or streams cannot use up another's
// share. Without it every anonymous session of the process is one
// caller.
func (s *Session) SetPeer(peer string) { s.peer = peer }

// Release tells the Engine that the request that got s is over. Until
// every such request is, the session's extras (calls in flight, stream)
// are kept even past the idle timeout and the session limit.
func (s *Session) Release() {
	if !s.released {
		s.released = true
		s.e.release(s.x)
	}
}

// ID returns the session id, for the Mcp-Session-Id header.
func (s *Session) ID() string { return s.id }

// Version returns the protocol version the session negotiated.
func (s *Session) Version() string { return s.fixed.Version }

// Close ends the session (a DELETE on Streamable HTTP): its calls and its
// stream are cancelled and its id is refused from now on, by this process
// and, when the Engine shares a bus, by every replica (the deletion is
// recorded in the shared store before Close returns). When the store
// cannot be written, the session is still ended here, and Close returns an
// error matching ErrUnavailable (and so ErrBusy): the other replicas would
// serve the session until its id expires, so the client should be told to
// try again (Streamable HTTP answers 503) rather than that it is gone.
func (s *Session) Close() error {
	s.e.revoke(s.sid, s.x.owner, s.issued, s.expires)
	if s.e.rep != nil {
		return s.e.deleteShared(s.sid, s.expires)
	}
	return nil
}

// Handle serves one message of the session and returns the response to
// write, or nil when there is none: for a notification, for a response
// (the client's answer to one of the session's requests, which always
// succeeds, even late or unknown), and for a request the client cancelled,
// which gets no answer. Requests the server sends the client while it
// serves msg (the questions of a multi-round handler) go to out, as do
// the request's progress and log notifications.
func (s *Session) Handle(ctx context.Context, msg *mrtr.Message, out Sender) *mrtr.Response {
	switch {
	case msg.IsResponse():
		s.answer(msg)
		return nil
	case msg.IsNotification():
		s.notify(msg)
		return nil
	}
	switch msg.Method {
	case "ping":
		return result(msg, emptyResult)
	case "initialize":
		return failure(msg, mrtr.CodeInvalidRequest, "Invalid request: the session is already initialized")
	case "logging/setLevel":
		return s.setLevel(ctx, msg)
	case "resources/subscribe", "resources/unsubscribe":
		return s.subscribe(ctx, msg)
	case wire.MethodToolsCall, wire.MethodPromptsGet, wire.MethodResourcesRead:
		return s.bridge(ctx, msg, out)
	case wire.MethodToolsList, wire.MethodPromptsList, wire.MethodResourcesList, wire.MethodTemplatesList, wire.MethodComplete:
		return s.pass(ctx, msg, out)
	}
	// server/discover and subscriptions/listen are not methods of the
	// initialize era, and nothing else is either.
	return failure(msg, mrtr.CodeMethodNotFound, "Method not found: "+clipped(msg.Method))
}

var emptyResult = json.RawMessage(`{}`)

func result(msg *mrtr.Message, r json.RawMessage) *mrtr.Response {
	return &mrtr.Response{ID: msg.ID, Result: r}
}

func failure(msg *mrtr.Message, code mrtr.Code, message string) *mrtr.Response {
	return &mrtr.Response{ID: msg.ID, Error: mrtr.NewError(code, message, nil)}
}

// notify handles a notification of the client.
func (s *Session) notify(msg *mrtr.Message) {
	if msg.Method != "notifications/cancelled" {
		// notifications/initialized and roots/list_changed need nothing:
		// roots are asked afresh whenever a handler needs them.
		return
	}
	var p struct {
		RequestID json.RawMessage `json:"requestId"`
	}
	if json.Unmarshal(msg.Params, &p) != nil || len(p.RequestID) == 0 {
		return
	}
	key := idKey(p.RequestID)
	s.x.mu.Lock()
	cancel := s.x.calls[key]
	s.x.mu.Unlock()
	switch {
	case cancel != nil:
		cancel(errCancelled)
	case s.e.rep != nil:
		// The call may run on another replica.
		s.cancelElsewhere(key)
	}
}

// idKey is the canonical text of a JSON-RPC id, for lookups: a string id
// decoded and re-encoded, an integer as digits.
func idKey(raw json.RawMessage) string {
	if isInteger(raw) {
		if n, err := strconv.ParseInt(string(raw), 10, 64); err == nil {
			return strconv.FormatInt(n, 10)
		}
	}
	var n int64
	if json.Unmarshal(raw, &n) == nil {
		return strconv.FormatInt(n, 10)
	}
	if s, ok := wire.String(raw); ok && len(raw) > 0 && raw[0] == '"' {
		return strconv.Quote(s)
	}
	return string(raw)
}

// isInteger reports whether raw is a JSON integer literal: -?(0|[1-9][0-9]*).
func isInteger(raw []byte) bool {
	if len(raw) > 0 && raw[0] == '-' {
		raw = raw[1:]
	}
	if len(raw) == 0 || (raw[0] == '0' && len(raw) > 1) {
		return false
	}
	for _, c := range raw {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// answer routes the client's response to the leg waiting for it.
// Answers nobody waits for (late, duplicate, after a cancellation) are
// dropped.
func (s *Session) answer(msg *mrtr.Message) {
	key := idKey(json.RawMessage(msg.ID.String()))
	switch {
	case s.x.deliver(key, msg.Result, msg.Error):
	case s.e.rep != nil:
		// The leg may wait on another replica: its id says which.
		s.forward(key, msg.Result, msg.Error)
	default:
		s.e.log.Debug("legacy: dropped an answer nobody waits for", "id", clipped(msg.ID.String()))
	}
}

func (s *Session) setLevel(ctx context.Context, msg *mrtr.Message) *mrtr.Response {
	if s.e.srv.Capabilities().Logging == nil {
		return failure(msg, mrtr.CodeMethodNotFound, "Method not found: logging/setLevel")
	}
	var p struct {
		Level mrtr.LogLevel `json:"level"`
	}
	if json.Unmarshal(msg.Params, &p) != nil || !p.Level.Valid() {
		return failure(msg, mrtr.CodeInvalidParams, "logging/setLevel needs a level: debug, info, notice, warning, error, critical, alert or emergency")
	}
	s.x.change.Lock()
	defer s.x.change.Unlock()
	if s.e.rep == nil {
		s.x.mu.Lock()
		s.x.level = p.Level
		s.x.mu.Unlock()
		return result(msg, emptyResult)
	}
	// Shared: the level joins the session's record, read afresh so that
	// the subscriptions another replica recorded are kept.
	if err := s.refresh(ctx); err != nil {
		return s.unshared(msg, err)
	}
	s.x.mu.Lock()
	r := s.x.recordLocked()
	s.x.mu.Unlock()
	r.Level = p.Level
	if err := s.store(ctx, r); err != nil {
		return s.unshared(msg, err)
	}
	s.x.apply(r)
	return result(msg, emptyResult)
}

// unshared answers a change of the session that could not be shared with
// the other replicas: nothing changed.
func (s *Session) unshared(msg *mrtr.Message, err error) *mrtr.Response {
	s.e.log.Warn("legacy: a session change could not be shared with the other replicas", "method", msg.Method, "err", err)
	return failure(msg, mrtr.CodeInternalError, "Internal error: the change could not be saved; retry later")
}

// maxSubscriptions bounds the resources one session subscribes to.
const maxSubscriptions = wire.MaxResourceSubscriptions

func (s *Session) subscribe(ctx context.Context, msg *mrtr.Message) *mrtr.Response {
	caps := s.e.srv.Capabilities()
	if caps.Resources == nil || !caps.Resources.Subscribe {
		return failure(msg, mrtr.CodeMethodNotFound, "Method not found: "+msg.Method)
	}
	var p struct {
		URI string `json:"uri"`
	}
	if json.Unmarshal(msg.Params, &p) != nil || p.URI == "" {
		return failure(msg, mrtr.CodeInvalidParams, msg.Method+" needs params.uri, a non-empty string")
	}
	if msg.Method == "resources/subscribe" && len(p.URI) > MaxSubscriptionURI {
		return failure(msg, mrtr.CodeInvalidParams, "Invalid params: params.uri is longer than "+strconv.Itoa(MaxSubscriptionURI)+" bytes, more than a session may subscribe to")
	}
	s.x.change.Lock()
	defer s.x.change.Unlock()
	if s.e.rep != nil {
		if err := s.refresh(ctx); err != nil {
			return s.unshared(msg, err)
		}
	}
	s.x.mu.Lock()
	subs := make(map[string]bool, len(s.x.subs)+1)
	for u := range s.x.subs {
		subs[u] = true
	}
	level := s.x.level
	s.x.mu.Unlock()
	if msg.Method == "resources/subscribe" {
		if !subs[p.URI] && len(subs) >= maxSubscriptions {
			return failure(msg, mrtr.CodeInvalidParams, "a session subscribes to at most "+strconv.Itoa(maxSubscriptions)+" resources")
		}
		if !subs[p.URI] {
			total := len(p.URI)
			for u := range subs {
				total += len(u)
			}
			if total > s.e.maxSubBytes {
				return failure(msg, mrtr.CodeInvalidParams, "Invalid params: the session's subscribed URIs would exceed "+strconv.Itoa(s.e.maxSubBytes)+" bytes together; unsubscribe from some first")
			}
		}
		subs[p.URI] = true
	} else {
		delete(subs, p.URI)
	}
	if s.e.rep != nil {
		r := record{Level: level, Subs: slices.Sorted(maps.Keys(subs))}
		if err := s.store(ctx, r); errors.Is(err, errRecordTooLarge) {
			return failure(msg, mrtr.CodeInvalidParams, "the session's subscribed URIs exceed "+strconv.Itoa(maxRecord)+" bytes together")
		} else if err != nil {
			return s.unshared(msg, err)
		}
	}
	s.x.mu.Lock()
	s.x.subs = subs
	settled := s.x.settled
	if s.x.changed != nil {
		close(s.x.changed)
		s.x.changed, s.x.settled = nil, nil
	}
	s.x.mu.Unlock()
	if settled != nil {
		// The session's stream listens again with the new subscriptions
		// before the answer goes: an update right after it is not lost.
		select {
		case <-settled:
		case <-time.After(2 * time.Second):
		}
	}
	return result(msg, emptyResult)
}

// clipped bounds a value the client sent for a message or a log line.
func clipped(v string) string { return strconv.Quote(wire.Clip(v)) }
