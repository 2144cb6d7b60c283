package streamablehttp

import (
	"context"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// This file bounds the connections of an http.Server: ConnLimit, which
// NewHTTPServer applies by default and anyone who builds an http.Server
// of their own can apply with ConnLimit.Apply.

// DefaultMaxConns is the connection cap of NewHTTPServer (see
// WithConnLimit) and of NewConnLimit(0). An idle HTTP/1.1 keep-alive
// connection costs Go's server some 40 KiB of memory (its goroutine's
// stack, a 4 KiB read buffer, a 4 KiB write buffer and bookkeeping, none
// of which net/http lets one shrink), so 4096 of them stay under 200 MiB:
// sized for the small machines (2 cores) an MCP endpoint often runs on,
// with room for the 1000 listen streams an mrtr.Server allows by default
// and for thousands of requests beside them. (The conformance fixture,
// with 19,000 clients each holding an idle connection after a
// tools/list, stayed at about 210 MiB of RSS under this cap.)
const DefaultMaxConns = 4096

// Timings of a ConnLimit.
const (
	// refuseWait is how long a connection accepted over the cap has to
	// send its request before it is closed unanswered.
	refuseWait = 2 * time.Second
	// freshGrace is how long a connection may stay without a complete
	// first request before it can be shed like an idle one.
	freshGrace = 2 * time.Second
)

// ConnLimit bounds how many connections an http.Server holds, so that
// many clients holding connections open cannot grow the server's memory
// without bound. Apply installs it on a server; NewHTTPServer applies one
// of DefaultMaxConns by default.
//
// When a new connection would go over the cap, the connection idle for
// longest (a keep-alive connection between requests) is closed to make
// room; failing that, the oldest connection that has not completed its
// first request within two seconds. Connections with a request in
// progress, event streams included, are never closed. When there is
// nothing to shed, the new connection is refused: its request is answered
// 503 Service Unavailable with Retry-After: 1 and Connection: close (or,
// when a slot has freed up in the meantime, served). Such a connection
// that sends no request within two seconds, and new connections while a
// quarter of the cap are already waiting to be refused, are closed
// without an answer.
//
// Apply also makes every answer with status 429 or 503 close its HTTP/1
// connection (Connection: close), so that clients refused for load do
// not keep idle connections; over HTTP/2, where one connection carries
// other requests too, it stays open.
//
// One ConnLimit may serve several servers, with one cap over them all.
// Make one with NewConnLimit; the zero value is not usable.
type ConnLimit struct {
	max         int
	maxRefusing int
	refuseWait  time.Duration
	freshGrace  time.Duration

	mu       sync.Mutex
	conns    map[net.Conn]*trackedConn
	open     int      // connections counted against max
	idle     connList // counted connections between requests, idle longest first
	fresh    connList // counted connections before their first request, oldest first
	refusing int      // connections over the cap waiting for their refusal
	shed     uint64
	refused  uint64
	dropped  uint64
}

// ConnStats are a ConnLimit's counts.
type ConnStats struct {
	// Max is the cap.
	Max int
	// Open is the number of connections counted against the cap; Idle of
	// them are between requests.
	Open, Idle int
	// Refusing is the number of connections over the cap waiting to be
	// refused.
	Refusing int
	// Shed counts connections closed to make room for new ones.
	Shed uint64
	// Refused counts requests answered 503 because the connection came
	// over the cap.
	Refused uint64
	// Dropped counts connections over the cap closed without an answer.
	Dropped uint64
}

// NewConnLimit returns a ConnLimit of n connections; n <= 0 means
// DefaultMaxConns.
func NewConnLimit(n int) *ConnLimit {
	if n <= 0 {
		n = DefaultMaxConns
	}
	return &ConnLimit{
		max:         n,
		maxRefusing: max(1, n/4),
		refuseWait:  refuseWait,
		freshGrace:  freshGrace,
		conns:       map[net.Conn]*trackedConn{},
	}
}

// Stats returns the limit's counts now.
func (l *ConnLimit) Stats() ConnStats {
	l.mu.Lock()
	defer l.mu.Unlock()
	return ConnStats{
		Max: l.max, Open: l.open, Idle: l.idle.n, Refusing: l.refusing,
		Shed: l.shed, Refused: l.refused, Dropped: l.dropped,
	}
}

// Apply installs the limit on hs: its ConnContext and ConnState hooks
// (after the ones hs already has, which keep working) and a wrapper of
// its Handler (http.DefaultServeMux when nil). Call it once, before the
// server serves, and set no other hooks afterwards.
func (l *ConnLimit) Apply(hs *http.Server) {
	prevContext := hs.ConnContext
	hs.ConnContext = func(ctx context.Context, c net.Conn) context.Context {
		if prevContext != nil {
			ctx = prevContext(ctx, c)
		}
		return l.admit(ctx, c)
	}
	prevState := hs.ConnState
	hs.ConnState = func(c net.Conn, s http.ConnState) {
		l.track(c, s)
		if prevState != nil {
			prevState(c, s)
		}
	}
	h := hs.Handler
	if h == nil {
		h = http.DefaultServeMux
	}
	hs.Handler = l.handler(h)
}

// trackedConn is what a ConnLimit knows of one connection.
type trackedConn struct {
	limit *ConnLimit
	conn  net.Conn
	// since is when it entered the list it is in.
	since      time.Time
	prev, next *trackedConn
	in         *connList // the list it is in; nil for none
	// counted: it counts against the cap.
	counted bool
	// refuse: it came over the cap and waits for its refusal. Written
	// under the limit's lock, read without it by the handler.
	refuse atomic.Bool
	// started: its request has been read (StateActive was seen).
	started bool
	timer   *time.Timer // closes a connection to refuse that sends nothing
}

// connList is a list of connections, oldest first.
type connList struct {
	head, tail *trackedConn
	n          int
}

func (q *connList) push(t *trackedConn, now time.Time) {
	t.since, t.in, t.prev, t.next = now, q, q.tail, nil
	if q.tail != nil {
		q.tail.next = t
	} else {
		q.head = t
	}
	q.tail = t
	q.n++
}

// unlink takes t out of the list it is in, if any.
func unlink(t *trackedConn) {
	q := t.in
	if q == nil {
		return
	}
	if t.prev != nil {
		t.prev.next = t.next
	} else {
		q.head = t.next
	}
	if t.next != nil {
		t.next.prev = t.prev
	} else {
		q.tail = t.prev
	}
	t.prev, t.next, t.in = nil, nil, nil
	q.n--
}

// connKey is the context key of a connection's trackedConn.
type connKey struct{}

// admit decides about a new connection (the server's ConnContext): it
// counts against the cap, after shedding an idle connection if need be,
// or it is to be refused, or closed at once.
func (l *ConnLimit) admit(ctx context.Context, c net.Conn) context.Context {
	t := &trackedConn{limit: l, conn: c}
	now := time.Now()
	var shed net.Conn
	closeNow := false
	l.mu.Lock()
	l.conns[c] = t
	if l.open >= l.max {
		shed = l.shedLocked(now)
	}
	switch {
	case l.open < l.max:
		l.open++
		t.counted = true
	case l.refusing < l.maxRefusing:
		l.refusing++
		t.refuse.Store(true)
		t.timer = time.AfterFunc(l.refuseWait, func() { l.expire(t) })
	default:
		l.dropped++
		closeNow = true
	}
	l.mu.Unlock()
	if shed != nil {
		_ = shed.Close()
	}
	if closeNow {
		// Its server goroutine fails its first read and ends.
		_ = c.Close()
	}
	return context.WithValue(ctx, connKey{}, t)
}

// shedLocked closes (marks; the caller closes the returned connection
// once the lock is released) the connection idle longest, or failing
// that the oldest one without a first request after freshGrace, and
// returns it; nil when there is none.
func (l *ConnLimit) shedLocked(now time.Time) net.Conn {
	t := l.idle.head
	if t == nil {
		if f := l.fresh.head; f != nil && now.Sub(f.since) >= l.freshGrace {
			t = f
		}
	}
	if t == nil {
		return nil
	}
	unlink(t)
	t.counted = false
	l.open--
	l.shed++
	return t.conn
}

// expire closes a connection to refuse that sent no request in time.
func (l *ConnLimit) expire(t *trackedConn) {
	l.mu.Lock()
	waiting := t.refuse.Load() && !t.started
	if waiting {
		l.dropped++
	}
	l.mu.Unlock()
	if waiting {
		_ = t.conn.Close()
	}
}

// track follows a connection's state (the server's ConnState).
func (l *ConnLimit) track(c net.Conn, s http.ConnState) {
	now := time.Now()
	closeIt := false
	l.mu.Lock()
	t := l.conns[c]
	if t == nil {
		l.mu.Unlock()
		return
	}
	switch s {
	case http.StateNew:
		if t.counted {
			l.fresh.push(t, now)
		}
	case http.StateActive:
		unlink(t)
		t.started = true
		if t.timer != nil {
			t.timer.Stop()
		}
	case http.StateIdle:
		unlink(t)
		switch {
		case t.counted:
			l.idle.push(t, now)
		case t.refuse.Load():
			// Its refusal closes it; a connection that stays anyway
			// (a handler in between that dropped Connection: close)
			// is closed here.
			closeIt = true
		}
	case http.StateHijacked, http.StateClosed:
		unlink(t)
		if t.counted {
			t.counted = false
			l.open--
		}
		if t.refuse.Load() {
			t.refuse.Store(false)
			l.refusing--
		}
		if t.timer != nil {
			t.timer.Stop()
		}
		delete(l.conns, c)
	}
	l.mu.Unlock()
	if closeIt {
		_ = c.Close()
	}
}

// refuseNow reports whether the request on t is to be refused, and
// counts the refusal; when a slot has freed up since t was accepted, t is
// admitted instead.
func (l *ConnLimit) refuseNow(t *trackedConn) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !t.refuse.Load() {
		return false
	}
	if l.open < l.max {
		t.refuse.Store(false)
		l.refusing--
		l.open++
		t.counted = true
		return false
	}
	l.refused++
	return true
}

