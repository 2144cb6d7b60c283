package typed_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mrtrkit/mrtrkit/internal/wire"
	"github.com/mrtrkit/mrtrkit/mrtr"
	"github.com/mrtrkit/mrtrkit/mrtr/mrtrtest"
	"github.com/mrtrkit/mrtrkit/mrtr/typed"
)

type Options struct {
	Depth int `json:"depth" jsonschema:"how deep to look" validate:"gte=1,lte=5"`
}

type GreetIn struct {
	Audience string   `json:"audience" jsonschema:"the audience" validate:"min=2"`
	MaxWords int      `json:"max_words,omitempty" jsonschema:"longest greeting, in words" validate:"omitempty,gte=1,lte=50"`
	Tone     *string  `json:"tone,omitempty" validate:"omitempty,oneof=warm formal"`
	Options  *Options `json:"options,omitempty"`
}

type GreetOut struct {
	Greeting string `json:"greeting" jsonschema:"the greeting"`
	Words    int    `json:"words"`
}

func greet(_ context.Context, _ *mrtr.Request, in GreetIn) (GreetOut, error) {
	g := "Hello, " + in.Audience + "!"
	return GreetOut{Greeting: g, Words: len(strings.Fields(g))}, nil
}

func TestSchemasGenerated(t *testing.T) {
	srv, _ := newServer(t)
	require.NoError(t, typed.AddTool(srv, mrtr.Tool{Name: "greet", Description: "Greets."}, greet))

	tl := listedTool(t, srv, "greet")
	in := tl["inputSchema"].(map[string]any)
	assert.Equal(t, "object", in["type"], "root type")
	assert.Equal(t, false, in["additionalProperties"])
	assert.Equal(t, []any{"audience"}, in["required"])
	props := in["properties"].(map[string]any)
	assert.Equal(t, map[string]any{"type": "string", "description": "the audience", "minLength": 2.0}, props["audience"], "min=2 is minLength")
	mw, _ := json.Marshal(props["max_words"])
	assert.JSONEq(t, `{"type":"integer","description":"longest greeting, in words","anyOf":[{"const":0},{"minimum":1,"maximum":50}]}`, string(mw),
		"omitempty,gte=1,lte=50: 0, or 1 to 50")
	tone, _ := json.Marshal(props["tone"])
	assert.JSONEq(t, `{"type":["null","string"],"enum":["warm","formal",null]}`, string(tone))
	opts := props["options"].(map[string]any)
	depth, _ := json.Marshal(opts["properties"].(map[string]any)["depth"])
	assert.JSONEq(t, `{"type":"integer","description":"how deep to look","minimum":1,"maximum":5}`, string(depth))

	out := tl["outputSchema"].(map[string]any)
	assert.Equal(t, "object", out["type"])
	assert.Equal(t, []any{"greeting", "words"}, out["required"])
	assert.Equal(t, "the greeting", out["properties"].(map[string]any)["greeting"].(map[string]any)["description"])
}

func TestGivenSchemasKept(t *testing.T) {
	srv, _ := newServer(t)
	inSchema := `{"type":"object","properties":{"audience":{"type":"string","pattern":"^[a-z]+$"}},"required":["audience"]}`
	outSchema := `{"type":"object","properties":{"greeting":{"type":"string"}},"required":["greeting"]}`
	require.NoError(t, typed.AddTool(srv, mrtr.Tool{Name: "greet", InputSchema: json.RawMessage(inSchema), OutputSchema: json.RawMessage(outSchema)}, greet))

	tl := listedTool(t, srv, "greet")
	b, _ := json.Marshal(tl["inputSchema"])
	assert.JSONEq(t, inSchema, string(b))
	b, _ = json.Marshal(tl["outputSchema"])
	assert.JSONEq(t, outSchema, string(b))

	// The given schema is enforced in full: its pattern too.
	r, e := callTool(t, srv, "greet", map[string]any{"audience": "World"}, nil)
	require.Nil(t, e)
	assert.True(t, r.IsError)
	assert.Contains(t, r.Content[0].Text, "pattern")

	// A hand-written schema that allows other members is the contract.
	r, e = callTool(t, srv, "greet", map[string]any{"audience": "world", "extra": 1}, nil)
	require.Nil(t, e)
	assert.False(t, r.IsError, r.Content)
}

