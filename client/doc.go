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
// handler written once answers in tests and in real calls. InputKey tells
// a function the key of the request it answers. One loop answers the
// rounds of CallTool, GetPrompt and ReadResource and the questions of a
// task; WithRoundWatch shows it round by round to a program that prints
// a call as it goes (the result's Exchange sums it up afterwards).
//
// A server with the Tasks extension (SEP-2663) may run a tool call as a
// task. CallTool with AsTask declares the extension on the call and, when
// the server creates a task, follows it to its end: it polls with
// tasks/get no sooner than the server's pollIntervalMs, answers the
// task's questions with the same OnSampling, OnElicitation and OnRoots
// functions (tasks/update), and returns the tool's result; a task that
// fails or is cancelled is an *Error wrapping ErrTaskFailed or
// ErrTaskCancelled and naming the task. A caller that wants to keep the
// task past the call uses CreateTask and then AwaitTask, or GetTask,
// AnswerTask and CancelTask, by the task's id. SupportsTasks says whether
// the server declares the extension; without it the task methods fail
// with ErrTasksUnsupported before sending anything.
//
// Options follow one idiom: Option (Connect), CallOption (one call),
// HTTPOption (HTTP) and StdioOption (Command) are interfaces made by the
// With... and On... functions.
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
// server, the method, the task (if any), the round and what the server
// said.
//
// The package imports mrtr for its vocabulary only; it never runs an
// mrtr.Server.
package client
