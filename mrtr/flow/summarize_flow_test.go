package flow_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mrtrkit/mrtrkit/internal/testkit"
	"github.com/mrtrkit/mrtrkit/internal/wire"
	"github.com/mrtrkit/mrtrkit/mrtr"
	"github.com/mrtrkit/mrtrkit/mrtr/flow"
	"github.com/mrtrkit/mrtrkit/mrtr/model"
	"github.com/mrtrkit/mrtrkit/mrtr/model/openai"
	"github.com/mrtrkit/mrtrkit/mrtr/mrtrtest"
	"github.com/mrtrkit/mrtrkit/mrtr/typed"
)

var summarizeTool = mrtr.Tool{Name: "summarize_repo", Description: "Summarizes a repository."}

func summarizeServer(t *testing.T, m model.Model) (*client, *testkit.LogBuffer) {
	t.Helper()
	f, err := summarizeFlow(m)
	require.NoError(t, err)
	srv, logs := newServer(t, nil)
	require.NoError(t, typed.AddTool(srv, summarizeTool, f))
	return newClient(t, srv), logs
}

// summarizeClient returns an mrtrtest client of a sampling-mode
// summarize_repo server whose model answers with answers in turn.
func summarizeClient(t *testing.T, answers ...string) (*mrtrtest.Client, *fakeModel) {
	t.Helper()
	c, _ := summarizeServer(t, model.Client())
	m := &fakeModel{answers: answers}
	return mrtrtest.NewClient(c.srv, mrtrtest.OnSampling(m.CreateMessage)), m
}

var args = map[string]any{"path": "tide"}

func TestSummarizeSamplingMode(t *testing.T) {
	c, _ := summarizeServer(t, model.Client())

	// The first round, as it goes on the wire.
	r1, e := c.tool("summarize_repo", args, nil, "")
	require.Nil(t, e)
	assert.Equal(t, "input_required", r1.ResultType)
	assert.Equal(t, []string{"pick_files"}, r1.asked())
	pick := r1.sampling(t, "pick_files")
	assert.Contains(t, pick.Messages[0].Content[0].Text, "docs/install.md")
	assert.Equal(t, 200, pick.MaxTokens)
	assert.NotEmpty(t, r1.RequestState)

	// The whole call, with a client whose model answers each round.
	mc, m := summarizeClient(t, `["README.md","main.go"]`, "Tide predicts tides.")
	r, err := mc.CallTool(context.Background(), "summarize_repo", args)
	require.NoError(t, err)
	assert.Equal(t, [][]string{{"pick_files"}, {"summary"}}, r.Asked)
	require.Len(t, m.asked, 2)
	assert.Equal(t, pick, *m.asked[0])
	sum := m.asked[1].Messages[0].Content[0].Text
	assert.Contains(t, sum, "=== README.md ===\n# Tide", "the files chosen in round 1 were carried in the sealed state")
	assert.Contains(t, sum, "=== main.go ===")
	assert.NotContains(t, sum, "predict.go")

	assert.False(t, r.IsError)
	assert.JSONEq(t, `{"files":["README.md","main.go"],"summary":"Tide predicts tides."}`, string(r.StructuredContent))
	assert.JSONEq(t, string(r.StructuredContent), r.Text())
}

func TestSummarizeCritiqueRound(t *testing.T) {
	mc, m := summarizeClient(t, `["go.mod"]`, "A Go module.", "The Go module of Tide.")
	r, err := mc.CallTool(context.Background(), "summarize_repo", map[string]any{"path": "tide", "critique": true})
	require.NoError(t, err)
	assert.Equal(t, [][]string{{"pick_files"}, {"summary"}, {"critique"}}, r.Asked)
	require.Len(t, m.asked, 3)
	assert.Contains(t, m.asked[2].Messages[0].Content[0].Text, "A Go module.")
	assert.False(t, r.IsError)
	assert.JSONEq(t, `{"files":["go.mod"],"summary":"The Go module of Tide."}`, string(r.StructuredContent))
}

