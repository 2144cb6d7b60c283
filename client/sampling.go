package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/mrtrkit/mrtrkit/mrtr"
)

// Decision is a sampling policy's stance towards one server.
type Decision int

// The stances of a SamplingPolicy.
const (
	// Ask asks the user (SamplingPolicy.Ask) before each sampling
	// request; without an Ask function it refuses. It is the zero value.
	Ask Decision = iota
	// Deny refuses every sampling request of the server.
	Deny
	// Allow answers without asking.
	Allow
)

// Model is a model the host can run for a server's sampling request.
type Model struct {
	// Name identifies the model; server hints are matched against it.
	Name string
	// Inputs are the content kinds the model reads: "text", "image",
	// "audio".
	Inputs []string
	// Tools reports whether the model can be given tools.
	Tools bool
	// MaxTokens is the most it generates in one answer (0: no bound).
	MaxTokens int
	// Cost, Speed and Intelligence place the model on the scales of the
	// server's priorities, each from 0 to 1: Cost 1 is the most
	// expensive, Speed 1 the fastest, Intelligence 1 the most capable.
	// After the hints, the priorities rank the eligible models.
	Cost, Speed, Intelligence float64
	// Generate runs the model. It calls beat with the number of tokens
	// produced so far each time it makes progress; a silence longer than
	// the policy's stall bound cancels its context.
	Generate func(ctx context.Context, req *mrtr.SamplingRequest, beat func(tokens int)) (*mrtr.SamplingResult, error)
}

// SamplingPrompt is what the user is shown before a sampling request of
// a server is run: who asks, which model would answer, and the kinds and
// sizes of the content, never the content itself.
type SamplingPrompt struct {
	Server    string         // the server that asks
	Model     string         // the model that would answer
	Kinds     map[string]int // content blocks by kind
	Bytes     int            // the size of the messages
	MaxTokens int            // the most the answer may take
	Tools     int            // how many tools the request offers the model
}

// SamplingProgress is one beat of a running model call: counts, never
// text.
type SamplingProgress struct {
	Model   string        // the model running
	Tokens  int           // tokens produced so far
	Elapsed time.Duration // since the call began
}

// RejectedModel is a model a sampling request could not use, and why.
type RejectedModel struct {
	Model  string `json:"model"`  // the model's name
	Reason string `json:"reason"` // why it could not serve the request
}

// SamplingRefusal is the structured refusal of a sampling request: the
// policy's reason and each rejected model with its reason.
type SamplingRefusal struct {
	Server   string          `json:"server"`             // the server that asked
	Reason   string          `json:"reason"`             // the policy's reason
	Rejected []RejectedModel `json:"rejected,omitempty"` // each model that could not serve, and why
}

// Error renders the reason and each rejected model with its reason.
func (r *SamplingRefusal) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "sampling refused for %s: %s", r.Server, r.Reason)
	for _, m := range r.Rejected {
		fmt.Fprintf(&b, "; %s: %s", m.Model, m.Reason)
	}
	return b.String()
}

// ErrStalled is returned when a model call produced nothing for longer
// than the stall bound.
var ErrStalled = errors.New("the model call stalled")

// DefaultStall is the default silence bound of a model call.
const DefaultStall = 30 * time.Second

// SamplingPolicy is a host's policy for one server's sampling requests:
// deny, ask or allow; the model chosen by what the request's content
// needs first (kinds, tools, tokens), with the server's hints only
// ranking the eligible models, never adding one; a structured refusal
// naming each rejected model; and a bound on silence, not on total time,
// for the model call. Func turns it into the mrtr.SamplingFunc that
// OnSampling takes.
type SamplingPolicy struct {
	// Server names the server in prompts and refusals.
	Server string
	// Decision is Ask (the zero value), Deny or Allow.
	Decision Decision
	// Ask asks the user; true runs the request.
	Ask func(ctx context.Context, p SamplingPrompt) (bool, error)
	// Models are the models the host offers this server, in the host's
	// order of preference.
	Models []Model
	// Stall bounds the silence of a model call (default DefaultStall).
	Stall time.Duration
	// OnProgress receives the beats of a model call.
	OnProgress func(SamplingProgress)
}

// needs returns the content kinds a request carries, with counts, and its
// size.
func needs(req *mrtr.SamplingRequest) (map[string]int, int) {
	kinds := map[string]int{}
	size := len(req.SystemPrompt)
	for _, m := range req.Messages {
		for _, c := range m.Content {
			kinds[c.Type]++
			size += len(c.Text) + len(c.Data) + len(c.Input) + len(c.StructuredContent)
		}
	}
	return kinds, size
}

