package state

import (
	"crypto/cipher"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"io"
	"math"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/hkdf"
)

func TestRoundTrip(t *testing.T) {
	for _, cc := range codecCases {
		t.Run(cc.name, func(t *testing.T) {
			clock := newTestClock(t0)
			codec := cc.codec(t, WithClock(clock.Now), WithTTL(90*time.Second))

			in := sampleClaims(t)
			in.IssuedAt = time.Unix(1, 0) // ignored: Seal sets both times
			in.ExpiresAt = time.Unix(2, 0)
			token, err := codec.Seal(in)
			require.NoError(t, err)
			assert.NotContains(t, token, "=")
			for _, r := range token {
				assert.True(t, strings.ContainsRune("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_", r), "character %q is not URL-safe", r)
			}

			got, err := openVerify(codec, token, bindingOf(in))
			require.NoError(t, err)

			wantIssued := time.Date(2026, 7, 28, 12, 0, 0, 123000000, time.UTC)
			assert.Equal(t, wantIssued, got.IssuedAt)
			assert.Equal(t, wantIssued.Add(90*time.Second), got.ExpiresAt)
			assert.Equal(t, in.Principal, got.Principal)
			assert.Equal(t, in.Audience, got.Audience)
			assert.Equal(t, in.Method, got.Method)
			assert.Equal(t, in.Target, got.Target)
			assert.Equal(t, in.ArgsDigest, got.ArgsDigest)
			assert.Equal(t, in.Round, got.Round)
			assert.Equal(t, in.Asked, got.Asked)
			assert.Equal(t, in.Payload, got.Payload)
			assert.Equal(t, len(got.Payload), cap(got.Payload))
		})
	}
}

func TestRoundTripEmptyAndBinaryFields(t *testing.T) {
	for _, cc := range codecCases {
		t.Run(cc.name, func(t *testing.T) {
			codec := cc.codec(t, WithClock(newTestClock(t0).Now))

			// Everything optional left empty.
			token, err := codec.Seal(Claims{Round: 1})
			require.NoError(t, err)
			got, err := openVerify(codec, token, Binding{})
			require.NoError(t, err)
			assert.Nil(t, got.Asked)
			assert.Nil(t, got.Payload)
			assert.Equal(t, 1, got.Round)

			// Strings with arbitrary bytes, the largest allowed Asked map
			// with every byte value, the last allowed round.
			asked := make(map[string]byte, maxAsked)
			for i := range maxAsked {
				asked[fmt.Sprintf("k%03d\x00\xff", i)] = byte(i)
			}
			asked[strings.Repeat("x", MaxAskedKeyLen)] = 0
			delete(asked, "k000\x00\xff")
			require.Len(t, asked, maxAsked)
			in := Claims{
				Principal: "p\x00\xff✓", Audience: "a", Method: "m", Target: "file:///t?x=1#f",
				Round: MaxRound, Asked: asked, Payload: make([]byte, 3000),
			}
			token, err = codec.Seal(in)
			require.NoError(t, err)
			got, err = openVerify(codec, token, bindingOf(in))
			require.NoError(t, err)
			assert.Equal(t, in.Asked, got.Asked)
			assert.Equal(t, in.Payload, got.Payload)
			assert.Equal(t, in.Principal, got.Principal)
			assert.Equal(t, MaxRound, got.Round)
		})
	}
}

func TestSealDoesNotRetainInput(t *testing.T) {
	codec, err := NewAEAD(testRing(t, "k1"))
	require.NoError(t, err)
	in, token := sealSample(t, codec)
	in.Payload[0] = 'X'
	in.Asked["late"] = 4
	got, err := openVerify(codec, token, bindingOf(in))
	require.NoError(t, err)
	assert.Equal(t, byte('h'), got.Payload[0])
	assert.NotContains(t, got.Asked, "late")
}

func TestTokensDiffer(t *testing.T) {
	codec, err := NewAEAD(testRing(t, "k1"), WithClock(newTestClock(t0).Now))
	require.NoError(t, err)
	a, err := codec.Seal(sampleClaims(t))
	require.NoError(t, err)
	b, err := codec.Seal(sampleClaims(t))
	require.NoError(t, err)
	assert.NotEqual(t, a, b, "fresh nonce per seal")
}

