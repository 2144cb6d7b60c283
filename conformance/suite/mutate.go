package suite

import (
	"encoding/base64"
	"fmt"
	"strings"
)

// alphabet is the character set a requestState appears to be written in.
// Mutations stay inside it, so that a mutated state is still well formed
// and only an integrity check can tell it from a genuine one.
type alphabet int

const (
	alphaOther     alphabet = iota // none recognised
	alphaHex                       // 0-9 a-f (either case)
	alphaBase64URL                 // A-Z a-z 0-9 - _
	alphaBase64Std                 // A-Z a-z 0-9 + /
	alphaBase64                    // A-Z a-z 0-9, either base64 alphabet
)

func (a alphabet) String() string {
	switch a {
	case alphaHex:
		return "hex"
	case alphaBase64URL:
		return "base64url"
	case alphaBase64Std:
		return "base64"
	case alphaBase64:
		return "base64 or base64url"
	}
	return "unrecognised"
}

const (
	b64URLChars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	b64StdChars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
)

// isSeparator reports whether c is structure rather than payload in a
// base64 token: "." between JWT-style segments, "=" padding.
func isSeparator(c byte) bool { return c == '.' || c == '=' }

// detectAlphabet classifies s. Dots and padding are allowed around base64
// segments.
func detectAlphabet(s string) alphabet {
	if s == "" {
		return alphaOther
	}
	hex, url, std := true, true, true
	for i := 0; i < len(s); i++ {
		c := s[i]
		isAlnum := 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9'
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			hex = false
		}
		if !isAlnum && c != '-' && c != '_' && !isSeparator(c) {
			url = false
		}
		if !isAlnum && c != '+' && c != '/' && !isSeparator(c) {
			std = false
		}
	}
	switch {
	case hex && len(s)%2 == 0:
		return alphaHex
	case url && std:
		return alphaBase64
	case url:
		return alphaBase64URL
	case std:
		return alphaBase64Std
	}
	return alphaOther
}

// flipPosition names where in the state a bit is flipped.
type flipPosition int

const (
	flipFirst flipPosition = iota
	flipMiddle
	flipLast
)

// flipBit returns s with one bit of the payload at pos changed, written
// back in s's own alphabet: in base64 the most significant bit of the
// character's six (which every character carries, even the last one of a
// partial group), in hex the high bit of the digit, otherwise the low bit
// of a printable ASCII character. Dots and padding are skipped. It also
// describes the change.
func flipBit(s string, pos flipPosition) (string, string, bool) {
	a := detectAlphabet(s)
	idx := flipIndex(s, pos)
	if idx < 0 {
		return "", "", false
	}
	b := []byte(s)
	c := b[idx]
	switch a {
	case alphaHex:
		table := "0123456789abcdef"
		if strings.ContainsAny(s, "ABCDEF") {
			table = "0123456789ABCDEF"
		}
		b[idx] = table[hexValue(c)^0x8]
	case alphaBase64URL, alphaBase64Std, alphaBase64:
		chars := b64URLChars
		if a == alphaBase64Std {
			chars = b64StdChars
		}
		v := strings.IndexByte(chars, c)
		nv := v ^ 0x20
		if a == alphaBase64 && nv >= 62 {
			// Keep to the characters both alphabets share.
			nv = v ^ 0x10
		}
		b[idx] = chars[nv]
	default:
		nc := c ^ 0x01
		if nc < 0x21 || nc > 0x7e || nc == '"' || nc == '\\' {
			nc = c ^ 0x02
		}
		b[idx] = nc
	}
	return string(b), fmt.Sprintf("character %d of %d changed from %q to %q (%s)", idx, len(s), c, b[idx], a), true
}

// flipIndex returns the index of the character to change: the first, the
// middle or the last payload character of s, or -1 when there is none.
func flipIndex(s string, pos flipPosition) int {
	a := detectAlphabet(s)
	payload := func(i int) bool {
		c := s[i]
		if a == alphaOther {
			return c >= 0x21 && c <= 0x7e
		}
		return !isSeparator(c)
	}
	switch pos {
	case flipFirst:
		for i := 0; i < len(s); i++ {
			if payload(i) {
				return i
			}
		}
	case flipLast:
		for i := len(s) - 1; i >= 0; i-- {
			if payload(i) {
				return i
			}
		}
	case flipMiddle:
		mid := len(s) / 2
		for d := 0; d < len(s); d++ {
			for _, i := range []int{mid - d, mid + d} {
				if i >= 0 && i < len(s) && payload(i) {
					return i
				}
			}
		}
	}
	return -1
}

func hexValue(c byte) byte {
	switch {
	case '0' <= c && c <= '9':
		return c - '0'
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10
	default:
		return c - 'A' + 10
	}
}

// fillerChar is a character of s's alphabet to append or pad with.
func fillerChar(s string) string {
	switch detectAlphabet(s) {
	case alphaHex:
		return "0"
	case alphaOther:
		return "x"
	}
	return "A"
}

// truncateOne returns s without its last character (rune).
func truncateOne(s string) string {
	r := []rune(s)
	if len(r) == 0 {
		return s
	}
	return string(r[:len(r)-1])
}

// hugeState returns s padded with its alphabet's filler to n bytes.
func hugeState(s string, n int) string {
	if len(s) >= n {
		return s
	}
	return s + strings.Repeat(fillerChar(s), n-len(s))
}

// decodings returns what s decodes to under each base64 variant that
// accepts it, whole or, for a dotted token, segment by segment, by the
// name of the variant.
func decodings(s string) map[string][]byte {
	out := map[string][]byte{}
	encs := []struct {
		name string
		enc  *base64.Encoding
	}{
		{"base64url", base64.RawURLEncoding},
		{"base64url (padded)", base64.URLEncoding},
		{"base64", base64.RawStdEncoding},
		{"base64 (padded)", base64.StdEncoding},
	}
	for _, e := range encs {
		if b, err := e.enc.DecodeString(s); err == nil {
			out[e.name] = b
			continue
		}
		if !strings.Contains(s, ".") {
			continue
		}
		var all []byte
		ok := false
		for _, seg := range strings.Split(s, ".") {
			if b, err := e.enc.DecodeString(seg); err == nil {
				all = append(all, b...)
				all = append(all, '\n')
				ok = true
			}
		}
		if ok {
			out[e.name+" per dot-separated segment"] = all
		}
	}
	return out
}
