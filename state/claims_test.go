package state

import (
	"bytes"
	"encoding/binary"
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
		Asked:    map[string]Kind{"a": KindSampling, "b": KindRoots},
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
		"kind 0":             build(1, 3, 1, 2, []byte("\x01a\x00\x01b\x04"), nil),
		"kind 5":             build(1, 3, 1, 2, []byte("\x01a\x01\x01b\x05"), nil),
		"count too high":     build(1, 3, 1, 3, []byte("\x01a\x01\x01b\x04"), nil),
		"count too low":      build(1, 3, 1, 1, []byte("\x01a\x01\x01b\x04"), nil),
		"count over cap":     build(1, 3, 1, MaxAsked+1, bytes.Repeat([]byte("\x01a\x01"), MaxAsked+1), nil),
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
	// Every strict prefix of a valid encoding is refused, since the
	// payload length comes first.
	for i := range len(good) {
		_, err := decodeClaims(good[:i])
		require.Error(t, err, "prefix %d", i)
	}
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
