// Package streamablehttp serves an mrtr.Server to MCP clients over HTTP,
// using the Streamable HTTP transport of MCP 2026-07-28.
//
// Each JSON-RPC message arrives as its own POST to one endpoint ("/mcp" by
// default). A notification is answered 202 Accepted with no body. A
// request is answered with one JSON object, or, once the server sends a
// progress or log notification for it, with a Server-Sent Events stream
// that carries those notifications and ends with the response. There are
// no sessions: the protocol is stateless, multi-round calls carry their
// state in the request (see package mrtr), and any replica can serve any
// request.
//
//	srv, _ := mrtr.NewServer(desc)
//	h, _ := streamablehttp.New(srv)
//	http.ListenAndServe("127.0.0.1:8080", h)
//
// # What the Handler checks
//
// Before a message reaches the server, the Handler checks, in order:
//
//   - Host and Origin, against WithAllowedHosts and WithAllowedOrigins
//     (403 Forbidden). By default only loopback names are allowed, which
//     suits a local server and protects it from DNS rebinding; a server
//     listening on a public interface must list its names and the origins
//     of its browser clients.
//   - The HTTP method: POST only (405 Method Not Allowed, Allow: POST).
//   - Authentication, with WithAuthenticator (401 Unauthorized with a
//     WWW-Authenticate challenge).
//   - The body size, WithMaxBodyBytes (413 Content Too Large).
//   - Content-Type: application/json (415 Unsupported Media Type).
//   - Accept: it must allow both application/json and text/event-stream
//     (406 Not Acceptable).
//   - The body: exactly one JSON-RPC request or notification, no batches
//     (400 Bad Request).
//
// The server then validates the request itself, comparing the
// MCP-Protocol-Version, Mcp-Method, Mcp-Name and Mcp-Param-* headers with
// the body; the Handler only decodes them (see DecodeHeaderValue). The
// status of every answer is decided in one place: 200 for a result and
// for an error about the method's params or execution (in-band), 404 for
// -32601, 400 for any other error about the request as a whole (see
// mrtr.Error.Envelope), and the statuses of the Handler's own refusals
// above. Every error answer carries a JSON-RPC error object, with the
// request id whenever it could be read.
//
// # Streaming
//
// A response switches to SSE lazily, at the first notification the
// handler emits: status 200, Content-Type: text/event-stream,
// Cache-Control: no-cache and X-Accel-Buffering: no (so that proxies do not
// buffer it). Each message is one "message" event without an id, flushed
// at once, and comments keep an idle stream open (WithKeepAlive). A client
// that disconnects cancels the handler's context, and emitting after that,
// or after the response, fails. So does emitting to a client that has
// stopped reading: each write to a stream must complete within 30 seconds.
package streamablehttp
