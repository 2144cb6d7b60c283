package streamablehttp

import (
	"errors"
	"log/slog"
	"net/http"
	"slices"
	"time"

	"github.com/mrtrkit/mrtrkit/mrtr"
	"github.com/mrtrkit/mrtrkit/mrtr/legacy"
)

// hdrSessionID is the header that carries a session of the initialize era.
const hdrSessionID = "Mcp-Session-Id"

// legacyEra serves clients of the initialize era (MCP 2025-11-25 and
// 2025-06-18) through a legacy.Engine: initialize opens a session whose
// id travels in Mcp-Session-Id, GET opens the session's stream, DELETE
// ends the session, and POSTed responses answer the server's requests.
//
// It claims, before the modern era looks: every GET and DELETE; a POSTed
// JSON-RPC response; and a POST whose params._meta claims no protocol
// version and whose MCP-Protocol-Version header is absent or not a modern
// version the server offers (an unknown version is refused with 400). A
// POST that claims a version in params._meta is modern, whatever else it
// carries, and so is one without a claim under a modern header (the
// server then refuses it for its missing _meta).
type legacyEra struct {
	eng       *legacy.Engine
	srv       *mrtr.Server
	keepAlive time.Duration
	log       *slog.Logger
	meta      string // the resource metadata URL of scope challenges
}

var legacyMethods = []string{http.MethodGet, http.MethodPost, http.MethodDelete}

func (*legacyEra) methods() []string { return legacyMethods }

func (l *legacyEra) claims(r *http.Request, msg *mrtr.Message) bool {
	switch r.Method {
	case http.MethodGet, http.MethodDelete:
		return true
	case http.MethodPost:
	default:
		return false
	}
	if msg.IsResponse() {
		return true
	}
	if _, ok := msg.ClaimedVersion(); ok {
		return false
	}
	v := r.Header.Get("Mcp-Protocol-Version")
	desc := l.srv.Description()
	return v == "" || !desc.Supports(v)
}

func (l *legacyEra) serve(w http.ResponseWriter, r *http.Request, x exchange) {
	answer := x.msg != nil && x.msg.IsResponse()
	// An answer is never refused, whatever its headers (see post).
	if v := r.Header.Get("Mcp-Protocol-Version"); !answer && v != "" && !slices.Contains(l.srv.Description().LegacyVersions, v) {
		l.refuse(w, x, refuseUnknownVersion)
		return
	}
	id := r.Header.Values(hdrSessionID)
	sid := ""
	switch {
	case len(id) > 1:
		l.refuse(w, x, refuseSessionHeaders)
		return
	case len(id) == 1:
		sid = id[0]
	}
	switch r.Method {
	case http.MethodGet:
		l.stream(w, r, x, sid)
	case http.MethodDelete:
		l.delete(w, r, x, sid)
	default:
		l.post(w, r, x, sid)
	}
}

// refuse answers a request of the initialize era that cannot be served.
func (l *legacyEra) refuse(w http.ResponseWriter, x exchange, r refusal) {
	var id mrtr.ID
	if x.msg != nil {
		id = x.msg.ID
	}
	refuseID(w, id, r, l.log)
}

// session resolves the session of a request, answering the request when
// there is none to serve. The caller releases the session when done.
func (l *legacyEra) session(w http.ResponseWriter, r *http.Request, x exchange, sid string) *legacy.Session {
	if sid == "" {
		l.refuse(w, x, refuseNoSession)
		return nil
	}
	s, err := l.eng.Session(sid, x.token)
	switch {
	case errors.Is(err, legacy.ErrUnavailable):
		l.refuse(w, x, refuseStoreDown)
		return nil
	case errors.Is(err, legacy.ErrTooManySessions):
		l.refuse(w, x, refuseCallerSessions)
		return nil
	case errors.Is(err, legacy.ErrBusy):
		l.refuse(w, x, refuseBusy)
		return nil
	case err != nil:
		l.refuse(w, x, refuseUnknownSession)
		return nil
	}
	if v := r.Header.Get("Mcp-Protocol-Version"); v != "" && v != s.Version() {
		s.Release()
		l.refuse(w, x, refuseLegacyVersion)
		return nil
	}
	s.SetHeaders(x.headers)
	s.SetPeer(peerOf(r))
	return s
}

