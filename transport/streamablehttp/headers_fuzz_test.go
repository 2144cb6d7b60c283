package streamablehttp

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/mrtrkit/mrtrkit/mrtr"
)

// FuzzReadMirror feeds arbitrary header values, one or two lines, under
// Mcp-Name and an Mcp-Param-* name, to readMirror. Nothing may panic; a
// value is either Invalid (with an empty Value and a reason that quotes
// nothing of it) or exactly what DecodeHeaderValue gives; two lines that
// decode differently are a conflict; and the encoding of any valid UTF-8
// value is read back as that value (the round trip through a header).
func FuzzReadMirror(f *testing.F) {
	for _, s := range []string{"", "echo", "Zürich", "=?base64?WsO8cmljaA==?=", "=?base64?%?=", " x ", "a\nb", "a\r\nMcp-Name: b", "\xff", strings.Repeat("=?base64?", 50)} {
		f.Add(s, "", "region")
		f.Add(s, s, "Region")
		f.Add(s, "other", "r\n")
	}
	f.Fuzz(func(t *testing.T, a, b, param string) {
		h := http.Header{}
		lines := []string{a}
		if b != "" {
			lines = append(lines, b)
		}
		h["Mcp-Name"] = lines
		h["Mcp-Param-"+param] = []string{a}
		var m mrtr.Mirror
		readMirror(h, &m)
		hv := m.Name
		require.True(t, hv.Present, "Mcp-Name was sent but is not present")
		da, errA := DecodeHeaderValue(a)
		switch {
		case hv.Invalid != "":
			require.EqualValuesf(t, "", hv.Value, "an invalid value keeps %q", hv.Value)
			require.Falsef(t, len(hv.Invalid) > 200 || strings.IndexFunc(hv.Invalid, unicode.IsControl) >= 0 || (len(a) > 8 && strings.Contains(hv.Invalid, a)), "the reason %q quotes the value", hv.Invalid)
		case errA != nil:
			require.FailNow(t, fmt.Sprintf("%q does not decode (%v) but was read as %q", a, errA, hv.Value))
		case hv.Value != da:
			require.FailNow(t, fmt.Sprintf("%q read as %q, decodes to %q", a, hv.Value, da))
		}
		if b != "" && errA == nil {
			if db, errB := DecodeHeaderValue(b); errB == nil && db != da && hv.Invalid == "" {
				require.FailNow(t, fmt.Sprintf("lines %q and %q disagree but were read as %q", a, b, hv.Value))
			}
		}
		if utf8.ValidString(a) {
			h := http.Header{"Mcp-Name": {EncodeHeaderValue(a)}}
			var back mrtr.Mirror
			readMirror(h, &back)
			require.Falsef(t, back.Name.Invalid != "" || back.Name.Value != a, "the encoding of %q read back as %+v", a, back.Name)
		}
	})
}