func TestStructuredOutput(t *testing.T) {
	srv, _ := newServer(t)
	require.NoError(t, typed.AddTool(srv, mrtr.Tool{Name: "greet"}, greet))

	r, e := callTool(t, srv, "greet", map[string]any{"audience": "World"}, nil)
	require.Nil(t, e)
	assert.Equal(t, "complete", r.ResultType)
	assert.False(t, r.IsError)
	assert.JSONEq(t, `{"greeting":"Hello, World!","words":2}`, string(r.StructuredContent))
	require.Len(t, r.Content, 1)
	assert.Equal(t, "text", r.Content[0].Type)
	assert.JSONEq(t, `{"greeting":"Hello, World!","words":2}`, r.Content[0].Text, "the text block serializes the same value")
}

func TestArgumentProblemsBecomeToolErrors(t *testing.T) {
	cases := []struct {
		name string
		args string
		want []string
	}{
		{"wrong type", `{"audience":42}`, []string{"audience must be a string"}},
		{"null for a string", `{"audience":null}`, []string{"audience must be a string"}},
		{"missing required", `{}`, []string{"audience is required"}},
		{"unknown field", `{"audience":"World","audiance":"x"}`, []string{"audiance is not allowed (unknown field)"}},
		{"nested type", `{"audience":"World","options":{"depth":"deep"}}`, []string{"options.depth must be an integer"}},
		{"nested unknown", `{"audience":"World","options":{"depth":1,"width":2}}`, []string{"options.width is not allowed"}},
		{"fraction for integer", `{"audience":"World","max_words":2.5}`, []string{"max_words must be an integer"}},
		{"tag by JSON name", `{"audience":"World","max_words":500}`, []string{`max_words must be at most 50 (rule "lte=50")`}},
		{"string length", `{"audience":"W"}`, []string{`audience must be at least 2 characters long (rule "min=2")`}},
		{"oneof", `{"audience":"World","tone":"rude"}`, []string{`tone must be one of: warm, formal (rule "oneof=warm formal")`}},
		{"nested tag", `{"audience":"World","options":{"depth":9}}`, []string{`options.depth must be at most 5 (rule "lte=5")`}},
		{"several at once", `{"audience":7,"max_words":"many","x":1}`, []string{
			"audience must be a string", "max_words must be an integer", "x is not allowed",
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv, _ := newServer(t)
			var called atomic.Bool
			require.NoError(t, typed.AddTool(srv, mrtr.Tool{Name: "greet"}, func(ctx context.Context, req *mrtr.Request, in GreetIn) (GreetOut, error) {
				called.Store(true)
				return greet(ctx, req, in)
			}))
			r, e := callTool(t, srv, "greet", json.RawMessage(tc.args), nil)
			require.Nil(t, e, "argument problems are results, not JSON-RPC errors")
			assert.True(t, r.IsError)
			assert.Nil(t, r.StructuredContent)
			require.Len(t, r.Content, 1)
			assert.True(t, strings.HasPrefix(r.Content[0].Text, "Invalid arguments:"), r.Content[0].Text)
			for _, w := range tc.want {
				assert.Contains(t, r.Content[0].Text, w)
			}
			assert.NotContains(t, r.Content[0].Text, "MaxWords", "Go names never reach the client")
			assert.False(t, called.Load(), "the function must not run on bad arguments")
		})
	}
}

// BadOut claims more than it delivers: its declared schema requires a field
// the function leaves out.
type BadOut struct {
	Files []string `json:"files,omitempty"`
}

