package typed_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mrtrkit/mrtrkit/internal/wire"
	"github.com/mrtrkit/mrtrkit/mrtr"
	"github.com/mrtrkit/mrtrkit/mrtr/mrtrtest"
	"github.com/mrtrkit/mrtrkit/mrtr/typed"
)

type Signup struct {
	Name   string   `json:"name" jsonschema:"how we should call you" mcp:"title=Your name" validate:"required,max=40"`
	Email  *string  `json:"email,omitempty" mcp:"title=Email" validate:"omitempty,email"`
	Age    int      `json:"age" validate:"gt=17,lte=130"`
	Plan   string   `json:"plan" mcp:"title=Plan,default=free,titles=free:Free plan|pro:Pro plan, billed monthly" validate:"oneof=free pro"`
	Topics []string `json:"topics,omitempty" mcp:"default=go" validate:"max=2,dive,oneof=go rust zig"`
	Agree  bool     `json:"agree" mcp:"title=I agree to the terms" validate:"required"`
	Born   string   `json:"born,omitempty" validate:"omitempty,datetime=2006-01-02"`
	Score  float64  `json:"score,omitempty" validate:"omitempty,gte=0,lte=1"`
}

func TestFormSchema(t *testing.T) {
	f, err := typed.NewForm[Signup]("k", "Please sign up")
	require.NoError(t, err)
	b, err := json.Marshal(f.Schema())
	require.NoError(t, err)
	assert.JSONEq(t, `{"type":"object","required":["name","age","plan","agree"],"properties":{
		"name":{"type":"string","title":"Your name","description":"how we should call you","minLength":1,"maxLength":40},
		"email":{"type":"string","title":"Email","format":"email"},
		"age":{"type":"integer","minimum":18,"maximum":130},
		"plan":{"type":"string","title":"Plan","oneOf":[{"const":"free","title":"Free plan"},{"const":"pro","title":"Pro plan, billed monthly"}],"default":"free"},
		"topics":{"type":"array","items":{"type":"string","enum":["go","rust","zig"]},"maxItems":2,"default":["go"]},
		"agree":{"type":"boolean","title":"I agree to the terms"},
		"born":{"type":"string","format":"date"},
		"score":{"type":"number","minimum":0,"maximum":1}}}`, string(b))
	assert.Equal(t, "Please sign up", f.Message())
	assert.Equal(t, &mrtr.ElicitRequest{Message: "Please sign up", RequestedSchema: f.Schema()}, f.Elicit())
	assert.Equal(t, &mrtr.ElicitRequest{Message: "Hello?", RequestedSchema: f.Schema()}, f.WithMessage("Hello?").Elicit())
	assert.Equal(t, f.Elicit(), f.InputRequired().Requests["k"])
}

func TestNewFormRefuses(t *testing.T) {
	_, err := typed.NewForm[Signup]("k", "")
	assert.ErrorContains(t, err, "a key and a message are required")
	_, err = typed.NewForm[string]("k", "m")
	assert.ErrorContains(t, err, "must be a struct")
	_, err = typed.NewForm[struct{}]("k", "m")
	assert.ErrorContains(t, err, "at least one field")
	_, err = typed.NewForm[struct {
		Inner struct {
			X string `json:"x"`
		} `json:"inner"`
	}]("k", "m")
	assert.ErrorContains(t, err, `field "inner": must be a string, number, integer, boolean or a list of choices`)
	_, err = typed.NewForm[struct {
		N []int `json:"n"`
	}]("k", "m")
	assert.ErrorContains(t, err, "a list must be a multi-select")
	_, err = typed.NewForm[struct {
		S []string `json:"s"`
	}]("k", "m")
	assert.ErrorContains(t, err, "a list must be a multi-select")
	_, err = typed.NewForm[struct {
		P string `json:"p" mcp:"default=gold" validate:"oneof=free pro"`
	}]("k", "m")
	assert.ErrorContains(t, err, `default "gold" breaks the field's rules`)
	_, err = typed.NewForm[struct {
		P string `json:"p" mcp:"colour=red"`
	}]("k", "m")
	assert.ErrorContains(t, err, "options are title=, default= and titles=")
	_, err = typed.NewForm[struct {
		P string `json:"p" validate:"nosuchrule"`
	}]("k", "m")
	assert.ErrorContains(t, err, "nosuchrule")
	assert.Panics(t, func() { typed.MustForm[string]("k", "m") })

	// A field validator skips is a plain property; a tag that stops at
	// omitempty midway keeps only the field's type.
	f, err := typed.NewForm[struct {
		A string   `json:"a" validate:"-"`
		B string   `json:"b,omitempty" validate:"max=3,omitempty,min=2"`
		C []string `json:"c" validate:"max=1,omitempty,dive,oneof=x"`
	}]("k", "m")
	assert.ErrorContains(t, err, `field "c": a list must be a multi-select`)
	assert.Nil(t, f)
	g, err := typed.NewForm[struct {
		A string `json:"a" validate:"-"`
		B string `json:"b,omitempty" validate:"max=3,omitempty,min=2"`
	}]("k", "m")
	require.NoError(t, err)
	b, _ := json.Marshal(g.Schema())
	assert.JSONEq(t, `{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"string"}},"required":["a"]}`, string(b))
}

