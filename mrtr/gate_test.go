package mrtr_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mrtrkit/mrtrkit/mrtr"
)

// askTool registers tool "t" that answers every call with ir.
func askTool(t *testing.T, f *fixture, ir *mrtr.InputRequired) {
	f.addTool("t", func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) { return ir, nil })
}

func samplingWithTools() *mrtr.SamplingRequest {
	r := simpleSampling("weather?")
	r.Tools = []mrtr.Tool{{Name: "get_weather", InputSchema: json.RawMessage(`{"type":"object"}`)}}
	return r
}

func TestCapabilityGate(t *testing.T) {
	toolUse := simpleSampling("x")
	toolUse.Messages = append(toolUse.Messages,
		mrtr.SamplingMessage{Role: mrtr.RoleAssistant, Content: []mrtr.SamplingContent{{Type: "tool_use", ID: "1", Name: "get_weather", Input: json.RawMessage(`{}`)}}},
		mrtr.SamplingMessage{Role: mrtr.RoleUser, Content: []mrtr.SamplingContent{{Type: "tool_result", ToolUseID: "1", Content: []json.RawMessage{json.RawMessage(`{"type":"text","text":"sunny"}`)}}}},
	)
	withChoice := simpleSampling("x")
	withChoice.ToolChoice = &mrtr.ToolChoice{Mode: "auto"}
	thisServer := simpleSampling("x")
	thisServer.IncludeContext = "thisServer"
	allServers := simpleSampling("x")
	allServers.IncludeContext = "allServers"
	noContext := simpleSampling("x")
	noContext.IncludeContext = "none"
	urlElicit := &mrtr.ElicitRequest{Mode: "url", Message: "Sign in", URL: "https://example.com/"}
	formElicit := nameForm("name?")
	explicitForm := nameForm("name?")
	explicitForm.Mode = "form"

	tests := []struct {
		name     string
		asks     map[string]mrtr.InputRequest
		caps     obj
		required string // JSON of data.requiredCapabilities; "" when allowed
	}{
		{"sampling without sampling", map[string]mrtr.InputRequest{"a": simpleSampling("x")}, capsNone, `{"sampling":{}}`},
		{"sampling with sampling", map[string]mrtr.InputRequest{"a": simpleSampling("x")}, capsSampling, ""},
		{"sampling tools without sampling.tools", map[string]mrtr.InputRequest{"a": samplingWithTools()}, capsSampling, `{"sampling":{"tools":{}}}`},
		{"sampling tools with sampling.tools", map[string]mrtr.InputRequest{"a": samplingWithTools()}, obj{"sampling": obj{"tools": obj{}}}, ""},
		{"tool blocks without sampling.tools", map[string]mrtr.InputRequest{"a": toolUse}, capsSampling, `{"sampling":{"tools":{}}}`},
		{"tool choice without sampling.tools", map[string]mrtr.InputRequest{"a": withChoice}, capsSampling, `{"sampling":{"tools":{}}}`},
		{"thisServer context without sampling.context", map[string]mrtr.InputRequest{"a": thisServer}, capsSampling, `{"sampling":{"context":{}}}`},
		{"allServers context without sampling.context", map[string]mrtr.InputRequest{"a": allServers}, obj{"sampling": obj{"tools": obj{}}}, `{"sampling":{"context":{}}}`},
		{"context with sampling.context", map[string]mrtr.InputRequest{"a": thisServer}, obj{"sampling": obj{"context": obj{}}}, ""},
		{"includeContext none needs nothing more", map[string]mrtr.InputRequest{"a": noContext}, capsSampling, ""},
		{"tools and context missing", map[string]mrtr.InputRequest{"a": samplingWithTools(), "b": thisServer}, capsSampling, `{"sampling":{"tools":{},"context":{}}}`},
		{"url elicitation with form only", map[string]mrtr.InputRequest{"a": urlElicit}, obj{"elicitation": obj{"form": obj{}}}, `{"elicitation":{"url":{}}}`},
		{"url elicitation with empty elicitation", map[string]mrtr.InputRequest{"a": urlElicit}, capsElicit, `{"elicitation":{"url":{}}}`},
		{"url elicitation with url", map[string]mrtr.InputRequest{"a": urlElicit}, obj{"elicitation": obj{"url": obj{}}}, ""},
		{"url elicitation without elicitation", map[string]mrtr.InputRequest{"a": urlElicit}, capsNone, `{"elicitation":{"url":{}}}`},
		{"form elicitation with empty elicitation", map[string]mrtr.InputRequest{"a": formElicit}, capsElicit, ""},
		{"explicit form with empty elicitation", map[string]mrtr.InputRequest{"a": explicitForm}, capsElicit, ""},
		{"form elicitation with form", map[string]mrtr.InputRequest{"a": formElicit}, obj{"elicitation": obj{"form": obj{}}}, ""},
		{"form elicitation with url only", map[string]mrtr.InputRequest{"a": formElicit}, obj{"elicitation": obj{"url": obj{}}}, `{"elicitation":{"form":{}}}`},
		{"form elicitation without elicitation", map[string]mrtr.InputRequest{"a": formElicit}, capsNone, `{"elicitation":{}}`},
		{"roots without roots", map[string]mrtr.InputRequest{"a": &mrtr.RootsRequest{}}, capsNone, `{"roots":{}}`},
		{"roots with roots", map[string]mrtr.InputRequest{"a": &mrtr.RootsRequest{}}, capsRoots, ""},
		{"union of everything missing", map[string]mrtr.InputRequest{"a": simpleSampling("x"), "b": urlElicit, "c": &mrtr.RootsRequest{}}, capsNone, `{"sampling":{},"elicitation":{"url":{}},"roots":{}}`},
		{"union of sub-capabilities", map[string]mrtr.InputRequest{"a": samplingWithTools(), "b": urlElicit, "c": &mrtr.RootsRequest{}}, obj{"sampling": obj{}, "elicitation": obj{}, "roots": obj{}}, `{"sampling":{"tools":{}},"elicitation":{"url":{}}}`},
		{"everything declared", map[string]mrtr.InputRequest{"a": samplingWithTools(), "b": urlElicit, "c": &mrtr.RootsRequest{}, "d": thisServer, "e": formElicit}, capsEverything, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			askTool(t, f, &mrtr.InputRequired{Requests: tt.asks})
			r := f.call("tools/call", obj{"_meta": meta(tt.caps), "name": "t"})
			if tt.required == "" {
				res, _ := r.inputRequired(t)
				assert.Len(t, res["inputRequests"], len(tt.asks))
				return
			}
			e := r.fail(t, mrtr.CodeMissingCapability)
			assert.True(t, r.Envelope, "-32021 is about the request as a whole")
			var data struct {
				Required json.RawMessage `json:"requiredCapabilities"`
			}
			require.NoError(t, json.Unmarshal(e.Data, &data))
			assert.JSONEq(t, tt.required, string(data.Required))
			assert.Contains(t, e.Message, "capability")
		})
	}
}

