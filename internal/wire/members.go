package wire

import (
	"encoding/json"
	"errors"
)

// The exact-name member splitter of mrtrkit's JSON readers: every layer
// of mrtr's ladder reads the envelope with it, and the legacy engine
// rewrites results with it.

// ErrDuplicateMember reports an object with the same member name twice.
// Duplicates are refused rather than resolved: two parsers that resolve
// them differently would see two different requests.
var ErrDuplicateMember = errors.New("duplicate member name")

// ErrNotObject and ErrMalformed report input that is not a JSON object,
// and one that breaks off or is not well formed.
var (
	ErrNotObject = errors.New("not an object")
	ErrMalformed = errors.New("malformed JSON object")
)

// EachMember calls fn with the exact (unescaped) name and the raw value of
// each member of the JSON object b, in order. Unlike decoding into a
// struct, names are matched exactly, as JSON-RPC and MCP require. b should
// be valid JSON (callers check it with json.Valid); malformed input is an
// error, never a panic.
func EachMember(b []byte, fn func(name string, value json.RawMessage) error) error {
	return EachMemberBytes(b, func(name []byte, value json.RawMessage) error {
		return fn(string(name), value)
	})
}

// EachMemberBytes is EachMember for callers that look a name up before
// keeping it: switching on string(name) costs no allocation. name is
// valid only during the call (it may share memory with b); copy it, with
// string(name), to keep it.
func EachMemberBytes(b []byte, fn func(name []byte, value json.RawMessage) error) error {
	i := SkipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return ErrNotObject
	}
	i = SkipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return nil
	}
	for i < len(b) {
		if b[i] != '"' {
			return ErrMalformed
		}
		end := SkipString(b, i)
		if end < 0 {
			return ErrMalformed
		}
		name, err := MemberNameBytes(b[i:end])
		if err != nil {
			return err
		}
		i = SkipSpace(b, end)
		if i >= len(b) || b[i] != ':' {
			return ErrMalformed
		}
		i = SkipSpace(b, i+1)
		vend := SkipValue(b, i)
		if vend <= i {
			return ErrMalformed
		}
		if err := fn(name, json.RawMessage(b[i:vend])); err != nil {
			return err
		}
		i = SkipSpace(b, vend)
		switch {
		case i >= len(b):
			return ErrMalformed
		case b[i] == '}':
			return nil
		case b[i] != ',':
			return ErrMalformed
		}
		i = SkipSpace(b, i+1)
	}
	return ErrMalformed
}

// MemberNameBytes is MemberName without a copy for a plain name: the
// bytes between the quotes (the result may share memory with quoted).
func MemberNameBytes(quoted []byte) ([]byte, error) {
	if body, ok := plainString(quoted); ok {
		return body, nil
	}
	s, err := MemberName(quoted)
	return []byte(s), err
}

// MemberName unquotes a member name, exactly as encoding/json does (see
// String).
func MemberName(quoted []byte) (string, error) {
	if len(quoted) < 2 || quoted[0] != '"' {
		return "", ErrMalformed
	}
	s, ok := String(quoted)
	if !ok {
		return "", ErrMalformed
	}
	return s, nil
}

// SkipSpace returns the index of the first byte at or after b[i] that is
// not JSON white space.
func SkipSpace(b []byte, i int) int {
	if i < len(b) && b[i] > ' ' {
		return i // the common case in compact JSON
	}
	for i < len(b) {
		switch b[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// SkipString returns the index just past the string starting at b[i], or
// -1 when it is not terminated.
func SkipString(b []byte, i int) int {
	for j := i + 1; j < len(b); j++ {
		if j = PlainRun(b, j); j >= len(b) {
			break
		}
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return -1
}

// SkipValue returns the index just past the value starting at b[i], or -1
// when it is not terminated.
func SkipValue(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		return SkipString(b, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				end := SkipString(b, j)
				if end < 0 {
					return -1
				}
				j = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1
				}
			}
		}
		return -1
	}
	j := i
	for j < len(b) {
		switch b[j] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return j
		}
		j++
	}
	return j
}