type nameForm struct {
	Name  string `json:"name" mcp:"title=Your name" validate:"required,max=10"`
	Agree bool   `json:"agree" validate:"required"`
	Level string `json:"level,omitempty" validate:"omitempty,oneof=low high"`
}

// readOnce serves one tool whose handler records what Read returned for
// the answer the client gives, and returns it.
type readResult struct {
	value  nameForm
	action mrtr.Action
	err    error
	round  int
}

func readAnswer(t *testing.T, answer *mrtr.ElicitResult) (readResult, *mrtrtest.ToolResult, error) {
	t.Helper()
	f := typed.MustForm[nameForm]("who", "Who are you?")
	srv, _ := newServer(t)
	var got readResult
	require.NoError(t, srv.AddTool(mrtr.Tool{Name: "who"}, mrtr.HandlerFunc(func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
		v, act, err := f.Read(req)
		if act == mrtr.Unanswered {
			return f.InputRequired(), nil
		}
		got = readResult{v, act, err, req.Round}
		return mrtr.TextResult("done"), nil
	})))
	c := mrtrtest.NewClient(srv, mrtrtest.OnElicitation(func(context.Context, *mrtr.ElicitRequest) (*mrtr.ElicitResult, error) {
		return answer, nil
	}))
	res, err := c.CallTool(context.Background(), "who", nil)
	return got, res, err
}

func TestFormRead(t *testing.T) {
	got, _, err := readAnswer(t, &mrtr.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada", "agree": true, "level": "high"}})
	require.NoError(t, err)
	assert.Equal(t, readResult{value: nameForm{Name: "Ada", Agree: true, Level: "high"}, action: mrtr.Accepted, round: 1}, got)

	for _, action := range []mrtr.Action{mrtr.Declined, mrtr.Cancelled} {
		got, _, err := readAnswer(t, &mrtr.ElicitResult{Action: action})
		require.NoError(t, err)
		assert.Equal(t, readResult{action: action, round: 1}, got, "decline and cancel are told apart")
	}

	for content, want := range map[string][]string{
		`{"name":"Ada","agree":"yes"}`:               {"agree must be a boolean"},
		`{"agree":true}`:                             {"name is required"},
		`{"name":"Ada"}`:                             {"agree is required"},
		`{"name":"Ada","agree":false}`:               {`agree is required (rule "required")`},
		`{"name":"","agree":true}`:                   {"name must be at least 1 character long"},
		`{"name":"Adalovelace!","agree":true}`:       {"name must be at most 10 characters long"},
		`{"name":"Ada","agree":true,"level":"mid"}`:  {"level must be one of: low, high"},
		`{"name":7,"agree":true}`:                    {"name must be a string"},
		`{"NAME":"Ada","agree":true}`:                {"NAME is not allowed: names are case-sensitive (did you mean name?)", "name is required"},
		`{"name":"Adalovelace!","agree":false}`:      {"name must be at most 10 characters long", `agree is required (rule "required")`},
		`{"name":["Ada"],"agree":true,"level":"no"}`: {"name must be a string"},
	} {
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(content), &m))
		got, _, err := readAnswer(t, &mrtr.ElicitResult{Action: "accept", Content: m})
		require.NoError(t, err, content)
		assert.Equal(t, mrtr.Accepted, got.action, content)
		assert.Equal(t, nameForm{}, got.value, "%s: no partly filled value", content)
		var fe *typed.FormError
		require.ErrorAs(t, got.err, &fe, content)
		assert.Equal(t, "who", fe.Key)
		var msgs []string
		for _, p := range fe.Problems {
			msgs = append(msgs, p.Message)
		}
		assert.Equal(t, want, msgs, content)
	}
}

