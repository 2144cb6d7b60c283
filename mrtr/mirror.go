package mrtr

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/mrtrkit/mrtrkit/internal/wire"
)

// This file holds the whole header-mirror rule of MCP 2026-07-28: a
// transport that carries copies of body values beside the body (the
// Streamable HTTP headers MCP-Protocol-Version, Mcp-Method, Mcp-Name and
// Mcp-Param-*) decodes them into a Mirror, and the ladder compares each
// with the body at its place (-32020 on any disagreement). A transport
// without such copies (stdio) passes no Mirror, and none of this runs.

// Mirror holds the decoded copies of body values that a transport carries.
type Mirror struct {
	// ProtocolVersion is the MCP-Protocol-Version header.
	ProtocolVersion HeaderValue
	// Method is the Mcp-Method header.
	Method HeaderValue
	// Name is the Mcp-Name header: the tool or prompt name, or the
	// resource URI.
	Name HeaderValue
	// Params are the Mcp-Param-{Name} values, keyed by the lower-cased Name.
	Params map[string]HeaderValue
}

// HeaderValue is one decoded header value.
type HeaderValue struct {
	// Value is the decoded value, usable when Present and not Invalid.
	Value string
	// Present reports whether the header was sent.
	Present bool
	// Invalid, when not empty, says why the raw value could not be decoded
	// (bad characters, broken base64 form); the value is then unusable.
	Invalid string
}

// checkVersionHeader compares the protocol version header with the
// version the body claims (ladder step 3). A missing or malformed header
// is a mismatch too.
func checkVersionHeader(m *Mirror, version string, claimed bool) *Error {
	if m == nil {
		return nil
	}
	switch pv := m.ProtocolVersion; {
	case !pv.Present:
		return headerMismatch("MCP-Protocol-Version header is required")
	case pv.Invalid != "":
		return headerMismatch("MCP-Protocol-Version header is invalid: " + pv.Invalid)
	case claimed && pv.Value != version:
		return headerMismatch(fmt.Sprintf("MCP-Protocol-Version header value %s does not match body value %s", quoted(pv.Value), quoted(version)))
	}
	return nil
}

// checkMirror compares Mcp-Method, Mcp-Name (for methods that name a
// target) and, for a tool, the Mcp-Param-* headers of its x-mcp-header
// declarations with the body (ladder steps 7 and 9).
func checkMirror(c *call, m *method) *Error {
	h := c.in.Mirror
	if h == nil {
		return nil
	}
	switch v := h.Method; {
	case !v.Present:
		return headerMismatch("Mcp-Method header is required")
	case v.Invalid != "":
		return headerMismatch("Mcp-Method header is invalid: " + v.Invalid)
	case v.Value != c.method:
		return headerMismatch(fmt.Sprintf("Mcp-Method header value %s does not match body value %s", quoted(v.Value), quoted(c.method)))
	}
	if m.target == "" {
		return nil
	}
	switch n := h.Name; {
	case !n.Present:
		return headerMismatch("Mcp-Name header is required for " + c.method)
	case n.Invalid != "":
		return headerMismatch("Mcp-Name header is invalid: " + n.Invalid)
	case n.Value != c.target:
		return headerMismatch(fmt.Sprintf("Mcp-Name header value %s does not match body value %s", quoted(n.Value), quoted(c.target)))
	}
	if c.ep.entry == nil {
		return nil
	}
	return checkParamHeaders(c.ep.headers, c.p.Arguments, h.Params)
}

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
	decls, problems := wire.HeaderDecls(schema, true)
	if len(problems) > 0 {
		return nil, problems[0]
	}
	var out []paramHeader
	for _, d := range decls {
		out = append(out, paramHeader{Name: d.Name, key: strings.ToLower(d.Name), Path: d.Path, Type: d.Type})
	}
	return out, nil
}

// checkParamHeaders compares each declared argument with its header.
func checkParamHeaders(decls []paramHeader, args json.RawMessage, headers map[string]HeaderValue) *Error {
	if len(decls) == 0 {
		return nil
	}
	for _, d := range decls {
		h := headers[d.key]
		raw, present := lookupPath(args, d.Path)
		header := "Mcp-Param-" + d.Name
		if !present {
			if h.Present {
				return headerMismatch(header + " header is set but the argument is absent")
			}
			continue
		}
		if !h.Present {
			return headerMismatch(header + " header is required")
		}
		if h.Invalid != "" {
			return headerMismatch(header + " header value is invalid: " + h.Invalid)
		}
		if !paramMatches(d.Type, raw, h.Value) {
			return headerMismatch(header + " header value does not match the argument")
		}
	}
	return nil
}

// lookupPath returns the value at path; null counts as absent. Names match
// as Go's decoding matches them to struct fields, ignoring case under
// Unicode simple folding: the header must vouch for the value a handler
// reads, and {"REGION":"eu"} is read as region. The strict door, which
// runs next, refuses arguments with two such names in one object, so at
// most one member matches.
func lookupPath(args json.RawMessage, path []string) (raw json.RawMessage, present bool) {
	cur := args
	for _, p := range path {
		if isAbsent(cur) || cur[0] != '{' {
			return nil, false
		}
		var found json.RawMessage
		_ = wire.EachMember(cur, func(name string, v json.RawMessage) error {
			if strings.EqualFold(name, p) {
				found = v
			}
			return nil
		})
		if isAbsent(found) {
			return nil, false
		}
		cur = found
	}
	return cur, true
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
