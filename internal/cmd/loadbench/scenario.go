package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/mrtrkit/mrtrkit/client"
	"github.com/mrtrkit/mrtrkit/discover"
	"github.com/mrtrkit/mrtrkit/internal/wire"
	"github.com/mrtrkit/mrtrkit/mrtr"
	"github.com/mrtrkit/mrtrkit/state"
	"github.com/mrtrkit/mrtrkit/transport/streamablehttp"
)

// scenario is one server configuration and the request that measures it.
type scenario struct {
	name string
	// tool is the tool the measured request calls.
	tool string
	// caps is the clientCapabilities object the requests declare.
	caps string
	// retry marks a measured request that is the retry round of a
	// multi-round call: it carries the requestState of a first round that
	// the load generator obtains from the server before measuring, and an
	// answer to the question that round asked.
	retry bool
	// want is a fragment every good response body contains.
	want string
	// budget is the largest allowed ratio of server CPU per request to the
	// bare handler's; 0 for the bare handler itself.
	budget float64
	// what says in a few words what the server does per request.
	what string
}

// scenarios are the servers measured, in the order they run. Each runs in
// a server process of its own.
var scenarios = []scenario{
	{
		name: "bare", tool: "echo", caps: `{}`,
		want: `"resultType":"complete"`,
		what: "net/http + encoding/json: decode the request, encode a text result",
	},
	{
		name: "tools-call", tool: "echo", caps: `{}`,
		want:   `"text":"hello"`,
		budget: 1.5,
		what:   "mrtrkit tools/call, one tool returning a text result",
	},
	{
		name: "mrtr-complete", tool: "greet", caps: `{"elicitation":{}}`, retry: true,
		want:   `"text":"Hello, Ada!"`,
		budget: 2.0,
		what:   "retry round: open requestState (AEAD), decode the answer, complete",
	},
	{
		name: "mrtr-input", tool: "survey", caps: `{"elicitation":{}}`, retry: true,
		want:   `"resultType":"input_required"`,
		budget: 1.5,
		what:   "retry round: open requestState, decode the answer, ask again and seal",
	},
	{
		name: "mrtr-first", tool: "greet", caps: `{"elicitation":{}}`,
		want:   `"resultType":"input_required"`,
		budget: 2.0,
		what:   "first round: the tool asks a question, the state is sealed (no open)",
	},
}

func scenarioByName(name string) (scenario, bool) {
	for _, s := range scenarios {
		if s.name == name {
			return s, true
		}
	}
	return scenario{}, false
}

// callBody is a tools/call request body, rendered with the client's raw
// layer. Its _meta holds only the protocol version and caps, not the
// clientInfo RawMeta would add, so the bytes measured stay those of
// earlier runs. requestState and answers are added to the params when not
// empty; answers is the inputResponses object.
func callBody(tool, caps, requestState, answers string) []byte {
	params := []client.RawMember{
		{Name: "name", Value: client.RawString(tool)},
		{Name: "arguments", Value: json.RawMessage(`{"text":"hello"}`)},
		{Name: "_meta", Value: client.RawObject(
			client.RawMember{Name: wire.MetaProtocolVersion, Value: client.RawString(client.LatestVersion)},
			client.RawMember{Name: wire.MetaClientCapabilities, Value: json.RawMessage(caps)},
		)},
	}
	if requestState != "" {
		params = append(params, client.RawMember{Name: "requestState", Value: client.RawString(requestState)})
	}
	if answers != "" {
		params = append(params, client.RawMember{Name: "inputResponses", Value: json.RawMessage(answers)})
	}
	return client.RawRequestBody(1, "tools/call", client.RawObject(params...))
}

// nameAnswer answers the "name" question of the greet and survey tools.
const nameAnswer = `{"name":{"action":"accept","content":{"name":"Ada"}}}`

// callHeader is every header a 2026-07-28 client sends with a tools/call.
func callHeader(tool string) http.Header {
	return client.RawHeader(client.LatestVersion, "tools/call", tool)
}

// newHandler returns the HTTP handler a server process serves for the
// named scenario.
func newHandler(name string) (http.Handler, error) {
	if name == "bare" {
		return http.HandlerFunc(bareHandler), nil
	}
	if _, ok := scenarioByName(name); !ok {
		return nil, fmt.Errorf("unknown scenario %q", name)
	}
	return newMRTRHandler()
}

