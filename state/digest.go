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
	c, err := Canonicalize(raw)
	if err != nil {
		return Digest{}, err
	}
	return sha256.Sum256(c), nil
}
