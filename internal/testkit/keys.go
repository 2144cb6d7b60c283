package testkit

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mrtrkit/mrtrkit/mrtr/mrtrtest"
	"github.com/mrtrkit/mrtrkit/state"
)

// Key returns a ring key with the given id whose 32-byte secret repeats
// seed, so that two calls with the same arguments give the same key.
func Key(id string, seed byte) state.Key {
	return state.Key{ID: id, Secret: bytes.Repeat([]byte{seed}, 32)}
}

// Ring returns a key ring holding keys, the first sealing. Without keys
// it is mrtrtest.ReplicaKeyRing, whose one key is Key("k1", 7).
func Ring(tb testing.TB, keys ...state.Key) *state.KeyRing {
	tb.Helper()
	if len(keys) == 0 {
		return mrtrtest.ReplicaKeyRing(tb)
	}
	ring, err := state.NewKeyRing(keys...)
	require.NoError(tb, err)
	return ring
}

// AEAD returns the AEAD codec over ring with opts.
func AEAD(tb testing.TB, ring *state.KeyRing, opts ...state.Option) state.Codec {
	tb.Helper()
	codec, err := state.NewAEAD(ring, opts...)
	require.NoError(tb, err)
	return codec
}

// Codec returns the AEAD codec over the default Ring (key "k1", seed 7)
// with opts. Two codecs it returns open each other's requestState, as the
// replicas of one deployment do.
func Codec(tb testing.TB, opts ...state.Option) state.Codec {
	tb.Helper()
	return AEAD(tb, Ring(tb), opts...)
}

// FreshCodec returns an AEAD codec over a newly generated key ring, which
// no other codec shares.
func FreshCodec(tb testing.TB) state.Codec {
	tb.Helper()
	ring, err := state.GenerateKeyRing()
	require.NoError(tb, err)
	return AEAD(tb, ring)
}