func TestCapabilityGateMessageNamesCapabilities(t *testing.T) {
	f := newFixture(t)
	askTool(t, f, &mrtr.InputRequired{Requests: map[string]mrtr.InputRequest{"a": simpleSampling("x"), "b": &mrtr.RootsRequest{}}})
	e := f.call("tools/call", obj{"_meta": meta(capsNone), "name": "t"}).fail(t, mrtr.CodeMissingCapability)
	assert.Equal(t, "Server requires the roots and sampling capability for this request", e.Message)
}

func TestHandlerAdaptingToCapabilitiesIsNotGated(t *testing.T) {
	f := newFixture(t)
	f.addTool("t", func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
		caps := req.Capabilities()
		switch {
		case caps.Sampling != nil:
			return mrtr.Ask("s", simpleSampling("x")), nil
		case caps.FormElicitation():
			return mrtr.Ask("e", nameForm("name?")), nil
		}
		return mrtr.ErrorResult("this tool needs sampling or elicitation"), nil
	})
	res, _ := f.call("tools/call", obj{"_meta": meta(capsSampling), "name": "t"}).inputRequired(t)
	assert.Equal(t, []string{"s"}, keysOf(res["inputRequests"]))
	res, _ = f.call("tools/call", obj{"_meta": meta(capsElicit), "name": "t"}).inputRequired(t)
	assert.Equal(t, []string{"e"}, keysOf(res["inputRequests"]))
	res = f.call("tools/call", obj{"_meta": meta(capsRoots), "name": "t"}).complete(t)
	assert.Equal(t, true, res["isError"])
}

