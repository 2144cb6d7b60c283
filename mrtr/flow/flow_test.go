package flow_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mrtrkit/mrtrkit/discover"
	"github.com/mrtrkit/mrtrkit/internal/testkit"
	"github.com/mrtrkit/mrtrkit/internal/wire"
	"github.com/mrtrkit/mrtrkit/mrtr"
	"github.com/mrtrkit/mrtrkit/mrtr/flow"
	"github.com/mrtrkit/mrtrkit/mrtr/model"
	"github.com/mrtrkit/mrtrkit/mrtr/mrtrtest"
	"github.com/mrtrkit/mrtrkit/mrtr/typed"
)

type Contact struct {
	Name  string  `json:"name" jsonschema:"your name" validate:"min=2"`
	Age   int     `json:"age" jsonschema:"your age in years" validate:"gte=0,lte=150"`
	Email *string `json:"email,omitempty" validate:"omitempty,email"`
}

type Signup struct {
	Contact Contact  `json:"contact"`
	Roots   []string `json:"roots,omitempty"`
	Action  string   `json:"action,omitempty"`
}

type NoArgs struct{}

type Reply struct {
	Text string `json:"text"`
}

func TestFormStep(t *testing.T) {
	f, err := flow.New(
		[]flow.Step[NoArgs, Signup]{
			flow.Form("contact", "Who are you?", func(_ context.Context, c *flow.Call[NoArgs, Signup], a flow.FormAnswer[Contact]) error {
				c.State.Action = a.Action
				if !a.Accepted() {
					return nil
				}
				c.State.Contact = a.Value
				return nil
			}),
		},
		func(_ context.Context, c *flow.Call[NoArgs, Signup]) (Reply, error) {
			if c.State.Action != "accept" {
				return Reply{Text: "no contact: " + c.State.Action}, nil
			}
			return Reply{Text: c.State.Contact.Name}, nil
		})
	require.NoError(t, err)
	srv, _ := newServer(t, nil)
	require.NoError(t, typed.AddTool(srv, mrtr.Tool{Name: "signup"}, f))
	c := newClient(t, srv)

	r, e := c.tool("signup", nil, nil, "")
	require.Nil(t, e)
	require.Contains(t, r.InputRequests, "contact")
	assert.Equal(t, wire.MethodElicit, r.InputRequests["contact"].Method)
	assert.JSONEq(t, `{"mode":"form","message":"Who are you?","requestedSchema":{"type":"object","required":["name","age"],"properties":{
		"name":{"type":"string","description":"your name","minLength":2},
		"age":{"type":"integer","description":"your age in years","minimum":0,"maximum":150},
		"email":{"type":"string","format":"email"}}}}`, string(r.InputRequests["contact"].Params))
	state := r.RequestState

	accept := func(content map[string]any) map[string]any {
		return map[string]any{"contact": map[string]any{"action": "accept", "content": content}}
	}
	done, e := c.tool("signup", nil, accept(map[string]any{"name": "Ada", "age": 36, "extra": "dropped"}), state)
	require.Nil(t, e)
	assert.JSONEq(t, `{"text":"Ada"}`, string(done.StructuredContent))

	for content, want := range map[string]string{
		`{"name":"A","age":36}`:                     `name must be at least 2 characters long`,
		`{"name":"Ada","age":1.5}`:                  `age must be an integer`,
		`{"name":"Ada"}`:                            `age is required`,
		`{"name":"Ada","age":36,"email":"not-one"}`: `email must be a valid email`,
	} {
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(content), &m))
		_, e := c.tool("signup", nil, accept(m), state)
		require.NotNil(t, e, content)
		assert.Equal(t, mrtr.CodeInvalidParams, e.Code)
		assert.Contains(t, e.Message, `Invalid input response "contact"`)
		assert.Contains(t, e.Message, want)
	}

	done, e = c.tool("signup", nil, map[string]any{"contact": map[string]any{"action": "decline"}}, state)
	require.Nil(t, e)
	assert.JSONEq(t, `{"text":"no contact: decline"}`, string(done.StructuredContent))
}

