// Package mrtr is the core of mrtrkit: it turns MCP 2026-07-28 requests
// into calls of your handlers and their answers back into protocol results.
//
// A Server holds registries of tools, prompts, resources and resource
// templates, each served by a Handler. A Handler returns either a complete
// result (*CallToolResult, *GetPromptResult, *ReadResourceResult) or an
// *InputRequired asking the client for input: a model completion
// (SamplingRequest), a user answer (ElicitRequest) or the client's roots
// (RootsRequest). The wire resultType follows from the Go type returned, so
// a handler cannot return content and input requests at once.
//
// Multi round-trip requests keep no state on the server. When a handler asks
// for input, the Server seals the handler's State together with the
// request's principal, audience, method, target, argument digest, expiry,
// round number and the keys asked (package state, AEAD by default). The
// client echoes that requestState on its retry; the Server opens it and
// checks every claim against the retry before any handler code runs, and
// decodes each answer in inputResponses by the kind recorded for its key.
// Answers to keys that were not asked never reach the handler. Any replica
// holding the same keys can serve any round.
//
// Every request goes through one validation ladder, in this order: the
// protocol version header against params._meta (-32020), the version itself
// (-32022), the _meta envelope (-32602, HTTP 400), the method (-32601,
// HTTP 404), the Mcp-Method and Mcp-Name headers (-32020), the Mcp-Param-*
// headers of a tool's x-mcp-header declarations (-32020), then the method's
// params (-32602, in-band). What a handler embeds is checked against the
// capabilities the client declared on this request; anything it cannot do
// is -32021 with data.requiredCapabilities. All errors come from one
// taxonomy (errors.go) with one mapping to HTTP status (HTTPStatus).
//
// The Server knows nothing of HTTP: a transport (package
// transport/streamablehttp) parses one message with ParseMessage, hands it
// over in an Inbound together with the authenticated principal and the
// decoded header values, and writes the Response.
package mrtr
