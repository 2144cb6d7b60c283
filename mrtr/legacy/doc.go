// Package legacy serves clients of the initialize era (MCP 2025-11-25 and
// 2025-06-18) with the same mrtr.Server, the same handlers and the same
// multi-round safety as clients of 2026-07-28.
//
// Such a client starts with initialize, carries a session id on every
// later request, and expects the server to send it requests
// (sampling/createMessage, elicitation/create, roots/list) while a call
// runs. An Engine gives it exactly that, and nothing of the modern wire:
//
//   - initialize negotiates a served version (the description's
//     LegacyVersions) and answers from the one description; the session id
//     is a token sealed with the key ring under its own purpose, holding
//     the negotiated version, the client's capabilities, a digest of the
//     principal and the expiry, so that any replica with the keys serves
//     any session, and a session presented by another principal is
//     unknown;
//   - what changes during a session (its log level, its resource
//     subscriptions, its stream, its calls in flight, a deletion) is kept
//     per process, bounded in number, idle time and calls in flight;
//   - a tools/call, prompts/get or resources/read runs as an in-process
//     modern client of the Server, with a _meta made from the session
//     (version, capabilities, client info, log level, the client's
//     progress token and its own _meta keys), so that sealing, binding,
//     expiry, the round limit and the capability gate are the modern path
//     itself. When the handler answers input_required, every embedded
//     request goes to the client as a real request on the stream of the
//     request being served (never only on the session's stream, which a
//     client may not keep open), with ids that count from 1 per session;
//     the answers come back, and the call is retried with exactly that
//     round's answers and the state byte for byte, as many rounds as the
//     handler needs, up to the Server's round limit;
//   - a client error, a timeout (WithLegTimeout) or the round limit ends a
//     tools/call with an isError result saying which request failed, and
//     other methods with a JSON-RPC error; cancelling the outer request
//     (notifications/cancelled, or the client going away) cancels the
//     call and tells the client which of its requests are no longer
//     wanted, on the request's stream or, when that is gone, on the
//     session's. A client that goes away is taken to have cancelled: the
//     initialize era says a disconnection SHOULD NOT be read so, but
//     without resumable streams (which mrtrkit does not offer: no event
//     ids) the answer could not reach it anyway;
//   - no answer carries resultType, inputRequests, requestState, ttlMs,
//     cacheScope, the server's identity in _meta, or an error code of
//     2026-07-28 (-32020, -32021, -32022); empty results are exactly {};
//     a missing resource is -32002, as that era says.
//
// A transport hosts an Engine through a small surface: Initialize,
// Engine.Session for later requests, Session.Handle with a Sender for the
// request's stream, Session.Listen with a Sender for the session's own
// stream, Session.Close. Streamable HTTP (transport/streamablehttp,
// WithLegacy) and stdio (transport/stdio) host it.
package legacy