func TestAEADHidesClaims(t *testing.T) {
	in := sampleClaims(t)
	aead, err := NewAEAD(testRing(t, "k1"))
	require.NoError(t, err)
	token, err := aead.Seal(in)
	require.NoError(t, err)
	frame, err := base64.RawURLEncoding.DecodeString(token)
	require.NoError(t, err)
	assert.NotContains(t, string(frame), in.Principal)
	assert.NotContains(t, string(frame), in.Target)

	// HMAC tokens are readable by design.
	mac, err := NewHMAC(testRing(t, "k1"))
	require.NoError(t, err)
	token, err = mac.Seal(in)
	require.NoError(t, err)
	frame, err = base64.RawURLEncoding.DecodeString(token)
	require.NoError(t, err)
	assert.Contains(t, string(frame), in.Principal)
}

func TestClaimMismatch(t *testing.T) {
	other := mustDigest(t, `{"env":"staging","replicas":3}`)
	cases := []struct {
		name   string
		mutate func(*Binding)
		reason Reason
	}{
		{"principal", func(b *Binding) { b.Principal = "user:mallory@example.com" }, ReasonPrincipal},
		{"principal empty", func(b *Binding) { b.Principal = "" }, ReasonPrincipal},
		{"audience", func(b *Binding) { b.Audience = "https://other.example.com" }, ReasonRequest},
		{"method", func(b *Binding) { b.Method = "prompts/get" }, ReasonRequest},
		{"target", func(b *Binding) { b.Target = "destroy" }, ReasonRequest},
		{"digest", func(b *Binding) { b.ArgsDigest = other }, ReasonRequest},
		{"digest zero", func(b *Binding) { b.ArgsDigest = Digest{} }, ReasonRequest},
		// The principal is checked before the request.
		{"principal and target", func(b *Binding) { b.Principal = "x"; b.Target = "y" }, ReasonPrincipal},
	}
	for _, cc := range codecCases {
		codec := cc.codec(t)
		in, token := sealSample(t, codec)
		for _, tc := range cases {
			t.Run(cc.name+"/"+tc.name, func(t *testing.T) {
				b := bindingOf(in)
				tc.mutate(&b)
				// Open knows no binding: the genuine token opens with
				// every claim intact, whoever presents it.
				got, err := codec.Open(token)
				require.NoError(t, err)
				assert.Equal(t, bindingOf(in), bindingOf(got))
				assert.Equal(t, in.Payload, got.Payload)
				assert.Equal(t, in.Asked, got.Asked)
				before := got

				err = got.Verify(b)
				requireReason(t, err, tc.reason)
				assert.Equal(t, before, got, "Verify leaves the claims alone")
				assert.NotContains(t, err.Error(), in.Principal)
				if b.Principal != "" {
					assert.NotContains(t, err.Error(), b.Principal)
				}

				// Together, as a server uses them, nothing leaks out.
				got, err = openVerify(codec, token, b)
				requireReason(t, err, tc.reason)
				assert.Zero(t, got)
			})
		}
	}
}

// refuseAll asserts that Open refuses every token yielded by tokens, each
// with a Reason and a zero Claims, and returns how many there were. Open
// itself must refuse them: an altered token never reaches Verify.
func refuseAll(t *testing.T, codec Codec, tokens func(yield func(desc, token string) bool)) int {
	t.Helper()
	n := 0
	for desc, token := range tokens {
		n++
		got, err := codec.Open(token)
		if err == nil {
			t.Fatalf("%s: altered token opened: %+v", desc, got)
		}
		if _, ok := ReasonOf(err); !ok {
			t.Fatalf("%s: error without reason: %v", desc, err)
		}
		if !reflect.ValueOf(got).IsZero() {
			t.Fatalf("%s: refusal returned claims: %+v", desc, got)
		}
	}
	return n
}

func TestEveryFrameBitFlipRefused(t *testing.T) {
	for _, cc := range codecCases {
		t.Run(cc.name, func(t *testing.T) {
			codec, err := cc.make(testRing(t, "k1", "k2"))
			require.NoError(t, err)
			in, token := sealSample(t, codec)
			frame, err := base64.RawURLEncoding.Strict().DecodeString(token)
			require.NoError(t, err)

			n := refuseAll(t, codec, func(yield func(string, string) bool) {
				for i := range frame {
					for bit := range 8 {
						mut := append([]byte(nil), frame...)
						mut[i] ^= 1 << bit
						if !yield(fmt.Sprintf("byte %d bit %d", i, bit), base64.RawURLEncoding.EncodeToString(mut)) {
							return
						}
					}
				}
			})
			assert.Equal(t, 8*len(frame), n)
			// The original still opens.
			_, err = openVerify(codec, token, bindingOf(in))
			require.NoError(t, err)
		})
	}
}

