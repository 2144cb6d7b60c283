package suite

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"time"
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

// tamper returns a scenario that sends a fresh state, altered by mutate,
// with the genuine arguments and answers.
func tamper(id, title, detail string, mutate func(r *runner, s string) (json.RawMessage, string, bool)) Scenario {
	return Scenario{
		ID:    id,
		Title: title,
		Why: "requestState comes back from the client and is attacker-controlled: the server must verify it (HMAC or " +
			"AEAD) and refuse what it did not issue with a JSON-RPC error, before acting on it. Looking for a marker such " +
			"as a \"-TAMPERED\" suffix is not verification. " + detail,
		needsBaseline: true,
		run: func(ctx context.Context, r *runner) Result {
			f, nr := r.first(ctx, false)
			if nr != nil {
				return *nr
			}
			val, desc, ok := mutate(r, f.state)
			if !ok {
				return notRun("the state has no character to alter", f.Evidence)
			}
			rep := r.call(ctx, callSpec{label: "retry with " + desc, tool: r.cfg.Tool, args: r.cfg.Args, answers: f.answers, state: val})
			return expectRefusal(rep, f.Evidence)
		},
	}
}

func flipMutation(pos flipPosition) func(*runner, string) (json.RawMessage, string, bool) {
	return func(_ *runner, s string) (json.RawMessage, string, bool) {
		out, desc, ok := flipBit(s, pos)
		return str(out), "requestState with " + desc, ok
	}
}

// baseline runs (once) and judges the round trip every state scenario
// rests on.
func (r *runner) baseline(ctx context.Context) Result {
	if r.base != nil {
		return *r.base
	}
	res := r.judgeBaseline(ctx)
	r.base = &res
	return res
}

func (r *runner) judgeBaseline(ctx context.Context) Result {
	r.listTools(ctx)
	ev := append([]Evidence(nil), r.listEv...)
	if r.listFail != "" {
		return fail(r.listFail, ev...)
	}
	if _, ok := r.tools[r.cfg.Tool]; !ok {
		return fail(fmt.Sprintf("tool %q is not in tools/list", r.cfg.Tool), ev...)
	}
	f, nr := r.first(ctx, false)
	if nr != nil {
		return fail(nr.Reason+" (choose a tool that asks for input with a requestState)", append(ev, nr.Evidence...)...)
	}
	ev = append(ev, f.Evidence)
	rep := r.call(ctx, callSpec{label: "retry with the genuine requestState and answers", tool: r.cfg.Tool, args: r.cfg.Args, answers: f.answers, state: str(f.state)})
	ev = append(ev, rep.Evidence)
	if key, ok := refusedAnswerKey(rep, f.InputKeys); ok && !rep.isResult() {
		if f.madeUp[key] {
			return notRun(fmt.Sprintf("the tool refused the suite's made-up answer to %q (%s); supply the answer it expects with -answers (Config.Answers)",
				key, rep.String()), ev...)
		}
		return notRun(fmt.Sprintf("the tool refused the answer to %q given in -answers (%s); supply one it accepts", key, rep.String()), ev...)
	}
	if !rep.isResult() {
		return fail("the genuine retry was not accepted: "+describeNoRPC(rep), ev...)
	}
	return pass(fmt.Sprintf("first call asked [%s] with a %d-character requestState; the genuine retry answered %s",
		strings.Join(f.InputKeys, ", "), len(f.state), rep.ResultType), ev...)
}

// refusedAnswerKey reports which asked key a -32602 refusal names: the
// key of its data, or else a key its message mentions as a word.
func refusedAnswerKey(rep reply, asked []string) (string, bool) {
	if !rep.isRPCError() || rep.Error.Code != -32602 {
		return "", false
	}
	var data struct {
		Key string `json:"key"`
	}
	if len(rep.Error.Data) > 0 && json.Unmarshal(rep.Error.Data, &data) == nil {
		for _, k := range asked {
			if k == data.Key {
				return k, true
			}
		}
	}
	for _, k := range asked {
		if mentionsWord(rep.Error.Message, k) {
			return k, true
		}
	}
	return "", false
}

// mentionsWord reports whether word occurs in s, not as part of a longer
// identifier.
func mentionsWord(s, word string) bool {
	ident := func(c byte) bool {
		return c == '_' || c == '-' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
	}
	for i := 0; word != "" && i+len(word) <= len(s); {
		j := strings.Index(s[i:], word)
		if j < 0 {
			return false
		}
		j += i
		end := j + len(word)
		if (j == 0 || !ident(s[j-1])) && (end == len(s) || !ident(s[end])) {
			return true
		}
		i = j + 1
	}
	return false
}

