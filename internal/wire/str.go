package wire

import (
	"encoding/binary"
	"encoding/json"
	"unicode/utf8"
	"unsafe"
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

// StringView is String without the copy in the common case: the string
// of a bare literal shares raw's memory. It is for a string whose use
// ends before anything could write to raw, and which nothing keeps; the
// value it returns is always the one String would.
func StringView(raw []byte) (string, bool) {
	if body, ok := plainString(raw); ok {
		if len(body) == 0 {
			return "", true
		}
		return unsafe.String(&body[0], len(body)), true
	}
	return String(raw)
}

// plainString returns what stands between the quotes of raw when raw is a
// bare string literal that decodes to exactly those bytes: no escapes, no
// control characters, nothing outside printable ASCII.
func plainString(raw []byte) ([]byte, bool) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return nil, false
	}
	body := raw[1 : len(raw)-1]
	if !Plain(body) {
		return nil, false
	}
	return body, true
}

// plainByte marks the bytes plainString lets through: printable ASCII
// but the quote and the backslash.
var plainByte = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

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

// AppendString appends s to b as a JSON string, escaped as encoding/json
// escapes it but for the HTML characters (<, > and &), which JSON does not
// need escaped: quotes, backslashes and control characters are escaped,
// invalid UTF-8 becomes U+FFFD, and U+2028 and U+2029 are escaped for
// JavaScript. Unlike strconv.Quote, the result is always valid JSON.
func AppendString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		// Runs that need no escaping, eight bytes at a time.
		if i = PlainRun(unsafe.Slice(unsafe.StringData(s), len(s)), i); i == len(s) {
			break
		}
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i++
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xF])
			i += n
			start = i
			continue
		}
		i += n
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// Plain reports whether b stands for itself between JSON quotes: ASCII
// from 0x20 up, without a quote or a backslash (the bytes plainByte
// lets through).
func Plain(b []byte) bool { return PlainRun(b, 0) == len(b) }

// PlainRun returns the index of the first byte of b at or after i that is
// a quote, a backslash, a control character or not ASCII, or len(b) when
// there is none. It reads eight bytes at a time: the long strings of a
// request (a requestState is hundreds of base64url characters) hold none
// of these bytes, and every reader of strings skips to them first.
func PlainRun(b []byte, i int) int {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	for ; i+8 <= len(b); i += 8 {
		w := binary.LittleEndian.Uint64(b[i:])
		// A byte's high bit is set in one of these terms exactly when it
		// is below 0x20, equal to '"' or '\\', or at least 0x80 (a borrow
		// out of a byte happens only when that byte is itself one of them).
		lt := w - 0x20*ones
		quote := (w ^ 0x22*ones) - ones
		bslash := (w ^ 0x5C*ones) - ones
		if (lt|quote|bslash|w)&highs != 0 {
			break
		}
	}
	for ; i < len(b); i++ {
		if !plainByte[b[i]] {
			return i
		}
	}
	return i
}
