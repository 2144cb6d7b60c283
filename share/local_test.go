package share

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestLocalPublishSubscribe(t *testing.T) {
	b := Local()
	defer b.Close()
	got := make(chan string, 10)
	stop, err := b.Subscribe("a", func(p []byte) { got <- string(p) })
	require.NoError(t, err)
	other, _ := b.Subscribe("b", func(p []byte) { got <- "b:" + string(p) })
	defer other()
	ctx := context.Background()
	for _, m := range []string{"1", "2", "3"} {
		require.NoError(t, b.Publish(ctx, "a", []byte(m)))
	}
	for _, want := range []string{"1", "2", "3"} {
		select {
		case g := <-got:
			require.Equalf(t, want, g, "got %q, want %q (order)", g, want)
		case <-time.After(2 * time.Second):
			require.FailNow(t, "event not delivered")
		}
	}
	stop()
	stop() // twice is fine
	b.Publish(ctx, "a", []byte("4"))
	select {
	case g := <-got:
		require.FailNow(t, fmt.Sprintf("delivered after stop: %q", g))
	case <-time.After(50 * time.Millisecond):
	}
}

func TestLocalPublishCopiesPayload(t *testing.T) {
	b := Local()
	got := make(chan string, 1)
	b.Subscribe("c", func(p []byte) { got <- string(p) })
	p := []byte("abc")
	b.Publish(context.Background(), "c", p)
	p[0] = 'x'
	if g := <-got; g != "abc" {
		require.FailNow(t, fmt.Sprintf("payload aliased: %q", g))
	}
}

func TestLocalStopFromCallback(t *testing.T) {
	b := Local()
	var stop func()
	var n atomic.Int32
	done := make(chan struct{})
	stop, _ = b.Subscribe("c", func([]byte) {
		if n.Add(1) == 1 {
			stop()
			close(done)
		}
	})
	for range 5 {
		b.Publish(context.Background(), "c", nil)
	}
	<-done
	time.Sleep(20 * time.Millisecond)
	require.EqualValuesf(t, 1, n.Load(), "fn called %d times after stopping itself", n.Load())
}

func TestLocalClaim(t *testing.T) {
	now := time.Unix(1000, 0)
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	b := Local(WithClock(clock), WithMaxClaims(2))
	ctx := context.Background()
	if first, err := b.Claim(ctx, "k", time.Second); !first || err != nil {
		require.FailNow(t, fmt.Sprintf("first claim: %v %v", first, err))
	}
	if first, err := b.Claim(ctx, "k", time.Second); first || err != nil {
		require.FailNow(t, fmt.Sprintf("second claim: %v %v", first, err))
	}
	if _, err := b.Claim(ctx, "z", 0); !errors.Is(err, ErrBadTTL) {
		require.FailNow(t, fmt.Sprintf("zero ttl: %v", err))
	}
	b.Claim(ctx, "k2", 5*time.Second)
	if _, err := b.Claim(ctx, "k3", time.Second); !errors.Is(err, ErrFull) {
		require.FailNow(t, fmt.Sprintf("full: %v", err))
	}
	mu.Lock()
	now = now.Add(time.Second)
	mu.Unlock()
	if got := b.Claims(); got != 1 {
		require.FailNow(t, fmt.Sprintf("after expiry %d claims, want 1", got))
	}
	if first, err := b.Claim(ctx, "k", time.Second); !first || err != nil {
		require.FailNow(t, fmt.Sprintf("claim after expiry: %v %v", first, err))
	}
}

func TestLocalClaimConcurrent(t *testing.T) {
	b := Local()
	var wins atomic.Int32
	var wg sync.WaitGroup
	for range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if first, _ := b.Claim(context.Background(), "once", time.Minute); first {
				wins.Add(1)
			}
		}()
	}
	wg.Wait()
	require.EqualValuesf(t, 1, wins.Load(), "%d claims won, want 1", wins.Load())
}

func TestLocalPruneManyExpiries(t *testing.T) {
	now := time.Unix(0, 0)
	b := Local(WithClock(func() time.Time { return now }))
	for i := range 1000 {
		b.Claim(context.Background(), fmt.Sprint(i), time.Duration(1000-i)*time.Millisecond)
	}
	now = now.Add(500 * time.Millisecond)
	if got := b.Claims(); got != 500 {
		require.FailNow(t, fmt.Sprintf("%d claims live, want 500", got))
	}
}