// forged judges state.forged: a state whose JSON can be read is
// re-encoded with the same meaning, then forged with the other
// arguments' values; both must be refused.
func forged(ctx context.Context, r *runner) Result {
	f, nr := r.first(ctx, false)
	if nr != nil {
		return *nr
	}
	js, ok := findJSONState(f.state)
	if !ok {
		res := notRun(fmt.Sprintf("the state is opaque: neither it nor a dot-separated segment of it is JSON, plain or "+
			"base64url or base64 (padded or not), so the suite cannot forge one (%d characters, %s alphabet)",
			len(f.state), detectAlphabet(f.state)), f.Evidence)
		res.inapplicable = true
		return res
	}
	same, desc := js.sameMeaning()
	rep := r.call(ctx, callSpec{label: "retry with a forged requestState: " + desc, tool: r.cfg.Tool, args: r.cfg.Args, answers: f.answers, state: str(same)})
	ev := []Evidence{f.Evidence, rep.Evidence}
	// A state re-encoded with the same meaning may be accepted by a server
	// whose integrity check covers the decoded meaning rather than the
	// bytes it issued. That alone proves nothing; a forgery that changes
	// the meaning decides. Only when none can be tried does accepting the
	// re-encoding count against the server.
	sameAccepted := rep.isResult()
	var first string
	if sameAccepted {
		first = "accepted a re-encoded state of the same meaning (" + desc + ")"
	} else {
		if res := expectRefusal(rep, f.Evidence); res.Status != Pass {
			return res
		}
		first = "refused a re-encoded state of the same meaning (" + desc + "): " + rep.String()
	}
	untried := func(why string, ev []Evidence) Result {
		if sameAccepted {
			res := fail("accepted a state the client wrote itself ("+desc+"), and "+why+": nothing shows that the state's "+
				"content is protected: "+rep.String(), ev...)
			return res
		}
		return pass(first+"; "+why, ev...)
	}
	if _, ok := js.withValues(r.cfg.Args, r.cfg.AltArgs); !ok {
		return untried("no argument value appears in the state, so no state naming other arguments was forged", ev)
	}
	ctl, ok := r.control(ctx, "control: "+r.cfg.Tool+" with the other arguments, no requestState", r.cfg.Tool, r.cfg.AltArgs, false)
	ev = append(ev, ctl.Evidence)
	if !ok {
		return untried("the other arguments are refused even without a state, so no state naming them was tried", ev)
	}
	g, nr := r.first(ctx, false)
	if nr != nil {
		return untried("the second first call failed, so no state naming other arguments was tried ("+nr.Reason+")", append(ev, nr.Evidence...))
	}
	ev = append(ev, g.Evidence)
	gs, ok := findJSONState(g.state)
	var other string
	if ok {
		other, ok = gs.withValues(r.cfg.Args, r.cfg.AltArgs)
	}
	if !ok {
		return untried("the second state holds no argument value to replace", ev)
	}
	rep2 := r.call(ctx, callSpec{label: "retry with a forged requestState naming arguments " + string(r.cfg.AltArgs) + ", sent with them",
		tool: r.cfg.Tool, args: r.cfg.AltArgs, answers: g.answers, state: str(other)})
	res := expectRefusal(rep2, ev...)
	switch {
	case rep2.isResult():
		res.Reason = "accepted a state the client forged to name the other arguments: " + rep2.String()
	case res.Status == Pass:
		res.Reason = first + "; refused a forged state naming the other arguments: " + rep2.String()
	}
	return res
}

