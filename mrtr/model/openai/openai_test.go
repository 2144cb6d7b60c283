package openai_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mrtrkit/mrtrkit/mrtr"
	"github.com/mrtrkit/mrtrkit/mrtr/model/openai"
)

const key = "sk-proj-TESTKEY0123456789abcdef"

// fakeAPI imitates POST /v1/chat/completions with a fixed answer and keeps
// the last request.
type fakeAPI struct {
	status int
	body   string
	last   *http.Request
	sent   map[string]any
}

func (f *fakeAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.last = r
	b, _ := io.ReadAll(r.Body)
	f.sent = nil
	_ = json.Unmarshal(b, &f.sent)
	if r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions" {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	if f.status != 0 {
		w.WriteHeader(f.status)
	}
	_, _ = io.WriteString(w, f.body)
}

func newClient(t *testing.T, api http.Handler, cfg openai.Config) *openai.Client {
	t.Helper()
	srv := httptest.NewServer(api)
	t.Cleanup(srv.Close)
	if cfg.BaseURL == "" {
		cfg.BaseURL = srv.URL + "/v1"
	}
	c, err := openai.New(cfg)
	require.NoError(t, err)
	return c
}

const okBody = `{"id":"chatcmpl-1","object":"chat.completion","model":"gpt-4o-mini-2024-07-18",
  "choices":[{"index":0,"message":{"role":"assistant","content":"Paris."},"finish_reason":"stop"}],
  "usage":{"prompt_tokens":9,"completion_tokens":2,"total_tokens":11}}`

func temp(f float64) *float64 { return &f }

func TestSuccess(t *testing.T) {
	api := &fakeAPI{body: okBody}
	c := newClient(t, api, openai.Config{APIKey: key, Model: "gpt-4o-mini"})
	res, err := c.CreateMessage(context.Background(), &mrtr.SamplingRequest{
		SystemPrompt: "Be brief.",
		Messages: []mrtr.SamplingMessage{
			mrtr.UserText("Capital of France?"),
			{Role: mrtr.RoleAssistant, Content: []mrtr.SamplingContent{{Type: "text", Text: "Let me think."}}},
			mrtr.UserText("Answer."),
		},
		MaxTokens:     100,
		Temperature:   temp(0.2),
		StopSequences: []string{"\n\n"},
	})
	require.NoError(t, err)
	assert.Equal(t, &mrtr.SamplingResult{
		Role: mrtr.RoleAssistant, Content: []mrtr.SamplingContent{{Type: "text", Text: "Paris."}},
		Model: "gpt-4o-mini-2024-07-18", StopReason: "endTurn",
	}, res)

	assert.Equal(t, "Bearer "+key, api.last.Header.Get("Authorization"))
	assert.Equal(t, "application/json", api.last.Header.Get("Content-Type"))
	sent, _ := json.Marshal(api.sent)
	assert.JSONEq(t, `{"model":"gpt-4o-mini","max_tokens":100,"temperature":0.2,"stop":["\n\n"],"messages":[
		{"role":"system","content":"Be brief."},
		{"role":"user","content":"Capital of France?"},
		{"role":"assistant","content":"Let me think."},
		{"role":"user","content":"Answer."}]}`, string(sent))
}

func TestModelFromHints(t *testing.T) {
	api := &fakeAPI{body: `{"choices":[{"message":{"role":"assistant","content":"ok"},"finish_reason":"length"}]}`}
	c := newClient(t, api, openai.Config{})
	res, err := c.CreateMessage(context.Background(), &mrtr.SamplingRequest{
		Messages: []mrtr.SamplingMessage{mrtr.UserText("hi")}, MaxTokens: 5,
		ModelPreferences: &mrtr.ModelPreferences{Hints: []mrtr.ModelHint{{}, {Name: "llama-3"}}},
	})
	require.NoError(t, err)
	assert.Equal(t, "llama-3", api.sent["model"])
	assert.Equal(t, "llama-3", res.Model, "the requested model when the answer names none")
	assert.Equal(t, "maxTokens", res.StopReason)
	assert.Empty(t, api.last.Header.Get("Authorization"), "no key, no header")

	_, err = c.CreateMessage(context.Background(), &mrtr.SamplingRequest{Messages: []mrtr.SamplingMessage{mrtr.UserText("hi")}, MaxTokens: 5})
	assert.ErrorContains(t, err, "no model configured")
}

