package mrtr

import (
	"sort"
	"strings"
)

// ParamHeaders returns the names of the headers that the currently
// registered tools ask clients to mirror with x-mcp-header, each as
// "Mcp-Param-{Name}" with Name as the tool declared it, sorted, and each
// name once whatever its case (the first tool to declare it, in
// registration order, sets its spelling). It returns nil when no tool
// declares one.
//
// The list follows the registry: a tool added or removed later changes
// it, so a caller that needs it current (an HTTP transport answering a
// CORS preflight) asks again rather than keeping it. Every registered
// tool counts, whatever WithVisibility hides from a given caller.
func (s *Server) ParamHeaders() []string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var out []string
	seen := map[string]bool{}
	for _, name := range s.tools.names {
		for _, h := range s.tools.byKey[name].headers {
			if !seen[h.key] {
				seen[h.key] = true
				out = append(out, "Mcp-Param-"+h.Name)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return strings.ToLower(out[i]) < strings.ToLower(out[j]) })
	return out
}