func TestClientCapabilitiesHelpers(t *testing.T) {
	var c mrtr.ClientCapabilities
	assert.False(t, c.FormElicitation())
	assert.False(t, c.URLElicitation())
	c.Elicitation = &mrtr.ElicitCapability{}
	assert.True(t, c.FormElicitation())
	assert.False(t, c.URLElicitation())
	c.Elicitation = &mrtr.ElicitCapability{URL: mrtr.Object{}}
	assert.False(t, c.FormElicitation())
	assert.True(t, c.URLElicitation())
	c.Elicitation = &mrtr.ElicitCapability{URL: mrtr.Object{}, Form: mrtr.Object{}}
	assert.True(t, c.FormElicitation())

	b, err := json.Marshal(mrtr.ClientCapabilities{
		Sampling:    &mrtr.SamplingCapability{Tools: mrtr.Object{}},
		Elicitation: &mrtr.ElicitCapability{Form: mrtr.Object{}},
		Roots:       &mrtr.Object{},
	})
	require.NoError(t, err)
	assert.JSONEq(t, `{"sampling":{"tools":{}},"elicitation":{"form":{}},"roots":{}}`, string(b))
}

func TestInvalidEmbeddedRequests(t *testing.T) {
	badImage := func(data, mime string) *mrtr.SamplingRequest {
		r := simpleSampling("x")
		r.Messages[0].Content = []mrtr.SamplingContent{{Type: "image", Data: data, MIMEType: mime}}
		return r
	}
	mod := func(edit func(r *mrtr.SamplingRequest)) *mrtr.SamplingRequest {
		r := simpleSampling("x")
		edit(r)
		return r
	}
	tests := []struct {
		name string
		ir   mrtr.InputRequest
	}{
		{"maxTokens 0", mod(func(r *mrtr.SamplingRequest) { r.MaxTokens = 0 })},
		{"negative maxTokens", mod(func(r *mrtr.SamplingRequest) { r.MaxTokens = -1 })},
		{"no messages", mod(func(r *mrtr.SamplingRequest) { r.Messages = nil })},
		{"system role", mod(func(r *mrtr.SamplingRequest) { r.Messages[0].Role = "system" })},
		{"message without content", mod(func(r *mrtr.SamplingRequest) { r.Messages[0].Content = nil })},
		{"unknown block type", mod(func(r *mrtr.SamplingRequest) { r.Messages[0].Content[0].Type = "video" })},
		{"unknown includeContext", mod(func(r *mrtr.SamplingRequest) { r.IncludeContext = "everything" })},
		{"priority above 1", mod(func(r *mrtr.SamplingRequest) {
			p := 1.5
			r.ModelPreferences = &mrtr.ModelPreferences{CostPriority: &p}
		})},
		{"unknown tool choice", mod(func(r *mrtr.SamplingRequest) { r.ToolChoice = &mrtr.ToolChoice{Mode: "sometimes"} })},
		{"sampling tool without schema", mod(func(r *mrtr.SamplingRequest) { r.Tools = []mrtr.Tool{{Name: "x"}} })},
		{"sampling tool with bad name", mod(func(r *mrtr.SamplingRequest) {
			r.Tools = []mrtr.Tool{{Name: "bad name", InputSchema: json.RawMessage(`{"type":"object"}`)}}
		})},
		{"tool_use without input", mod(func(r *mrtr.SamplingRequest) {
			r.Messages[0].Content = []mrtr.SamplingContent{{Type: "tool_use", ID: "1", Name: "x"}}
		})},
		{"tool_result without toolUseId", mod(func(r *mrtr.SamplingRequest) {
			r.Messages[0].Content = []mrtr.SamplingContent{{Type: "tool_result"}}
		})},
		{"image with unpadded base64", badImage("aGVsbG8", "image/png")},
		{"image with non-canonical base64", badImage("aGVsbG9=", "image/png")},
		{"image with url-safe base64", badImage("__8=", "image/png")},
		{"image with whitespace in base64", badImage("aGVs bG8=", "image/png")},
		{"image with empty data", badImage("", "image/png")},
		{"image with text mimeType", badImage("aGVsbG8=", "text/plain")},
		{"image without mimeType", badImage("aGVsbG8=", "")},
		{"audio with image mimeType", mod(func(r *mrtr.SamplingRequest) {
			r.Messages[0].Content = []mrtr.SamplingContent{{Type: "audio", Data: "aGVsbG8=", MIMEType: "image/png"}}
		})},
		{"form without requestedSchema", &mrtr.ElicitRequest{Message: "x"}},
		{"form without message", &mrtr.ElicitRequest{RequestedSchema: nameForm("").RequestedSchema}},
		{"form with url", func() mrtr.InputRequest { r := nameForm("x"); r.URL = "https://example.com/"; return r }()},
		{"form schema not an object", func() mrtr.InputRequest { r := nameForm("x"); r.RequestedSchema.Type = "array"; return r }()},
		{"form schema without properties", &mrtr.ElicitRequest{Message: "x", RequestedSchema: &mrtr.ElicitSchema{Type: "object"}}},
		{"form nested object property", &mrtr.ElicitRequest{Message: "x", RequestedSchema: &mrtr.ElicitSchema{Type: "object",
			Properties: map[string]json.RawMessage{"a": json.RawMessage(`{"type":"object"}`)}}}},
		{"form array property without enum", &mrtr.ElicitRequest{Message: "x", RequestedSchema: &mrtr.ElicitSchema{Type: "object",
			Properties: map[string]json.RawMessage{"a": json.RawMessage(`{"type":"array","items":{"type":"string"}}`)}}}},
		{"form property not an object", &mrtr.ElicitRequest{Message: "x", RequestedSchema: &mrtr.ElicitSchema{Type: "object",
			Properties: map[string]json.RawMessage{"a": json.RawMessage(`"string"`)}}}},
		{"url without url", &mrtr.ElicitRequest{Mode: "url", Message: "x"}},
		{"url with schema", &mrtr.ElicitRequest{Mode: "url", Message: "x", URL: "https://example.com/", RequestedSchema: nameForm("").RequestedSchema}},
		{"url not a url", &mrtr.ElicitRequest{Mode: "url", Message: "x", URL: "not a url"}},
		{"url without message", &mrtr.ElicitRequest{Mode: "url", URL: "https://example.com/"}},
		{"unknown mode", &mrtr.ElicitRequest{Mode: "popup", Message: "x", RequestedSchema: nameForm("").RequestedSchema}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			askTool(t, f, mrtr.Ask("k", tt.ir))
			r := f.call("tools/call", obj{"_meta": meta(capsEverything), "name": "t"})
			e := r.fail(t, mrtr.CodeInternalError)
			assert.Equal(t, "Internal error", e.Message)
			assert.Nil(t, e.Data)
			assert.False(t, r.Envelope)
			assert.True(t, f.logHas("level=ERROR", "handler asked a malformed question", `request \"k\"`), "log: %s", f.logs.String())
		})
	}
}

