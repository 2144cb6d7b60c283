package main

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
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
			require.Falsef(t, picks != nil, "refused with picks %q", picks)
			if _, ok := err.(*PickError); !ok {
				require.FailNow(t, fmt.Sprintf("error of type %T", err))
			}
			return
		}
		require.Falsef(t, len(picks) == 0 || len(picks) > MaxPicks, "accepted %d picks", len(picks))
		seen := map[string]bool{}
		for _, p := range picks {
			require.Truef(t, pickListing.Contains(p), "accepted %q, which is not listed", p)
			require.Falsef(t, seen[p], "accepted %q twice", p)
			seen[p] = true
		}
	})
}
