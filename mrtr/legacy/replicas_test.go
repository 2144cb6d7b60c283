package legacy

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mrtrkit/mrtrkit/mrtr"
	"github.com/mrtrkit/mrtrkit/share"
)

// flakyBus is a shared bus whose store can be taken down: Claim, Put and
// Get then fail, as a Redis that cannot be reached does.
type flakyBus struct {
	*share.LocalBus
	down atomic.Bool
}

var errStoreDown = errors.New("connection refused")

func (b *flakyBus) Claim(ctx context.Context, key string, ttl time.Duration) (bool, error) {
	if b.down.Load() {
		return false, errStoreDown
	}
	return b.LocalBus.Claim(ctx, key, ttl)
}

func (b *flakyBus) Put(ctx context.Context, key string, v []byte, ttl time.Duration) error {
	if b.down.Load() {
		return errStoreDown
	}
	return b.LocalBus.Put(ctx, key, v, ttl)
}

func (b *flakyBus) Get(ctx context.Context, key string) ([]byte, bool, error) {
	if b.down.Load() {
		return nil, false, errStoreDown
	}
	return b.LocalBus.Get(ctx, key)
}

// sharedEnv is an engine over a test server sharing bus.
func sharedEnv(t *testing.T, bus share.Bus) *env {
	t.Helper()
	v := newEnv(t, []mrtr.Option{mrtr.WithShare(bus)}, WithLegTimeout(5*time.Second))
	t.Cleanup(func() { v.e.Close(); v.srv.Close() })
	return v
}

func TestSharedStoreDownFailsClosed(t *testing.T) {
	bus := &flakyBus{LocalBus: share.Local()}
	v := sharedEnv(t, bus)
	s := v.open("alice", capsAll)
	bus.down.Store(true)

	_, err := v.e.Session(s.ID(), caller("alice"))
	require.ErrorIs(t, err, ErrUnavailable, "a session is not served when its deletion cannot be checked")
	assert.ErrorIs(t, err, ErrBusy, "hosts that know ErrBusy answer retry-later")
	assert.NotErrorIs(t, err, ErrUnknownSession, "the client must not be told to start over")

	// A session already in hand: a change that cannot be shared is
	// refused, and nothing changes.
	resp := s.Handle(context.Background(), parse(t, `{"jsonrpc":"2.0","id":1,"method":"logging/setLevel","params":{"level":"debug"}}`), nil)
	require.NotNil(t, resp.Error)
	assert.Equal(t, mrtr.CodeInternalError, resp.Error.Code)
	resp = s.Handle(context.Background(), parse(t, `{"jsonrpc":"2.0","id":2,"method":"resources/subscribe","params":{"uri":"file:///plain.txt"}}`), nil)
	require.NotNil(t, resp.Error)
	s.x.mu.Lock()
	assert.Empty(t, s.x.level)
	assert.Empty(t, s.x.subs)
	s.x.mu.Unlock()

	// A call is served with what this replica knows.
	x := v.runCtx(context.Background(), s, toolCall(3, "sampler", `{}`), nil, func(m wireMsg) {
		if m.isRequest() { // answered on the request's own session
			assert.Nil(t, s.Handle(context.Background(), parse(t, `{"jsonrpc":"2.0","id":`+string(m.ID)+`,"result":`+standard(m).Result+`}`), nil))
		}
	})
	assert.Equal(t, "sampled drafted", decodeTool(t, x.resp).Content[0].Text)

	// Deleting while the store is down ends the session here; the others
	// cannot be told (logged), so they would serve it until it expires,
	// and the host is told to have the client try again.
	err = s.Close()
	require.ErrorIs(t, err, ErrUnavailable)
	assert.ErrorIs(t, err, ErrBusy)
	bus.down.Store(false)
	_, err = v.e.Session(s.ID(), caller("alice"))
	assert.ErrorIs(t, err, ErrUnknownSession)
}

// countingBus counts the answers passed between replicas.
type countingBus struct {
	*share.LocalBus
	forwarded atomic.Int32
}

func (b *countingBus) Publish(ctx context.Context, channel string, payload []byte) error {
	if strings.HasPrefix(channel, "mrtrkit/legacy/replica/") {
		b.forwarded.Add(1)
	}
	return b.LocalBus.Publish(ctx, channel, payload)
}

