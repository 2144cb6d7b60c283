package wire

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// HeaderDecl is one x-mcp-header declaration of an input schema
// (SEP-2243): the argument at Path goes into the header
// Mcp-Param-{Name}.
type HeaderDecl struct {
	Name string   // as declared
	Path []string // property names from the root
	Type string   // "string", "integer" or "boolean"
}

// HeaderProblemKind says what is wrong with an x-mcp-header declaration.
type HeaderProblemKind int

// The problems HeaderDecls reports, in the order it checks them.
const (
	HeaderSchemaInvalid HeaderProblemKind = iota // the schema does not decode (Err)
	HeaderUnreachable                            // not on a property reached from the root through "properties" alone
	HeaderNotToken                               // the name (Value) is not a non-empty HTTP token
	HeaderDuplicate                              // the name is declared twice, regardless of case
	HeaderBadType                                // the property's type (Type) is not string, integer or boolean
)

// HeaderProblem is one invalid x-mcp-header declaration.
type HeaderProblem struct {
	Kind  HeaderProblemKind
	Where string // the declaration's path from the root, "/a/b"
	Value any    // the keyword's value as decoded
	Name  string // Value when it is a string
	Type  string // the property's "type" when it is a string
	Err   error  // for HeaderSchemaInvalid, the decoding error
}

// Error says what is wrong with the declaration, naming where it is.
func (p HeaderProblem) Error() string {
	switch p.Kind {
	case HeaderSchemaInvalid:
		return "inputSchema: " + p.Err.Error()
	case HeaderUnreachable:
		return fmt.Sprintf("x-mcp-header at %s: only properties reached from the root through \"properties\" may be mirrored", p.Where)
	case HeaderNotToken:
		return fmt.Sprintf("x-mcp-header at %s: %s is not a valid HTTP header token", p.Where, clipValue(p.Value))
	case HeaderDuplicate:
		return fmt.Sprintf("x-mcp-header at %s: %q is declared twice (names are case-insensitive)", p.Where, p.Name)
	default:
		return fmt.Sprintf("x-mcp-header at %s: property type must be string, integer or boolean, not %s", p.Where, clipValue(p.Type))
	}
}

// Unwrap returns the decoding error of a schema that does not decode.
func (p HeaderProblem) Unwrap() error { return p.Err }

// clipValue renders a declaration's value for a message, at most 40
// bytes of it.
func clipValue(v any) string {
	b, _ := json.Marshal(v)
	if len(b) > 40 {
		return string(b[:40]) + "…"
	}
	return string(b)
}

// HeaderDecls finds the x-mcp-header declarations of an input schema. A
// declaration is valid on a string, integer or boolean property reached
// from the root through "properties" alone, with a name that is a
// non-empty HTTP token, unique regardless of case. Objects are walked in
// the order of their sorted member names.
//
// A strict walk (a server registering a tool) stops at the first problem
// and does not look inside a "properties" that is not an object. A
// lenient walk (a client judging a tool it was offered) reports every
// problem, and looks inside such a "properties" as in any other keyword.
func HeaderDecls(schema []byte, strict bool) ([]HeaderDecl, []HeaderProblem) {
	// Fast path for the common schema; an escaped spelling of the keyword
	// (\u...) takes the full walk.
	if !bytes.Contains(schema, []byte(`x-mcp-header`)) && !bytes.Contains(schema, []byte(`\u`)) {
		return nil, nil
	}
	var root any
	dec := json.NewDecoder(bytes.NewReader(schema))
	dec.UseNumber()
	if err := dec.Decode(&root); err != nil {
		return nil, []HeaderProblem{{Kind: HeaderSchemaInvalid, Where: "/", Err: err}}
	}
	w := headerWalk{strict: strict, seen: map[string]bool{}}
	w.walk(root, nil, true)
	return w.decls, w.problems
}

// headerWalk is the state of one HeaderDecls walk.
type headerWalk struct {
	strict   bool
	seen     map[string]bool // lower-cased names declared so far
	decls    []HeaderDecl
	problems []HeaderProblem
}

// stop reports whether a strict walk has met its problem.
func (w *headerWalk) stop() bool { return w.strict && len(w.problems) > 0 }

func (w *headerWalk) walk(v any, path []string, reachable bool) {
	switch t := v.(type) {
	case []any:
		for _, e := range t {
			if w.walk(e, path, false); w.stop() {
				return
			}
		}
	case map[string]any:
		if h, ok := t["x-mcp-header"]; ok {
			w.declaration(t, h, path, reachable)
			if w.stop() {
				return
			}
		}
		for _, k := range sortedKeys(t) {
			if k == "properties" {
				props, ok := t[k].(map[string]any)
				if ok || w.strict {
					for _, n := range sortedKeys(props) {
						if w.walk(props[n], append(path, n), reachable); w.stop() {
							return
						}
					}
					continue
				}
			}
			if w.walk(t[k], append(path, k), false); w.stop() {
				return
			}
		}
	}
}

// declaration judges the x-mcp-header keyword h of the schema object t
// at path.
func (w *headerWalk) declaration(t map[string]any, h any, path []string, reachable bool) {
	name, _ := h.(string)
	typ, _ := t["type"].(string)
	p := HeaderProblem{Where: "/" + strings.Join(path, "/"), Value: h, Name: name, Type: typ}
	key := strings.ToLower(name)
	switch {
	case !reachable || len(path) == 0:
		p.Kind = HeaderUnreachable
	case !IsToken(name):
		p.Kind = HeaderNotToken
	case w.seen[key]:
		p.Kind = HeaderDuplicate
	case typ != "string" && typ != "integer" && typ != "boolean":
		p.Kind = HeaderBadType
	default:
		w.seen[key] = true
		w.decls = append(w.decls, HeaderDecl{Name: name, Path: append([]string(nil), path...), Type: typ})
		return
	}
	w.problems = append(w.problems, p)
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// IsToken reports whether s is an RFC 9110 token.
func IsToken(s string) bool {
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