func TestValidEmbeddedRequests(t *testing.T) {
	temp := 0.5
	prio := 1.0
	full := &mrtr.SamplingRequest{
		Messages: []mrtr.SamplingMessage{
			{Role: mrtr.RoleUser, Content: []mrtr.SamplingContent{
				{Type: "text", Text: "look"},
				{Type: "image", Data: "aGVsbG8=", MIMEType: "image/png"},
				{Type: "audio", Data: "", MIMEType: "audio/wav"},
			}},
		},
		ModelPreferences: &mrtr.ModelPreferences{Hints: []mrtr.ModelHint{{Name: "claude"}}, IntelligencePriority: &prio},
		SystemPrompt:     "be brief",
		IncludeContext:   "none",
		Temperature:      &temp,
		MaxTokens:        10,
		StopSequences:    []string{"\n"},
	}
	full.Messages[0].Content[2].Data = "UklGRg=="
	f := newFixture(t)
	askTool(t, f, &mrtr.InputRequired{Requests: map[string]mrtr.InputRequest{
		"s": full,
		"e": &mrtr.ElicitRequest{Message: "pick", RequestedSchema: &mrtr.ElicitSchema{Type: "object", Properties: map[string]json.RawMessage{
			"n":     json.RawMessage(`{"type":"integer","minimum":1}`),
			"b":     json.RawMessage(`{"type":"boolean"}`),
			"color": json.RawMessage(`{"type":"string","enum":["red","blue"]}`),
			"tags":  json.RawMessage(`{"type":"array","items":{"type":"string","enum":["a","b"]}}`),
		}}},
	}})
	res, _ := f.call("tools/call", obj{"name": "t"}).inputRequired(t)
	s := res["inputRequests"].(map[string]any)["s"].(map[string]any)
	assert.Equal(t, "sampling/createMessage", s["method"])
	params := s["params"].(map[string]any)
	msgs := params["messages"].([]any)
	assert.Len(t, msgs[0].(map[string]any)["content"], 3, "several blocks render as an array")
	assert.Equal(t, "be brief", params["systemPrompt"])
	assert.Equal(t, 0.5, params["temperature"])
}

