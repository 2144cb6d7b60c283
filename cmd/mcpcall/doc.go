// Command mcpcall calls any MCP server that speaks protocol revision
// 2026-07-28 over Streamable HTTP, from the command line: discovery,
// lists, and tool calls, prompts and resource reads that ask for input
// over several rounds (multi round-trip requests).
//
//	go run github.com/mrtrkit/mrtrkit/cmd/mcpcall [flags] COMMAND [ARGS]
//
// # Usage
//
// Start a server (here the repository's example) and point mcpcall at it;
// -url defaults to $MCPCALL_URL, then http://127.0.0.1:8080/mcp. Flags may
// come before or after the command.
//
//	go run ./examples/summarize_repo &
//	mcpcall discover
//	mcpcall tools list
//	mcpcall -url http://127.0.0.1:3001/mcp prompts list
//	mcpcall prompts get greeting --args '{"name":"Ada"}'
//	mcpcall resources list
//	mcpcall resources templates
//	mcpcall resources read test://static-text
//
// A tool call whose server asks for model completions (sampling), answered
// from a file: an object from input key to a CreateMessageResult or to the
// text of an assistant answer ("*" answers any key; a list under a key is
// used in order), or a top-level list used in order whatever the key:
//
//	cat > answers.json <<'EOF'
//	{"pick_files": "[\"README.md\", \"go.mod\"]",
//	 "summary": {"role": "assistant", "model": "me", "content": {"type": "text", "text": "A Go framework for MCP servers."}}}
//	EOF
//	mcpcall tools call summarize_repo --args '{"audience":"developer"}' --sampling-answers answers.json
//
// Or forwarded to an OpenAI-compatible chat-completions API (the key, if
// any, comes from $MCPCALL_MODEL_API_KEY; plain http is refused with a key
// unless the host is loopback; redirects are not followed). The server
// spends the user's model account here, so the user decides: --model is
// required (a comma-separated list; the first is used, and a model hint
// of the server can only pick another of the listed ones); maxTokens is
// capped by --max-tokens (default 4096); a run sends at most
// --max-model-calls completions (default 10) and stops the call when the
// server asks for more; and before each completion mcpcall shows, at the
// terminal, the server, the model, the tokens and what the request holds,
// and asks. --model-yes says yes to all of them beforehand (within the
// caps); without it, --model-url is refused when stdin is not a terminal:
//
//	MCPCALL_MODEL_API_KEY=sk-... mcpcall tools call summarize_repo --args '{"audience":"developer"}' \
//		--model-url https://api.openai.com/v1 --model gpt-4o-mini
//	mcpcall tools call summarize_repo --args-file args.json --model-url http://127.0.0.1:11434/v1 --model llama3.2 \
//		--model-yes --max-model-calls 3 --max-tokens 1000
//
// Questions to the user (elicitation) are asked at the terminal, field by
// field, with each field's title, description, type, choices and default,
// and the typed value is checked before it is sent; or they are answered
// from a file mapping input key (or "*") to an ElicitResult, to the form's
// content (sent with action accept), or to "accept", "decline" or
// "cancel". A url-mode elicitation whose URL does not parse, is not https
// (http only to loopback), names a user before the host, or holds spaces,
// control or invisible characters is declined, with a warning; for the
// others the prompt always shows the host the URL goes to. Roots come
// from --root, repeatable:
//
//	echo '{"user_name": {"name": "Ada"}, "*": "decline"}' > elicit.json
//	mcpcall tools call test_input_required_result_multiple_inputs \
//		--elicit-answers elicit.json --sampling-answers answers.json --root . --root file:///srv/data
//
// With --task, tools call declares the Tasks extension (SEP-2663): a
// call the server runs as a task is followed to its end through the
// client package's task API, polled no faster than the server's
// pollIntervalMs, its questions answered and printed as rounds, and
// cancelled when mcpcall is interrupted or the round limit is reached; a
// question mcpcall cannot answer leaves the task running, its id on
// stderr. tasks get ID shows a task, tasks wait ID follows it as --task
// does, tasks cancel ID cancels it:
//
//	mcpcall --task tools call slow_compute --args '{"seconds":30}'
//	mcpcall tasks wait Fm3u1Qf0Ryi6nbrvV2cXbg --elicit-answers elicit.json
//
// Machine-readable output, one JSON object per line: each round
// ({"type":"round","round":N,"inputRequests":…,"inputResponses":…,"answeredBy":…,"requestState":…}),
// then the result ({"type":"result","rounds":N,"result":…}) or the error
// ({"type":"error","httpStatus":…,"error":…}); notifications go to stderr,
// as JSON lines too:
//
//	mcpcall -json tools call summarize_repo --args '{"audience":"developer"}' --sampling-answers answers.json | jq .
//
// Other flags: -token (or $MCPCALL_TOKEN) sends a bearer token, never
// printed, and only over https or to loopback (localhost, 127.0.0.0/8,
// ::1): a run with a token and a plain http URL to any other host is
// refused; --log-level asks for log notifications; --max-rounds (default
// 10) bounds the rounds of one call; --capabilities declares given client
// capabilities instead of those the flags can answer; -timeout bounds the
// server's silence in each HTTP exchange (each byte of a stream starts
// the wait again) and a --model-url completion's; -v prints every HTTP
// exchange on stderr, the token redacted.
//
// # What it sends
//
// mcpcall is built on the module's client package. Every command but
// discover first connects with one server/discover, at 2026-07-28 only
// (a server that does not list that revision is refused); discover sends
// that request alone and shows the answer whatever it lists. Every
// request carries MCP-Protocol-Version, Mcp-Method, Accept and
// Content-Type headers, and params._meta with the protocol version, the
// client capabilities this run can answer (elicitation when stdin is a
// terminal or --elicit-answers is given, sampling with --sampling-answers
// or --model-url, roots with --root), clientInfo and a progress token.
// tools/call, prompts/get and resources/read carry Mcp-Name; a tool call
// also carries an Mcp-Param-{Name} header for each argument its
// inputSchema marks with x-mcp-header, learnt from one tools/list per run
// (listed again once if the server answers -32020 about such a header).
// Header values are encoded as SEP-2243 says (the =?base64?…?= form for
// values that are not plain ASCII). A retry repeats the request's params
// with a new id, the latest round's answers in inputResponses, and the
// requestState exactly as received, byte for byte. Responses may be JSON
// or an event stream; progress and log notifications are printed on
// stderr as they arrive.
//
// # What it prints
//
// Text from the server (names, descriptions, messages, URLs, results,
// errors, notifications, the -v dumps) never reaches the terminal raw:
// escape sequences, C0 and C1 controls, bidi overrides and isolates and
// other invisible format characters are shown as escapes (ESC as \x1b,
// U+202E as \u202e); newlines are kept in multi-line text such as
// results and descriptions, and escaped in one-line fields such as names.
// With -json the same characters are written as JSON escapes, so each
// line is still JSON with the same values.
//
// # Exit status
//
// 0 for a complete result; 1 for a JSON-RPC error or a tool result with
// isError (the message says which); 2 for a usage error, bad input files,
// a question mcpcall cannot answer, the round limit, or a transport error
// (connection, HTTP refusals such as 401, malformed responses).
package main
