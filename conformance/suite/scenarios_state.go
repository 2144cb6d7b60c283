package suite

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"
)

// The requestState scenarios: tampered, forged and oversized states, and
// what a state shows in clear.

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
