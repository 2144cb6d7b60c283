package main

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/mrtrkit/mrtrkit/mrtr"
)

// This file holds the multi round-trip (MRTR) fixtures. Each asks the
// client for input by returning an *mrtr.InputRequired; the framework seals
// InputRequired.State into requestState and hands it back, verified, in
// Request.State on the retry together with the decoded answers in
// Request.Responses. No fixture inspects requestState itself.

// question is one input a gathering fixture needs.
type question struct {
	key string
	req mrtr.InputRequest
	// declared reports whether the client declared what the request needs.
	declared func(mrtr.ClientCapabilities) bool
	// answer extracts the answer from the responses, as text; ok is false
	// when the key was not answered (or not usefully: an accepted form
	// without the wanted field).
	answer func(mrtr.Responses) (string, bool)
}

// gatherMode says how a gathering fixture asks its questions.
type gatherMode int

const (
	// askAll asks every missing question in one round.
	askAll gatherMode = iota
	// askInTurn asks one question per round, in order.
	askInTurn
	// askDeclared asks, in one round, only the questions whose
	// capability this request declared.
	askDeclared
)

// gatherState is the fixture state sealed into requestState between
// rounds: which call it belongs to and the answers collected so far.
type gatherState struct {
	Fixture string            `json:"fixture"`
	Answers map[string]string `json:"answers"`
}

// gather runs one round of a fixture that needs answers to qs: it adds
// this round's answers to those carried in the state, and either asks for
// what is still missing (carrying the answers forward in State) or calls
// done with all of them.
func gather(req *mrtr.Request, qs []question, mode gatherMode, done func(answers map[string]string) (mrtr.Result, error)) (mrtr.Result, error) {
	st := gatherState{Fixture: req.Method + " " + req.Name, Answers: map[string]string{}}
	if req.State != nil {
		var prev gatherState
		if err := json.Unmarshal(req.State, &prev); err != nil {
			return nil, fmt.Errorf("fixture state does not decode: %w", err)
		}
		if prev.Fixture != st.Fixture {
			// The framework binds requestState to method and target, so
			// this means a state sealed for another call was accepted.
			return nil, fmt.Errorf("fixture state of %q reached %q", prev.Fixture, st.Fixture)
		}
		for k, v := range prev.Answers {
			st.Answers[k] = v
		}
	}
	for _, q := range qs {
		if a, ok := q.answer(req.Responses); ok {
			st.Answers[q.key] = a
		}
	}

	caps := req.Capabilities()
	asks := map[string]mrtr.InputRequest{}
	for _, q := range qs {
		if _, ok := st.Answers[q.key]; ok {
			continue
		}
		if mode == askDeclared && !q.declared(caps) {
			continue
		}
		asks[q.key] = q.req
		if mode == askInTurn {
			break
		}
	}
	if len(asks) == 0 {
		return done(st.Answers)
	}
	b, err := json.Marshal(st)
	if err != nil {
		return nil, err
	}
	return &mrtr.InputRequired{Requests: asks, State: b}, nil
}

// Capability predicates.

func hasSampling(c mrtr.ClientCapabilities) bool { return c.Sampling != nil }
func hasForm(c mrtr.ClientCapabilities) bool     { return c.FormElicitation() }
func hasRoots(c mrtr.ClientCapabilities) bool    { return c.Roots != nil }

// formRequest builds a form elicitation from property schemas given as
// name, JSON schema pairs.
func formRequest(message string, required []string, props ...string) *mrtr.ElicitRequest {
	schema := &mrtr.ElicitSchema{Type: "object", Properties: map[string]json.RawMessage{}, Required: required}
	for i := 0; i+1 < len(props); i += 2 {
		schema.Properties[props[i]] = json.RawMessage(props[i+1])
	}
	return &mrtr.ElicitRequest{Message: message, RequestedSchema: schema}
}

