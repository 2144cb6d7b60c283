package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/mrtrkit/mrtrkit/mrtr"
	"github.com/mrtrkit/mrtrkit/mrtr/model"
)

// Defaults of the flags that bound what a server may spend on the
// user's model account through --model-url.
const (
	// DefaultMaxTokens is the default of --max-tokens: the most tokens
	// one completion may produce, whatever the server asks.
	DefaultMaxTokens = 4096
	// DefaultMaxModelCalls is the default of --max-model-calls: the most
	// completions one run asks of --model-url.
	DefaultMaxModelCalls = 10
)

// modelGate forwards the server's sampling requests to --model-url on
// the user's terms: the model is one the user named (--model; a hint of
// the server can only pick among those), maxTokens is capped
// (--max-tokens), the number of completions per run is capped
// (--max-model-calls), and each completion is sent only once the user
// has agreed at the terminal, unless --model-yes said yes to all of them
// beforehand. A server that asks for more is refused and the call stops.
type modelGate struct {
	endpoint  string                 // --model-url, shown at the prompt
	server    string                 // the MCP server's host, shown at the prompt
	models    []string               // --model: the first is the default
	clients   map[string]model.Model // by model name
	maxTokens int
	maxCalls  int
	calls     int  // completions sent so far
	ask       bool // ask the user before each completion
	in        *lineReader
	prompt    io.Writer
}

// parseModels splits the --model list.
func parseModels(v string) []string {
	var out []string
	for _, m := range strings.Split(v, ",") {
		if m = strings.TrimSpace(m); m != "" {
			out = append(out, m)
		}
	}
	return out
}

// pick chooses the model for r: the first of the server's hints that is
// part of (or equal to, ignoring case) one of the user's models picks
// that model; otherwise the user's first. The server's hints never name
// a model the user did not list.
func (g *modelGate) pick(r *mrtr.SamplingRequest) string {
	if r.ModelPreferences != nil {
		for _, h := range r.ModelPreferences.Hints {
			hint := strings.ToLower(strings.TrimSpace(h.Name))
			if hint == "" {
				continue
			}
			for _, m := range g.models {
				if strings.Contains(strings.ToLower(m), hint) {
					return m
				}
			}
		}
	}
	return g.models[0]
}

// complete answers sampling request key with the model, within the
// limits and with the user's consent.
func (g *modelGate) complete(ctx context.Context, key string, r *mrtr.SamplingRequest) (*mrtr.SamplingResult, error) {
	if g.calls >= g.maxCalls {
		return nil, &unansweredError{fmt.Sprintf("the server asked for another model completion (%q), but this run has already sent %d to --model-url (--max-model-calls %d); stopped", key, g.calls, g.maxCalls)}
	}
	name := g.pick(r)
	req := *r
	req.ModelPreferences = nil // the model is chosen; nothing of the server's choosing goes on
	if req.MaxTokens <= 0 || req.MaxTokens > g.maxTokens {
		req.MaxTokens = g.maxTokens
	}
	if g.ask {
		ok, err := g.consent(key, r, name, req.MaxTokens)
		if err != nil {
			return nil, &unansweredError{fmt.Sprintf("stdin ended while asking whether to send sampling request %q to --model-url", key)}
		}
		if !ok {
			return nil, &unansweredError{fmt.Sprintf("you did not allow sampling request %q to go to --model-url; stopped", key)}
		}
	}
	g.calls++
	return g.clients[name].CreateMessage(ctx, &req)
}

