// Command mrtrcheck checks an MCP 2026-07-28 server over Streamable HTTP
// for the requestState, envelope, header and DNS-rebinding properties of
// the conformance suite in package
// github.com/mrtrkit/mrtrkit/conformance/suite, which the official MCP
// conformance suite does not test; and, when the same endpoint also serves
// clients of 2025-11-25 (initialize, sessions), the legacy.* properties of
// that bridge.
//
// Usage:
//
//	mrtrcheck -url http://127.0.0.1:3001/mcp [-tool NAME] [-args JSON] [-alt-args JSON]
//	          [-other-tool NAME] [-other-args JSON] [-token T] [-other-token T]
//	          [-answers JSON] [-caps JSON] [-timeout D] [-slow-after D] [-strict]
//	          [-legacy-tool NAME[=ARGS]]... [-legacy-rounds N]
//	          [-listen-max N] [-body-wait D] [-quick D] [-unread-bytes N]
//	          [-second-source IP] [-redis ADDR] [-audience URL]
//	          [-run REGEXP] [-json] [-v]
//	mrtrcheck -list [-json]
//
// -tool names a tool whose first call answers input_required with a
// requestState; -args are its arguments and -alt-args other arguments it
// accepts (derived from -args when not given). -other-tool names a second
// tool for the cross-tool replay; -token and -other-token are bearer
// tokens of two principals for the cross-principal replay, which is
// reported NOT-RUN without them. -answers gives, by input key, the exact
// answer objects to send when the tool validates what it is told (a model
// asked for a JSON list of paths, say): the suite otherwise makes answers
// up, and reports the baseline NOT-RUN when the tool refuses one with
// -32602 naming its key. -legacy-tool, repeatable, names a tool the
// legacy scenarios call on a 2025-11-25 session, with its arguments after
// "=" (a JSON object); give one that asks several rounds. -legacy-rounds
// caps the rounds of server-to-client requests followed in one call (3).
// Against a server that does not serve 2025-11-25 the legacy scenarios are
// NOT-RUN. The cross-principal replay and the legacy session-principal
// scenario use -token and -other-token. Without -tool the defaults fit
// mrtrkit's conformance fixture server:
//
//	go run ./conformance/server -addr 127.0.0.1:3999 &
//	go run ./conformance/cmd/mrtrcheck -url http://127.0.0.1:3999/mcp
//
// After the suite's scenarios come the hardening.* ones, which check how
// the server holds up against a caller that sends too much, too slowly or
// reads too little: 1 MiB method names, tool names and header values must
// be answered in under 8 KiB without being quoted back; up to -listen-max
// (300) subscriptions/listen streams are opened, and the server should
// refuse one with 429 or 503 (INFO when none is refused but tools/list is
// still answered within -quick, 2s; FAIL when it is not); requests whose
// body stalls halfway should be closed or answered within twice
// -body-wait (2s; INFO when they are not, FAIL when tools/list is not
// answered meanwhile); and a connection whose answers (-unread-bytes,
// 8 MiB, of pipelined tools/list) are never read must not keep tools/list
// from being answered on another. Each takes a few seconds at most.
//
// Last come the server.* scenarios, for deployments that serve
// 2025-11-25 clients: server.legacy-subscriptions subscribes a session to
// a 1 MiB URI, then to 8000-byte URIs until one is refused (FAIL past
// 1 MiB); server.peer-fairness, given -second-source (a second local
// address the server sees as another peer, such as 127.0.0.2 against a
// loopback server) and without -token, opens sessions and GET streams from
// the first address until one is refused or ends at once, then checks
// that a session and stream from the second address are served;
// server.bus-spoofing, given -redis (the Redis the replicas share, as
// host:port or redis://user:password@host:port), learns a session's
// digest from the events its replicas publish (PSUBSCRIBE, or SUBSCRIBE
// to the channel -audience names), then, while a call of a -legacy-tool
// waits for the client's answer, PUBLISHes a forged answer, a
// cancellation and a deletion of the session: the call must go on waiting
// and the session must live. Each is NOT-RUN when what it needs is
// missing.
//
// mrtrcheck prints one line per scenario (PASS, FAIL, NOT-RUN or INFO,
// with the reason), the exchanges behind every failure (every exchange
// with -v), and the counts; -json prints the whole report as JSON. -list
// prints every scenario with what it protects against.
//
// The exit status is 0 when no scenario fails (NOT-RUN and INFO do not
// fail), 1 when one does or the run is interrupted, and 2 on usage
// errors. With -strict, a NOT-RUN of a state.*, replay.* or answers.*
// scenario is a failure (informational scenarios excepted, and
// state.forged when the state is opaque).
//
// mrtrcheck calls the tools it is given many times: point it at a test
// deployment, or at tools without side effects.
package main
