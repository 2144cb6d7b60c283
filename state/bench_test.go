package state

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

var benchPayloads = []int{256, 1024, 4096, 16384}

// benchMaxTokenSize lifts the token cap for benchmarks: a 16 KiB payload
// makes a token of about 22 KiB, above defaultMaxTokenSize (16 KiB).
const benchMaxTokenSize = 64 << 10

func benchCodec(b *testing.B, cc codecCase, payload int) (Codec, Claims) {
	b.Helper()
	c, err := cc.make(testRing(b, "k1"), WithMaxTokenSize(benchMaxTokenSize))
	require.NoError(b, err)
	in := sampleClaims(b)
	in.Payload = make([]byte, payload)
	for i := range in.Payload {
		in.Payload[i] = byte(i)
	}
	return c, in
}

// eachBenchCodec runs fn as a sub-benchmark for every codec kind and
// payload size, with the codec and the claims of benchCodec, the bytes per
// operation set to the payload and allocations reported.
func eachBenchCodec(b *testing.B, fn func(b *testing.B, c Codec, in Claims)) {
	for _, cc := range codecCases {
		for _, n := range benchPayloads {
			b.Run(fmt.Sprintf("%s/payload=%d", cc.name, n), func(b *testing.B) {
				c, in := benchCodec(b, cc, n)
				b.SetBytes(int64(n))
				b.ReportAllocs()
				fn(b, c, in)
			})
		}
	}
}

// BenchmarkSealOpen measures one Seal followed by one Open and Verify, the
// cost of a full input-required round trip on the server.
func BenchmarkSealOpen(b *testing.B) {
	eachBenchCodec(b, func(b *testing.B, c Codec, in Claims) {
		want := bindingOf(in)
		for b.Loop() {
			token, err := c.Seal(in)
			if err != nil {
				b.Fatal(err)
			}
			cl, err := c.Open(token)
			if err != nil {
				b.Fatal(err)
			}
			if err := cl.Verify(want); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkSeal(b *testing.B) {
	eachBenchCodec(b, func(b *testing.B, c Codec, in Claims) {
		for b.Loop() {
			if _, err := c.Seal(in); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkOpen measures accepting a token on a retry: Open followed by
// Verify against the request's binding.
func BenchmarkOpen(b *testing.B) {
	eachBenchCodec(b, func(b *testing.B, c Codec, in Claims) {
		want := bindingOf(in)
		token, err := c.Seal(in)
		require.NoError(b, err)
		for b.Loop() {
			cl, err := c.Open(token)
			if err != nil {
				b.Fatal(err)
			}
			if err := cl.Verify(want); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkOpenRefused measures the cost of refusing forged input, which
// Open does before any Verify: an oversized string and a tampered token.
func BenchmarkOpenRefused(b *testing.B) {
	c, in := benchCodec(b, codecCases[0], 1024)
	token, err := c.Seal(in)
	require.NoError(b, err)
	tampered := []byte(token)
	tampered[len(tampered)/2] ^= 1
	huge := string(make([]byte, benchMaxTokenSize+1))
	b.Run("too_large", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := c.Open(huge); err == nil {
				b.Fatal("opened")
			}
		}
	})
	b.Run("tampered", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := c.Open(string(tampered)); err == nil {
				b.Fatal("opened")
			}
		}
	})
}

// BenchmarkVerify measures Verify alone on opened claims, for a match and
// for a refusal on the last field compared.
func BenchmarkVerify(b *testing.B) {
	c, in := benchCodec(b, codecCases[0], 256)
	token, err := c.Seal(in)
	require.NoError(b, err)
	cl, err := c.Open(token)
	require.NoError(b, err)
	want := bindingOf(in)
	other := want
	other.ArgsDigest[0] ^= 1
	b.Run("match", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := cl.Verify(want); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("mismatch", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := cl.Verify(other); err == nil {
				b.Fatal("verified")
			}
		}
	})
}

func BenchmarkDigestJSON(b *testing.B) {
	args := []byte(`{"env":"prod","replicas":3,"tags":["a","b","c"],"limits":{"cpu":1.5,"memory":"2Gi"}}`)
	b.SetBytes(int64(len(args)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := DigestJSON(args); err != nil {
			b.Fatal(err)
		}
	}
}
