package streamablehttp

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mrtrkit/mrtrkit/internal/wire"
	"github.com/mrtrkit/mrtrkit/mrtr"
	"github.com/mrtrkit/mrtrkit/mrtr/legacy"
)

// Handler serves MCP over Streamable HTTP at one path. Build it with New;
// it is an http.Handler, safe for concurrent use, to be given to an
// http.Server or mounted in a router. Beside the endpoint it serves what
// a deployment publishes with it, each at the path its option names: the
// RFC 9728 protected resource metadata (WithResourceMetadataHandler) and
// the health probes (WithLiveness, WithReadiness), so that a deployment
// mounts one handler. Every other path gets 404; paths compare exactly,
// so mount it where it sees the full request path.
//
// subscriptions/listen streams stay open until the client leaves or the
// mrtr.Server is closed, so call the Server's Close before
// http.Server.Shutdown (or register it with RegisterOnShutdown): the
// streams then end with their final result and Shutdown does not wait for
// them until its deadline.
//
// NewHTTPServer returns an http.Server suited to it: one whose
// whole-request timeouts do not cut those streams, the Handler bounding
// each body read and each write itself (WithReadTimeout,
// WithWriteTimeout).
type Handler struct {
	cfg    config
	srv    *mrtr.Server
	log    *slog.Logger
	guard  guard
	cors   *corsPolicy // nil without WithCORS
	eras   []era
	allow  []string                // the Allow header of a 405
	routes map[string]http.Handler // what is served beside the endpoint, by path
	budget *budget                 // nil: no bound on the bytes in flight
	legacy *legacy.Engine          // nil: the initialize era is not served
}

// New returns a Handler serving srv at the configured path, to clients of
// MCP 2026-07-28 and, when the server's description lists LegacyVersions,
// to clients of those versions of the initialize era, through the Engine
// of WithLegacy or one New makes (see WithLegacy and WithoutLegacy). A
// description listing a legacy version the endpoint cannot serve is an
// error: server/discover would advertise a version the endpoint refuses.
func New(srv *mrtr.Server, opts ...Option) (*Handler, error) {
	if srv == nil {
		return nil, errors.New("streamablehttp: nil server")
	}
	cfg := defaultConfig()
	for _, o := range opts {
		o.apply(&cfg)
	}
	switch {
	case !strings.HasPrefix(cfg.path, "/"):
		return nil, fmt.Errorf("streamablehttp: path %q must start with /", cfg.path)
	case cfg.maxBody < 1:
		return nil, fmt.Errorf("streamablehttp: max body bytes must be positive, not %d", cfg.maxBody)
	case cfg.keepAlive < 0:
		return nil, fmt.Errorf("streamablehttp: keep-alive interval must not be negative, not %v", cfg.keepAlive)
	case cfg.readTimeout < 0 || cfg.writeTimeout < 0:
		return nil, errors.New("streamablehttp: read and write timeouts must not be negative")
	case cfg.maxInFlight < 0:
		return nil, fmt.Errorf("streamablehttp: the bytes in flight must not be negative, not %d", cfg.maxInFlight)
	}
	g, err := newGuard(cfg.hosts, cfg.origins)
	if err != nil {
		return nil, err
	}
	log := cfg.log
	if log == nil {
		log = srv.Logger()
	}
	h := &Handler{cfg: cfg, srv: srv, log: log, guard: g, budget: newBudget(cfg.maxInFlight)}
	h.eras = []era{&modern{srv: srv, keepAlive: cfg.keepAlive, log: log, meta: cfg.resourceMetadata}}
	eng, err := legacyEngine(srv, &cfg, log)
	if err != nil {
		return nil, err
	}
	if e := eng; e != nil {
		h.legacy = e
		// The era of the initialize era goes first: it claims only what
		// is recognisably its own.
		h.eras = append([]era{&legacyEra{eng: e, srv: srv, keepAlive: cfg.keepAlive, log: log, meta: cfg.resourceMetadata}}, h.eras...)
	}
	seen := map[string]bool{}
	for _, e := range h.eras {
		for _, m := range e.methods() {
			if !seen[m] {
				seen[m] = true
				h.allow = append(h.allow, m)
			}
		}
	}
	h.allow = []string{strings.Join(h.allow, ", ")}
	if h.cors, err = newCORSPolicy(cfg.cors, &h.guard, h.allow[0]); err != nil {
		return nil, err
	}
	if h.routes, err = routeTable(cfg.path, cfg.routes); err != nil {
		return nil, err
	}
	return h, nil
}

