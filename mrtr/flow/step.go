package flow

import (
	"context"
	"errors"
	"fmt"

	"github.com/mrtrkit/mrtrkit/mrtr"
	"github.com/mrtrkit/mrtrkit/mrtr/typed"
)

// Call is one call of a flow as its steps see it. A step's functions run
// on a fresh Call each round, rebuilt from the sealed state.
type Call[In, S any] struct {
	// In holds the call's arguments, decoded and validated.
	In In
	// State is the flow's typed state. What the steps store here is
	// encoded with encoding/json and sealed into requestState whenever the
	// flow asks for input, and restored on the retry; it must survive that
	// round trip (exported fields) and stay small. It starts as the zero S.
	State S
	// Request is the request being served: round, principal, client
	// capabilities, progress and log notifications.
	Request *mrtr.Request

	// reask holds, for this round, what was wrong with the answer to a
	// form that is asked again.
	reask map[string]error
}

// AskAgain, returned by a step's use function, asks that question again
// (built anew from the state as the use function left it) instead of
// moving on. Each asking counts against the flow's budget.
var AskAgain = errors.New("flow: ask again")

// Step is one stage of a flow: one question, or several asked together
// (All). A flow moves to the next step once every question of the step is
// answered or skipped. Build steps with Sample, Elicit, Form and Roots.
type Step[In, S any] struct {
	qs  []question[In, S]
	err error
}

type kind uint8

const (
	kindSampling kind = iota + 1
	kindElicit
	kindRoots
)

func (k kind) String() string {
	switch k {
	case kindSampling:
		return "sampling"
	case kindElicit:
		return "elicitation"
	}
	return "roots"
}

// question is one request of a step and what to do with its answer.
type question[In, S any] struct {
	key  string
	kind kind
	// build returns the request to ask; nil skips the question.
	build func(ctx context.Context, c *Call[In, S]) (mrtr.InputRequest, error)
	// lookup finds the client's answer in the retry's responses.
	lookup func(r mrtr.Responses) (any, bool)
	// use receives the answer, of the type lookup or the model returns.
	use func(ctx context.Context, c *Call[In, S], answer any) error
}

func invalid[In, S any](format string, args ...any) Step[In, S] {
	return Step[In, S]{err: fmt.Errorf("flow: "+format, args...)}
}

// Sample is a step that asks a model for a completion under key. build
// returns the sampling request, or nil to skip the step; use receives the
// completion. Whose model answers is the flow's configuration (WithModel):
// the client's, through sampling/createMessage embedded in input_required
// and answered on the retry, or one the server calls itself, inline in the
// same round. The step's code is the same either way.
//
// The completion is untrusted: use should check it and return an error
// when it is unusable, typically mrtr.InvalidParamsError (-32602) for an
// answer the client sent. The call then ends with that error and nothing
// of the answer is kept. When the completion came from the server's own
// model, an *mrtr.Error from use becomes an internal error instead, since
// the client sent nothing wrong.
func Sample[In, S any](key string,
	build func(ctx context.Context, c *Call[In, S]) (*mrtr.SamplingRequest, error),
	use func(ctx context.Context, c *Call[In, S], r *mrtr.SamplingResult) error,
) Step[In, S] {
	if build == nil || use == nil {
		return invalid[In, S]("sample %q: build and use are required", key)
	}
	return Step[In, S]{qs: []question[In, S]{{
		key:  key,
		kind: kindSampling,
		build: func(ctx context.Context, c *Call[In, S]) (mrtr.InputRequest, error) {
			r, err := build(ctx, c)
			if r == nil || err != nil {
				return nil, err
			}
			return r, nil
		},
		lookup: func(r mrtr.Responses) (any, bool) { return r.Sampling(key) },
		use: func(ctx context.Context, c *Call[In, S], a any) error {
			return use(ctx, c, a.(*mrtr.SamplingResult))
		},
	}}}
}

// Elicit is a step that asks the user under key, in form or url mode.
// build returns the elicitation request, or nil to skip the step; use
// receives the user's answer (accept, decline or cancel; form content is
// already checked to hold only strings, numbers, booleans and string
// arrays). For a form whose content should decode into a struct, use Form.
func Elicit[In, S any](key string,
	build func(ctx context.Context, c *Call[In, S]) (*mrtr.ElicitRequest, error),
	use func(ctx context.Context, c *Call[In, S], r *mrtr.ElicitResult) error,
) Step[In, S] {
	if build == nil || use == nil {
		return invalid[In, S]("elicit %q: build and use are required", key)
	}
	return Step[In, S]{qs: []question[In, S]{{
		key:  key,
		kind: kindElicit,
		build: func(ctx context.Context, c *Call[In, S]) (mrtr.InputRequest, error) {
			r, err := build(ctx, c)
			if r == nil || err != nil {
				return nil, err
			}
			return r, nil
		},
		lookup: func(r mrtr.Responses) (any, bool) { return r.Elicitation(key) },
		use: func(ctx context.Context, c *Call[In, S], a any) error {
			return use(ctx, c, a.(*mrtr.ElicitResult))
		},
	}}}
}

// Roots is a step that asks for the client's roots under key.
func Roots[In, S any](key string, use func(ctx context.Context, c *Call[In, S], r *mrtr.RootsResult) error) Step[In, S] {
	if use == nil {
		return invalid[In, S]("roots %q: use is required", key)
	}
	return Step[In, S]{qs: []question[In, S]{{
		key:  key,
		kind: kindRoots,
		build: func(context.Context, *Call[In, S]) (mrtr.InputRequest, error) {
			return &mrtr.RootsRequest{}, nil
		},
		lookup: func(r mrtr.Responses) (any, bool) { return r.Roots(key) },
		use: func(ctx context.Context, c *Call[In, S], a any) error {
			return use(ctx, c, a.(*mrtr.RootsResult))
		},
	}}}
}

