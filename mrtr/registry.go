package mrtr

import (
	"encoding/json"
)

// entry is what every registration holds: its declaration as sent in list
// results (encoded once, at registration), its handler, and the questions
// it declared answerable without a sealed round (StaticAsks).
type entry struct {
	wire    json.RawMessage
	handler Handler
	asks    map[string]kind
}

type toolEntry struct {
	entry
	tool    Tool
	headers []paramHeader
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

type regConfig struct{ asks map[string]kind }

type asksOption map[string]kind

func (a asksOption) applyReg(c *regConfig) { c.asks = a }

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

func regOptions(opts []RegisterOption) regConfig {
	var c regConfig
	for _, o := range opts {
		if o != nil {
			o.applyReg(&c)
		}
	}
	return c
}
