package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/mrtrkit/mrtrkit/client"
	"github.com/mrtrkit/mrtrkit/internal/wire"
)

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
		problems = append(problems, p.Error())
	}
	return decls, problems
}

// findTool lists the tools (client.ListTools, which also teaches the
// client the tool's x-mcp-header declarations for the call) and returns
// the tool's definition. It returns nil, with a warning, when the tool
// cannot be found; it warns about arguments that do not fit their
// declared header type, which the server is likely to refuse.
func (s *session) findTool(ctx context.Context, name string) *client.Tool {
	tools, err := s.c.ListTools(ctx)
	if err != nil {
		fmt.Fprintf(s.env.stderr, "mcpcall: warning: tools/list failed, so no Mcp-Param-* headers are sent: %s\n", termText(err.Error()))
		return nil
	}
	for i := range tools {
		t := &tools[i]
		if t.Name != name {
			continue
		}
		decls, _ := headerDecls(t.InputSchema)
		for _, d := range decls {
			raw, ok := lookupArg(s.args, d.Path)
			if !ok {
				continue
			}
			if _, ok := headerValue(d.Type, raw); !ok {
				fmt.Fprintf(s.env.stderr, "mcpcall: warning: argument %s is %s but x-mcp-header %q declares %s; the server is likely to refuse Mcp-Param-%s\n",
					termLine(strings.Join(d.Path, ".")), jsonKind(raw), d.Name, d.Type, termLine(d.Name))
			}
		}
		return t
	}
	fmt.Fprintf(s.env.stderr, "mcpcall: warning: tool %q is not in tools/list (or its x-mcp-header declarations are invalid, and a conforming client does not offer it); calling it without Mcp-Param-* headers\n", name)
	return nil
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
