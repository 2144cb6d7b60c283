// Package client is a Go client of MCP servers: it calls tools, reads
// resources, gets prompts and listens for changes on a server of MCP
// 2026-07-28, and falls back to the initialize handshake of 2025-11-25
// when the server is older.
//
// A Client talks to one server through a transport: Streamable HTTP
// (HTTP) or a subprocess spoken to over stdio (Command). Connect probes
// the server with server/discover and, when the server does not speak
// 2026-07-28, opens a 2025-11-25 session with initialize instead; after
// that the same methods work in both eras.
//
// A server of 2026-07-28 that needs something from the user or the model
// answers input_required; the Client answers the embedded requests with
// the functions registered by OnSampling, OnElicitation and OnRoots and
// retries with the answers and the server's requestState, byte for byte,
// up to its round limit. A 2025-11-25 server sends the same questions as
// real requests on its streams; the same functions answer them. The
// function types are mrtr.SamplingFunc, mrtr.ElicitFunc and
// mrtr.RootsFunc, which the test kit mrtr/mrtrtest takes too, so a
// handler written once answers in tests and in real calls.
//
// A SamplingPolicy is the host's side of sampling: it denies, asks or
// allows per server, picks a model by what the request's content needs
// (the server's hints and priorities only rank the eligible models), names
// each rejected model in a structured SamplingRefusal, and bounds a model
// call by its silence rather than its length. Its Func plugs into
// OnSampling.
//
// Listen keeps a subscriptions/listen stream open, opening it again when
// it breaks. NewOAuth is an Authorizer for servers that require MCP's
// OAuth 2.1 flow (WithAuthorizer); WithBearerToken sends a fixed token.
// Tokens never go over plain http to a host that is not loopback.
//
// Errors returned by a Client's calls are *Error values that name the
// server, the method, the round and what the server said.
//
// The package imports mrtr for its vocabulary only; it never runs an
// mrtr.Server.
package client
