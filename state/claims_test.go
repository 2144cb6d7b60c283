package state

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// encodeForTest encodes c with the times it carries.
func encodeForTest(c *Claims) []byte {
	issued := c.IssuedAt.UnixMilli()
	ttl := uint64(c.ExpiresAt.UnixMilli() - issued)
	keys := sortedAskedKeys(c.Asked, nil)
	out := appendClaims(nil, c, issued, ttl, keys)
	if len(out) != claimsLen(c, issued, ttl, keys) {
		panic("claimsLen disagrees with appendClaims")
	}
	return out
}

func TestClaimsEncodingRoundTrip(t *testing.T) {
	c := sampleClaims(t)
	c.IssuedAt = t0.Truncate(time.Millisecond)
	c.ExpiresAt = c.IssuedAt.Add(time.Hour)
	enc := encodeForTest(&c)
	got, err := decodeClaims(enc)
	require.NoError(t, err)
	assert.Equal(t, c, got)
	assert.Equal(t, enc, encodeForTest(&got))

	// Times before 1970 and at the end of the range survive too.
	for _, ms := range [][2]int64{{-123456789, 100}, {math.MaxInt64 - 5, math.MaxInt64}, {0, 0}} {
		c.IssuedAt = time.UnixMilli(ms[0]).UTC()
		c.ExpiresAt = time.UnixMilli(ms[1]).UTC()
		got, err = decodeClaims(encodeForTest(&c))
		require.NoError(t, err)
		assert.Equal(t, c.IssuedAt, got.IssuedAt)
		assert.Equal(t, c.ExpiresAt, got.ExpiresAt)
	}
}

func TestDecodeClaimsRejects(t *testing.T) {
	base := Claims{
		Principal: "p", Audience: "a", Method: "m", Target: "t", Round: 1,
		Asked:    map[string]byte{"a": 1, "b": 4},
		Payload:  []byte("xyz"),
		IssuedAt: time.UnixMilli(1000).UTC(), ExpiresAt: time.UnixMilli(2000).UTC(),
	}
	good := encodeForTest(&base)
	_, err := decodeClaims(good)
	require.NoError(t, err)

	// Hand-built variants of good. Layout: version, payloadLen, issued,
	// ttl, round, 4 strings, digest, count, entries, payload.
	build := func(version byte, payloadLen uint64, round uint64, count uint64, entries []byte, trailing []byte) []byte {
		b := []byte{version}
		b = binary.AppendUvarint(b, payloadLen)
		b = binary.AppendVarint(b, 1000)
		b = binary.AppendUvarint(b, 1000)
		b = binary.AppendUvarint(b, round)
		for _, s := range []string{"p", "a", "m", "t"} {
			b = appendString(b, s)
		}
		b = append(b, make([]byte, 32)...)
		b = binary.AppendUvarint(b, count)
		b = append(b, entries...)
		b = append(b, trailing...)
		return append(b, "xyz"...)
	}
	ok := build(1, 3, 1, 2, []byte("\x01a\x01\x01b\x04"), nil)
	require.Equal(t, good, ok, "hand-built layout matches the encoder")

	cases := map[string][]byte{
		"empty":              {},
		"version 0":          build(0, 3, 1, 2, []byte("\x01a\x01\x01b\x04"), nil),
		"version 2":          build(2, 3, 1, 2, []byte("\x01a\x01\x01b\x04"), nil),
		"round 0":            build(1, 3, 0, 2, []byte("\x01a\x01\x01b\x04"), nil),
		"round too big":      build(1, 3, math.MaxInt32+1, 2, []byte("\x01a\x01\x01b\x04"), nil),
		"trailing bytes":     build(1, 3, 1, 2, []byte("\x01a\x01\x01b\x04"), []byte{0}),
		"keys out of order":  build(1, 3, 1, 2, []byte("\x01b\x01\x01a\x04"), nil),
		"duplicate key":      build(1, 3, 1, 2, []byte("\x01a\x01\x01a\x04"), nil),
		"empty key":          build(1, 3, 1, 2, []byte("\x00\x01\x01b\x04"), nil),
		"empty second key":   build(1, 3, 1, 2, []byte("\x01a\x01\x00\x04"), nil),
		"key too long":       build(1, 3, 1, 1, longKey(MaxAskedKeyLen+1, 1), nil),
		"missing value":      build(1, 3, 1, 2, []byte("\x01a\x01\x01b"), nil),
		"count too high":     build(1, 3, 1, 3, []byte("\x01a\x01\x01b\x04"), nil),
		"count too low":      build(1, 3, 1, 1, []byte("\x01a\x01\x01b\x04"), nil),
		"count over cap":     build(1, 3, 1, maxAsked+1, bytes.Repeat([]byte("\x01a\x01"), maxAsked+1), nil),
		"payload len short":  build(1, 2, 1, 2, []byte("\x01a\x01\x01b\x04"), nil),
		"payload len 0":      build(1, 0, 1, 2, []byte("\x01a\x01\x01b\x04"), nil),
		"payload len beyond": append([]byte{1, 0x7f}, good[2:]...),
		"non-minimal varint": append([]byte{1, 0x83, 0x00}, good[2:]...),
		"overlong varint":    append([]byte{1}, bytes.Repeat([]byte{0xff}, 11)...),
		"truncated":          good[:len(good)-4],
		"only version":       {1},
	}
	for name, b := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := decodeClaims(b)
			require.Error(t, err)
		})
	}
	// The byte after each key is opaque: every value decodes, and so does
	// a key of the longest allowed length.
	accepted := map[string][]byte{
		"value 0":          build(1, 3, 1, 2, []byte("\x01a\x00\x01b\x04"), nil),
		"value 5":          build(1, 3, 1, 2, []byte("\x01a\x01\x01b\x05"), nil),
		"value 255":        build(1, 3, 1, 2, []byte("\x01a\xff\x01b\xff"), nil),
		"longest key":      build(1, 3, 1, 1, longKey(MaxAskedKeyLen, 0), nil),
		"no keys":          build(1, 3, 1, 0, nil, nil),
		"round MaxRound":   build(1, 3, MaxRound, 2, []byte("\x01a\x01\x01b\x04"), nil),
		"value 0 then 255": build(1, 3, 1, 2, []byte("\x01a\x00\x01b\xff"), nil),
	}
	for name, b := range accepted {
		t.Run("accept "+name, func(t *testing.T) {
			got, err := decodeClaims(b)
			require.NoError(t, err)
			assert.Equal(t, b, encodeForTest(&got), "re-encodes to the same bytes")
		})
	}
	got, err := decodeClaims(accepted["value 0 then 255"])
	require.NoError(t, err)
	assert.Equal(t, map[string]byte{"a": 0, "b": 255}, got.Asked)
	got, err = decodeClaims(accepted["round MaxRound"])
	require.NoError(t, err)
	assert.Equal(t, MaxRound, got.Round)

	// Every strict prefix of a valid encoding is refused, since the
	// payload length comes first.
	for i := range len(good) {
		_, err := decodeClaims(good[:i])
		require.Error(t, err, "prefix %d", i)
	}
}