func (l *legacyEra) post(w http.ResponseWriter, r *http.Request, x exchange, sid string) {
	msg := x.msg
	if msg.IsResponse() {
		// An answer to one of the session's requests. It is accepted
		// whatever becomes of it (late, duplicate, unknown, or for a
		// session this process does not know): a 4xx would make some
		// clients drop their whole session.
		if sid != "" {
			if s, err := l.eng.Session(sid, x.token); err == nil {
				s.SetPeer(peerOf(r))
				s.Handle(r.Context(), msg, nil)
				s.Release()
			}
		}
		writeAccepted(w)
		return
	}
	if msg.Method == "initialize" {
		l.initialize(w, r, x, sid)
		return
	}
	s := l.session(w, r, x, sid)
	if s == nil {
		return
	}
	defer s.Release()
	if msg.IsNotification() {
		s.Handle(r.Context(), msg, nil)
		writeAccepted(w)
		return
	}
	st := &stream{w: w, ctx: r.Context(), keepAlive: l.keepAlive, log: l.log, inBand: true, resourceMetadata: l.meta}
	resp := s.Handle(r.Context(), msg, legacy.SenderFunc(st.emit))
	if resp == nil {
		// The client cancelled the request or went away: it gets no
		// answer, and its stream ends.
		st.close()
		return
	}
	st.finish(resp)
}

func (l *legacyEra) initialize(w http.ResponseWriter, r *http.Request, x exchange, sid string) {
	if sid != "" {
		l.refuse(w, x, refuseReinitialize)
		return
	}
	s, resp, err := l.eng.InitializeFrom(x.token, peerOf(r), x.msg)
	switch {
	case errors.Is(err, legacy.ErrTooManySessions):
		l.refuse(w, x, refuseCallerSessions)
		return
	case errors.Is(err, legacy.ErrBusy):
		l.refuse(w, x, refuseBusy)
		return
	case err != nil:
		l.refuse(w, x, refuseInternal)
		return
	case resp == nil:
		writeAccepted(w)
		return
	}
	if s != nil {
		w.Header()[hdrSessionID] = []string{s.ID()}
		s.Release()
	}
	bp := getBuffer()
	defer putBuffer(bp)
	*bp = encodeResponse(resp, (*bp)[:0], l.log)
	writeBody(w, statusResult, *bp, l.log)
}

func (l *legacyEra) delete(w http.ResponseWriter, r *http.Request, x exchange, sid string) {
	s := l.session(w, r, x, sid)
	if s == nil {
		return
	}
	defer s.Release()
	if err := s.Close(); err != nil {
		// Ended here, but the other replicas could not be told: the
		// client should send the DELETE again rather than take the
		// session for gone everywhere.
		l.refuse(w, x, refuseStoreDown)
		return
	}
	w.WriteHeader(statusEnded)
}

// stream serves the session's GET stream: the headers and a first comment
// go out as soon as the session listens (some clients wait for them before
// going on), then the session's notifications as they come, with
// keep-alive comments between. A listen the Server refuses is answered
// 429 (the caller's limit) or 503 instead.
func (l *legacyEra) stream(w http.ResponseWriter, r *http.Request, x exchange, sid string) {
	if !acceptsStream(r.Header["Accept"]) {
		l.refuse(w, x, refuseAcceptStream)
		return
	}
	s := l.session(w, r, x, sid)
	if s == nil {
		return
	}
	defer s.Release()
	st := &stream{w: w, ctx: r.Context(), keepAlive: l.keepAlive, log: l.log}
	// The stream opens once the session listens: a listen the Server
	// refuses (its listener limits) is answered 429 or 503, not with a
	// stream that ends at once.
	opened := false
	err := s.ListenOpen(r.Context(), legacy.SenderFunc(st.emit), func() bool {
		opened = st.open()
		return opened
	})
	var refused *legacy.StreamRefusedError
	if !opened && errors.As(err, &refused) {
		writeError(w, loadStatus(refused.Err.Limit()), mrtr.ID{}, refused.Err, l.log)
		return
	}
	st.close()
}