// A FormError returned by a handler refuses the call with -32602, naming
// every problem; Reask asks the same question again, saying what was
// wrong in words for the user.
func TestFormErrorRefusesOrReasks(t *testing.T) {
	f := typed.MustForm[nameForm]("who", "Who are you?")
	srv, _ := newServer(t)
	require.NoError(t, srv.AddTool(mrtr.Tool{Name: "strict"}, mrtr.HandlerFunc(func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
		v, act, err := f.Read(req)
		switch {
		case err != nil:
			return nil, err
		case act == mrtr.Accepted:
			return mrtr.TextResult("Hello, " + v.Name + "!"), nil
		}
		return f.InputRequired(), nil
	})))
	require.NoError(t, srv.AddTool(mrtr.Tool{Name: "patient"}, mrtr.HandlerFunc(func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
		v, act, err := f.Read(req)
		switch {
		case err != nil:
			return f.Reask(err), nil
		case act == mrtr.Accepted:
			return mrtr.TextResult("Hello, " + v.Name + "!"), nil
		}
		return f.InputRequired(), nil
	})))
	bad := map[string]any{"name": "Adalovelace!", "agree": false}
	good := map[string]any{"name": "Ada", "agree": true}

	c := mrtrtest.NewClient(srv, mrtrtest.OnElicitation(func(context.Context, *mrtr.ElicitRequest) (*mrtr.ElicitResult, error) {
		return &mrtr.ElicitResult{Action: "accept", Content: bad}, nil
	}))
	_, err := c.CallTool(context.Background(), "strict", nil)
	var me *mrtr.Error
	require.ErrorAs(t, err, &me)
	assert.Equal(t, mrtr.CodeInvalidParams, me.Code)
	assert.Equal(t, `Invalid input response "who": name must be at most 10 characters long; agree is required (rule "required")`, me.Message)
	data, _ := json.Marshal(me.Data)
	assert.JSONEq(t, `{"key":"who","problems":[
		{"field":"name","rule":"maxLength","message":"name must be at most 10 characters long"},
		{"field":"agree","rule":"required","message":"agree is required (rule \"required\")"}]}`, string(data))

	var asked []*mrtr.ElicitRequest
	answers := []map[string]any{bad, good}
	c = mrtrtest.NewClient(srv, mrtrtest.OnElicitation(func(_ context.Context, r *mrtr.ElicitRequest) (*mrtr.ElicitResult, error) {
		asked = append(asked, r)
		a := answers[0]
		answers = answers[1:]
		return &mrtr.ElicitResult{Action: "accept", Content: a}, nil
	}))
	res, err := c.CallTool(context.Background(), "patient", nil)
	require.NoError(t, err)
	assert.Equal(t, "Hello, Ada!", res.Text())
	require.Len(t, asked, 2)
	assert.Equal(t, "Who are you?", asked[0].Message)
	assert.Equal(t, "Who are you?\n\nYour last answer could not be used: Your name must be at most 10 characters long; agree is required.", asked[1].Message)
	assert.Equal(t, asked[0].RequestedSchema, asked[1].RequestedSchema)
}