// TestFormAnswerIsReadAsSent binds a form from the content as the client
// sent it. The server's door refuses content a decoder could read two ways
// or with a number no double holds; a lone case variant of a field, which
// Go's decoding would bind to that field although the form drops unknown
// members, is refused by the form's own check.
func TestFormAnswerIsReadAsSent(t *testing.T) {
	type Amount struct {
		Cents int64  `json:"cents" validate:"lte=100"`
		Note  string `json:"note,omitempty"`
	}
	var got []Amount
	f, err := flow.New(
		[]flow.Step[NoArgs, Reply]{
			flow.Form("amount", "How much?", func(_ context.Context, _ *flow.Call[NoArgs, Reply], a flow.FormAnswer[Amount]) error {
				got = append(got, a.Value)
				return nil
			}),
		},
		func(context.Context, *flow.Call[NoArgs, Reply]) (Reply, error) { return Reply{Text: "ok"}, nil })
	require.NoError(t, err)
	srv, _ := newServer(t, nil)
	require.NoError(t, typed.AddTool(srv, mrtr.Tool{Name: "pay"}, f))
	c := newClient(t, srv)
	r, e := c.tool("pay", nil, nil, "")
	require.Nil(t, e)
	st := r.RequestState

	answer := func(content string) map[string]any {
		return map[string]any{"amount": map[string]any{"action": "accept", "content": json.RawMessage(content)}}
	}
	for content, want := range map[string]string{
		// The server's door, for every form answer.
		`{"cents":5,"CENTS":100000}`:        "Invalid input response amount: content.CENTS repeats a member name",
		`{"cents":5,"note":"a","NOTE":"b"}`: "Invalid input response amount: content.NOTE repeats a member name",
		`{"cents":9007199254740993}`:        "Invalid input response amount: content.cents is a number with no exact IEEE 754 double form",
		// The form's own check against F.
		`{"CENTS":100000}`:       `Invalid input response "amount": CENTS is not allowed: names are case-sensitive (did you mean cents?)`,
		`{"cents":5,"Note":"x"}`: `Invalid input response "amount": Note is not allowed: names are case-sensitive (did you mean note?)`,
		`{"cents":1000}`:         `Invalid input response "amount": cents must be at most 100`,
	} {
		_, e := c.tool("pay", nil, answer(content), st)
		require.NotNil(t, e, content)
		assert.Equal(t, mrtr.CodeInvalidParams, e.Code, content)
		assert.Contains(t, e.Message, want, content)
	}
	assert.Empty(t, got, "no refused answer reached the step")

	done, e := c.tool("pay", nil, answer(`{"cents":100,"note":"tip","other":true}`), st)
	require.Nil(t, e)
	assert.JSONEq(t, `{"text":"ok"}`, string(done.StructuredContent))
	assert.Equal(t, []Amount{{Cents: 100, Note: "tip"}}, got, "unknown members are dropped")
}

// TestAllAsksTogether asks two questions in one round and keeps a partial
// answer while asking again for the missing one.
func TestAllAsksTogether(t *testing.T) {
	var contactUses atomic.Int32
	f, err := flow.New(
		[]flow.Step[NoArgs, Signup]{
			flow.All(
				flow.Form("contact", "Who are you?", func(_ context.Context, c *flow.Call[NoArgs, Signup], a flow.FormAnswer[Contact]) error {
					contactUses.Add(1)
					c.State.Contact = a.Value
					return nil
				}),
				flow.Roots("roots", func(_ context.Context, c *flow.Call[NoArgs, Signup], r *mrtr.RootsResult) error {
					for _, root := range r.Roots {
						c.State.Roots = append(c.State.Roots, root.URI)
					}
					return nil
				}),
			),
		},
		func(_ context.Context, c *flow.Call[NoArgs, Signup]) (Signup, error) { return c.State, nil })
	require.NoError(t, err)
	srv, _ := newServer(t, nil)
	require.NoError(t, typed.AddTool(srv, mrtr.Tool{Name: "signup"}, f))
	c := newClient(t, srv)

	r, e := c.tool("signup", nil, nil, "")
	require.Nil(t, e)
	assert.Equal(t, []string{"contact", "roots"}, r.asked())

	r, e = c.tool("signup", nil, map[string]any{"contact": map[string]any{"action": "accept", "content": map[string]any{"name": "Ada", "age": 36}}}, r.RequestState)
	require.Nil(t, e)
	assert.Equal(t, []string{"roots"}, r.asked(), "only the missing answer is asked for")

	r, e = c.tool("signup", nil, map[string]any{
		"roots":   map[string]any{"roots": []any{map[string]any{"uri": "file:///src"}}},
		"contact": map[string]any{"action": "accept", "content": map[string]any{"name": "Eve", "age": 1}},
	}, r.RequestState)
	require.Nil(t, e)
	assert.Equal(t, "complete", r.ResultType)
	assert.JSONEq(t, `{"contact":{"name":"Ada","age":36},"roots":["file:///src"]}`, string(r.StructuredContent),
		"the contact answered earlier stands; a second answer for it is not asked for and not read")
	assert.Equal(t, int32(1), contactUses.Load())
}

