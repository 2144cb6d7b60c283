package suite

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"net/http"
)

// Scenario is one check of the suite.
type Scenario struct {
	// ID names the scenario: a group ("baseline", "state", "replay",
	// "answers", "envelope", "http", "header", "rebinding", "legacy"), a
	// dot and a name.
	ID string `json:"id"`
	// Title describes the scenario in a few words.
	Title string `json:"title"`
	// Why says what the scenario protects against.
	Why string `json:"why"`
	// Informational scenarios record behaviour and never fail.
	Informational bool `json:"informational,omitempty"`

	needsBaseline bool
	run           func(ctx context.Context, r *runner) Result
}

// Scenarios returns the scenarios of the suite, in the order Run runs
// them.
func Scenarios() []Scenario {
	return append([]Scenario(nil), catalogue...)
}

const baselineID = "baseline.round-trip"

// catalogue is every scenario, the baseline first, the legacy scenarios
// last.
var catalogue = append([]Scenario{
	{
		ID:    baselineID,
		Title: "first call asks; the genuine retry is accepted",
		Why: "Every refusal below means something only if the server accepts the genuine retry: a server that " +
			"refuses every retry would otherwise pass them all. The scenarios that alter a requestState are not run " +
			"unless this one passes.",
	},

	// requestState integrity.
	tamper("state.flip-first", "requestState with one bit flipped in its first character",
		"In most formats the first characters hold a version or a key id; a server must not trust them unverified.",
		flipMutation(flipFirst)),
	tamper("state.flip-middle", "requestState with one bit flipped in its middle character",
		"The middle of a sealed state is ciphertext or claims: a flip there is caught only by checking the MAC or the AEAD tag.",
		flipMutation(flipMiddle)),
	tamper("state.flip-last", "requestState with one bit flipped in its last character",
		"The end of a state is usually the tag or signature. The bit flipped is one the character really encodes, so a lenient base64 decoder cannot hide the change.",
		flipMutation(flipLast)),
	tamper("state.truncated", "requestState without its last payload character",
		"A truncated tag or a decoder that drops incomplete groups must not leave a state that still verifies. "+
			"The character removed is the last that carries data, not \"=\" padding, which a lenient decoder may drop "+
			"without changing a byte.",
		func(_ *runner, s string) (json.RawMessage, string, bool) {
			out, desc := truncatePayload(s)
			return str(out), desc, true
		}),
	tamper("state.appended", "requestState with a character added after its payload",
		"A verifier that checks a prefix, or a decoder that ignores trailing data, accepts extended states. The "+
			"character goes after the last payload character, before any padding, so the state still looks well formed.",
		func(_ *runner, s string) (json.RawMessage, string, bool) {
			out, desc := appendPayload(s)
			return str(out), desc, true
		}),
	tamper("state.empty", `requestState ""`,
		"An empty string is present, not absent: it must be refused, not taken for a first call that already carries answers.",
		func(*runner, string) (json.RawMessage, string, bool) {
			return str(""), `requestState ""`, true
		}),
	tamper("state.number", "requestState as a number",
		"requestState is a string; other JSON types must be refused rather than converted.",
		func(*runner, string) (json.RawMessage, string, bool) {
			return json.RawMessage(`12345`), "requestState 12345", true
		}),
	tamper("state.object", "requestState as an object holding the genuine state",
		"A loose decoder that looks inside objects for a string must not find the genuine state there.",
		func(_ *runner, s string) (json.RawMessage, string, bool) {
			return object(m("requestState", str(s))), `requestState {"requestState": <genuine state>}`, true
		}),
	{
		ID:    "state.forged",
		Title: "a requestState re-encoded by the client is refused",
		Why: "A state that is, or holds in a dot-separated segment, JSON (plain, base64url or base64) and is checked " +
			"only by parsing it and comparing it with the request can be written by the client: every bit flip breaks " +
			"its structure, so it passes the scenarios above, yet a client can issue itself any state. The suite " +
			"re-encodes the JSON with the same meaning (members in name order, or whitespace) in the same encoding and " +
			"expects a refusal; then, when the state holds argument values, it forges one naming the other arguments and " +
			"sends it with them. Not run when the state is opaque.",
		needsBaseline: true,
		run:           forged,
	},
	{
		ID:    "state.huge",
		Title: "a huge requestState is refused promptly",
		Why: "A server that decodes or decrypts whatever it is sent before checking its size can be made to spend " +
			"memory and time at will. The state is the genuine one padded to 1 MiB with characters of its own alphabet; " +
			"the answer must be a JSON-RPC error (or a 4xx refusing the body), within the time limit, not a 5xx or a timeout.",
		needsBaseline: true,
		run:           huge,
	},

	// Binding to the request and the principal.
	{
		ID:    "replay.other-arguments",
		Title: "state replayed with other arguments",
		Why: "The state must be bound to the originating request: method, target and a digest of the arguments. " +
			"Otherwise a state earned by a harmless call (\"delete nothing\") completes a harmful one (\"delete everything\"). " +
			"A control call first checks that the other arguments are accepted without a state.",
		needsBaseline: true,
		run:           replayOtherArgs,
	},
	{
		ID:    "replay.other-tool",
		Title: "state replayed to another tool",
		Why: "A state issued for one tool must not be accepted by another, which would read a payload it never sealed " +
			"and skip questions it never asked. A control call first checks that the other tool answers the arguments " +
			"without a state.",
		needsBaseline: true,
		run:           replayOtherTool,
	},
	{
		ID:    "replay.other-principal",
		Title: "state presented by another principal",
		Why: "A state may hold what one user answered (a confirmation, an account). Presented by someone else it must " +
			"be refused, or one user's approval completes another's call. Needs two bearer tokens.",
		needsBaseline: true,
		run:           replayOtherPrincipal,
	},

	// Unsolicited answers.
	{
		ID:            "answers.unsolicited-asked-key",
		Title:         "answer sent before being asked (informational)",
		Why:           "A first call, without requestState, that already answers the question the tool asks. The specification allows fixed questions to be answered up front, so this only records what the server does.",
		Informational: true,
		needsBaseline: true,
		run:           unsolicitedAskedKey,
	},
	{
		ID:    "answers.random-keys",
		Title: "answers to keys never asked change nothing",
		Why: "Servers must ignore inputResponses they did not ask for. A server that merges any answer it is sent into " +
			"its state lets a client inject values no question produced. The outcome with answers under random keys must " +
			"equal the outcome without answers.",
		needsBaseline: true,
		run:           randomKeys,
	},

	// Envelope.
	{
		ID:    "envelope.duplicate-method",
		Title: `"method" twice in the message`,
		Why: "Two parsers that resolve a duplicate member differently (first wins, last wins) let a request look like " +
			"one method to a gateway and another to the server. Duplicates must be refused, not resolved. Both members " +
			"here name tools/list, so a lenient parser answers with a result.",
		run: controlled(duplicateMethod),
	},
	{
		ID:    "envelope.duplicate-meta",
		Title: "params._meta twice",
		Why: "The same parser-differential risk for the member that carries the protocol version and the client " +
			"capabilities. Both copies are valid, so a lenient parser answers with a result.",
		run: controlled(duplicateMeta),
	},
	{
		ID:    "envelope.meta-key-case",
		Title: "_meta keys in another case do not count",
		Why: "Member names are case-sensitive. A server that matches io.modelcontextprotocol/protocolversion as the " +
			"required protocolVersion key disagrees with every strict component in front of it about what was declared.",
		run: controlled(metaKeyCase),
	},
	{
		ID:    "envelope.meta-member-case",
		Title: "_META is not _meta",
		Why:   "The same for the _meta member itself: a request whose only envelope is _META has no _meta and must be refused.",
		run:   controlled(metaMemberCase),
	},
	{
		ID:    "envelope.batch",
		Title: "a JSON-RPC batch is refused with -32600",
		Why: "2026-07-28 has no batches. A server that still processes arrays answers requests whose headers describe " +
			"only one of them, which defeats header-based routing and policy.",
		run: controlled(batch),
	},
	{
		ID:    "http.get",
		Title: "GET is answered 405",
		Why: "The endpoint is POST only. A modern-only server answers 405. A server that also serves 2025-era clients " +
			"may answer otherwise (a 4xx, or a 2xx without an MCP result), but a 2xx carrying an MCP result, or a 5xx, fails.",
		run: httpMethod(http.MethodGet),
	},
	{
		ID:    "http.delete",
		Title: "DELETE is answered 405",
		Why:   "There are no sessions to delete. As for GET: 405 is expected, a 2xx carrying an MCP result or a 5xx fails.",
		run:   httpMethod(http.MethodDelete),
	},

	// Header and body agreement.
	{
		ID:    "header.version-mismatch",
		Title: "MCP-Protocol-Version header ≠ _meta version: -32020",
		Why: "Intermediaries route and enforce policy on the header; the server acts on the body. When they disagree " +
			"(header 2026-07-28, body 2025-11-25, a real version) the request must be refused with -32020 and HTTP 400, " +
			"not served under either version.",
		run: controlled(versionMismatch),
	},
	{
		ID:    "header.name-base64-mismatch",
		Title: "Mcp-Name in base64 form naming another tool: -32020",
		Why: "Header values may be sent as =?base64?…?=, and the server must decode them before comparing. A server " +
			"that skips the comparison for encoded values lets a gateway authorise one tool while the server runs another.",
		run: nameBase64Mismatch,
	},
	{
		ID:    "header.name-base64-match",
		Title: "Mcp-Name in base64 form naming the tool is accepted",
		Why: "The counterpart of the previous scenario: a correctly encoded Mcp-Name must be decoded and accepted, so " +
			"that refusing every encoded value does not pass for validation.",
		run: nameBase64Match,
	},

	// DNS rebinding.
	{
		ID:    "rebinding.host",
		Title: "Host evil.example.com is refused (403)",
		Why: "A web page can make its own domain resolve to 127.0.0.1 and then call a local server from the browser. " +
			"The Host header still names the attacker's domain; a server that checks it stops the attack.",
		run: controlled(rebindHost),
	},
	{
		ID:    "rebinding.origin",
		Title: "Origin http://evil.example.com is refused (403)",
		Why:   "A browser names the page that makes a request in Origin. A server must refuse origins it does not serve.",
		run:   controlled(rebindOrigin),
	},

	// Readability.
	{
		ID:            "state.readable",
		Title:         "whether requestState can be read (informational)",
		Why:           "A state that is only signed (HMAC, JWS) can be decoded by anyone who holds it: it must carry no secrets. Encrypted state (AEAD) is opaque. This decodes the state as base64 and base64url and reports whether the tool name, the argument values or the asked keys appear in clear.",
		Informational: true,
		needsBaseline: true,
		run:           readable,
	},
}, append(append([]Scenario(nil), taskScenarios...), legacyScenarios...)...)

