package testkit

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/mrtrkit/mrtrkit/mrtr"
)

// ThreeRounds is a tool that asks three rounds, one of each kind: a form
// (its "name" answer goes into the state), a model completion (its text
// is appended to the state) and the roots. It completes with the state,
// "|", the first root's URI and suffix, such as "Ada|drafted|file:///home
// on replica-b". A missing answer is an isError result naming it.
func ThreeRounds(suffix string) mrtr.Handler {
	return mrtr.HandlerFunc(func(_ context.Context, req *mrtr.Request) (mrtr.Result, error) {
		switch req.Round {
		case 0:
			return mrtr.Ask("name", &mrtr.ElicitRequest{Message: "Name?", RequestedSchema: &mrtr.ElicitSchema{Type: "object",
				Properties: map[string]json.RawMessage{"name": json.RawMessage(`{"type":"string"}`)}}}), nil
		case 1:
			e, ok := req.Responses.Elicitation("name")
			if !ok || !e.Accepted() {
				return mrtr.ErrorResult("no name"), nil
			}
			ir := mrtr.Ask("draft", &mrtr.SamplingRequest{Messages: []mrtr.SamplingMessage{mrtr.UserText("write")}, MaxTokens: 10})
			ir.State = fmt.Appendf(nil, "%v", e.Content["name"])
			return ir, nil
		case 2:
			d, ok := req.Responses.Sampling("draft")
			if !ok {
				return mrtr.ErrorResult("no draft"), nil
			}
			ir := mrtr.Ask("where", &mrtr.RootsRequest{})
			ir.State = append(append(req.State, '|'), d.Text()...)
			return ir, nil
		}
		w, ok := req.Responses.Roots("where")
		if !ok || len(w.Roots) == 0 {
			return mrtr.ErrorResult("no roots"), nil
		}
		return mrtr.TextResult(string(req.State) + "|" + w.Roots[0].URI + suffix), nil
	})
}