// connsBusyBody is the JSON-RPC error that answers a request on a
// connection over the cap.
var connsBusyBody = []byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"Server busy: too many connections; retry later"}}` + "\n")

// Header values of the limit's answers (names of this file's own, so
// that they cannot collide with the package's).
var (
	limitHVClose = []string{"close"}
	limitHVJSON  = []string{"application/json"}
	limitHVRetry = []string{"1"}
)

// handler wraps h: requests on connections over the cap are refused, and
// HTTP/1 answers refused for load close their connection.
func (l *ConnLimit) handler(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if t, _ := r.Context().Value(connKey{}).(*trackedConn); t != nil && t.limit == l && t.refuse.Load() && l.refuseNow(t) {
			hd := w.Header()
			hd["Connection"] = limitHVClose
			hd["Retry-After"] = limitHVRetry
			hd["Content-Type"] = limitHVJSON
			w.WriteHeader(statusBusy)
			_, _ = w.Write(connsBusyBody)
			return
		}
		if r.ProtoMajor == 1 {
			w = &closeOnLoadRefusal{ResponseWriter: w}
		}
		h.ServeHTTP(w, r)
	})
}

// closeOnLoadRefusal adds Connection: close to an answer with status 429
// or 503, so that the server closes the connection once it is written.
type closeOnLoadRefusal struct {
	http.ResponseWriter
	wrote bool
}

func (c *closeOnLoadRefusal) WriteHeader(status int) {
	if !c.wrote && status >= 200 {
		c.wrote = true
		if isLoadStatus(status) {
			c.ResponseWriter.Header()["Connection"] = limitHVClose
		}
	}
	c.ResponseWriter.WriteHeader(status)
}

func (c *closeOnLoadRefusal) Write(b []byte) (int, error) {
	c.wrote = true
	return c.ResponseWriter.Write(b)
}

// Flush flushes the writer beneath, as middleware that asserts
// http.Flusher expects.
func (c *closeOnLoadRefusal) Flush() { _ = c.FlushError() }

// FlushError flushes the writer beneath and says whether it could.
func (c *closeOnLoadRefusal) FlushError() error {
	c.wrote = true
	return http.NewResponseController(c.ResponseWriter).Flush()
}

// Unwrap lets http.ResponseController reach the connection's writer.
func (c *closeOnLoadRefusal) Unwrap() http.ResponseWriter { return c.ResponseWriter }