// TestMixedDirectAndClient answers the model inline and asks the user in
// the same round.
func TestMixedDirectAndClient(t *testing.T) {
	m := &fakeModel{answers: []string{"a haiku"}}
	f, err := flow.New(
		[]flow.Step[NoArgs, Reply]{
			flow.All(
				flow.Sample("poem", func(context.Context, *flow.Call[NoArgs, Reply]) (*mrtr.SamplingRequest, error) {
					return &mrtr.SamplingRequest{Messages: []mrtr.SamplingMessage{mrtr.UserText("A haiku")}, MaxTokens: 50}, nil
				}, func(_ context.Context, c *flow.Call[NoArgs, Reply], r *mrtr.SamplingResult) error {
					c.State.Text = r.Text()
					return nil
				}),
				flow.Elicit("ok", func(context.Context, *flow.Call[NoArgs, Reply]) (*mrtr.ElicitRequest, error) {
					return &mrtr.ElicitRequest{Mode: "url", Message: "Open to consent", URL: "https://example.com/consent"}, nil
				}, func(_ context.Context, c *flow.Call[NoArgs, Reply], r *mrtr.ElicitResult) error {
					if !r.Accepted() {
						return mrtr.InvalidParamsError("consent refused")
					}
					return nil
				}),
			),
		},
		func(_ context.Context, c *flow.Call[NoArgs, Reply]) (Reply, error) { return c.State, nil },
		flow.WithModel(m))
	require.NoError(t, err)
	srv, _ := newServer(t, nil)
	require.NoError(t, typed.AddTool(srv, mrtr.Tool{Name: "poem"}, f))
	var modes []string
	c := mrtrtest.NewClient(srv, mrtrtest.OnElicitation(func(_ context.Context, r *mrtr.ElicitRequest) (*mrtr.ElicitResult, error) {
		modes = append(modes, r.Mode)
		return &mrtr.ElicitResult{Action: "accept"}, nil
	}))

	r, err := c.CallTool(context.Background(), "poem", nil)
	require.NoError(t, err)
	assert.Equal(t, [][]string{{"ok"}}, r.Asked, "the model answered inline; only the user is asked")
	assert.Equal(t, []string{"url"}, modes)
	assert.JSONEq(t, `{"text":"a haiku"}`, string(r.StructuredContent))
	assert.Len(t, m.asked, 1, "the model is not asked again on the retry")
}