func TestSummarizePickValidation(t *testing.T) {
	bad := map[string]string{
		"not JSON":       `README.md, main.go`,
		"an object":      `{"files":["README.md"]}`,
		"four files":     `["README.md","main.go","go.mod","predict.go"]`,
		"unlisted path":  `["README.md","/etc/passwd"]`,
		"listed twice":   `["README.md","README.md"]`,
		"not strings":    `["README.md",3]`,
		"empty array":    `[]`,
		"trailing prose": `["README.md"] these are best`,
	}
	for name, answer := range bad {
		t.Run(name, func(t *testing.T) {
			c, _ := summarizeServer(t, model.Client())
			r, e := c.tool("summarize_repo", args, nil, "")
			require.Nil(t, e)
			_, e = c.tool("summarize_repo", args, map[string]any{"pick_files": modelAnswer(answer)}, r.RequestState)
			require.NotNil(t, e)
			assert.Equal(t, mrtr.CodeInvalidParams, e.Code)
			assert.Contains(t, e.Message, "pick_files")
		})
	}
}

// TestAnswersPinned checks that an answer counts only for the question
// asked under its key at the step the sealed state records.
func TestAnswersPinned(t *testing.T) {
	c, _ := summarizeServer(t, model.Client())
	r1, e := c.tool("summarize_repo", args, nil, "")
	require.Nil(t, e)

	// Round 1 asked pick_files: an answer to summary is not taken, and
	// pick_files is asked again.
	r, e := c.tool("summarize_repo", args, map[string]any{"summary": modelAnswer("forged summary")}, r1.RequestState)
	require.Nil(t, e)
	assert.Equal(t, []string{"pick_files"}, r.asked())

	r2, e := c.tool("summarize_repo", args, map[string]any{"pick_files": modelAnswer(`["README.md"]`)}, r1.RequestState)
	require.Nil(t, e)
	require.Equal(t, []string{"summary"}, r2.asked())

	// Round 2 asked summary: a new pick_files answer is ignored; the files
	// stay those of round 1.
	r3, e := c.tool("summarize_repo", args, map[string]any{
		"pick_files": modelAnswer(`["go.mod"]`),
		"summary":    modelAnswer("About tides."),
	}, r2.RequestState)
	require.Nil(t, e)
	assert.JSONEq(t, `{"files":["README.md"],"summary":"About tides."}`, string(r3.StructuredContent))
}

// TestStaleStateReplay presents round 1's state again after round 2: the
// state is valid, and the flow resumes from its position deterministically.
func TestStaleStateReplay(t *testing.T) {
	c, _ := summarizeServer(t, model.Client())
	r1, e := c.tool("summarize_repo", args, nil, "")
	require.Nil(t, e)
	pickA := map[string]any{"pick_files": modelAnswer(`["README.md","main.go"]`)}
	r2, e := c.tool("summarize_repo", args, pickA, r1.RequestState)
	require.Nil(t, e)

	// Same state, same answer: the same question as the first time.
	again, e := c.tool("summarize_repo", args, pickA, r1.RequestState)
	require.Nil(t, e)
	assert.Equal(t, r2.InputRequests, again.InputRequests)

	// Same state, another answer: the flow continues from round 1 with it.
	other, e := c.tool("summarize_repo", args, map[string]any{"pick_files": modelAnswer(`["predict.go"]`)}, r1.RequestState)
	require.Nil(t, e)
	assert.Contains(t, other.sampling(t, "summary").Messages[0].Content[0].Text, "=== predict.go ===")

	// A stale state with a later round's answer: that key was not asked
	// there, so round 1's question comes again.
	back, e := c.tool("summarize_repo", args, map[string]any{"summary": modelAnswer("x")}, r1.RequestState)
	require.Nil(t, e)
	assert.Equal(t, []string{"pick_files"}, back.asked())

	// Both branches finish from their own states.
	done, e := c.tool("summarize_repo", args, map[string]any{"summary": modelAnswer("S")}, r2.RequestState)
	require.Nil(t, e)
	assert.JSONEq(t, `{"files":["README.md","main.go"],"summary":"S"}`, string(done.StructuredContent))
	done, e = c.tool("summarize_repo", args, map[string]any{"summary": modelAnswer("P")}, other.RequestState)
	require.Nil(t, e)
	assert.JSONEq(t, `{"files":["predict.go"],"summary":"P"}`, string(done.StructuredContent))
}

