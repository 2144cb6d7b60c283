package streamablehttp

import (
	"net/http"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mrtrkit/mrtrkit/mrtr"
)

func TestDecodeHeaderValue(t *testing.T) {
	tests := []struct {
		raw     string
		want    string
		wantErr bool
	}{
		{raw: "echo", want: "echo"},
		{raw: "tools/call", want: "tools/call"},
		{raw: "file:///a.txt", want: "file:///a.txt"},
		{raw: "two words", want: "two words"},
		{raw: "", want: ""},
		{raw: "~!#$%&'*+-.^_`|", want: "~!#$%&'*+-.^_`|"},
		{raw: "=?base64?ZWNobw==?=", want: "echo"},
		{raw: "=?base64?ZWNobw?=", wantErr: true}, // unpadded base64 is refused
		{raw: "=?base64?WsO8cmljaA==?=", want: "Zürich"},
		{raw: "=?base64?IGxlYWRpbmc=?=", want: " leading"},
		{raw: "=?base64?YQpi?=", want: "a\nb"},
		{raw: "=?base64??=", want: ""},
		{raw: "=?BASE64?ZWNobw==?=", want: "=?BASE64?ZWNobw==?="},
		{raw: "x=?base64?ZWNobw==?=", want: "x=?base64?ZWNobw==?="},
		{raw: "=?base64?ZWNobw==", want: "=?base64?ZWNobw=="}, // no closing marker: plain
		{raw: "=?base64?=", want: "=?base64?="},
		{raw: "=?base64?ZW!ob?w==?=", wantErr: true},
		{raw: "=?base64?ZWNob===?=", wantErr: true},
		{raw: "=?base64?ZWNobw-_?=", wantErr: true},
		{raw: "=?base64?Z?=", wantErr: true},
		{raw: "=?base64?/w==?=", wantErr: true},
		{raw: "Zürich", wantErr: true},
		{raw: " leading", wantErr: true},
		{raw: "trailing ", wantErr: true},
		{raw: "\tx", wantErr: true},
		{raw: "a\tb", wantErr: true},
		{raw: "a\x00b", wantErr: true},
		{raw: "a\x7fb", wantErr: true},
		{raw: "a\nb", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.raw, func(t *testing.T) {
			got, err := DecodeHeaderValue(tt.raw)
			if tt.wantErr {
				assert.Error(t, err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestEncodeHeaderValue(t *testing.T) {
	tests := []struct {
		v, want string
	}{
		{"echo", "echo"},
		{"two words", "two words"},
		{"", ""},
		{"Zürich", "=?base64?WsO8cmljaA==?="},
		{" leading", "=?base64?IGxlYWRpbmc=?="},
		{"a\nb", "=?base64?YQpi?="},
		{"=?base64?x?=", "=?base64?PT9iYXNlNjQ/eD89?="},
		{"=?base64?unclosed", "=?base64?PT9iYXNlNjQ/dW5jbG9zZWQ=?="},
		{"=?BASE64?x?=", "=?BASE64?x?="},
	}
	for _, tt := range tests {
		t.Run(tt.v, func(t *testing.T) {
			got := EncodeHeaderValue(tt.v)
			assert.Equal(t, tt.want, got)
			back, err := DecodeHeaderValue(got)
			require.NoError(t, err)
			assert.Equal(t, tt.v, back)
		})
	}
}

// FuzzDecodeHeaderValue checks that decoding never panics, that encoding
// any valid UTF-8 string yields a sendable header value that decodes back
// to it, and that whatever decodes re-encodes to the same value.
func FuzzDecodeHeaderValue(f *testing.F) {
	for _, s := range []string{"", "echo", "Zürich", " x ", "=?base64?ZWNobw==?=", "=?base64?", "=?base64??=", "=?BASE64?x?=", "a\x00b", "\xff", "日本語", "=?base64?/w==?="} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if v, err := DecodeHeaderValue(s); err == nil {
			if !utf8.ValidString(v) {
				t.Fatalf("DecodeHeaderValue(%q) = %q, not UTF-8", s, v)
			}
			again, err := DecodeHeaderValue(EncodeHeaderValue(v))
			if err != nil || again != v {
				t.Fatalf("re-encoding %q: got %q, %v", v, again, err)
			}
		}
		if !utf8.ValidString(s) {
			return
		}
		enc := EncodeHeaderValue(s)
		for i := 0; i < len(enc); i++ {
			if c := enc[i]; c < 0x20 || c > 0x7e {
				t.Fatalf("EncodeHeaderValue(%q) = %q holds byte %#x", s, enc, c)
			}
		}
		if enc != strings.TrimSpace(enc) {
			t.Fatalf("EncodeHeaderValue(%q) = %q has surrounding whitespace", s, enc)
		}
		dec, err := DecodeHeaderValue(enc)
		if err != nil {
			t.Fatalf("DecodeHeaderValue(EncodeHeaderValue(%q)) = %v", s, err)
		}
		if dec != s {
			t.Fatalf("round trip of %q gave %q", s, dec)
		}
	})
}

func TestReadMirror(t *testing.T) {
	h := http.Header{
		"Mcp-Protocol-Version": {"2026-07-28"},
		"Mcp-Method":           {"tools/call"},
		"Mcp-Name":             {"=?base64?WsO8cmljaA==?="},
		"Mcp-Param-Region":     {"us-west"},
		"mcp-param-region":     {"us-west"}, // a non-canonical spelling of the same header
		"Mcp-Param-Limit":      {"1", "2"},
		"Mcp-Param-Bad":        {"=?base64?%?="},
		"Mcp-Param-":           {"ignored"},
		"Mcp-Session-Id":       {"s"},
		"Accept":               {"*/*"},
	}
	m := &mrtr.Mirror{}
	readMirror(h, m)
	assert.Equal(t, mrtr.HeaderValue{Value: "2026-07-28", Present: true}, m.ProtocolVersion)
	assert.Equal(t, mrtr.HeaderValue{Value: "tools/call", Present: true}, m.Method)
	assert.Equal(t, mrtr.HeaderValue{Value: "Zürich", Present: true}, m.Name)
	assert.Equal(t, mrtr.HeaderValue{Value: "us-west", Present: true}, m.Params["region"])
	assert.True(t, m.Params["limit"].Present)
	assert.Equal(t, invalidConflict, m.Params["limit"].Invalid)
	assert.Empty(t, m.Params["limit"].Value)
	assert.NotEmpty(t, m.Params["bad"].Invalid)
	assert.Len(t, m.Params, 3)

	var empty mrtr.Mirror
	readMirror(http.Header{"Content-Type": {"application/json"}}, &empty)
	assert.Equal(t, mrtr.Mirror{}, empty)

	conflict := &mrtr.Mirror{}
	readMirror(http.Header{"Mcp-Name": {"a"}, "mcp-name": {"b"}}, conflict)
	assert.Equal(t, invalidConflict, conflict.Name.Invalid)
}
