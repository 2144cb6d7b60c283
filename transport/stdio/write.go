package stdio

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mrtrkit/mrtrkit/internal/wire"
	"github.com/mrtrkit/mrtrkit/mrtr"
)

// errClosed is returned for a message written after Serve has returned,
// or after the output failed.
var errClosed = errors.New("stdio: the output is closed")

// writer writes whole messages to the output, one line each, with one
// Write call under one lock, so that messages written from many
// goroutines never interleave.
type writer struct {
	out   io.Writer
	flush func() error // the output's Flush, when it buffers
	log   *slog.Logger

	closed atomic.Bool   // set when Serve returns; checked without the lock
	failed chan struct{} // closed when a write fails

	mu  sync.Mutex
	err error  // the first write error
	buf []byte // the line being written, reused
}

func newWriter(out io.Writer, log *slog.Logger) *writer {
	w := &writer{out: out, log: log, failed: make(chan struct{})}
	if f, ok := out.(interface{ Flush() error }); ok {
		w.flush = f.Flush
	}
	return w
}

// maxKept bounds the line buffer the writer keeps between messages.
const maxKept = 64 << 10

// write writes msg and a newline. A message with a line break in it (raw
// JSON a handler returned pretty-printed) is compacted first: encoded JSON
// has line breaks only between tokens, never inside a string.
func (w *writer) write(msg []byte) error {
	if w.closed.Load() {
		return errClosed
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return w.err
	}
	if w.closed.Load() {
		return errClosed
	}
	buf := w.buf[:0]
	if bytes.IndexByte(msg, '\n') >= 0 || bytes.IndexByte(msg, '\r') >= 0 {
		b := bytes.NewBuffer(buf)
		if err := json.Compact(b, msg); err != nil {
			w.log.Error("stdio: dropped an outgoing message that is not valid JSON", "err", err)
			return err
		}
		buf = b.Bytes()
	} else {
		buf = append(buf, msg...)
	}
	buf = append(buf, '\n')
	_, err := w.out.Write(buf)
	if err == nil && w.flush != nil {
		err = w.flush()
	}
	if cap(buf) <= maxKept {
		w.buf = buf[:0]
	}
	if err != nil {
		w.err = err
		close(w.failed)
		w.log.Error("stdio: writing to the output failed; the transport stops", "err", err)
	}
	return err
}

// respond writes a response. A response that cannot be encoded becomes
// -32603 with the same id. An error that answers no readable id carries
// "id":null, as JSON-RPC 2.0 requires of parse errors and invalid
// requests.
func (w *writer) respond(resp *mrtr.Response) error {
	b, err := appendResponse(nil, resp)
	if err != nil {
		w.log.Error("stdio: encoding a response failed", "id", wire.Clip(resp.ID.String()), "err", err)
		b, _ = appendResponse(nil, &mrtr.Response{ID: resp.ID, Error: mrtr.NewError(mrtr.CodeInternalError, "Internal error", nil)})
	}
	return w.write(b)
}

func appendResponse(b []byte, resp *mrtr.Response) ([]byte, error) {
	if !resp.ID.IsZero() || resp.Error == nil {
		return resp.AppendJSON(b)
	}
	e, err := json.Marshal(resp.Error)
	if err != nil {
		return nil, err
	}
	b = append(b, `{"jsonrpc":"2.0","id":null,"error":`...)
	b = append(b, e...)
	return append(b, '}'), nil
}

// close drops every later message. A write blocked in the output is
// given a deadline when the output takes one.
func (w *writer) close() {
	w.closed.Store(true)
	if d, ok := w.out.(interface{ SetWriteDeadline(time.Time) error }); ok {
		if !w.mu.TryLock() {
			_ = d.SetWriteDeadline(time.Now()) // a write is stuck: unblock it
			return
		}
		w.mu.Unlock()
	}
}
