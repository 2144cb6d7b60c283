package main

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// TestREADMEMcpcallAnswers plays the answers file the README shows for
// cmd/mcpcall against the server summarising this repository, with
// -critique, as mcpcall would: each round's question answered by the
// file's text under its key.
func TestREADMEMcpcallAnswers(t *testing.T) {
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	at := strings.Index(text, "### The same call with mcpcall")
	if at < 0 {
		t.Fatal("README.md has no mcpcall section")
	}
	section := text[at:]
	start := strings.Index(section, "```json\n")
	if start < 0 {
		t.Fatal("the mcpcall section shows no answers file")
	}
	body := section[start+len("```json\n"):]
	body = body[:strings.Index(body, "```")]
	var answers map[string]string
	if err := json.Unmarshal([]byte(body), &answers); err != nil {
		t.Fatalf("answers file: %v", err)
	}
	for _, want := range []string{"go run ./cmd/mcpcall -url http://127.0.0.1:8080/mcp tools call summarize_repo",
		`--args '{"audience":"developer"}' --sampling-answers answers.json`} {
		if !strings.Contains(section, want) {
			t.Errorf("the mcpcall section lacks %q", want)
		}
	}

	s := startServer(t, Config{Dir: repoRoot(t), Critique: true, Limits: Limits{MaxFileSize: DefaultMaxFileSize}}, nil)
	_, _, st := s.call(toolCall{}).asked(t, KeyPickFiles)
	_, _, st = s.call(toolCall{State: st, Answers: map[string]any{KeyPickFiles: answer(answers[KeyPickFiles])}}).asked(t, KeySummary)
	_, _, st = s.call(toolCall{State: st, Answers: map[string]any{KeySummary: answer(answers[KeySummary])}}).asked(t, KeyCritique)
	res := s.call(toolCall{State: st, Answers: map[string]any{KeyCritique: answer(answers[KeyCritique])}}).complete(t)
	if res.StructuredContent == nil || res.StructuredContent.Summary != answers[KeyCritique] {
		t.Fatalf("result: %+v", res)
	}
}