func TestOutputSchemaMismatchIsInternal(t *testing.T) {
	srv, logs := newServer(t)
	out := `{"type":"object","properties":{"files":{"type":"array"}},"required":["files"]}`
	require.NoError(t, typed.AddTool(srv, mrtr.Tool{Name: "bad", OutputSchema: json.RawMessage(out)},
		func(context.Context, *mrtr.Request, struct{}) (BadOut, error) { return BadOut{}, nil }))

	_, e := callTool(t, srv, "bad", nil, nil)
	require.NotNil(t, e)
	assert.Equal(t, mrtr.CodeInternalError, e.Code)
	assert.Equal(t, "Internal error", e.Message, "no detail reaches the client")
	assert.Contains(t, logs.String(), "structured content does not match the outputSchema")

	// The same check applies to a result the handler builds itself.
	require.NoError(t, typed.AddTool(srv, mrtr.Tool{Name: "raw", OutputSchema: json.RawMessage(out)},
		func(context.Context, *mrtr.Request, struct{}) (*mrtr.CallToolResult, error) {
			return &mrtr.CallToolResult{Content: []mrtr.Content{mrtr.Text("x")}, StructuredContent: map[string]any{"files": "nope"}}, nil
		}))
	_, e = callTool(t, srv, "raw", nil, nil)
	require.NotNil(t, e)
	assert.Equal(t, mrtr.CodeInternalError, e.Code)
}

func TestPassthroughResult(t *testing.T) {
	srv, _ := newServer(t)
	require.NoError(t, typed.AddTool(srv, mrtr.Tool{Name: "echo"},
		func(_ context.Context, _ *mrtr.Request, in struct {
			Text string `json:"text"`
		}) (*mrtr.CallToolResult, error) {
			return mrtr.TextResult(in.Text), nil
		}))
	tl := listedTool(t, srv, "echo")
	assert.NotContains(t, tl, "outputSchema", "a handler that builds its result declares no output schema")
	r, e := callTool(t, srv, "echo", map[string]any{"text": "hi"}, nil)
	require.Nil(t, e)
	assert.Equal(t, "hi", r.Content[0].Text)
	assert.Nil(t, r.StructuredContent)
}

type Report struct {
	Summary string `json:"summary"`
}

func (r Report) ToolContent() []mrtr.Content { return []mrtr.Content{mrtr.Text(r.Summary)} }

func TestContenter(t *testing.T) {
	srv, _ := newServer(t)
	require.NoError(t, typed.AddTool(srv, mrtr.Tool{Name: "report"},
		func(context.Context, *mrtr.Request, struct{}) (Report, error) {
			return Report{Summary: "all good"}, nil
		}))
	r, e := callTool(t, srv, "report", nil, nil)
	require.Nil(t, e)
	assert.Equal(t, "all good", r.Content[0].Text)
	assert.JSONEq(t, `{"summary":"all good"}`, string(r.StructuredContent))
}

func TestHandlerErrors(t *testing.T) {
	srv, logs := newServer(t)
	fail := func(err error) typed.Func[struct{}, GreetOut] {
		return func(context.Context, *mrtr.Request, struct{}) (GreetOut, error) { return GreetOut{}, err }
	}
	require.NoError(t, typed.AddTool(srv, mrtr.Tool{Name: "tool_error"}, fail(typed.Errorf("no user named %q", "bob"))))
	require.NoError(t, typed.AddTool(srv, mrtr.Tool{Name: "rpc_error"}, fail(mrtr.InvalidParamsError("bad"))))
	require.NoError(t, typed.AddTool(srv, mrtr.Tool{Name: "plain_error"}, fail(errors.New("database password=hunter2 refused"))))

	r, e := callTool(t, srv, "tool_error", nil, nil)
	require.Nil(t, e)
	assert.True(t, r.IsError)
	assert.Equal(t, `no user named "bob"`, r.Content[0].Text)

	_, e = callTool(t, srv, "rpc_error", nil, nil)
	require.NotNil(t, e)
	assert.Equal(t, mrtr.CodeInvalidParams, e.Code)

	_, e = callTool(t, srv, "plain_error", nil, nil)
	require.NotNil(t, e)
	assert.Equal(t, mrtr.CodeInternalError, e.Code)
	assert.NotContains(t, e.Message, "hunter2")
	assert.Contains(t, logs.String(), "hunter2", "the detail is logged")
}

func TestErrorfWraps(t *testing.T) {
	base := errors.New("not found")
	err := typed.Errorf("lookup: %w", base)
	assert.ErrorIs(t, err, base)
	var te *typed.ToolError
	require.ErrorAs(t, err, &te)
	assert.Equal(t, "lookup: not found", te.Message)
}

