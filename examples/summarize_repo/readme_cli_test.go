package main

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestREADMEMcpcallAnswers plays the answers file the README shows for
// cmd/mcpcall against the server summarising this repository, with
// -critique, as mcpcall would: each round's question answered by the
// file's text under its key.
func TestREADMEMcpcallAnswers(t *testing.T) {
	b, err := os.ReadFile("README.md")
	require.NoError(t, err)
	text := string(b)
	at := strings.Index(text, "### The same call with mcpcall")
	require.False(t, at < 0, "README.md has no mcpcall section")
	section := text[at:]
	start := strings.Index(section, "```json\n")
	require.False(t, start < 0, "the mcpcall section shows no answers file")
	body := section[start+len("```json\n"):]
	body = body[:strings.Index(body, "```")]
	var answers map[string]string
	require.NoError(t, json.Unmarshal([]byte(body), &answers), "answers file")
	for _, want := range []string{"go run ./cmd/mcpcall -url http://127.0.0.1:8080/mcp tools call summarize_repo",
		`--args '{"audience":"developer"}' --sampling-answers answers.json`} {
		assert.Containsf(t, section, want, "the mcpcall section lacks %q", want)
	}

	s := startServer(t, Config{Dir: repoRoot(t), Critique: true, Limits: Limits{MaxFileSize: DefaultMaxFileSize}}, nil)
	_, _, st := s.call(toolCall{}).asked(t, KeyPickFiles)
	_, _, st = s.call(toolCall{State: st, Answers: map[string]any{KeyPickFiles: answer(answers[KeyPickFiles])}}).asked(t, KeySummary)
	_, _, st = s.call(toolCall{State: st, Answers: map[string]any{KeySummary: answer(answers[KeySummary])}}).asked(t, KeyCritique)
	res := s.call(toolCall{State: st, Answers: map[string]any{KeyCritique: answer(answers[KeyCritique])}}).complete(t)
	require.Falsef(t, res.StructuredContent == nil || res.StructuredContent.Summary != answers[KeyCritique], "result: %+v", res)
}