func TestAskAgain(t *testing.T) {
	f, err := flow.New(
		[]flow.Step[NoArgs, Reply]{
			flow.Sample("number", func(_ context.Context, c *flow.Call[NoArgs, Reply]) (*mrtr.SamplingRequest, error) {
				p := "Pick a number."
				if c.State.Text != "" {
					p = "Not a number: " + c.State.Text + ". Pick a number."
				}
				return &mrtr.SamplingRequest{Messages: []mrtr.SamplingMessage{mrtr.UserText(p)}, MaxTokens: 5}, nil
			}, func(_ context.Context, c *flow.Call[NoArgs, Reply], r *mrtr.SamplingResult) error {
				c.State.Text = r.Text()
				var n int
				if json.Unmarshal([]byte(r.Text()), &n) != nil {
					return flow.AskAgain
				}
				return nil
			}),
		},
		func(_ context.Context, c *flow.Call[NoArgs, Reply]) (Reply, error) { return c.State, nil },
		flow.WithBudget(3))
	require.NoError(t, err)
	srv, _ := newServer(t, nil)
	require.NoError(t, typed.AddTool(srv, mrtr.Tool{Name: "num"}, f))
	client := &fakeModel{answers: []string{"seven", "7"}}
	r, err := mrtrtest.NewClient(srv, mrtrtest.OnSampling(client.CreateMessage)).CallTool(context.Background(), "num", nil)
	require.NoError(t, err)
	assert.Equal(t, 2, r.Rounds)
	require.Len(t, client.asked, 2)
	assert.Equal(t, "Pick a number.", client.asked[0].Messages[0].Content[0].Text)
	assert.Equal(t, "Not a number: seven. Pick a number.", client.asked[1].Messages[0].Content[0].Text)
	assert.JSONEq(t, `{"text":"7"}`, string(r.StructuredContent))

	// A client that never gives a number: the third asking is the last the
	// budget allows.
	stubborn := &fakeModel{answers: []string{"one", "two", "three", "four"}}
	r, err = mrtrtest.NewClient(srv, mrtrtest.OnSampling(stubborn.CreateMessage)).CallTool(context.Background(), "num", nil)
	require.NoError(t, err)
	assert.True(t, r.IsError)
	assert.Equal(t, "this call needed to ask more than 3 times and was stopped (flow: question budget exhausted)", r.Text())
	assert.Equal(t, 3, r.Rounds)
	assert.Len(t, stubborn.asked, 3)

	// In direct mode the same loop runs inline, within the budget.
	g, err := flow.New(
		[]flow.Step[NoArgs, Reply]{flow.Sample("number",
			func(context.Context, *flow.Call[NoArgs, Reply]) (*mrtr.SamplingRequest, error) {
				return &mrtr.SamplingRequest{Messages: []mrtr.SamplingMessage{mrtr.UserText("Pick")}, MaxTokens: 5}, nil
			},
			func(context.Context, *flow.Call[NoArgs, Reply], *mrtr.SamplingResult) error { return flow.AskAgain })},
		func(_ context.Context, c *flow.Call[NoArgs, Reply]) (Reply, error) { return c.State, nil },
		flow.WithBudget(3), flow.WithModel(&fakeModel{answers: []string{"a", "b", "c", "d"}}))
	require.NoError(t, err)
	require.NoError(t, typed.AddTool(srv, mrtr.Tool{Name: "loop"}, g))
	lr, e := newClient(t, srv).tool("loop", nil, nil, "")
	require.Nil(t, e)
	assert.Equal(t, "complete", lr.ResultType, "inline questions spend the budget within one round")
	assert.True(t, lr.IsError)
	assert.Contains(t, lr.text(), "needed to ask more than 3 times")
}

// TestBudget pins the budget's default and its error: the flow's own
// Handle wraps ErrBudget, which a tool call renders as an isError result.
func TestBudget(t *testing.T) {
	use := func(context.Context, *flow.Call[NoArgs, Reply], *mrtr.SamplingResult) error { return flow.AskAgain }
	build := func(context.Context, *flow.Call[NoArgs, Reply]) (*mrtr.SamplingRequest, error) {
		return &mrtr.SamplingRequest{Messages: []mrtr.SamplingMessage{mrtr.UserText("Pick")}, MaxTokens: 5}, nil
	}
	finish := func(_ context.Context, c *flow.Call[NoArgs, Reply]) (Reply, error) { return c.State, nil }

	f, err := flow.New([]flow.Step[NoArgs, Reply]{flow.Sample("n", build, use)}, finish)
	require.NoError(t, err)
	assert.Equal(t, 5 /* the documented default budget */, f.Budget())

	m := &fakeModel{answers: []string{"a", "b", "c", "d", "e", "f", "g"}}
	g, err := flow.New([]flow.Step[NoArgs, Reply]{flow.Sample("n", build, use)}, finish, flow.WithBudget(2), flow.WithModel(m))
	require.NoError(t, err)
	assert.Equal(t, 2, g.Budget())
	_, err = g.Handle(context.Background(), &mrtr.Request{Method: wire.MethodToolsCall, Name: "n"}, NoArgs{})
	require.ErrorIs(t, err, flow.ErrBudget)
	var te *typed.ToolError
	require.ErrorAs(t, err, &te, "a tool call ends with an isError result")
	assert.Equal(t, "this call needed to ask more than 2 times and was stopped (flow: question budget exhausted)", te.Message)
	assert.Len(t, m.asked, 2, "the model is asked as often as the budget allows, no more")
}

