package client

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// FuzzSSEReader feeds untrusted event streams to the reader: it must end
// with io.EOF or an error, never panic or loop.
func FuzzSSEReader(f *testing.F) {
	f.Add([]byte("id: 1\nretry: 500\ndata: {\"a\":1}\n\n"))
	f.Add([]byte("data: a\r\ndata: b\r\n\r\n: comment\n\nevent: x\rdata: y\r\r"))
	f.Add([]byte("data"))
	f.Fuzz(func(t *testing.T, b []byte) {
		r := newSSEReader(bytes.NewReader(b))
		for i := 0; i <= len(b)+1; i++ {
			ev, err := r.next()
			if err != nil {
				return
			}
			require.NotNil(t, ev, "nil event without error")
		}
		require.FailNow(t, "more events than bytes")
	})
}

// FuzzParseMessage feeds untrusted JSON-RPC messages to the parser.
func FuzzParseMessage(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"result":{}}`))
	f.Add([]byte(`{"jsonrpc":"2.0","id":"s","method":"roots/list"}`))
	f.Add([]byte(`{"jsonrpc":"2.0","method":"n","params":[]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := parseMessage(b)
		if err == nil {
			require.Equal(t, "2.0", m.JSONRPC, "accepted a message that is not JSON-RPC 2.0")
		}
	})
}

// FuzzToolHeaders feeds untrusted tool schemas to the x-mcp-header reader
// and the value encoder.
func FuzzToolHeaders(f *testing.F) {
	f.Add([]byte(`{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"A"}}}`), []byte(`{"a":"x y"}`))
	f.Fuzz(func(t *testing.T, schema, args []byte) {
		hs, err := toolHeaders(schema)
		if err != nil {
			return
		}
		vals, err := headerValues(hs, args)
		if err != nil {
			return
		}
		for _, v := range vals {
			require.Truef(t, visibleASCII(v), "header value %q is not visible ASCII", v)
		}
	})
}

// visibleASCII reports whether every byte of s is visible ASCII or a space
// (0x20 to 0x7e).
func visibleASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] >= 0x7f {
			return false
		}
	}
	return true
}

// FuzzWWWAuthenticate feeds untrusted challenges to the parser.
func FuzzWWWAuthenticate(f *testing.F) {
	f.Add(`Bearer error="invalid_token", error_description="a \"b\", c", resource_metadata="http://x/y", scope="a b"`)
	f.Add(`Basic realm="x", Bearer abc==, DPoP algs="ES256"`)
	f.Fuzz(func(t *testing.T, h string) {
		for _, c := range parseWWWAuthenticate([]string{h}) {
			require.NotNil(t, c.params, "nil params")
		}
	})
}

func TestWWWAuthenticate(t *testing.T) {
	cs := parseWWWAuthenticate([]string{`Basic realm="x", Bearer error="insufficient_scope", error_description="a \"b\", c", scope="mcp:basic mcp:write", resource_metadata="http://h/.well-known/oauth-protected-resource/mcp"`})
	require.Len(t, cs, 2, "%+v", cs)
	assert.Equal(t, "bearer", cs[1].scheme, "%+v", cs)
	assert.Equal(t, "mcp:basic mcp:write", cs[1].params["scope"], "%+v", cs)
	assert.Equal(t, `a "b", c`, cs[1].params["error_description"], "%+v", cs)
	assert.Equal(t, "http://h/.well-known/oauth-protected-resource/mcp", cs[1].params["resource_metadata"], "%+v", cs)
}
