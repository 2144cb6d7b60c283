// Package streamablehttp is the HTTP layer a deployment mounts: it serves
// an mrtr.Server to MCP clients over HTTP, using the Streamable HTTP
// transport of MCP 2026-07-28, and to 2025-11-25 clients on the same
// endpoint.
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
//	log.Fatal(streamablehttp.NewHTTPServer("127.0.0.1:8080", h).ListenAndServe())
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
//   - With WithCORS, a CORS preflight from an allowed origin, answered
//     here with 204 No Content (see Browsers below).
//   - The HTTP method: POST only (405 Method Not Allowed, Allow: POST).
//   - Authentication, with WithAuthenticator (401 Unauthorized with a
//     WWW-Authenticate challenge).
//   - The body size, WithMaxBodyBytes (413 Content Too Large), room for
//     a large body in the budget of bytes in flight, WithMaxBytesInFlight
//     (503 Service Unavailable), and its arrival within WithReadTimeout
//     (408 Request Timeout).
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
// # Clients of the initialize era
//
// When the server's description lists LegacyVersions (mrtr.New's does),
// the endpoint also serves clients of those versions, MCP 2025-11-25 and
// 2025-06-18, which open a session with initialize, carry Mcp-Session-Id,
// hold a GET stream and answer server-to-client requests. New makes the
// bridge that serves them (a legacy.Engine, package mrtr/legacy) itself;
// WithLegacy gives one made with options of your own, and WithoutLegacy
// turns the era off, which requires a description listing no
// LegacyVersions. A legacy version listed that nothing serves is an error
// at New, since server/discover would advertise it. A request
// belongs to that era when it is a GET or a DELETE, when its body is a
// JSON-RPC response (a client's answer to one of the session's requests),
// or when it is a POST whose params._meta names no protocol version and
// whose MCP-Protocol-Version header is absent or names a version the
// server serves only to that era. Every other POST is served statelessly.
// A 2026-07-28 request is therefore never mistaken for an old one: it
// always names its version in params._meta.
//
// Sessions live in their sealed ids (see package mrtr/legacy), so any
// replica with the key ring can serve them (the bridge New makes reads
// the ring from MRTRKIT_STATE_KEYS, as the Server does by default; a
// Server given its keys in code needs WithLegacy(legacy.New(srv,
// legacy.WithKeyRing(ring))) for its replicas to share sessions); a multi-round handler's
// questions become real requests on the client's stream, and the answers
// reach the replica that waits for them through the replicas' shared bus
// (mrtr.WithShare), or, without one, through header-hash affinity at the
// balancer (docs/deployment.md).
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
// stopped reading: each write to a stream must complete within the write
// timeout (WithWriteTimeout, 30 seconds by default).
//
// # Browsers
//
// Browser pages of other origins can call the endpoint once WithCORS is
// given: preflights from the origins WithAllowedOrigins allows are
// answered with the methods the endpoint serves and the headers of the
// protocol, including the Mcp-Param-* headers the registered tools
// declare at that moment, and every answer to those origins lets the page
// read it, Mcp-Session-Id and WWW-Authenticate included. Other origins
// are refused with 403 and get no CORS headers. Credentials (cookies) are
// allowed only with CORS.AllowCredentials.
//
// # Deadlines and the http.Server
//
// The Handler bounds its own I/O: reading a request body
// (WithReadTimeout) and each write of an answer, a JSON body or one event
// of a stream (WithWriteTimeout), 30 seconds each by default. A slow or
// stalled client is cut off; a stream that stays open for hours, such as
// subscriptions/listen, is not, since only each write is bounded.
// NewHTTPServer returns an http.Server to match, with ReadHeaderTimeout,
// IdleTimeout and MaxHeaderBytes set and ReadTimeout and WriteTimeout
// left at zero: those bound a whole request and would cut such streams.
// It also caps concurrent connections (ConnLimit, DefaultMaxConns by
// default): at the cap the connection idle longest is closed to make room
// and, when none is idle, a new connection is refused with 503 and closed;
// answers refused for load (429, 503) close their HTTP/1 connection. A
// server built by hand gets the same bounds from NewConnLimit(n).Apply.
//
// # Memory
//
// Until the write timeout cuts it, a client that asks for large answers
// and does not read them holds what is being written to it. The Handler
// keeps that to the answer alone (the request's body and the answer's
// encoding are let go first) and bounds the bytes of large messages in
// flight, all requests together (WithMaxBytesInFlight, 4 MiB by
// default): past it, large requests wait and then get 503, while messages
// of up to 64 KiB are never held up. For a hard bound on the process, set
// the Go runtime's GOMEMLIMIT as well, to about twice the budget plus
// what the server itself needs.
//
// # Health
//
// Liveness and Readiness are probes the Handler serves beside the
// endpoint (WithLiveness, WithReadiness), as it serves the RFC 9728
// protected resource metadata (WithResourceMetadataHandler), so that a
// deployment mounts one handler. Readiness answers 503 while the mrtr.Server runs on a random
// requestState key because none was configured (mrtr.Server.Ready), once
// the server is closed, and once the probe is told to drain.
package streamablehttp
