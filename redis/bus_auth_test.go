package redisshare_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mrtrkit/mrtrkit/discover"
	"github.com/mrtrkit/mrtrkit/mrtr"
	"github.com/mrtrkit/mrtrkit/mrtr/mrtrtest"
	redisshare "github.com/mrtrkit/mrtrkit/redis"
	"github.com/mrtrkit/mrtrkit/share"
	"github.com/mrtrkit/mrtrkit/state"
)

// TestForgedLegacyMessagesRefusedOverRedis is the review's M4 reproduction
// against a real redis-server: with only Redis access (KEYS and PUBSUB
// CHANNELS to learn the names, PUBLISH to forge), an answer to a pending
// elicitation, a cancellation and a deletion of the session are published
// while a bridged call waits on replica B. None has any effect; the
// client's real answers, posted to replica A, complete the call.
func TestForgedLegacyMessagesRefusedOverRedis(t *testing.T) {
	rs := startRedis(t)
	held := make(chan error, 4)
	a, b := legacyReplica(t, rs.Addr, held), legacyReplica(t, rs.Addr, held)
	s := openSession(t, a)
	// A subscription gives the session a record in Redis, named by its
	// digest, for the attacker to find.
	status, _ := s.do(http.MethodPost, a, `{"jsonrpc":"2.0","id":1,"method":"resources/subscribe","params":{"uri":"file:///watched"}}`)
	require.Equal(t, http.StatusOK, status)

	_, ch := s.send(context.Background(), http.MethodPost, b, `{"jsonrpc":"2.0","id":21,"method":"tools/call","params":{"name":"trio","arguments":{}}}`)
	first := take(t, ch)
	require.Equal(t, "elicitation/create", first.Method)

	attacker := redis.NewClient(&redis.Options{Addr: rs.Addr})
	defer attacker.Close()
	ctx := context.Background()
	records, err := attacker.Keys(ctx, "mrtrkit/legacy/record/*").Result()
	require.NoError(t, err)
	require.Len(t, records, 1)
	digest := strings.TrimPrefix(records[0], "mrtrkit/legacy/record/")
	events, err := attacker.PubSubChannels(ctx, "mrtrkit/legacy/events/*").Result()
	require.NoError(t, err)
	require.NotEmpty(t, events)
	leg, err := strconv.Unquote(string(first.ID))
	require.NoError(t, err)
	replica, _, _ := strings.Cut(leg, "-")
	inbox := "mrtrkit/legacy/replica/" + replica
	for channel, payload := range map[string]string{
		inbox:     `{"r":"attacker","k":"ans","s":"` + digest + `","id":` + strconv.Quote(string(first.ID)) + `,"res":{"action":"accept","content":{"name":"Mallory"}}}`,
		events[0]: `{"r":"attacker","k":"cancel","s":"` + digest + `","id":"21"}`,
	} {
		n, err := attacker.Publish(ctx, channel, payload).Result()
		require.NoError(t, err)
		require.Positive(t, n, "a replica listens on %s", channel)
	}
	require.NoError(t, attacker.Publish(ctx, events[0], `{"r":"attacker","k":"del","s":"`+digest+`"}`).Err())
	select {
	case m, ok := <-ch:
		t.Fatalf("a forged message moved the call: %+v (open %v)", m, ok)
	case <-time.After(500 * time.Millisecond):
	}

	m := first
	for m.Method != "" {
		var result string
		switch m.Method {
		case "elicitation/create":
			result = `{"action":"accept","content":{"name":"Ada"}}`
		case "sampling/createMessage":
			result = `{"role":"assistant","content":{"type":"text","text":"drafted"},"model":"m"}`
		default:
			result = `{"roots":[{"uri":"file:///home/ada"}]}`
		}
		status, _ := s.do(http.MethodPost, a, `{"jsonrpc":"2.0","id":`+string(m.ID)+`,"result":`+result+`}`)
		require.Equal(t, http.StatusAccepted, status)
		m = take(t, ch)
	}
	assert.Contains(t, string(m.Result), "Ada|drafted|file:///home/ada", "the real answers, through Redis, completed the call")
	status, _ = s.do(http.MethodPost, b, `{"jsonrpc":"2.0","id":22,"method":"ping"}`)
	assert.Equal(t, http.StatusOK, status, "the forged deletion did not end the session")
}

// sealedReplica is a replica whose whole bus is sealed (share.Sealed):
// the Server's change events too, not only the legacy Engine's.
func sealedReplica(t *testing.T, rs *redisServer) (*mrtr.Server, *share.SealedBus) {
	t.Helper()
	desc := discover.Description{Server: discover.Implementation{Name: "replicas", Version: "1.0.0"}}
	desc.Capabilities.Tools = &discover.ListChanged{ListChanged: true}
	client := redis.NewClient(&redis.Options{Addr: rs.Addr, MaxRetries: -1, DialTimeout: 500 * time.Millisecond})
	t.Cleanup(func() { client.Close() })
	sealer, err := state.NewBusSealer(mrtrtest.ReplicaKeyRing(t))
	require.NoError(t, err)
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	bus := share.Sealed(redisshare.New(client), sealer, share.WithSealLogger(quiet))
	s, err := mrtr.NewServer(desc, mrtr.WithCodec(mrtrtest.ReplicaCodec(t)), mrtr.WithAudience("https://mcp.example.test/mcp"),
		mrtr.WithLogger(quiet), mrtr.WithShare(bus))
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	return s, bus
}

// TestSealedBusRefusesForgedChangesOverRedis: with the bus sealed, a
// list-changed event published straight to Redis reaches no listener and
// is counted; a real change from the other replica does.
func TestSealedBusRefusesForgedChangesOverRedis(t *testing.T) {
	rs := startRedis(t)
	a, _ := sealedReplica(t, rs)
	b, busB := sealedReplica(t, rs)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	onB := listen(t, ctx, b)
	drain(onB)

	attacker := redis.NewClient(&redis.Options{Addr: rs.Addr})
	defer attacker.Close()
	n, err := attacker.Publish(ctx, "mrtrkit/changes/https://mcp.example.test/mcp", `{"r":"attacker","c":1}`).Result()
	require.NoError(t, err)
	require.Equal(t, int64(2), n, "both replicas listen")
	quiet(t, onB)
	assert.Equal(t, uint64(1), busB.Dropped())

	a.NotifyListChanged(true, false, false)
	assert.Equal(t, "notifications/tools/list_changed", next(t, onB)["method"])
}
