package interop_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const modernVersion = "2026-07-28"

// Answers the client gives when the server asks for input.
const (
	answerName     = "Alice"
	answerColor    = "blue"
	answerSampling = "The capital of France is Paris."
	answerRootURI  = "file:///tmp/mrtrkit-interop"
	answerRootName = "interop root"
)

// inputLog records every embedded request the go-sdk client fulfilled.
type inputLog struct {
	mu       sync.Mutex
	elicit   []*mcp.ElicitParams
	sampling []*mcp.CreateMessageParams
}

func (l *inputLog) elicitCount() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.elicit)
}

func (l *inputLog) samplingCount() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.sampling)
}

// session is a connected go-sdk client plus what it saw.
type session struct {
	cs     *mcp.ClientSession
	wire   *recorder
	inputs *inputLog
}

// clientConfig selects a client variant.
type clientConfig struct {
	// samplingOnly declares (and handles) sampling alone: no elicitation,
	// no roots.
	samplingOnly bool
	// manual turns off the SDK's automatic input_required loop, so the
	// test drives the rounds itself.
	manual bool
	// endpoint is the server's MCP endpoint; fixtureURL when empty.
	endpoint string
}

// connect opens a go-sdk client session over Streamable HTTP at protocol
// version 2026-07-28, with elicitation, sampling and roots support.
func connect(t *testing.T) *session {
	t.Helper()
	return connectWith(t, clientConfig{})
}

func connectWith(t *testing.T, cfg clientConfig) *session {
	t.Helper()
	inputs := &inputLog{}
	opts := &mcp.ClientOptions{
		// roots:{} (the 2026-07-28 shape, no listChanged); the sampling and
		// elicitation capabilities are added by the SDK because handlers are set.
		Capabilities: &mcp.ClientCapabilities{RootsV2: &mcp.RootCapabilities{}},
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			inputs.mu.Lock()
			inputs.elicit = append(inputs.elicit, req.Params)
			inputs.mu.Unlock()
			return &mcp.ElicitResult{Action: "accept", Content: fillForm(req.Params.RequestedSchema)}, nil
		},
		CreateMessageHandler: func(_ context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			inputs.mu.Lock()
			inputs.sampling = append(inputs.sampling, req.Params)
			inputs.mu.Unlock()
			return &mcp.CreateMessageResult{
				Role:       "assistant",
				Content:    &mcp.TextContent{Text: answerSampling},
				Model:      "interop-model",
				StopReason: "endTurn",
			}, nil
		},
	}
	if cfg.samplingOnly {
		opts.Capabilities = &mcp.ClientCapabilities{}
		opts.ElicitationHandler = nil
	}
	if cfg.manual {
		opts.MultiRoundTrip = &mcp.MultiRoundTripOptions{Disabled: true}
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "mrtrkit-interop-go", Version: "1.0.0"}, opts)
	if !cfg.samplingOnly {
		client.AddRoots(&mcp.Root{URI: answerRootURI, Name: answerRootName})
	}

	wire := newRecorder()
	endpoint := cfg.endpoint
	if endpoint == "" {
		endpoint = fixtureURL
	}
	transport := &mcp.StreamableClientTransport{
		Endpoint:             endpoint,
		HTTPClient:           &http.Client{Transport: wire, Timeout: 30 * time.Second},
		DisableStandaloneSSE: true,
		MaxRetries:           -1,
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, transport, &mcp.ClientSessionOptions{ProtocolVersion: modernVersion})
	require.NoError(t, err, "Connect")
	t.Cleanup(func() { cs.Close() })
	return &session{cs: cs, wire: wire, inputs: inputs}
}

// fillForm answers a form elicitation: every property of the requested
// schema gets a value of its type, with fixed answers for the properties
// the fixture tools ask about.
func fillForm(schema any) map[string]any {
	var s struct {
		Properties map[string]struct {
			Type string `json:"type"`
		} `json:"properties"`
	}
	data, _ := json.Marshal(schema)
	_ = json.Unmarshal(data, &s)
	content := map[string]any{}
	for name, p := range s.Properties {
		switch {
		case name == "name":
			content[name] = answerName
		case name == "color":
			content[name] = answerColor
		case p.Type == "boolean":
			content[name] = true
		case p.Type == "integer" || p.Type == "number":
			content[name] = 42
		default:
			content[name] = "interop " + name
		}
	}
	return content
}