func TestFormErrorUnwrapsToInvalidParams(t *testing.T) {
	fe := &typed.FormError{Key: "k", Problems: []typed.Problem{{Field: "a", Rule: "required", Message: "a is required"}}}
	var me *mrtr.Error
	require.True(t, errors.As(fe, &me))
	assert.Equal(t, mrtr.CodeInvalidParams, me.Code)
	assert.Equal(t, `invalid answer to form "k": a is required`, fe.Error())
	assert.Equal(t, "a is required.", fe.Hint())

	f := typed.MustForm[nameForm]("k", "Who?")
	reasked := func(ir *mrtr.InputRequired) string { return ir.Requests["k"].(*mrtr.ElicitRequest).Message }
	assert.Equal(t, "Who?", reasked(f.Reask(nil)))
	assert.Equal(t, "Again?\n\nYour last answer could not be used: boom", reasked(f.WithMessage("Again?").Reask(errors.New("boom"))))
	assert.Equal(t, "Who?\n\nYour last answer could not be used: a is required.", reasked(f.Reask(fe)))
}

// WithMessage asks the same form with a message of the call: the request
// on the wire carries the new message and the form's requestedSchema, the
// copy reads answers as the form does, and the form itself still asks
// with its own message.
func TestFormWithMessage(t *testing.T) {
	f := typed.MustForm[nameForm]("k", "Who are you?")
	srv, _ := newServer(t)
	require.NoError(t, srv.AddTool(mrtr.Tool{Name: "other"}, mrtr.HandlerFunc(func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
		g := f.WithMessage("other")
		v, act, err := g.Read(req)
		switch {
		case err != nil:
			return g.Reask(err), nil
		case act == mrtr.Accepted:
			return mrtr.TextResult("Hello, " + v.Name + "!"), nil
		}
		return g.InputRequired(), nil
	})))
	require.NoError(t, srv.AddTool(mrtr.Tool{Name: "own"}, mrtr.HandlerFunc(func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
		return f.InputRequired(), nil
	})))
	// asked returns the message and requestedSchema of the request the
	// tool's first round sends under "k", as the client reads them.
	asked := func(tool string) (string, string) {
		t.Helper()
		raw, e := call(t, srv, wire.MethodToolsCall, map[string]any{"name": tool, "arguments": map[string]any{}})
		require.Nil(t, e)
		var res struct {
			InputRequests map[string]struct {
				Method string `json:"method"`
				Params struct {
					Message         string          `json:"message"`
					RequestedSchema json.RawMessage `json:"requestedSchema"`
				} `json:"params"`
			} `json:"inputRequests"`
		}
		require.NoError(t, json.Unmarshal(raw, &res), string(raw))
		q, ok := res.InputRequests["k"]
		require.True(t, ok, string(raw))
		assert.Equal(t, wire.MethodElicit, q.Method)
		return q.Params.Message, string(q.Params.RequestedSchema)
	}
	ownSchema, err := json.Marshal(f.Schema())
	require.NoError(t, err)

	msg, schema := asked("other")
	assert.Equal(t, "other", msg)
	assert.JSONEq(t, string(ownSchema), schema)
	// Asked after the copy was made and used: the form is unchanged.
	msg, schema = asked("own")
	assert.Equal(t, "Who are you?", msg)
	assert.JSONEq(t, string(ownSchema), schema)
	assert.Equal(t, "Who are you?", f.Message())

	// The copy shares the compiled form, and "" keeps the form's message.
	g := f.WithMessage("other")
	assert.Equal(t, "other", g.Message())
	assert.Same(t, f.Schema(), g.Schema())
	assert.Same(t, f, f.WithMessage(""))
	assert.LessOrEqual(t, testing.AllocsPerRun(100, func() { g = f.WithMessage("again") }), 1.0)

	// The copy reads and re-asks as the form does, with its message.
	var messages []string
	answers := []map[string]any{{"name": "Adalovelace!", "agree": true}, {"name": "Ada", "agree": true}}
	c := mrtrtest.NewClient(srv, mrtrtest.OnElicitation(func(_ context.Context, r *mrtr.ElicitRequest) (*mrtr.ElicitResult, error) {
		messages = append(messages, r.Message)
		a := answers[0]
		answers = answers[1:]
		return &mrtr.ElicitResult{Action: "accept", Content: a}, nil
	}))
	res, err := c.CallTool(context.Background(), "other", nil)
	require.NoError(t, err)
	assert.Equal(t, "Hello, Ada!", res.Text())
	assert.Equal(t, []string{"other", "other\n\nYour last answer could not be used: Your name must be at most 10 characters long."}, messages)
}