func TestEveryTokenCharacterBitFlipRefused(t *testing.T) {
	for _, cc := range codecCases {
		t.Run(cc.name, func(t *testing.T) {
			codec := cc.codec(t)
			_, token := sealSample(t, codec)

			n := refuseAll(t, codec, func(yield func(string, string) bool) {
				for i := range len(token) {
					for bit := range 8 {
						mut := []byte(token)
						mut[i] ^= 1 << bit
						if !yield(fmt.Sprintf("char %d bit %d", i, bit), string(mut)) {
							return
						}
					}
				}
			})
			assert.Equal(t, 8*len(token), n)
		})
	}
}

func TestEveryTruncationRefused(t *testing.T) {
	for _, cc := range codecCases {
		t.Run(cc.name, func(t *testing.T) {
			codec := cc.codec(t)
			_, token := sealSample(t, codec)
			frame, err := base64.RawURLEncoding.DecodeString(token)
			require.NoError(t, err)

			n := refuseAll(t, codec, func(yield func(string, string) bool) {
				for i := range len(token) {
					if !yield(fmt.Sprintf("token prefix %d", i), token[:i]) {
						return
					}
				}
				for i := range len(frame) {
					if !yield(fmt.Sprintf("frame prefix %d", i), base64.RawURLEncoding.EncodeToString(frame[:i])) {
						return
					}
				}
			})
			assert.Equal(t, len(token)+len(frame), n)
		})
	}
}

func TestAppendedAndInsertedBytesRefused(t *testing.T) {
	for _, cc := range codecCases {
		t.Run(cc.name, func(t *testing.T) {
			codec := cc.codec(t)
			_, token := sealSample(t, codec)
			frame, err := base64.RawURLEncoding.DecodeString(token)
			require.NoError(t, err)
			refuseAll(t, codec, func(yield func(string, string) bool) {
				for _, s := range []string{"A", "AA", "AAA", "AAAA", "=", "==", "\n", "\r\n", " ", "."} {
					if !yield("suffix "+s, token+s) || !yield("prefix "+s, s+token) {
						return
					}
				}
				for _, pos := range []int{1, 10, len(token) / 2, len(token) - 1} {
					for _, s := range []string{"\n", "\r", " ", "\t", "="} {
						if !yield(fmt.Sprintf("insert %q at %d", s, pos), token[:pos]+s+token[pos:]) {
							return
						}
					}
				}
				for _, frame := range [][]byte{frame, frame[:len(frame)-1], frame[:len(frame)-2]} {
					unpadded := base64.RawURLEncoding.EncodeToString(frame)
					for _, alt := range []string{base64.URLEncoding.EncodeToString(frame), base64.RawStdEncoding.EncodeToString(frame)} {
						if alt != unpadded && !yield("alternative encoding "+alt, alt) {
							return
						}
					}
				}
				yield("frame plus zero byte", base64.RawURLEncoding.EncodeToString(append(frame, 0)))
			})
		})
	}
}

func TestNonCanonicalTrailingBitsRefused(t *testing.T) {
	codec, err := NewAEAD(testRing(t, "k1"))
	require.NoError(t, err)
	in := sampleClaims(t)
	// Find a token whose last group leaves unused bits, then set them.
	for n := range 3 {
		in.Payload = make([]byte, n)
		token, err := codec.Seal(in)
		require.NoError(t, err)
		if len(token)%4 == 0 {
			continue
		}
		const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
		last := strings.IndexByte(alphabet, token[len(token)-1])
		mut := token[:len(token)-1] + string(alphabet[last|1])
		if mut == token {
			mut = token[:len(token)-1] + string(alphabet[last|2])
		}
		// The lenient decoder reads the same frame from both strings.
		a, _ := base64.RawURLEncoding.DecodeString(token)
		b, _ := base64.RawURLEncoding.DecodeString(mut)
		require.Equal(t, a, b)
		_, err = codec.Open(mut)
		requireReason(t, err, ReasonMalformed)
		return
	}
	t.Fatal("no token with a partial last group")
}

