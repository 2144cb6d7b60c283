package mrtr_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/mrtrkit/mrtrkit/mrtr"
	"github.com/stretchr/testify/require"
)

// FuzzTaskMethods sends arbitrary params to tasks/get, tasks/update,
// tasks/cancel and to subscriptions/listen's taskIds, on a server holding
// one task waiting for input: nothing panics, every answer is a result or
// an error, and another principal never reaches the task.
func FuzzTaskMethods(f *testing.F) {
	fx := newFixture(f, mrtr.WithLogger(discardLogger), mrtr.WithTasks())
	fx.addTool("confirm", func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
		a, err := mrtr.Elicit(ctx, req, "ok", nameForm("Proceed?"))
		if err != nil {
			return nil, err
		}
		return mrtr.TextResult(string(a.Action)), nil
	}, mrtr.TaskSupport(mrtr.TaskOptional))
	caps := obj{"elicitation": obj{}, "extensions": obj{mrtr.TasksExtension: obj{}}}
	msg, _, perr := mrtr.ParseMessage([]byte(request("tools/call", obj{"_meta": meta(caps), "name": "confirm"})))
	require.Nil(f, perr)
	resp := fx.srv.Handle(context.Background(), &mrtr.Inbound{Message: msg, Principal: "alice"})
	require.Nil(f, resp.Error, "%+v", resp)
	var created struct {
		TaskID string `json:"taskId"`
	}
	require.NoError(f, json.Unmarshal(resp.Result, &created), "%+v", resp)
	fx.srv.WaitTasks()
	metaJSON, _ := json.Marshal(meta(caps))
	for _, seed := range []string{
		`{"taskId":"` + created.TaskID + `"}`,
		`{"taskId":"` + created.TaskID + `","inputResponses":{"r1/ok":{"action":"accept","content":{"name":"x"}}}}`,
		`{"taskId":"` + created.TaskID + `","inputResponses":{"r1/ok":{"action":1}}}`,
		`{"taskId":7}`, `{"taskId":null}`, `{}`, `[]`, `{"taskId":"x","inputResponses":[]}`,
		`{"notifications":{"taskIds":["` + created.TaskID + `",1]}}`,
	} {
		for m := range byte(4) {
			f.Add(m, []byte(seed), false)
		}
	}
	methods := []string{mrtr.MethodTasksGet, mrtr.MethodTasksUpdate, mrtr.MethodTasksCancel, "subscriptions/listen"}
	f.Fuzz(func(t *testing.T, m byte, params []byte, other bool) {
		var p map[string]json.RawMessage
		if json.Unmarshal(params, &p) != nil || p == nil {
			return
		}
		p["_meta"] = metaJSON
		method := methods[int(m)%len(methods)]
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": p})
		msg, _, perr := mrtr.ParseMessage(b)
		if perr != nil {
			return
		}
		principal := "alice"
		if other {
			principal = "bob"
		}
		ctx, cancel := context.WithCancel(context.Background())
		cancel() // a listen stream ends at once
		resp := fx.srv.Handle(ctx, &mrtr.Inbound{Message: msg, Principal: principal, Emit: func([]byte) error { return nil }})
		require.NotNil(t, resp, "no response")
		if other && method != "subscriptions/listen" {
			require.NotNil(t, resp.Error, "another principal reached the task: %s %s", method, params)
		}
	})
}