func TestLocalClosed(t *testing.T) {
	b := Local()
	b.Close()
	if err := b.Publish(context.Background(), "a", nil); !errors.Is(err, ErrClosed) {
		require.FailNow(t, fmt.Sprint(err))
	}
	if _, err := b.Subscribe("a", func([]byte) {}); !errors.Is(err, ErrClosed) {
		require.FailNow(t, fmt.Sprint(err))
	}
	if _, err := b.Claim(context.Background(), "a", time.Second); !errors.Is(err, ErrClosed) {
		require.FailNow(t, fmt.Sprint(err))
	}
}

func TestLocalPutGet(t *testing.T) {
	var mu sync.Mutex
	now := time.Unix(0, 0)
	b := Local(WithMaxClaims(2), WithClock(func() time.Time { mu.Lock(); defer mu.Unlock(); return now }))
	ctx := context.Background()
	if _, found, err := b.Get(ctx, "r"); found || err != nil {
		require.FailNow(t, fmt.Sprintf("get of nothing: %v %v", found, err))
	}
	val := []byte("one")
	require.NoError(t, b.Put(ctx, "r", val, time.Second))
	val[0] = 'X' // the Bus keeps its own copy
	got, found, err := b.Get(ctx, "r")
	require.Falsef(t, string(got) != "one" || !found || err != nil, "get: %q %v %v", got, found, err)
	got[0] = 'Y' // and hands out copies
	require.NoError(t, b.Put(ctx, "r", []byte("two"), 3*time.Second))
	if got, _, _ := b.Get(ctx, "r"); string(got) != "two" {
		require.FailNow(t, fmt.Sprintf("the last put wins: %q", got))
	}
	// Claims and records share one key space: a recorded key is claimed
	// already, and a claim reads as "1".
	if first, _ := b.Claim(ctx, "r", time.Second); first {
		require.FailNow(t, "claimed a recorded key")
	}
	if first, _ := b.Claim(ctx, "c", time.Second); !first {
		require.FailNow(t, "claim refused")
	}
	if got, found, _ := b.Get(ctx, "c"); string(got) != "1" || !found {
		require.FailNow(t, fmt.Sprintf("claim reads %q %v", got, found))
	}
	if err := b.Put(ctx, "new", nil, time.Second); !errors.Is(err, ErrFull) {
		require.FailNow(t, fmt.Sprintf("a third key: %v", err))
	}
	require.NoError(t, b.Put(ctx, "r", []byte("three"), 2*time.Second), "a live key is replaced even when full")
	if err := b.Put(ctx, "r", nil, 0); !errors.Is(err, ErrBadTTL) {
		require.FailNow(t, fmt.Sprintf("zero ttl: %v", err))
	}
	mu.Lock()
	now = now.Add(2 * time.Second)
	mu.Unlock()
	if _, found, _ := b.Get(ctx, "r"); found {
		require.FailNow(t, "an expired record is found")
	}
	require.EqualValuesf(t, 0, b.Claims(), "%d keys live after expiry", b.Claims())
	b.Close()
	if err := b.Put(ctx, "r", nil, time.Second); !errors.Is(err, ErrClosed) {
		require.FailNow(t, fmt.Sprint(err))
	}
	if _, _, err := b.Get(ctx, "r"); !errors.Is(err, ErrClosed) {
		require.FailNow(t, fmt.Sprint(err))
	}
}

func TestLocalPutAgainBoundsHeap(t *testing.T) {
	b := Local()
	ctx := context.Background()
	for i := range 10000 {
		require.NoError(t, b.Put(ctx, "same", []byte(fmt.Sprint(i)), time.Duration(i+1)*time.Minute))
	}
	b.mu.Lock()
	n := len(b.heap)
	b.mu.Unlock()
	require.Falsef(t, n > 2*1+64, "the expiry heap holds %d entries for one key", n)
	if got, _, _ := b.Get(ctx, "same"); string(got) != "9999" {
		require.FailNow(t, fmt.Sprintf("got %q", got))
	}
}

func BenchmarkLocalClaim(b *testing.B) {
	bus := Local()
	ctx := context.Background()
	i := 0
	for b.Loop() {
		i++
		bus.Claim(ctx, fmt.Sprint(i), time.Minute)
	}
}
