package main

import (
	"testing"
)

// FuzzParsePick checks that no answer makes ParsePick panic and that
// whatever it accepts is one to MaxPicks distinct listed paths.
func FuzzParsePick(f *testing.F) {
	for _, seed := range []string{
		`["README.md","go.mod","mrtr/doc.go"]`,
		`["go.mod"]`,
		`[]`,
		`["go.mod","go.mod"]`,
		`["a b/c.txt","\u00fcn\u00ef.txt","README.md","go.mod"]`,
		`[1,"go.mod"]`,
		`{"a":1}`,
		"```json\n[\"go.mod\"]\n```",
		`["../x"]`,
		"",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, answer string) {
		picks, err := ParsePick(answer, pickListing)
		if err != nil {
			if picks != nil {
				t.Fatalf("refused with picks %q", picks)
			}
			if _, ok := err.(*PickError); !ok {
				t.Fatalf("error of type %T", err)
			}
			return
		}
		if len(picks) == 0 || len(picks) > MaxPicks {
			t.Fatalf("accepted %d picks", len(picks))
		}
		seen := map[string]bool{}
		for _, p := range picks {
			if !pickListing.Contains(p) {
				t.Fatalf("accepted %q, which is not listed", p)
			}
			if seen[p] {
				t.Fatalf("accepted %q twice", p)
			}
			seen[p] = true
		}
	})
}