// Form.Ask in straight-line code: an invalid answer is asked again with
// what was wrong, counted against WithMaxInvalid; past it the call is
// refused with -32602 naming each problem; decline is a value, and the
// form is not asked again.
func TestFormAskReasksInvalidAnswers(t *testing.T) {
	f := typed.MustForm[nameForm]("who", "Who are you?")
	srv, _ := newServer(t)
	var runs int
	require.NoError(t, typed.AddTool(srv, mrtr.Tool{Name: "greet"}, func(ctx context.Context, req *mrtr.Request, _ struct{}) (*mrtr.CallToolResult, error) {
		runs++
		v, act, err := f.Ask(ctx, req)
		switch {
		case err != nil:
			return nil, err
		case act != mrtr.Accepted:
			return mrtr.TextResult("no name: " + string(act)), nil
		}
		return mrtr.TextResult("Hello, " + v.Name + "!"), nil
	}))
	bad := map[string]any{"name": "Adalovelace!", "agree": true}
	good := map[string]any{"name": "Ada", "agree": true, "level": "high"}
	client := func(answers ...*mrtr.ElicitResult) (*mrtrtest.ToolResult, []string, error) {
		var asked []string
		c := mrtrtest.NewClient(srv, mrtrtest.OnElicitation(func(_ context.Context, r *mrtr.ElicitRequest) (*mrtr.ElicitResult, error) {
			asked = append(asked, r.Message)
			a := answers[0]
			if len(answers) > 1 {
				answers = answers[1:]
			}
			return a, nil
		}))
		res, err := c.CallTool(context.Background(), "greet", nil)
		return res, asked, err
	}
	accept := func(c map[string]any) *mrtr.ElicitResult {
		return &mrtr.ElicitResult{Action: mrtr.Accepted, Content: c}
	}

	res, asked, err := client(accept(bad), accept(good))
	require.NoError(t, err)
	assert.Equal(t, "Hello, Ada!", res.Text())
	assert.Equal(t, 2, res.Rounds)
	require.Len(t, asked, 2)
	assert.Equal(t, "Who are you?\n\nYour last answer could not be used: Your name must be at most 10 characters long.", asked[1])

	_, asked, err = client(accept(bad))
	var me *mrtr.Error
	require.ErrorAs(t, err, &me)
	assert.Equal(t, mrtr.CodeInvalidParams, me.Code)
	assert.Contains(t, me.Message, `Invalid input response "who": name must be at most 10 characters long`)
	assert.Len(t, asked, 1+typed.DefaultMaxInvalid, "asked once, then again DefaultMaxInvalid times")

	runs = 0
	res, asked, err = client(&mrtr.ElicitResult{Action: mrtr.Declined})
	require.NoError(t, err)
	assert.Equal(t, "no name: decline", res.Text())
	assert.Len(t, asked, 1, "a declined form is not asked again")
	assert.Equal(t, 2, runs)
}

// greetAsking serves a tool "greet" that greets the user by the name ask
// returns, and calls it with a client that answers every form with
// content: it returns the result, the messages the client was asked, and
// the call's error.
func greetAsking(t *testing.T, ask func(context.Context, *mrtr.Request) (nameForm, error), content map[string]any, opts ...mrtrtest.Option) (*mrtrtest.ToolResult, []string, error) {
	t.Helper()
	srv, _ := newServer(t)
	require.NoError(t, typed.AddTool(srv, mrtr.Tool{Name: "greet"}, func(ctx context.Context, req *mrtr.Request, _ struct{}) (*mrtr.CallToolResult, error) {
		v, err := ask(ctx, req)
		if err != nil {
			return nil, err
		}
		return mrtr.TextResult("Hello, " + v.Name + "!"), nil
	}))
	var messages []string
	c := mrtrtest.NewClient(srv, append(opts, mrtrtest.OnElicitation(func(_ context.Context, r *mrtr.ElicitRequest) (*mrtr.ElicitResult, error) {
		messages = append(messages, r.Message)
		return &mrtr.ElicitResult{Action: "accept", Content: content}, nil
	}))...)
	res, err := c.CallTool(context.Background(), "greet", nil)
	return res, messages, err
}