func TestExpiryBoundary(t *testing.T) {
	for _, cc := range codecCases {
		t.Run(cc.name, func(t *testing.T) {
			clock := newTestClock(t0)
			const ttl, skew = 5 * time.Minute, 7 * time.Second
			codec := cc.codec(t, WithClock(clock.Now), WithTTL(ttl), WithClockSkew(skew))
			in, token := sealSample(t, codec)

			issued := t0.Truncate(time.Millisecond)
			expires := issued.Add(ttl)

			clock.Set(expires.Add(skew))
			got, err := openVerify(codec, token, bindingOf(in))
			require.NoError(t, err, "valid at exactly ExpiresAt+skew")
			assert.Equal(t, expires, got.ExpiresAt)

			clock.Set(expires.Add(skew).Add(time.Nanosecond))
			got, err = codec.Open(token)
			requireReason(t, err, ReasonExpired, "expired one nanosecond later")
			// Expiry is checked by Open, before any binding: an expired
			// token yields no claims to verify.
			assert.Zero(t, got)
		})
	}
}

func TestIssuedInFuture(t *testing.T) {
	for _, cc := range codecCases {
		t.Run(cc.name, func(t *testing.T) {
			clock := newTestClock(t0)
			const skew = 30 * time.Second
			codec := cc.codec(t, WithClock(clock.Now), WithClockSkew(skew))
			in, token := sealSample(t, codec)
			issued := t0.Truncate(time.Millisecond)

			// Opened by a replica whose clock is behind by exactly the skew.
			clock.Set(issued.Add(-skew))
			_, err := openVerify(codec, token, bindingOf(in))
			require.NoError(t, err)

			clock.Set(issued.Add(-skew).Add(-time.Nanosecond))
			_, err = codec.Open(token)
			requireReason(t, err, ReasonMalformed)
			assert.Contains(t, err.Error(), "future")
		})
	}
}

func TestZeroSkew(t *testing.T) {
	clock := newTestClock(t0)
	codec, err := NewAEAD(testRing(t, "k1"), WithClock(clock.Now), WithClockSkew(0), WithTTL(time.Second))
	require.NoError(t, err)
	in, token := sealSample(t, codec)
	clock.Set(t0.Truncate(time.Millisecond).Add(time.Second))
	_, err = openVerify(codec, token, bindingOf(in))
	require.NoError(t, err)
	clock.Set(t0.Truncate(time.Millisecond).Add(time.Second + 1))
	_, err = codec.Open(token)
	requireReason(t, err, ReasonExpired)
}

func TestRoundRange(t *testing.T) {
	for _, cc := range codecCases {
		t.Run(cc.name, func(t *testing.T) {
			codec := cc.codec(t)
			in := sampleClaims(t)

			// Rounds outside 1..MaxRound are refused with a plain error:
			// no Reason, since nothing was presented by a client.
			beyond := int64(MaxRound) + 1 // negative where int has 32 bits: refused too
			for _, round := range []int{0, -1, int(beyond), math.MinInt} {
				in.Round = round
				token, err := codec.Seal(in)
				require.Error(t, err, "round %d", round)
				assert.Empty(t, token)
				_, ok := ReasonOf(err)
				assert.False(t, ok, "round %d: %v", round, err)
				assert.Contains(t, err.Error(), "Round")
			}

			// There is no round limit below MaxRound: both ends round-trip.
			for _, round := range []int{1, 2, 11, 1000, MaxRound - 1, MaxRound} {
				in.Round = round
				token, err := codec.Seal(in)
				require.NoError(t, err, "round %d", round)
				got, err := openVerify(codec, token, bindingOf(in))
				require.NoError(t, err, "round %d", round)
				assert.Equal(t, round, got.Round)
			}
		})
	}
}

func TestSealValidatesAsked(t *testing.T) {
	codec, err := NewAEAD(testRing(t, "k1"))
	require.NoError(t, err)
	bad := []map[string]byte{
		{"": 1},
		{"": 0},
		{"a": 1, "": 2},
		{strings.Repeat("k", MaxAskedKeyLen+1): 4},
	}
	for _, m := range bad {
		_, err := codec.Seal(Claims{Round: 1, Asked: m})
		require.Error(t, err, "%v", m)
	}
	many := make(map[string]byte, maxAsked+1)
	for i := range maxAsked + 1 {
		many[fmt.Sprint(i)] = 1
	}
	_, err = codec.Seal(Claims{Round: 1, Asked: many})
	require.Error(t, err)
	// One fewer is fine.
	delete(many, "0")
	_, err = codec.Seal(Claims{Round: 1, Asked: many})
	require.NoError(t, err)
}

