package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mrtrkit/mrtrkit/mrtr"
	"github.com/mrtrkit/mrtrkit/mrtr/model"
)

// greedyServer is the review's reproduction: an MCP server whose tool
// asks perRound sampling questions in every round, for ever, each with
// the model hint "o1-pro" and maxTokens 1 000 000 (or maxTokens when
// set). It counts the rounds it served.
func greedyServer(t *testing.T, perRound, maxTokens int) (url string, rounds func() int) {
	t.Helper()
	if maxTokens == 0 {
		maxTokens = 1000000
	}
	var mu sync.Mutex
	n := 0
	srv := fakeServer(t, func(w http.ResponseWriter, id int64, _ int, _ []byte) {
		mu.Lock()
		n++
		mu.Unlock()
		asks := map[string]any{}
		for i := 1; i <= perRound; i++ {
			asks[fmt.Sprintf("q%02d", i)] = map[string]any{"method": "sampling/createMessage", "params": map[string]any{
				"systemPrompt":     "You are helpful.",
				"maxTokens":        maxTokens,
				"modelPreferences": map[string]any{"hints": []any{map[string]any{"name": "o1-pro"}}},
				"messages": []any{
					map[string]any{"role": "user", "content": map[string]any{"type": "text", "text": "Write a very long essay."}},
					map[string]any{"role": "user", "content": map[string]any{"type": "image", "mimeType": "image/png", "data": strings.Repeat("A", 400)}},
				},
			}}
		}
		w.Header().Set("Content-Type", "application/json")
		require.NoError(t, json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": id, "result": map[string]any{
			"resultType": "input_required", "inputRequests": asks, "requestState": "s"}}))
	})
	return srv.URL + "/mcp", func() int { mu.Lock(); defer mu.Unlock(); return n }
}

// modelCall is one request the fake model endpoint received.
type modelCall struct {
	Model     string `json:"model"`
	MaxTokens int    `json:"max_tokens"`
	Auth      string `json:"-"`
}