func TestTamperedStateRefused(t *testing.T) {
	c, _ := summarizeServer(t, model.Client())
	r1, e := c.tool("summarize_repo", args, nil, "")
	require.Nil(t, e)
	b := []byte(r1.RequestState)
	b[len(b)/2] ^= 0x01
	if b[len(b)/2] == '-' || b[len(b)/2] == '_' {
		b[len(b)/2] = 'A'
	}
	_, e = c.tool("summarize_repo", args, map[string]any{"pick_files": modelAnswer(`["README.md"]`)}, string(b))
	require.NotNil(t, e)
	assert.Equal(t, mrtr.CodeInvalidParams, e.Code)
	assert.Equal(t, "Invalid or expired requestState", e.Message)

	// Another call's arguments: the state is bound to them.
	_, e = c.tool("summarize_repo", map[string]any{"path": "other"}, map[string]any{"pick_files": modelAnswer(`["README.md"]`)}, r1.RequestState)
	require.NotNil(t, e)
	assert.Equal(t, mrtr.CodeInvalidParams, e.Code)
}

func TestReaskOnMissingAnswerAndBudget(t *testing.T) {
	c, _ := summarizeServer(t, model.Client())
	r, e := c.tool("summarize_repo", args, nil, "")
	require.Nil(t, e)
	first := r.InputRequests

	// A retry without the answer asks the same question again.
	r, e = c.tool("summarize_repo", args, nil, r.RequestState)
	require.Nil(t, e)
	assert.Equal(t, "input_required", r.ResultType)
	assert.Equal(t, first, r.InputRequests)
	r, e = c.tool("summarize_repo", args, map[string]any{}, r.RequestState)
	require.Nil(t, e)
	assert.Equal(t, first, r.InputRequests)

	// Three rounds of questions spent: a fourth is refused, visibly.
	r, e = c.tool("summarize_repo", args, nil, r.RequestState)
	require.Nil(t, e)
	assert.Equal(t, "complete", r.ResultType)
	assert.True(t, r.IsError)
	assert.Equal(t, "this call needed to ask more than 3 times and was stopped (flow: question budget exhausted)", r.text())
	assert.Empty(t, r.RequestState)
}

func TestBudgetCountsEveryStep(t *testing.T) {
	f, err := summarizeFlow(model.Client(), flow.WithBudget(2))
	require.NoError(t, err)
	srv, _ := newServer(t, nil)
	require.NoError(t, typed.AddTool(srv, summarizeTool, f))
	m := &fakeModel{answers: []string{`["go.mod"]`, "x", `["README.md"]`, "y"}}
	c := mrtrtest.NewClient(srv, mrtrtest.OnSampling(m.CreateMessage))

	r, err := c.CallTool(context.Background(), "summarize_repo", map[string]any{"path": "tide", "critique": true})
	require.NoError(t, err)
	assert.True(t, r.IsError, "the critique round is one past the budget")
	assert.Contains(t, r.Text(), "needed to ask more than 2 times")
	assert.Equal(t, [][]string{{"pick_files"}, {"summary"}}, r.Asked)

	r, err = c.CallTool(context.Background(), "summarize_repo", args)
	require.NoError(t, err)
	assert.False(t, r.IsError, "without the critique the flow fits its budget: %s", r.Text())
}

// fakeModel answers like a model the server owns and records what it was
// asked.
type fakeModel struct {
	mu      sync.Mutex
	asked   []*mrtr.SamplingRequest
	answers []string
}

func (m *fakeModel) CreateMessage(_ context.Context, r *mrtr.SamplingRequest) (*mrtr.SamplingResult, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.asked = append(m.asked, r)
	if len(m.answers) == 0 {
		return nil, errors.New("fake model: no more answers")
	}
	a := m.answers[0]
	m.answers = m.answers[1:]
	return &mrtr.SamplingResult{Role: mrtr.RoleAssistant, Content: []mrtr.SamplingContent{{Type: "text", Text: a}}, Model: "server-model"}, nil
}