// TestAskedValuesOpaque checks that state carries every byte value of
// Asked, 0 and 255 included, without interpreting it.
func TestAskedValuesOpaque(t *testing.T) {
	for _, cc := range codecCases {
		t.Run(cc.name, func(t *testing.T) {
			codec := cc.codec(t)
			for _, v := range []byte{0, 1, 4, 5, 127, 128, 254, 255} {
				in := Claims{Round: 1, Asked: map[string]byte{"only": v}}
				token, err := codec.Seal(in)
				require.NoError(t, err, "value %d", v)
				got, err := openVerify(codec, token, Binding{})
				require.NoError(t, err, "value %d", v)
				assert.Equal(t, map[string]byte{"only": v}, got.Asked)
			}

			// All 256 values at once, in the largest allowed map.
			all := make(map[string]byte, 256)
			for i := range 256 {
				all[fmt.Sprintf("key%d", i)] = byte(255 - i)
			}
			in := sampleClaims(t)
			in.Asked = all
			token, err := codec.Seal(in)
			require.NoError(t, err)
			got, err := openVerify(codec, token, bindingOf(in))
			require.NoError(t, err)
			assert.Equal(t, all, got.Asked)
			seen := map[byte]bool{}
			for _, v := range got.Asked {
				seen[v] = true
			}
			assert.Len(t, seen, 256)
		})
	}
}

func TestRotation(t *testing.T) {
	for _, cc := range codecCases {
		t.Run(cc.name, func(t *testing.T) {
			in := sampleClaims(t)
			want := bindingOf(in)

			old, err := cc.make(testRing(t, "k1"))
			require.NoError(t, err)
			tok1, err := old.Seal(in)
			require.NoError(t, err)

			both, err := cc.make(testRing(t, "k2", "k1"))
			require.NoError(t, err)
			_, err = openVerify(both, tok1, want)
			require.NoError(t, err, "old token opens during rotation")
			tok2, err := both.Seal(in)
			require.NoError(t, err)
			assert.Equal(t, "k2", keyIDOf(t, tok2), "first key seals")
			assert.Equal(t, "k1", keyIDOf(t, tok1))

			// Replicas still on the old ring cannot open new tokens.
			_, err = old.Open(tok2)
			requireReason(t, err, ReasonUnknownKey)

			next, err := cc.make(testRing(t, "k2"))
			require.NoError(t, err)
			_, err = openVerify(next, tok2, want)
			require.NoError(t, err)
			_, err = next.Open(tok1)
			requireReason(t, err, ReasonUnknownKey)
			assert.Contains(t, err.Error(), `"k1"`)
		})
	}
}

func keyIDOf(t *testing.T, token string) string {
	t.Helper()
	frame, err := base64.RawURLEncoding.DecodeString(token)
	require.NoError(t, err)
	return string(frame[3 : 3+int(frame[2])])
}

func TestSameIDDifferentSecret(t *testing.T) {
	a, err := NewAEAD(testRing(t, "k1"))
	require.NoError(t, err)
	ring, err := NewKeyRing(Key{ID: "k1", Secret: testSecret(99)})
	require.NoError(t, err)
	b, err := NewAEAD(ring)
	require.NoError(t, err)
	in := sampleClaims(t)
	token, err := a.Seal(in)
	require.NoError(t, err)
	_, err = b.Open(token)
	requireReason(t, err, ReasonIntegrity)
}

// algorithmsApart returns an AEAD and an HMAC codec over one ring, both
// with opts, and a token of each, having checked that neither codec opens
// the other's token.
func algorithmsApart(t *testing.T, opts ...Option) (aead, mac *RingCodec, at, ht string) {
	t.Helper()
	ring := testRing(t, "k1")
	aead, err := NewAEAD(ring, opts...)
	require.NoError(t, err)
	mac, err = NewHMAC(ring, opts...)
	require.NoError(t, err)
	_, at = sealSample(t, aead)
	_, ht = sealSample(t, mac)
	_, err = aead.Open(ht)
	requireReason(t, err, ReasonMalformed)
	_, err = mac.Open(at)
	requireReason(t, err, ReasonMalformed)
	return aead, mac, at, ht
}

