package mrtr

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"strings"

	"github.com/mrtrkit/mrtrkit/discover"
	"github.com/mrtrkit/mrtrkit/internal/wire"
)

// cursorPrefix begins the text of every cursor. Cursors are opaque to
// clients: base64url of "n:" and the name of the first item of the page.
// A cursor naming an item that is gone, or that does not decode, is
// -32602.
const cursorPrefix = "n:"

func encodeCursor(name string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(cursorPrefix + name))
}

func decodeCursor(c string) (string, bool) {
	b, err := base64.RawURLEncoding.Strict().DecodeString(c)
	if err != nil || !strings.HasPrefix(string(b), cursorPrefix) {
		return "", false
	}
	return string(b[len(cursorPrefix):]), true
}

// page selects one page of names starting at the cursor.
func (s *Server) page(c *call, names []string) (page []string, next string, err *Error) {
	start := 0
	if !isAbsent(c.p.Cursor) {
		var cur string
		if json.Unmarshal(c.p.Cursor, &cur) != nil {
			return nil, "", InvalidParamsError("Invalid cursor")
		}
		if cur != "" {
			name, ok := decodeCursor(cur)
			if !ok {
				return nil, "", InvalidParamsError("Invalid cursor")
			}
			start = -1
			for i, n := range names {
				if n == name {
					start = i
					break
				}
			}
			if start < 0 {
				return nil, "", InvalidParamsError("Invalid cursor")
			}
		}
	}
	end := min(start+s.pageSize, len(names))
	if end < len(names) {
		next = encodeCursor(names[end])
	}
	return names[start:end], next, nil
}

// renderList renders a list result: the items under key, nextCursor, and
// the list cache hint.
func (s *Server) renderList(c *call, key string, items []json.RawMessage, next string) (json.RawMessage, *Error) {
	n := 0
	for _, it := range items {
		n += len(it) + 1
	}
	b := make([]byte, 0, n+len(key)+64)
	b = append(b, `{"`...)
	b = append(b, key...)
	b = append(b, `":[`...)
	for i, it := range items {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, it...)
	}
	b = append(b, ']')
	if next != "" {
		b = append(b, `,"nextCursor":"`...)
		b = append(b, next...)
		b = append(b, '"')
	}
	b = append(b, '}')
	hint := s.hint(discover.CacheList, c.in.Principal)
	return s.render(wire.ResultComplete, json.RawMessage(b), nil, &hint)
}

// listOf renders one page of a registry, of the entries the caller sees.
func listOf[T any](s *Server, c *call, reg *registry[T], kind, key string, encode func(T) json.RawMessage) (json.RawMessage, *Error) {
	s.mu.RLock()
	names := reg.names
	if s.visible != nil {
		seen := make([]string, 0, len(names))
		for _, n := range names {
			if s.sees(c.in, kind, n) {
				seen = append(seen, n)
			}
		}
		names = seen
	}
	names, next, err := s.page(c, names)
	items := make([]json.RawMessage, len(names))
	for i, n := range names {
		items[i] = encode(reg.byKey[n])
	}
	s.mu.RUnlock()
	if err != nil {
		return nil, err
	}
	return s.renderList(c, key, items, next)
}

func (s *Server) listTools(_ context.Context, c *call) (json.RawMessage, *Error) {
	return listOf(s, c, &s.tools, KindTool, "tools", func(e *toolEntry) json.RawMessage { return e.wire })
}

func (s *Server) listPrompts(_ context.Context, c *call) (json.RawMessage, *Error) {
	return listOf(s, c, &s.prompts, KindPrompt, "prompts", func(e *promptEntry) json.RawMessage { return e.wire })
}

func (s *Server) listResources(_ context.Context, c *call) (json.RawMessage, *Error) {
	return listOf(s, c, &s.resources, KindResource, "resources", func(e *resourceEntry) json.RawMessage { return e.wire })
}

func (s *Server) listTemplates(_ context.Context, c *call) (json.RawMessage, *Error) {
	return listOf(s, c, &s.templates, KindResourceTemplate, "resourceTemplates", func(e *templateEntry) json.RawMessage { return e.wire })
}
