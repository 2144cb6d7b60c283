package flow

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"

	"github.com/google/jsonschema-go/jsonschema"

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

// Form is a step that asks the user to fill in a form under key. The
// requested schema is generated from F, a struct of string, number,
// integer and boolean fields (pointers for optional ones), with
// descriptions from `jsonschema` tags. An accepted answer is checked
// against that schema and F's `validate` tags and decoded into F before
// use sees it; members the schema does not declare are dropped. Content
// that fails the checks ends the call with -32602 naming the fields.
func Form[In, S, F any](key, message string, use func(ctx context.Context, c *Call[In, S], a FormAnswer[F]) error) Step[In, S] {
	if use == nil || message == "" {
		return invalid[In, S]("form %q: a message and use are required", key)
	}
	check, schema, err := formSchema[F]()
	if err != nil {
		return invalid[In, S]("form %q: %v", key, err)
	}
	binder, err := typed.NewBinder[F](&typed.BindOptions{Schema: check, IgnoreUnknown: true})
	if err != nil {
		return invalid[In, S]("form %q: %v", key, err)
	}
	req := &mrtr.ElicitRequest{Message: message, RequestedSchema: schema}
	return Step[In, S]{qs: []question[In, S]{{
		key:  key,
		kind: kindElicit,
		build: func(context.Context, *Call[In, S]) (mrtr.InputRequest, error) {
			cp := *req
			return &cp, nil
		},
		lookup: func(r mrtr.Responses) (any, bool) { return r.Elicitation(key) },
		use: func(ctx context.Context, c *Call[In, S], a any) error {
			r := a.(*mrtr.ElicitResult)
			ans := FormAnswer[F]{Action: r.Action}
			if r.Accepted() {
				raw := r.ContentJSON()
				if raw == nil {
					raw = []byte("{}")
				}
				v, err := binder.Bind(raw)
				if err != nil {
					var ae *typed.ArgumentError
					if errors.As(err, &ae) {
						return mrtr.NewError(mrtr.CodeInvalidParams, fmt.Sprintf("Invalid input response %q: %s", key, ae.Error()),
							map[string]any{"key": key, "problems": ae.Problems})
					}
					return err
				}
				ans.Value = v
			}
			return use(ctx, c, ans)
		},
	}}}
}

// formSchema builds the flat schema of a form from F: the schema answers
// are checked against (pointer fields optional, unknown members allowed,
// as they are dropped) and the requested schema sent to the client.
func formSchema[F any]() (*jsonschema.Schema, *mrtr.ElicitSchema, error) {
	s, err := typed.SchemaFor[F](nil)
	if err != nil {
		return nil, nil, err
	}
	if s.Type != "object" || len(s.Properties) == 0 {
		return nil, nil, fmt.Errorf("form type %v must be a struct with at least one field", reflect.TypeFor[F]())
	}
	check := &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{}}
	req := &mrtr.ElicitSchema{Type: "object", Properties: map[string]json.RawMessage{}}
	optional := map[string]bool{}
	for name, p := range s.Properties {
		cp := *p
		if cp.Type == "" && len(cp.Types) == 2 && cp.Types[0] == "null" {
			cp.Type, cp.Types = cp.Types[1], nil
			optional[name] = true
		}
		switch cp.Type {
		case "string", "number", "integer", "boolean":
		default:
			return nil, nil, fmt.Errorf("form field %q must be a string, number, integer or boolean", name)
		}
		raw, err := json.Marshal(&cp)
		if err != nil {
			return nil, nil, err
		}
		check.Properties[name] = &cp
		req.Properties[name] = raw
	}
	for _, name := range s.Required {
		if !optional[name] {
			check.Required = append(check.Required, name)
		}
	}
	req.Required = check.Required
	return check, req, nil
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
