// Package suite is a black-box conformance suite for MCP 2026-07-28
// servers that use multi round-trip requests (MRTR). It checks, over
// Streamable HTTP and against any server, the security and compatibility
// properties the official MCP conformance suite leaves untested: that
// requestState is integrity-protected and bound to the call and the
// principal it was issued for, that unsolicited answers change nothing,
// that the JSON-RPC envelope is parsed strictly, that headers and body
// agree, and that the endpoint resists DNS rebinding.
//
// # Usage
//
//	rep, err := suite.Run(ctx, suite.Config{
//		URL:       "http://127.0.0.1:3001/mcp",
//		Tool:      "deploy",                     // asks for input with a requestState
//		Args:      json.RawMessage(`{"env":"staging"}`),
//		OtherTool: "rollback",                   // for the cross-tool replay
//		Token:     aliceToken, OtherToken: bobToken,
//	})
//	if err != nil { ... }                        // an invalid Config, or ctx ended
//	rep.WriteText(os.Stdout, false)
//	if rep.Failed() { ... }
//
// With Config.Tool empty the defaults fit mrtrkit's conformance fixture
// server (conformance/server). The command conformance/cmd/mrtrcheck runs
// the suite from the command line.
//
// # Verdicts
//
// Each scenario ends in a Result: Pass, Fail, NotRun (the scenario could
// not be judged: configuration is missing, the baseline failed, or a
// control call showed that a refusal would prove nothing) or Info (the
// scenario records behaviour the specification leaves open). Every
// Result carries a one-line reason and the evidence of each exchange:
// HTTP status, JSON-RPC error code and message, or result type.
//
// # How the checks are made
//
// Every scenario that alters a requestState starts from a fresh first
// call, so a server that makes states single-use is judged fairly, and
// sends the genuine arguments and answers with the altered state, so the
// state is the only thing wrong. The baseline scenario first proves that
// the genuine retry is accepted; without it, refusals prove nothing and
// those scenarios are not run. Replays to other arguments, another tool or
// another principal are preceded by a control call showing that the
// server accepts that call without a state. A state that is, or holds in a
// dot-separated segment, JSON is forged (state.forged): re-encoded with the
// same meaning, then rewritten to name other arguments; an opaque state
// leaves that scenario NotRun. Answers to the server's questions are
// Config.Answers where given, else made up from the questions themselves
// (form schemas, sampling, roots); when the tool refuses a made-up answer
// with -32602 naming its key, the baseline is NotRun, not Fail.
//
// The envelope, HTTP, header and rebinding scenarios first send the same
// probe unaltered: unless it gets a result, a refusal of the altered probe
// would prove nothing (a server may refuse everything), and the scenario
// is NotRun.
//
// With Config.Strict, a NotRun of a state.*, replay.* or answers.*
// scenario is a Fail (informational scenarios excepted, and state.forged
// on an opaque state).
//
// A black-box suite sees only the answer: it cannot tell whether a server
// acted on a tampered state before it returned an error.
//
// The modern scenarios speak the 2026-07-28 wire: one POST per request with
// Content-Type, Accept, MCP-Protocol-Version, Mcp-Method, Mcp-Name and the
// Mcp-Param-* mirrors the tool's input schema declares (x-mcp-header),
// and params._meta with the protocol version, client capabilities and
// client info. It reads JSON and SSE responses alike, taking the response
// whose id is the request's.
//
// # The initialize era
//
// When the endpoint also serves clients of MCP 2025-11-25 (a raw
// initialize, without the _meta of 2026-07-28, is answered 200 with an
// Mcp-Session-Id), the legacy.* scenarios check that bridge as such a
// client sees it: no member, _meta key or error code of 2026-07-28 in any
// message it receives, after one round or several (Config.LegacyTools,
// Config.LegacyRounds); empty results exactly {}; the server's requests
// numbered from 1, distinct within the session and sent on the POST's own
// stream; cancellation; late answers accepted with 202 and answers from
// another session ignored; 404 for unknown,
// tampered and deleted sessions and for another principal's, 400 without
// a session, and HTTP 200 for JSON-RPC errors on a live session. Against a
// server that does not serve that era they are NotRun.
//
// The suite calls the configured tools many times. Point it at a test
// deployment, or at tools without side effects.
//
// README.md in this directory explains each scenario and why it matters.
package suite