// FormAnswer is the user's answer to a Form: the action, and the content
// decoded into F when the user accepted.
type FormAnswer[F any] struct {
	// Action is "accept", "decline" or "cancel".
	Action string
	// Value is the submitted content; the zero F unless Action is "accept".
	Value F
}

// Accepted reports whether the user submitted the form.
func (a FormAnswer[F]) Accepted() bool { return a.Action == "accept" }

// Declined reports whether the user explicitly refused to fill the form
// in. Do not ask again: go on without the answer or end the call.
func (a FormAnswer[F]) Declined() bool { return a.Action == "decline" }

// Cancelled reports whether the user dismissed the form without choosing.
func (a FormAnswer[F]) Cancelled() bool { return a.Action == "cancel" }

// FormOption configures a Form step.
type FormOption interface{ applyForm(*formOptions) }

type formOptions struct {
	reask bool
}

type formOptionFunc func(*formOptions)

func (f formOptionFunc) applyForm(o *formOptions) { f(o) }

// ReaskInvalid makes a Form step ask its question again when the content
// the user submitted fails the form's checks, its message followed by
// what was wrong, instead of ending the call with -32602. Each asking
// counts against the flow's budget, which ends a call whose answers keep
// failing.
func ReaskInvalid() FormOption {
	return formOptionFunc(func(o *formOptions) { o.reask = true })
}

// Form is a step that asks the user to fill in a form under key, with
// message. The form is generated from F by typed.NewForm (see typed.Form
// for the fields and tags it reads): a struct of string, number, integer
// and boolean fields and multi-selects, pointers for optional ones, with
// the bounds, lengths, formats and enums of its validate tags, and the
// titles and defaults of its mcp tags. An accepted answer is checked
// against the schema that was asked and F's validate tags and decoded
// into F before use sees it; members the schema does not declare are
// dropped. Content that fails the checks ends the call with -32602 naming
// each problem, or is asked again with ReaskInvalid. A declined or
// cancelled form reaches use with its action and the zero F: use decides
// how the call goes on.
func Form[In, S, F any](key, message string, use func(ctx context.Context, c *Call[In, S], a FormAnswer[F]) error, opts ...FormOption) Step[In, S] {
	if message == "" {
		return invalid[In, S]("form %q: a message and use are required", key)
	}
	return FormFunc(key, func(*Call[In, S]) string { return message }, use, opts...)
}

// FormFunc is Form with a message built for each call from its arguments
// and state, such as "Which of the 3 files should be summarised?".
func FormFunc[In, S, F any](key string, message func(c *Call[In, S]) string, use func(ctx context.Context, c *Call[In, S], a FormAnswer[F]) error, opts ...FormOption) Step[In, S] {
	if use == nil || message == nil {
		return invalid[In, S]("form %q: a message and use are required", key)
	}
	var o formOptions
	for _, opt := range opts {
		if opt != nil {
			opt.applyForm(&o)
		}
	}
	// The form's own message is never sent: each asking has the call's.
	form, err := typed.NewForm[F](key)
	if err != nil {
		return invalid[In, S]("form %q: %v", key, err)
	}
	return Step[In, S]{qs: []question[In, S]{{
		key:  key,
		kind: kindElicit,
		build: func(_ context.Context, c *Call[In, S]) (mrtr.InputRequest, error) {
			msg := message(c)
			if msg == "" {
				return nil, fmt.Errorf("flow: form %q: the message function returned no message", key)
			}
			asked := form.WithMessage(msg)
			if err := c.reask[key]; err != nil {
				// Asked again: the request Reask builds, the message
				// followed by what was wrong with the last answer.
				return asked.Reask(key, err).Requests[key], nil
			}
			return asked.Elicit(), nil
		},
		lookup: func(r mrtr.Responses) (any, bool) { return r.Elicitation(key) },
		use: func(ctx context.Context, c *Call[In, S], a any) error {
			v, act, err := form.Decode(key, a.(*mrtr.ElicitResult))
			if err != nil {
				var fe *typed.FormError
				if o.reask && errors.As(err, &fe) {
					if c.reask == nil {
						c.reask = map[string]error{}
					}
					c.reask[key] = err
					return AskAgain
				}
				return err
			}
			return use(ctx, c, FormAnswer[F]{Action: string(act), Value: v})
		},
	}}}
}

// All joins steps into one whose questions are asked together, in one
// round. Their keys must differ. Answers are taken as they arrive: a
// question answered on one retry is not asked again while the others are.
func All[In, S any](steps ...Step[In, S]) Step[In, S] {
	var out Step[In, S]
	seen := map[string]bool{}
	for _, s := range steps {
		if s.err != nil {
			return s
		}
		for _, q := range s.qs {
			if seen[q.key] {
				return invalid[In, S]("all: key %q is asked twice", q.key)
			}
			seen[q.key] = true
			out.qs = append(out.qs, q)
		}
	}
	if len(out.qs) == 0 {
		return invalid[In, S]("all: no questions")
	}
	return out
}

// When makes s conditional: its questions are skipped when cond, called
// as the step comes up, returns false.
func When[In, S any](cond func(c *Call[In, S]) bool, s Step[In, S]) Step[In, S] {
	if cond == nil {
		return invalid[In, S]("when: nil condition")
	}
	out := Step[In, S]{err: s.err, qs: make([]question[In, S], len(s.qs))}
	for i, q := range s.qs {
		build := q.build
		q.build = func(ctx context.Context, c *Call[In, S]) (mrtr.InputRequest, error) {
			if !cond(c) {
				return nil, nil
			}
			return build(ctx, c)
		}
		out.qs[i] = q
	}
	return out
}
