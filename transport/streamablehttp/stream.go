package streamablehttp

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/mrtrkit/mrtrkit/internal/wire"
	"github.com/mrtrkit/mrtrkit/mrtr"
)

// Errors returned by a request's Emit function.
var (
	errAnswered   = errors.New("streamablehttp: the request has already been answered")
	errClientGone = errors.New("streamablehttp: the client has gone away")
)

// phase is where a response stands.
type phase uint8

const (
	pending   phase = iota // nothing written yet; the answer may still be plain JSON
	streaming              // SSE headers sent; every message is an event
	done                   // answered, or the connection broke: nothing more is written
)

// SSE framing.
var (
	sseEvent     = []byte("event: message\n")
	sseKeepAlive = []byte(": keep-alive\n\n")
)

// Response header values, shared by every response and never modified.
var (
	hvJSON     = []string{mediaJSON}
	hvSSE      = []string{mediaSSE}
	hvNoCache  = []string{"no-cache"}
	hvNoBuffer = []string{"no"}
)

// stream answers one request: with a JSON body when the server emits
// nothing before its response, or with an SSE stream that begins at the
// first notification the server emits and ends with the response. It is
// safe for concurrent use; once the request is answered, or the client has
// gone, emit fails.
type stream struct {
	w         http.ResponseWriter
	ctx       context.Context
	log       *slog.Logger
	keepAlive time.Duration

	// inBand answers every error with status 200, as the initialize era
	// does for everything but session and authorization problems.
	inBand bool
	// resourceMetadata is the URL a 403 for insufficient scope names.
	resourceMetadata string

	mu    sync.Mutex
	phase phase
	rc    *http.ResponseController
	stop  chan struct{} // closed when the stream ends; stops the keep-alive timer
	frame []byte        // reused to frame events
}

// emit delivers one encoded notification as an SSE event, switching the
// response to SSE on the first call.
func (s *stream) emit(notification []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.phase == done {
		return errAnswered
	}
	if s.ctx.Err() != nil {
		return errClientGone
	}
	if s.phase == pending {
		s.begin()
	}
	if err := s.writeEvent(notification); err != nil {
		s.end()
		return errClientGone
	}
	return nil
}

// begin sends the SSE response headers and starts the keep-alive timer.
// The request gives back its share of the bytes in flight: a stream may
// stay open for hours (subscriptions/listen), and must not hold the
// budget all that time. The caller holds s.mu.
func (s *stream) begin() {
	if sh := shareOf(s.w); sh != nil {
		sh.resize(s.ctx, 0, 0)
	}
	h := s.w.Header()
	h["Content-Type"] = hvSSE
	h["Cache-Control"] = hvNoCache
	h["X-Accel-Buffering"] = hvNoBuffer
	s.w.WriteHeader(statusStream)
	s.rc = http.NewResponseController(s.w)
	s.phase = streaming
	s.stop = make(chan struct{})
	if s.keepAlive > 0 {
		go s.keepAlives(s.stop)
	}
}

// keepAlives writes a comment at every tick until the stream ends or the
// client goes.
func (s *stream) keepAlives(stop <-chan struct{}) {
	t := time.NewTicker(s.keepAlive)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-s.ctx.Done():
			return
		case <-t.C:
			if !s.ping() {
				return
			}
		}
	}
}

// ping writes one keep-alive comment and reports whether the stream is
// still open.
func (s *stream) ping() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.phase != streaming {
		return false
	}
	if err := s.write(sseKeepAlive); err != nil {
		s.end()
		return false
	}
	return true
}

// writeEvent frames data as one "message" event, writes and flushes it.
// The caller holds s.mu.
func (s *stream) writeEvent(data []byte) error {
	s.frame = appendEvent(s.frame[:0], data)
	return s.write(s.frame)
}

// write writes and flushes b under the write deadline (WithWriteTimeout),
// so that a client that stops reading without closing the connection
// cannot hold a handler (blocked on emit) forever, then lifts the
// deadline: an idle stream, such as subscriptions/listen between changes,
// must not be cut by it (over HTTP/2 a deadline left set ends the stream
// when it passes, written to or not).
func (s *stream) write(b []byte) error {
	d := writeTimeoutOf(s.w)
	if d > 0 {
		if err := s.rc.SetWriteDeadline(time.Now().Add(d)); err != nil && !errors.Is(err, http.ErrNotSupported) {
			return err
		}
	}
	if _, err := s.w.Write(b); err != nil {
		s.log.Debug("streamablehttp: writing the event stream failed", "err", err)
		return err
	}
	// A writer that cannot flush (a middleware that hides the connection)
	// still delivers every event, only not as it happens.
	if err := s.rc.Flush(); err != nil && !errors.Is(err, http.ErrNotSupported) {
		s.log.Debug("streamablehttp: flushing the event stream failed", "err", err)
		return err
	}
	if d > 0 {
		_ = s.rc.SetWriteDeadline(time.Time{})
	}
	return nil
}

