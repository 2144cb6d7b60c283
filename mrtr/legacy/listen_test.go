package legacy

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mrtrkit/mrtrkit/discover"
	"github.com/mrtrkit/mrtrkit/internal/testkit"
	"github.com/mrtrkit/mrtrkit/mrtr"
)

// listening starts s.Listen on a pipe and returns the pipe, a channel
// that receives Listen's return and the cancel of its context.
func listening(t *testing.T, s *Session) (*pipe, chan error, context.CancelFunc) {
	t.Helper()
	out := newPipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		done <- s.Listen(ctx, out)
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-finished:
		case <-time.After(2 * time.Second):
			t.Error("a stream outlived its test")
		}
	})
	return out, done, cancel
}

// await repeats poke until the pipe carries a message, and returns it.
func await(t *testing.T, out *pipe, poke func(i int)) json.RawMessage {
	t.Helper()
	for i := 0; i < 200; i++ {
		poke(i)
		select {
		case m := <-out.ch:
			return m
		case <-time.After(10 * time.Millisecond):
		}
	}
	t.Fatal("the stream carried nothing")
	return nil
}

// quietFor asserts that the pipe carries nothing for d.
func quietFor(t *testing.T, out *pipe, d time.Duration) {
	t.Helper()
	select {
	case m := <-out.ch:
		t.Errorf("the stream carried %s", m)
	case <-time.After(d):
	}
}

func drain(out *pipe) {
	for {
		select {
		case <-out.ch:
		default:
			return
		}
	}
}

func TestListenCarriesListChangesInTheEraShape(t *testing.T) {
	v := newEnv(t, nil)
	s := v.open("", capsAll)
	out, _, _ := listening(t, s)
	m := await(t, out, func(i int) {
		require.NoError(t, v.srv.AddTool(mrtr.Tool{Name: fmt.Sprintf("new%d", i), InputSchema: json.RawMessage(`{"type":"object"}`)}, mrtr.HandlerFunc(func(context.Context, *mrtr.Request) (mrtr.Result, error) {
			return textResult("x"), nil
		})))
	})
	assert.JSONEq(t, `{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`, string(m), "no _meta, no acknowledgement")
	drain(out)

	v.srv.NotifyListChanged(false, true, true)
	got := map[string]bool{}
	for range 2 {
		select {
		case m := <-out.ch:
			assertNoModern(t, m)
			got[decodeWire(t, m).Method] = true
		case <-time.After(2 * time.Second):
			t.Fatal("a list change was not carried")
		}
	}
	assert.Equal(t, map[string]bool{"notifications/prompts/list_changed": true, "notifications/resources/list_changed": true}, got)
}

func TestListenCarriesSubscribedUpdates(t *testing.T) {
	v := newEnv(t, nil)
	s := v.open("", capsAll)
	out, _, _ := listening(t, s)
	ok := func(body string) {
		t.Helper()
		r := s.Handle(context.Background(), parse(t, body), nil)
		require.Nil(t, r.Error, body)
		assert.Equal(t, `{}`, string(r.Result))
	}
	ok(`{"jsonrpc":"2.0","id":1,"method":"resources/subscribe","params":{"uri":"file:///plain.txt"}}`)
	m := await(t, out, func(int) { v.srv.NotifyResourceUpdated("file:///plain.txt") })
	assert.JSONEq(t, `{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"file:///plain.txt"}}`, string(m), "no subscriptionId")
	time.Sleep(20 * time.Millisecond)
	drain(out)

	// Other resources are not carried.
	v.srv.NotifyResourceUpdated("file:///wiz.txt")
	quietFor(t, out, 100*time.Millisecond)

	// Subscriptions are per session: another session's stream does not
	// carry this one's.
	other := v.open("", capsAll)
	otherOut, _, _ := listening(t, other)
	ok(`{"jsonrpc":"2.0","id":2,"method":"resources/subscribe","params":{"uri":"file:///wiz.txt"}}`)
	await(t, out, func(int) { v.srv.NotifyResourceUpdated("file:///wiz.txt") })
	quietFor(t, otherOut, 50*time.Millisecond)

	// Unsubscribed: no longer carried.
	ok(`{"jsonrpc":"2.0","id":3,"method":"resources/unsubscribe","params":{"uri":"file:///plain.txt"}}`)
	ok(`{"jsonrpc":"2.0","id":4,"method":"resources/unsubscribe","params":{"uri":"file:///wiz.txt"}}`)
	time.Sleep(50 * time.Millisecond)
	drain(out)
	v.srv.NotifyResourceUpdated("file:///plain.txt")
	v.srv.NotifyResourceUpdated("file:///wiz.txt")
	quietFor(t, out, 100*time.Millisecond)
}