func huge(ctx context.Context, r *runner) Result {
	f, nr := r.first(ctx, false)
	if nr != nil {
		return *nr
	}
	big := hugeState(f.state, r.cfg.HugeStateBytes)
	rep := r.call(ctx, callSpec{label: fmt.Sprintf("retry with the state padded to %d bytes", len(big)), tool: r.cfg.Tool, args: r.cfg.Args, answers: f.answers, state: str(big)})
	ev := []Evidence{f.Evidence, rep.Evidence}
	took := time.Duration(rep.ElapsedMS) * time.Millisecond
	switch {
	case rep.TransportError != "" && rep.HTTPStatus == 0:
		return fail("no answer: "+rep.TransportError, ev...)
	case took > r.cfg.SlowAfter:
		return fail(fmt.Sprintf("answered after %v, more than %v: %s", took, r.cfg.SlowAfter, rep.String()), ev...)
	case rep.isRPCError() && rep.HTTPStatus < 500:
		return pass(fmt.Sprintf("refused in %d ms: %s", rep.ElapsedMS, rep.String()), ev...)
	case !rep.isRPCError() && !rep.isResult() && rep.HTTPStatus >= 400 && rep.HTTPStatus < 500:
		return pass(fmt.Sprintf("body refused in %d ms with HTTP %d", rep.ElapsedMS, rep.HTTPStatus), ev...)
	}
	return expectRefusal(rep, f.Evidence)
}

// control calls tool with args without a state; a scenario whose control
// is refused is not run, since its refusal would prove nothing.
func (r *runner) control(ctx context.Context, label, tool string, args json.RawMessage, other bool) (reply, bool) {
	rep := r.call(ctx, callSpec{label: label, tool: tool, args: args, other: other})
	return rep, rep.isResult()
}

func replayOtherArgs(ctx context.Context, r *runner) Result {
	ctl, ok := r.control(ctx, "control: "+r.cfg.Tool+" with the other arguments, no requestState", r.cfg.Tool, r.cfg.AltArgs, false)
	if !ok {
		return notRun("the tool does not accept the other arguments even without a requestState (set other arguments it accepts): "+describeNoRPC(ctl), ctl.Evidence)
	}
	f, nr := r.first(ctx, false)
	if nr != nil {
		return *nr
	}
	rep := r.call(ctx, callSpec{label: "retry with the genuine state and answers but arguments " + string(r.cfg.AltArgs), tool: r.cfg.Tool, args: r.cfg.AltArgs, answers: f.answers, state: str(f.state)})
	return expectRefusal(rep, ctl.Evidence, f.Evidence)
}

func replayOtherTool(ctx context.Context, r *runner) Result {
	if r.cfg.OtherTool == "" {
		return notRun("needs a second tool (other tool not configured)")
	}
	ctl, ok := r.control(ctx, "control: "+r.cfg.OtherTool+", no requestState", r.cfg.OtherTool, r.cfg.OtherArgs, false)
	if !ok {
		return notRun("the other tool does not answer its arguments even without a requestState: "+describeNoRPC(ctl), ctl.Evidence)
	}
	f, nr := r.first(ctx, false)
	if nr != nil {
		return *nr
	}
	rep := r.call(ctx, callSpec{label: "the state and answers of " + r.cfg.Tool + " sent to " + r.cfg.OtherTool, tool: r.cfg.OtherTool, args: r.cfg.OtherArgs, answers: f.answers, state: str(f.state)})
	return expectRefusal(rep, ctl.Evidence, f.Evidence)
}

func replayOtherPrincipal(ctx context.Context, r *runner) Result {
	if r.cfg.Token == "" || r.cfg.OtherToken == "" {
		return notRun("needs two principals: set a token and another token")
	}
	ctl, ok := r.control(ctx, "control: first call as the other principal", r.cfg.Tool, r.cfg.Args, true)
	if !ok {
		return notRun("the other principal's call is not accepted even without a requestState: "+describeNoRPC(ctl), ctl.Evidence)
	}
	f, nr := r.first(ctx, false)
	if nr != nil {
		return *nr
	}
	rep := r.call(ctx, callSpec{label: "the first principal's state and answers presented by the other principal", tool: r.cfg.Tool, args: r.cfg.Args, answers: f.answers, state: str(f.state), other: true})
	return expectRefusal(rep, ctl.Evidence, f.Evidence)
}

func unsolicitedAskedKey(ctx context.Context, r *runner) Result {
	f, nr := r.first(ctx, false)
	if nr != nil {
		return *nr
	}
	rep := r.call(ctx, callSpec{label: "first call already answering [" + strings.Join(f.InputKeys, ", ") + "], no requestState", tool: r.cfg.Tool, args: r.cfg.Args, answers: f.answers})
	ev := []Evidence{f.Evidence, rep.Evidence}
	switch {
	case rep.ResultType == "input_required":
		return info("asked again: answers sent before being asked are ignored ("+rep.String()+")", ev...)
	case rep.isResult():
		return info("accepted the answers up front, as a fixed question may ("+rep.String()+")", ev...)
	case rep.isRPCError():
		return info("refused the call: "+rep.String(), ev...)
	}
	return info("no JSON-RPC response: "+describeNoRPC(rep), ev...)
}