// nameOnly is the form TestStraightLineTypedTool asks.
type nameOnly struct {
	Name string `json:"name" validate:"required"`
}

// TestStraightLineTypedTool drives a typed function that asks a form in
// straight-line code: the first round is input_required on the wire, and
// a client that answers it gets the output on the retry, the function run
// again from the top.
func TestStraightLineTypedTool(t *testing.T) {
	srv, _ := newServer(t)
	var rounds []int
	askName := typed.MustForm[nameOnly]("name", "Your name?")
	greet := func(ctx context.Context, req *mrtr.Request, _ struct{}) (GreetOut, error) {
		rounds = append(rounds, req.Round)
		form, _, err := askName.Ask(ctx, req)
		if err != nil {
			return GreetOut{}, err
		}
		return GreetOut{Greeting: "Hi " + form.Name, Words: 2}, nil
	}
	require.NoError(t, typed.AddTool(srv, mrtr.Tool{Name: "ask"}, greet))

	r, e := callTool(t, srv, "ask", nil, nil)
	require.Nil(t, e)
	assert.Equal(t, "input_required", r.ResultType)
	require.Contains(t, r.InputRequests, "name")
	assert.Equal(t, wire.MethodElicit, r.InputRequests["name"].Method)
	assert.NotEmpty(t, r.RequestState)
	assert.Nil(t, r.StructuredContent, "a run that asks carries no output")

	var messages []string
	c := mrtrtest.NewClient(srv, mrtrtest.OnElicitation(func(_ context.Context, req *mrtr.ElicitRequest) (*mrtr.ElicitResult, error) {
		messages = append(messages, req.Message)
		return &mrtr.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}}, nil
	}))
	res, err := c.CallTool(context.Background(), "ask", nil)
	require.NoError(t, err)
	assert.False(t, res.IsError, res.Text())
	assert.Equal(t, 1, res.Rounds)
	assert.Equal(t, [][]string{{"name"}}, res.Asked)
	assert.Equal(t, []string{"Your name?"}, messages)
	assert.JSONEq(t, `{"greeting":"Hi Ada","words":2}`, string(res.StructuredContent))
	assert.Equal(t, []int{0, 0, 1}, rounds, "the raw call, then the client's first call and its retry")
}

// Level encodes itself as text although the schema generated for it says
// integer.
type Level int

func (l Level) MarshalText() ([]byte, error) { return []byte(fmt.Sprintf("level-%d", int(l))), nil }

type Status struct {
	Level Level `json:"level"`
}

// Temp encodes itself under names its generated schema does not declare,
// unless it is marked right.
type Temp struct {
	C     float64 `json:"c"`
	Right bool    `json:"-"`
}

func (t Temp) MarshalJSON() ([]byte, error) {
	if t.Right {
		return []byte(fmt.Sprintf(`{"c":%g}`, t.C)), nil
	}
	return []byte(fmt.Sprintf(`{"celsius":%g}`, t.C)), nil
}

// A generated output schema is enforced when Out encodes itself (a
// MarshalText or MarshalJSON method inside it), since only then can its
// JSON differ from the schema generated for the type.
func TestGeneratedOutputSchemaEnforcedWhenOutEncodesItself(t *testing.T) {
	srv, logs := newServer(t)
	require.NoError(t, typed.AddTool(srv, mrtr.Tool{Name: "status"},
		func(context.Context, *mrtr.Request, struct{}) (Status, error) { return Status{Level: 3}, nil }))
	var right atomic.Bool
	require.NoError(t, typed.AddTool(srv, mrtr.Tool{Name: "temp"},
		func(context.Context, *mrtr.Request, struct{}) (Temp, error) {
			return Temp{C: 21.5, Right: right.Load()}, nil
		}))

	tl := listedTool(t, srv, "status")
	assert.Equal(t, "integer", tl["outputSchema"].(map[string]any)["properties"].(map[string]any)["level"].(map[string]any)["type"],
		"the generated schema describes the Go type, not its encoding")

	for _, name := range []string{"status", "temp"} {
		logs.Reset()
		_, e := callTool(t, srv, name, nil, nil)
		require.NotNil(t, e, name)
		assert.Equal(t, mrtr.CodeInternalError, e.Code, name)
		assert.Equal(t, "Internal error", e.Message, name)
		assert.Contains(t, logs.String(), "structured content does not match the outputSchema", name)
	}

	right.Store(true)
	r, e := callTool(t, srv, "temp", nil, nil)
	require.Nil(t, e)
	assert.False(t, r.IsError)
	assert.JSONEq(t, `{"c":21.5}`, string(r.StructuredContent), "an encoding that matches its schema passes")
}