// control calls tool with args without a state; a scenario whose control
// is refused is not run, since its refusal would prove nothing.
func (r *runner) control(ctx context.Context, label, tool string, args json.RawMessage, other bool) (reply, bool) {
	rep := r.call(ctx, callSpec{label: label, tool: tool, args: args, other: other})
	return rep, rep.isResult()
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// listControl sends a well-formed tools/list, the unaltered form of the
// envelope, header, HTTP and rebinding probes. When it gets no result, a
// refusal of the altered probe would prove nothing (the server may refuse
// everything), and the Result says why the scenario is not run.
func (r *runner) listControl(ctx context.Context) (Evidence, *Result) {
	rep := r.send(ctx, r.listProbe("control: the same tools/list, unaltered (valid envelope, Host and Origin)"))
	if rep.isResult() {
		return rep.Evidence, nil
	}
	res := controlFailed(rep)
	return rep.Evidence, &res
}

// controlled runs judge only after the control (the same tools/list,
// unaltered) got a result, handing it the control's evidence; otherwise
// the scenario is judged by controlFailed.
func controlled(judge func(ctx context.Context, r *runner, ctl Evidence) Result) func(ctx context.Context, r *runner) Result {
	return func(ctx context.Context, r *runner) Result {
		ctl, nr := r.listControl(ctx)
		if nr != nil {
			return *nr
		}
		return judge(ctx, r, ctl)
	}
}

// controlFailed judges a control that got no result: no answer at all is
// a failure (the endpoint does not serve); any other answer means the
// scenario is not run.
func controlFailed(rep reply) Result {
	if rep.HTTPStatus == 0 {
		return fail("no answer to the unaltered request (the control): "+rep.String(), rep.Evidence)
	}
	return notRun("the unaltered request (the control) is not accepted either, so a refusal would prove nothing: "+describeNoRPC(rep), rep.Evidence)
}
