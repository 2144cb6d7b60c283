package wire

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestStringMatchesEncodingJSON(t *testing.T) {
	for _, raw := range []string{
		`"plain"`, `""`, `"a\"b"`, `"a\\b"`, `"\u00e9t\u00e9"`, `"été"`, "\"\xff\xfe\"",
		"\"a\x01b\"", `"a"b"`, `"unterminated`, `"`, `null`, `7`, `{}`, `[]`, `"\ud800"`,
		` "padded"`, `"tab	in"`, `"/\/"`,
	} {
		var want string
		wantOK := json.Unmarshal([]byte(raw), &want) == nil
		got, ok := String([]byte(raw))
		assert.Falsef(t, ok != wantOK || got != want, "String(%q) = %q, %v; encoding/json gives %q, %v", raw, got, ok, want, wantOK)
		view, ok := StringView([]byte(raw))
		assert.Falsef(t, ok != wantOK || view != want, "StringView(%q) = %q, %v; encoding/json gives %q, %v", raw, view, ok, want, wantOK)
	}
}

// TestStringView checks that StringView reads a bare literal in place,
// without allocating, and copies whatever has escapes.
func TestStringView(t *testing.T) {
	raw := []byte(`"AbC-_09"`)
	var got string
	allocs := testing.AllocsPerRun(100, func() { got, _ = StringView(raw) })
	assert.Zero(t, allocs)
	require.Equal(t, "AbC-_09", got)
	raw[1] = 'x' // shares raw's memory, as documented
	assert.Equal(t, "xbC-_09", got)

	esc := []byte(`"a\nb"`)
	got, ok := StringView(esc)
	require.True(t, ok)
	esc[1] = 'z'
	assert.Equal(t, "a\nb", got, "an escaped literal is decoded into memory of its own")
}

// FuzzString checks that String and encoding/json agree on every input
// and that String accepts exactly what encoding/json accepts.
func FuzzString(f *testing.F) {
	for _, s := range []string{`"x"`, `"a\nb"`, "\"\xc3\x28\"", `"\u2028"`, `1`, `"a"b"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		var want string
		wantErr := json.Unmarshal(raw, &want)
		got, ok := String(raw)
		require.Falsef(t, ok && wantErr != nil, "String(%q) accepted %q; encoding/json refuses: %v", raw, got, wantErr)
		require.Falsef(t, ok && got != want, "String(%q) = %q; encoding/json gives %q", raw, got, want)
		require.Falsef(t, !ok && wantErr == nil, "String(%q) refused; encoding/json reads %q", raw, want)
		view, vok := StringView(raw)
		require.Falsef(t, vok != ok || view != got, "StringView(%q) = %q, %v; String gives %q, %v", raw, view, vok, got, ok)
	})
}

func BenchmarkString(b *testing.B) {
	raw := []byte(`"2026-07-28"`)
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := String(raw); !ok {
			b.Fatal("refused")
		}
	}
}

func TestInterned(t *testing.T) {
	known := []string{"tools/call", "ping"}
	for _, raw := range []string{`"tools/call"`, `"ping"`, `"tools\/call"`, `"other"`, `null`, `7`, `"pin"`, `"tools/call`} {
		want, wantOK := String([]byte(raw))
		got, ok := Interned([]byte(raw), known)
		assert.Falsef(t, got != want || ok != wantOK, "Interned(%s) = %q, %v; String gives %q, %v", raw, got, ok, want, wantOK)
	}
	raw := []byte(`"tools/call"`)
	if n := testing.AllocsPerRun(100, func() { _, _ = Interned(raw, known) }); n != 0 {
		assert.Fail(t, fmt.Sprintf("a known value costs %v allocations, want 0", n))
	}
}