// end marks the stream finished. The caller holds s.mu.
func (s *stream) end() {
	if s.stop != nil && s.phase == streaming {
		close(s.stop)
	}
	s.phase = done
}

// finish answers the request with resp: as plain JSON with resp's status
// when nothing was streamed, else as the last event of the stream (the
// status, 200, having been sent already).
func (s *stream) finish(resp *mrtr.Response) {
	if resp.Error == nil && len(resp.Result) > maxPooled {
		s.finishLarge(resp)
		return
	}
	s.finishEncoded(resp)
}

// finishEncoded is finish with the response encoded into a buffer first.
func (s *stream) finishEncoded(resp *mrtr.Response) {
	bp := getBuffer()
	defer putBuffer(bp)
	body := encodeResponse(resp, (*bp)[:0], s.log)
	*bp = body
	s.mu.Lock()
	defer s.mu.Unlock()
	switch s.phase {
	case pending:
		s.phase = done
		if !admitAnswer(s.ctx, s.w, int64(len(body))) {
			writeBusy(s.w, resp.ID, s.log)
			return
		}
		status, challenge := answerStatus(resp.Error, s.inBand, s.resourceMetadata)
		if challenge != "" {
			s.w.Header()["Www-Authenticate"] = []string{challenge}
		}
		writeBody(s.w, status, body, s.log)
	case streaming:
		if s.writeEvent(body) == nil {
			// Leave no deadline behind for the next request on this connection.
			_ = s.rc.SetWriteDeadline(time.Time{})
		}
		s.end()
	}
}

// finishLarge answers with a large result, as finish does, but when
// nothing was streamed it writes the JSON-RPC envelope around the
// rendered result instead of copying the result into an encoding buffer.
// While a slow client reads, the request then holds the result alone: not
// a second copy, nor (through the id) the request body.
func (s *stream) finishLarge(resp *mrtr.Response) {
	s.mu.Lock()
	if s.phase != pending {
		s.mu.Unlock()
		s.finishEncoded(resp)
		return
	}
	defer s.mu.Unlock()
	s.phase = done
	bp := getBuffer()
	defer putBuffer(bp)
	// The envelope is mrtr's: the encoding of the same response with an
	// empty result, less its closing brace, is what goes before the result.
	head, _ := (&mrtr.Response{ID: resp.ID}).AppendJSON((*bp)[:0])
	head = head[:len(head)-1]
	*bp = head
	result := resp.Result
	size := len(head) + len(result) + 1
	if !admitAnswer(s.ctx, s.w, int64(size)) {
		writeBusy(s.w, resp.ID, s.log)
		return
	}
	h := s.w.Header()
	h["Content-Type"] = hvJSON
	h["Content-Length"] = []string{strconv.Itoa(size)}
	s.w.WriteHeader(statusResult)
	for _, b := range [][]byte{head, result, closingBrace} {
		if _, err := s.w.Write(b); err != nil {
			s.log.Debug("streamablehttp: writing a response failed", "err", err)
			return
		}
	}
}

var closingBrace = []byte{'}'}

// sseOpen is the comment that opens a stream at once.
var sseOpen = []byte(": stream open\n\n")

// open starts the event stream now, with a first comment flushed at once,
// and reports whether the client is still there.
func (s *stream) open() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.phase != pending || s.ctx.Err() != nil {
		return false
	}
	s.begin()
	if err := s.write(sseOpen); err != nil {
		s.end()
		return false
	}
	return true
}

// close ends the stream without a response. A request that never
// streamed is left with an empty 200.
func (s *stream) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.phase == streaming {
		_ = s.rc.SetWriteDeadline(time.Time{})
	}
	s.end()
}

// appendEvent appends data to dst as an SSE "message" event. A line break
// in data (which encoded JSON does not contain) starts a new data line, so
// the event cannot be split or forged whatever the bytes.
func appendEvent(dst, data []byte) []byte {
	dst = append(dst, sseEvent...)
	for {
		i := bytes.IndexAny(data, "\r\n")
		if i < 0 {
			break
		}
		dst = append(dst, "data: "...)
		dst = append(dst, data[:i]...)
		dst = append(dst, '\n')
		if data[i] == '\r' && i+1 < len(data) && data[i+1] == '\n' {
			i++
		}
		data = data[i+1:]
	}
	dst = append(dst, "data: "...)
	dst = append(dst, data...)
	return append(dst, '\n', '\n')
}

// encodeResponse appends resp's JSON to dst. Should the response fail to
// encode, the client gets -32603 with the same id and the failure is
// logged.
func encodeResponse(resp *mrtr.Response, dst []byte, log *slog.Logger) []byte {
	b, err := resp.AppendJSON(dst)
	if err == nil {
		return b
	}
	log.Error("streamablehttp: encoding a response failed", "id", wire.Clip(resp.ID.String()), "err", err)
	*resp = mrtr.Response{ID: resp.ID, Error: internalError()}
	b, _ = resp.AppendJSON(dst[:0])
	return b
}
