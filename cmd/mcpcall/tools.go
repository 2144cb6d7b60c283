package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/mrtrkit/mrtrkit/internal/wire"
)

// toolInfo is what mcpcall keeps of a tool from tools/list.
type toolInfo struct {
	Name        string          `json:"name"`
	InputSchema json.RawMessage `json:"inputSchema"`

	decls    []headerDecl
	problems []string
}

// headerDecl is one x-mcp-header declaration: the argument at Path goes
// into the header Mcp-Param-{Name}.
type headerDecl = wire.HeaderDecl

// headerDecls finds the x-mcp-header declarations of an input schema
// (SEP-2243). Valid ones sit on a string, integer or boolean property
// reached from the root through "properties" alone, and name a non-empty
// HTTP token unique regardless of case. The others are reported as
// problems: a conforming client would not offer such a tool.
func headerDecls(schema json.RawMessage) ([]headerDecl, []string) {
	decls, found := wire.HeaderDecls(schema, false)
	var problems []string
	for _, p := range found {
		var msg string
		switch p.Kind {
		case wire.HeaderSchemaInvalid:
			msg = "inputSchema does not decode: " + p.Err.Error()
		case wire.HeaderUnreachable:
			msg = fmt.Sprintf("x-mcp-header at %s is not on a property reached through \"properties\" alone", p.Where)
		case wire.HeaderNotToken:
			msg = fmt.Sprintf("x-mcp-header at %s: %v is not an HTTP token", p.Where, p.Value)
		case wire.HeaderDuplicate:
			msg = fmt.Sprintf("x-mcp-header at %s: %q is declared twice", p.Where, p.Name)
		default:
			msg = fmt.Sprintf("x-mcp-header at %s: type %q is not string, integer or boolean", p.Where, p.Type)
		}
		problems = append(problems, msg)
	}
	return decls, problems
}

// findTool returns the tool's definition from tools/list, listing the
// tools once per run (again when refresh is set). It returns nil, with a
// warning, when the tool cannot be found.
func (s *session) findTool(ctx context.Context, name string, refresh bool) *toolInfo {
	if s.tools != nil && !refresh {
		return s.tools[name]
	}
	s.tools = map[string]*toolInfo{}
	var cursor *string
	for page := 1; page <= maxPages; page++ {
		var params []member
		if cursor != nil {
			params = []member{{"cursor", mustJSON(*cursor)}}
		}
		resp, err := s.client.call(ctx, wire.MethodToolsList, "", params, nil)
		if err != nil || resp.Error != nil {
			why := ""
			if err != nil {
				why = err.Error()
			} else {
				why = fmt.Sprintf("JSON-RPC error %d: %s", resp.Error.Code, resp.Error.Message)
			}
			fmt.Fprintf(s.env.stderr, "mcpcall: warning: tools/list failed, so no Mcp-Param-* headers are sent: %s\n", termText(why))
			return nil
		}
		var r struct {
			Tools      []*toolInfo `json:"tools"`
			NextCursor *string     `json:"nextCursor"`
		}
		if err := json.Unmarshal(resp.Result, &r); err != nil {
			fmt.Fprintf(s.env.stderr, "mcpcall: warning: tools/list result does not decode, so no Mcp-Param-* headers are sent: %v\n", err)
			return nil
		}
		for _, t := range r.Tools {
			if t == nil {
				continue
			}
			t.decls, t.problems = headerDecls(t.InputSchema)
			s.tools[t.Name] = t
		}
		if t, ok := s.tools[name]; ok {
			for _, p := range t.problems {
				fmt.Fprintf(s.env.stderr, "mcpcall: warning: tool %q: %s (a conforming client would not offer this tool)\n", name, termLine(p))
			}
			return t
		}
		if r.NextCursor == nil || (cursor != nil && *cursor == *r.NextCursor) {
			break
		}
		cursor = r.NextCursor
	}
	fmt.Fprintf(s.env.stderr, "mcpcall: warning: tool %q is not in tools/list; calling it without Mcp-Param-* headers\n", name)
	return nil
}

// paramHeaders renders the Mcp-Param-* headers the tool's declarations
// ask for, from the arguments: strings as they are, integers in decimal,
// booleans as true or false. Absent and null arguments get no header.
func (s *session) paramHeaders(t *toolInfo) map[string]string {
	if t == nil || len(t.decls) == 0 {
		return nil
	}
	out := map[string]string{}
	for _, d := range t.decls {
		raw, ok := lookupArg(s.args, d.Path)
		if !ok {
			continue
		}
		v, ok := headerValue(d.Type, raw)
		if !ok {
			fmt.Fprintf(s.env.stderr, "mcpcall: warning: argument %s is %s but x-mcp-header %q declares %s; Mcp-Param-%s not sent\n",
				termLine(strings.Join(d.Path, ".")), jsonKind(raw), d.Name, d.Type, termLine(d.Name))
			continue
		}
		out[d.Name] = v
	}
	return out
}

// lookupArg returns the argument at path; null counts as absent. A name
// matches exactly, or else regardless of case, as the server reads it.
func lookupArg(args json.RawMessage, path []string) (json.RawMessage, bool) {
	cur := args
	for _, p := range path {
		cur = bytes.TrimSpace(cur)
		if len(cur) == 0 || cur[0] != '{' {
			return nil, false
		}
		names, values, err := orderedMembers(cur)
		if err != nil {
			return nil, false
		}
		var found json.RawMessage
		for i, n := range names {
			if n == p {
				found = values[i]
				break
			}
		}
		if found == nil {
			for i, n := range names {
				if strings.EqualFold(n, p) {
					found = values[i]
					break
				}
			}
		}
		if found == nil || string(bytes.TrimSpace(found)) == "null" {
			return nil, false
		}
		cur = found
	}
	return bytes.TrimSpace(cur), true
}

// headerValue renders an argument for its header.
func headerValue(typ string, raw json.RawMessage) (string, bool) {
	switch typ {
	case "string":
		var s string
		if len(raw) == 0 || raw[0] != '"' || json.Unmarshal(raw, &s) != nil {
			return "", false
		}
		return s, true
	case "boolean":
		switch string(raw) {
		case "true", "false":
			return string(raw), true
		}
	case "integer":
		f, err := strconv.ParseFloat(string(raw), 64)
		if err != nil || f != math.Trunc(f) || math.Abs(f) > 1<<53-1 {
			return "", false
		}
		return strconv.FormatInt(int64(f), 10), true
	}
	return "", false
}