// The bare handler's request and response: just enough of JSON-RPC and
// tools/call to decode the benchmark's request and answer it.
type bareRequest struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  struct {
		Name      string `json:"name"`
		Arguments struct {
			Text string `json:"text"`
		} `json:"arguments"`
		Meta json.RawMessage `json:"_meta"`
	} `json:"params"`
}

type bareResponse struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  bareResult      `json:"result"`
}

type bareResult struct {
	ResultType string        `json:"resultType"`
	Content    []bareContent `json:"content"`
}

type bareContent struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// bareHandler is the baseline: a plain net/http handler that decodes one
// JSON-RPC request with encoding/json and encodes a small tools/call-like
// result.
func bareHandler(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	var req bareRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Method != "tools/call" {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	resp := bareResponse{
		JSONRPC: "2.0",
		ID:      req.ID,
		Result: bareResult{
			ResultType: "complete",
			Content:    []bareContent{{Type: "text", Text: req.Params.Arguments.Text}},
		},
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(&resp)
}

// stateSecret is the fixed key of the server's key ring, so that every
// server process seals and opens with the same key, as replicas would.
var stateSecret = []byte("loadbench fixed state key, 32+ bytes long")

// newMRTRHandler builds the mrtrkit server of the mrtrkit scenarios: one
// AEAD codec with a fixed key ring and three tools.
//
//   - echo returns its text argument.
//   - greet asks for a name, then greets: its retry opens one state and
//     completes.
//   - survey asks for a name, then for a confirmation, then completes: its
//     first retry opens one state and seals the next.
func newMRTRHandler() (http.Handler, error) {
	ring, err := state.NewKeyRing(state.Key{ID: "lb1", Secret: stateSecret})
	if err != nil {
		return nil, err
	}
	// A long TTL keeps the pre-obtained state valid however long a run
	// takes; the TTL does not change what sealing or opening costs.
	codec, err := state.NewAEAD(ring, state.WithTTL(2*time.Hour))
	if err != nil {
		return nil, err
	}
	quiet := slog.New(slog.DiscardHandler)
	srv, err := mrtr.NewServer(discover.Description{
		Server: discover.Implementation{Name: "loadbench", Version: "1.0.0"},
	}, mrtr.WithCodec(codec), mrtr.WithLogger(quiet))
	if err != nil {
		return nil, err
	}
	schema := json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}}}`)
	text := func(s string) *mrtr.CallToolResult {
		return &mrtr.CallToolResult{Content: []mrtr.Content{mrtr.Text(s)}}
	}
	form := func(msg, prop, typ string) *mrtr.ElicitRequest {
		return &mrtr.ElicitRequest{
			Message: msg,
			RequestedSchema: &mrtr.ElicitSchema{
				Type:       "object",
				Properties: map[string]json.RawMessage{prop: json.RawMessage(`{"type":"` + typ + `"}`)},
				Required:   []string{prop},
			},
		}
	}
	tools := []struct {
		name string
		h    mrtr.HandlerFunc
	}{
		{"echo", func(_ context.Context, req *mrtr.Request) (mrtr.Result, error) {
			var args struct{ Text string }
			if err := json.Unmarshal(req.Arguments, &args); err != nil {
				return mrtr.ErrorResult("arguments: " + err.Error()), nil
			}
			return text(args.Text), nil
		}},
		{"greet", func(_ context.Context, req *mrtr.Request) (mrtr.Result, error) {
			if ans, ok := req.Responses.Elicitation("name"); ok && ans.Accepted() {
				name, _ := ans.Content["name"].(string)
				return text("Hello, " + name + "!"), nil
			}
			return mrtr.Ask("name", form("What is your name?", "name", "string")), nil
		}},
		{"survey", func(_ context.Context, req *mrtr.Request) (mrtr.Result, error) {
			if ans, ok := req.Responses.Elicitation("confirm"); ok {
				return text("confirmed=" + string(ans.Action) + " for " + string(req.State)), nil
			}
			if ans, ok := req.Responses.Elicitation("name"); ok && ans.Accepted() {
				name, _ := ans.Content["name"].(string)
				ir := mrtr.Ask("confirm", form("Proceed as "+name+"?", "sure", "boolean"))
				ir.State = []byte(name)
				return ir, nil
			}
			return mrtr.Ask("name", form("What is your name?", "name", "string")), nil
		}},
	}
	for _, t := range tools {
		if err := srv.AddTool(mrtr.Tool{Name: t.name, InputSchema: schema}, t.h); err != nil {
			return nil, err
		}
	}
	return streamablehttp.New(srv, streamablehttp.WithLogger(quiet))
}
