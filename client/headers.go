package client

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/mrtrkit/mrtrkit/internal/wire"
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
	decls, problems := wire.HeaderDecls(schema, false)
	if len(problems) > 0 {
		return nil, problems[0]
	}
	out := make([]paramHeader, 0, len(decls))
	for _, d := range decls {
		out = append(out, paramHeader{name: d.Name, path: d.Path, typ: d.Type})
	}
	return out, nil
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
