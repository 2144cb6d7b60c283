package stdio

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mrtrkit/mrtrkit/internal/wire"
	"github.com/mrtrkit/mrtrkit/mrtr"
	"github.com/mrtrkit/mrtrkit/mrtr/legacy"
)

// ServeStdio serves srv on the process's standard input and output until
// the input ends or ctx is cancelled: Serve(ctx, srv, os.Stdin,
// os.Stdout, opts...).
func ServeStdio(ctx context.Context, srv *mrtr.Server, opts ...Option) error {
	return Serve(ctx, srv, os.Stdin, os.Stdout, opts...)
}

// Serve serves srv over newline-delimited JSON-RPC: it reads one message
// per line from in and writes one message per line to out, until in ends
// or ctx is cancelled. It then cancels the requests in flight, waits for
// them at most the shutdown timeout, and returns nil once every response
// they gave has been written. It returns an error for a bad option, when
// reading in fails otherwise than by its end, and when writing out fails
// (the client is gone and nothing more can be delivered).
//
// Serve never closes in or out. When ctx is cancelled while a Read of in
// is blocked, Serve gives in a read deadline if it takes one (an os.File
// pipe does, and so does a net.Conn); otherwise that Read is left to
// return by itself, and what it reads is dropped.
func Serve(ctx context.Context, srv *mrtr.Server, in io.Reader, out io.Writer, opts ...Option) error {
	if srv == nil {
		return errors.New("stdio: nil server")
	}
	if in == nil || out == nil {
		return errors.New("stdio: nil input or output")
	}
	cfg := defaultConfig()
	for _, o := range opts {
		if o != nil {
			o.apply(&cfg)
		}
	}
	switch {
	case cfg.maxLine < 1:
		return fmt.Errorf("stdio: max line bytes must be positive, not %d", cfg.maxLine)
	case cfg.grace < 0:
		return fmt.Errorf("stdio: shutdown timeout must not be negative, not %v", cfg.grace)
	case cfg.engine != nil && cfg.engine.Server() != srv:
		return errors.New("stdio: the legacy engine serves another server")
	}
	if !cfg.noLegacy {
		if err := wire.UnbridgedVersion("stdio", srv.Description().LegacyVersions); err != nil {
			return err
		}
	}
	if cfg.log == nil {
		cfg.log = srv.Logger()
	}
	c := &conn{
		srv: srv, cfg: cfg, log: cfg.log,
		w:        newWriter(out, cfg.log),
		inflight: map[string]*request{},
		jobs:     make(chan *request),
	}
	// Requests see ctx's values; their cancellation is the transport's own,
	// so that its cause is always ErrShutdown or ErrCancelled.
	c.base, c.stop = context.WithCancelCause(context.WithoutCancel(ctx))
	return c.serve(ctx, in)
}

// era is what the process has become, by its first request.
type era uint8

const (
	undecided era = iota
	modern        // MCP 2026-07-28, stateless, every message on its own
	session       // a session of the initialize era; modern requests still served
)

// conn is one served pipe.
type conn struct {
	srv *mrtr.Server
	cfg config
	log *slog.Logger
	w   *writer

	base context.Context // every request's parent; cancelled at shutdown
	stop context.CancelCauseFunc

	// Only the reading goroutine touches era and eng, and writes sess
	// (under mu, for Serve to close it at the end).
	era  era
	sess *legacy.Session
	eng  *legacy.Engine

	mu       sync.Mutex
	stopping bool                // no request starts any more
	inflight map[string]*request // by idKey
	wg       sync.WaitGroup      // the workers and the session's stream

	jobs chan *request // to an idle worker
	idle atomic.Int32  // workers waiting on jobs
}

// serve runs the reading goroutine and shuts down when it ends, when ctx
// is cancelled or when the output fails.
func (c *conn) serve(ctx context.Context, in io.Reader) error {
	readDone := make(chan error, 1)
	go func() { readDone <- c.read(in) }()

	var readErr error
	readerExited := false
	select {
	case readErr = <-readDone:
		readerExited = true
	case <-ctx.Done():
	case <-c.w.failed:
	}
	// From here no request starts; those in flight are cancelled and
	// given the shutdown timeout to answer.
	c.mu.Lock()
	c.stopping = true
	c.mu.Unlock()
	c.stop(ErrShutdown)

	// A Read still blocked is ended by a deadline, where in takes one.
	var waitReader <-chan error
	dl, _ := in.(interface{ SetReadDeadline(time.Time) error })
	if !readerExited && dl != nil && dl.SetReadDeadline(time.Now()) == nil {
		waitReader = readDone
	}
	finished := make(chan struct{})
	go func() { c.wg.Wait(); close(finished) }()
	timer := time.NewTimer(c.cfg.grace)
	defer timer.Stop()
	for waiting := finished; waiting != nil || waitReader != nil; {
		select {
		case <-waiting:
			waiting = nil
		case <-waitReader:
			waitReader, readerExited = nil, true
			_ = dl.SetReadDeadline(time.Time{})
		case <-timer.C:
			c.mu.Lock()
			n := len(c.inflight)
			c.mu.Unlock()
			if waiting != nil {
				c.log.Warn("stdio: requests still running at the end of the shutdown timeout; their answers are dropped",
					"requests", n, "timeout", c.cfg.grace)
			}
			waiting, waitReader = nil, nil
		}
	}
	// Nothing is written after Serve returns.
	c.w.close()
	c.mu.Lock()
	sess := c.sess
	c.mu.Unlock()
	if sess != nil {
		_ = sess.Close() // the process ends the session; nothing is left to tell
	}

	select {
	case <-c.w.failed:
		c.w.mu.Lock()
		werr := c.w.err
		c.w.mu.Unlock()
		return fmt.Errorf("stdio: writing the output: %w", werr)
	default:
	}
	if readerExited && readErr != nil && !errors.Is(readErr, io.EOF) {
		return fmt.Errorf("stdio: reading the input: %w", readErr)
	}
	return nil
}

