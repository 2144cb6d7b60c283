package mrtr

import (
	"encoding/json"
	"errors"
)

// errDuplicateMember reports an object with the same member name twice.
// Duplicates are refused rather than resolved: two parsers that resolve
// them differently would see two different requests.
var errDuplicateMember = errors.New("duplicate member name")

// eachMember calls fn with the exact (unescaped) name and the raw value of
// each member of the JSON object b, in order. Unlike decoding into a
// struct, names are matched exactly, as JSON-RPC and MCP require. b should
// be valid JSON (callers check it with json.Valid); malformed input is an
// error, never a panic.
func eachMember(b []byte, fn func(name string, value json.RawMessage) error) error {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return errNotObject
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return nil
	}
	for i < len(b) {
		if b[i] != '"' {
			return errMalformed
		}
		end := skipString(b, i)
		if end < 0 {
			return errMalformed
		}
		name, err := memberName(b[i:end])
		if err != nil {
			return err
		}
		i = skipSpace(b, end)
		if i >= len(b) || b[i] != ':' {
			return errMalformed
		}
		i = skipSpace(b, i+1)
		vend := skipValue(b, i)
		if vend <= i {
			return errMalformed
		}
		if err := fn(name, json.RawMessage(b[i:vend])); err != nil {
			return err
		}
		i = skipSpace(b, vend)
		switch {
		case i >= len(b):
			return errMalformed
		case b[i] == '}':
			return nil
		case b[i] != ',':
			return errMalformed
		}
		i = skipSpace(b, i+1)
	}
	return errMalformed
}

var (
	errNotObject = errors.New("not an object")
	errMalformed = errors.New("malformed JSON object")
)

// members collects the members of object b into a map, refusing duplicates.
func members(b []byte) (map[string]json.RawMessage, error) {
	m := make(map[string]json.RawMessage, 8)
	err := eachMember(b, func(name string, v json.RawMessage) error {
		if _, dup := m[name]; dup {
			return errDuplicateMember
		}
		m[name] = v
		return nil
	})
	return m, err
}

func memberName(quoted []byte) (string, error) {
	if len(quoted) < 2 {
		return "", errMalformed
	}
	for _, c := range quoted[1 : len(quoted)-1] {
		// Escapes, and non-ASCII bytes that may be invalid UTF-8, are
		// decoded exactly as encoding/json decodes them.
		if c == '\\' || c >= 0x80 {
			var s string
			err := json.Unmarshal(quoted, &s)
			return s, err
		}
	}
	return string(quoted[1 : len(quoted)-1]), nil
}

func skipSpace(b []byte, i int) int {
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

// skipString returns the index just past the string starting at b[i], or
// -1 when it is not terminated.
func skipString(b []byte, i int) int {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return -1
}

// skipValue returns the index just past the value starting at b[i], or -1
// when it is not terminated.
func skipValue(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				end := skipString(b, j)
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