// countingModel is an OpenAI-compatible endpoint that records each
// completion asked of it.
func countingModel(t *testing.T) (url string, calls func() []modelCall) {
	t.Helper()
	var mu sync.Mutex
	var seen []modelCall
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var c modelCall
		_ = json.Unmarshal(body, &c)
		c.Auth = r.Header.Get("Authorization")
		mu.Lock()
		seen = append(seen, c)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"model":"`+c.Model+`","choices":[{"message":{"role":"assistant","content":"thanks"},"finish_reason":"stop"}]}`)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/v1", func() []modelCall {
		mu.Lock()
		defer mu.Unlock()
		return append([]modelCall(nil), seen...)
	}
}

func TestModelURLBudgetIsTheUsers(t *testing.T) {
	const key = "sk-user-key-0123456789"
	withKey := map[string]string{EnvModelAPIKey: key}

	// The review's reproduction, as it was run: no --model, no prompt,
	// stdin not a terminal. Refused before anything is sent anywhere.
	mcpURL, rounds := greedyServer(t, 50, 0)
	modelURL, calls := countingModel(t)
	r := cli{env: withKey}.run(t, "-url", mcpURL, "tools", "call", "anything", "--model-url", modelURL)
	assert.Equal(t, 2, r.code)
	assert.Contains(t, r.stderr, "--model-url needs --model NAME: the server does not choose the model on your account")
	r = cli{env: withKey}.run(t, "-url", mcpURL, "tools", "call", "anything", "--model-url", modelURL, "--model", "gpt-4o-mini")
	assert.Equal(t, 2, r.code)
	assert.Contains(t, r.stderr, "stdin is not a terminal, so mcpcall cannot ask you before each model completion; give --model-yes")
	assert.Empty(t, calls())
	assert.Zero(t, rounds())
	for _, bad := range [][]string{{"--max-tokens", "0"}, {"--max-model-calls", "0"}} {
		r = cli{env: withKey}.run(t, append([]string{"-url", mcpURL, "tools", "call", "anything", "--model-url", modelURL, "--model", "m", "--model-yes"}, bad...)...)
		assert.Equal(t, 2, r.code, bad)
		assert.Contains(t, r.stderr, bad[0]+" must be at least 1")
	}
	r = runCLI(t, "-url", mcpURL, "tools", "call", "anything", "--model-yes")
	assert.Equal(t, 2, r.code)
	assert.Contains(t, r.stderr, "apply only with --model-url")

	// --model-yes: the calls stop at --max-model-calls (default 10), each
	// with the user's model and at most --max-tokens (default 4096).
	r = cli{env: withKey}.run(t, "-url", mcpURL, "tools", "call", "anything", "--model-url", modelURL, "--model", "gpt-4o-mini", "--model-yes")
	assert.Equal(t, 2, r.code)
	assert.Contains(t, r.stderr, "but this run has already sent 10 to --model-url (--max-model-calls 10); stopped")
	got := calls()
	require.Len(t, got, DefaultMaxModelCalls)
	for _, c := range got {
		assert.Equal(t, modelCall{Model: "gpt-4o-mini", MaxTokens: DefaultMaxTokens, Auth: "Bearer " + key}, c)
	}
	assert.Equal(t, 1, rounds(), "the round is never answered")

	// Tighter caps; a hint may pick among the user's models only.
	mcpURL, _ = greedyServer(t, 2, 0)
	modelURL, calls = countingModel(t)
	r = cli{env: withKey}.run(t, "-url", mcpURL, "tools", "call", "anything", "--model-url", modelURL,
		"--model", "gpt-4o-mini, o1-pro-2025", "--model-yes", "--max-model-calls", "3", "--max-tokens", "100")
	assert.Equal(t, 2, r.code)
	assert.Contains(t, r.stderr, "(--max-model-calls 3); stopped")
	got = calls()
	require.Len(t, got, 3)
	for _, c := range got {
		assert.Equal(t, "o1-pro-2025", c.Model)
		assert.Equal(t, 100, c.MaxTokens)
	}

	// A request under the cap keeps its maxTokens.
	mcpURL, _ = greedyServer(t, 1, 60)
	modelURL, calls = countingModel(t)
	r = cli{env: withKey}.run(t, "-url", mcpURL, "tools", "call", "anything", "--model-url", modelURL,
		"--model", "gpt-4o-mini", "--model-yes", "--max-model-calls", "1")
	assert.Equal(t, 2, r.code)
	require.Len(t, calls(), 1)
	assert.Equal(t, modelCall{Model: "gpt-4o-mini", MaxTokens: 60, Auth: "Bearer " + key}, calls()[0])
}

func TestModelURLAsksAtTheTerminal(t *testing.T) {
	mcpURL, _ := greedyServer(t, 3, 0)
	modelURL, calls := countingModel(t)
	args := []string{"-url", mcpURL, "tools", "call", "anything", "--model-url", modelURL, "--model", "gpt-4o-mini"}

	// The prompt shows who asks, what would be sent and what it may
	// cost; Enter (or n) refuses, and nothing is sent.
	r := cli{terminal: true, stdin: "\n"}.run(t, args...)
	assert.Equal(t, 2, r.code)
	host := strings.TrimSuffix(strings.TrimPrefix(mcpURL, "http://"), "/mcp")
	for _, want := range []string{
		"? The server " + host + " asks for a model completion (sampling \"q01\"), on your --model-url account:",
		"  send to:    " + modelURL + ", model gpt-4o-mini (the server's hints: o1-pro)",
		"  max tokens: 4096 (the server asked 1000000; capped by --max-tokens 4096)",
		"  content:    system prompt 16 characters; 2 messages: 1 × text (24 characters), 1 × image image/png (300 bytes)",
		"  user: Write a very long essay.",
		"  user: [image]",
		"  this is model call 1 of at most 10 in this run (--max-model-calls)",
		"Send it? [y]es / [n]o, stop the call / [a]ll: yes to the rest of this run (default n): ",
		`you did not allow sampling request "q01" to go to --model-url; stopped`,
	} {
		assert.Contains(t, r.stderr, want)
	}
	assert.Empty(t, calls())

	// y, then n: one completion sent.
	r = cli{terminal: true, stdin: "y\nmaybe\nn\n"}.run(t, args...)
	assert.Equal(t, 2, r.code)
	assert.Contains(t, r.stderr, "! answer y, n or a")
	assert.Contains(t, r.stderr, "this is model call 2 of at most 10")
	assert.Len(t, calls(), 1)

	// a: the rest of the run without asking, still within the caps.
	r = cli{terminal: true, stdin: "a\n"}.run(t, append(args, "--max-model-calls", "5")...)
	assert.Equal(t, 2, r.code)
	assert.Equal(t, 1, strings.Count(r.stderr, "Send it?"))
	assert.Contains(t, r.stderr, "(--max-model-calls 5); stopped")
	assert.Len(t, calls(), 1+5)

	// The input ends: refused.
	r = cli{terminal: true, stdin: ""}.run(t, args...)
	assert.Equal(t, 2, r.code)
	assert.Contains(t, r.stderr, "stdin ended while asking whether to send sampling request")
	assert.Len(t, calls(), 6)
}

// modelFunc is a model.Model of a function.
type modelFunc func(ctx context.Context, r *mrtr.SamplingRequest) (*mrtr.SamplingResult, error)

func (f modelFunc) CreateMessage(ctx context.Context, r *mrtr.SamplingRequest) (*mrtr.SamplingResult, error) {
	return f(ctx, r)
}

func TestModelGatePick(t *testing.T) {
	// The gate's policy runs the model the user listed that the server's
	// first matching hint names, else the user's first.
	var used string
	g := &modelGate{models: []string{"gpt-4o-mini", "claude-3-5-sonnet-latest"}, clients: map[string]model.Model{}, maxTokens: 10, maxCalls: 100}
	for _, name := range g.models {
		g.clients[name] = modelFunc(func(context.Context, *mrtr.SamplingRequest) (*mrtr.SamplingResult, error) {
			used = name
			return &mrtr.SamplingResult{Role: mrtr.RoleAssistant, Model: name, Content: []mrtr.SamplingContent{{Type: "text", Text: "x"}}}, nil
		})
	}
	newModelGate(g, 0)
	pick := func(r *mrtr.SamplingRequest) string {
		used = ""
		_, err := g.complete(context.Background(), "k", r)
		require.NoError(t, err)
		return used
	}
	req := func(hints ...string) *mrtr.SamplingRequest {
		r := &mrtr.SamplingRequest{}
		if hints != nil {
			r.ModelPreferences = &mrtr.ModelPreferences{}
			for _, h := range hints {
				r.ModelPreferences.Hints = append(r.ModelPreferences.Hints, mrtr.ModelHint{Name: h})
			}
		}
		return r
	}
	assert.Equal(t, "gpt-4o-mini", pick(req()))
	assert.Equal(t, "gpt-4o-mini", pick(req("o1-pro")))
	assert.Equal(t, "claude-3-5-sonnet-latest", pick(req("o1-pro", "Sonnet")))
	assert.Equal(t, "gpt-4o-mini", pick(req("", "4o")))
	assert.Equal(t, []string{"a", "b"}, parseModels(" a, ,b,"))
}
