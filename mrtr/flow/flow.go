package flow

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/mrtrkit/mrtrkit/mrtr"
	"github.com/mrtrkit/mrtrkit/mrtr/model"
	"github.com/mrtrkit/mrtrkit/mrtr/typed"
)

// defaultBudget is a flow's budget of questions unless WithBudget says
// otherwise.
const defaultBudget = 5

// ErrBudget is wrapped by the error that ends a call whose flow needed to
// put questions more often than its budget allows.
var ErrBudget = errors.New("flow: question budget exhausted")

// Flow runs the rounds of one call as a sequence of steps over a typed
// state S, from input In to output Out. Build one with New. A Flow is a
// typed.Handler: register it as a tool with typed.AddTool, or as any
// handler with Handler. It keeps nothing between rounds; a Flow is safe
// for concurrent use.
type Flow[In, S, Out any] struct {
	steps  []Step[In, S]
	finish func(ctx context.Context, c *Call[In, S]) (Out, error)
	model  model.Model
	max    int
	shape  string
}

// Option configures a Flow.
type Option interface{ apply(*options) }

type options struct {
	model model.Model
	max   int
}

type optionFunc func(*options)

func (f optionFunc) apply(o *options) { f(o) }

// WithModel sets who answers the flow's Sample steps (default
// model.Client(): the client's model through sampling/createMessage). A
// model the server calls itself, such as an openai.Client, answers inline,
// in the same round.
func WithModel(m model.Model) Option { return optionFunc(func(o *options) { o.model = m }) }

// WithBudget sets the flow's budget (default 5): how many
// times in one call the flow may put a step's questions, whether to the
// client (one input_required round each) or to a model the server calls
// inline. Asking again for a missing answer counts. It is the flow's own
// bound on its work, not the Server's round limit (mrtr.WithMaxRounds),
// which counts input_required rounds only. A call that needs one more is
// ended: for a tool with an isError result saying so, otherwise with an
// internal error. typed.AddTool refuses a flow whose budget exceeds the
// Server's round limit, which would otherwise end such a call with an
// internal error instead.
func WithBudget(n int) Option { return optionFunc(func(o *options) { o.max = n }) }

// New returns a flow that runs steps in order and then finish, whose
// result completes the call. Each step's questions are asked together;
// the next step comes up once they are all answered or skipped. It reports
// malformed steps (missing functions, a key asked twice in one step, a
// Form type that is not a flat struct) and a budget below 1.
func New[In, S, Out any](steps []Step[In, S], finish func(ctx context.Context, c *Call[In, S]) (Out, error), opts ...Option) (*Flow[In, S, Out], error) {
	o := options{model: model.Client(), max: defaultBudget}
	for _, opt := range opts {
		if opt != nil {
			opt.apply(&o)
		}
	}
	if finish == nil {
		return nil, errors.New("flow: finish is required")
	}
	if o.model == nil {
		return nil, errors.New("flow: nil model")
	}
	if o.max < 1 {
		return nil, errors.New("flow: the budget must be at least 1")
	}
	h := sha256.New()
	h.Write([]byte("mrtrkit/flow/v1"))
	for i, s := range steps {
		if s.err != nil {
			return nil, fmt.Errorf("step %d: %w", i, s.err)
		}
		if len(s.qs) == 0 {
			return nil, fmt.Errorf("flow: step %d has no questions", i)
		}
		seen := map[string]bool{}
		fmt.Fprintf(h, "|%d", i)
		for _, q := range s.qs {
			if q.key == "" {
				return nil, fmt.Errorf("flow: step %d: empty key", i)
			}
			if seen[q.key] {
				return nil, fmt.Errorf("flow: step %d asks key %q twice", i, q.key)
			}
			seen[q.key] = true
			fmt.Fprintf(h, "|%s:%q", q.kind, q.key)
		}
	}
	return &Flow[In, S, Out]{
		steps:  slices.Clone(steps),
		finish: finish,
		model:  o.model,
		max:    o.max,
		shape:  hex.EncodeToString(h.Sum(nil)[:8]),
	}, nil
}

// Must returns f, or panics when err is not nil; for flows built in
// package-level variables.
func Must[In, S, Out any](f *Flow[In, S, Out], err error) *Flow[In, S, Out] {
	if err != nil {
		panic(err)
	}
	return f
}

// Budget returns the flow's budget of questions (see WithBudget).
func (f *Flow[In, S, Out]) Budget() int { return f.max }

// Handler returns f as an mrtr.Handler for tools/call, prompts/get or
// resources/read; see typed.Adapt for how In is bound and Out rendered.
func (f *Flow[In, S, Out]) Handler(opts ...typed.Option) (mrtr.Handler, error) {
	return typed.Adapt[In, Out](f, opts...)
}

// position is what a flow seals into requestState: where the call stands
// and the typed state.
type position struct {
	V     int             `json:"v"`           // format version
	Shape string          `json:"h"`           // the flow's steps and keys, hashed
	Step  int             `json:"p"`           // index of the current step
	Posed int             `json:"n"`           // times questions were put, for the budget
	Done  []string        `json:"d,omitempty"` // keys of the current step answered or skipped
	State json.RawMessage `json:"s,omitempty"` // the typed state
}