// formAnswer reads an elicitation answer. An accepted form must carry a
// non-empty field (when field is not ""); a declined or cancelled one is an
// answer too, recorded as the action.
func formAnswer(key, field string) func(mrtr.Responses) (string, bool) {
	return func(r mrtr.Responses) (string, bool) {
		a, ok := r.Elicitation(key)
		if !ok {
			return "", false
		}
		if !a.Accepted() {
			return "(" + a.Action + ")", true
		}
		if field == "" {
			b, _ := json.Marshal(a.Content)
			return string(b), true
		}
		v, ok := a.Content[field]
		if !ok {
			return "", false
		}
		s := fmt.Sprint(v)
		return s, s != ""
	}
}

// samplingAnswer reads a sampling answer as its text.
func samplingAnswer(key string) func(mrtr.Responses) (string, bool) {
	return func(r mrtr.Responses) (string, bool) {
		a, ok := r.Sampling(key)
		if !ok {
			return "", false
		}
		return a.Text(), true
	}
}

// rootsAnswer reads a roots answer as the list of root URIs.
func rootsAnswer(key string) func(mrtr.Responses) (string, bool) {
	return func(r mrtr.Responses) (string, bool) {
		a, ok := r.Roots(key)
		if !ok {
			return "", false
		}
		uris := make([]string, len(a.Roots))
		for i, root := range a.Roots {
			uris[i] = root.URI
		}
		return strings.Join(uris, ", "), true
	}
}

// The questions the fixtures ask.

func nameQuestion(key string) question {
	return question{
		key:      key,
		req:      formRequest("What is your name?", []string{"name"}, "name", `{"type":"string","description":"Your name"}`),
		declared: hasForm,
		answer:   formAnswer(key, "name"),
	}
}

func samplingQuestion(key, prompt string, maxTokens int) question {
	return question{
		key:      key,
		req:      &mrtr.SamplingRequest{Messages: []mrtr.SamplingMessage{mrtr.UserText(prompt)}, MaxTokens: maxTokens},
		declared: hasSampling,
		answer:   samplingAnswer(key),
	}
}

func rootsQuestion(key string) question {
	return question{key: key, req: &mrtr.RootsRequest{}, declared: hasRoots, answer: rootsAnswer(key)}
}

func confirmQuestion() question {
	return question{
		key:      "confirm",
		req:      formRequest("Please confirm to continue.", []string{"ok"}, "ok", `{"type":"boolean","description":"Confirm"}`),
		declared: hasForm,
		answer:   formAnswer("confirm", "ok"),
	}
}

// gatherTool adapts a gathering fixture to a tool handler whose final
// result is text made from the answers.
func gatherTool(qs []question, mode gatherMode, finish func(answers map[string]string) string) mrtr.Handler {
	return mrtr.HandlerFunc(func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
		return gather(req, qs, mode, func(answers map[string]string) (mrtr.Result, error) {
			return textResult(finish(answers)), nil
		})
	})
}

// summary renders answers as "k1=v1; k2=v2" in key order.
func summary(answers map[string]string) string {
	keys := make([]string, 0, len(answers))
	for k := range answers {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + answers[k]
	}
	return strings.Join(parts, "; ")
}

