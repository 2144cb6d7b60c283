package flow_test

import (
	"context"
	"encoding/json"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mrtrkit/mrtrkit/internal/wire"
	"github.com/mrtrkit/mrtrkit/mrtr"
	"github.com/mrtrkit/mrtrkit/mrtr/flow"
	"github.com/mrtrkit/mrtrkit/mrtr/typed"
)

type TeamArgs struct {
	Team string `json:"team" validate:"required"`
}

type Invite struct {
	Count int `json:"count" mcp:"title=How many" validate:"gte=1,lte=5"`
}

type InviteState struct {
	Count  int    `json:"count,omitempty"`
	Action string `json:"action,omitempty"`
}

func inviteFlow(t *testing.T, opts ...flow.FormOption) *flow.Flow[TeamArgs, InviteState, Reply] {
	t.Helper()
	f, err := flow.New(
		[]flow.Step[TeamArgs, InviteState]{
			flow.FormFunc("invite",
				func(c *flow.Call[TeamArgs, InviteState]) string {
					return "How many people should join " + c.In.Team + "?"
				},
				func(_ context.Context, c *flow.Call[TeamArgs, InviteState], a flow.FormAnswer[Invite]) error {
					c.State.Action = a.Action
					switch {
					case a.Accepted():
						c.State.Count = a.Value.Count
					case a.Declined(), a.Cancelled():
						// Not asked again: the flow finishes without it.
					}
					return nil
				}, opts...),
		},
		func(_ context.Context, c *flow.Call[TeamArgs, InviteState]) (Reply, error) {
			switch c.State.Action {
			case "decline":
				return Reply{Text: "Nobody invited: you declined."}, nil
			case "cancel":
				return Reply{Text: "Invitation cancelled."}, nil
			}
			return Reply{Text: strconv.Itoa(c.State.Count) + " invited to " + c.In.Team}, nil
		},
		flow.WithBudget(3))
	require.NoError(t, err)
	return f
}

func elicitParams(t *testing.T, r toolResult, key string) mrtr.ElicitRequest {
	t.Helper()
	ir, ok := r.InputRequests[key]
	require.True(t, ok, "no input request %q in %v", key, r.InputRequests)
	require.Equal(t, wire.MethodElicit, ir.Method)
	var er mrtr.ElicitRequest
	require.NoError(t, json.Unmarshal(ir.Params, &er))
	return er
}

// The message is built from the call; a bad answer is asked again, naming
// the problem, when the step says so; the budget ends a call whose
// answers keep failing.
func TestFormFuncMessageAndReask(t *testing.T) {
	srv, _ := newServer(t, nil)
	require.NoError(t, typed.AddTool(srv, mrtr.Tool{Name: "invite"}, inviteFlow(t, flow.ReaskInvalid())))
	c := newClient(t, srv)
	args := map[string]any{"team": "blue"}
	accept := func(content string) map[string]any {
		return map[string]any{"invite": map[string]any{"action": "accept", "content": json.RawMessage(content)}}
	}

	r, e := c.tool("invite", args, nil, "")
	require.Nil(t, e)
	first := elicitParams(t, r, "invite")
	assert.Equal(t, "How many people should join blue?", first.Message)
	schema, _ := json.Marshal(first.RequestedSchema)
	assert.JSONEq(t, `{"type":"object","properties":{"count":{"type":"integer","title":"How many","minimum":1,"maximum":5}},"required":["count"]}`, string(schema))

	r, e = c.tool("invite", args, accept(`{"count":9}`), r.RequestState)
	require.Nil(t, e)
	again := elicitParams(t, r, "invite")
	assert.Equal(t, "How many people should join blue?\n\nYour last answer could not be used: How many must be at most 5.", again.Message)
	assert.Equal(t, first.RequestedSchema, again.RequestedSchema, "the same question")

	done, e := c.tool("invite", args, accept(`{"count":2}`), r.RequestState)
	require.Nil(t, e)
	assert.JSONEq(t, `{"text":"2 invited to blue"}`, string(done.StructuredContent))

	// From the second asking (its state replayed): a wrong type and a
	// missing field are each asked again, the third asking; a fourth
	// would exceed the budget of 3 and ends the call.
	second := r.RequestState
	r, e = c.tool("invite", args, accept(`{"count":"two"}`), second)
	require.Nil(t, e)
	assert.Contains(t, elicitParams(t, r, "invite").Message, "How many must be an integer.")
	r, e = c.tool("invite", args, accept(`{}`), second)
	require.Nil(t, e)
	assert.Contains(t, elicitParams(t, r, "invite").Message, "How many is required.")
	r, e = c.tool("invite", args, accept(`{"count":0}`), r.RequestState)
	require.Nil(t, e)
	assert.True(t, r.IsError)
	assert.Contains(t, r.text(), "needed to ask more than 3 times")
}