func TestHandlerResultTypes(t *testing.T) {
	tests := []struct {
		name   string
		method string
		result mrtr.Result
		err    error
		code   mrtr.Code // 0: success
		msg    string
	}{
		{"tool returns prompt result", "tools/call", &mrtr.GetPromptResult{}, nil, mrtr.CodeInternalError, "Internal error"},
		{"tool returns read result", "tools/call", &mrtr.ReadResourceResult{}, nil, mrtr.CodeInternalError, "Internal error"},
		{"tool returns nil", "tools/call", nil, nil, mrtr.CodeInternalError, "Internal error"},
		{"tool returns typed nil", "tools/call", (*mrtr.CallToolResult)(nil), nil, mrtr.CodeInternalError, "Internal error"},
		{"tool returns typed nil input required", "tools/call", (*mrtr.InputRequired)(nil), nil, mrtr.CodeInternalError, "Internal error"},
		{"prompt returns tool result", "prompts/get", mrtr.TextResult("x"), nil, mrtr.CodeInternalError, "Internal error"},
		{"resource returns tool result", "resources/read", mrtr.TextResult("x"), nil, mrtr.CodeInternalError, "Internal error"},
		{"plain error", "tools/call", nil, errors.New("database password is hunter2"), mrtr.CodeInternalError, "Internal error"},
		{"plain error beside a result", "tools/call", mrtr.TextResult("x"), errors.New("secret"), mrtr.CodeInternalError, "Internal error"},
		{"protocol error passes through", "tools/call", nil, mrtr.NewError(mrtr.CodeInvalidParams, "bad city", map[string]string{"field": "city"}), mrtr.CodeInvalidParams, "bad city"},
		{"wrapped protocol error passes through", "tools/call", nil, fmt.Errorf("lookup: %w", mrtr.ResourceNotFoundError("file:///x")), mrtr.CodeInvalidParams, "Resource not found"},
		{"handler's own code passes through", "tools/call", nil, mrtr.NewError(-32001, "quota exceeded", nil), -32001, "quota exceeded"},
		{"invalid state from a handler", "tools/call", nil, mrtr.InvalidStateError(false), mrtr.CodeInvalidParams, "Invalid or expired requestState"},
		{"tool result", "tools/call", mrtr.TextResult("x"), nil, 0, ""},
		{"prompt result", "prompts/get", &mrtr.GetPromptResult{}, nil, 0, ""},
		{"read result", "resources/read", &mrtr.ReadResourceResult{}, nil, 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			h := mrtr.HandlerFunc(func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) { return tt.result, tt.err })
			require.NoError(t, f.srv.AddTool(mrtr.Tool{Name: "x"}, h))
			require.NoError(t, f.srv.AddPrompt(mrtr.Prompt{Name: "x"}, h))
			require.NoError(t, f.srv.AddResource(mrtr.Resource{URI: "file:///x", Name: "x"}, h))
			p := obj{"name": "x"}
			if tt.method == "resources/read" {
				p = obj{"uri": "file:///x"}
			}
			r := f.call(tt.method, p)
			if tt.code == 0 {
				r.complete(t)
				return
			}
			e := r.fail(t, tt.code)
			assert.Equal(t, tt.msg, e.Message)
			if tt.code == mrtr.CodeInternalError {
				assert.Nil(t, e.Data)
				assert.NotContains(t, r.Raw, "hunter2")
				assert.True(t, f.logHas("level=ERROR", "method="+tt.method), "the detail goes to the log: %s", f.logs.String())
			}
		})
	}
}

