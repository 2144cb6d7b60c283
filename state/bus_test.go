package state_test

import (
	"bytes"
	"crypto/rand"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mrtrkit/mrtrkit/state"
)

func busKey(t *testing.T, id string) state.Key {
	t.Helper()
	secret := make([]byte, 32)
	_, err := rand.Read(secret)
	require.NoError(t, err)
	return state.Key{ID: id, Secret: secret}
}

func TestBusSealerAuthenticates(t *testing.T) {
	k1 := busKey(t, "k1")
	ring, err := state.NewKeyRing(k1)
	require.NoError(t, err)
	s, err := state.NewBusSealer(ring)
	require.NoError(t, err)
	now := time.UnixMilli(1_700_000_000_123)
	msg, err := s.Seal("ch/a", []byte(`{"k":"ans"}`), now)
	require.NoError(t, err)

	payload, sent, id, err := s.Open("ch/a", msg)
	require.NoError(t, err)
	assert.Equal(t, `{"k":"ans"}`, string(payload))
	assert.True(t, sent.Equal(now))
	assert.Len(t, id, 16, "a 128-bit message id")
	again, _ := s.Seal("ch/a", []byte(`{"k":"ans"}`), now)
	_, _, id2, err := s.Open("ch/a", again)
	require.NoError(t, err)
	assert.NotEqual(t, id, id2, "every message has its own id")

	// Another channel, any altered byte, a truncated message, the bare
	// payload: not authentic.
	_, _, _, err = s.Open("ch/b", msg)
	assert.ErrorIs(t, err, state.ErrBusMessage)
	for i := range msg {
		bad := bytes.Clone(msg)
		bad[i] ^= 1
		_, _, _, err := s.Open("ch/a", bad)
		assert.ErrorIs(t, err, state.ErrBusMessage, "byte %d altered", i)
	}
	for _, bad := range [][]byte{nil, msg[:len(msg)-1], msg[:10], []byte(`{"k":"ans"}`)} {
		_, _, _, err := s.Open("ch/a", bad)
		assert.ErrorIs(t, err, state.ErrBusMessage)
	}

	// The keys are derived under their own purpose: a sealer of another
	// ring (same id, other secret) does not open it.
	other, err := state.NewKeyRing(busKey(t, "k1"))
	require.NoError(t, err)
	so, err := state.NewBusSealer(other)
	require.NoError(t, err)
	_, _, _, err = so.Open("ch/a", msg)
	assert.ErrorIs(t, err, state.ErrBusMessage)
}

// TestBusSealerRotation: a message sealed with a key still in the ring
// opens after the ring is replaced; once the key leaves the ring, it does
// not.
func TestBusSealerRotation(t *testing.T) {
	k1, k2 := busKey(t, "k1"), busKey(t, "k2")
	r1, _ := state.NewKeyRing(k1)
	r21, _ := state.NewKeyRing(k2, k1)
	r2, _ := state.NewKeyRing(k2)
	old, err := state.NewBusSealer(r1)
	require.NoError(t, err)
	s, err := state.NewBusSealer(r1)
	require.NoError(t, err)
	msg, err := old.Seal("c", []byte("x"), time.Now())
	require.NoError(t, err)

	require.NoError(t, s.Codec().Replace(r21))
	_, _, _, err = s.Open("c", msg)
	assert.NoError(t, err, "k1 is still in the ring")
	fresh, err := s.Seal("c", []byte("y"), time.Now())
	require.NoError(t, err)
	_, _, _, err = old.Open("c", fresh)
	assert.ErrorIs(t, err, state.ErrBusMessage, "sealed with k2, which the old ring lacks")

	require.NoError(t, s.Codec().Replace(r2))
	_, _, _, err = s.Open("c", msg)
	assert.ErrorIs(t, err, state.ErrBusMessage, "k1 left the ring")
	_, _, _, err = s.Open("c", fresh)
	assert.NoError(t, err)
}