func TestSkippedStepsCostNothing(t *testing.T) {
	f, err := flow.New(
		[]flow.Step[NoArgs, Reply]{
			flow.Elicit("never", func(context.Context, *flow.Call[NoArgs, Reply]) (*mrtr.ElicitRequest, error) { return nil, nil },
				func(context.Context, *flow.Call[NoArgs, Reply], *mrtr.ElicitResult) error { panic("not asked") }),
			flow.When(func(*flow.Call[NoArgs, Reply]) bool { return false }, flow.Roots("roots",
				func(context.Context, *flow.Call[NoArgs, Reply], *mrtr.RootsResult) error { panic("not asked") })),
		},
		func(context.Context, *flow.Call[NoArgs, Reply]) (Reply, error) { return Reply{Text: "done"}, nil },
		flow.WithBudget(1))
	require.NoError(t, err)
	srv, _ := newServer(t, nil)
	require.NoError(t, typed.AddTool(srv, mrtr.Tool{Name: "skip"}, f))
	r, e := newClient(t, srv).tool("skip", nil, nil, "")
	require.Nil(t, e)
	assert.JSONEq(t, `{"text":"done"}`, string(r.StructuredContent))
}

type TopicArgs struct {
	Topic string `json:"topic" validate:"required"`
}

// TestFlowAsPromptHandler serves prompts/get with a flow that asks the
// client's model first.
func TestFlowAsPromptHandler(t *testing.T) {
	f, err := flow.New(
		[]flow.Step[TopicArgs, Reply]{
			flow.Sample("angle", func(_ context.Context, c *flow.Call[TopicArgs, Reply]) (*mrtr.SamplingRequest, error) {
				return &mrtr.SamplingRequest{Messages: []mrtr.SamplingMessage{mrtr.UserText("An angle on " + c.In.Topic)}, MaxTokens: 20}, nil
			}, func(_ context.Context, c *flow.Call[TopicArgs, Reply], r *mrtr.SamplingResult) error {
				c.State.Text = r.Text()
				return nil
			}),
		},
		func(_ context.Context, c *flow.Call[TopicArgs, Reply]) (*mrtr.GetPromptResult, error) {
			return &mrtr.GetPromptResult{Messages: []mrtr.PromptMessage{{Role: mrtr.RoleUser, Content: mrtr.Text("Write about " + c.In.Topic + ", " + c.State.Text)}}}, nil
		})
	require.NoError(t, err)
	h, err := f.Handler()
	require.NoError(t, err)
	srv, _ := newServer(t, nil)
	require.NoError(t, srv.AddPrompt(mrtr.Prompt{Name: "write"}, h))
	c := newClient(t, srv)

	raw, e := c.call(wire.MethodPromptsGet, map[string]any{"name": "write", "arguments": map[string]string{"topic": "tides"}})
	require.Nil(t, e)
	var ir toolResult
	require.NoError(t, json.Unmarshal(raw, &ir))
	assert.Equal(t, []string{"angle"}, ir.asked())

	raw, e = c.call(wire.MethodPromptsGet, map[string]any{"name": "write", "arguments": map[string]string{"topic": "tides"},
		"inputResponses": map[string]any{"angle": modelAnswer("from the moon's side")}, "requestState": ir.RequestState})
	require.Nil(t, e)
	assert.Contains(t, string(raw), "Write about tides, from the moon's side")

	m := &fakeModel{answers: []string{"from the shore"}}
	pr, err := mrtrtest.NewClient(srv, mrtrtest.OnSampling(m.CreateMessage)).GetPrompt(context.Background(), "write", map[string]string{"topic": "tides"})
	require.NoError(t, err)
	assert.Equal(t, 1, pr.Rounds)
	require.Len(t, pr.Messages, 1)
	assert.Equal(t, "Write about tides, from the shore", pr.Messages[0].Content.Text)

	_, e = c.call(wire.MethodPromptsGet, map[string]any{"name": "write"})
	require.NotNil(t, e)
	assert.Equal(t, mrtr.CodeInvalidParams, e.Code)
	assert.Contains(t, e.Message, "topic is required")
}

