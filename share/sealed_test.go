package share_test

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mrtrkit/mrtrkit/share"
	"github.com/mrtrkit/mrtrkit/state"
)

// tap records the raw messages of a channel, as anyone subscribed to the
// store would see them.
type tap struct {
	mu   sync.Mutex
	msgs [][]byte
}

func (t *tap) add(b []byte) {
	t.mu.Lock()
	t.msgs = append(t.msgs, append([]byte(nil), b...))
	t.mu.Unlock()
}

func TestSealedBusDropsForgedStaleAndReplayed(t *testing.T) {
	ring, err := state.NewKeyRing(state.Key{ID: "k1", Secret: []byte("0123456789abcdef0123456789abcdef")})
	require.NoError(t, err)
	sealer, err := state.NewBusSealer(ring)
	require.NoError(t, err)
	raw := share.Local()
	quiet := share.WithSealLogger(slog.New(slog.DiscardHandler))
	pub, sub := share.Sealed(raw, sealer, quiet), share.Sealed(raw, sealer, quiet)
	assert.True(t, sub.Authenticated())

	got := make(chan string, 16)
	stop, err := sub.Subscribe("ch", func(p []byte) { got <- string(p) })
	require.NoError(t, err)
	defer stop()
	var wire tap
	stopTap, err := raw.Subscribe("ch", wire.add)
	require.NoError(t, err)
	defer stopTap()

	ctx := context.Background()
	require.NoError(t, pub.Publish(ctx, "ch", []byte("real")))
	assert.Equal(t, "real", <-got)

	// Forged (unsealed), replayed, and sealed for another channel.
	require.NoError(t, raw.Publish(ctx, "ch", []byte(`{"k":"ans"}`)))
	var captured []byte
	require.Eventually(t, func() bool {
		wire.mu.Lock()
		defer wire.mu.Unlock()
		if len(wire.msgs) > 0 {
			captured = wire.msgs[0]
		}
		return captured != nil
	}, 5*time.Second, time.Millisecond)
	require.NoError(t, raw.Publish(ctx, "ch", captured))
	other, err := sealer.Seal("other", []byte("moved"), time.Now())
	require.NoError(t, err)
	require.NoError(t, raw.Publish(ctx, "ch", other))
	// Stale, and from too far in the future.
	old, err := sealer.Seal("ch", []byte("old"), time.Now().Add(-time.Minute))
	require.NoError(t, err)
	require.NoError(t, raw.Publish(ctx, "ch", old))
	future, err := sealer.Seal("ch", []byte("future"), time.Now().Add(time.Minute))
	require.NoError(t, err)
	require.NoError(t, raw.Publish(ctx, "ch", future))

	require.NoError(t, pub.Publish(ctx, "ch", []byte("after")))
	assert.Equal(t, "after", <-got, "nothing forged, replayed, moved or stale came before")
	assert.Equal(t, uint64(5), sub.Dropped())
	select {
	case p := <-got:
		t.Fatalf("unexpected payload %q", p)
	default:
	}
}