// registerMRTRTools registers the tools that ask for input.
func (f *fixtures) registerMRTRTools() error {
	type entry struct {
		tool mrtr.Tool
		h    mrtr.Handler
		opts []mrtr.RegisterOption
	}
	tool := func(name, desc string) mrtr.Tool {
		return mrtr.Tool{Name: name, Description: desc, InputSchema: emptySchema}
	}
	entries := []entry{
		{
			// user_name is a fixed question, declared up front so that an
			// answer sent before being asked (on a call without
			// requestState) is accepted.
			tool: tool("test_input_required_result_elicitation", "Asks for the user's name by elicitation (key user_name), then greets them"),
			h:    mrtr.HandlerFunc(elicitName),
			opts: []mrtr.RegisterOption{mrtr.StaticAsks(map[string]mrtr.InputRequest{"user_name": &mrtr.ElicitRequest{}})},
		},
		{
			tool: tool("test_input_required_result_sampling", "Asks the client's model a question by sampling (key capital_question)"),
			h: gatherTool([]question{samplingQuestion("capital_question", "What is the capital of France?", 100)}, askAll,
				func(a map[string]string) string { return "The model answered: " + a["capital_question"] }),
		},
		{
			tool: tool("test_input_required_result_list_roots", "Asks for the client's roots (key client_roots)"),
			h: gatherTool([]question{rootsQuestion("client_roots")}, askAll,
				func(a map[string]string) string { return "Client roots: " + a["client_roots"] }),
		},
		{
			tool: tool("test_input_required_result_request_state", "Asks for confirmation (key confirm) and carries its own state through requestState"),
			h: gatherTool([]question{confirmQuestion()}, askAll,
				func(a map[string]string) string { return "state-ok: confirm=" + a["confirm"] }),
		},
		{
			tool: tool("test_input_required_result_multiple_inputs", "Asks for a name, a model greeting and the client's roots in one round"),
			h: gatherTool([]question{
				nameQuestion("user_name"),
				samplingQuestion("greeting", "Write a short greeting.", 50),
				rootsQuestion("client_roots"),
			}, askAll, func(a map[string]string) string { return "All inputs received: " + summary(a) }),
		},
		{
			tool: tool("test_input_required_result_multi_round", "Asks for a name (step1), then a favourite colour (step2), one round each"),
			h: gatherTool([]question{
				nameQuestion("step1"),
				{
					key:      "step2",
					req:      formRequest("What is your favourite colour?", []string{"color"}, "color", `{"type":"string","description":"A colour"}`),
					declared: hasForm,
					answer:   formAnswer("step2", "color"),
				},
			}, askInTurn, func(a map[string]string) string {
				return fmt.Sprintf("%s's favourite colour is %s.", a["step1"], a["step2"])
			}),
		},
		{
			tool: tool("test_input_required_result_tampered_state", "Asks for confirmation (key confirm); a tampered requestState is refused"),
			h: gatherTool([]question{confirmQuestion()}, askAll,
				func(a map[string]string) string { return "state verified: confirm=" + a["confirm"] }),
		},
		{
			tool: tool("test_input_required_result_capabilities", "Asks only for the inputs whose capabilities this request declared"),
			h: gatherTool([]question{
				samplingQuestion("greeting", "Write a short greeting.", 50),
				nameQuestion("user_name"),
				rootsQuestion("client_roots"),
			}, askDeclared, func(a map[string]string) string {
				if len(a) == 0 {
					return "The client declared no capability to ask with; nothing was asked."
				}
				return "Inputs received for the declared capabilities: " + summary(a)
			}),
		},
		{
			// Asks by sampling whatever the client declared: the framework's
			// capability gate answers -32021 when sampling is undeclared.
			tool: tool("test_missing_capability", "Needs the client's sampling capability; without it the call fails with -32021"),
			h: gatherTool([]question{samplingQuestion("completion", "Say hello.", 20)}, askAll,
				func(a map[string]string) string { return "Sampling answered: " + a["completion"] }),
		},
		{
			tool: mrtr.Tool{
				Name:        "test_sampling",
				Description: "Asks the client's model to answer a prompt by sampling",
				InputSchema: json.RawMessage(`{"type":"object","properties":{"prompt":{"type":"string","description":"The prompt to send to the model"}},"required":["prompt"]}`),
			},
			h: mrtr.HandlerFunc(samplePrompt),
		},
		{
			tool: mrtr.Tool{
				Name:        "test_elicitation",
				Description: "Asks the user for a username and an email by elicitation",
				InputSchema: json.RawMessage(`{"type":"object","properties":{"message":{"type":"string","description":"The message to show the user"}},"required":["message"]}`),
			},
			h: mrtr.HandlerFunc(elicitAccount),
		},
		{
			tool: mrtr.Tool{
				Name:        "test_elicitation_twin",
				Description: "Same as test_elicitation under another name: the target of cross-tool requestState replays",
				InputSchema: json.RawMessage(`{"type":"object","properties":{"message":{"type":"string","description":"The message to show the user"}},"required":["message"]}`),
			},
			h: mrtr.HandlerFunc(elicitAccount),
		},
		{
			tool: tool("test_elicitation_sep1034_defaults", "Elicits a form whose fields carry default values (SEP-1034)"),
			h: gatherTool([]question{{
				key: "defaults",
				req: formRequest("Please review and update the form fields with defaults", nil,
					"name", `{"type":"string","description":"User name","default":"John Doe"}`,
					"age", `{"type":"integer","description":"User age","default":30}`,
					"score", `{"type":"number","description":"User score","default":95.5}`,
					"status", `{"type":"string","description":"User status","enum":["active","inactive","pending"],"default":"active"}`,
					"verified", `{"type":"boolean","description":"Verification status","default":true}`,
				),
				declared: hasForm,
				answer:   formAnswer("defaults", ""),
			}}, askAll, func(a map[string]string) string { return "Elicitation completed: " + a["defaults"] }),
		},
		{
			tool: tool("test_elicitation_sep1330_enums", "Elicits a form with every enum schema variant (SEP-1330)"),
			h: gatherTool([]question{{
				key: "enums",
				req: formRequest("Please select options from the enum fields", nil,
					"untitledSingle", `{"type":"string","description":"Select one option","enum":["option1","option2","option3"]}`,
					"titledSingle", `{"type":"string","description":"Select one option with titles","oneOf":[{"const":"value1","title":"First Option"},{"const":"value2","title":"Second Option"},{"const":"value3","title":"Third Option"}]}`,
					"legacyEnum", `{"type":"string","description":"Select one option (legacy)","enum":["opt1","opt2","opt3"],"enumNames":["Option One","Option Two","Option Three"]}`,
					"untitledMulti", `{"type":"array","description":"Select multiple options","minItems":1,"maxItems":3,"items":{"type":"string","enum":["option1","option2","option3"]}}`,
					"titledMulti", `{"type":"array","description":"Select multiple options with titles","minItems":1,"maxItems":3,"items":{"anyOf":[{"const":"value1","title":"First Choice"},{"const":"value2","title":"Second Choice"},{"const":"value3","title":"Third Choice"}]}}`,
				),
				declared: hasForm,
				answer:   formAnswer("enums", ""),
			}}, askAll, func(a map[string]string) string { return "Elicitation completed: " + a["enums"] }),
		},
	}
	for _, e := range entries {
		if err := f.srv.AddTool(e.tool, e.h, e.opts...); err != nil {
			return err
		}
	}
	return nil
}

