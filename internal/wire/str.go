package wire

import (
	"encoding/json"
	"unicode/utf8"
)

// String decodes raw into a Go string exactly as json.Unmarshal would,
// reporting whether json.Unmarshal would have succeeded (so null gives
// "" and true, as it does there). The common case, a bare literal
// without escapes or bytes outside printable ASCII, is copied straight
// from between its quotes; anything else goes through encoding/json, so
// the two paths cannot disagree.
func String(raw []byte) (string, bool) {
	if body, ok := plainString(raw); ok {
		return string(body), true
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}

// plainString returns what stands between the quotes of raw when raw is a
// bare string literal that decodes to exactly those bytes: no escapes, no
// control characters, nothing outside printable ASCII.
func plainString(raw []byte) ([]byte, bool) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return nil, false
	}
	body := raw[1 : len(raw)-1]
	for _, c := range body {
		if c < 0x20 || c == '"' || c == '\\' || c >= utf8.RuneSelf {
			return nil, false
		}
	}
	return body, true
}

// Interned is String for a value that is usually one of known: when raw
// is a bare literal whose content is an element of known, that element
// is returned, and no memory is allocated. Anything else is decoded as
// String decodes it.
func Interned(raw []byte, known []string) (string, bool) {
	if body, ok := plainString(raw); ok {
		for _, k := range known {
			if string(body) == k {
				return k, true
			}
		}
		return string(body), true
	}
	return String(raw)
}
