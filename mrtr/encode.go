package mrtr

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/mrtrkit/mrtrkit/internal/strictjson"
	"github.com/mrtrkit/mrtrkit/internal/wire"
)

// This file encodes the results handlers return most often without
// reflection: a tool result and its text blocks. Anything else goes
// through encoding/json.

// memberAppender is a result body that appends its own JSON members
// (without the surrounding braces) to b.
type memberAppender interface {
	appendMembers(b []byte) ([]byte, error)
}

// appendMembers renders the tool result's members: content, then
// structuredContent and isError when set.
func (r *CallToolResult) appendMembers(b []byte) ([]byte, error) {
	b = append(b, `"content":[`...)
	for i, c := range r.Content {
		if i > 0 {
			b = append(b, ',')
		}
		var err error
		if b, err = appendContent(b, c); err != nil {
			return nil, err
		}
	}
	b = append(b, ']')
	if r.StructuredContent != nil {
		b = append(b, `,"structuredContent":`...)
		var err error
		if b, err = appendValue(b, r.StructuredContent); err != nil {
			return nil, err
		}
	}
	if r.IsError {
		b = append(b, `,"isError":true`...)
	}
	return b, nil
}

// appendContent renders one content block. A text block without
// annotations or _meta, the common case, is written directly.
func appendContent(b []byte, c Content) ([]byte, error) {
	if t, ok := c.(*TextContent); ok && t != nil && t.Annotations == nil && t.Meta == nil {
		// Room for the text at once: a long text would otherwise grow the
		// buffer step by step, each step a copy left to the collector.
		b = slices.Grow(b, len(t.Text)+len(`{"type":"text","text":""}`))
		b = append(b, `{"type":"text","text":`...)
		b = wire.AppendString(b, t.Text)
		return append(b, '}'), nil
	}
	return appendValue(b, c)
}

// appendValue renders v with encoding/json, except that a json.RawMessage
// is checked and compacted without a detour through Go values.
func appendValue(b []byte, v any) ([]byte, error) {
	if raw, ok := v.(json.RawMessage); ok {
		// Compacted, as encoding/json would: a line-delimited transport
		// must never see a line break inside a message.
		buf := bytes.NewBuffer(b)
		if err := json.Compact(buf, raw); err != nil {
			return nil, err
		}
		return buf.Bytes(), nil
	}
	enc, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return append(b, enc...), nil
}

// inputRequiredBody is the body of an input-required result:
// inputRequests (always present, {} for a load-shedding round) and
// requestState.
type inputRequiredBody struct {
	requests map[string]InputRequest
	keys     []string // the keys of requests, sorted
	token    string
}

// inputRequiredWire is inputRequiredBody as encoding/json renders it.
type inputRequiredWire struct {
	InputRequests map[string]inputRequestWire `json:"inputRequests"`
	RequestState  string                      `json:"requestState"`
}

// wireInputRequests returns the wire form of each request.
func wireInputRequests(reqs map[string]InputRequest) map[string]inputRequestWire {
	asks := make(map[string]inputRequestWire, len(reqs))
	for k, q := range reqs {
		asks[k] = wireInputRequest(q)
	}
	return asks
}

// appendMembers renders the body byte for byte as encoding/json renders
// its inputRequiredWire, the keys in order and the questions of the
// common kinds (a form elicitation, roots) without reflection.
func (r *inputRequiredBody) appendMembers(b []byte) ([]byte, error) {
	keys := r.keys
	for _, k := range keys {
		if htmlChars(k) {
			return r.appendSlow(b)
		}
	}
	if htmlChars(r.token) {
		return r.appendSlow(b)
	}
	b = append(b, `"inputRequests":{`...)
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = wire.AppendString(b, k)
		b = append(b, ':')
		var err error
		if b, err = appendInputRequest(b, r.requests[k]); err != nil {
			return nil, err
		}
	}
	b = append(b, `},"requestState":`...)
	return wire.AppendString(b, r.token), nil
}

// sizeHint is about how many bytes appendMembers writes, so that render
// makes room for them at once: the state and a few hundred bytes a
// question.
func (r *inputRequiredBody) sizeHint() int {
	n := len(r.token) + 40
	for _, k := range r.keys {
		n += len(k) + 256
	}
	return n
}

