package mrtr

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/mrtrkit/mrtrkit/internal/wire"
)

// CompleteRequest is the params of completion/complete.
type CompleteRequest struct {
	// Ref is the prompt or resource template whose argument is completed.
	Ref CompletionRef `json:"ref"`
	// Argument is the argument being completed.
	Argument CompletionArgument `json:"argument"`
	// Context holds arguments already chosen; nil when not sent.
	Context *CompletionContext `json:"context,omitempty"`
}

// CompletionRef names what is being completed: a prompt (type
// "ref/prompt", Name) or a resource template (type "ref/resource", URI).
type CompletionRef struct {
	// Type is "ref/prompt" or "ref/resource".
	Type string `json:"type"`
	// Name is the prompt's name, for "ref/prompt".
	Name string `json:"name,omitempty"`
	// URI is the resource's URI or URI template, for "ref/resource".
	URI string `json:"uri,omitempty"`
}

// CompletionArgument is the argument being completed and its partial value.
type CompletionArgument struct {
	// Name is the argument's name.
	Name string `json:"name"`
	// Value is what the user has typed so far.
	Value string `json:"value"`
}

// CompletionContext carries the values of arguments already chosen.
type CompletionContext struct {
	// Arguments are the values already chosen, by argument name.
	Arguments map[string]string `json:"arguments,omitempty"`
}

// Completion is the answer to completion/complete. At most 100 values.
type Completion struct {
	// Values are the suggested values. The Server sends at most 100 and
	// sets HasMore when it cuts the list.
	Values []string `json:"values"`
	// Total is how many values exist in all, when known.
	Total *int `json:"total,omitempty"`
	// HasMore reports that there are values beyond Values (hasMore).
	HasMore bool `json:"hasMore,omitempty"`
}

func (s *Server) completion(ctx context.Context, c *call) (json.RawMessage, *Error) {
	var req CompleteRequest
	if json.Unmarshal(c.p.Ref, &req.Ref) != nil || json.Unmarshal(c.p.Argument, &req.Argument) != nil {
		return nil, InvalidParamsError("completion/complete needs ref and argument objects")
	}
	if !isAbsent(c.p.Context) && json.Unmarshal(c.p.Context, &req.Context) != nil {
		return nil, InvalidParamsError("completion/complete context must be an object")
	}
	switch req.Ref.Type {
	case "ref/prompt":
		if req.Ref.Name == "" {
			return nil, InvalidParamsError("ref/prompt needs a name")
		}
	case "ref/resource":
		if req.Ref.URI == "" {
			return nil, InvalidParamsError("ref/resource needs a uri")
		}
	default:
		return nil, InvalidParamsError(`ref.type must be "ref/prompt" or "ref/resource"`)
	}
	if req.Argument.Name == "" {
		return nil, InvalidParamsError("argument.name is required")
	}
	s.mu.RLock()
	h := s.complete
	completer := s.completerLocked(&req.Ref, req.Argument.Name)
	s.mu.RUnlock()
	if !s.seesRef(c.in, &req.Ref) {
		// A hidden entry is answered as one that does not exist: nothing
		// to suggest.
		h, completer = nil, nil
	}
	if completer != nil {
		var others map[string]string
		if req.Context != nil {
			others = req.Context.Arguments
		}
		h = CompletionHandlerFunc(func(ctx context.Context, r *CompleteRequest) (*Completion, error) {
			vals, err := completer(ctx, r.Argument.Name, r.Argument.Value, others)
			if err != nil {
				return nil, err
			}
			return &Completion{Values: vals}, nil
		})
	}
	if h == nil {
		// Advertised by the description with no handler: nothing to offer.
		h = CompletionHandlerFunc(func(context.Context, *CompleteRequest) (*Completion, error) { return &Completion{}, nil })
	}
	comp, err := h.Complete(ctx, &req)
	if err != nil {
		var e *Error
		if errors.As(err, &e) {
			return nil, e
		}
		return nil, s.internal("completion handler failed", err, c)
	}
	if comp == nil {
		comp = &Completion{}
	}
	cp := *comp
	if cp.Values == nil {
		cp.Values = []string{}
	}
	if len(cp.Values) > 100 {
		cp.Values = cp.Values[:100]
		cp.HasMore = true
	}
	return s.render(wire.ResultComplete, &struct {
		Completion Completion `json:"completion"`
	}{cp}, nil, nil)
}

// completerLocked finds the completer registered for an argument of the
// prompt or resource template ref names. The caller holds s.mu.
func (s *Server) completerLocked(ref *CompletionRef, argument string) Completer {
	switch ref.Type {
	case "ref/prompt":
		if p := s.prompts.byKey[ref.Name]; p != nil {
			return p.completes[argument]
		}
	case "ref/resource":
		if t := s.templates.byKey[ref.URI]; t != nil {
			return t.completes[argument]
		}
		if r := s.resources.byKey[ref.URI]; r != nil {
			return r.completes[argument]
		}
	}
	return nil
}

// seesRef reports whether the caller of in sees the prompt or resource a
// completion reference names. A reference to a URI that no resource or
// template has is left to the completion handler.
func (s *Server) seesRef(in *Inbound, ref *CompletionRef) bool {
	if s.visible == nil {
		return true
	}
	if ref.Type == "ref/prompt" {
		return s.sees(in, KindPrompt, ref.Name)
	}
	s.mu.RLock()
	_, isTemplate := s.templates.byKey[ref.URI]
	_, isResource := s.resources.byKey[ref.URI]
	s.mu.RUnlock()
	switch {
	case isTemplate:
		return s.sees(in, KindResourceTemplate, ref.URI)
	case isResource:
		return s.sees(in, KindResource, ref.URI)
	}
	return true
}