func TestAlgorithmMismatch(t *testing.T) {
	aead, mac, at, ht := algorithmsApart(t)

	// Relabelling the algorithm byte does not help either: the subkeys
	// differ per algorithm.
	frame, err := base64.RawURLEncoding.DecodeString(ht)
	require.NoError(t, err)
	frame[1] = algAEAD
	_, err = aead.Open(base64.RawURLEncoding.EncodeToString(frame))
	require.Error(t, err)
	frame, err = base64.RawURLEncoding.DecodeString(at)
	require.NoError(t, err)
	frame[1] = algHMAC
	_, err = mac.Open(base64.RawURLEncoding.EncodeToString(frame))
	require.Error(t, err)
}

func TestSubkeysDifferPerAlgorithmIDAndPurpose(t *testing.T) {
	secret := testSecret(7)
	derive := func(alg byte, id, purpose string) []byte {
		t.Helper()
		sub, err := deriveSubkey(secret, alg, id, purpose)
		require.NoError(t, err)
		require.Len(t, sub, subkeyLen)
		return sub
	}
	a := derive(algAEAD, "k1", "")
	h := derive(algHMAC, "k1", "")
	a2 := derive(algAEAD, "k2", "")
	as := derive(algAEAD, "k1", "session")
	hs := derive(algHMAC, "k1", "session")
	ao := derive(algAEAD, "k1", "other")
	assert.NotEqual(t, a, h)
	assert.NotEqual(t, a, a2)
	assert.NotEqual(t, secret, a)
	assert.Equal(t, a, derive(algAEAD, "k1", ""))
	assert.NotEqual(t, a, as)
	assert.NotEqual(t, h, hs)
	assert.NotEqual(t, as, hs)
	assert.NotEqual(t, as, ao)
	assert.Equal(t, as, derive(algAEAD, "k1", "session"))

	// The default purpose derives exactly the subkeys of the format before
	// purposes existed, so tokens sealed then still open.
	for _, tc := range []struct {
		alg  byte
		info string
	}{
		{algAEAD, "mrtrkit/state token v1 xchacha20-poly1305 key k1"},
		{algHMAC, "mrtrkit/state token v1 hmac-sha256 key k1"},
	} {
		want := make([]byte, subkeyLen)
		_, err := io.ReadFull(hkdf.New(sha256.New, secret, nil, []byte(tc.info)), want)
		require.NoError(t, err)
		assert.Equal(t, want, derive(tc.alg, "k1", ""), tc.info)
		want = make([]byte, subkeyLen)
		_, err = io.ReadFull(hkdf.New(sha256.New, secret, nil, []byte(tc.info+" purpose session")), want)
		require.NoError(t, err)
		assert.Equal(t, want, derive(tc.alg, "k1", "session"), tc.info)
	}
}

func TestUnknownVersion(t *testing.T) {
	for _, cc := range codecCases {
		codec := cc.codec(t)
		_, token := sealSample(t, codec)
		frame, err := base64.RawURLEncoding.DecodeString(token)
		require.NoError(t, err)
		frame[0] = 2
		_, err = codec.Open(base64.RawURLEncoding.EncodeToString(frame))
		requireReason(t, err, ReasonMalformed)
		assert.Contains(t, err.Error(), "version")
	}
}

func TestTooLarge(t *testing.T) {
	for _, cc := range codecCases {
		t.Run(cc.name, func(t *testing.T) {
			const limit = 1000
			ring := testRing(t, "k1")
			codec, err := cc.make(ring, WithMaxTokenSize(limit))
			require.NoError(t, err)

			// Not base64 at all, yet refused for size: nothing was decoded.
			_, err = codec.Open(strings.Repeat("!", limit+1))
			requireReason(t, err, ReasonTooLarge)
			_, err = codec.Open(strings.Repeat("!", 10*defaultMaxTokenSize))
			requireReason(t, err, ReasonTooLarge)
			// At the limit it is examined, and refused as malformed.
			_, err = codec.Open(strings.Repeat("!", limit))
			requireReason(t, err, ReasonMalformed)

			// A genuine token from a codec with a larger limit.
			big, err := cc.make(ring, WithMaxTokenSize(4*limit))
			require.NoError(t, err)
			in := sampleClaims(t)
			in.Payload = make([]byte, 2*limit)
			token, err := big.Seal(in)
			require.NoError(t, err)
			_, err = openVerify(big, token, bindingOf(in))
			require.NoError(t, err)
			_, err = codec.Open(token)
			requireReason(t, err, ReasonTooLarge)

			// Seal refuses to produce it.
			_, err = codec.Seal(in)
			requireReason(t, err, ReasonTooLarge)
		})
	}
}

