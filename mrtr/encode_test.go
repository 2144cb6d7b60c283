package mrtr

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

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