// appendSlow renders the body with encoding/json.
func (r *inputRequiredBody) appendSlow(b []byte) ([]byte, error) {
	enc, err := json.Marshal(&inputRequiredWire{wireInputRequests(r.requests), r.token})
	if err != nil {
		return nil, err
	}
	return append(b, enc[1:len(enc)-1]...), nil
}

// appendInputRequest renders {method, params} as encoding/json renders
// wireInputRequest(q).
func appendInputRequest(b []byte, q InputRequest) ([]byte, error) {
	start := len(b)
	var ok bool
	switch v := q.(type) {
	case *ElicitRequest:
		b = append(b, `{"method":"`+wire.MethodElicit+`","params":`...)
		b, ok = appendElicit(b, v)
	case *RootsRequest:
		b, ok = append(b, `{"method":"`+wire.MethodListRoots+`","params":{}`...), true
	}
	if !ok {
		enc, err := json.Marshal(wireInputRequest(q))
		if err != nil {
			return nil, err
		}
		return append(b[:start], enc...), nil
	}
	return append(b, '}'), nil
}

// htmlChars reports whether s holds a character wire.AppendString writes
// otherwise than encoding/json: the HTML characters, which encoding/json
// escapes.
func htmlChars(s string) bool { return strings.ContainsAny(s, "<>&") }

// appendElicit renders a form elicitation as encoding/json does, or
// reports false for anything it leaves to encoding/json: another mode,
// a character appendString writes otherwise, a property schema that is
// not compact JSON.
func appendElicit(b []byte, e *ElicitRequest) ([]byte, bool) {
	if e == nil {
		return b, false
	}
	s := e.RequestedSchema
	if s == nil || e.URL != "" || s.Properties == nil || htmlChars(e.Mode) || htmlChars(e.Message) || htmlChars(s.Schema) || htmlChars(s.Type) {
		return b, false
	}
	mode := e.Mode
	if mode == "" {
		mode = "form" // as wireInputRequest sends it
	}
	b = append(b, `{"mode":`...)
	b = wire.AppendString(b, mode)
	b = append(b, `,"message":`...)
	b = wire.AppendString(b, e.Message)
	b = append(b, `,"requestedSchema":{`...)
	if s.Schema != "" {
		b = append(b, `"$schema":`...)
		b = wire.AppendString(b, s.Schema)
		b = append(b, ',')
	}
	b = append(b, `"type":`...)
	b = wire.AppendString(b, s.Type)
	b = append(b, `,"properties":{`...)
	names := make([]string, 0, len(s.Properties))
	for n := range s.Properties {
		names = append(names, n)
	}
	slices.Sort(names)
	for i, n := range names {
		p := s.Properties[n]
		if htmlChars(n) || !compactJSON(p) {
			return b, false
		}
		if i > 0 {
			b = append(b, ',')
		}
		b = wire.AppendString(b, n)
		b = append(b, ':')
		b = append(b, p...)
	}
	b = append(b, '}')
	if len(s.Required) > 0 {
		b = append(b, `,"required":[`...)
		for i, r := range s.Required {
			if htmlChars(r) {
				return b, false
			}
			if i > 0 {
				b = append(b, ',')
			}
			b = wire.AppendString(b, r)
		}
		b = append(b, ']')
	}
	return append(b, "}}"...), true
}

// compactJSON reports whether raw is valid JSON that encoding/json would
// write unchanged: no white space outside strings, and inside strings
// only printable ASCII other than the HTML characters, without escapes
// (left to encoding/json, which knows which ones it rewrites).
func compactJSON(raw json.RawMessage) bool {
	if !strictjson.Valid(raw) {
		return false
	}
	in := false
	for _, c := range raw {
		switch {
		case c >= utf8.RuneSelf || c < 0x20 || c == '<' || c == '>' || c == '&' || c == '\\':
			return false
		case c == '"':
			in = !in
		case !in && (c == ' ' || c == '\t' || c == '\n' || c == '\r'):
			return false
		}
	}
	return true
}