// askWith asks f as a straight-line handler does, with opts.
func askWith(f *typed.Form[nameForm], opts ...mrtr.AskOption) func(context.Context, *mrtr.Request) (nameForm, error) {
	return func(ctx context.Context, req *mrtr.Request) (nameForm, error) {
		v, _, err := f.Ask(ctx, req, opts...)
		return v, err
	}
}

var (
	adaAnswer     = map[string]any{"name": "Ada", "agree": true}
	tooLongAnswer = map[string]any{"name": "Adalovelace!", "agree": true}
)

// A form asked with another message is another question: an answer the
// user gave to the form's own message is not taken for it.
func TestFormWithMessageIsAnotherQuestion(t *testing.T) {
	f := typed.MustForm[nameForm]("who", "Who are you?")
	res, messages, err := greetAsking(t, func(ctx context.Context, req *mrtr.Request) (nameForm, error) {
		form := f
		if req.Round > 0 {
			form = f.WithMessage("Who are you, really?")
		}
		return askWith(form)(ctx, req)
	}, adaAnswer)
	require.NoError(t, err)
	assert.Equal(t, "Hello, Ada!", res.Text())
	assert.Equal(t, []string{"Who are you?", "Who are you, really?"}, messages)
}

// A form's answer is read again on every later round of the call (from the
// call's sealed state, without asking): the value reaches the end.
func TestFormAnswerOnLaterRounds(t *testing.T) {
	who := typed.MustForm[nameForm]("who", "Who are you?")
	var root string
	res, _, err := greetAsking(t, func(ctx context.Context, req *mrtr.Request) (nameForm, error) {
		v, _, err := who.Ask(ctx, req)
		if err != nil {
			return v, err
		}
		roots, err := mrtr.ListRoots(ctx, req, "roots")
		if err != nil {
			return v, err
		}
		root = roots.Roots[0].URI
		return v, nil
	}, adaAnswer, mrtrtest.WithRoots(mrtr.Root{URI: "file:///src"}))
	require.NoError(t, err)
	assert.Equal(t, "Hello, Ada!", res.Text())
	assert.Equal(t, "file:///src", root)
}

// A caller's own check, passed to Ask, replaces the form's re-asking, not
// its rules: an answer that breaks them still refuses the call, on the
// round it comes and on none later.
func TestFormAskWithCallersCheckKeepsTheRules(t *testing.T) {
	f := typed.MustForm[nameForm]("who", "Who are you?")
	var checked []string
	own := mrtr.CheckAnswer(func(r *mrtr.ElicitResult) error {
		checked = append(checked, string(r.ContentJSON()))
		return nil
	}, nil, 0)
	_, _, err := greetAsking(t, askWith(f, own), tooLongAnswer)
	var me *mrtr.Error
	require.ErrorAs(t, err, &me)
	assert.Equal(t, mrtr.CodeInvalidParams, me.Code)
	assert.Contains(t, me.Message, "name must be at most 10 characters long")
	assert.Len(t, checked, 1, "the caller's check saw the answer")
}

// WithMaxInvalid's copy asks again as many times as it says, not as the
// form it was made from.
func TestFormWithMaxInvalidCopy(t *testing.T) {
	for _, n := range []int{0, 1} {
		f := typed.MustForm[nameForm]("who", "Who are you?").WithMaxInvalid(n)
		_, asked, err := greetAsking(t, askWith(f), tooLongAnswer)
		var me *mrtr.Error
		require.ErrorAs(t, err, &me)
		assert.Equal(t, mrtr.CodeInvalidParams, me.Code)
		assert.Equal(t, n+1, len(asked), "asked once, then again %d times", n)
	}
}
