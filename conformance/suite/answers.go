package suite

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strings"
)

// answerText is the text the suite puts in the answers it makes up.
const answerText = "mrtrcheck"

// inputRequest is an embedded request of an input_required result.
type inputRequest struct {
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

// answerAll answers every embedded request, by key: with the answer given
// for the key when there is one, else with one made up from the request
// (an accepted form filled from its schema, an accepted URL elicitation, a
// model reply or one root). madeUp holds the keys whose answers were made
// up.
func answerAll(reqs, given map[string]json.RawMessage) (answers map[string]json.RawMessage, madeUp map[string]bool, err error) {
	answers = make(map[string]json.RawMessage, len(reqs))
	madeUp = map[string]bool{}
	for key, raw := range reqs {
		if a, ok := given[key]; ok {
			answers[key] = a
			continue
		}
		a, err := answerOne(raw)
		if err != nil {
			return nil, nil, fmt.Errorf("input request %q: %w (give its answer in -answers)", key, err)
		}
		answers[key] = a
		madeUp[key] = true
	}
	return answers, madeUp, nil
}

func answerOne(raw json.RawMessage) (json.RawMessage, error) {
	var r inputRequest
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, fmt.Errorf("not an object with a method: %w", err)
	}
	switch r.Method {
	case "elicitation/create":
		var p struct {
			Mode            string          `json:"mode"`
			RequestedSchema json.RawMessage `json:"requestedSchema"`
		}
		if len(r.Params) > 0 {
			if err := json.Unmarshal(r.Params, &p); err != nil {
				return nil, fmt.Errorf("elicitation params: %w", err)
			}
		}
		if p.Mode == "url" {
			return json.RawMessage(`{"action":"accept"}`), nil
		}
		content, err := fillForm(p.RequestedSchema)
		if err != nil {
			return nil, err
		}
		return json.Marshal(map[string]any{"action": "accept", "content": content})
	case "sampling/createMessage":
		return json.Marshal(map[string]any{
			"role":       "assistant",
			"content":    map[string]any{"type": "text", "text": answerText},
			"model":      answerText,
			"stopReason": "endTurn",
		})
	case "roots/list":
		return json.RawMessage(`{"roots":[{"uri":"file:///tmp/mrtrcheck","name":"mrtrcheck"}]}`), nil
	default:
		return nil, fmt.Errorf("the suite cannot answer a %q request", r.Method)
	}
}

// fillForm returns form content with a value for every property of a
// flat elicitation schema.
func fillForm(schema json.RawMessage) (map[string]any, error) {
	content := map[string]any{}
	if len(bytes.TrimSpace(schema)) == 0 {
		return content, nil
	}
	var s struct {
		Properties map[string]map[string]any `json:"properties"`
	}
	dec := json.NewDecoder(bytes.NewReader(schema))
	dec.UseNumber()
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("requestedSchema: %w", err)
	}
	names := make([]string, 0, len(s.Properties))
	for k := range s.Properties {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		content[k] = sampleValue(s.Properties[k])
	}
	return content, nil
}

// sampleValue returns a value that a primitive schema (string, number,
// integer, boolean, or one of the enum forms) accepts.
func sampleValue(p map[string]any) any {
	if v, ok := p["const"]; ok {
		return v
	}
	if v, ok := p["default"]; ok {
		return v
	}
	if e, ok := p["enum"].([]any); ok && len(e) > 0 {
		return e[0]
	}
	for _, kw := range []string{"oneOf", "anyOf"} {
		if c, ok := firstConst(p[kw]); ok {
			return c
		}
	}
	switch p["type"] {
	case "boolean":
		return true
	case "integer", "number":
		return sampleNumber(p)
	case "array":
		items, _ := p["items"].(map[string]any)
		var choices []any
		if e, ok := items["enum"].([]any); ok {
			choices = e
		} else if arr, ok := items["anyOf"].([]any); ok {
			for _, a := range arr {
				if m, ok := a.(map[string]any); ok {
					if c, ok := m["const"]; ok {
						choices = append(choices, c)
					}
				}
			}
		}
		n := 1
		if v, ok := number(p["minItems"]); ok && v > 1 {
			n = int(v)
		}
		if len(choices) == 0 {
			out := make([]any, n)
			for i := range out {
				out[i] = answerText
			}
			return out
		}
		if n > len(choices) {
			n = len(choices)
		}
		return choices[:n]
	default:
		return sampleString(p)
	}
}

func firstConst(v any) (any, bool) {
	arr, _ := v.([]any)
	for _, a := range arr {
		if m, ok := a.(map[string]any); ok {
			if c, ok := m["const"]; ok {
				return c, true
			}
		}
	}
	return nil, false
}

func number(v any) (float64, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, false
	}
	f, err := n.Float64()
	return f, err == nil
}

// sampleNumber returns 1, moved into [minimum, maximum] when those are
// given, and whole for an integer.
func sampleNumber(p map[string]any) any {
	v := 1.0
	if lo, ok := number(p["minimum"]); ok && v < lo {
		v = lo
	}
	if lo, ok := number(p["exclusiveMinimum"]); ok && v <= lo {
		v = lo + 1
	}
	if hi, ok := number(p["maximum"]); ok && v > hi {
		v = hi
	}
	if hi, ok := number(p["exclusiveMaximum"]); ok && v >= hi {
		v = hi - 1
	}
	if p["type"] == "integer" {
		return int64(math.Ceil(v))
	}
	return v
}

// sampleString returns a string of the schema's format, within its
// length bounds.
func sampleString(p map[string]any) string {
	var s string
	switch p["format"] {
	case "email":
		s = "mrtrcheck@example.com"
	case "uri":
		s = "https://example.com/mrtrcheck"
	case "date":
		s = "2026-07-28"
	case "date-time":
		s = "2026-07-28T12:00:00Z"
	default:
		s = answerText
	}
	if lo, ok := number(p["minLength"]); ok && float64(len(s)) < lo {
		s += strings.Repeat("x", int(lo)-len(s))
	}
	if hi, ok := number(p["maxLength"]); ok && hi >= 0 && float64(len(s)) > hi {
		s = s[:int(hi)]
	}
	return s
}
