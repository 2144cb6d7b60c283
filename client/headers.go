package client

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// paramHeader is one argument a tool's schema mirrors into an
// Mcp-Param-<Name> header (SEP-2243 x-mcp-header).
type paramHeader struct {
	name string   // the header name after Mcp-Param-
	path []string // the argument's path from the root of the arguments
	typ  string   // string, integer or boolean
}

// toolHeaders reads the x-mcp-header declarations of a tool's input
// schema. It returns an error, naming the rule broken, when a
// declaration is not one a client may honour: such a tool is dropped
// from tools/list.
func toolHeaders(schema json.RawMessage) ([]paramHeader, error) {
	var out []paramHeader
	seen := map[string]bool{}
	var walk func(raw json.RawMessage, path []string, depth int) error
	walk = func(raw json.RawMessage, path []string, depth int) error {
		if depth > 32 {
			return nil
		}
		var s struct {
			Properties map[string]json.RawMessage `json:"properties"`
		}
		if json.Unmarshal(raw, &s) != nil {
			return nil
		}
		for prop, sub := range s.Properties {
			var p map[string]json.RawMessage
			if json.Unmarshal(sub, &p) != nil {
				continue
			}
			p2 := append(append([]string(nil), path...), prop)
			if h, ok := p["x-mcp-header"]; ok {
				var name string
				if json.Unmarshal(h, &name) != nil {
					return fmt.Errorf("property %q: x-mcp-header is not a string", prop)
				}
				if name == "" {
					return fmt.Errorf("property %q: x-mcp-header is empty", prop)
				}
				if !isToken(name) {
					return fmt.Errorf("property %q: x-mcp-header %q is not an HTTP token", prop, clip(name, 40))
				}
				key := strings.ToLower(name)
				if seen[key] {
					return fmt.Errorf("property %q: x-mcp-header %q repeats another (case-insensitively)", prop, name)
				}
				seen[key] = true
				var typ string
				if json.Unmarshal(p["type"], &typ) != nil || (typ != "string" && typ != "integer" && typ != "boolean") {
					return fmt.Errorf("property %q: x-mcp-header on a property whose type is %s, not string, integer or boolean", prop, clip(string(p["type"]), 40))
				}
				out = append(out, paramHeader{name: name, path: p2, typ: typ})
			}
			if err := walk(sub, p2, depth+1); err != nil {
				return err
			}
		}
		return nil
	}
	if err := walk(schema, nil, 0); err != nil {
		return nil, err
	}
	return out, nil
}

// isToken reports whether s is an RFC 9110 token.
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// headerValues returns the Mcp-Param-* headers (name after the prefix →
// encoded value) for the arguments args of a tool declaring hs. A null
// or absent argument has no header.
func headerValues(hs []paramHeader, args json.RawMessage) (map[string]string, error) {
	if len(hs) == 0 || len(args) == 0 {
		return nil, nil
	}
	out := map[string]string{}
	for _, h := range hs {
		v := lookup(args, h.path)
		if v == nil || string(v) == "null" {
			continue
		}
		s, err := headerText(h.typ, v)
		if err != nil {
			return nil, fmt.Errorf("argument %s (Mcp-Param-%s): %w", strings.Join(h.path, "."), h.name, err)
		}
		out[h.name] = EncodeHeaderValue(s)
	}
	return out, nil
}

// lookup returns the raw value at path in the JSON object raw, or nil.
func lookup(raw json.RawMessage, path []string) json.RawMessage {
	for _, p := range path {
		var m map[string]json.RawMessage
		if json.Unmarshal(raw, &m) != nil {
			return nil
		}
		v, ok := m[p]
		if !ok {
			return nil
		}
		raw = v
	}
	return raw
}

// headerText renders a primitive argument as the header's text.
func headerText(typ string, v json.RawMessage) (string, error) {
	switch v[0] {
	case '"':
		var s string
		if err := json.Unmarshal(v, &s); err != nil {
			return "", err
		}
		return s, nil
	case 't', 'f':
		return string(v), nil
	}
	var f float64
	if err := json.Unmarshal(v, &f); err != nil {
		return "", fmt.Errorf("not a primitive value: %s", clip(string(v), 40))
	}
	if bytes.ContainsAny(v, ".eE") {
		if f != math.Trunc(f) || math.Abs(f) > 1<<53-1 {
			return "", fmt.Errorf("%s is not an integer", clip(string(v), 40))
		}
		return strconv.FormatInt(int64(f), 10), nil
	}
	return string(v), nil
}

// EncodeHeaderValue encodes a value for Mcp-Name or Mcp-Param-*: as it is
// when it is plain visible ASCII (inner spaces allowed), else as
// =?base64?<base64 of the UTF-8>?= — for non-ASCII or control characters,
// leading or trailing white space, or a value that looks like the
// sentinel itself.
func EncodeHeaderValue(s string) string {
	plain := !(strings.HasPrefix(s, "=?base64?") && strings.HasSuffix(s, "?="))
	if plain && s != "" && (s[0] == ' ' || s[0] == '\t' || s[len(s)-1] == ' ' || s[len(s)-1] == '\t') {
		plain = false
	}
	for i := 0; plain && i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f {
			plain = false
		}
	}
	if plain {
		return s
	}
	return "=?base64?" + base64.StdEncoding.EncodeToString([]byte(s)) + "?="
}
