package redisshare_test

// In the timed loops of BenchmarkClaim and BenchmarkPublishDeliver each
// check is a plain if, and testify is called only when the check fails:
// require calls b.Helper, which walks the stack, and boxes its arguments on
// every call, which would count in ns/op and allocs/op. BenchmarkTwoRoundCall
// uses the tests' helpers, whose checks cost little next to its Redis round
// trips.

import (
	"context"
	"strconv"
	"testing"
	"time"

	redisshare "github.com/mrtrkit/mrtrkit/redis"
	"github.com/mrtrkit/mrtrkit/share"
	"github.com/stretchr/testify/require"
)

// BenchmarkClaim is the cost OnceOnly adds to a round: one SET NX PX.
func BenchmarkClaim(b *testing.B) {
	srv := startRedis(b)
	bus := redisshare.New(newClient(b, srv))
	ctx := context.Background()
	i := 0
	for b.Loop() {
		i++
		if _, err := bus.Claim(ctx, "bench/"+strconv.Itoa(i), time.Minute); err != nil {
			require.NoError(b, err)
		}
	}
}

// BenchmarkPublishDeliver is the time from a publish on one replica to
// its delivery on another, one event at a time.
func BenchmarkPublishDeliver(b *testing.B) {
	srv := startRedis(b)
	pub := redisshare.New(newClient(b, srv))
	sub := redisshare.New(newClient(b, srv))
	got := make(chan struct{}, 1)
	stop, err := sub.Subscribe("bench", func([]byte) { got <- struct{}{} })
	require.NoError(b, err)
	defer stop()
	ctx := context.Background()
	payload := []byte(`{"r":"0123456789abcdef01234567","c":1}`)
	for b.Loop() {
		if err := pub.Publish(ctx, "bench", payload); err != nil {
			require.NoError(b, err)
		}
		<-got
	}
}

// BenchmarkLocalPublishDeliver is the same round trip in process, for
// comparison.
func BenchmarkLocalPublishDeliver(b *testing.B) {
	bus := share.Local()
	got := make(chan struct{}, 1)
	stop, _ := bus.Subscribe("bench", func([]byte) { got <- struct{}{} })
	defer stop()
	ctx := context.Background()
	for b.Loop() {
		bus.Publish(ctx, "bench", nil)
		<-got
	}
}

// BenchmarkTwoRoundCall serves both rounds of a call on a replica sharing
// a Redis, with and without OnceOnly: the difference is what the
// single-use check costs a round.
func BenchmarkTwoRoundCall(b *testing.B) {
	srv := startRedis(b)
	s := replica(b, srv)
	for _, tool := range []string{"plain", "once"} {
		b.Run(tool, func(b *testing.B) {
			for b.Loop() {
				complete(b, call(b, s, tool, stateOf(b, call(b, s, tool, ""))))
			}
		})
	}
}
