package state

import (
	"encoding/binary"
	"math"
	"math/bits"
	"slices"
	"time"
	"unsafe"
)

// Limits on the Asked map of Claims. Seal refuses claims beyond them and the
// token decoder treats a token beyond them as malformed.
const (
	// maxAsked is the largest number of entries in Claims.Asked.
	maxAsked = 256
	// MaxAskedKeyLen is the longest key, in bytes, allowed in Claims.Asked.
	MaxAskedKeyLen = 256
)

// MaxRound is the largest Claims.Round the token format carries, so that a
// round fits an int on every platform. Limits on rounds are the caller's.
const MaxRound = math.MaxInt32

// Claims is what a token carries. Seal sets IssuedAt and ExpiresAt; every
// other field is supplied by the caller and returned unchanged by Open.
// Strings are compared byte for byte, and empty strings are allowed.
type Claims struct {
	// Principal identifies who the token was issued to (for example the
	// authenticated subject). Open refuses a token presented by anyone else.
	Principal string
	// Audience is the identity of the server that issued the token.
	Audience string
	// Method is the request method, for example "tools/call".
	Method string
	// Target is the tool name, prompt name or resource URI of the request.
	Target string
	// ArgsDigest is the DigestJSON of the request arguments.
	ArgsDigest Digest
	// IssuedAt is set by Seal to the clock's current time truncated to
	// whole Unix milliseconds, and returned by Open in UTC.
	IssuedAt time.Time
	// ExpiresAt is set by Seal to IssuedAt plus the codec's TTL (at
	// millisecond precision) and returned by Open in UTC.
	ExpiresAt time.Time
	// Round is the number of input-required rounds issued so far,
	// including the one this token belongs to: 1 to MaxRound.
	Round int
	// Asked maps each key asked in the round that produced this token to
	// one byte of the caller's own meaning (mrtrkit records the kind of
	// input request). Open returns nil for an empty map.
	Asked map[string]byte
	// Payload is opaque handler state, carried byte for byte. Open returns
	// nil for an empty payload and otherwise a slice the caller owns.
	Payload []byte
}

// Binding is what the request being served presents. Claims.Verify checks a
// token's claims against it field by field.
type Binding struct {
	// Principal is the authenticated caller of the request being served.
	Principal string
	// Audience is this server's identity.
	Audience string
	// Method is the request method, for example "tools/call".
	Method string
	// Target is the tool name, prompt name or resource URI requested.
	Target string
	// ArgsDigest is the DigestJSON of the request's arguments.
	ArgsDigest Digest
}

// claimsVersion is the first byte of an encoded claims block.
const claimsVersion = 1

// Encoded claims, version 1 (all integers are unsigned LEB128 varints in
// their minimal form, except issued which is a zig-zag signed varint):
//
//	version      1 byte (claimsVersion)
//	payloadLen   uvarint
//	issued       varint, Unix milliseconds
//	ttl          uvarint, milliseconds from issued to expiry
//	round        uvarint, 1..MaxRound
//	principal    uvarint length + bytes
//	audience     uvarint length + bytes
//	method       uvarint length + bytes
//	target       uvarint length + bytes
//	argsDigest   32 bytes
//	askedCount   uvarint, 0..MaxAsked
//	askedCount × { uvarint length (1..MaxAskedKeyLen) + key bytes, one byte }
//	             keys in strictly increasing byte order
//	payload      payloadLen bytes, running to the end
//
// The payload length comes first so that the decoder can turn everything
// before the payload into a single string with one allocation. Every value
// has exactly one encoding, so decoding and re-encoding reproduces the input.

func uvarintLen(x uint64) int {
	return (bits.Len64(x|1) + 6) / 7
}

func zigzag(x int64) uint64 {
	return uint64(x<<1) ^ uint64(x>>63)
}

// sortedAskedKeys appends the keys of m to buf in increasing order.
func sortedAskedKeys(m map[string]byte, buf []string) []string {
	for k := range m {
		buf = append(buf, k)
	}
	if len(buf) > 1 {
		slices.Sort(buf)
	}
	return buf
}

// claimsLen returns the exact encoded size of c with the given times.
func claimsLen(c *Claims, issued int64, ttl uint64, keys []string) int {
	n := 1 + uvarintLen(uint64(len(c.Payload))) + uvarintLen(zigzag(issued)) +
		uvarintLen(ttl) + uvarintLen(uint64(c.Round)) + len(c.ArgsDigest) +
		uvarintLen(uint64(len(keys))) + len(c.Payload)
	for _, s := range [...]string{c.Principal, c.Audience, c.Method, c.Target} {
		n += uvarintLen(uint64(len(s))) + len(s)
	}
	for _, k := range keys {
		n += uvarintLen(uint64(len(k))) + len(k) + 1
	}
	return n
}

func appendString(dst []byte, s string) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(s)))
	return append(dst, s...)
}