// The strict door runs before the Binder: arguments a Go decoder could read
// two ways, or that hold a number with no exact double, are a JSON-RPC
// error and the function never runs. A lone case variant is the Binder's
// to refuse, as an isError result the model can act on.
func TestStrictDoorBeforeBinder(t *testing.T) {
	srv, _ := newServer(t)
	var called atomic.Int32
	require.NoError(t, typed.AddTool(srv, mrtr.Tool{Name: "greet"}, func(ctx context.Context, req *mrtr.Request, in GreetIn) (GreetOut, error) {
		called.Add(1)
		return greet(ctx, req, in)
	}))
	for args, want := range map[string]string{
		`{"audience":"World","AUDIENCE":"x"}`:                              "arguments.AUDIENCE repeats a member name",
		`{"audience":"World","options":{"depth":1},"optionſ":{"depth":9}}`: "repeats a member name",
		`{"audience":"World","max_words":9007199254740993}`:                "arguments.max_words is a number with no exact IEEE 754 double form",
		`{"audience":"World","options":{"depth":1,"DEPTH":9}}`:             "arguments.options.DEPTH repeats a member name",
		`{"audience":"\ud800"}`:                                            "arguments.audience holds an unpaired surrogate escape",
	} {
		_, e := callTool(t, srv, "greet", json.RawMessage(args), nil)
		require.NotNil(t, e, args)
		assert.Equal(t, mrtr.CodeInvalidParams, e.Code, args)
		assert.Contains(t, e.Message, want, args)
	}
	assert.Zero(t, called.Load(), "no function ran past the door")

	r, e := callTool(t, srv, "greet", json.RawMessage(`{"AUDIENCE":"World"}`), nil)
	require.Nil(t, e)
	assert.True(t, r.IsError)
	assert.Contains(t, r.Content[0].Text, "AUDIENCE is not allowed: names are case-sensitive (did you mean audience?)")
	assert.Contains(t, r.Content[0].Text, "audience is required")
	assert.Zero(t, called.Load())
}

func TestNewToolRefuses(t *testing.T) {
	_, _, err := typed.NewTool(mrtr.Tool{Name: "s"}, typed.Func[string, string](func(context.Context, *mrtr.Request, string) (string, error) { return "", nil }))
	assert.ErrorContains(t, err, `root type "object"`)

	type badTag struct {
		A string `json:"a" validate:"no_such_rule"`
	}
	_, _, err = typed.NewTool(mrtr.Tool{Name: "t"}, typed.Func[badTag, string](func(context.Context, *mrtr.Request, badTag) (string, error) { return "", nil }))
	assert.ErrorContains(t, err, "validate tags")

	_, _, err = typed.NewTool[struct{}, string](mrtr.Tool{Name: "u"}, nil)
	assert.Error(t, err)

	type cyclic struct {
		Next *cyclic `json:"next"`
	}
	_, _, err = typed.NewTool(mrtr.Tool{Name: "v"}, typed.Func[cyclic, string](func(context.Context, *mrtr.Request, cyclic) (string, error) { return "", nil }))
	assert.Error(t, err)
}

func TestNoArgumentTool(t *testing.T) {
	srv, _ := newServer(t)
	require.NoError(t, typed.AddTool(srv, mrtr.Tool{Name: "now"},
		func(context.Context, *mrtr.Request, struct{}) (GreetOut, error) {
			return GreetOut{Greeting: "hi", Words: 1}, nil
		}))
	in := listedTool(t, srv, "now")["inputSchema"]
	assert.Equal(t, map[string]any{"type": "object", "additionalProperties": false}, in)
	r, e := callTool(t, srv, "now", nil, nil)
	require.Nil(t, e)
	assert.False(t, r.IsError)
}

