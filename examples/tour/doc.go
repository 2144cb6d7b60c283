// Command tour is the reference mrtrkit server, the one a newcomer writes
// first: three tools, one resource and one prompt, served over HTTP or
// stdio to clients of MCP 2026-07-28 and of the initialize era (2025-11-25,
// 2025-06-18), all in at most 80 lines of Go (tour_test.go counts them).
//
//   - sum is a typed tool: a function from an input struct to an output
//     struct, whose JSON Schemas are generated and whose arguments are
//     checked before it runs (a wrong type is an isError result naming the
//     argument).
//   - greet asks the user to fill in a form (typed.Form) and reads the
//     answer as a Name; declining or cancelling is a value, not an error.
//   - haiku asks the client's model for a completion (mrtr.Sample).
//   - tour://about is a resource and review a prompt, each served by a plain
//     mrtr.Handler.
//
// greet and haiku are written in straight lines: an ask returns the answer
// when the client's retry carries it, and otherwise an error matching
// mrtr.ErrInputRequired that the handler returns as it would any error. The
// server then answers input_required, keeping nothing itself (the round's
// state travels sealed with the client), and runs the handler again from the
// top when the client retries with the answer. A client of the initialize
// era gets the same question as a real elicitation/create or
// sampling/createMessage request, answered on its session: the handlers do
// not change.
//
// Run it over HTTP (the endpoint is http://127.0.0.1:8080/mcp):
//
//	go run ./examples/tour
//	go run ./examples/tour -addr 127.0.0.1:9090
//
// or let a client start it over stdio:
//
//	go run ./examples/tour -stdio
//
// Without MRTRKIT_STATE_KEYS the server seals the rounds' state with a key made
// at start-up (and says so once): fine for one process, but replicas must
// share keys (see package state).
package main
