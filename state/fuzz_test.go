package state

import (
	"encoding/base64"
	"math/rand/v2"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// fuzzFixture holds codecs whose tokens are identical in every process: the
// keys, the clock and the nonce stream are all fixed. Fuzzing runs the
// target in several worker processes, and each must recognise the tokens
// the others sealed.
type fuzzFixture struct {
	codecs  map[string]Codec
	sealed  map[string]map[string]Claims // codec name -> token -> claims
	binding Binding
}

var (
	fuzzOnce sync.Once
	fuzzFix  fuzzFixture
)

func fuzzSetup(t testing.TB) *fuzzFixture {
	fuzzOnce.Do(func() {
		fix := fuzzFixture{codecs: map[string]Codec{}, sealed: map[string]map[string]Claims{}}
		clock := func() time.Time { return t0 }
		ring := testRing(t, "k2", "k1")
		oldRing := testRing(t, "k1")
		base := sampleClaims(t)
		fix.binding = bindingOf(base)
		variants := []Claims{base}
		for i, round := range []int{1, 10, MaxRound} {
			c := base
			c.Round = round
			c.Asked = nil
			c.Payload = []byte(strings.Repeat("p", (i+1)*7))
			variants = append(variants, c)
		}
		for _, cc := range codecCases {
			fix.sealed[cc.name] = map[string]Claims{}
			for i, r := range []*KeyRing{ring, oldRing} {
				c, err := cc.make(r, WithClock(clock))
				require.NoError(t, err)
				c.cur.Load().random = rand.NewChaCha8([32]byte{byte(i), 's', 't', 'a', 't', 'e'})
				for _, v := range variants {
					token, err := c.Seal(v)
					require.NoError(t, err)
					opened, err := c.Open(token)
					require.NoError(t, err)
					require.NoError(t, opened.Verify(fix.binding))
					fix.sealed[cc.name][token] = opened
				}
				if i == 0 {
					fix.codecs[cc.name] = c
				}
			}
		}
		fuzzFix = fix
	})
	return &fuzzFix
}

// FuzzOpen feeds arbitrary strings to both codecs. Nothing may panic, every
// refusal carries a Reason and a zero Claims, and the only strings that open
// are tokens that were actually sealed, with exactly the claims that were
// sealed, which then verify against the binding they were sealed for.
func FuzzOpen(f *testing.F) {
	fix := fuzzSetup(f)
	for _, tokens := range fix.sealed {
		for token := range tokens {
			f.Add(token)
			f.Add(token[:len(token)/2])
		}
	}
	for _, s := range []string{"", "A", "AQEC", "AQECazE", "AQICazE", "AgECazE", "!!!!", "AQEgazEAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, token string) {
		for name, c := range fix.codecs {
			got, err := c.Open(token)
			if err != nil {
				if _, ok := ReasonOf(err); !ok {
					t.Fatalf("%s: refusal without a reason: %v", name, err)
				}
				if !reflect.ValueOf(got).IsZero() {
					t.Fatalf("%s: refusal returned claims: %+v", name, got)
				}
				continue
			}
			want, ok := fix.sealed[name][token]
			if !ok {
				t.Fatalf("%s: a token that was never sealed opened: %q", name, token)
			}
			require.Equal(t, want, got)
			require.NoError(t, got.Verify(fix.binding))
		}
	})
}

