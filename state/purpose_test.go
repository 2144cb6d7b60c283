package state

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPurposeSeparatesTokens checks that codecs sharing one key ring but
// built for different purposes never open each other's tokens, while each
// opens its own.
func TestPurposeSeparatesTokens(t *testing.T) {
	purposes := []string{"", "session", "other"}
	for _, cc := range codecCases {
		t.Run(cc.name, func(t *testing.T) {
			ring := testRing(t, "k2", "k1")
			codecs := make(map[string]Codec, len(purposes))
			tokens := make(map[string]string, len(purposes))
			in := sampleClaims(t)
			for _, p := range purposes {
				var opts []Option
				if p != "" {
					opts = append(opts, WithPurpose(p))
				}
				c, err := cc.make(ring, opts...)
				require.NoError(t, err, "purpose %q", p)
				codecs[p] = c
				tokens[p], err = c.Seal(in)
				require.NoError(t, err, "purpose %q", p)
			}
			for _, sealer := range purposes {
				for _, opener := range purposes {
					got, err := codecs[opener].Open(tokens[sealer])
					if sealer == opener {
						require.NoError(t, err, "purpose %q opens its own token", sealer)
						require.NoError(t, got.Verify(bindingOf(in)))
						assert.Equal(t, in.Payload, got.Payload)
						continue
					}
					requireReason(t, err, ReasonIntegrity, "sealed for %q, opened for %q", sealer, opener)
					assert.Zero(t, got)
				}
			}

			// The frame does not reveal the purpose: the key id is the
			// same, so only the derived subkey tells the tokens apart.
			for _, p := range purposes {
				assert.Equal(t, "k2", keyIDOf(t, tokens[p]))
			}

			// A second codec for the same purpose, built separately from
			// the same ring, opens the tokens, including with an older
			// ring key.
			again, err := cc.make(testRing(t, "k2", "k1"), WithPurpose("session"))
			require.NoError(t, err)
			_, err = openVerify(again, tokens["session"], bindingOf(in))
			require.NoError(t, err)
			oldSession, err := cc.make(testRing(t, "k1"), WithPurpose("session"))
			require.NoError(t, err)
			old, err := oldSession.Seal(in)
			require.NoError(t, err)
			_, err = openVerify(again, old, bindingOf(in))
			require.NoError(t, err)
			oldDefault, err := cc.make(testRing(t, "k1"))
			require.NoError(t, err)
			_, err = oldDefault.Open(old)
			requireReason(t, err, ReasonIntegrity)
		})
	}
}

// TestPurposeAndAlgorithmBothMatter checks that a purpose does not merge
// the AEAD and HMAC keys.
func TestPurposeAndAlgorithmBothMatter(t *testing.T) {
	algorithmsApart(t, WithPurpose("session"))
}

func TestPurposeValidation(t *testing.T) {
	ring := testRing(t, "k1")
	good := []string{
		"session", "a", "0", "-", "_", ".", "x-y_z.0-9",
		strings.Repeat("a", 64), "abcdefghijklmnopqrstuvwxyz0123456789_.-",
	}
	for _, p := range good {
		for _, cc := range codecCases {
			c, err := cc.make(ring, WithPurpose(p))
			require.NoError(t, err, "%s: purpose %q", cc.name, p)
			assert.Equal(t, p, c.cur.Load().cfg.purpose)
		}
	}
	bad := []string{
		"",
		"Session",
		"SESSION",
		"my session",
		" session",
		"session ",
		"sess\tion",
		"session\n",
		strings.Repeat("a", 65),
		strings.Repeat("a", 1000),
		"séssion",
		"a/b",
		"a:b",
		"a+b",
		"a\x00b",
		"\xff",
	}
	for _, p := range bad {
		for _, cc := range codecCases {
			c, err := cc.make(ring, WithPurpose(p))
			require.Error(t, err, "%s: purpose %q", cc.name, p)
			assert.Nil(t, c)
			assert.Contains(t, err.Error(), "purpose")
		}
	}
	// A later valid option does not rescue an invalid purpose.
	_, err := NewAEAD(ring, WithPurpose("Bad"), WithPurpose("good"))
	require.Error(t, err)
	// The last valid purpose wins.
	c, err := NewAEAD(ring, WithPurpose("first"), WithPurpose("second"))
	require.NoError(t, err)
	assert.Equal(t, "second", c.cur.Load().cfg.purpose)
}
