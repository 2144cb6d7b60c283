package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/mrtrkit/mrtrkit/client"

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
// the user's terms, through a client.SamplingPolicy: the model is one the
// user named (--model; a hint of the server can only rank those),
// maxTokens is capped (--max-tokens), the number of completions per run
// is capped (--max-model-calls), and each completion is sent only once
// the user has agreed at the terminal (the policy's Ask, the default),
// unless --model-yes said yes to all of them beforehand (Allow). A
// server that asks for more is refused and the call stops.
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
	policy    *client.SamplingPolicy
}

// newModelGate builds the gate and its policy. stall bounds a model
// call's silence (0: none).
func newModelGate(g *modelGate, stall time.Duration) *modelGate {
	g.policy = &client.SamplingPolicy{Server: g.server, Decision: client.Ask, Ask: g.consent, Stall: stall}
	if !g.ask {
		g.policy.Decision = client.Allow
	}
	if stall <= 0 {
		g.policy.Stall = 100 * 365 * 24 * time.Hour
	}
	for _, name := range g.models {
		// Every kind of content goes to the user's model, as the user
		// chose it; the policy ranks the models by the server's hints.
		g.policy.Models = append(g.policy.Models, client.Model{Name: name, Inputs: []string{"text", "image", "audio"}, Tools: true, Generate: g.generate(name)})
	}
	return g
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

// gateCtx carries the sampling request being answered to the consent
// prompt, which the policy hands only its summary.
type gateCtx struct{}

type gateAsk struct {
	key string
	req *mrtr.SamplingRequest
}

// complete answers sampling request key with the model, within the
// limits and with the user's consent.
func (g *modelGate) complete(ctx context.Context, key string, r *mrtr.SamplingRequest) (*mrtr.SamplingResult, error) {
	if g.calls >= g.maxCalls {
		return nil, &unansweredError{fmt.Sprintf("the server asked for another model completion (%q), but this run has already sent %d to --model-url (--max-model-calls %d); stopped", key, g.calls, g.maxCalls)}
	}
	res, err := g.policy.Func()(context.WithValue(ctx, gateCtx{}, gateAsk{key, r}), r)
	var refusal *client.SamplingRefusal
	if errors.As(err, &refusal) {
		return nil, &unansweredError{fmt.Sprintf("sampling request %q: %v", key, refusal)}
	}
	return res, err
}

// generate runs the user's model name on a request, its maxTokens capped
// and the server's model preferences dropped (the model is chosen).
func (g *modelGate) generate(name string) func(context.Context, *mrtr.SamplingRequest, func(int)) (*mrtr.SamplingResult, error) {
	return func(ctx context.Context, r *mrtr.SamplingRequest, _ func(int)) (*mrtr.SamplingResult, error) {
		req := *r
		req.ModelPreferences = nil
		req.MaxTokens = g.capTokens(r)
		g.calls++
		return g.clients[name].CreateMessage(ctx, &req)
	}
}

func (g *modelGate) capTokens(r *mrtr.SamplingRequest) int {
	if r.MaxTokens <= 0 || r.MaxTokens > g.maxTokens {
		return g.maxTokens
	}
	return r.MaxTokens
}

// consent is the policy's Ask: it shows the user who asks, the model,
// the tokens and the kinds and sizes of what would be sent, and asks.
// "all" stops asking for the rest of the run (the caps still hold).
func (g *modelGate) consent(ctx context.Context, p client.SamplingPrompt) (bool, error) {
	if !g.ask {
		return true, nil
	}
	a, _ := ctx.Value(gateCtx{}).(gateAsk)
	r, key := a.req, a.key
	if r == nil {
		r = &mrtr.SamplingRequest{MaxTokens: p.MaxTokens}
	}
	maxTokens := g.capTokens(r)
	w := g.prompt
	fmt.Fprintf(w, "\n? The server %s asks for a model completion (sampling %q), on your --model-url account:\n", termLine(p.Server), key)
	fmt.Fprintf(w, "  send to:    %s, model %s", termLine(g.endpoint), termLine(p.Model))
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
			return false, &unansweredError{fmt.Sprintf("stdin ended while asking whether to send sampling request %q to --model-url", key)}
		}
		switch strings.ToLower(strings.TrimSpace(s)) {
		case "y", "yes":
			return true, nil
		case "", "n", "no":
			return false, &unansweredError{fmt.Sprintf("you did not allow sampling request %q to go to --model-url; stopped", key)}
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