func TestHandlerErrorDataPassesThrough(t *testing.T) {
	f := newFixture(t)
	f.addTool("t", func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
		return nil, mrtr.NewError(mrtr.CodeInvalidParams, "bad city", map[string]string{"field": "city"})
	})
	e := f.call("tools/call", obj{"name": "t"}).fail(t, mrtr.CodeInvalidParams)
	assert.JSONEq(t, `{"field":"city"}`, string(e.Data))
}

func TestCancelledContextIsNotLogged(t *testing.T) {
	f := newFixture(t)
	f.addTool("t", func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	})
	msg, _, perr := mrtr.ParseMessage([]byte(request("tools/call", obj{"name": "t"})))
	require.Nil(t, perr)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r := decodeResponse(t, f.srv.Handle(ctx, &mrtr.Inbound{Message: msg}))
	e := r.fail(t, mrtr.CodeInternalError)
	assert.Equal(t, "Internal error", e.Message)
	assert.NotContains(t, f.logs.String(), "level=ERROR", "a call the client abandoned is not a server failure")

	// The same error from a live context is a failure, and logged.
	f.addTool("u", func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) { return nil, context.Canceled })
	f.call("tools/call", obj{"name": "u"}).fail(t, mrtr.CodeInternalError)
	assert.True(t, f.logHas("level=ERROR", "handler failed", "target=u"), "log: %s", f.logs.String())
}

func TestEmptyOrNilAskKey(t *testing.T) {
	for name, ir := range map[string]*mrtr.InputRequired{
		"empty key":   {Requests: map[string]mrtr.InputRequest{"": &mrtr.RootsRequest{}}},
		"nil request": {Requests: map[string]mrtr.InputRequest{"k": nil}},
	} {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t)
			askTool(t, f, ir)
			f.call("tools/call", obj{"name": "t"}).fail(t, mrtr.CodeInternalError)
		})
	}
}