// Without ReaskInvalid a bad answer ends the call with -32602, naming the
// problem; it never reaches the step.
func TestFormRefusesBadAnswers(t *testing.T) {
	srv, _ := newServer(t, nil)
	require.NoError(t, typed.AddTool(srv, mrtr.Tool{Name: "invite"}, inviteFlow(t)))
	c := newClient(t, srv)
	args := map[string]any{"team": "blue"}
	r, e := c.tool("invite", args, nil, "")
	require.Nil(t, e)
	for content, want := range map[string]string{
		`{"count":9}`:       `Invalid input response "invite": count must be at most 5`,
		`{"count":true}`:    `Invalid input response "invite": count must be an integer`,
		`{}`:                `Invalid input response "invite": count is required`,
		`{"count":"3"}`:     `Invalid input response "invite": count must be an integer`,
		`{"count":2,"x":1}`: "",
	} {
		res, e := c.tool("invite", args, map[string]any{"invite": map[string]any{"action": "accept", "content": json.RawMessage(content)}}, r.RequestState)
		if want == "" {
			require.Nil(t, e, content)
			assert.JSONEq(t, `{"text":"2 invited to blue"}`, string(res.StructuredContent), "unknown members are dropped")
			continue
		}
		require.NotNil(t, e, content)
		assert.Equal(t, mrtr.CodeInvalidParams, e.Code)
		assert.Equal(t, want, e.Message, content)
	}
}

// Decline and cancel reach the step as themselves, and are not asked
// again.
func TestFormDeclineAndCancel(t *testing.T) {
	srv, _ := newServer(t, nil)
	require.NoError(t, typed.AddTool(srv, mrtr.Tool{Name: "invite"}, inviteFlow(t, flow.ReaskInvalid())))
	c := newClient(t, srv)
	args := map[string]any{"team": "blue"}
	r, e := c.tool("invite", args, nil, "")
	require.Nil(t, e)
	for action, want := range map[string]string{"decline": "Nobody invited: you declined.", "cancel": "Invitation cancelled."} {
		done, e := c.tool("invite", args, map[string]any{"invite": map[string]any{"action": action}}, r.RequestState)
		require.Nil(t, e)
		assert.Equal(t, "complete", done.ResultType, action)
		assert.JSONEq(t, `{"text":"`+want+`"}`, string(done.StructuredContent), action)
	}
}

func TestFormFuncRefusesAnEmptyMessage(t *testing.T) {
	f, err := flow.New(
		[]flow.Step[TeamArgs, InviteState]{
			flow.FormFunc("invite", func(*flow.Call[TeamArgs, InviteState]) string { return "" },
				func(context.Context, *flow.Call[TeamArgs, InviteState], flow.FormAnswer[Invite]) error { return nil }),
		},
		func(context.Context, *flow.Call[TeamArgs, InviteState]) (Reply, error) { return Reply{}, nil })
	require.NoError(t, err)
	srv, _ := newServer(t, nil)
	require.NoError(t, typed.AddTool(srv, mrtr.Tool{Name: "invite"}, f))
	_, e := newClient(t, srv).tool("invite", map[string]any{"team": "blue"}, nil, "")
	require.NotNil(t, e)
	assert.Equal(t, mrtr.CodeInternalError, e.Code, "a handler bug")

	_, err = flow.New([]flow.Step[TeamArgs, InviteState]{
		flow.FormFunc[TeamArgs, InviteState, Invite]("invite", nil, nil),
	}, func(context.Context, *flow.Call[TeamArgs, InviteState]) (Reply, error) { return Reply{}, nil })
	assert.ErrorContains(t, err, "a message and use are required")
}