func TestContentParts(t *testing.T) {
	api := &fakeAPI{body: okBody}
	c := newClient(t, api, openai.Config{Model: "m"})
	_, err := c.CreateMessage(context.Background(), &mrtr.SamplingRequest{MaxTokens: 5, Messages: []mrtr.SamplingMessage{{
		Role: mrtr.RoleUser, Content: []mrtr.SamplingContent{
			{Type: "text", Text: "What is this?"},
			{Type: "image", Data: "iVBORw0KGgo=", MIMEType: "image/png"},
			{Type: "audio", Data: "UklGRg==", MIMEType: "audio/wav"},
		},
	}}})
	require.NoError(t, err)
	parts, _ := json.Marshal(api.sent["messages"].([]any)[0].(map[string]any)["content"])
	assert.JSONEq(t, `[{"type":"text","text":"What is this?"},
		{"type":"image_url","image_url":{"url":"data:image/png;base64,iVBORw0KGgo="}},
		{"type":"input_audio","input_audio":{"data":"UklGRg==","format":"wav"}}]`, string(parts))

	for name, r := range map[string]*mrtr.SamplingRequest{
		"tools":    {Messages: []mrtr.SamplingMessage{mrtr.UserText("x")}, MaxTokens: 5, Tools: []mrtr.Tool{{Name: "t"}}},
		"tool_use": {Messages: []mrtr.SamplingMessage{{Role: mrtr.RoleAssistant, Content: []mrtr.SamplingContent{{Type: "tool_use", ID: "1", Name: "t"}}}}, MaxTokens: 5},
		"ogg":      {Messages: []mrtr.SamplingMessage{{Role: mrtr.RoleUser, Content: []mrtr.SamplingContent{{Type: "audio", Data: "AA==", MIMEType: "audio/ogg"}}}}, MaxTokens: 5},
		"empty":    {MaxTokens: 5},
	} {
		api.last = nil
		_, err := c.CreateMessage(context.Background(), r)
		assert.Error(t, err, name)
		assert.Nil(t, api.last, "%s: refused before any request", name)
	}
}

func TestErrorStatuses(t *testing.T) {
	cases := []struct {
		name   string
		status int
		body   string
		want   string
	}{
		{"unauthorized", 401, `{"error":{"message":"Incorrect API key provided: sk-proj-****************cdef. You can find your API key at https://platform.openai.com/account/api-keys.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`,
			"openai: HTTP 401 invalid_api_key: Incorrect API key provided: [redacted]. You can find"},
		{"echoed key", 400, `{"error":{"message":"bad key ` + key + `","type":"invalid_request_error"}}`,
			"openai: HTTP 400 invalid_request_error: bad key [redacted]"},
		{"rate limited", 429, `{"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded"}}`,
			"openai: HTTP 429 rate_limit_exceeded: Rate limit reached"},
		{"server error, HTML", 502, `<html>Bad Gateway</html>`, "openai: HTTP 502: Bad Gateway"},
		{"server error, numeric code", 500, `{"error":{"message":"oops","code":500}}`, "openai: HTTP 500 500: oops"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := newClient(t, &fakeAPI{status: tc.status, body: tc.body}, openai.Config{APIKey: key, Model: "m"})
			_, err := c.CreateMessage(context.Background(), &mrtr.SamplingRequest{Messages: []mrtr.SamplingMessage{mrtr.UserText("x")}, MaxTokens: 5})
			require.Error(t, err)
			var ae *openai.APIError
			require.ErrorAs(t, err, &ae)
			assert.Equal(t, tc.status, ae.StatusCode)
			assert.True(t, strings.HasPrefix(err.Error(), tc.want), err.Error())
			assert.NotContains(t, err.Error(), key)
			assert.NotContains(t, err.Error(), "cdef.", "no fragment of a masked key")
		})
	}
}

func TestMalformedBodies(t *testing.T) {
	cases := map[string]string{
		"not JSON":      `{"choices":[`,
		"wrong types":   `{"choices":{"message":"x"}}`,
		"no choices":    `{"model":"m","choices":[]}`,
		"null content":  `{"choices":[{"message":{"role":"assistant","content":null}}]}`,
		"plain text ok": `OK`,
	}
	for name, body := range cases {
		t.Run(name, func(t *testing.T) {
			c := newClient(t, &fakeAPI{body: body}, openai.Config{APIKey: key, Model: "m"})
			_, err := c.CreateMessage(context.Background(), &mrtr.SamplingRequest{Messages: []mrtr.SamplingMessage{mrtr.UserText("x")}, MaxTokens: 5})
			require.Error(t, err)
			assert.Contains(t, err.Error(), "malformed response")
			var ae *openai.APIError
			assert.False(t, errors.As(err, &ae))
		})
	}
}

func TestRefusal(t *testing.T) {
	c := newClient(t, &fakeAPI{body: `{"model":"m","choices":[{"message":{"role":"assistant","content":null,"refusal":"I can't help with that."},"finish_reason":"stop"}]}`}, openai.Config{Model: "m"})
	res, err := c.CreateMessage(context.Background(), &mrtr.SamplingRequest{Messages: []mrtr.SamplingMessage{mrtr.UserText("x")}, MaxTokens: 5})
	require.NoError(t, err)
	assert.Equal(t, "I can't help with that.", res.Text())
}