func callTool(t *testing.T, s *session, name string) (*mcp.CallToolResult, []*exchange) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	mark := s.wire.mark()
	res, err := s.cs.CallTool(ctx, &mcp.CallToolParams{Name: name})
	exs := s.wire.since(mark)
	if err != nil {
		dumpWire(t, exs)
		require.FailNow(t, fmt.Sprintf("CallTool(%s): %v", name, err))
	}
	return res, exs
}

func textOf(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	require.Falsef(t, res.IsError, "tool result has isError=true: %s", contentJSON(res.Content))
	text, ok := joinText(res.Content)
	require.Truef(t, ok, "tool result has no text content: %s", contentJSON(res.Content))
	return text
}

// joinText joins the text items of c with newlines, and reports whether
// there was any.
func joinText(c []mcp.Content) (string, bool) {
	var parts []string
	for _, item := range c {
		if tc, ok := item.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n"), len(parts) > 0
}

func contentJSON(c []mcp.Content) string {
	data, _ := json.Marshal(c)
	return string(data)
}

func dumpWire(t *testing.T, exs []*exchange) {
	t.Helper()
	for i, ex := range exs {
		t.Logf("exchange %d: %s %s\n  headers:  %v\n  request:  %s\n  response: HTTP %d %s\n  %s", i, ex.HTTPMethod, ex.Method, ex.Header, clip(ex.RawRequest), ex.Status, ex.ContentType, clip(ex.RawResponse))
	}
}

func clip(b []byte) string {
	const max = 2000
	if len(b) > max {
		return string(b[:max]) + fmt.Sprintf("... (%d bytes)", len(b))
	}
	return string(b)
}

// round is one tools/call leg of an MRTR flow as seen on the wire.
type round struct {
	ID                 string
	InputResponseKeys  []string
	RequestState       *string // as sent by the client
	ResultType         string
	InputRequests      map[string]string // key -> method, as answered by the server
	ReturnedState      *string           // requestState the server answered with
	ProtocolHeader     string
	MetaVersion        string
	HasMetaCapabilties bool
}

// rounds returns the tools/call legs of exs.
func rounds(t *testing.T, exs []*exchange) []round {
	t.Helper()
	return roundsOf(t, exs, "tools/call")
}

// roundsOf returns the legs of exs that carry method.
func roundsOf(t *testing.T, exs []*exchange, method string) []round {
	t.Helper()
	var out []round
	for _, ex := range exs {
		if ex.Method != method {
			continue
		}
		var p struct {
			InputResponses map[string]json.RawMessage `json:"inputResponses"`
			RequestState   *string                    `json:"requestState"`
			Meta           map[string]json.RawMessage `json:"_meta"`
		}
		require.NoErrorf(t, json.Unmarshal(ex.Params, &p), "decoding %s params %s", method, ex.Params)
		r := round{ID: string(ex.ID), RequestState: p.RequestState, ProtocolHeader: ex.Header.Get("Mcp-Protocol-Version")}
		for k := range p.InputResponses {
			r.InputResponseKeys = append(r.InputResponseKeys, k)
		}
		sort.Strings(r.InputResponseKeys)
		_ = json.Unmarshal(p.Meta["io.modelcontextprotocol/protocolVersion"], &r.MetaVersion)
		_, r.HasMetaCapabilties = p.Meta["io.modelcontextprotocol/clientCapabilities"]
		if res := ex.result(); res != nil {
			r.ResultType, _ = res["resultType"].(string)
			if st, ok := res["requestState"].(string); ok {
				r.ReturnedState = &st
			}
			if irs, ok := res["inputRequests"].(map[string]any); ok {
				r.InputRequests = map[string]string{}
				for k, v := range irs {
					m, _ := v.(map[string]any)
					r.InputRequests[k], _ = m["method"].(string)
				}
			}
		}
		out = append(out, r)
	}
	return out
}

// checkRounds verifies the MRTR contract on the recorded legs of one call:
// every leg is a modern request, each retry uses a fresh JSON-RPC id, echoes
// the previous requestState byte for byte (or sends none when none was
// given), and answers exactly the keys the server asked for.
func checkRounds(t *testing.T, rs []round, wantLegs int) {
	t.Helper()
	require.Falsef(t, len(rs) != wantLegs, "legs = %d, want %d: %+v", len(rs), wantLegs, rs)
	ids := map[string]bool{}
	for i, r := range rs {
		assert.Falsef(t, r.ProtocolHeader != modernVersion || r.MetaVersion != modernVersion || !r.HasMetaCapabilties, "leg %d: header version %q, _meta version %q, _meta clientCapabilities present %v", i, r.ProtocolHeader, r.MetaVersion, r.HasMetaCapabilties)
		assert.Falsef(t, ids[r.ID], "leg %d reuses JSON-RPC id %s", i, r.ID)
		ids[r.ID] = true
		last := i == len(rs)-1
		assert.Falsef(t, last && r.ResultType != "complete", "final leg resultType = %q, want complete", r.ResultType)
		assert.Falsef(t, !last && r.ResultType != "input_required", "leg %d resultType = %q, want input_required", i, r.ResultType)
		if i == 0 {
			assert.Falsef(t, r.RequestState != nil || len(r.InputResponseKeys) != 0, "first leg carries retry fields: state %v, inputResponses %v", r.RequestState, r.InputResponseKeys)
			continue
		}
		prev := rs[i-1]
		switch {
		case prev.ReturnedState == nil && r.RequestState != nil:
			assert.Fail(t, fmt.Sprintf("leg %d sends requestState %q but none was issued", i, *r.RequestState))
		case prev.ReturnedState != nil && (r.RequestState == nil || *r.RequestState != *prev.ReturnedState):
			assert.Fail(t, fmt.Sprintf("leg %d does not echo requestState %q exactly (sent %v)", i, *prev.ReturnedState, r.RequestState))
		}
		want := slices.Sorted(func(yield func(string) bool) {
			for k := range prev.InputRequests {
				if !yield(k) {
					return
				}
			}
		})
		assert.Truef(t, slices.Equal(r.InputResponseKeys, want), "leg %d answers keys %v, server asked for %v", i, r.InputResponseKeys, want)
	}
}

func TestConnectNegotiatesModernProtocol(t *testing.T) {
	s := connect(t)
	init := s.cs.InitializeResult()
	require.Falsef(t, init == nil || init.ProtocolVersion != modernVersion, "negotiated version = %+v, want %s", init, modernVersion)
	exs := s.wire.snapshot()
	if len(exs) == 0 || exs[0].Method != "server/discover" {
		dumpWire(t, exs)
		require.FailNow(t, "first message is not server/discover")
	}
	for _, ex := range exs {
		if ex.Method == "initialize" || ex.Method == "notifications/initialized" {
			dumpWire(t, exs)
			require.FailNow(t, fmt.Sprintf("client fell back to the legacy handshake (%s)", ex.Method))
		}
	}
	res := exs[0].result()
	if res == nil || res["resultType"] != "complete" {
		dumpWire(t, exs[:1])
		require.FailNow(t, "server/discover result lacks resultType complete")
	}
	assert.Falsef(t, init.ServerInfo == nil || init.ServerInfo.Name == "", "no serverInfo in the discover result _meta")
	t.Logf("server %+v, capabilities tools=%v", init.ServerInfo, init.Capabilities.Tools != nil)
}

// Tools the interop tests call; tools/list must show all of them.
var requiredTools = []string{
	"test_simple_text",
	"test_input_required_result_elicitation",
	"test_input_required_result_sampling",
	"test_input_required_result_multi_round",
	"test_input_required_result_multiple_inputs",
}

func TestListTools(t *testing.T) {
	s := connect(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	mark := s.wire.mark()
	res, err := s.cs.ListTools(ctx, nil)
	require.NoError(t, err, "ListTools")
	names := map[string]bool{}
	for _, tool := range res.Tools {
		names[tool.Name] = true
	}
	for _, want := range requiredTools {
		assert.Truef(t, names[want], "tools/list lacks %s", want)
	}
	exs := s.wire.since(mark)
	require.Falsef(t, len(exs) != 1 || exs[0].Method != "tools/list", "expected one tools/list exchange, got %d", len(exs))
	wireRes := exs[0].result()
	if wireRes["resultType"] != "complete" || wireRes["cacheScope"] == nil || wireRes["ttlMs"] == nil {
		assert.Fail(t, fmt.Sprintf("tools/list result lacks resultType/ttlMs/cacheScope: %s", exs[0].RawResponse))
	}
	t.Logf("%d tools listed", len(res.Tools))
}

func TestCallSimpleTool(t *testing.T) {
	s := connect(t)
	res, exs := callTool(t, s, "test_simple_text")
	if got, want := textOf(t, res), "This is a simple text response for testing."; got != want {
		assert.Fail(t, fmt.Sprintf("text = %q, want %q", got, want))
	}
	checkRounds(t, rounds(t, exs), 1)
}

// callRounds calls tool on s and checks that the final text holds each of
// want and that the call took legs tools/call legs, which it returns.
func callRounds(t *testing.T, s *session, tool string, legs int, want ...string) []round {
	t.Helper()
	res, exs := callTool(t, s, tool)
	text := textOf(t, res)
	for _, w := range want {
		assert.Containsf(t, text, w, "final text %q does not contain %q", text, w)
	}
	rs := rounds(t, exs)
	checkRounds(t, rs, legs)
	t.Logf("final text: %q", text)
	return rs
}

// wantAsked checks that leg i of rs asked exactly want (key -> method).
func wantAsked(t *testing.T, rs []round, i int, want map[string]string) {
	t.Helper()
	assert.Equalf(t, want, rs[i].InputRequests, "round %d inputRequests", i+1)
}

func TestMRTRElicitation(t *testing.T) {
	s := connect(t)
	rs := callRounds(t, s, "test_input_required_result_elicitation", 2, answerName)
	wantAsked(t, rs, 0, map[string]string{"user_name": "elicitation/create"})
	assert.Equal(t, 1, s.inputs.elicitCount(), "elicitation handler runs")
}

func TestMRTRSampling(t *testing.T) {
	s := connect(t)
	rs := callRounds(t, s, "test_input_required_result_sampling", 2, answerSampling)
	wantAsked(t, rs, 0, map[string]string{"capital_question": "sampling/createMessage"})
	require.Equal(t, 1, s.inputs.samplingCount(), "sampling handler runs")
	p := s.inputs.sampling[0]
	assert.Falsef(t, len(p.Messages) == 0 || p.MaxTokens <= 0, "sampling request has no messages or maxTokens: %+v", p)
}

func TestMRTRMultiRound(t *testing.T) {
	s := connect(t)
	rs := callRounds(t, s, "test_input_required_result_multi_round", 3, answerName, answerColor)
	wantAsked(t, rs, 0, map[string]string{"step1": "elicitation/create"})
	wantAsked(t, rs, 1, map[string]string{"step2": "elicitation/create"})
	if rs[0].ReturnedState == nil || rs[1].ReturnedState == nil || *rs[0].ReturnedState == *rs[1].ReturnedState {
		assert.Fail(t, fmt.Sprintf("requestState did not change between rounds: %v -> %v", rs[0].ReturnedState, rs[1].ReturnedState))
	}
	assert.Equal(t, 2, s.inputs.elicitCount(), "elicitation handler runs")
}

func TestMRTRMultipleInputs(t *testing.T) {
	s := connect(t)
	rs := callRounds(t, s, "test_input_required_result_multiple_inputs", 2, answerName, answerSampling, answerRootURI)
	wantAsked(t, rs, 0, map[string]string{
		"user_name":    "elicitation/create",
		"greeting":     "sampling/createMessage",
		"client_roots": "roots/list",
	})
	assert.Falsef(t, rs[0].ReturnedState == nil || *rs[0].ReturnedState == "", "round 1 carries no requestState")
	assert.Falsef(t, s.inputs.elicitCount() != 1 || s.inputs.samplingCount() != 1, "handlers ran elicit=%d sampling=%d, want 1 each", s.inputs.elicitCount(), s.inputs.samplingCount())
}

func TestMRTRListRoots(t *testing.T) {
	rs := callRounds(t, connect(t), "test_input_required_result_list_roots", 2, answerRootURI)
	wantAsked(t, rs, 0, map[string]string{"client_roots": "roots/list"})
}

func TestMRTRRequestState(t *testing.T) {
	rs := callRounds(t, connect(t), "test_input_required_result_request_state", 2, "state-ok")
	if rs[0].InputRequests["confirm"] != "elicitation/create" || rs[0].ReturnedState == nil || *rs[0].ReturnedState == "" {
		assert.Fail(t, fmt.Sprintf("round 1: inputRequests %v, requestState %v; want confirm elicitation and a state", rs[0].InputRequests, rs[0].ReturnedState))
	}
}

// TestMRTRPrompt runs an MRTR flow on prompts/get rather than tools/call.
func TestMRTRPrompt(t *testing.T) {
	s := connect(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	mark := s.wire.mark()
	res, err := s.cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "test_input_required_result_prompt"})
	exs := s.wire.since(mark)
	if err != nil {
		dumpWire(t, exs)
		require.FailNow(t, fmt.Sprintf("GetPrompt: %v", err))
	}
	require.NotEqualValuesf(t, 0, len(res.Messages), "prompt has no messages")
	var texts []string
	for _, m := range res.Messages {
		if tc, ok := m.Content.(*mcp.TextContent); ok {
			texts = append(texts, tc.Text)
		}
	}
	joined := strings.Join(texts, "\n")
	assert.Containsf(t, joined, "interop context", "prompt messages %q do not carry the elicited context", joined)
	rs := roundsOf(t, exs, "prompts/get")
	checkRounds(t, rs, 2)
	wantAsked(t, rs, 0, map[string]string{"user_context": "elicitation/create"})
}

// TestMRTRAsksOnlyDeclaredCapabilities uses a client that declares sampling
// alone: the server must not ask it for elicitation or roots.
func TestMRTRAsksOnlyDeclaredCapabilities(t *testing.T) {
	s := connectWith(t, clientConfig{samplingOnly: true})
	rs := callRounds(t, s, "test_input_required_result_capabilities", 2)
	wantAsked(t, rs, 0, map[string]string{"greeting": "sampling/createMessage"})
	assert.Falsef(t, s.inputs.elicitCount() != 0 || s.inputs.samplingCount() != 1, "handlers ran elicit=%d sampling=%d, want 0 and 1", s.inputs.elicitCount(), s.inputs.samplingCount())
}

// TestManualRoundsAndTamperedState drives the rounds by hand with the SDK's
// automatic loop turned off: a retry carrying an altered requestState must
// be refused with a JSON-RPC error, and the untouched one must complete.
func TestManualRoundsAndTamperedState(t *testing.T) {
	s := connectWith(t, clientConfig{manual: true})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	const tool = "test_input_required_result_tampered_state"

	first, err := s.cs.CallTool(ctx, &mcp.CallToolParams{Name: tool})
	require.NoError(t, err, "round 1")
	require.Falsef(t, !first.NeedsInput() || first.RequestState == "", "round 1: NeedsInput=%v requestState=%q, want input_required with a state", first.NeedsInput(), first.RequestState)
	ask, ok := first.InputRequests["confirm"].(*mcp.ElicitParams)
	require.Falsef(t, !ok || len(first.InputRequests) != 1, "round 1 inputRequests = %#v, want confirm elicitation", first.InputRequests)
	answers := mcp.InputResponseMap{"confirm": &mcp.ElicitResult{Action: "accept", Content: fillForm(ask.RequestedSchema)}}

	// Flip one character in the middle of the state.
	st := []byte(first.RequestState)
	i := len(st) / 2
	if st[i] == 'A' {
		st[i] = 'B'
	} else {
		st[i] = 'A'
	}
	for _, bad := range []string{first.RequestState + "-TAMPERED", string(st)} {
		mark := s.wire.mark()
		res, err := s.cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, InputResponses: answers, RequestState: bad})
		if err == nil {
			dumpWire(t, s.wire.since(mark))
			require.FailNow(t, fmt.Sprintf("tampered state %q accepted: NeedsInput=%v content=%s", bad, res.NeedsInput(), contentJSON(res.Content)))
		}
		t.Logf("tampered state refused: %v", err)
	}

	final, err := s.cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, InputResponses: answers, RequestState: first.RequestState})
	require.NoError(t, err, "round 2 with the untouched state")
	require.Falsef(t, final.NeedsInput(), "round 2 still needs input: %#v", final.InputRequests)
	t.Logf("final text: %q", textOf(t, final))
}
