package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

const testAPIKey = "sk-test-0123456789abcdef"

// fakeChat imitates an OpenAI-compatible chat-completions API. It answers
// a pick_files question with pick and any other with the summary text
// (prefixed "Improved: " for a critique), and records what it was sent.
type fakeChat struct {
	pick, summary string
	status        int // non-zero: answer every request with this status

	mu       sync.Mutex
	requests []chatBody
}

type chatBody struct {
	Model    string `json:"model"`
	Messages []struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	} `json:"messages"`
	MaxTokens int `json:"max_tokens"`
}

func (f *fakeChat) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions" {
		http.NotFound(w, r)
		return
	}
	if r.Header.Get("Authorization") != "Bearer "+testAPIKey {
		w.WriteHeader(http.StatusUnauthorized)
		w.Write([]byte(`{"error":{"message":"Incorrect API key provided","type":"invalid_request_error","code":"invalid_api_key"}}`))
		return
	}
	var body chatBody
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	f.mu.Lock()
	f.requests = append(f.requests, body)
	f.mu.Unlock()
	if f.status != 0 {
		w.WriteHeader(f.status)
		w.Write([]byte(`{"error":{"message":"the model is overloaded","type":"server_error"}}`))
		return
	}
	text := f.summary
	switch last := body.Messages[len(body.Messages)-1].Content; {
	case strings.Contains(last, "JSON array"):
		text = f.pick
	case strings.Contains(last, "improved summary"):
		text = "Improved: " + f.summary
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{
		"id": "chatcmpl-1", "object": "chat.completion", "model": body.Model,
		"choices": []any{map[string]any{
			"index": 0, "finish_reason": "stop",
			"message": map[string]any{"role": "assistant", "content": text},
		}},
	})
}

func (f *fakeChat) sent() []chatBody {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.requests)
}

// startDirect serves the example in direct-model mode against fake, as the
// command line -model-url URL -model fake-model with the key in the
// environment would.
func startDirect(t *testing.T, fake *fakeChat, cfg Config, key string) (*testServer, *bytes.Buffer) {
	t.Helper()
	api := httptest.NewServer(fake)
	t.Cleanup(api.Close)
	var logs bytes.Buffer
	cfg.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	s, err := parseFlags([]string{"-model-url", api.URL + "/v1", "-model", "fake-model"},
		func(k string) string {
			if k == EnvAPIKey {
				return key
			}
			return ""
		}, &bytes.Buffer{})
	require.NoError(t, err)
	s.Config = cfg
	return startSettings(t, s, nil), &logs
}

func TestDirectModelCompletesInOneRound(t *testing.T) {
	for _, critique := range []bool{false, true} {
		name := "plain"
		if critique {
			name = "critique"
		}
		t.Run(name, func(t *testing.T) {
			fake := &fakeChat{pick: `["README.md","sub/a.txt"]`, summary: "A small demo."}
			s, logs := startDirect(t, fake, Config{Dir: smallRepo(t), Critique: critique}, testAPIKey)

			// No sampling capability is needed: the server asks the model.
			c := s.call(toolCall{NoSample: true}).complete(t)
			want := "A small demo."
			if critique {
				want = "Improved: A small demo."
			}
			require.Falsef(t, c.IsError || c.StructuredContent == nil || c.StructuredContent.Summary != want ||
				!slices.Equal(c.StructuredContent.Files, []string{"README.md", "sub/a.txt"}) || c.Content[0].Text != want, "result: %+v", c)

			sent := fake.sent()
			if rounds := map[bool]int{false: 2, true: 3}[critique]; len(sent) != rounds {
				require.FailNow(t, fmt.Sprintf("the model was asked %d times, want %d", len(sent), rounds))
			}
			pick := sent[0]
			require.Falsef(t, pick.Model != "fake-model" || pick.MaxTokens != 400 || len(pick.Messages) != 2 ||
				pick.Messages[0].Role != "system" || pick.Messages[0].Content != pickSystemPrompt ||
				!strings.Contains(pick.Messages[1].Content, "README.md\n") || strings.Contains(pick.Messages[1].Content, ".git"), "pick_files request: %+v", pick)
			if !strings.Contains(sent[1].Messages[1].Content, "===== sub/a.txt =====\nalpha") {
				require.FailNow(t, fmt.Sprintf("summary request: %+v", sent[1]))
			}
			require.False(t, strings.Contains(logs.String(), testAPIKey), "the API key was logged")
		})
	}
}

// The model the server calls is as untrusted as the client's: a bad pick
// is refused, and as the client sent nothing wrong the call fails with an
// internal error.
func TestDirectModelBadAnswer(t *testing.T) {
	for name, pick := range map[string]string{
		"traversal":  `["../outside/secret.txt"]`,
		"too many":   `["README.md","main.go","sub/a.txt","cut.txt"]`,
		"prose":      `I would pick README.md`,
		"binary":     `["bin.dat"]`,
		"duplicated": `["main.go","main.go"]`,
	} {
		t.Run(name, func(t *testing.T) {
			fake := &fakeChat{pick: pick, summary: "never used"}
			s, _ := startDirect(t, fake, Config{Dir: smallRepo(t)}, testAPIKey)
			s.call(toolCall{NoSample: true}).wantError(t, -32603, 200)
			if n := len(fake.sent()); n != 1 {
				require.FailNow(t, fmt.Sprintf("the model was asked %d times", n))
			}
		})
	}
}

func TestDirectModelAPIFailure(t *testing.T) {
	t.Run("server error", func(t *testing.T) {
		s, logs := startDirect(t, &fakeChat{status: http.StatusServiceUnavailable}, Config{Dir: smallRepo(t)}, testAPIKey)
		r := s.call(toolCall{NoSample: true})
		r.wantError(t, -32603, 200)
		require.Falsef(t, strings.Contains(string(r.raw), "overloaded") || strings.Contains(logs.String(), testAPIKey), "detail leaked: %s\n%s", r.raw, logs.String())
	})
	t.Run("wrong key", func(t *testing.T) {
		s, logs := startDirect(t, &fakeChat{}, Config{Dir: smallRepo(t)}, "sk-wrong-key-0123456789")
		r := s.call(toolCall{NoSample: true})
		r.wantError(t, -32603, 200)
		require.Falsef(t, strings.Contains(string(r.raw), "sk-wrong") || strings.Contains(logs.String(), "sk-wrong-key"), "key leaked: %s\n%s", r.raw, logs.String())
	})
}