func TestLoadSheddingInputRequired(t *testing.T) {
	f := newFixture(t)
	var rounds []int
	f.addTool("t", func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
		rounds = append(rounds, req.Round)
		if req.Round == 0 {
			return &mrtr.InputRequired{State: []byte("busy")}, nil
		}
		return mrtr.TextResult(string(req.State)), nil
	})
	res, tok := f.call("tools/call", obj{"name": "t"}).inputRequired(t)
	assert.NotContains(t, res, "ttlMs")
	res = f.call("tools/call", obj{"name": "t", "requestState": tok}).complete(t)
	assert.Equal(t, "busy", toolText(t, res))
	assert.Equal(t, []int{0, 1}, rounds)
}

// Regression: a handler that embedded a typed nil request, such as
// mrtr.Ask("k", (*mrtr.ElicitRequest)(nil)), made Handle panic: the
// capability gate read v.Mode (and v.Tools) before the embedded requests
// were validated, and an interface nil check does not catch a typed nil.
// Now inputRequired runs validateInputRequest, which refuses nil
// pointers, on every request before gateCapabilities sees any, and the
// handler bug is answered with -32603.
func TestRegressionTypedNilInputRequestPanics(t *testing.T) {
	tests := []struct {
		name string
		ir   mrtr.InputRequest
		caps obj
	}{
		{"nil elicitation", (*mrtr.ElicitRequest)(nil), capsEverything},
		{"nil elicitation, nothing declared", (*mrtr.ElicitRequest)(nil), capsNone},
		{"nil sampling with sampling declared", (*mrtr.SamplingRequest)(nil), capsSampling},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			askTool(t, f, mrtr.Ask("k", tt.ir))
			r, panicked := handleRecovering(t, f.srv, request("tools/call", obj{"_meta": meta(tt.caps), "name": "t"}))
			if panicked {
				return
			}
			e := r.fail(t, mrtr.CodeInternalError)
			assert.Equal(t, "Internal error", e.Message)
		})
	}
}

// Regression: when the client declared no sampling at all, a sampling
// request that needed sampling.tools or sampling.context yielded
// requiredCapabilities {"sampling":{}}, and a client that declared just
// that was refused again with {"sampling":{"tools":{}}}; a form and a url
// elicitation with no elicitation declared yielded
// {"elicitation":{"url":{}}}, which allows url mode only. Now
// gateCapabilities checks the sub-capabilities whether or not the parent
// was declared, and names form explicitly beside url, so that declaring
// exactly what -32021 names is always enough.
func TestRegressionRequiredCapabilitiesIncompleteWhenParentMissing(t *testing.T) {
	thisServer := simpleSampling("x")
	thisServer.IncludeContext = "thisServer"
	tests := []struct {
		name     string
		asks     map[string]mrtr.InputRequest
		required string
	}{
		{"sampling with tools", map[string]mrtr.InputRequest{"a": samplingWithTools()}, `{"sampling":{"tools":{}}}`},
		{"sampling with context", map[string]mrtr.InputRequest{"a": thisServer}, `{"sampling":{"context":{}}}`},
		{"form and url elicitation", map[string]mrtr.InputRequest{"a": nameForm("x"), "b": &mrtr.ElicitRequest{Mode: "url", Message: "x", URL: "https://example.com/"}}, `{"elicitation":{"form":{},"url":{}}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			askTool(t, f, &mrtr.InputRequired{Requests: tt.asks})
			e := f.call("tools/call", obj{"_meta": meta(capsNone), "name": "t"}).fail(t, mrtr.CodeMissingCapability)
			var data struct {
				Required json.RawMessage `json:"requiredCapabilities"`
			}
			require.NoError(t, json.Unmarshal(e.Data, &data))
			assert.JSONEq(t, tt.required, string(data.Required))

			// Declaring exactly what was named must be enough.
			var declared obj
			require.NoError(t, json.Unmarshal(data.Required, &declared))
			f.call("tools/call", obj{"_meta": meta(declared), "name": "t"}).inputRequired(t)
		})
	}
}