func TestSubscriptionsAreBounded(t *testing.T) {
	v := newEnv(t, nil)
	s := v.open("", capsAll)
	for i := range maxSubscriptions {
		r := s.Handle(context.Background(), parse(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"resources/subscribe","params":{"uri":"file:///r%d"}}`, i)), nil)
		require.Nil(t, r.Error)
	}
	r := s.Handle(context.Background(), parse(t, `{"jsonrpc":"2.0","id":1,"method":"resources/subscribe","params":{"uri":"file:///one-more"}}`), nil)
	require.NotNil(t, r.Error)
	assert.Equal(t, mrtr.CodeInvalidParams, r.Error.Code)
	r = s.Handle(context.Background(), parse(t, `{"jsonrpc":"2.0","id":1,"method":"resources/subscribe","params":{"uri":"file:///r0"}}`), nil)
	assert.Nil(t, r.Error, "subscribing again to a subscribed resource is fine")
}

// A session has one stream: a new Listen ends the previous one, and the
// notifications go to the new one only.
func TestSecondListenReplacesTheFirst(t *testing.T) {
	v := newEnv(t, nil)
	s := v.open("", capsAll)
	first, firstDone, _ := listening(t, s)
	require.Eventually(t, func() bool { return !s.x.idle() }, 2*time.Second, time.Millisecond)

	again, err := v.e.Session(s.ID(), nil)
	require.NoError(t, err)
	second, _, _ := listening(t, again)
	select {
	case err := <-firstDone:
		assert.NoError(t, err)
	case <-time.After(2 * time.Second):
		t.Fatal("the first stream was not ended")
	}
	await(t, second, func(int) { v.srv.NotifyListChanged(true, false, false) })
	quietFor(t, first, 50*time.Millisecond)
	assert.False(t, s.x.idle(), "the second stream still holds the session")
}

func TestListenEnds(t *testing.T) {
	// With nothing to listen to, the stream stays open and idle until the
	// client goes.
	srv, err := mrtr.NewServer(discover.Description{Server: discover.Implementation{Name: "p", Version: "1"}, LegacyVersions: []string{"2025-11-25"}},
		mrtr.WithCodec(testkit.Codec(t)), mrtr.WithLogger(quiet))
	require.NoError(t, err)
	v := &env{t: t, srv: srv, e: newEngine(t, srv), b: &book{}}
	s := v.open("", capsNone)
	out, done, cancel := listening(t, s)
	quietFor(t, out, 50*time.Millisecond)
	select {
	case <-done:
		t.Fatal("an idle stream ended by itself")
	default:
	}
	cancel()
	select {
	case err := <-done:
		assert.NoError(t, err)
	case <-time.After(2 * time.Second):
		t.Fatal("the stream outlived its context")
	}

	// The server closing ends the stream.
	v2 := newEnv(t, nil)
	s2 := v2.open("", capsAll)
	_, done2, _ := listening(t, s2)
	require.Eventually(t, func() bool { return !s2.x.idle() }, 2*time.Second, time.Millisecond)
	time.Sleep(20 * time.Millisecond)
	require.NoError(t, v2.srv.Close())
	select {
	case err := <-done2:
		assert.NoError(t, err)
	case <-time.After(2 * time.Second):
		t.Fatal("the stream outlived the server")
	}
	noLeftovers(t)
}

// BUG: resources/subscribe answers {} and then restarts the session's
// listener with the new set; until the new in-process listen is
// registered, nothing reaches the stream. An update posted right after
// the subscription was acknowledged is lost (49 times out of 50 in a
// probe), as is any list change in that window.
func TestUpdateRightAfterSubscribeArrives(t *testing.T) {
	v := newEnv(t, nil)
	s := v.open("", capsAll)
	out, _, _ := listening(t, s)
	await(t, out, func(int) { v.srv.NotifyListChanged(true, false, false) }) // the stream is live
	time.Sleep(10 * time.Millisecond)
	drain(out)

	r := s.Handle(context.Background(), parse(t, `{"jsonrpc":"2.0","id":1,"method":"resources/subscribe","params":{"uri":"file:///plain.txt"}}`), nil)
	require.Nil(t, r.Error)
	v.srv.NotifyResourceUpdated("file:///plain.txt")
	select {
	case m := <-out.ch:
		assert.Contains(t, string(m), "notifications/resources/updated")
	case <-time.After(500 * time.Millisecond):
		t.Error("the update of a resource subscribed to was lost")
	}
}