func TestErrorsFromSteps(t *testing.T) {
	boom := errors.New("disk on fire")
	mk := func(err error) *flow.Flow[NoArgs, Reply, Reply] {
		return flow.Must(flow.New(
			[]flow.Step[NoArgs, Reply]{flow.Sample("k", func(context.Context, *flow.Call[NoArgs, Reply]) (*mrtr.SamplingRequest, error) {
				return nil, err
			}, func(context.Context, *flow.Call[NoArgs, Reply], *mrtr.SamplingResult) error { return nil })},
			func(context.Context, *flow.Call[NoArgs, Reply]) (Reply, error) { return Reply{}, nil }))
	}
	srv, logs := newServer(t, nil)
	require.NoError(t, typed.AddTool(srv, mrtr.Tool{Name: "plain"}, mk(boom)))
	require.NoError(t, typed.AddTool(srv, mrtr.Tool{Name: "rpc"}, mk(mrtr.InvalidParamsError("no"))))
	c := newClient(t, srv)
	_, e := c.tool("plain", nil, nil, "")
	require.NotNil(t, e)
	assert.Equal(t, mrtr.CodeInternalError, e.Code)
	assert.Contains(t, logs.String(), "disk on fire")
	_, e = c.tool("rpc", nil, nil, "")
	require.NotNil(t, e)
	assert.Equal(t, mrtr.CodeInvalidParams, e.Code)
}

func TestNewRefuses(t *testing.T) {
	type A = NoArgs
	type S = Reply
	build := func(context.Context, *flow.Call[A, S]) (*mrtr.SamplingRequest, error) { return nil, nil }
	use := func(context.Context, *flow.Call[A, S], *mrtr.SamplingResult) error { return nil }
	finish := func(context.Context, *flow.Call[A, S]) (Reply, error) { return Reply{}, nil }

	_, err := flow.New([]flow.Step[A, S]{flow.All(flow.Sample("k", build, use), flow.Sample("k", build, use))}, finish)
	assert.ErrorContains(t, err, `key "k" is asked twice`)
	_, err = flow.New([]flow.Step[A, S]{flow.Sample("k", nil, use)}, finish)
	assert.ErrorContains(t, err, "build and use are required")
	_, err = flow.New([]flow.Step[A, S]{flow.Sample("", build, use)}, finish)
	assert.ErrorContains(t, err, "empty key")
	_, err = flow.New[A, S, Reply]([]flow.Step[A, S]{flow.Sample("k", build, use)}, nil)
	assert.ErrorContains(t, err, "finish is required")
	_, err = flow.New([]flow.Step[A, S]{flow.Sample("k", build, use)}, finish, flow.WithBudget(0))
	assert.ErrorContains(t, err, "the budget must be at least 1")
	_, err = flow.New([]flow.Step[A, S]{flow.Sample("k", build, use)}, finish, flow.WithModel(nil))
	assert.ErrorContains(t, err, "nil model")
	_, err = flow.New([]flow.Step[A, S]{{}}, finish)
	assert.ErrorContains(t, err, "no questions")

	type nested struct {
		Inner struct {
			X string `json:"x"`
		} `json:"inner"`
	}
	_, err = flow.New([]flow.Step[A, S]{flow.Form("f", "m", func(context.Context, *flow.Call[A, S], flow.FormAnswer[nested]) error { return nil })}, finish)
	assert.ErrorContains(t, err, `field "inner": must be a string, number, integer, boolean or a list of choices`)

	assert.Panics(t, func() { flow.Must(flow.New[A, S, Reply](nil, nil)) })
}

