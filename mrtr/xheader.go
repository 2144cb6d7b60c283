package mrtr

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
)

// paramHeader is one x-mcp-header declaration of a tool: the argument at
// Path is mirrored in the Mcp-Param-{Name} header.
type paramHeader struct {
	Name string   // as declared
	key  string   // lower-cased, for lookup
	Path []string // property names from the root
	Type string   // "string", "integer" or "boolean"
}

// maxSafeInteger is 2^53-1, the largest integer a mirrored header may carry.
const maxSafeInteger = 1<<53 - 1

// paramHeaders finds and validates the x-mcp-header declarations of an
// input schema. A declaration is valid on a string, integer or boolean
// property reached from the root through "properties" alone, with a name
// that is a non-empty HTTP token, unique regardless of case.
func paramHeaders(schema json.RawMessage) ([]paramHeader, error) {
	// Fast path for the common schema; an escaped spelling of the keyword
	// (\u...) takes the full walk.
	if !bytes.Contains(schema, []byte(`x-mcp-header`)) && !bytes.Contains(schema, []byte(`\u`)) {
		return nil, nil
	}
	var root any
	dec := json.NewDecoder(bytes.NewReader(schema))
	dec.UseNumber()
	if err := dec.Decode(&root); err != nil {
		return nil, fmt.Errorf("inputSchema: %w", err)
	}
	var out []paramHeader
	seen := map[string]bool{}
	var walk func(v any, path []string, reachable bool) error
	walk = func(v any, path []string, reachable bool) error {
		switch t := v.(type) {
		case []any:
			for _, e := range t {
				if err := walk(e, path, false); err != nil {
					return err
				}
			}
		case map[string]any:
			if h, ok := t["x-mcp-header"]; ok {
				name, _ := h.(string)
				where := "/" + strings.Join(path, "/")
				if !reachable || len(path) == 0 {
					return fmt.Errorf("x-mcp-header at %s: only properties reached from the root through \"properties\" may be mirrored", where)
				}
				if !isToken(name) {
					return fmt.Errorf("x-mcp-header at %s: %q is not a valid HTTP header token", where, h)
				}
				key := strings.ToLower(name)
				if seen[key] {
					return fmt.Errorf("x-mcp-header at %s: %q is declared twice (names are case-insensitive)", where, name)
				}
				typ, _ := t["type"].(string)
				if typ != "string" && typ != "integer" && typ != "boolean" {
					return fmt.Errorf("x-mcp-header at %s: property type must be string, integer or boolean", where)
				}
				seen[key] = true
				out = append(out, paramHeader{Name: name, key: key, Path: append([]string(nil), path...), Type: typ})
			}
			keys := make([]string, 0, len(t))
			for k := range t {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				if k == "properties" {
					props, ok := t[k].(map[string]any)
					if !ok {
						continue
					}
					names := make([]string, 0, len(props))
					for n := range props {
						names = append(names, n)
					}
					sort.Strings(names)
					for _, n := range names {
						if err := walk(props[n], append(path, n), reachable); err != nil {
							return err
						}
					}
					continue
				}
				if err := walk(t[k], append(path, k), false); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if err := walk(root, nil, true); err != nil {
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

// checkParamHeaders compares each declared argument with its header.
func checkParamHeaders(decls []paramHeader, args json.RawMessage, headers map[string]HeaderValue) *Error {
	if len(decls) == 0 {
		return nil
	}
	for _, d := range decls {
		h := headers[d.key]
		raw, present, ambiguous := lookupPath(args, d.Path)
		header := "Mcp-Param-" + d.Name
		if ambiguous {
			return ErrHeaderMismatch(header + ": the arguments name " + strings.Join(d.Path, ".") + " more than once, ignoring case")
		}
		if !present {
			if h.Present {
				return ErrHeaderMismatch(header + " header is set but the argument is absent")
			}
			continue
		}
		if !h.Present {
			return ErrHeaderMismatch(header + " header is required")
		}
		if h.Invalid != "" {
			return ErrHeaderMismatch(header + " header value is invalid: " + h.Invalid)
		}
		if !paramMatches(d.Type, raw, h.Value) {
			return ErrHeaderMismatch(header + " header value does not match the argument")
		}
	}
	return nil
}

// lookupPath returns the value at path; null counts as absent. Member
// names are matched ignoring case, as Go's JSON decoding binds them, and
// a path element matching two members is ambiguous: the header would
// vouch for one value while a handler might read the other.
func lookupPath(args json.RawMessage, path []string) (raw json.RawMessage, present, ambiguous bool) {
	cur := args
	for _, p := range path {
		if isAbsent(cur) || cur[0] != '{' {
			return nil, false, false
		}
		var found json.RawMessage
		n := 0
		_ = eachMember(cur, func(name string, v json.RawMessage) error {
			if strings.EqualFold(name, p) {
				found = v
				n++
			}
			return nil
		})
		if n > 1 {
			return nil, false, true
		}
		if n == 0 || isAbsent(found) {
			return nil, false, false
		}
		cur = found
	}
	return cur, true, false
}

func paramMatches(typ string, raw json.RawMessage, header string) bool {
	switch typ {
	case "string":
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return false
		}
		return s == header
	case "boolean":
		var b bool
		if json.Unmarshal(raw, &b) != nil {
			return false
		}
		return strconv.FormatBool(b) == header
	case "integer":
		var f float64
		if json.Unmarshal(raw, &f) != nil || f != math.Trunc(f) || math.Abs(f) > maxSafeInteger {
			return false
		}
		// The header must be the canonical decimal form: no sign on
		// positives, no leading zeros.
		n, err := strconv.ParseInt(header, 10, 64)
		return err == nil && strconv.FormatInt(n, 10) == header && float64(n) == f
	}
	return false
}