func TestSharedLegIDsAndBounds(t *testing.T) {
	bus := &countingBus{LocalBus: share.Local()}
	a, b := sharedEnv(t, bus), sharedEnv(t, bus)
	s := a.open("alice", capsAll)

	// The leg id names replica a; an answer posted to b too large to
	// pass on reaches the call as a refusal, at once.
	huge := `{"role":"assistant","content":{"type":"text","text":"` + strings.Repeat("x", MaxForwardedAnswer) + `"},"model":"m"}`
	var legID string
	x := a.runCtx(context.Background(), s, toolCall(1, "sampler", `{}`), nil, func(m wireMsg) {
		if !m.isRequest() {
			return
		}
		legID = string(m.ID)
		sb, err := b.e.Session(s.ID(), caller("alice"))
		require.NoError(t, err)
		defer sb.Release()
		assert.Nil(t, sb.Handle(context.Background(), parse(t, `{"jsonrpc":"2.0","id":`+legID+`,"result":`+huge+`}`), nil))
	})
	assert.Regexp(t, `^"`+a.e.rep.id+`-[0-9a-f]{32}"$`, legID, "the leg id names replica a and 128 random bits")
	r := decodeTool(t, x.resp)
	assert.True(t, r.IsError)
	assert.Contains(t, r.Content[0].Text, "The answer is larger than")

	require.Equal(t, int32(1), bus.forwarded.Load())

	// An answer whose id names no replica, or this one, is not passed on.
	rnd := strings.Repeat("0a", legRandom)
	for _, id := range []string{`7`, `"` + b.e.rep.id + `-` + rnd + `"`, `"zz-` + rnd + `"`, `"` + a.e.rep.id + `-x"`, `"` + a.e.rep.id + `-1"`, `"` + a.e.rep.id + `"`} {
		sb, err := b.e.Session(s.ID(), caller("alice"))
		require.NoError(t, err)
		assert.Nil(t, sb.Handle(context.Background(), parse(t, `{"jsonrpc":"2.0","id":`+id+`,"result":{}}`), nil))
		sb.Release()
		assert.Equal(t, int32(1), bus.forwarded.Load(), "id %s was passed on", id)
	}
	sb, err := b.e.Session(s.ID(), caller("alice"))
	require.NoError(t, err)
	sb.Handle(context.Background(), parse(t, `{"jsonrpc":"2.0","id":"`+a.e.rep.id+`-`+rnd+`","result":{}}`), nil)
	sb.Release()
	assert.Equal(t, int32(2), bus.forwarded.Load(), "an id naming replica a is passed on to it")
	assert.Equal(t, a.e.rep.id, replicaOf(`"`+a.e.rep.id+`-`+rnd+`"`))
}

func TestNoBusNoReplicas(t *testing.T) {
	v := newEnv(t, nil)
	assert.Nil(t, v.e.rep, "without WithShare the engine stays in process")
	assert.NoError(t, v.e.Close())
	s := v.open("alice", capsAll)
	x := v.run(s, toolCall(1, "sampler", `{}`), standard)
	assert.Equal(t, []int64{1}, legIDs(t, x.requests()), "ids are integers counting from 1")
}

// BenchmarkSharedBridgedCall is one three-round bridged call in process
// (no HTTP): without a bus, with a bus and the answers handled by the
// call's own engine, and with the answers handled by another engine
// sharing the bus, as when a balancer sends them to another replica.
func BenchmarkSharedBridgedCall(b *testing.B) {
	for _, tc := range []struct {
		name  string
		bus   bool
		other bool
	}{{"no-bus", false, false}, {"local-bus/same-replica", true, false}, {"local-bus/other-replica", true, true}} {
		b.Run(tc.name, func(b *testing.B) {
			var opts []mrtr.Option
			if tc.bus {
				opts = append(opts, mrtr.WithShare(share.Local())) // one bus for both
			}
			v, w := newEnv(b, opts), newEnv(b, opts)
			defer v.e.Close()
			defer w.e.Close()
			answerer := v
			if tc.other {
				answerer = w
			}
			s := v.open("alice", capsAll)
			for b.Loop() {
				x := v.runCtx(context.Background(), s, toolCall(1, "trio", `{}`), nil, func(m wireMsg) {
					if m.isRequest() {
						answerer.answer(s, m.ID, standard(m))
					}
				})
				if r := decodeTool(b, x.resp); r.IsError {
					b.Fatal(r.Content[0].Text)
				}
			}
		})
	}
}

func TestPendingLegsBounded(t *testing.T) {
	v := newEnv(t, nil)
	const perCall = 100
	require.NoError(t, v.srv.AddTool(mrtr.Tool{Name: "many", InputSchema: []byte(`{"type":"object"}`)}, mrtr.HandlerFunc(func(_ context.Context, req *mrtr.Request) (mrtr.Result, error) {
		ir := &mrtr.InputRequired{Requests: map[string]mrtr.InputRequest{}}
		for i := range perCall {
			ir.Requests["q"+strconv.Itoa(i)] = &mrtr.RootsRequest{}
		}
		return ir, nil
	})))
	s := v.open("alice", capsAll)
	// Two calls whose questions stay unanswered...
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{}, 2)
	for id := range 2 {
		go func() {
			s.Handle(ctx, parse(t, toolCall(100+id, "many", `{}`)), newPipe())
			done <- struct{}{}
		}()
	}
	pending := func() int {
		s.x.mu.Lock()
		defer s.x.mu.Unlock()
		return len(s.x.legs)
	}
	for i := 0; pending() < 2*perCall; i++ {
		require.Less(t, i, 1000, "the first two calls never sent their questions")
		time.Sleep(10 * time.Millisecond)
	}
	// ...and a third one reaches the bound of the session.
	x := v.run(s, toolCall(1, "many", `{}`), nil)
	r := decodeTool(t, x.resp)
	assert.True(t, r.IsError)
	assert.Contains(t, r.Content[0].Text, "Too many of the server's requests wait for answers")
	assert.Len(t, x.requests(), maxPendingLegs-2*perCall, "no request past the bound is sent")
	assert.Len(t, x.notifications("notifications/cancelled"), maxPendingLegs-2*perCall, "the requests sent are withdrawn")
	assert.Equal(t, 2*perCall, pending())
	cancel()
	<-done
	<-done
	assert.Zero(t, pending())
}