// choose returns the eligible models, best first, and the rejected ones.
func (p *SamplingPolicy) choose(req *mrtr.SamplingRequest) ([]Model, []RejectedModel) {
	kinds, _ := needs(req)
	var ok []Model
	var rejected []RejectedModel
	for _, m := range p.Models {
		reason := ""
		for k := range kinds {
			switch k {
			case "tool_use", "tool_result":
				if !m.Tools {
					reason = "it cannot take tool " + strings.TrimPrefix(k, "tool_") + " content"
				}
			default:
				if !slices.Contains(m.Inputs, k) {
					reason = "it does not read " + k + " content"
				}
			}
			if reason != "" {
				break
			}
		}
		switch {
		case reason != "":
		case len(req.Tools) > 0 && !m.Tools:
			reason = "the request gives tools and it cannot use them"
		case m.MaxTokens > 0 && req.MaxTokens > m.MaxTokens:
			reason = fmt.Sprintf("the request wants up to %d tokens and it generates at most %d", req.MaxTokens, m.MaxTokens)
		}
		if reason != "" {
			rejected = append(rejected, RejectedModel{Model: m.Name, Reason: reason})
			continue
		}
		ok = append(ok, m)
	}
	// The server's preferences rank what is eligible, never more: the
	// first hint a model's name contains wins (models no hint names come
	// after, in the host's order); among equals, the priorities weigh
	// the models' cost, speed and intelligence.
	if pref := req.ModelPreferences; pref != nil {
		rank := func(m Model) int {
			for i, h := range pref.Hints {
				if h.Name != "" && strings.Contains(strings.ToLower(m.Name), strings.ToLower(h.Name)) {
					return i
				}
			}
			return len(pref.Hints)
		}
		weight := func(p *float64) float64 {
			if p == nil {
				return 0
			}
			return *p
		}
		score := func(m Model) float64 {
			return weight(pref.CostPriority)*(1-m.Cost) + weight(pref.SpeedPriority)*m.Speed + weight(pref.IntelligencePriority)*m.Intelligence
		}
		sort.SliceStable(ok, func(i, j int) bool {
			if ri, rj := rank(ok[i]), rank(ok[j]); ri != rj {
				return ri < rj
			}
			return score(ok[i]) > score(ok[j])
		})
	}
	return ok, rejected
}

// Func returns the policy as an mrtr.SamplingFunc.
func (p *SamplingPolicy) Func() mrtr.SamplingFunc {
	return func(ctx context.Context, req *mrtr.SamplingRequest) (*mrtr.SamplingResult, error) {
		if p.Decision == Deny {
			return nil, &SamplingRefusal{Server: p.Server, Reason: "the policy denies sampling to this server"}
		}
		models, rejected := p.choose(req)
		if len(models) == 0 {
			return nil, &SamplingRefusal{Server: p.Server, Reason: "no model can serve this request", Rejected: rejected}
		}
		m := models[0]
		if p.Decision == Ask {
			if p.Ask == nil {
				return nil, &SamplingRefusal{Server: p.Server, Reason: "the policy asks the user and there is no one to ask"}
			}
			kinds, size := needs(req)
			yes, err := p.Ask(ctx, SamplingPrompt{Server: p.Server, Model: m.Name, Kinds: kinds, Bytes: size, MaxTokens: req.MaxTokens, Tools: len(req.Tools)})
			if err != nil {
				return nil, err
			}
			if !yes {
				return nil, &SamplingRefusal{Server: p.Server, Reason: "the user declined"}
			}
		}
		return p.run(ctx, m, req)
	}
}

// run calls the model with a silence bound.
func (p *SamplingPolicy) run(ctx context.Context, m Model, req *mrtr.SamplingRequest) (*mrtr.SamplingResult, error) {
	stall := p.Stall
	if stall <= 0 {
		stall = DefaultStall
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	start := time.Now()
	var mu sync.Mutex
	timer := time.AfterFunc(stall, func() { cancel(fmt.Errorf("%w: %s produced nothing for %v", ErrStalled, m.Name, stall)) })
	defer timer.Stop()
	beat := func(tokens int) {
		mu.Lock()
		defer mu.Unlock()
		timer.Reset(stall)
		if p.OnProgress != nil {
			p.OnProgress(SamplingProgress{Model: m.Name, Tokens: tokens, Elapsed: time.Since(start)})
		}
	}
	res, err := m.Generate(ctx, req, beat)
	if cause := context.Cause(ctx); cause != nil && errors.Is(cause, ErrStalled) {
		return nil, cause
	}
	if err != nil {
		return nil, err
	}
	if res != nil && res.Model == "" {
		res.Model = m.Name
	}
	return res, nil
}

// refusalData is the data member of the JSON-RPC error that carries a
// refusal to a server of the initialize era.
func refusalData(err error) json.RawMessage {
	var r *SamplingRefusal
	if errors.As(err, &r) {
		return mustJSON(r)
	}
	return nil
}