// appendClaims appends the encoding of c to dst. keys must be the sorted keys
// of c.Asked; the claims must already have been validated.
func appendClaims(dst []byte, c *Claims, issued int64, ttl uint64, keys []string) []byte {
	dst = append(dst, claimsVersion)
	dst = binary.AppendUvarint(dst, uint64(len(c.Payload)))
	dst = binary.AppendVarint(dst, issued)
	dst = binary.AppendUvarint(dst, ttl)
	dst = binary.AppendUvarint(dst, uint64(c.Round))
	dst = appendString(dst, c.Principal)
	dst = appendString(dst, c.Audience)
	dst = appendString(dst, c.Method)
	dst = appendString(dst, c.Target)
	dst = append(dst, c.ArgsDigest[:]...)
	dst = binary.AppendUvarint(dst, uint64(len(keys)))
	for _, k := range keys {
		dst = appendString(dst, k)
		dst = append(dst, c.Asked[k])
	}
	return append(dst, c.Payload...)
}

// readUvarint decodes a minimal unsigned varint from b at offset i and
// returns the value and the offset after it.
func readUvarint[T ~string | ~[]byte](b T, i int) (uint64, int, bool) {
	var x uint64
	for n, shift := 0, uint(0); n < binary.MaxVarintLen64; n, shift = n+1, shift+7 {
		if i >= len(b) {
			return 0, i, false
		}
		c := b[i]
		i++
		if c < 0x80 {
			if n == binary.MaxVarintLen64-1 && c > 1 {
				return 0, i, false // overflows 64 bits
			}
			if c == 0 && n > 0 {
				return 0, i, false // not minimal
			}
			return x | uint64(c)<<shift, i, true
		}
		x |= uint64(c&0x7f) << shift
	}
	return 0, i, false
}

// claimsReader walks the string part of an encoded claims block.
type claimsReader struct {
	s   string
	i   int
	bad bool
}

func (r *claimsReader) uvarint() uint64 {
	if r.bad {
		return 0
	}
	x, i, ok := readUvarint(r.s, r.i)
	if !ok {
		r.bad = true
		return 0
	}
	r.i = i
	return x
}

func (r *claimsReader) str() string {
	n := r.uvarint()
	if r.bad || n > uint64(len(r.s)-r.i) {
		r.bad = true
		return ""
	}
	s := r.s[r.i : r.i+int(n)]
	r.i += int(n)
	return s
}

func (r *claimsReader) byte() byte {
	if r.bad || r.i >= len(r.s) {
		r.bad = true
		return 0
	}
	c := r.s[r.i]
	r.i++
	return c
}

// decodeError explains why a claims block could not be decoded. It carries
// constant text only.
type decodeError string

func (e decodeError) Error() string { return string(e) }

// decodeClaims parses an encoded claims block. It treats b as untrusted: it
// checks every length, rejects trailing bytes and non-minimal encodings, and
// never panics. The returned Payload and strings alias b, which must not
// change afterwards.
func decodeClaims(b []byte) (Claims, error) {
	if len(b) == 0 {
		return Claims{}, decodeError("empty claims")
	}
	if b[0] != claimsVersion {
		return Claims{}, decodeError("unknown claims version")
	}
	payloadLen, i, ok := readUvarint(b, 1)
	if !ok || payloadLen > uint64(len(b)-i) {
		return Claims{}, decodeError("bad payload length")
	}
	payloadStart := len(b) - int(payloadLen)

	// The strings of the claims alias b, which Open decoded into a buffer
	// of its own that nothing writes again (the Payload after them is
	// capped at its own end): one allocation fewer per opened token.
	r := claimsReader{}
	if payloadStart > i {
		r.s = unsafe.String(&b[i], payloadStart-i)
	}
	var c Claims
	x := r.uvarint()
	issued := int64(x>>1) ^ -int64(x&1)
	ttl := r.uvarint()
	if !r.bad && (ttl > math.MaxInt64 || issued > math.MaxInt64-int64(ttl)) {
		return Claims{}, decodeError("expiry out of range")
	}
	round := r.uvarint()
	if !r.bad && (round < 1 || round > MaxRound) {
		return Claims{}, decodeError("round out of range")
	}
	c.Principal = r.str()
	c.Audience = r.str()
	c.Method = r.str()
	c.Target = r.str()
	if r.bad || len(r.s)-r.i < len(c.ArgsDigest) {
		return Claims{}, decodeError("truncated claims")
	}
	copy(c.ArgsDigest[:], r.s[r.i:])
	r.i += len(c.ArgsDigest)

	count := r.uvarint()
	if r.bad {
		return Claims{}, decodeError("truncated claims")
	}
	// Each entry takes at least three bytes (length, one key byte, value).
	if count > maxAsked || count > uint64(len(r.s)-r.i)/3 {
		return Claims{}, decodeError("too many asked keys")
	}
	if count > 0 {
		c.Asked = make(map[string]byte, int(count))
		prev := ""
		for j := 0; j < int(count); j++ {
			k := r.str()
			v := r.byte()
			switch {
			case r.bad:
				return Claims{}, decodeError("truncated claims")
			case len(k) == 0 || len(k) > MaxAskedKeyLen:
				return Claims{}, decodeError("bad asked key length")
			case j > 0 && k <= prev:
				return Claims{}, decodeError("asked keys out of order")
			}
			c.Asked[k] = v
			prev = k
		}
	}
	if r.i != len(r.s) {
		return Claims{}, decodeError("trailing bytes in claims")
	}

	c.IssuedAt = time.UnixMilli(issued).UTC()
	c.ExpiresAt = time.UnixMilli(issued + int64(ttl)).UTC()
	c.Round = int(round)
	if payloadLen > 0 {
		c.Payload = b[payloadStart:len(b):len(b)]
	}
	return c, nil
}