// longKey returns one Asked entry whose key is n bytes long.
func longKey(n int, value byte) []byte {
	b := binary.AppendUvarint(nil, uint64(n))
	b = append(b, bytes.Repeat([]byte("k"), n)...)
	return append(b, value)
}

// TestAskedEncodingAllValues round-trips every byte value through the
// claims encoding.
func TestAskedEncodingAllValues(t *testing.T) {
	c := Claims{Round: 1, Asked: make(map[string]byte, 256),
		IssuedAt: time.UnixMilli(1000).UTC(), ExpiresAt: time.UnixMilli(2000).UTC()}
	for i := range 256 {
		c.Asked[string(rune('a'+i%26))+fmt.Sprint(i)] = byte(i)
	}
	enc := encodeForTest(&c)
	got, err := decodeClaims(enc)
	require.NoError(t, err)
	assert.Equal(t, c.Asked, got.Asked)
	assert.Equal(t, enc, encodeForTest(&got))
}

func TestDecodeClaimsExpiryOverflow(t *testing.T) {
	b := []byte{1, 0}
	b = binary.AppendVarint(b, math.MaxInt64-10)
	b = binary.AppendUvarint(b, 11)
	b = binary.AppendUvarint(b, 1)
	for range 4 {
		b = append(b, 0)
	}
	b = append(b, make([]byte, 32)...)
	b = append(b, 0)
	_, err := decodeClaims(b)
	require.ErrorContains(t, err, "expiry")
}

func TestReadUvarint(t *testing.T) {
	for _, v := range []uint64{0, 1, 127, 128, 300, 1 << 35, math.MaxUint64} {
		b := binary.AppendUvarint(nil, v)
		got, n, ok := readUvarint(b, 0)
		require.True(t, ok, "%d", v)
		assert.Equal(t, v, got)
		assert.Equal(t, len(b), n)
		assert.Equal(t, len(b), uvarintLen(v))
		got, _, ok = readUvarint(string(b), 0)
		require.True(t, ok)
		assert.Equal(t, v, got)
	}
	for _, bad := range [][]byte{
		{}, {0x80}, {0x80, 0x00}, {0xff, 0x80, 0x00},
		{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02},
		bytes.Repeat([]byte{0xff}, 10),
	} {
		_, _, ok := readUvarint(bad, 0)
		assert.False(t, ok, "%x", bad)
	}
}