// routeTable checks the paths served beside the endpoint and returns
// them by path: each starts with "/", has a handler, and is served once.
func routeTable(endpoint string, routes []route) (map[string]http.Handler, error) {
	if len(routes) == 0 {
		return nil, nil
	}
	table := make(map[string]http.Handler, len(routes))
	for _, rt := range routes {
		switch {
		case !strings.HasPrefix(rt.path, "/"):
			return nil, fmt.Errorf("streamablehttp: %s path %q must start with /", rt.what, rt.path)
		case rt.h == nil:
			return nil, fmt.Errorf("streamablehttp: nil %s handler", rt.what)
		case rt.path == endpoint || table[rt.path] != nil:
			return nil, fmt.Errorf("streamablehttp: %s path %q is served twice", rt.what, rt.path)
		}
		table[rt.path] = rt.h
	}
	return table, nil
}

// ServeHTTP answers one HTTP request, routed by its path, which must be
// exactly one the Handler serves: the endpoint, or a path served beside
// it (WithResourceMetadataHandler, WithLiveness, WithReadiness), which
// gets its handler as it is, without the endpoint's checks. Any other
// path gets 404 before any other check. Paths are literal and not
// cleaned: //mcp or /x/../mcp is not the endpoint, and is answered 404
// with a JSON-RPC body rather than redirected. Every answer of the
// endpoint, and every 404, goes through a timedWriter, which bounds each
// write (WithWriteTimeout).
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != h.cfg.path {
		if rh := h.routes[r.URL.Path]; rh != nil {
			rh.ServeHTTP(w, r)
			return
		}
	}
	tw := newTimedWriter(w, h.cfg.writeTimeout)
	tw.share.b = h.budget
	defer tw.share.release()
	defer tw.settle()
	if r.URL.Path != h.cfg.path {
		h.notFound(tw, r)
		return
	}
	h.serveEndpoint(tw, r)
}

// serveEndpoint runs the shared checks in order, then hands the request to
// its era: Host and Origin (403), a CORS preflight (answered here, with
// WithCORS), method (405), authentication (401), and for a POST body size
// (413), the body's arrival in time (408), Content-Type (415), Accept
// (406) and JSON-RPC parsing (400).
func (h *Handler) serveEndpoint(w http.ResponseWriter, r *http.Request) {
	if what := h.guard.check(r); what != "" {
		h.log.Debug("streamablehttp: request refused", "reason", what+" not allowed", "host", wire.Clip(r.Host), "origin", wire.Clip(r.Header.Get("Origin")))
		h.refuse(w, mrtr.ID{}, refuseForbidden.with(h.guard.refusal(what, r)))
		return
	}
	if h.cors != nil {
		if isPreflight(r) {
			h.preflight(w, r)
			return
		}
		h.grant(w, r)
	}
	if !h.served(r.Method) {
		w.Header()["Allow"] = h.allow
		h.refuse(w, mrtr.ID{}, refuseMethod.with("use "+h.allow[0]))
		return
	}
	x := exchange{}
	if a := h.cfg.auth; a != nil {
		info, err := a(r)
		if err == nil && info != nil && info.Subject == "" {
			err = fmt.Errorf("%w: the authenticator named no subject", ErrUnauthorized)
		}
		if err != nil {
			h.log.Debug("streamablehttp: authentication failed", "err", wire.Clip(err.Error()))
			w.Header()["Www-Authenticate"] = []string{challengeOf(err)}
			if errors.Is(err, ErrForbidden) {
				h.refuse(w, mrtr.ID{}, refuseForbidden.with("insufficient scope"))
				return
			}
			h.refuse(w, mrtr.ID{}, refuseUnauthorized)
			return
		}
		if info != nil {
			x.token, x.principal = info, info.Subject
		}
	}
	x.headers = h.forwarded(r)
	if r.Method == http.MethodPost && !h.readMessage(w, r, &x) {
		return
	}
	for _, e := range h.eras {
		if e.claims(r, x.msg) {
			e.serve(w, r, x)
			return
		}
	}
	var id mrtr.ID
	if x.msg != nil {
		id = x.msg.ID
	}
	h.refuse(w, id, refuseUnclaimed)
}

