package legacy

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mrtrkit/mrtrkit/internal/wire"
	"github.com/mrtrkit/mrtrkit/mrtr"
)

func TestStripResult(t *testing.T) {
	for in, want := range map[string]string{
		`{}`:                        `{}`,
		`{"resultType":"complete"}`: `{}`,
		`{ "resultType" : "complete" , "ttlMs":5,"cacheScope":"public"}`:                                             `{}`,
		`{"resultType":"complete","content":[],"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"s"}}}`:         `{"content":[]}`,
		`{"resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo":{},"x.example/a":1},"isError":true}`: `{"_meta":{"x.example/a":1},"isError":true}`,
		`{"a":{"resultType":"nested stays"},"b":[{"ttlMs":1}]}`:                                                      `{"a":{"resultType":"nested stays"},"b":[{"ttlMs":1}]}`,
		`{"_meta":null}`: `{"_meta":null}`,
		`{"_meta":{}}`:   `{}`,
		`{"_meta":{"io.modelcontextprotocol/subscriptionId":"s"},"uri":"u"}`: `{"uri":"u"}`,
	} {
		got, err := stripResult(json.RawMessage(in))
		require.NoError(t, err, in)
		assert.Equal(t, want, string(got), in)
	}
	for _, bad := range []string{`[]`, `"x"`, `{"a":1,"a":2}`, `{"_meta":{"k":1,"k":2}}`} {
		_, err := stripResult(json.RawMessage(bad))
		assert.Error(t, err, bad)
	}
}

func TestLegacyNotification(t *testing.T) {
	for in, want := range map[string]string{
		`{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":1},"notifications":{}}}`: ``,
		`{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":"session-stream-0"}}}`:           `{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`,
		`{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":"x"},"uri":"file:///a"}}`:         `{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"file:///a"}}`,
		`{"jsonrpc":"2.0","method":"notifications/x","params":{"_meta":{"k":"v","io.modelcontextprotocol/subscriptionId":1}}}`:                                     `{"jsonrpc":"2.0","method":"notifications/x","params":{"_meta":{"k":"v"}}}`,
		`not json`: ``,
	} {
		got := legacyNotification([]byte(in))
		assert.Equal(t, want, string(got), in)
	}
}

func TestLegacyError(t *testing.T) {
	nf := legacyError(mrtr.NewError(mrtr.CodeInvalidParams, "Resource not found", map[string]string{"uri": "file:///x"}))
	assert.Equal(t, mrtr.Code(-32002), nf.Code)
	assert.Equal(t, map[string]string{"uri": "file:///x"}, nf.Data)

	other := mrtr.NewError(mrtr.CodeInvalidParams, "Unknown tool", map[string]string{"uri": "file:///x"})
	assert.Same(t, other, legacyError(other))
	for _, c := range []mrtr.Code{mrtr.CodeHeaderMismatch, mrtr.CodeMissingCapability, mrtr.CodeUnsupportedVersion} {
		e := legacyError(mrtr.NewError(c, "why", map[string]any{"requiredCapabilities": map[string]any{}}))
		assert.Equal(t, mrtr.CodeInternalError, e.Code)
		assert.Equal(t, "why", e.Message)
		assert.Nil(t, e.Data)
	}
	for _, c := range []mrtr.Code{mrtr.CodeInternalError, mrtr.CodeMethodNotFound, mrtr.CodeInvalidRequest} {
		e := mrtr.NewError(c, "m", nil)
		assert.Same(t, e, legacyError(e))
	}
}

func TestReservedMetaKeys(t *testing.T) {
	for k, want := range map[string]bool{
		"io.modelcontextprotocol/protocolVersion": true,
		"dev.mcp/x":                   true,
		"io.modelcontextprotocol.x/y": true,
		"x.example/k":                 false,
		"modelcontextprotocol/k":      false,
		"progressToken":               false,
		"traceparent":                 false,
		"a.b.c/d":                     false,
		"x.mcp.y/z":                   true,
		"mcp.x/y":                     false,
		"a./x":                        false,
	} {
		assert.Equal(t, want, reserved([]byte(k)), k)
	}
}

func TestIDKey(t *testing.T) {
	assert.Equal(t, idKey(json.RawMessage(`7`)), idKey(json.RawMessage(`7`)))
	assert.NotEqual(t, idKey(json.RawMessage(`7`)), idKey(json.RawMessage(`"7"`)))
	assert.Equal(t, idKey(json.RawMessage(`"ab"`)), idKey(json.RawMessage(`"a\u0062"`)), "a string id is compared decoded")
	assert.Equal(t, "7", idKey(json.RawMessage(`7`)))
	// As encoding/json reads an id: -0 is 0, an integer past int64 and a
	// number with a fraction are kept as sent.
	for raw, want := range map[string]string{
		`-12`: "-12", `-0`: "0", `0`: "0", `9223372036854775807`: "9223372036854775807",
		`9223372036854775808`: "9223372036854775808", `1.5`: "1.5", `1e3`: "1e3", `"x\"y"`: `"x\"y"`,
	} {
		assert.Equal(t, want, idKey(json.RawMessage(raw)), raw)
	}
}

func TestLegParams(t *testing.T) {
	p, err := legParams(wire.MethodListRoots, nil, "2025-11-25")
	require.NoError(t, err)
	assert.Equal(t, `{}`, string(p))
	form := json.RawMessage(`{"mode":"form","message":"m","requestedSchema":{"type":"object","properties":{}}}`)
	p, err = legParams(wire.MethodElicit, form, "2025-11-25")
	require.NoError(t, err)
	assert.Equal(t, string(form), string(p), "form mode is sent as is")

	p, err = legParams(wire.MethodElicit, json.RawMessage(`{"mode":"url","message":"m","url":"https://x"}`), "2025-11-25")
	require.NoError(t, err)
	assert.Regexp(t, `^\{"elicitationId":"[0-9a-f]{24}","mode":"url","message":"m","url":"https://x"\}$`, string(p))
	p2, err := legParams(wire.MethodElicit, json.RawMessage(`{"mode":"url","message":"m","url":"https://x"}`), "2025-11-25")
	require.NoError(t, err)
	assert.NotEqual(t, string(p), string(p2), "every url elicitation gets its own id")

	p, err = legParams(wire.MethodElicit, json.RawMessage(` {"mode":"url"} `), "2025-11-25")
	require.NoError(t, err)
	var m map[string]string
	require.NoError(t, json.Unmarshal(p, &m), "%s", p)
	assert.Equal(t, "url", m["mode"])
	_, err = legParams(wire.MethodElicit, json.RawMessage(`"x"`), "2025-11-25")
	assert.Error(t, err)
}

func TestClipped(t *testing.T) {
	assert.Equal(t, `"short"`, clipped("short"))
	long := clipped(strings.Repeat("é", 100))
	assert.True(t, strings.HasSuffix(long, `..."`))
	assert.Less(t, len(long), 80)
	var s string
	require.NoError(t, json.Unmarshal([]byte(long), &s))
	assert.True(t, strings.HasPrefix(s, "é"), "cut on a rune boundary")
}

func TestLegParamsFormModeFor20250618(t *testing.T) {
	form := json.RawMessage(`{"mode":"form","message":"m","requestedSchema":{"type":"object","properties":{}}}`)
	p, err := legParams(wire.MethodElicit, form, "2025-06-18")
	require.NoError(t, err)
	assert.NotContains(t, string(p), "mode", "2025-06-18 had no elicitation modes")
	assert.Contains(t, string(p), `"message":"m"`)
}