// nameRequest is the question of test_input_required_result_elicitation.
var nameRequest = nameQuestion("user_name").req

// elicitName completes once the request carries an accepted user_name
// answer with a name, and asks for it otherwise.
func elicitName(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
	if a, ok := req.Responses.Elicitation("user_name"); ok && a.Accepted() {
		if name, _ := a.Content["name"].(string); name != "" {
			return textResult("Hello, " + name + "!"), nil
		}
	}
	return mrtr.Ask("user_name", nameRequest), nil
}

// samplePrompt sends the prompt argument to the client's model.
func samplePrompt(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
	var args struct {
		Prompt string `json:"prompt"`
	}
	if err := json.Unmarshal(req.Arguments, &args); err != nil || args.Prompt == "" {
		return mrtr.ErrorResult("prompt is required and must be a non-empty string"), nil
	}
	return gather(req, []question{samplingQuestion("llm", args.Prompt, 100)}, askAll,
		func(a map[string]string) (mrtr.Result, error) {
			return textResult("LLM response: " + a["llm"]), nil
		})
}

// elicitAccount asks the user for a username and an email.
func elicitAccount(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
	var args struct {
		Message string `json:"message"`
	}
	if err := json.Unmarshal(req.Arguments, &args); err != nil || args.Message == "" {
		return mrtr.ErrorResult("message is required and must be a non-empty string"), nil
	}
	q := question{
		key: "account",
		req: formRequest(args.Message, []string{"username", "email"},
			"username", `{"type":"string","description":"User's response"}`,
			"email", `{"type":"string","description":"User's email address","format":"email"}`),
		declared: hasForm,
		answer:   formAnswer("account", ""),
	}
	return gather(req, []question{q}, askAll, func(a map[string]string) (mrtr.Result, error) {
		return textResult("User response: " + a["account"]), nil
	})
}