func TestSealAtExactLimit(t *testing.T) {
	for _, cc := range codecCases {
		t.Run(cc.name, func(t *testing.T) {
			ring := testRing(t, "k1")
			probe, err := cc.make(ring)
			require.NoError(t, err)
			in := sampleClaims(t)
			in.Payload = nil
			token, err := probe.Seal(in)
			require.NoError(t, err)
			limit := len(token) + 300 // token length for the payload sizes used below
			codec, err := cc.make(ring, WithMaxTokenSize(limit))
			require.NoError(t, err)
			for n := 200; n < 260; n++ {
				in.Payload = make([]byte, n)
				token, err := codec.Seal(in)
				if err != nil {
					requireReason(t, err, ReasonTooLarge)
					continue
				}
				require.LessOrEqual(t, len(token), limit)
				_, err = openVerify(codec, token, bindingOf(in))
				require.NoError(t, err)
			}
		})
	}
}

func TestEmptyAndGarbage(t *testing.T) {
	for _, cc := range codecCases {
		codec := cc.codec(t)
		for _, s := range []string{"", "A", "AAAA", "AQEC", "AQECazE", "not a token", "....", "AQACazE" + strings.Repeat("A", 100)} {
			_, err := codec.Open(s)
			require.Error(t, err, "%q", s)
			r, ok := ReasonOf(err)
			require.True(t, ok)
			assert.Contains(t, []Reason{ReasonMalformed, ReasonUnknownKey, ReasonIntegrity}, r, "%q", s)
		}
	}
}

func TestOptionsValidation(t *testing.T) {
	ring := testRing(t, "k1")
	bad := []Option{
		WithTTL(0), WithTTL(-time.Second), WithTTL(time.Microsecond),
		WithClockSkew(-1), WithClock(nil),
		WithMaxTokenSize(0), WithMaxTokenSize(-5),
		WithPurpose(""), WithPurpose("Session"),
	}
	for i, o := range bad {
		_, err := NewAEAD(ring, o)
		require.Error(t, err, "option %d", i)
		_, err = NewHMAC(ring, o)
		require.Error(t, err, "option %d", i)
	}
	_, err := NewAEAD(nil)
	require.Error(t, err)
	_, err = NewHMAC(&KeyRing{})
	require.Error(t, err)
	_, err = NewAEAD(ring, nil, WithTTL(time.Millisecond))
	require.NoError(t, err)
}

func TestDefaults(t *testing.T) {
	c, err := NewAEAD(testRing(t, "k1"))
	require.NoError(t, err)
	cfg := c.cur.Load().cfg
	assert.Equal(t, 10*time.Minute, cfg.ttl)
	assert.Equal(t, 30*time.Second, cfg.skew)
	assert.Equal(t, 16384, cfg.maxSize)
	assert.Equal(t, "", cfg.purpose)
}

