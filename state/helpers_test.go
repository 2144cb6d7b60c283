package state

import (
	"bytes"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mrtrkit/mrtrkit/internal/testkit/clock"
)

// t0 has sub-millisecond digits so that the millisecond truncation in Seal
// is exercised.
var t0 = time.Date(2026, 7, 28, 12, 0, 0, 123456789, time.UTC)

// newTestClock returns an adjustable clock for WithClock reading t.
func newTestClock(t time.Time) *clock.Clock { return clock.New(t) }

// testSecret returns a deterministic 32-byte secret that differs per seed.
func testSecret(seed byte) []byte {
	return bytes.Repeat([]byte{seed, seed ^ 0x5a, seed + 1, 0xc3}, 8)
}

func testRing(t testing.TB, ids ...string) *KeyRing {
	t.Helper()
	keys := make([]Key, len(ids))
	for i, id := range ids {
		keys[i] = Key{ID: id, Secret: testSecret(id[len(id)-1])}
	}
	ring, err := NewKeyRing(keys...)
	require.NoError(t, err)
	return ring
}

type codecCase struct {
	name string
	make func(*KeyRing, ...Option) (*RingCodec, error)
}

var codecCases = []codecCase{
	{"aead", NewAEAD},
	{"hmac", NewHMAC},
}

// codec returns cc's codec over testRing(t, "k1") with opts.
func (cc codecCase) codec(t testing.TB, opts ...Option) *RingCodec {
	t.Helper()
	codec, err := cc.make(testRing(t, "k1"), opts...)
	require.NoError(t, err)
	return codec
}

// sealSample seals sampleClaims with codec and returns them and the token.
func sealSample(t testing.TB, codec Codec) (Claims, string) {
	t.Helper()
	in := sampleClaims(t)
	token, err := codec.Seal(in)
	require.NoError(t, err)
	return in, token
}

func mustDigest(t testing.TB, js string) Digest {
	t.Helper()
	d, err := DigestJSON([]byte(js))
	require.NoError(t, err)
	return d
}

func sampleClaims(t testing.TB) Claims {
	return Claims{
		Principal:  "user:alice@example.com",
		Audience:   "https://mcp.example.com",
		Method:     "tools/call",
		Target:     "deploy",
		ArgsDigest: mustDigest(t, `{"env":"prod","replicas":3}`),
		Round:      2,
		// Asked values are opaque to state: 0 and 255 are as valid as
		// the values mrtrkit uses for its input kinds.
		Asked: map[string]byte{
			"confirm": 2,
			"login":   3,
			"summary": 1,
			"roots":   4,
			"zero":    0,
			"max":     255,
		},
		Payload: []byte("handler state \x00\x01\xff"),
	}
}

func bindingOf(c Claims) Binding {
	return Binding{
		Principal:  c.Principal,
		Audience:   c.Audience,
		Method:     c.Method,
		Target:     c.Target,
		ArgsDigest: c.ArgsDigest,
	}
}

// openVerify opens token and verifies its claims against want, the two steps
// a server takes on a retry. Like Open, it returns a zero Claims on failure.
func openVerify(c Codec, token string, want Binding) (Claims, error) {
	cl, err := c.Open(token)
	if err != nil {
		return Claims{}, err
	}
	if err := cl.Verify(want); err != nil {
		return Claims{}, err
	}
	return cl, nil
}

func requireReason(t testing.TB, err error, want Reason, msgAndArgs ...any) {
	t.Helper()
	require.Error(t, err, msgAndArgs...)
	got, ok := ReasonOf(err)
	require.True(t, ok, "error %v carries no Reason", err)
	require.Equal(t, want.String(), got.String(), msgAndArgs...)
}