// forwarded returns the headers of r that WithForwardedHeaders names, by
// lower-cased name; nil for none.
func (h *Handler) forwarded(r *http.Request) map[string]string {
	if len(h.cfg.forward) == 0 {
		return nil
	}
	var out map[string]string
	for _, name := range h.cfg.forward {
		if v := r.Header[name]; len(v) > 0 {
			if out == nil {
				out = make(map[string]string, len(h.cfg.forward))
			}
			out[strings.ToLower(name)] = v[0]
		}
	}
	return out
}

func (h *Handler) served(method string) bool {
	for _, e := range h.eras {
		for _, m := range e.methods() {
			if m == method {
				return true
			}
		}
	}
	return false
}

// readMessage reads, checks and parses the body of a POST into x.msg, or
// answers the request and returns false.
//
// The body gets a buffer of its own rather than a pooled one: the parsed
// message, and the arguments handlers receive, point into it, and a handler
// may keep them after the request is answered.
//
// Reading runs under the read deadline (WithReadTimeout), lifted once the
// whole body is in, so that none is left for the rest of the exchange. On
// a refusal it stays, bounding what the server still reads to discard.
func (h *Handler) readMessage(w http.ResponseWriter, r *http.Request, x *exchange) bool {
	timed := h.cfg.readTimeout > 0 && r.Body != nil && r.Body != http.NoBody
	if timed {
		setReadDeadline(w, time.Now().Add(h.cfg.readTimeout))
	}
	// Waiting for room in the budget counts against the read timeout.
	body, tooLarge, err := h.readLarge(w, r, h.cfg.readTimeout)
	switch {
	case err == errBusy:
		h.log.Debug("streamablehttp: no room for a large request body", "length", r.ContentLength)
		writeBusy(w, mrtr.ID{}, h.log)
		return false
	case tooLarge:
		h.refuse(w, mrtr.ID{}, refuseTooLarge.with("the limit is "+strconv.FormatInt(h.cfg.maxBody, 10)+" bytes"))
		return false
	case err != nil && isTimeout(err):
		h.log.Debug("streamablehttp: the request body did not arrive in time", "err", err)
		h.refuse(w, mrtr.ID{}, refuseTimeout)
		return false
	case err != nil:
		h.log.Debug("streamablehttp: reading the request body failed", "err", err)
		h.refuse(w, mrtr.ID{}, refuseUnreadable)
		return false
	}
	if timed {
		setReadDeadline(w, time.Time{})
	}
	// The body is read already, so even these refusals echo the request
	// id when it can be parsed.
	if ct := r.Header["Content-Type"]; len(ct) != 1 || !isJSONContentType(ct[0]) {
		_, id, _ := mrtr.ParseMessage(body)
		h.refuse(w, id, refuseMediaType)
		return false
	}
	if !acceptsResponses(r.Header["Accept"]) {
		_, id, _ := mrtr.ParseMessage(body)
		h.refuse(w, id, refuseNotAcceptable)
		return false
	}
	msg, id, perr := mrtr.ParseMessage(body)
	if perr != nil {
		writeError(w, statusMalformed, id, perr, h.log)
		return false
	}
	x.msg = msg
	return true
}

// errBusy is readLarge's error for a large body that found no room in the
// budget of bytes in flight in time.
var errBusy = errors.New("streamablehttp: no room for a large request body")

// readLarge reads the body of r as readBody does, up to the body limit,
// under the budget of bytes in flight (WithMaxBytesInFlight). The first
// largeMessage bytes are read without a share, so that a client holds
// none of the budget before it has sent them; a body longer than that
// then waits for its share (what its Content-Length declares, or the body
// limit when it declares none) until wait passes (wait <= 0: until the
// client goes). Once the body is in, the share shrinks to its length; the
// request holds it until its answer is written.
func (h *Handler) readLarge(w http.ResponseWriter, r *http.Request, wait time.Duration) ([]byte, bool, error) {
	s := shareOf(w)
	if s == nil || h.cfg.maxBody <= largeMessage || (r.ContentLength >= 0 && r.ContentLength <= largeMessage) {
		return readBody(r, nil, h.cfg.maxBody)
	}
	if r.ContentLength > h.cfg.maxBody {
		return nil, true, nil
	}
	head, tooLarge, err := readBody(r, make([]byte, 0, largeMessage+1), largeMessage)
	if !tooLarge || err != nil {
		return head, false, err
	}
	want := r.ContentLength
	if want < 0 {
		want = h.cfg.maxBody
	}
	if !s.resize(r.Context(), want, wait) {
		return nil, false, errBusy
	}
	body := head
	if r.ContentLength > 0 {
		// The share covers the declared length: read into one buffer of
		// that size rather than growing one step by step.
		body = append(make([]byte, 0, r.ContentLength+1), head...)
	}
	body, tooLarge, err = readBody(r, body, h.cfg.maxBody)
	if err == nil && !tooLarge {
		s.resize(r.Context(), int64(len(body)), 0)
	}
	return body, tooLarge, err
}