func TestConcurrentUse(t *testing.T) {
	for _, cc := range codecCases {
		t.Run(cc.name, func(t *testing.T) {
			codec, err := cc.make(testRing(t, "k1", "k2"))
			require.NoError(t, err)
			var wg sync.WaitGroup
			errs := make(chan error, 8)
			for g := range 8 {
				wg.Go(func() {
					in := sampleClaims(t)
					in.Principal = fmt.Sprint("user", g)
					for i := range 200 {
						in.Payload = []byte(fmt.Sprint(g, "/", i))
						token, err := codec.Seal(in)
						if err != nil {
							errs <- err
							return
						}
						got, err := openVerify(codec, token, bindingOf(in))
						if err != nil {
							errs <- err
							return
						}
						if string(got.Payload) != string(in.Payload) {
							errs <- fmt.Errorf("payload mixed up: %q != %q", got.Payload, in.Payload)
							return
						}
					}
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Error(err)
			}
		})
	}
}

func TestReasonAndErrorStrings(t *testing.T) {
	want := map[Reason]string{
		ReasonMalformed:  "malformed",
		ReasonUnknownKey: "unknown_key",
		ReasonIntegrity:  "integrity",
		ReasonExpired:    "expired",
		ReasonPrincipal:  "principal_mismatch",
		ReasonRequest:    "request_mismatch",
		ReasonTooLarge:   "too_large",
	}
	for r, s := range want {
		assert.Equal(t, s, r.String())
	}
	assert.Equal(t, "reason(0)", Reason(0).String())
	assert.Equal(t, "reason(99)", Reason(99).String())

	assert.Equal(t, "requestState expired: token expired", (&Error{Reason: ReasonExpired, Detail: "token expired"}).Error())
	assert.Equal(t, "requestState integrity", (&Error{Reason: ReasonIntegrity}).Error())

	wrapped := fmt.Errorf("resume: %w", &Error{Reason: ReasonPrincipal})
	r, ok := ReasonOf(wrapped)
	assert.True(t, ok)
	assert.Equal(t, ReasonPrincipal, r)
	_, ok = ReasonOf(fmt.Errorf("plain"))
	assert.False(t, ok)
	_, ok = ReasonOf(nil)
	assert.False(t, ok)
}

// countingAEAD counts calls into the wrapped cipher.
type countingAEAD struct {
	cipher.AEAD
	opens, seals *atomic.Int64
}

func (c countingAEAD) Open(dst, nonce, ciphertext, ad []byte) ([]byte, error) {
	c.opens.Add(1)
	return c.AEAD.Open(dst, nonce, ciphertext, ad)
}

func (c countingAEAD) Seal(dst, nonce, plaintext, ad []byte) []byte {
	c.seals.Add(1)
	return c.AEAD.Seal(dst, nonce, plaintext, ad)
}

func TestRefusalsBeforeCryptoNeverDecrypt(t *testing.T) {
	const limit = 2000
	c, err := NewAEAD(testRing(t, "k1"), WithMaxTokenSize(limit))
	require.NoError(t, err)
	var opens, seals atomic.Int64
	ck := c.cur.Load().keys["k1"]
	ck.aead = countingAEAD{AEAD: ck.aead, opens: &opens, seals: &seals}

	in := sampleClaims(t)
	token, err := c.Seal(in)
	require.NoError(t, err)
	require.EqualValues(t, 1, seals.Load())

	in.Payload = make([]byte, limit)
	_, err = c.Seal(in)
	requireReason(t, err, ReasonTooLarge)
	assert.EqualValues(t, 1, seals.Load(), "an oversized seal is refused before encrypting")

	refusals := map[string]Reason{
		strings.Repeat("A", limit+1):   ReasonTooLarge,
		strings.Repeat("!", 100*limit): ReasonTooLarge,
		token + "\n":                   ReasonMalformed,
		token[:5]:                      ReasonMalformed,
	}
	frame, err := base64.RawURLEncoding.DecodeString(token)
	require.NoError(t, err)
	unknown := append([]byte(nil), frame...)
	unknown[4] = '9' // key id "k9"
	refusals[base64.RawURLEncoding.EncodeToString(unknown)] = ReasonUnknownKey
	wrongAlg := append([]byte(nil), frame...)
	wrongAlg[1] = algHMAC
	refusals[base64.RawURLEncoding.EncodeToString(wrongAlg)] = ReasonMalformed
	for tok, reason := range refusals {
		_, err := c.Open(tok)
		requireReason(t, err, reason)
	}
	assert.EqualValues(t, 0, opens.Load(), "no decryption was attempted")

	_, err = openVerify(c, token, bindingOf(sampleClaims(t)))
	require.NoError(t, err)
	assert.EqualValues(t, 1, opens.Load())
}

// AppendSeal appends a token that opens to the claims sealed, as one from
// Seal does, after what dst held; a refusal appends nothing.
func TestAppendSeal(t *testing.T) {
	for _, cc := range codecCases {
		t.Run(cc.name, func(t *testing.T) {
			codec := cc.codec(t)
			var sealer AppendSealer = codec
			in := sampleClaims(t)
			out, err := sealer.AppendSeal([]byte("prefix:"), in)
			require.NoError(t, err)
			require.True(t, strings.HasPrefix(string(out), "prefix:"))
			token := string(out[len("prefix:"):])
			got, err := codec.Open(token)
			require.NoError(t, err)
			require.Equal(t, in.Principal, got.Principal)
			require.Equal(t, in.Asked, got.Asked)
			require.Equal(t, in.Payload, got.Payload)
			other, err := codec.Seal(in)
			require.NoError(t, err)
			require.Len(t, token, len(other))

			bad := in
			bad.Round = 0
			out, err = sealer.AppendSeal([]byte("prefix:"), bad)
			require.Error(t, err)
			require.Equal(t, "prefix:", string(out))
		})
	}
}