// consent shows the user what the completion would send and cost, and
// asks. "all" stops asking for the rest of the run (the caps still
// hold).
func (g *modelGate) consent(key string, r *mrtr.SamplingRequest, name string, maxTokens int) (bool, error) {
	w := g.prompt
	fmt.Fprintf(w, "\n? The server %s asks for a model completion (sampling %q), on your --model-url account:\n", termLine(g.server), key)
	fmt.Fprintf(w, "  send to:    %s, model %s", termLine(g.endpoint), termLine(name))
	if hints := hintNames(r); hints != "" {
		fmt.Fprintf(w, " (the server's hints: %s)", hints)
	}
	fmt.Fprintln(w)
	switch {
	case r.MaxTokens > maxTokens:
		fmt.Fprintf(w, "  max tokens: %d (the server asked %d; capped by --max-tokens %d)\n", maxTokens, r.MaxTokens, g.maxTokens)
	case r.MaxTokens <= 0:
		fmt.Fprintf(w, "  max tokens: %d (the server set none; --max-tokens)\n", maxTokens)
	default:
		fmt.Fprintf(w, "  max tokens: %d (at most %d with --max-tokens)\n", maxTokens, g.maxTokens)
	}
	fmt.Fprintf(w, "  content:    %s\n", samplingContentSummary(r))
	if r.SystemPrompt != "" {
		fmt.Fprintf(w, "  system: %s\n", clip(r.SystemPrompt))
	}
	for i, m := range r.Messages {
		if i == 3 {
			fmt.Fprintf(w, "  … and %d more messages\n", len(r.Messages)-3)
			break
		}
		fmt.Fprintf(w, "  %s: %s\n", termLine(string(m.Role)), clip(samplingText(m.Content)))
	}
	fmt.Fprintf(w, "  this is model call %d of at most %d in this run (--max-model-calls)\n", g.calls+1, g.maxCalls)
	for {
		fmt.Fprint(w, "  Send it? [y]es / [n]o, stop the call / [a]ll: yes to the rest of this run (default n): ")
		s, err := g.in.readLine()
		if err != nil {
			return false, err
		}
		switch strings.ToLower(strings.TrimSpace(s)) {
		case "y", "yes":
			return true, nil
		case "", "n", "no":
			return false, nil
		case "a", "all":
			g.ask = false
			return true, nil
		}
		fmt.Fprintln(w, "  ! answer y, n or a")
	}
}

func hintNames(r *mrtr.SamplingRequest) string {
	if r.ModelPreferences == nil {
		return ""
	}
	var hs []string
	for _, h := range r.ModelPreferences.Hints {
		if h.Name != "" {
			hs = append(hs, h.Name)
		}
	}
	return oneLine(strings.Join(hs, ", "), 200)
}

// samplingContentSummary counts what a sampling request would send: the
// system prompt, and the messages' blocks by kind with their sizes.
func samplingContentSummary(r *mrtr.SamplingRequest) string {
	var parts []string
	if r.SystemPrompt != "" {
		parts = append(parts, fmt.Sprintf("system prompt %d characters", utf8.RuneCountInString(r.SystemPrompt)))
	}
	type kind struct {
		n    int
		size int
	}
	kinds := map[string]*kind{}
	var order []string
	for _, m := range r.Messages {
		for _, b := range m.Content {
			t := termLine(b.Type)
			if b.MIMEType != "" {
				t += " " + termLine(b.MIMEType)
			}
			k := kinds[t]
			if k == nil {
				k = &kind{}
				kinds[t] = k
				order = append(order, t)
			}
			k.n++
			switch b.Type {
			case "text":
				k.size += utf8.RuneCountInString(b.Text)
			case "image", "audio":
				k.size += len(b.Data) * 3 / 4
			default:
				k.size += len(b.Input) + len(b.StructuredContent)
				for _, c := range b.Content {
					k.size += len(c)
				}
			}
		}
	}
	msgs := fmt.Sprintf("%d message", len(r.Messages))
	if len(r.Messages) != 1 {
		msgs += "s"
	}
	var blocks []string
	for _, t := range order {
		k := kinds[t]
		unit := "bytes"
		if strings.HasPrefix(t, "text") {
			unit = "characters"
		}
		blocks = append(blocks, fmt.Sprintf("%d × %s (%d %s)", k.n, t, k.size, unit))
	}
	if len(blocks) > 0 {
		msgs += ": " + strings.Join(blocks, ", ")
	}
	parts = append(parts, msgs)
	if len(r.Tools) > 0 {
		parts = append(parts, fmt.Sprintf("%d tools", len(r.Tools)))
	}
	return strings.Join(parts, "; ")
}

// samplingText joins the text of a message's blocks, other blocks named.
func samplingText(blocks []mrtr.SamplingContent) string {
	var parts []string
	for _, b := range blocks {
		if b.Type == "text" {
			parts = append(parts, b.Text)
		} else {
			parts = append(parts, "["+b.Type+"]")
		}
	}
	return strings.Join(parts, " ")
}
