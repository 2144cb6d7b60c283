package suite

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
)

// The answers scenarios: inputResponses that answer what was not asked.

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
