package suite

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
)

// The baseline scenario: the genuine round trip that every scenario
// altering a requestState rests on.

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
