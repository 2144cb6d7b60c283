package state

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// goldenTokens were sealed by the previous version of this package, whose
// Open took a Binding and whose Asked values were input kinds (1 sampling,
// 2 form elicitation, 3 URL elicitation, 4 roots): key ring testRing("k1"),
// clock t0, the default purpose, and the nonce stream goldenNonces. The wire
// format did not change when Asked became opaque bytes, so they must still
// open, and sealing the same claims must still produce them byte for byte.
var goldenTokens = map[string]string{
	"aead": "AQECazGJ-P004kWD6iLiigI1mTpACNfV4mzpGBP7XJyrae2NB4eS_WIsWUgrSDoxSeWY_weiMuL38NUcGwaAmaToMsZnxfLec71LcKIqLkG_yR9SC4L5ATGUFYBRrTIntJ60rtB9evDMoC1ZWC_nR5bccVGGxGiLRD69ac8fSkmhqnKVL3lLuyW9q_YWywc40CtoQGJfGAKERID93k-58tyRM0pUMdL0pNVuKKvkw1LECI-7rMc9Xm9A4Ippi9QVSiMZ7DqFhP7UyVqX",
	"hmac": "AQICazEBEfbZxIn1Z8DPJAMWdXNlcjphbGljZUBleGFtcGxlLmNvbRdodHRwczovL21jcC5leGFtcGxlLmNvbQp0b29scy9jYWxsBmRlcGxvefxa0_XrPY78HQsj6P5zh31XQLeVF3K8ZZqKU0TuxUZLBAdjb25maXJtAgVsb2dpbgMFcm9vdHMEB3N1bW1hcnkBaGFuZGxlciBzdGF0ZSAAAf-7rEzTz7KgE23XTTEIb8j11RrjUungV2ypNN8s2dWthw",
}

func goldenNonces() *rand.ChaCha8 {
	return rand.NewChaCha8([32]byte{'g', 'o', 'l', 'd'})
}

// goldenClaims are the claims the golden tokens carry.
func goldenClaims(t testing.TB) Claims {
	issued := t0.Truncate(time.Millisecond)
	return Claims{
		Principal:  "user:alice@example.com",
		Audience:   "https://mcp.example.com",
		Method:     "tools/call",
		Target:     "deploy",
		ArgsDigest: mustDigest(t, `{"env":"prod","replicas":3}`),
		IssuedAt:   issued,
		ExpiresAt:  issued.Add(defaultTTL),
		Round:      3,
		Asked:      map[string]byte{"confirm": 2, "login": 3, "summary": 1, "roots": 4},
		Payload:    []byte("handler state \x00\x01\xff"),
	}
}

func TestGoldenTokensFromPreviousVersion(t *testing.T) {
	for _, cc := range codecCases {
		t.Run(cc.name, func(t *testing.T) {
			token := goldenTokens[cc.name]
			require.NotEmpty(t, token)
			want := goldenClaims(t)
			clock := func() time.Time { return t0 }

			c, err := cc.make(testRing(t, "k1"), WithClock(clock))
			require.NoError(t, err)
			got, err := c.Open(token)
			require.NoError(t, err)
			assert.Equal(t, want, got)
			require.NoError(t, got.Verify(bindingOf(want)))

			// The same claims and nonces seal to the same bytes.
			c.cur.Load().random = goldenNonces()
			again, err := c.Seal(want)
			require.NoError(t, err)
			assert.Equal(t, token, again)

			// A codec with a purpose does not open them.
			p, err := cc.make(testRing(t, "k1"), WithClock(clock), WithPurpose("session"))
			require.NoError(t, err)
			_, err = p.Open(token)
			requireReason(t, err, ReasonIntegrity)
		})
	}
}
