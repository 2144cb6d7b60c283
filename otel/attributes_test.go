package otelmrtr

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"

	"github.com/mrtrkit/mrtrkit/mrtr"
)

func TestReadMeta(t *testing.T) {
	fields := []string{"traceparent", "tracestate", "baggage"}
	tp := "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	for _, tc := range []struct {
		name    string
		params  string
		version string
		carrier map[string]string
	}{
		{"absent", ``, "", nil},
		{"not an object", `[1,2]`, "", nil},
		{"no _meta", `{"name":"x","arguments":{"_meta":{"traceparent":"` + tp + `"}}}`, "", nil},
		{"after the arguments", ` {"arguments":{"a":[1,{"b":"c"}]},"_meta":{"traceparent":"` + tp + `","io.modelcontextprotocol/protocolVersion":"2026-07-28"}}`,
			"2026-07-28", map[string]string{"traceparent": tp}},
		{"every field", `{"_meta":{"traceparent":"` + tp + `","tracestate":"a=b","baggage":"k=v","other":"x"}}`,
			"", map[string]string{"traceparent": tp, "tracestate": "a=b", "baggage": "k=v"}},
		{"exact member name", `{"_Meta":{"traceparent":"` + tp + `"}}`, "", nil},
		{"exact key names", `{"_meta":{"TraceParent":"` + tp + `"}}`, "", nil},
		{"escaped member name", `{"\u005fmeta":{"traceparent":"` + tp + `"}}`, "", map[string]string{"traceparent": tp}},
		{"not strings", `{"_meta":{"traceparent":7,"baggage":null,"io.modelcontextprotocol/protocolVersion":{}}}`, "", nil},
		{"_meta not an object", `{"_meta":"traceparent"}`, "", nil},
		{"broken", `{"name":"x","_meta":{"traceparent":"` + tp + `"`, "", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := readMeta(json.RawMessage(tc.params), fields)
			assert.Equal(t, tc.version, got.version)
			assert.Equal(t, tc.carrier, got.carrier)
		})
	}
}

func TestClip(t *testing.T) {
	assert.Equal(t, "short", clip("short"))
	long := strings.Repeat("é", maxValue) // two bytes each
	c := clip(long)
	assert.LessOrEqual(t, len(c), maxValue)
	assert.True(t, utf8.ValidString(c))
	assert.True(t, strings.HasPrefix(long, c))
}

func TestKnownMethod(t *testing.T) {
	assert.Equal(t, "tools/call", knownMethod(mrtr.MethodToolsCall))
	assert.Equal(t, "subscriptions/listen", knownMethod(mrtr.MethodSubscriptionsListen))
	assert.Equal(t, otherMethod, knownMethod("ping"), "removed in 2026-07-28")
	assert.Equal(t, otherMethod, knownMethod("tools/call/../x"))
}
