package mrtr

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/google/jsonschema-go/jsonschema"
)

// entry is what every registration holds: its declaration as sent in list
// results (encoded once, at registration), its handler, and the questions
// it declared answerable without a sealed round (StaticAsks).
type entry struct {
	wire      json.RawMessage
	handler   Handler
	asks      map[string]kind
	scopes    []string             // scopes a caller's token must grant
	completes map[string]Completer // completions of arguments, by argument name
	once      bool                 // OnceOnly: each presented state is used once
	task      taskConfig           // TaskSupport (tools only)
}

type toolEntry struct {
	entry
	tool    Tool
	headers []paramHeader
	out     *jsonschema.Resolved // the output schema results are held to; nil for none
}

type promptEntry struct {
	entry
	prompt Prompt
}

type resourceEntry struct {
	entry
	resource Resource
}

type templateEntry struct {
	entry
	template ResourceTemplate
	tmpl     *uriTemplate
}

// registry keeps entries in registration order, with lookup by name.
type registry[T any] struct {
	names []string
	byKey map[string]T
}

func (r *registry[T]) add(name string, v T) bool {
	if r.byKey == nil {
		r.byKey = map[string]T{}
	}
	if _, dup := r.byKey[name]; dup {
		return false
	}
	r.byKey[name] = v
	r.names = append(r.names, name)
	return true
}

func (r *registry[T]) remove(name string) bool {
	if _, ok := r.byKey[name]; !ok {
		return false
	}
	delete(r.byKey, name)
	for i, n := range r.names {
		if n == name {
			r.names = append(r.names[:i:i], r.names[i+1:]...)
			break
		}
	}
	return true
}

// RegisterOption configures one registered tool, prompt or resource.
type RegisterOption interface{ applyReg(*regConfig) }

type regConfig struct {
	asks       map[string]kind
	scopes     []string
	completes  map[string]Completer
	skipOutput bool
	once       bool
	task       taskConfig
}

// RegisterOptions returns one option that applies opts in order: a
// registration's options kept together. With none, it does nothing.
func RegisterOptions(opts ...RegisterOption) RegisterOption {
	cp := append([]RegisterOption(nil), opts...)
	return regFunc(func(c *regConfig) {
		for _, o := range cp {
			if o != nil {
				o.applyReg(c)
			}
		}
	})
}

type regFunc func(*regConfig)

func (f regFunc) applyReg(c *regConfig) { f(c) }

type asksOption map[string]kind

func (a asksOption) applyReg(c *regConfig) { c.asks = a }

// RequireScopes lets only callers whose token grants every one of scopes
// use the tool, prompt or resource: the others are refused with an
// insufficient-scope error (HTTP 403 with a WWW-Authenticate challenge
// naming the scopes, on Streamable HTTP). Listing stays as it is; hide
// entries with WithVisibility.
func RequireScopes(scopes ...string) RegisterOption {
	cp := append([]string(nil), scopes...)
	return regFunc(func(c *regConfig) { c.scopes = cp })
}

// SkipOutputCheck turns off the check of a tool's results against its
// outputSchema, for a handler that guarantees conforming structured
// content by construction (typed tools whose output type generated the
// schema pass it). By default a tool that declares an outputSchema has
// every complete result checked, and a mismatch is -32603.
func SkipOutputCheck() RegisterOption { return regFunc(func(c *regConfig) { c.skipOutput = true }) }

// A Completer suggests values for one argument of a prompt or one
// variable of a resource template: the argument's name, what the user has
// typed so far, and the values of the other arguments already chosen.
type Completer func(ctx context.Context, argument, value string, others map[string]string) ([]string, error)

// Completions registers completers of a prompt's arguments or a resource
// template's variables, by name; completion/complete for them asks the
// completer (before any handler set with SetCompletionHandler), and the
// server advertises the completions capability.
func Completions(completers map[string]Completer) RegisterOption {
	cp := make(map[string]Completer, len(completers))
	for k, v := range completers {
		if v != nil {
			cp[k] = v
		}
	}
	return regFunc(func(c *regConfig) { c.completes = cp })
}

// StaticAsks declares questions a handler always asks in the same form,
// so that answers to them are accepted even on a call that carries no
// requestState (a client may answer a fixed question before being asked).
// Each answer is decoded and validated as an answer to the request given
// for its key (only the request's kind matters here: sampling, form or
// url elicitation, roots); answers to any other key still need a sealed
// state that recorded the question.
//
// Such an answer proves nothing about who was asked or when: never declare
// a static ask for a confirmation, a consent or anything else that must
// follow the server's own question; ask those through a sealed round.
func StaticAsks(asks map[string]InputRequest) RegisterOption {
	cp := make(map[string]kind, len(asks))
	for k, r := range asks {
		if r != nil {
			cp[k] = r.inputKind()
		}
	}
	return asksOption(cp)
}

// entry makes the registry entry the options describe.
func (c *regConfig) entry(wire json.RawMessage, h Handler) entry {
	return entry{wire: wire, handler: h, asks: c.asks, scopes: c.scopes, completes: c.completes, once: c.once, task: c.task}
}

func regOptions(opts []RegisterOption) (regConfig, error) {
	var c regConfig
	for _, o := range opts {
		if o != nil {
			o.applyReg(&c)
		}
	}
	for _, sc := range c.scopes {
		if !validScope(sc) {
			return c, fmt.Errorf("RequireScopes: %q is not a scope token (RFC 6749 section 3.3: printable ASCII but space, '\"' and '\\')", sc)
		}
	}
	return c, nil
}

// validScope reports whether s is a scope token: one or more of %x21,
// %x23-5B and %x5D-7E, so that it can be quoted in a challenge.
func validScope(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if b := s[i]; b < 0x21 || b > 0x7e || b == '"' || b == '\\' {
			return false
		}
	}
	return true
}