// outcome summarises a reply for comparison: the error code, or the
// result type and the keys asked.
func outcome(rep reply) string {
	switch {
	case rep.isRPCError():
		return fmt.Sprintf("error %d", rep.Error.Code)
	case rep.isResult():
		if len(rep.InputKeys) > 0 {
			return rep.ResultType + " [" + strings.Join(rep.InputKeys, ", ") + "]"
		}
		return rep.ResultType
	}
	return "no JSON-RPC response"
}

func randomKeys(ctx context.Context, r *runner) Result {
	k1, k2 := "mrtrcheck_unasked_"+randomHex(6), "mrtrcheck_unasked_"+randomHex(6)
	unasked := map[string]json.RawMessage{
		k1: json.RawMessage(`{"action":"accept","content":{"name":"mrtrcheck","ok":true,"confirm":true}}`),
		k2: json.RawMessage(`{"role":"assistant","content":{"type":"text","text":"mrtrcheck"},"model":"mrtrcheck"}`),
	}
	unaskedJSON, _ := json.Marshal(unasked)
	keys := k1 + ", " + k2

	// 1. A first call, without state.
	plain := r.call(ctx, callSpec{label: "first call without answers", tool: r.cfg.Tool, args: r.cfg.Args})
	with := r.call(ctx, callSpec{label: "first call with answers under keys never asked: " + keys, tool: r.cfg.Tool, args: r.cfg.Args, answers: unaskedJSON})
	ev := []Evidence{plain.Evidence, with.Evidence}
	if a, b := outcome(plain), outcome(with); a != b {
		return fail(fmt.Sprintf("on a first call, the unasked answers changed the outcome from %s to %s", a, b), ev...)
	}

	// 2. The genuine state with only unasked answers: the question stands.
	f, nr := r.first(ctx, false)
	if nr != nil {
		return notRun("first call for the retry with unasked answers only: "+nr.Reason, append(ev, nr.Evidence...)...)
	}
	only := r.call(ctx, callSpec{label: "retry with the genuine requestState and only answers under keys never asked: " + keys,
		tool: r.cfg.Tool, args: r.cfg.Args, answers: unaskedJSON, state: str(f.state)})
	ev = append(ev, f.Evidence, only.Evidence)
	if a, b := outcome(f.reply), outcome(only); a != b {
		return fail(fmt.Sprintf("with the genuine state and only unasked answers the server answered %s; want the same question again: %s", b, a), ev...)
	}

	// 3. The genuine answers with unasked ones: as the genuine retry.
	g, nr := r.first(ctx, false)
	if nr != nil {
		return notRun("first call for the genuine retry: "+nr.Reason, append(ev, nr.Evidence...)...)
	}
	genuine := r.call(ctx, callSpec{label: "retry with the genuine requestState and answers", tool: r.cfg.Tool, args: r.cfg.Args, answers: g.answers, state: str(g.state)})
	h, nr := r.first(ctx, false)
	if nr != nil {
		return notRun("first call for the retry with extra answers: "+nr.Reason, append(ev, g.Evidence, genuine.Evidence)...)
	}
	mixed := map[string]json.RawMessage{}
	_ = json.Unmarshal(h.answers, &mixed)
	for k, v := range unasked {
		mixed[k] = v
	}
	mixedJSON, _ := json.Marshal(mixed)
	extra := r.call(ctx, callSpec{label: "retry with the genuine requestState and answers plus answers under keys never asked: " + keys,
		tool: r.cfg.Tool, args: r.cfg.Args, answers: mixedJSON, state: str(h.state)})
	ev = append(ev, g.Evidence, genuine.Evidence, h.Evidence, extra.Evidence)
	if a, b := outcome(genuine), outcome(extra); a != b {
		return fail(fmt.Sprintf("the unasked answers changed the outcome of the genuine retry from %s to %s", a, b), ev...)
	}
	return pass(fmt.Sprintf("unasked answers changed nothing: first call %s; genuine state without the asked answers %s; genuine retry %s",
		outcome(plain), outcome(only), outcome(genuine)), ev...)
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

func duplicateMethod(ctx context.Context, r *runner, ctl Evidence) Result {
	p := r.listProbe(`tools/list with "method":"tools/list" twice`)
	p.body = object(
		m("jsonrpc", str("2.0")),
		m("id", json.RawMessage(fmt.Sprint(p.id))),
		m("method", str("tools/list")),
		m("method", str("tools/list")),
		m("params", object(m("_meta", r.meta(ProtocolVersion)))),
	)
	return expectRefusal(r.send(ctx, p), ctl)
}

func duplicateMeta(ctx context.Context, r *runner, ctl Evidence) Result {
	p := r.listProbe("tools/list with params._meta twice, both valid")
	second := object(
		m(metaProtocolVersion, str(ProtocolVersion)),
		m(metaClientCapabilities, json.RawMessage(`{}`)),
		m(metaClientInfo, json.RawMessage(`{"name":"mrtrcheck-second-meta","version":"1"}`)),
	)
	p.body = envelope(p.id, "tools/list", object(m("_meta", r.meta(ProtocolVersion)), m("_meta", second)))
	return expectRefusal(r.send(ctx, p), ctl)
}

func metaKeyCase(ctx context.Context, r *runner, ctl Evidence) Result {
	p := r.listProbe("tools/list whose _meta spells the required keys …/protocolversion and …/clientcapabilities")
	meta := object(
		m(strings.ToLower(metaProtocolVersion), str(ProtocolVersion)),
		m(strings.ToLower(metaClientCapabilities), r.cfg.Capabilities),
	)
	p.body = envelope(p.id, "tools/list", object(m("_meta", meta)))
	return expectRefusal(r.send(ctx, p), ctl)
}

func metaMemberCase(ctx context.Context, r *runner, ctl Evidence) Result {
	p := r.listProbe("tools/list whose params hold _META instead of _meta")
	p.body = envelope(p.id, "tools/list", object(m("_META", r.meta(ProtocolVersion))))
	return expectRefusal(r.send(ctx, p), ctl)
}

func batch(ctx context.Context, r *runner, ctl Evidence) Result {
	p := r.listProbe("a batch: [tools/list]")
	p.body = append(append([]byte{'['}, p.body...), ']')
	rep := r.send(ctx, p)
	if !rep.isRPCError() && bytes.HasPrefix(bytes.TrimSpace([]byte(rep.Body)), []byte("[")) {
		return fail("the batch was processed: the body is an array of responses", ctl, rep.Evidence)
	}
	return expectCode(rep, -32600, 0, ctl)
}

func httpMethod(method string) func(ctx context.Context, r *runner) Result {
	return controlled(func(ctx context.Context, r *runner, ctl Evidence) Result {
		h := r.header("", false)
		h.Del("Mcp-Method")
		h.Del("Content-Type")
		rep := r.send(ctx, probe{label: method + " " + r.cfg.URL, method: method, header: h})
		ev := []Evidence{ctl, rep.Evidence}
		switch s := rep.HTTPStatus; {
		case s == http.StatusMethodNotAllowed:
			return pass("answered 405", ev...)
		case s == 0:
			return fail("no answer: "+rep.TransportError, ev...)
		case s >= 500:
			return fail(fmt.Sprintf("the server failed (HTTP %d); want 405", s), ev...)
		case s >= 200 && s < 300 && holdsResult(rep.Body):
			return fail(fmt.Sprintf("answered %d with an MCP result; want 405", s), ev...)
		case s >= 200 && s < 300:
			return pass(fmt.Sprintf("answered %d without an MCP result, not 405: acceptable only for a server that also serves 2025-era clients", s), ev...)
		}
		return pass(fmt.Sprintf("answered %d, not 405: acceptable for a server that also serves 2025-era clients", rep.HTTPStatus), ev...)
	})
}

// holdsResult reports whether a body, JSON or an event stream, carries a
// JSON-RPC result.
func holdsResult(body string) bool {
	return strings.Contains(body, `"jsonrpc"`) && strings.Contains(body, `"result"`)
}

func versionMismatch(ctx context.Context, r *runner, ctl Evidence) Result {
	p := r.listProbe("tools/list with header MCP-Protocol-Version 2026-07-28 and _meta version 2025-11-25")
	p.body = envelope(p.id, "tools/list", object(m("_meta", r.meta("2025-11-25"))))
	return expectCode(r.send(ctx, p), -32020, http.StatusBadRequest, ctl)
}

func nameBase64Mismatch(ctx context.Context, r *runner) Result {
	other := r.cfg.OtherTool
	if other == "" {
		other = r.cfg.Tool + "_mrtrcheck"
	}
	ctl := r.call(ctx, callSpec{label: "control: tools/call " + r.cfg.Tool + " with a plain Mcp-Name", tool: r.cfg.Tool, args: r.cfg.Args})
	if !ctl.isResult() {
		return controlFailed(ctl)
	}
	enc := base64Sentinel(other)
	rep := r.call(ctx, callSpec{label: fmt.Sprintf("tools/call %s with Mcp-Name %s (%s)", r.cfg.Tool, enc, other), tool: r.cfg.Tool, args: r.cfg.Args, name: enc})
	return expectCode(rep, -32020, http.StatusBadRequest, ctl.Evidence)
}

func nameBase64Match(ctx context.Context, r *runner) Result {
	enc := base64Sentinel(r.cfg.Tool)
	rep := r.call(ctx, callSpec{label: fmt.Sprintf("tools/call %s with Mcp-Name %s", r.cfg.Tool, enc), tool: r.cfg.Tool, args: r.cfg.Args, name: enc})
	if rep.isResult() {
		return pass("accepted: "+rep.String(), rep.Evidence)
	}
	return fail("a correctly encoded Mcp-Name was not accepted: "+describeNoRPC(rep), rep.Evidence)
}

// expectForbidden judges a request that must be refused with 403, after
// the control (the same request with a valid Host and no Origin) was
// accepted.
func expectForbidden(rep reply, ctl Evidence) Result {
	ev := []Evidence{ctl, rep.Evidence}
	switch s := rep.HTTPStatus; {
	case s == http.StatusForbidden:
		return pass("answered 403", ev...)
	case s >= 400 && s < 500:
		return pass(fmt.Sprintf("refused with %d (403 expected)", s), ev...)
	case s == 0:
		return fail("no answer: "+rep.TransportError, ev...)
	}
	return fail(fmt.Sprintf("not refused: %s", rep.String()), ev...)
}

const evilHost = "evil.example.com"

func rebindHost(ctx context.Context, r *runner, ctl Evidence) Result {
	host := evilHost
	if u, err := url.Parse(r.cfg.URL); err == nil && u.Port() != "" {
		host += ":" + u.Port()
	}
	p := r.listProbe("tools/list with Host " + host)
	p.host = host
	return expectForbidden(r.send(ctx, p), ctl)
}

func rebindOrigin(ctx context.Context, r *runner, ctl Evidence) Result {
	p := r.listProbe("tools/list with Origin http://" + evilHost)
	p.header.Set("Origin", "http://"+evilHost)
	return expectForbidden(r.send(ctx, p), ctl)
}

func readable(ctx context.Context, r *runner) Result {
	f, nr := r.first(ctx, false)
	if nr != nil {
		return *nr
	}
	needles := map[string]string{r.cfg.Tool: "the tool name"}
	for _, s := range stringLeaves(r.cfg.Args) {
		if len(s) >= 4 {
			needles[s] = "an argument value"
		}
	}
	for _, k := range f.InputKeys {
		if len(k) >= 4 {
			needles[k] = "an asked key"
		}
	}
	views := decodings(f.state)
	views["the raw string"] = []byte(f.state)
	var found []string
	viewNames := make([]string, 0, len(views))
	for v := range views {
		viewNames = append(viewNames, v)
	}
	sort.Strings(viewNames)
	for _, v := range viewNames {
		for n, what := range needles {
			if bytes.Contains(views[v], []byte(n)) {
				found = append(found, fmt.Sprintf("%s %q (%s)", what, n, v))
			}
		}
	}
	sort.Strings(found)
	if len(found) == 0 {
		where := "the string or its base64 decodings"
		if len(views) == 1 {
			where = "the string, which does not decode as base64"
		}
		return info(fmt.Sprintf("opaque: no tool name, argument value or asked key appears in %s (%d characters, %s alphabet)",
			where, len(f.state), detectAlphabet(f.state)), f.Evidence)
	}
	return info("readable: the state shows "+strings.Join(found, "; ")+"; keep secrets out of it or encrypt it", f.Evidence)
}

// stringLeaves returns every string value in a JSON document.
func stringLeaves(raw json.RawMessage) []string {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return nil
	}
	var out []string
	var walk func(any)
	walk = func(v any) {
		switch t := v.(type) {
		case string:
			out = append(out, t)
		case []any:
			for _, e := range t {
				walk(e)
			}
		case map[string]any:
			for _, e := range t {
				walk(e)
			}
		}
	}
	walk(v)
	return out
}
