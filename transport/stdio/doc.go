// Package stdio is the transport layer for servers that a host launches
// as a subprocess: it serves an mrtr.Server over standard input and
// output, the stdio transport of MCP, to clients of both protocol eras.
// The client starts the server as a child process, writes JSON-RPC
// messages to its stdin and reads the server's from its stdout, one
// message per line.
//
//	func main() {
//		srv, _ := mrtr.NewServer(desc)
//		// ... register tools, prompts, resources ...
//		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
//		defer stop()
//		if err := stdio.ServeStdio(ctx, srv); err != nil {
//			log.Fatal(err) // to stderr
//		}
//	}
//
// # Framing
//
// Every message is one line of JSON ending in "\n" (a "\r" before it is
// tolerated, and so is a last line without a newline). Blank lines are
// ignored. A line that is not JSON is answered with -32700 and one that
// is not a JSON-RPC request or notification (a batch, a bad member) with
// -32600; both carry "id":null unless the id could be read, as JSON-RPC
// 2.0 requires (the MCP schema would also allow leaving the id out). A
// line longer than WithMaxLineBytes (4 MiB by default, the body limit of
// the Streamable HTTP transport) is answered with -32600 and "id":null and
// skipped up to its newline without being held in memory whole. None of
// these ends the transport.
//
// Nothing but MCP messages is written to the output: the transport logs to
// the WithLogger logger (by default the Server's, mrtr.Server.Logger,
// which is slog.Default() and so stderr unless the program changed it),
// and handlers must not print to stdout either. Each message is written whole, with its newline, by
// one Write call under one lock, so messages written by concurrent
// requests never interleave; a message with a line break in it (raw JSON
// a handler returned pretty-printed) is compacted first.
//
// # Requests
//
// Every request runs on a goroutine of its own, as many at once as the
// client sends (the goroutines are kept a while for the next requests).
// Notifications, the client's responses and initialize are handled in
// order, as they are read. A request's progress and log notifications
// (mrtr.Inbound.Emit) are written as they happen, always before its
// response and never after it. A request whose id is still in flight is
// refused with -32600.
//
// There is no authentication on stdio: the process that starts the server
// is its only client, and whoever it runs for is identified by the
// program calling Serve (from the environment, a credentials file) and
// given with WithPrincipal. requestState and sessions are sealed and bound
// to that principal exactly as over HTTP. There is no header layer either
// (mrtr.Inbound.Mirror is nil), so no header checks are made.
//
// # Cancellation
//
// notifications/cancelled {requestId} cancels the context of the request
// in flight with that id (ids match as JSON values: "a" and "\u0061" are
// one id), with cause ErrCancelled. The request is then not answered at
// all, whatever its handler returns: the client ignores any answer to a
// request it cancelled, and may reuse the id. Nothing more is written for
// it either, except, for a call of the initialize era, the
// notifications/cancelled that withdraw the requests it had sent the
// client. Unknown and finished ids are ignored.
//
// # subscriptions/listen
//
// A listen request's notifications (its acknowledgement, list changes,
// resource updates) go to the output as the Server emits them, tagged with
// the listen id in _meta. The client ends a listen with
// notifications/cancelled naming it, and gets nothing more for it. When
// the Server is closed (mrtr.Server.Close) the listen gets its final
// result, and then, because the stdio binding ends a stream that way, a
// notifications/cancelled whose requestId is the listen id (the spec asks
// for both, in two places; this transport sends both, in that order). A
// listen cut by the transport's shutdown gets only that
// notifications/cancelled; to give open listens their final result at
// shutdown, close the Server before cancelling Serve's context.
//
// # Shutdown
//
// Serve ends when the input ends (the client closed stdin: the spec's
// shutdown) or its context is cancelled (a signal, through
// signal.NotifyContext). It stops reading, cancels every request in flight
// with cause ErrShutdown, and waits for them at most WithShutdownTimeout
// (5 seconds by default). Whatever they answer in that time is written:
// a handler that finishes anyway has its result delivered, one that stops
// has the error it ends with (typically -32603); a call of the initialize
// era abandoned by the shutdown is not answered. Every response written
// before Serve returns has been handed to the output with a single Write
// (and flushed, when the output has a Flush method); nothing is written
// after Serve returns. Serve then returns nil, so that the program can
// exit 0. It returns an error when writing the output fails (the client
// is gone; Serve stops at once) and when reading the input fails
// otherwise than by its end. Serve never closes its input or output.
//
// A Read of the input blocked when the context is cancelled is ended with
// a read deadline when the input takes one (an os.Pipe, a net.Conn) and
// the deadline is cleared afterwards. Otherwise, as with os.Stdin in its
// usual blocking mode, Serve returns without it and that Read is left to
// return by itself, its data dropped: the program is exiting anyway.
//
// # Both eras on one pipe
//
// The first request decides what the process is. When it is initialize
// without a modern _meta claim (mrtr.Message.ClaimedVersion), and the
// initialize era is served (WithLegacy, or the Server's description lists
// LegacyVersions; WithoutLegacy turns it off), the process becomes one
// session of that era (MCP 2025-11-25 or 2025-06-18), hosted by a
// legacy.Engine: every later message without a claim goes to the session,
// and the requests a multi-round handler sends the client (sampling,
// elicitation, roots, with ids from 1) go to stdout while the client's
// answers come back on stdin as responses. The session's own stream (list
// changes, updates of subscribed resources) goes to stdout for as long as
// Serve runs, and the session ends with it. A request with a modern claim
// is still served statelessly, message by message, as MCP 2026-07-28
// dispatches dual-era servers; a second initialize is refused with
// -32600. An initialize refused for its params opens no session, and the
// client may send it again.
//
// Otherwise every message is served statelessly by the Server: an
// initialize then gets the Server's -32022 naming the versions it speaks,
// and responses, which clients of MCP 2026-07-28 never send, are dropped
// with a log line rather than answered. A malformed response is never
// answered either, in either era: an error carrying its id would read as
// the answer to a request of the client's own.
package stdio
