package legacy_test

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mrtrkit/mrtrkit/share"
)

// spyBus is what an attacker with access to the bus's store sees: the
// channels subscribed to (PUBSUB CHANNELS) and the keys read (MONITOR).
type spyBus struct {
	*share.LocalBus
	mu       sync.Mutex
	channels []string
	keys     []string
}

func (b *spyBus) Subscribe(channel string, fn func([]byte)) (func(), error) {
	b.mu.Lock()
	b.channels = append(b.channels, channel)
	b.mu.Unlock()
	return b.LocalBus.Subscribe(channel, fn)
}

func (b *spyBus) Get(ctx context.Context, key string) ([]byte, bool, error) {
	b.mu.Lock()
	b.keys = append(b.keys, key)
	b.mu.Unlock()
	return b.LocalBus.Get(ctx, key)
}

// seenWith returns the last key or channel seen with prefix, less it.
func (b *spyBus) seenWith(prefix string) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, l := range [][]string{b.keys, b.channels} {
		for i := len(l) - 1; i >= 0; i-- {
			if rest, ok := strings.CutPrefix(l[i], prefix); ok {
				return rest
			}
		}
	}
	return ""
}

// TestForgedBusMessagesRefused is the review's M4 reproduction over HTTP:
// while a bridged call on replica B waits for the client's answer, someone
// who can publish on the bus (but holds no key of the ring) publishes an
// answer to the leg, a deletion of the session and a cancellation of the
// call, each naming the session's digest and the leg's id exactly. None
// has any effect; the client's real answers, posted to replica A and
// passed to B over the bus, complete the call.
func TestForgedBusMessagesRefused(t *testing.T) {
	bus := &spyBus{LocalBus: share.Local()}
	rs := newReplicas(t, bus, 2)
	a, b := rs.urls[0], rs.urls[1]
	c := initialize(t, a)
	ch := c.open(context.Background(), http.MethodPost, b, `{"jsonrpc":"2.0","id":21,"method":"tools/call","params":{"name":"trio","arguments":{}}}`)
	first := next(t, ch)
	require.True(t, first.isRequest())
	require.Equal(t, "elicitation/create", first.Method)

	digest := bus.seenWith("mrtrkit/legacy/deleted/")
	events := bus.seenWith("mrtrkit/legacy/events/")
	require.NotEmpty(t, digest)
	require.NotEmpty(t, events)
	leg, err := strconv.Unquote(string(first.ID))
	require.NoError(t, err)
	replica, _, _ := strings.Cut(leg, "-")
	forged := map[string]string{
		"mrtrkit/legacy/replica/" + replica: `{"r":"attacker","k":"ans","s":"` + digest + `","id":` + strconv.Quote(string(first.ID)) + `,"res":{"action":"accept","content":{"name":"Mallory"}}}`,
		"mrtrkit/legacy/events/" + events:   `{"r":"attacker","k":"cancel","s":"` + digest + `","id":"21"}`,
	}
	for channel, payload := range forged {
		require.NoError(t, bus.LocalBus.Publish(context.Background(), channel, []byte(payload)))
	}
	require.NoError(t, bus.LocalBus.Publish(context.Background(), "mrtrkit/legacy/events/"+events, []byte(`{"r":"attacker","k":"del","s":"`+digest+`"}`)))
	select {
	case m, ok := <-ch:
		t.Fatalf("a forged bus message moved the call: %+v (open %v)", m, ok)
	case <-time.After(300 * time.Millisecond):
	}

	// The real answers, posted to the other replica, still flow.
	m := first
	for {
		c.answerTo(a, m)
		m = next(t, ch)
		if m.isResponse() {
			break
		}
	}
	require.Nil(t, m.Error)
	assert.Contains(t, string(m.Result), "Ada|drafted|file:///home/ada on B", "the call completed with the client's answers, not the forged one")
	status, _ := c.do(http.MethodPost, b, `{"jsonrpc":"2.0","id":22,"method":"ping"}`)
	assert.Equal(t, http.StatusOK, status, "the forged deletion did not end the session")
}