// TestZeroStepFlow is a one-shot tool written as a flow.
func TestZeroStepFlow(t *testing.T) {
	f, err := flow.New(nil, func(context.Context, *flow.Call[NoArgs, Reply]) (Reply, error) { return Reply{Text: "now"}, nil },
		flow.WithModel(model.Client()))
	require.NoError(t, err)
	srv, _ := newServer(t, nil)
	require.NoError(t, typed.AddTool(srv, mrtr.Tool{Name: "now"}, f))
	r, e := newClient(t, srv).tool("now", nil, nil, "")
	require.Nil(t, e)
	assert.JSONEq(t, `{"text":"now"}`, string(r.StructuredContent))
}

// TestSameKeyInConsecutiveSteps asks under one key twice: the answer to
// the first asking must not also answer the second.
func TestSameKeyInConsecutiveSteps(t *testing.T) {
	confirm := func() flow.Step[NoArgs, Reply] {
		return flow.Elicit("confirm", func(context.Context, *flow.Call[NoArgs, Reply]) (*mrtr.ElicitRequest, error) {
			return &mrtr.ElicitRequest{Mode: "url", Message: "Confirm", URL: "https://example.com/confirm"}, nil
		}, func(_ context.Context, c *flow.Call[NoArgs, Reply], r *mrtr.ElicitResult) error {
			c.State.Text += r.Action + ";"
			return nil
		})
	}
	f, err := flow.New([]flow.Step[NoArgs, Reply]{confirm(), confirm()},
		func(_ context.Context, c *flow.Call[NoArgs, Reply]) (Reply, error) { return c.State, nil })
	require.NoError(t, err)
	srv, _ := newServer(t, nil)
	require.NoError(t, typed.AddTool(srv, mrtr.Tool{Name: "twice"}, f))
	actions := []string{"accept", "decline"}
	c := mrtrtest.NewClient(srv, mrtrtest.OnElicitation(func(context.Context, *mrtr.ElicitRequest) (*mrtr.ElicitResult, error) {
		a := actions[0]
		actions = actions[1:]
		return &mrtr.ElicitResult{Action: a}, nil
	}))

	r, err := c.CallTool(context.Background(), "twice", nil)
	require.NoError(t, err)
	assert.Equal(t, [][]string{{"confirm"}, {"confirm"}}, r.Asked, "the second step asks for itself")
	assert.JSONEq(t, `{"text":"accept;decline;"}`, string(r.StructuredContent))
}

// A flow whose budget exceeds the server's round limit would end calls
// with an internal error; it is refused when it is registered.
func TestAddToolRefusesBudgetAboveServerLimit(t *testing.T) {
	f, err := flow.New(
		[]flow.Step[NoArgs, Signup]{
			flow.Form("contact", "Who are you?", func(context.Context, *flow.Call[NoArgs, Signup], flow.FormAnswer[Contact]) error { return nil }),
		},
		func(context.Context, *flow.Call[NoArgs, Signup]) (Reply, error) { return Reply{}, nil },
		flow.WithBudget(4))
	require.NoError(t, err)
	require.Equal(t, 4, f.Budget())
	srv, err := mrtr.NewServer(discover.Description{Server: discover.Implementation{Name: "t", Version: "1"}},
		mrtr.WithCodec(testkit.FreshCodec(t)), mrtr.WithMaxRounds(3))
	require.NoError(t, err)
	err = typed.AddTool(srv, mrtr.Tool{Name: "signup"}, f)
	require.Error(t, err)
	assert.Equal(t, `typed: tool "signup": the handler's round budget (4) exceeds the server's round limit (3)`, err.Error())

	srv, err = mrtr.NewServer(discover.Description{Server: discover.Implementation{Name: "t", Version: "1"}},
		mrtr.WithCodec(testkit.FreshCodec(t)), mrtr.WithMaxRounds(4))
	require.NoError(t, err)
	require.NoError(t, typed.AddTool(srv, mrtr.Tool{Name: "signup"}, f))
}