// readBody reads at most max+1 bytes of the body into buf, so that a body
// of exactly max bytes is accepted and a longer one reported as too large
// without reading the rest.
func readBody(r *http.Request, buf []byte, max int64) (body []byte, tooLarge bool, err error) {
	if r.ContentLength > max {
		return buf, true, nil
	}
	if r.Body == nil || r.Body == http.NoBody {
		return buf, false, nil
	}
	// Size the buffer for a declared length up front (one byte more, to
	// see the end without growing), but only up to what the pool keeps: a
	// client declaring a large body must send it before memory is spent.
	if n := r.ContentLength; int64(cap(buf)) <= n && n < maxPooled {
		buf = make([]byte, 0, n+1)
	} else if cap(buf) == 0 {
		buf = make([]byte, 0, 512)
	}
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		room := buf[len(buf):cap(buf)]
		if left := max + 1 - int64(len(buf)); int64(len(room)) > left {
			room = room[:left]
		}
		n, err := r.Body.Read(room)
		buf = buf[:len(buf)+n]
		if int64(len(buf)) > max {
			return buf, true, nil
		}
		if err == io.EOF {
			return buf, false, nil
		}
		if err != nil {
			return buf, false, err
		}
	}
}

// notFound answers a request for a path other than the endpoint with 404
// and a JSON-RPC error. The body is not read: nothing reaches this point
// through the Host, Origin or authentication checks of the endpoint.
func (h *Handler) notFound(w http.ResponseWriter, r *http.Request) {
	h.refuse(w, mrtr.ID{}, refuseNotFound)
}

// refuse answers with one of the transport's refusals.
func (h *Handler) refuse(w http.ResponseWriter, id mrtr.ID, r refusal) {
	refuseID(w, id, r, h.log)
}

// refuseID answers the request whose id is id with the refusal r.
func refuseID(w http.ResponseWriter, id mrtr.ID, r refusal, log *slog.Logger) {
	writeError(w, r.status, id, r.error(), log)
}

// writeError answers with a JSON-RPC error response.
func writeError(w http.ResponseWriter, status int, id mrtr.ID, e *mrtr.Error, log *slog.Logger) {
	bp := getBuffer()
	defer putBuffer(bp)
	resp := mrtr.Response{ID: id, Error: e}
	*bp = encodeResponse(&resp, (*bp)[:0], log)
	writeBody(w, status, *bp, log)
}

// writeBody writes a complete JSON response.
func writeBody(w http.ResponseWriter, status int, body []byte, log *slog.Logger) {
	h := w.Header()
	h["Content-Type"] = hvJSON
	h["Content-Length"] = []string{strconv.Itoa(len(body))}
	w.WriteHeader(status)
	if _, err := w.Write(body); err != nil {
		log.Debug("streamablehttp: writing a response failed", "err", err)
	}
}

// hvZero is the Content-Length of an answer without a body.
var hvZero = []string{"0"}

// writeAccepted answers 202 with no body, framed by Content-Length: 0.
// The header must be explicit: the Handler flushes every answer before it
// returns (timedWriter.settle), and net/http, which only sizes a body
// once the handler is done, would otherwise send the headers of a chunked
// body and its (empty) end in two writes. A proxy or client that has read
// those headers then still needs the connection to see the answer end,
// and loses the answer if the connection breaks in between.
func writeAccepted(w http.ResponseWriter) {
	w.Header()["Content-Length"] = hvZero
	w.WriteHeader(statusAccepted)
}

// Buffers for encoded responses, and for bodies read only for their id.
// Buffers that grew past maxPooled are left to the garbage collector
// rather than kept.
const maxPooled = 64 << 10

var bufferPool = sync.Pool{New: func() any { b := make([]byte, 0, 2048); return &b }}

func getBuffer() *[]byte { return bufferPool.Get().(*[]byte) }

func putBuffer(bp *[]byte) {
	if cap(*bp) > maxPooled {
		return
	}
	*bp = (*bp)[:0]
	bufferPool.Put(bp)
}
