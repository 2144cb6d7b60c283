package streamablehttp

import (
	"errors"
	"net"
	"net/http"
	"os"
	"time"
)

// This file holds the Handler's own I/O deadlines (WithReadTimeout,
// WithWriteTimeout). They replace the whole-connection ReadTimeout and
// WriteTimeout of http.Server, which would cut event streams that are
// meant to stay open for hours (see NewHTTPServer).

// timedWriter is the ResponseWriter every request is answered through:
// each WriteHeader and Write first makes sure the connection's write
// deadline is at least three quarters of the write timeout away (setting
// it to now plus the timeout when it is not: a deadline costs a timer
// update, so the writes of one answer in quick succession share one), and
// settle, once the request is done, flushes what is left under that
// deadline and lifts it. Event streams lift it after each event
// (stream.write), so an idle stream has none.
//
// The connection's deadline and flush methods are found once, by the
// same walk down Unwrap that http.ResponseController does, which spares
// an allocation per request and, for writers without deadlines, an error
// per write.
type timedWriter struct {
	http.ResponseWriter
	conn    deadliner     // nil when no writer in the chain has deadlines
	flush   func() error  // the outermost flusher of the chain; nil for none
	timeout time.Duration // 0: no write deadline
	armed   bool          // a deadline was set and not yet lifted
	armedAt time.Time     // when it was set
	share   share         // what the request holds of the budget of bytes in flight
}

// errorFlusher is a ResponseWriter that flushes and says whether it
// could, as net/http's do.
type errorFlusher interface{ FlushError() error }

// deadliner is a ResponseWriter that can set its connection's deadlines,
// as those of net/http's HTTP/1 and HTTP/2 servers can.
type deadliner interface {
	SetReadDeadline(time.Time) error
	SetWriteDeadline(time.Time) error
}

func newTimedWriter(w http.ResponseWriter, timeout time.Duration) *timedWriter {
	t := &timedWriter{ResponseWriter: w, timeout: timeout}
	for u := w; u != nil; {
		if t.conn == nil {
			t.conn, _ = u.(deadliner)
		}
		// The outermost writer that flushes is the one to flush through,
		// as http.ResponseController does: a middleware that holds the
		// body back (to rewrite it, say) must see the flush, not be
		// bypassed by one on the connection beneath it.
		if t.flush == nil {
			switch f := u.(type) {
			case errorFlusher:
				t.flush = f.FlushError
			case http.Flusher:
				t.flush = func() error { f.Flush(); return nil }
			}
		}
		uw, ok := u.(interface{ Unwrap() http.ResponseWriter })
		if !ok || (t.conn != nil && t.flush != nil) {
			break
		}
		u = uw.Unwrap()
	}
	if t.conn == nil {
		t.timeout = 0 // nothing to set it on
	}
	return t
}

// Unwrap lets http.ResponseController reach the connection's writer.
func (t *timedWriter) Unwrap() http.ResponseWriter { return t.ResponseWriter }

func (t *timedWriter) WriteHeader(status int) {
	t.arm()
	t.ResponseWriter.WriteHeader(status)
}

func (t *timedWriter) Write(b []byte) (int, error) {
	t.arm()
	return t.ResponseWriter.Write(b)
}

// arm sets the write deadline for the write about to happen, unless the
// one already set leaves at least three quarters of the timeout.
func (t *timedWriter) arm() {
	if t.timeout <= 0 {
		return
	}
	now := time.Now()
	if t.armed && now.Sub(t.armedAt) < t.timeout/4 {
		return
	}
	if t.conn.SetWriteDeadline(now.Add(t.timeout)) == nil {
		t.armed, t.armedAt = true, now
	}
}

// settle flushes the response while the deadline holds, then lifts the
// deadline so that none is left for the next request on the connection
// (or, over HTTP/2, firing on a finished stream).
func (t *timedWriter) settle() {
	if !t.armed {
		return
	}
	if t.flush != nil {
		_ = t.flush()
	}
	_ = t.conn.SetWriteDeadline(time.Time{})
	t.armed = false
}

// writeTimeoutOf returns the write timeout w was given, or the default
// for a writer that did not come through the Handler.
func writeTimeoutOf(w http.ResponseWriter) time.Duration {
	if t, ok := w.(*timedWriter); ok {
		return t.timeout
	}
	return defaultWriteTimeout
}

// setReadDeadline sets (or, with the zero time, lifts) the read deadline
// of the connection w answers, when w can reach it.
func setReadDeadline(w http.ResponseWriter, deadline time.Time) {
	if t, ok := w.(*timedWriter); ok {
		if t.conn != nil {
			_ = t.conn.SetReadDeadline(deadline)
		}
		return
	}
	_ = http.NewResponseController(w).SetReadDeadline(deadline)
}

// isTimeout reports whether err is a deadline that expired.
func isTimeout(err error) bool {
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return true
	}
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
