package streamablehttp

import (
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/mrtrkit/mrtrkit/internal/wire"
	"github.com/mrtrkit/mrtrkit/mrtr"
)

// modern serves MCP 2026-07-28: every message is one POST, answered on
// its own; there are no sessions, so Mcp-Session-Id and Last-Event-ID are
// ignored and no session id is ever issued.
type modern struct {
	srv       *mrtr.Server
	keepAlive time.Duration
	log       *slog.Logger
	meta      string // the resource metadata URL of scope challenges
}

var modernMethods = []string{http.MethodPost}

func (*modern) methods() []string { return modernMethods }

func (*modern) claims(r *http.Request, msg *mrtr.Message) bool {
	return r.Method == http.MethodPost && msg != nil
}

// serve gives a notification to the server and answers 202 with no body;
// a request it answers with JSON, or with SSE once the server emits a
// notification for it. The protocol headers are checked by the server,
// against the body, for requests only.
func (m *modern) serve(w http.ResponseWriter, r *http.Request, x exchange) {
	ctx := r.Context()
	if x.msg.IsResponse() {
		refuseID(w, x.msg.ID, refuseResponse, m.log)
		return
	}
	if x.msg.IsNotification() {
		m.srv.Handle(ctx, &mrtr.Inbound{Message: x.msg, Principal: x.principal, Token: x.token, Headers: x.headers})
		writeAccepted(w)
		return
	}
	// One allocation holds everything the request needs.
	c := &modernCall{stream: stream{w: w, ctx: ctx, keepAlive: m.keepAlive, log: m.log, resourceMetadata: m.meta}}
	readMirror(r.Header, &c.mirror)
	c.in = mrtr.Inbound{Message: x.msg, Principal: x.principal, Token: x.token, Headers: x.headers, Mirror: &c.mirror, Emit: c.emit}
	if x.principal == "" {
		c.in.Peer = peerOf(r)
	}
	resp := m.srv.Handle(ctx, &c.in)
	if resp == nil {
		m.log.Error("streamablehttp: the server returned no response to a request", "method", wire.Clip(x.msg.Method), "id", wire.Clip(x.msg.ID.String()))
		resp = &mrtr.Response{ID: x.msg.ID, Error: internalError()}
	}
	// The parsed message, and the body it points into, are not needed to
	// answer: let them go before a slow client is written to.
	c.in.Message = nil
	c.finish(resp)
	resp.Release() // written: the Server may render into its memory again
}

// modernCall is one request in flight.
type modernCall struct {
	stream
	in     mrtr.Inbound
	mirror mrtr.Mirror
}

// peerOf is the client's IP address, which the limits of anonymous
// callers count by. Behind a proxy it is the proxy's: authenticate
// callers to give each a share of its own.
func peerOf(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}
