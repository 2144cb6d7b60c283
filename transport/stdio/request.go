package stdio

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/mrtrkit/mrtrkit/mrtr"
)

// Why a request's context ends, as context.Cause reports it to handlers.
var (
	// ErrCancelled is the cause of a request's cancellation by the
	// client's notifications/cancelled.
	ErrCancelled = errors.New("stdio: the client cancelled the request")
	// ErrShutdown is the cause of a request's cancellation when the
	// input ends or Serve's context is cancelled.
	ErrShutdown = errors.New("stdio: the transport is shutting down")
)

// Errors a request's Emit function (or the Sender of a request of the
// initialize era) returns.
var (
	errAnswered       = errors.New("stdio: the request has already been answered")
	errClientCanceled = errors.New("stdio: the client cancelled the request")
)

// request is one request in flight.
type request struct {
	c      *conn
	msg    *mrtr.Message
	key    string
	ctx    context.Context
	cancel context.CancelCauseFunc
	legacy bool // served by the session of the initialize era
	listen bool // a subscriptions/listen of MCP 2026-07-28

	byClient atomic.Bool // cancelled by notifications/cancelled

	mu       sync.Mutex // orders the request's messages: none after its response
	answered bool
	started  bool // a listen stream emitted its acknowledgement
}

// emit writes one notification of a modern request, as Inbound.Emit.
// Nothing is written for a request the client cancelled or that has been
// answered.
func (r *request) emit(n []byte) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case r.answered:
		return errAnswered
	case r.byClient.Load():
		return errClientCanceled
	}
	if err := r.c.w.write(n); err != nil {
		return err
	}
	r.started = true
	return nil
}

// Send writes one message of a request of the initialize era: its
// progress and log notifications, and the requests a multi-round handler
// sends the client. Once the client has cancelled the request, only the
// notifications/cancelled with which the session withdraws its own
// requests still go out.
func (r *request) Send(msg []byte) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.answered {
		return errAnswered
	}
	if r.byClient.Load() && !isCancelled(msg) {
		return errClientCanceled
	}
	return r.c.w.write(msg)
}

// isCancelled reports whether msg is a notifications/cancelled.
func isCancelled(msg []byte) bool {
	var m struct {
		Method string `json:"method"`
		ID     json.RawMessage
	}
	return json.Unmarshal(msg, &m) == nil && m.Method == "notifications/cancelled" && m.ID == nil
}

// finish writes the response to the request, unless the client cancelled
// it: a cancelled request is not answered (the client ignores any answer
// to it). A listen stream that ended otherwise than by the client's
// notifications/cancelled is followed by a notifications/cancelled naming
// it, the end of a stream on stdio; when the stream was cut by the
// shutdown, that notification is all that is written.
func (r *request) finish(resp *mrtr.Response) {
	r.c.forget(r)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.answered = true
	if r.byClient.Load() {
		return
	}
	streamed := r.listen && r.started
	if resp != nil && !(streamed && resp.Error != nil && r.ctx.Err() != nil) {
		_ = r.c.w.respond(resp)
	}
	if streamed {
		reason := "the server closed the subscription"
		if r.ctx.Err() != nil {
			reason = "the server is shutting down"
		}
		_ = r.c.w.write(cancelledNotification(r.msg.ID, reason))
	}
}

// cancelledNotification renders the notifications/cancelled that ends a
// listen stream on stdio.
func cancelledNotification(id mrtr.ID, reason string) []byte {
	b := make([]byte, 0, 96+len(reason))
	b = append(b, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":`...)
	b = append(b, id.String()...)
	b = append(b, `,"reason":`...)
	b = strconv.AppendQuote(b, reason)
	return append(b, "}}"...)
}

// idKey is the canonical text of a JSON-RPC id, for lookups: an integer
// as its digits, a string decoded and quoted again, so that "\u0061" and
// "a" are one id.
func idKey(raw []byte) string {
	if len(raw) > 0 && raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return strconv.Quote(s)
		}
		return string(raw)
	}
	if n, err := strconv.ParseInt(string(raw), 10, 64); err == nil {
		return strconv.FormatInt(n, 10)
	}
	return string(raw)
}
