// Package otelmrtr is for deployments that observe their servers: it
// traces and measures an mrtr.Server with OpenTelemetry, as an
// interceptor.
//
// It is a module of its own (github.com/mrtrkit/mrtrkit/otel), so that
// the core module does not depend on OpenTelemetry. The package is named
// otelmrtr after the OpenTelemetry instrumentation packages (otelhttp,
// otelgrpc: "otel" and the instrumented package), which also keeps it
// apart from the go.opentelemetry.io/otel package a program imports next
// to it.
//
// MCP 2026-07-28 reserves the _meta keys traceparent, tracestate and
// baggage for W3C trace context (SEP-414) and deprecates MCP logging in
// favour of OpenTelemetry. Interceptor is the server's half of that: one
// server span per request, continuing the caller's trace, and metrics.
//
//	srv, _ := mrtr.NewServer(desc, mrtr.WithInterceptors(
//		otelmrtr.Interceptor(otelmrtr.WithTracerProvider(tp), otelmrtr.WithMeterProvider(mp)),
//		mrtr.AuditLog(audit),
//	))
//
// Put it first among the interceptors: its span then covers the others,
// and the context it passes on (the span, and the caller's baggage)
// reaches them and the handlers. Without options it uses the global
// TracerProvider and MeterProvider, and W3C Trace Context and Baggage as
// propagators.
//
// # Spans
//
// Every request the Server answers gets one span of kind Server, refusals
// included (notifications have no answer and no span). Names and
// attributes follow the OpenTelemetry semantic conventions for MCP
// (status Development) where they say something, with keys of mrtrkit's
// own, prefixed "mrtr.", where they do not.
//
// The span's parent is the trace context the caller put in params._meta,
// read with the propagator (the Call does not carry the parsed _meta, so
// the interceptor reads params._meta itself, exactly by name, skipping
// the arguments). When the context already holds a span (the transport's,
// such as an otelhttp server span) and _meta names another parent, the
// ambient span is linked, as the conventions ask; without a traceparent
// in _meta the ambient span is the parent.
//
// The span is named "{mcp.method.name} {target}" for tools/call and
// prompts/get once the target resolved to a registered tool or prompt,
// "{mcp.method.name}" otherwise (a resource URI is never part of the
// name), and "_OTHER" for a method the Server does not serve, whose name
// the client chose.
//
// Attributes from the conventions:
//
//	mcp.method.name           the method, as sent
//	jsonrpc.request.id        the request id, a string id without quotes
//	mcp.protocol.version      the version claimed in _meta
//	gen_ai.operation.name     "execute_tool", for tools/call
//	gen_ai.tool.name          the tool of tools/call
//	gen_ai.prompt.name        the prompt of prompts/get
//	mcp.resource.uri          the URI of resources/read
//	error.type                the JSON-RPC error code, as a string, on error
//	rpc.response.status_code  the JSON-RPC error code, as a string, on error
//
// rpc.response.status_code is the name the MCP conventions use; it
// replaced rpc.jsonrpc.error_code (an integer), and the RPC conventions
// have since renamed it rpc.status_code in a release still to come.
// mcp.session.id is not recorded: MCP 2026-07-28 has no sessions.
// network.transport is not recorded: an interceptor does not see the
// transport.
//
// Values the client chose (method, request id, version, target) are
// clipped to 256 bytes.
//
// Attributes of mrtrkit:
//
//	mrtr.principal.digest  mrtr.PrincipalDigest of the caller (keyed, see below), never the principal
//	mrtr.state.presented   whether a requestState came with the request (multi-round methods)
//	mrtr.round             the round the accepted requestState recorded, 0 for none (multi-round methods)
//	mrtr.result_type       "complete" or "input_required", for a result
//	mrtr.refusal           Call.Refusal: the step of the Server that refused the request
//	mrtr.state.reason      Call.StateReason: why a requestState was refused
//
// mrtr.principal.digest is an HMAC of the principal under a key the
// telemetry backend never sees: random per process unless the deployment
// calls mrtr.SetPrincipalDigestKey (with mrtr.DerivePrincipalDigestKey of
// its key ring, say) so that replicas agree. Whoever reads the telemetry
// cannot test guessed subjects against it; it is still a pseudonym that
// links one caller's requests, not anonymisation.
//
// Events:
//
//	mrtr.input_required  a round asks for input: mrtr.round, and mrtr.asked, the keys asked
//	mrtr.refusal         the Server refused: mrtr.refusal, mrtr.state.reason, rpc.response.status_code
//
// A JSON-RPC error sets the span status to Error. Its description is the
// code's name (Code.String, such as "invalid_params") rather than the
// error message the conventions suggest, because a handler's message may
// quote what the caller sent.
//
// Argument values, prompts, answers to input requests, results, error
// messages, headers and token claims are never recorded. The names of
// the keys asked are, as mrtr.AuditLog logs them: they are the handler's
// choice, not the caller's.
//
// # Metrics
//
//	mcp.server.operation.duration      histogram, s: request duration (the conventions' buckets)
//	mrtr.server.requests               counter, {request}: requests answered
//	mrtr.server.call.rounds            histogram, {round}: Call.Round of each multi-round call
//	                                   (tools/call, prompts/get, resources/read) that completed
//	mrtr.server.refusals               counter, {refusal}: refusals by method, step and reason
//	mrtr.server.listen.active_streams  up-down counter, {stream}: subscriptions/listen requests open
//
// Duration and requests carry mcp.method.name, gen_ai.operation.name,
// gen_ai.tool.name or gen_ai.prompt.name, mcp.protocol.version and the
// outcome: mrtr.result_type for a result, error.type and
// rpc.response.status_code for an error, and mrtr.refusal for a refusal.
// Rounds carry the method, operation and tool or prompt name; refusals
// carry mcp.method.name, mrtr.refusal, mrtr.state.reason and
// rpc.response.status_code. A listen stream counts from the moment its
// request reaches the interceptor until its final answer.
//
// The Metric constants hold these names, and ScopeName the
// instrumentation scope of the tracer and meter, for views and queries.
//
// Every metric attribute has a bounded set of values, whatever clients
// send: a method the Server does not serve is "_OTHER", a tool or prompt
// name is recorded only once it named a registered one, a protocol
// version only once the Server accepted it, and resource URIs and
// principals never.
package otelmrtr