type PromptArgs struct {
	Topic string `json:"topic" validate:"min=3"`
}

func TestAdaptPrompt(t *testing.T) {
	srv, _ := newServer(t)
	h, err := typed.Adapt[PromptArgs, *mrtr.GetPromptResult](typed.Func[PromptArgs, *mrtr.GetPromptResult](
		func(_ context.Context, _ *mrtr.Request, in PromptArgs) (*mrtr.GetPromptResult, error) {
			return &mrtr.GetPromptResult{Messages: []mrtr.PromptMessage{{Role: mrtr.RoleUser, Content: mrtr.Text("Write about " + in.Topic)}}}, nil
		}))
	require.NoError(t, err)
	require.NoError(t, srv.AddPrompt(mrtr.Prompt{Name: "write", Arguments: []mrtr.PromptArgument{{Name: "topic", Required: true}}}, h))

	raw, e := call(t, srv, wire.MethodPromptsGet, map[string]any{"name": "write", "arguments": map[string]string{"topic": "tides"}})
	require.Nil(t, e)
	assert.Contains(t, string(raw), "Write about tides")

	_, e = call(t, srv, wire.MethodPromptsGet, map[string]any{"name": "write", "arguments": map[string]string{"topic": "x"}})
	require.NotNil(t, e)
	assert.Equal(t, mrtr.CodeInvalidParams, e.Code)
	assert.Contains(t, e.Message, "topic must be at least 3 characters long")

	_, e = call(t, srv, wire.MethodPromptsGet, map[string]any{"name": "write", "arguments": map[string]string{"topic": "tides", "mood": "x"}})
	require.NotNil(t, e)
	assert.Contains(t, e.Message, "mood is not allowed")
}

func TestAdaptRefusesNonResultOutputForPrompts(t *testing.T) {
	srv, logs := newServer(t)
	h, err := typed.Adapt[struct{}, GreetOut](typed.Func[struct{}, GreetOut](greetNoArgs))
	require.NoError(t, err)
	require.NoError(t, srv.AddPrompt(mrtr.Prompt{Name: "p"}, h))
	_, e := call(t, srv, wire.MethodPromptsGet, map[string]any{"name": "p"})
	require.NotNil(t, e)
	assert.Equal(t, mrtr.CodeInternalError, e.Code)
	assert.Contains(t, logs.String(), "cannot answer prompts/get")
}

func greetNoArgs(context.Context, *mrtr.Request, struct{}) (GreetOut, error) {
	return GreetOut{Greeting: "hi", Words: 1}, nil
}

type DocVars struct {
	ID string `json:"id" validate:"numeric"`
}

func TestAdaptResourceTemplate(t *testing.T) {
	srv, _ := newServer(t)
	h, err := typed.Adapt[DocVars, *mrtr.ReadResourceResult](typed.Func[DocVars, *mrtr.ReadResourceResult](
		func(_ context.Context, req *mrtr.Request, in DocVars) (*mrtr.ReadResourceResult, error) {
			return &mrtr.ReadResourceResult{Contents: []mrtr.ResourceContents{mrtr.TextResource(req.URI, "text/plain", "doc "+in.ID)}}, nil
		}))
	require.NoError(t, err)
	require.NoError(t, srv.AddResourceTemplate(mrtr.ResourceTemplate{URITemplate: "docs://{id}", Name: "doc"}, h))

	raw, e := call(t, srv, wire.MethodResourcesRead, map[string]any{"uri": "docs://42"})
	require.Nil(t, e)
	assert.Contains(t, string(raw), `"text":"doc 42"`)

	_, e = call(t, srv, wire.MethodResourcesRead, map[string]any{"uri": "docs://abc"})
	require.NotNil(t, e)
	assert.Equal(t, mrtr.CodeInvalidParams, e.Code)
	assert.Contains(t, e.Message, `id must be numeric (rule "numeric")`)
}

// defaultRounds is the documented default of WithMaxRounds.
const defaultRounds = 10
