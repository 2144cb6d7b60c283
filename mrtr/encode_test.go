package mrtr

import (
	"encoding/json"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// FuzzAppendString holds the hand-written string encoder to encoding/json:
// the text decodes to the same string, and is valid JSON whatever the
// bytes.
func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "plain", "quote\" back\\slash", "\n\r\t\x00\x1f", "<tag>&amp;", "é\u2028\u2029😀", "\xff\xfe", "a\xc3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := appendString(nil, s)
		if !json.Valid(got) {
			t.Fatalf("appendString(%q) = %s, not valid JSON", s, got)
		}
		var back, want string
		require.NoError(t, json.Unmarshal(got, &back))
		ref, _ := json.Marshal(s)
		require.NoError(t, json.Unmarshal(ref, &want))
		if back != want {
			t.Fatalf("appendString(%q) decodes to %q, encoding/json's to %q", s, back, want)
		}
		if utf8.ValidString(s) && s == want && back != s {
			t.Fatalf("valid text %q changed", s)
		}
	})
}

func TestCallToolResultEncodesAsEncodingJSON(t *testing.T) {
	prio := 0.5
	cases := []*CallToolResult{
		{Content: []Content{}},
		{Content: []Content{Text("hello <world> & \"you\"\n")}},
		{Content: []Content{Text("a"), &TextContent{Text: "b", Annotations: &Annotations{Priority: &prio}}, &ImageContent{Data: "AAAA", MIMEType: "image/png"}}},
		{Content: []Content{Text("x")}, StructuredContent: json.RawMessage(`{"a": [1, 2]}`), IsError: true},
		{Content: []Content{Text("x")}, StructuredContent: map[string]any{"n": 1, "s": "<"}},
		{Content: []Content{&TextContent{Text: "m", Meta: Object{"k": json.RawMessage(`1`)}}}},
	}
	for _, r := range cases {
		got, err := r.appendMembers([]byte("{"))
		require.NoError(t, err)
		got = append(got, '}')
		want, err := json.Marshal(r)
		require.NoError(t, err)
		assert.JSONEq(t, string(want), string(got))
	}
	_, err := (&CallToolResult{StructuredContent: json.RawMessage(`{"a":`)}).appendMembers(nil)
	assert.Error(t, err, "broken raw structured content is refused, not passed on")
}