func TestSummarizeDirectMode(t *testing.T) {
	m := &fakeModel{answers: []string{`["README.md","predict.go"]`, "Tide predicts tides.", "Tide predicts ocean tides."}}
	c, _ := summarizeServer(t, m)
	c.caps = noCaps // no sampling needed: the server calls its own model

	r, e := c.tool("summarize_repo", map[string]any{"path": "tide", "critique": true}, nil, "")
	require.Nil(t, e)
	assert.Equal(t, "complete", r.ResultType, "one round")
	assert.Empty(t, r.RequestState)
	assert.JSONEq(t, `{"files":["README.md","predict.go"],"summary":"Tide predicts ocean tides."}`, string(r.StructuredContent))

	require.Len(t, m.asked, 3)
	assert.Equal(t, "You choose files. Answer with a JSON array of paths and nothing else.", m.asked[0].SystemPrompt)
	assert.Contains(t, m.asked[0].Messages[0].Content[0].Text, "Repository tide has these files:")
	assert.Contains(t, m.asked[1].Messages[0].Content[0].Text, "=== predict.go ===\npackage main")
	assert.Contains(t, m.asked[2].Messages[0].Content[0].Text, "Tide predicts tides.")

	// The same requests the client is asked in sampling mode.
	sc, _ := summarizeServer(t, model.Client())
	sr, e := sc.tool("summarize_repo", map[string]any{"path": "tide", "critique": true}, nil, "")
	require.Nil(t, e)
	want, _ := json.Marshal(m.asked[0])
	got, _ := json.Marshal(sr.sampling(t, "pick_files"))
	assert.JSONEq(t, string(want), string(got))
}

func TestSamplingModeNeedsCapability(t *testing.T) {
	c, _ := summarizeServer(t, model.Client())
	c.caps = noCaps
	_, e := c.tool("summarize_repo", args, nil, "")
	require.NotNil(t, e)
	assert.Equal(t, mrtr.CodeMissingCapability, e.Code)
}

func TestDirectModeBadModelAnswerIsInternal(t *testing.T) {
	m := &fakeModel{answers: []string{`["/etc/passwd"]`}}
	c, logs := summarizeServer(t, m)
	_, e := c.tool("summarize_repo", args, nil, "")
	require.NotNil(t, e)
	assert.Equal(t, mrtr.CodeInternalError, e.Code, "the client sent nothing wrong")
	assert.Contains(t, logs.String(), "pick_files")
}

func TestDirectModeModelFailure(t *testing.T) {
	c, _ := summarizeServer(t, model.Func(func(context.Context, *mrtr.SamplingRequest) (*mrtr.SamplingResult, error) {
		return &mrtr.SamplingResult{Role: mrtr.RoleAssistant}, nil // no content, no model
	}))
	_, e := c.tool("summarize_repo", args, nil, "")
	require.NotNil(t, e)
	assert.Equal(t, mrtr.CodeInternalError, e.Code)
}

// TestSummarizeDirectOpenAI runs the flow against the chat-completions
// adapter and a local imitation of the API.
func TestSummarizeDirectOpenAI(t *testing.T) {
	var mu sync.Mutex
	var bodies []map[string]any
	answers := []string{`["main.go"]`, "The entry point of Tide."}
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		assert.Equal(t, "/v1/chat/completions", r.URL.Path)
		assert.Equal(t, "Bearer sk-test-key-123456", r.Header.Get("Authorization"))
		var body map[string]any
		assert.NoError(t, json.NewDecoder(r.Body).Decode(&body))
		mu.Lock()
		bodies = append(bodies, body)
		a := answers[0]
		answers = answers[1:]
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{
			"model":   "gpt-test-2026",
			"choices": []any{map[string]any{"index": 0, "message": map[string]any{"role": "assistant", "content": a}, "finish_reason": "stop"}},
		})
	}))
	defer api.Close()
	oc, err := openai.New(openai.Config{BaseURL: api.URL + "/v1", APIKey: "sk-test-key-123456", Model: "gpt-test"})
	require.NoError(t, err)

	c, _ := summarizeServer(t, oc)
	c.caps = noCaps
	r, e := c.tool("summarize_repo", args, nil, "")
	require.Nil(t, e)
	assert.Equal(t, "complete", r.ResultType)
	assert.JSONEq(t, `{"files":["main.go"],"summary":"The entry point of Tide."}`, string(r.StructuredContent))

	require.Len(t, bodies, 2)
	msgs := bodies[0]["messages"].([]any)
	assert.Equal(t, map[string]any{"role": "system", "content": "You choose files. Answer with a JSON array of paths and nothing else."}, msgs[0])
	assert.Equal(t, "user", msgs[1].(map[string]any)["role"])
	assert.Equal(t, "gpt-test", bodies[0]["model"])
	assert.Equal(t, float64(200), bodies[0]["max_tokens"])
	assert.True(t, strings.Contains(bodies[1]["messages"].([]any)[0].(map[string]any)["content"].(string), "=== main.go ==="))
}