// read reads and dispatches lines until the input ends or fails, or
// Serve stops.
func (c *conn) read(in io.Reader) error {
	lr := newLineReader(in, c.cfg.maxLine)
	for {
		line, err := lr.next()
		if c.isStopping() {
			return err
		}
		switch {
		case errors.Is(err, errTooLong):
			c.log.Warn("stdio: skipped a line longer than the limit", "limit", c.cfg.maxLine)
			_ = c.w.respond(&mrtr.Response{Error: mrtr.NewError(mrtr.CodeInvalidRequest,
				"Invalid request: the message is longer than "+strconv.Itoa(c.cfg.maxLine)+" bytes and was skipped", nil)})
			continue
		case err != nil && len(line) == 0:
			return err
		}
		if isBlank(line) {
			continue
		}
		c.dispatch(line)
	}
}

func (c *conn) isStopping() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stopping
}

// looksLikeResponse reports whether a message that did not parse has the
// members of a response: a result or an error, and no method.
func looksLikeResponse(line []byte) bool {
	var m struct {
		Method, Result, Error json.RawMessage
	}
	return json.Unmarshal(line, &m) == nil && m.Method == nil && (m.Result != nil || m.Error != nil)
}

func isBlank(b []byte) bool {
	for _, ch := range b {
		if ch != ' ' && ch != '\t' && ch != '\r' && ch != '\n' {
			return false
		}
	}
	return true
}

// dispatch serves one line: a malformed one is answered at once; a
// response, a notification and an initialize are handled in line, in
// order; every other request in a goroutine of its own.
func (c *conn) dispatch(line []byte) {
	msg, id, perr := mrtr.ParseMessage(line)
	if perr != nil {
		if !id.IsZero() && looksLikeResponse(line) {
			// A response is never answered: an error with its id would
			// read as the answer to a request of the client's own.
			c.log.Warn("stdio: dropped a malformed response", "id", wire.Clip(id.String()), "err", perr.Message)
			return
		}
		c.log.Debug("stdio: refused a malformed message", "code", int(perr.Code), "err", perr.Message)
		_ = c.w.respond(&mrtr.Response{ID: id, Error: perr})
		return
	}
	_, claimed := msg.ClaimedVersion()
	legacyMsg := c.era == session && !claimed
	switch {
	case msg.IsResponse():
		if c.era == session {
			c.sess.Handle(c.base, msg, nil) // routes the answer to the call waiting for it
			return
		}
		c.log.Debug("stdio: dropped a response: the server sent no request", "id", wire.Clip(msg.ID.String()))
		return
	case msg.IsNotification():
		if msg.Method == "notifications/cancelled" {
			c.cancel(msg)
		}
		if legacyMsg {
			c.sess.Handle(c.base, msg, nil)
		} else {
			c.srv.Handle(c.base, &mrtr.Inbound{Message: msg, Principal: c.cfg.principal})
		}
		return
	}
	if c.era == undecided && msg.Method == "initialize" && !claimed {
		if c.initialize(msg) {
			return
		}
	}
	if c.era == undecided {
		c.era = modern
	}
	c.start(msg, legacyMsg)
}

// start registers a request in flight and hands it to an idle worker or
// a new one, or answers it when it cannot run.
func (c *conn) start(msg *mrtr.Message, legacyMsg bool) {
	r := &request{c: c, msg: msg, key: idKey([]byte(msg.ID.String())), legacy: legacyMsg,
		listen: !legacyMsg && msg.Method == wire.MethodSubscriptionsListen}
	c.mu.Lock()
	_, dup := c.inflight[r.key]
	if !c.stopping && !dup {
		r.ctx, r.cancel = context.WithCancelCause(c.base)
		c.inflight[r.key] = r
		select {
		case c.jobs <- r:
		default:
			c.wg.Add(1)
			go c.worker(r)
		}
	}
	c.mu.Unlock()
	if dup {
		_ = c.w.respond(&mrtr.Response{ID: msg.ID, Error: mrtr.NewError(mrtr.CodeInvalidRequest,
			"Invalid request: a request with this id is in flight", nil)})
	}
}

