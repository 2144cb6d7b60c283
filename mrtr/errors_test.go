package mrtr

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mrtrkit/mrtrkit/internal/wire"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The ladder's own errors, and whether a transport answers each outside
// the normal result channel.
func TestLadderErrorsEnvelope(t *testing.T) {
	tests := []struct {
		name     string
		err      *Error
		code     Code
		envelope bool
	}{
		{"parse error", parseError("x"), CodeParseError, true},
		{"invalid request", invalidRequest("x"), CodeInvalidRequest, true},
		{"method not found", methodNotFound("m"), CodeMethodNotFound, true},
		{"invalid _meta", invalidMeta("x"), CodeInvalidParams, true},
		{"header mismatch", headerMismatch("x"), CodeHeaderMismatch, true},
		{"missing capability", missingCapability(ClientCapabilities{Roots: &Object{}}), CodeMissingCapability, true},
		{"unsupported version", unsupportedVersion([]string{"2026-07-28"}, "x"), CodeUnsupportedVersion, true},
		{"unknown tool", unknownTool("t", nil), CodeInvalidParams, false},
		{"unknown prompt", unknownPrompt("p", nil), CodeInvalidParams, false},
		{"internal error", internalError(), CodeInternalError, false},
		{"in-band -32602", InvalidParamsError("x"), CodeInvalidParams, false},
		{"resource not found", ResourceNotFoundError("file:///x"), CodeInvalidParams, false},
		{"invalid state", InvalidStateError(false), CodeInvalidParams, false},
		{"expired state", InvalidStateError(true), CodeInvalidParams, false},
		{"strict door", strictArguments(json.RawMessage(`{"a":1,"A":2}`), false), CodeInvalidParams, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.NotNil(t, tt.err)
			assert.Equal(t, tt.code, tt.err.Code)
			assert.Equal(t, tt.envelope, tt.err.Envelope())
		})
	}
	// The envelope mark does not travel on the wire.
	b, err := json.Marshal(invalidMeta("params._meta is required"))
	require.NoError(t, err)
	assert.JSONEq(t, `{"code":-32602,"message":"Invalid _meta: params._meta is required"}`, string(b))
}

func TestLadderErrorBodies(t *testing.T) {
	b, err := json.Marshal(unsupportedVersion(nil, "x"))
	require.NoError(t, err)
	assert.JSONEq(t, `{"code":-32022,"message":"Unsupported protocol version","data":{"supported":[],"requested":"x"}}`, string(b))

	b, err = json.Marshal(missingCapability(ClientCapabilities{Sampling: &SamplingCapability{Tools: Object{}}, Roots: &Object{}}))
	require.NoError(t, err)
	assert.JSONEq(t, `{"code":-32021,"message":"Server requires the roots and sampling capability for this request","data":{"requiredCapabilities":{"sampling":{"tools":{}},"roots":{}}}}`, string(b))

	assert.Equal(t, "mcp error -32603: Internal error", internalError().Error())
	assert.Equal(t, "Method not found: tools/x", methodNotFound("tools/x").Message)
	assert.Equal(t, `Unknown tool: "a b"`, unknownTool("a b", nil).Message)
}

func TestQuotedAndClip(t *testing.T) {
	x := strings.Repeat("x", wire.MaxEcho)
	for in, want := range map[string]string{
		"":                  `""`,
		"plain":             "plain",
		"a.b/c:d":           "a.b/c:d",
		x:                   x,
		x + "y":             `"` + x + `..."`,
		"a b":               `"a b"`,
		"a\"b":              `"a\"b"`,
		`a\b`:               `"a\\b"`,
		"tab\t":             `"tab\t"`,
		"\x7f":              `"\x7f"`,
		"é":                 `"é"`,
		"\xff":              `"\xff"`,
		x[1:] + "é":         `"` + x[1:] + `..."`,
		x[2:] + "€":         `"` + x[2:] + `..."`,
		x[3:] + "€":         `"` + x[3:] + `€"`,
		"line\nbreak\u2028": `"line\nbreak\u2028"`,
	} {
		assert.Equal(t, want, quoted(in), "%q", in)
	}
	assert.Equal(t, x, clip(x))
	assert.Equal(t, x+"...", clip(x+"more"))
	assert.Equal(t, x[1:]+"...", clip(x[1:]+"é"), "cut at a rune boundary")
}
