package suite

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"reflect"
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

// truncatePayload returns s without its last payload character: in a
// base64 or hex state the last character that carries data, so that the
// padding and dots after it stay and a decoder that accepts unpadded
// input cannot read the same bytes; otherwise the last character. It also
// describes the change.
func truncatePayload(s string) (string, string) {
	if detectAlphabet(s) != alphaOther {
		if i := flipIndex(s, flipLast); i >= 0 {
			return s[:i] + s[i+1:], fmt.Sprintf("requestState without its last payload character (%q at %d of %d)", s[i], i, len(s))
		}
	}
	return truncateOne(s), "requestState without its last character"
}

// appendPayload returns s with a character of its alphabet inserted after
// its last payload character (before any padding), or appended, and
// describes the change.
func appendPayload(s string) (string, string) {
	c := fillerChar(s)
	if detectAlphabet(s) != alphaOther {
		if i := flipIndex(s, flipLast); i >= 0 && i < len(s)-1 {
			return s[:i+1] + c + s[i+1:], fmt.Sprintf("requestState with %q inserted after its last payload character, before %q", c, s[i+1:])
		}
	}
	return s + c, fmt.Sprintf("requestState with %q appended", c)
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

// jsonState is a requestState that is, or holds in one of its
// dot-separated segments, JSON: plain, or base64url or base64, padded or
// not. Such a state can be forged unless the server checks an integrity
// tag over it.
type jsonState struct {
	segs  []string         // the state split at dots (one segment for plain JSON)
	seg   int              // the segment holding the JSON
	enc   *base64.Encoding // its encoding; nil for plain JSON
	name  string           // the encoding's name
	raw   []byte           // the JSON as issued
	value any              // the JSON decoded, numbers kept as json.Number
}

// stateEncodings are the encodings a JSON segment is looked for in, each
// strict and required to reproduce the segment exactly, so that a forged
// segment is written the way the server writes its own.
var stateEncodings = []struct {
	name string
	enc  *base64.Encoding
}{
	{"base64url", base64.RawURLEncoding.Strict()},
	{"base64url (padded)", base64.URLEncoding.Strict()},
	{"base64", base64.RawStdEncoding.Strict()},
	{"base64 (padded)", base64.StdEncoding.Strict()},
}

// findJSONState finds the JSON in s: s itself, or the largest of its
// dot-separated segments that decodes to a JSON object or array.
func findJSONState(s string) (*jsonState, bool) {
	if v, ok := decodeJSONContainer([]byte(s)); ok {
		return &jsonState{segs: []string{s}, raw: []byte(s), value: v, name: "plain JSON"}, true
	}
	segs := strings.Split(s, ".")
	var best *jsonState
	for i, seg := range segs {
		for _, e := range stateEncodings {
			b, err := e.enc.DecodeString(seg)
			if err != nil || e.enc.EncodeToString(b) != seg {
				continue
			}
			if v, ok := decodeJSONContainer(b); ok && (best == nil || len(b) > len(best.raw)) {
				best = &jsonState{segs: segs, seg: i, enc: e.enc, name: e.name, raw: b, value: v}
			}
			break
		}
	}
	return best, best != nil
}

// decodeJSONContainer decodes b when it is one JSON object or array.
func decodeJSONContainer(b []byte) (any, bool) {
	t := bytes.TrimSpace(b)
	if len(t) == 0 || (t[0] != '{' && t[0] != '[') || !json.Valid(t) {
		return nil, false
	}
	dec := json.NewDecoder(bytes.NewReader(t))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return nil, false
	}
	return v, true
}

// where describes the place of the JSON in the state.
func (j *jsonState) where() string {
	if len(j.segs) > 1 {
		return fmt.Sprintf("segment %d of %d, %s", j.seg+1, len(j.segs), j.name)
	}
	return j.name
}

// render returns the state with its JSON replaced by b, encoded as the
// original was.
func (j *jsonState) render(b []byte) string {
	segs := append([]string(nil), j.segs...)
	if j.enc != nil {
		segs[j.seg] = j.enc.EncodeToString(b)
	} else {
		segs[j.seg] = string(b)
	}
	return strings.Join(segs, ".")
}

// sameMeaning returns the state with its JSON written differently but
// meaning the same: members in name order, else indented, else preceded
// by a space. A server that checks an integrity tag over what it issued
// refuses it; one that only parses the state cannot tell it from its own.
func (j *jsonState) sameMeaning() (string, string) {
	compact, _ := json.Marshal(j.value)
	indented, _ := json.MarshalIndent(j.value, "", " ")
	for _, c := range []struct {
		b    []byte
		desc string
	}{
		{compact, "its JSON re-encoded with the members in name order"},
		{indented, "its JSON re-encoded with whitespace"},
		{append([]byte(" "), j.raw...), "its JSON preceded by a space"},
	} {
		if len(c.b) > 0 && !bytes.Equal(c.b, j.raw) {
			return j.render(c.b), c.desc + " (" + j.where() + ")"
		}
	}
	return j.render(append([]byte(" "), j.raw...)), "its JSON preceded by a space (" + j.where() + ")"
}

// withValues returns the state with the arguments' values replaced by the
// other arguments' wherever they appear: the arguments object itself, the
// arguments as a JSON string, and each string argument that the other
// arguments change. ok is false when none appears.
func (j *jsonState) withValues(args, alt json.RawMessage) (string, bool) {
	var a, b map[string]any
	if decodeNumbers(args, &a) != nil || decodeNumbers(alt, &b) != nil {
		return "", false
	}
	repl := map[string]string{string(args): string(alt)}
	for k, v := range a {
		s, ok1 := v.(string)
		t, ok2 := b[k].(string)
		if ok1 && ok2 && s != t && s != "" {
			repl[s] = t
		}
	}
	changed := false
	var walk func(v any) any
	walk = func(v any) any {
		switch t := v.(type) {
		case map[string]any:
			if reflect.DeepEqual(t, a) {
				changed = true
				return b
			}
			out := make(map[string]any, len(t))
			for k, e := range t {
				out[k] = walk(e)
			}
			return out
		case []any:
			out := make([]any, len(t))
			for i, e := range t {
				out[i] = walk(e)
			}
			return out
		case string:
			if r, ok := repl[t]; ok {
				changed = true
				return r
			}
		}
		return v
	}
	nv := walk(j.value)
	if !changed {
		return "", false
	}
	out, err := json.Marshal(nv)
	if err != nil {
		return "", false
	}
	return j.render(out), true
}

// decodeNumbers decodes raw into v, numbers kept as json.Number.
func decodeNumbers(raw json.RawMessage, v any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	return dec.Decode(v)
}