const positionVersion = 1

// Handle runs the call from the position its sealed state records (the
// first step when there is none) as far as it can go in this round:
// answers to what that step asked are handed to their use functions;
// questions still open are put to the model or the client; the flow
// advances through every step that completes inline and returns
// input_required at the first that needs the client, or finishes.
//
// Only answers to keys the sealed state says were asked at its step are
// read; answers to any other key are ignored, and an answer missing on the
// retry is asked for again. A state replayed from an earlier round resumes
// from that round's position, exactly as it did the first time.
func (f *Flow[In, S, Out]) Handle(ctx context.Context, req *mrtr.Request, in In) (typed.Outcome[Out], error) {
	var none typed.Outcome[Out]
	c := &Call[In, S]{In: in, Request: req}
	var pos position
	var answered map[string]bool
	if len(req.State) > 0 {
		if err := json.Unmarshal(req.State, &pos); err != nil || pos.V != positionVersion || pos.Shape != f.shape ||
			pos.Step < 0 || pos.Step >= len(f.steps) || pos.Posed < 1 {
			// The state is authentic (the server verified it), so this is
			// a call begun by a different version of the flow.
			return none, mrtr.InvalidStateError(false)
		}
		if len(pos.State) > 0 {
			if err := json.Unmarshal(pos.State, &c.State); err != nil {
				return none, fmt.Errorf("flow: restore state: %w", err)
			}
		}
		// The keys the sealed state says were asked: those of this step's
		// last round.
		answered = set(req.Asked())
	}
	for pos.Step < len(f.steps) {
		step := f.steps[pos.Step]
		done := set(pos.Done)

		// The client's answers count only for the step they were asked at.
		for _, q := range step.qs {
			if done[q.key] || !answered[q.key] {
				continue
			}
			a, ok := q.lookup(req.Responses)
			if !ok {
				continue
			}
			switch err := q.use(ctx, c, a); {
			case err == nil:
				done[q.key] = true
			case errors.Is(err, AskAgain):
			default:
				return none, err
			}
		}
		answered = nil

		type open struct {
			q question[In, S]
			r mrtr.InputRequest
		}
		var pending []open
		for _, q := range step.qs {
			if done[q.key] {
				continue
			}
			r, err := q.build(ctx, c)
			if err != nil {
				return none, err
			}
			if r == nil {
				done[q.key] = true
				continue
			}
			pending = append(pending, open{q, r})
		}
		if len(pending) == 0 {
			pos.Step++
			pos.Done = nil
			continue
		}
		if pos.Posed >= f.max {
			return none, typed.Errorf("this call needed to ask more than %d times and was stopped (%w)", f.max, ErrBudget)
		}
		pos.Posed++

		asks := map[string]mrtr.InputRequest{}
		for _, o := range pending {
			if o.q.kind != kindSampling {
				asks[o.q.key] = o.r
				continue
			}
			res, err := f.model.CreateMessage(ctx, o.r.(*mrtr.SamplingRequest))
			if errors.Is(err, model.ErrDeferred) {
				asks[o.q.key] = o.r
				continue
			}
			if err != nil {
				return none, fmt.Errorf("flow: model for %q: %w", o.q.key, err)
			}
			if err := res.Validate(); err != nil {
				return none, fmt.Errorf("flow: model for %q: %w", o.q.key, err)
			}
			switch err := o.q.use(ctx, c, res); {
			case err == nil:
				done[o.q.key] = true
			case errors.Is(err, AskAgain):
			default:
				return none, serverAnswerErr(o.q.key, err)
			}
		}
		pos.Done = keys(done)
		if len(asks) > 0 {
			b, err := f.seal(&pos, c)
			if err != nil {
				return none, err
			}
			return typed.NeedInput[Out](&mrtr.InputRequired{Requests: asks, State: b}), nil
		}
		// Everything was answered inline, or asked again: look at the
		// same step once more.
	}
	out, err := f.finish(ctx, c)
	if err != nil {
		return none, err
	}
	return typed.Done(out), nil
}

// serverAnswerErr keeps a refusal of the server's own model's answer from
// reaching the client as a client error: the client sent nothing wrong.
func serverAnswerErr(key string, err error) error {
	var te *typed.ToolError
	if errors.As(err, &te) {
		return err
	}
	var e *mrtr.Error
	if errors.As(err, &e) {
		return fmt.Errorf("flow: the model's answer for %q was refused: %s", key, err.Error())
	}
	return err
}

func (f *Flow[In, S, Out]) seal(pos *position, c *Call[In, S]) ([]byte, error) {
	st, err := marshalPlain(c.State)
	if err != nil {
		return nil, fmt.Errorf("flow: encode state: %w", err)
	}
	pos.V, pos.Shape, pos.State = positionVersion, f.shape, st
	return marshalPlain(pos)
}

// marshalPlain encodes v as JSON without HTML escaping: the state is
// sealed, never shown in a page, and escaping would grow a text of '<'
// six-fold towards the size limit of requestState.
func marshalPlain(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte{'\n'}), nil
}

func set(ks []string) map[string]bool {
	m := make(map[string]bool, len(ks))
	for _, k := range ks {
		m[k] = true
	}
	return m
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