// Workers: a goroutine serves one request, then waits a while for
// another, so that a busy pipe does not pay for a new goroutine, and the
// growth of its stack, on every request.
const (
	maxIdleWorkers = 16
	workerIdle     = 10 * time.Second
)

// worker serves r, then the requests handed to it, until it has waited
// workerIdle for one, enough workers are idle, or the transport stops.
func (c *conn) worker(r *request) {
	defer c.wg.Done()
	var idle *time.Timer
	for {
		c.run(r)
		if c.idle.Add(1) > maxIdleWorkers {
			c.idle.Add(-1)
			return
		}
		if idle == nil {
			idle = time.NewTimer(workerIdle)
			defer idle.Stop()
		} else {
			idle.Reset(workerIdle)
		}
		select {
		case r = <-c.jobs:
			c.idle.Add(-1)
		case <-idle.C:
			c.idle.Add(-1)
			return
		case <-c.base.Done():
			c.idle.Add(-1)
			return
		}
	}
}

// run serves one request and writes its answer.
func (c *conn) run(r *request) {
	defer r.cancel(nil)
	if r.legacy {
		r.finish(c.sess.Handle(r.ctx, r.msg, r))
		return
	}
	in := mrtr.Inbound{Message: r.msg, Principal: c.cfg.principal, Emit: r.emit}
	resp := c.srv.Handle(r.ctx, &in)
	if resp == nil {
		c.log.Error("stdio: the server returned no response to a request", "method", wire.Clip(r.msg.Method), "id", wire.Clip(r.msg.ID.String()))
		resp = &mrtr.Response{ID: r.msg.ID, Error: mrtr.NewError(mrtr.CodeInternalError, "Internal error", nil)}
	}
	r.finish(resp)
	resp.Release() // written: the Server may render into its memory again
}

// forget removes a request from the table of those in flight.
func (c *conn) forget(r *request) {
	c.mu.Lock()
	if c.inflight[r.key] == r {
		delete(c.inflight, r.key)
	}
	c.mu.Unlock()
}

// cancel serves notifications/cancelled: the request it names, if it is
// in flight, has its context cancelled and gets no answer, and its id is
// free again. Unknown and finished ids are ignored.
func (c *conn) cancel(msg *mrtr.Message) {
	var p struct {
		RequestID json.RawMessage `json:"requestId"`
	}
	if json.Unmarshal(msg.Params, &p) != nil || len(p.RequestID) == 0 {
		return
	}
	key := idKey(p.RequestID)
	c.mu.Lock()
	r := c.inflight[key]
	// For the client the request is over: its id may be used again at once.
	delete(c.inflight, key)
	c.mu.Unlock()
	if r == nil {
		return
	}
	r.byClient.Store(true)
	r.cancel(ErrCancelled)
}

// initialize serves the first request when it is initialize of the
// initialize era, and reports whether it did. With a session made, the
// process is a session of that era from now on.
func (c *conn) initialize(msg *mrtr.Message) bool {
	eng := c.engine()
	if eng == nil {
		return false // the Server answers -32022
	}
	var caller *mrtr.TokenInfo
	if c.cfg.principal != "" {
		caller = &mrtr.TokenInfo{Subject: c.cfg.principal}
	}
	s, resp, err := eng.Initialize(caller, msg)
	switch {
	case errors.Is(err, legacy.ErrBusy):
		resp = &mrtr.Response{ID: msg.ID, Error: mrtr.NewError(mrtr.CodeInternalError, "Too many sessions: retry later", nil)}
	case err != nil:
		c.log.Error("stdio: initialize failed", "err", err)
		resp = &mrtr.Response{ID: msg.ID, Error: mrtr.NewError(mrtr.CodeInternalError, "Internal error", nil)}
	}
	if resp != nil {
		_ = c.w.respond(resp)
	}
	if s == nil {
		return true // bad params: the client may try again
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stopping {
		_ = s.Close()
		return true
	}
	c.era, c.sess = session, s
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		_ = s.Listen(c.base, legacy.SenderFunc(c.w.write))
	}()
	return true
}

// engine returns the Engine serving the initialize era, made on first
// use, or nil when that era is not served.
func (c *conn) engine() *legacy.Engine {
	if c.eng != nil || c.cfg.noLegacy {
		return c.eng
	}
	if c.cfg.engine != nil {
		c.eng = c.cfg.engine
		return c.eng
	}
	if len(c.srv.Description().LegacyVersions) == 0 {
		return nil
	}
	e, err := legacy.New(c.srv, legacy.WithLogger(c.log))
	if err != nil {
		c.log.Error("stdio: cannot serve the initialize era", "err", err)
		c.cfg.noLegacy = true
		return nil
	}
	c.eng = e
	return e
}
