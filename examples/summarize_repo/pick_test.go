package main

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var pickListing = Listing{Paths: []string{"README.md", "go.mod", "mrtr/doc.go", "a b/c.txt", "ünï.txt"}}

func TestParsePickAccepts(t *testing.T) {
	cases := map[string][]string{
		`["README.md","go.mod","mrtr/doc.go"]`: {"README.md", "go.mod", "mrtr/doc.go"},
		"  \n[ \"go.mod\" ]\n":                 {"go.mod"},
		`["mrtr/doc.go", "README.md"]`:         {"mrtr/doc.go", "README.md"},
		`["a b/c.txt","\u00fcn\u00ef.txt"]`:    {"a b/c.txt", "ünï.txt"},
		"[\"README\\u002emd\"]":                {"README.md"},
	}
	for in, want := range cases {
		got, err := ParsePick(in, pickListing)
		if err != nil {
			assert.Fail(t, fmt.Sprintf("ParsePick(%q): %v", in, err))
			continue
		}
		assert.Truef(t, slices.Equal(got, want), "ParsePick(%q) = %q, want %q", in, got, want)
	}
}

func TestParsePickRefuses(t *testing.T) {
	long := make([]byte, maxPickAnswer+1)
	for i := range long {
		long[i] = ' '
	}
	long[0] = '['
	cases := map[string]string{
		"not JSON":            `README.md, go.mod`,
		"empty":               ``,
		"prose around":        `Here you go: ["go.mod"]`,
		"code fence":          "```json\n[\"go.mod\"]\n```",
		"trailing text":       `["go.mod"] thanks`,
		"two arrays":          `["go.mod"]["README.md"]`,
		"object":              `{"files":["go.mod"]}`,
		"string":              `"go.mod"`,
		"null":                `null`,
		"number":              `3`,
		"empty array":         `[]`,
		"four entries":        `["README.md","go.mod","mrtr/doc.go","a b/c.txt"]`,
		"unknown path":        `["go.sum"]`,
		"traversal":           `["../etc/passwd"]`,
		"absolute":            `["/etc/passwd"]`,
		"unclean spelling":    `["./go.mod"]`,
		"case differs":        `["readme.md"]`,
		"duplicate":           `["go.mod","go.mod"]`,
		"duplicate escaped":   `["go.mod","go\u002emod"]`,
		"number entry":        `["go.mod",1]`,
		"null entry":          `[null]`,
		"array entry":         `[["go.mod"]]`,
		"object entry":        `[{"path":"go.mod"}]`,
		"bool entry":          `[true]`,
		"unterminated":        `["go.mod"`,
		"invalid escape":      `["go\x.mod"]`,
		"too long":            string(long),
		"nested too deep":     `[[[[[[[[[[]]]]]]]]]]`,
		"invalid utf8 string": "[\"go.mod\xff\"]",
	}
	for name, in := range cases {
		got, err := ParsePick(in, pickListing)
		var pe *PickError
		assert.Truef(t, errors.As(err, &pe), "%s: ParsePick(%q) = %q, %v; want a *PickError", name, in, got, err)
	}
}

func TestPickErrorDoesNotQuoteTheAnswer(t *testing.T) {
	_, err := ParsePick(`["<script>secret</script>"]`, pickListing)
	require.Error(t, err, "accepted an unknown path")
	if s := err.Error(); strings.Contains(s, "script") || strings.Contains(s, "secret") {
		require.FailNow(t, fmt.Sprintf("error quotes the answer: %s", s))
	}
}