// TestFlowChangedBetweenRounds presents a state sealed by one version of a
// flow to a replica running another (same keys, same tool).
func TestFlowChangedBetweenRounds(t *testing.T) {
	codec := testkit.FreshCodec(t)
	f1, err := summarizeFlow(model.Client())
	require.NoError(t, err)
	srv1, _ := newServer(t, codec)
	require.NoError(t, typed.AddTool(srv1, summarizeTool, f1))

	f2, err := flow.New(
		[]flow.Step[SummarizeArgs, SummarizeState]{flow.Sample("choose", askPick, usePick)},
		finishSummary)
	require.NoError(t, err)
	srv2, _ := newServer(t, codec)
	require.NoError(t, typed.AddTool(srv2, summarizeTool, f2))

	r, e := newClient(t, srv1).tool("summarize_repo", args, nil, "")
	require.Nil(t, e)
	_, e = newClient(t, srv2).tool("summarize_repo", args, map[string]any{"pick_files": modelAnswer(`["README.md"]`)}, r.RequestState)
	require.NotNil(t, e)
	assert.Equal(t, mrtr.CodeInvalidParams, e.Code)
	assert.Equal(t, "Invalid or expired requestState", e.Message)
}

func TestSummarizeSchemas(t *testing.T) {
	c, _ := summarizeServer(t, model.Client())
	raw, e := c.call(wire.MethodToolsList, nil)
	require.Nil(t, e)
	var list struct {
		Tools []struct {
			InputSchema  json.RawMessage `json:"inputSchema"`
			OutputSchema json.RawMessage `json:"outputSchema"`
		} `json:"tools"`
	}
	require.NoError(t, json.Unmarshal(raw, &list))
	require.Len(t, list.Tools, 1)
	assert.JSONEq(t, `{"type":"object","additionalProperties":false,"required":["path"],"properties":{
		"path":{"type":"string","description":"the repository to summarize","minLength":1},
		"critique":{"type":"boolean","description":"let the model critique and improve its summary"}}}`, string(list.Tools[0].InputSchema))
	assert.JSONEq(t, `{"type":"object","additionalProperties":false,"required":["files","summary"],"properties":{
		"files":{"type":["null","array"],"items":{"type":"string"},"description":"the files the summary is based on"},
		"summary":{"type":"string","description":"the summary"}}}`, string(list.Tools[0].OutputSchema))

	r, e := c.tool("summarize_repo", map[string]any{"path": 3}, nil, "")
	require.Nil(t, e)
	assert.True(t, r.IsError)
	assert.Contains(t, r.text(), "path must be a string")
}

// TestAnswersPinnedWithStaticAsks declares both keys static, so the server
// decodes answers to them on any round: the flow alone keeps each answer to
// the question it asked.
func TestAnswersPinnedWithStaticAsks(t *testing.T) {
	f, err := summarizeFlow(model.Client())
	require.NoError(t, err)
	srv, _ := newServer(t, nil)
	require.NoError(t, typed.AddTool(srv, summarizeTool, f, typed.WithRegisterOptions(mrtr.StaticAsks(map[string]mrtr.InputRequest{
		"pick_files": &mrtr.SamplingRequest{}, "summary": &mrtr.SamplingRequest{},
	}))))
	c := newClient(t, srv)
	both := map[string]any{"pick_files": modelAnswer(`["go.mod"]`), "summary": modelAnswer("forged")}

	// No state: nothing was asked yet, so no answer is taken.
	r1, e := c.tool("summarize_repo", args, both, "")
	require.Nil(t, e)
	assert.Equal(t, []string{"pick_files"}, r1.asked())

	// pick_files was asked: it is taken; summary was not asked yet, so the
	// flow asks it rather than taking the answer sent along.
	r2, e := c.tool("summarize_repo", args, both, r1.RequestState)
	require.Nil(t, e)
	assert.Equal(t, []string{"summary"}, r2.asked())

	// summary was asked: it is taken; the new pick_files is not.
	r3, e := c.tool("summarize_repo", args, map[string]any{"pick_files": modelAnswer(`["README.md"]`), "summary": modelAnswer("real")}, r2.RequestState)
	require.Nil(t, e)
	assert.JSONEq(t, `{"files":["go.mod"],"summary":"real"}`, string(r3.StructuredContent))
}