// TestAppendStringRoundTrips: what AppendString writes is valid JSON that
// decodes to the string given (invalid UTF-8 as U+FFFD, as encoding/json
// decodes it), and agrees with encoding/json byte for byte but for the
// HTML characters, which it leaves alone.
func TestAppendStringRoundTrips(t *testing.T) {
	for _, s := range []string{"", "plain", `a"b`, `a\b`, "été", "tab\there", "nl\n\r", "\x01\x1f", "bs\b ff\f", "\xff\xfe", "\u2028\u2029", "<a&b>", "emoji 😀"} {
		got := AppendString([]byte("x"), s)
		require.Equal(t, byte('x'), got[0], "appends to what it is given")
		got = got[1:]
		require.Truef(t, json.Valid(got), "AppendString(%q) = %s is not valid JSON", s, got)
		var back string
		require.NoError(t, json.Unmarshal(got, &back))
		var want string
		enc, err := json.Marshal(s)
		require.NoError(t, err)
		require.NoError(t, json.Unmarshal(enc, &want))
		assert.Equalf(t, want, back, "AppendString(%q) decodes differently from encoding/json's encoding", s)
		if !strings.ContainsAny(s, "<>&") {
			assert.Equalf(t, string(enc), string(got), "AppendString(%q)", s)
		}
	}
}

// FuzzAppendString holds the hand-written string encoder to encoding/json:
// the text decodes to the same string, and is valid JSON whatever the
// bytes.
func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "plain", "quote\" back\\slash", "\n\r\t\x00\x1f", "<tag>&amp;", "é\u2028\u2029😀", "\xff\xfe", "a\xc3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := AppendString(nil, s)
		require.True(t, json.Valid(got), "AppendString(%q) = %s, not valid JSON", s, got)
		var back, want string
		require.NoError(t, json.Unmarshal(got, &back))
		ref, _ := json.Marshal(s)
		require.NoError(t, json.Unmarshal(ref, &want))
		require.Equal(t, want, back, "AppendString(%q) decodes to %q, encoding/json's to %q", s, back, want)
		if utf8.ValidString(s) && s == want {
			require.Equal(t, s, back, "valid text %q changed", s)
		}
	})
}

// plainRunByBytes is PlainRun one byte at a time: what it must agree with.
func plainRunByBytes(b []byte, i int) int {
	for ; i < len(b); i++ {
		if c := b[i]; c < 0x20 || c == '"' || c == '\\' || c >= 0x80 {
			return i
		}
	}
	return i
}

// Every byte that stops PlainRun stops it wherever it lies in a word of
// eight, after runs of every length, and the bytes around those that
// stop it (0x1f/0x20, 0x21/0x22/0x23, 0x5b/0x5c/0x5d, 0x7f/0x80, 0xff)
// are judged alike by both readers.
func TestPlainRun(t *testing.T) {
	for _, c := range []byte{0x00, 0x01, 0x1f, 0x20, 0x21, '"', 0x23, 0x5b, '\\', 0x5d, 0x7e, 0x7f, 0x80, 0xa0, 0xdc, 0xff} {
		for n := range 40 {
			for start := range 3 {
				b := append(bytes.Repeat([]byte{'a'}, n), c, 'z', 'z')
				require.Equal(t, plainRunByBytes(b, start), PlainRun(b, start), "byte %#x after %d plain bytes, from %d", c, n, start)
			}
		}
	}
	require.Equal(t, 0, PlainRun(nil, 0))
	require.Equal(t, 11, PlainRun([]byte("abcdefghijk"), 0))
}

func FuzzPlainRun(f *testing.F) {
	f.Add([]byte(`AQECazGQeXcwFwWg6BJfMWgXOffqjHX-GYSFVijAcn0z"x`), 0)
	f.Add([]byte("abc\x1fdefghijk\\"), 2)
	f.Fuzz(func(t *testing.T, b []byte, i int) {
		if i < 0 || i > len(b) {
			return
		}
		require.Equal(t, plainRunByBytes(b, i), PlainRun(b, i))
	})
}
