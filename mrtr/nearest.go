package mrtr

import (
	"sort"
	"strings"
)

// Suggestions for a name that matched nothing: the registered names the
// caller sees that are nearest to it, so that "Unknown tool" says what
// was probably meant. Only the error path pays for them.

const (
	maxSuggestions    = 3    // names suggested at most
	maxSuggestScan    = 2048 // names compared at most
	maxSuggestNameLen = 128  // longer names are not compared
)

// nearest returns up to maxSuggestions of names within a small edit
// distance of target (or sharing its prefix), nearest first.
func nearest(target string, names []string) []string {
	if target == "" || len(target) > maxSuggestNameLen {
		return nil
	}
	type cand struct {
		name string
		d    int
	}
	var cs []cand
	lt := strings.ToLower(target)
	for i, n := range names {
		if i == maxSuggestScan {
			break
		}
		if len(n) > maxSuggestNameLen {
			continue
		}
		ln := strings.ToLower(n)
		// What the names share at the start says nothing of how near they
		// are: compare what follows it, tolerating about one edit in three.
		p := 0
		for p < len(lt) && p < len(ln) && lt[p] == ln[p] {
			p++
		}
		limit := max(1, (len(lt)-p+1)/3)
		d := editDistance(lt[p:], ln[p:], limit)
		if d > limit && !(len(lt) >= 3 && (strings.HasPrefix(ln, lt) || strings.HasPrefix(lt, ln))) {
			continue
		}
		cs = append(cs, cand{n, d})
	}
	sort.SliceStable(cs, func(i, j int) bool {
		if cs[i].d != cs[j].d {
			return cs[i].d < cs[j].d
		}
		return cs[i].name < cs[j].name
	})
	out := make([]string, 0, min(len(cs), maxSuggestions))
	for i := 0; i < len(cs) && i < maxSuggestions; i++ {
		out = append(out, cs[i].name)
	}
	return out
}

// editDistance is the Levenshtein distance of a and b in bytes, or
// limit+1 once it is known to exceed limit.
func editDistance(a, b string, limit int) int {
	if d := len(a) - len(b); d > limit || -d > limit {
		return limit + 1
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		best := cur[0]
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			best = min(best, cur[j])
		}
		if best > limit {
			return limit + 1
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// didYouMean renders suggestions after an error message: ` (did you mean
// "add" or "adder"?)`, or "" for none.
func didYouMean(names []string) string {
	if len(names) == 0 {
		return ""
	}
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = quoted(n)
	}
	var s string
	switch len(q) {
	case 1:
		s = q[0]
	default:
		s = strings.Join(q[:len(q)-1], ", ") + " or " + q[len(q)-1]
	}
	return " (did you mean " + s + "?)"
}

// visibleNames returns the names of kind k the caller of in sees, in
// registration order.
func (s *Server) visibleNames(in *Inbound, k string) []string {
	s.mu.RLock()
	var names []string
	switch k {
	case KindTool:
		names = append(names, s.tools.names...)
	case KindPrompt:
		names = append(names, s.prompts.names...)
	case KindResource:
		names = append(names, s.resources.names...)
	}
	s.mu.RUnlock()
	out := names[:0]
	for _, n := range names {
		if s.sees(in, k, n) {
			out = append(out, n)
		}
	}
	return out
}