func TestTooLarge(t *testing.T) {
	c := newClient(t, &fakeAPI{body: okBody}, openai.Config{Model: "m", MaxResponseBytes: 64})
	_, err := c.CreateMessage(context.Background(), &mrtr.SamplingRequest{Messages: []mrtr.SamplingMessage{mrtr.UserText("x")}, MaxTokens: 5})
	assert.ErrorContains(t, err, "response larger than 64 bytes")
}

// slowAPI answers only when the request is abandoned.
var slowAPI = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	// The server notices a client going away once the body is read.
	_, _ = io.Copy(io.Discard, r.Body)
	select {
	case <-r.Context().Done():
	case <-time.After(10 * time.Second):
	}
})

func TestTimeouts(t *testing.T) {
	req := &mrtr.SamplingRequest{Messages: []mrtr.SamplingMessage{mrtr.UserText("x")}, MaxTokens: 5}

	c := newClient(t, slowAPI, openai.Config{APIKey: key, Model: "m"})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := c.CreateMessage(ctx, req)
	require.Error(t, err)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Less(t, time.Since(start), 5*time.Second)
	assert.NotContains(t, err.Error(), key)

	c = newClient(t, slowAPI, openai.Config{APIKey: key, Model: "m", Timeout: 50 * time.Millisecond})
	_, err = c.CreateMessage(context.Background(), req)
	assert.ErrorIs(t, err, context.DeadlineExceeded, "Config.Timeout bounds a call on its own")

	ctx, cancel = context.WithCancel(context.Background())
	cancel()
	_, err = c.CreateMessage(ctx, req)
	assert.ErrorIs(t, err, context.Canceled)
}

func TestUnreachable(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	base := srv.URL
	srv.Close()
	c, err := openai.New(openai.Config{BaseURL: base + "/v1", APIKey: key, Model: "m"})
	require.NoError(t, err)
	_, err = c.CreateMessage(context.Background(), &mrtr.SamplingRequest{Messages: []mrtr.SamplingMessage{mrtr.UserText("x")}, MaxTokens: 5})
	require.Error(t, err)
	assert.True(t, strings.HasPrefix(err.Error(), "openai: POST chat/completions: "), err.Error())
	assert.NotContains(t, err.Error(), key)
}

func TestNewValidates(t *testing.T) {
	for _, base := range []string{"ftp://x", "not a url", "/v1", "http://"} {
		_, err := openai.New(openai.Config{BaseURL: base})
		assert.Error(t, err, base)
	}
	_, err := openai.New(openai.Config{Timeout: -1})
	assert.Error(t, err)
	c, err := openai.New(openai.Config{})
	require.NoError(t, err)
	assert.NotNil(t, c)
}

func TestConfigFromEnv(t *testing.T) {
	t.Setenv(openai.EnvAPIKey, "k")
	t.Setenv(openai.EnvBaseURL, "http://localhost:11434/v1")
	t.Setenv(openai.EnvModel, "llama3")
	assert.Equal(t, openai.Config{APIKey: "k", BaseURL: "http://localhost:11434/v1", Model: "llama3"}, openai.ConfigFromEnv())
}

// The API key never travels over plain http to another machine, and no
// redirect can carry it elsewhere.
func TestKeyStaysOnSafeTransport(t *testing.T) {
	_, err := openai.New(openai.Config{BaseURL: "http://api.example.com/v1", APIKey: "sk-x"})
	require.Error(t, err)
	assert.NotContains(t, err.Error(), "sk-x")
	for _, base := range []string{"http://127.0.0.1:8000/v1", "http://localhost:11434/v1", "http://[::1]:8000/v1", "https://api.example.com/v1"} {
		_, err := openai.New(openai.Config{BaseURL: base, APIKey: "sk-x"})
		assert.NoError(t, err, base)
	}
	_, err = openai.New(openai.Config{BaseURL: "http://api.example.com/v1"})
	assert.NoError(t, err, "without a key, plain http is the caller's choice")

	var elsewhere int
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "" {
			elsewhere++
		}
	}))
	defer other.Close()
	redirect := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+"/v1/chat/completions", http.StatusTemporaryRedirect)
	})
	c := newClient(t, redirect, openai.Config{APIKey: "sk-x", Model: "m"})
	_, err = c.CreateMessage(context.Background(), &mrtr.SamplingRequest{Messages: []mrtr.SamplingMessage{mrtr.UserText("hi")}, MaxTokens: 5})
	require.Error(t, err)
	assert.Zero(t, elsewhere, "the redirect was not followed")
}
