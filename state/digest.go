package state

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/gowebpki/jcs"
)

// Digest is the SHA-256 of the canonical (RFC 8785 / JCS) JSON form of a
// value. Two JSON texts that differ only in key order, insignificant
// whitespace or number spelling have the same Digest.
type Digest [32]byte

// String returns the digest as 64 lowercase hexadecimal characters.
func (d Digest) String() string {
	return hex.EncodeToString(d[:])
}

// IsZero reports whether d is the zero Digest, as in a Binding whose
// ArgsDigest was never set.
func (d Digest) IsZero() bool {
	return d == Digest{}
}

var nullJSON = []byte("null")

// Canonicalize returns the RFC 8785 (JSON Canonicalization Scheme) form of
// the JSON text raw: object members sorted by their UTF-16 code units, no
// insignificant whitespace, strings with minimal escaping and numbers in the
// ECMAScript shortest round-trip form. Numbers are IEEE 754 doubles, so
// integers beyond 2^53 lose precision exactly as they would in JavaScript.
// An error is returned when raw is not a single valid JSON value, including
// when an object repeats a member name or a string is not valid UTF-8; such
// input has no canonical form.
func Canonicalize(raw []byte) ([]byte, error) {
	if len(raw) == 0 {
		return nil, errors.New("state: canonicalize JSON: empty input")
	}
	out, err := jcs.Transform(raw)
	if err != nil {
		return nil, fmt.Errorf("state: canonicalize JSON: %w", err)
	}
	return out, nil
}

// DigestJSON returns the SHA-256 of Canonicalize(raw). An empty raw is
// treated as the JSON literal null, so a request without arguments and a
// request whose arguments are null share a digest.
func DigestJSON(raw []byte) (Digest, error) {
	if len(raw) == 0 {
		raw = nullJSON
	}
	if isCanonical(raw) {
		// Already its own canonical form (the common case of compact,
		// sorted, ASCII arguments): no need to build it again.
		return sha256.Sum256(raw), nil
	}
	c, err := Canonicalize(raw)
	if err != nil {
		return Digest{}, err
	}
	return sha256.Sum256(c), nil
}

// maxCanonicalDepth bounds the nesting isCanonical follows; deeper input
// goes through Canonicalize.
const maxCanonicalDepth = 32

// isCanonical reports whether raw is, byte for byte, the canonical form
// Canonicalize would return, judged on a conservative subset of JSON: no
// white space; objects whose member names are strictly increasing;
// strings of printable ASCII without escapes; integers of at most 15
// digits, without a sign on zero; true, false, null and arrays of these.
// Anything else reports false, and is canonicalized the long way.
func isCanonical(raw []byte) bool {
	end, ok := canonicalValue(raw, 0, 0)
	return ok && end == len(raw)
}

// canonicalValue checks the value at raw[i] and returns the index past it.
func canonicalValue(raw []byte, i, depth int) (int, bool) {
	if i >= len(raw) || depth > maxCanonicalDepth {
		return 0, false
	}
	switch c := raw[i]; {
	case c == '"':
		return canonicalString(raw, i)
	case c == '{':
		i++
		if i < len(raw) && raw[i] == '}' {
			return i + 1, true
		}
		var prev []byte
		for first := true; ; first = false {
			end, ok := canonicalString(raw, i)
			if !ok || end >= len(raw) || raw[end] != ':' {
				return 0, false
			}
			name := raw[i+1 : end-1]
			if !first && string(name) <= string(prev) {
				return 0, false // out of order, or repeated
			}
			prev = name
			if i, ok = canonicalValue(raw, end+1, depth+1); !ok || i >= len(raw) {
				return 0, false
			}
			switch raw[i] {
			case '}':
				return i + 1, true
			case ',':
				i++
			default:
				return 0, false
			}
		}
	case c == '[':
		i++
		if i < len(raw) && raw[i] == ']' {
			return i + 1, true
		}
		for {
			var ok bool
			if i, ok = canonicalValue(raw, i, depth+1); !ok || i >= len(raw) {
				return 0, false
			}
			switch raw[i] {
			case ']':
				return i + 1, true
			case ',':
				i++
			default:
				return 0, false
			}
		}
	case c == '-' || (c >= '0' && c <= '9'):
		j := i
		if c == '-' {
			j++
		}
		start := j
		for j < len(raw) && raw[j] >= '0' && raw[j] <= '9' {
			j++
		}
		digits := j - start
		switch {
		case digits == 0 || digits > 15:
			return 0, false
		case raw[start] == '0' && (digits > 1 || c == '-'):
			return 0, false // a leading zero, or -0 (canonically 0)
		}
		if j < len(raw) && (raw[j] == '.' || raw[j] == 'e' || raw[j] == 'E') {
			return 0, false
		}
		return j, true
	default:
		for _, lit := range []string{"true", "false", "null"} {
			if len(raw)-i >= len(lit) && string(raw[i:i+len(lit)]) == lit {
				return i + len(lit), true
			}
		}
		return 0, false
	}
}

// canonicalString checks the string at raw[i]: printable ASCII, neither
// quote nor backslash inside.
func canonicalString(raw []byte, i int) (int, bool) {
	if i >= len(raw) || raw[i] != '"' {
		return 0, false
	}
	for j := i + 1; j < len(raw); j++ {
		switch c := raw[j]; {
		case c == '"':
			return j + 1, true
		case c < 0x20 || c > 0x7e || c == '\\':
			return 0, false
		}
	}
	return 0, false
}
