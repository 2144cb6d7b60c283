package redisshare_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	redisshare "github.com/mrtrkit/mrtrkit/redis"
	"github.com/mrtrkit/mrtrkit/share"
)

func TestPublishSubscribe(t *testing.T) {
	srv := startRedis(t)
	a := redisshare.New(newClient(t, srv), redisshare.WithPrefix("test/"))
	b := redisshare.New(newClient(t, srv), redisshare.WithPrefix("test/"))
	got := make(chan string, 10)
	stop, err := b.Subscribe("ch", func(p []byte) { got <- string(p) })
	require.NoError(t, err)
	ctx := context.Background()
	for i := range 3 {
		require.NoError(t, a.Publish(ctx, "ch", []byte(fmt.Sprint(i))))
	}
	for i := range 3 {
		select {
		case g := <-got:
			assert.Equal(t, fmt.Sprint(i), g, "in order")
		case <-time.After(5 * time.Second):
			t.Fatal("not delivered")
		}
	}
	stop()
	stop()
	require.NoError(t, a.Publish(ctx, "ch", []byte("late")))
	select {
	case g := <-got:
		t.Fatalf("delivered after stop: %q", g)
	case <-time.After(100 * time.Millisecond):
	}
}

func TestClaim(t *testing.T) {
	srv := startRedis(t)
	a := redisshare.New(newClient(t, srv))
	b := redisshare.New(newClient(t, srv))
	ctx := context.Background()
	first, err := a.Claim(ctx, "k", 150*time.Millisecond)
	require.NoError(t, err)
	assert.True(t, first)
	first, err = b.Claim(ctx, "k", time.Minute)
	require.NoError(t, err)
	assert.False(t, first, "the other replica sees the claim")
	_, err = a.Claim(ctx, "z", 0)
	assert.ErrorIs(t, err, share.ErrBadTTL)
	time.Sleep(300 * time.Millisecond)
	first, err = b.Claim(ctx, "k", time.Minute)
	require.NoError(t, err)
	assert.True(t, first, "an expired claim can be made again")
}

func TestPutGet(t *testing.T) {
	srv := startRedis(t)
	a := redisshare.New(newClient(t, srv), redisshare.WithPrefix("p/"))
	b := redisshare.New(newClient(t, srv), redisshare.WithPrefix("p/"))
	ctx := context.Background()
	_, found, err := b.Get(ctx, "rec")
	require.NoError(t, err)
	assert.False(t, found)
	require.NoError(t, a.Put(ctx, "rec", []byte(`{"l":"debug"}`), 150*time.Millisecond))
	v, found, err := b.Get(ctx, "rec")
	require.NoError(t, err)
	assert.True(t, found)
	assert.Equal(t, `{"l":"debug"}`, string(v), "the other replica reads the record")
	require.NoError(t, b.Put(ctx, "rec", []byte("two"), time.Minute))
	v, _, _ = a.Get(ctx, "rec")
	assert.Equal(t, "two", string(v), "the last put wins")
	assert.ErrorIs(t, a.Put(ctx, "rec", nil, 0), share.ErrBadTTL)

	first, err := a.Claim(ctx, "claimed", time.Minute)
	require.NoError(t, err)
	require.True(t, first)
	v, found, err = b.Get(ctx, "claimed")
	require.NoError(t, err)
	assert.True(t, found, "a claim is found by Get")
	assert.Equal(t, "1", string(v))

	require.NoError(t, a.Put(ctx, "short", []byte("x"), 100*time.Millisecond))
	time.Sleep(250 * time.Millisecond)
	_, found, err = b.Get(ctx, "short")
	require.NoError(t, err)
	assert.False(t, found, "an expired record is not found")
}

func TestClaimConcurrent(t *testing.T) {
	srv := startRedis(t)
	buses := []*redisshare.Bus{redisshare.New(newClient(t, srv)), redisshare.New(newClient(t, srv))}
	var wins atomic.Int32
	done := make(chan struct{})
	for i := range 20 {
		go func() {
			defer func() { done <- struct{}{} }()
			if ok, err := buses[i%2].Claim(context.Background(), "race", time.Minute); err == nil && ok {
				wins.Add(1)
			}
		}()
	}
	for range 20 {
		<-done
	}
	assert.Equal(t, int32(1), wins.Load())
}

func TestRedisDown(t *testing.T) {
	srv := startRedis(t)
	b := redisshare.New(newClient(t, srv), redisshare.WithSubscribeTimeout(500*time.Millisecond))
	srv.Stop()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	_, err := b.Claim(ctx, "k", time.Minute)
	require.Error(t, err)
	assert.True(t, strings.HasPrefix(err.Error(), "redisshare: claim:"), err.Error())
	require.Error(t, b.Publish(ctx, "ch", nil))
	require.Error(t, b.Put(ctx, "k", nil, time.Minute))
	_, found, err := b.Get(ctx, "k")
	require.Error(t, err, "a store that cannot answer is not a missing record")
	assert.False(t, found)
	_, err = b.Subscribe("ch", func([]byte) {})
	require.Error(t, err)
}