// FuzzParseKeyRing checks that the key ring parsers never panic, that what
// they accept is valid, and that their errors do not echo secrets.
func FuzzParseKeyRing(f *testing.F) {
	a := base64.StdEncoding.EncodeToString(secretA)
	b := base64.RawURLEncoding.EncodeToString(secretB)
	for _, s := range []string{
		"", ",", "k1:" + a, "k2:" + b + ",k1:" + a, " k1 : " + a + " , ", "k1:" + a + ",k1:" + a,
		"k1:" + a[:20], "k1:" + a + "=", "k1", ":", "k 1:" + a, "# c\nk1:" + a + "\n\nk2:" + b,
		"k1:" + strings.Repeat("A", 44), "k1:" + a + "\nk2:" + b + "," + "k3:" + a,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		check := func(ring *KeyRing, err error) {
			if err != nil {
				require.Nil(t, ring)
				assertNoSecretInError(t, s, err)
				return
			}
			require.NotEmpty(t, ring.keys)
			seen := map[string]bool{}
			for _, k := range ring.keys {
				require.True(t, validKeyID(k.ID), "%q", k.ID)
				require.False(t, seen[k.ID], "duplicate %q", k.ID)
				seen[k.ID] = true
				require.GreaterOrEqual(t, len(k.Secret), minSecretLen)
			}
		}
		check(ParseKeyRing(s))
		check(parseKeyRingText([]byte(s), "keys.txt"))
	})
}

// assertNoSecretInError checks that no secret-looking part of input appears
// in err. Errors may quote ids, so text that could be read as an id (what
// precedes a ':' back to the previous separator, under either parser's
// separators) is exempt, and so are fragments shorter than 12 characters,
// which could match the message's fixed text.
func assertNoSecretInError(t *testing.T, input string, err error) {
	t.Helper()
	msg := err.Error()
	var ids, secrets []string
	for _, seps := range []string{",", ",\n"} {
		entries := strings.FieldsFunc(input, func(r rune) bool { return strings.ContainsRune(seps, r) })
		for _, entry := range entries {
			id, secret, found := strings.Cut(entry, ":")
			if found {
				ids = append(ids, strings.TrimSpace(id))
			} else {
				secret = entry
			}
			secrets = append(secrets, strings.TrimSpace(secret))
		}
	}
	allIDs := strings.Join(ids, "\x00")
	for _, secret := range secrets {
		if len(secret) < 12 || strings.Contains(allIDs, secret) {
			continue
		}
		if strings.ContainsFunc(secret, func(r rune) bool {
			return !(r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || strings.ContainsRune("+/=-_", r))
		}) {
			continue
		}
		if strings.Contains(msg, secret) {
			t.Fatalf("error %q contains secret text %q", msg, secret)
		}
	}
}

// FuzzDecodeClaims feeds arbitrary bytes to the claims decoder. Nothing may
// panic, and whatever decodes must re-encode to exactly the input, since
// every value has a single encoding.
func FuzzDecodeClaims(f *testing.F) {
	c := sampleClaims(f)
	c.IssuedAt = t0.Truncate(time.Millisecond)
	c.ExpiresAt = c.IssuedAt.Add(defaultTTL)
	f.Add(encodeForTest(&c))
	c.Asked, c.Payload = nil, nil
	f.Add(encodeForTest(&c))
	f.Add(encodeForTest(&Claims{Round: 1}))
	f.Add(encodeForTest(&Claims{Round: MaxRound, Asked: map[string]byte{"a": 0, "b": 255}}))
	f.Add([]byte{})
	f.Add([]byte{1})
	f.Add([]byte{1, 0x80, 0x00})
	f.Fuzz(func(t *testing.T, b []byte) {
		in := append([]byte(nil), b...)
		got, err := decodeClaims(b)
		if err != nil {
			return
		}
		require.Equal(t, in, encodeForTest(&got))
		require.GreaterOrEqual(t, got.Round, 1)
		require.LessOrEqual(t, len(got.Asked), maxAsked)
		require.LessOrEqual(t, got.Round, MaxRound)
		if got.Asked != nil {
			require.NotEmpty(t, got.Asked, "an empty Asked decodes as nil")
		}
		for k := range got.Asked {
			require.NotEmpty(t, k)
			require.LessOrEqual(t, len(k), MaxAskedKeyLen)
		}
		require.False(t, got.ExpiresAt.Before(got.IssuedAt))
	})
}
