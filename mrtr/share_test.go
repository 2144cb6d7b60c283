package mrtr_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mrtrkit/mrtrkit/mrtr"
	"github.com/mrtrkit/mrtrkit/share"
)

// quiet requires that no notification arrives for a short while.
func quiet(t *testing.T, notes <-chan obj) {
	t.Helper()
	select {
	case n := <-notes:
		t.Fatalf("unexpected notification %v", n)
	case <-time.After(100 * time.Millisecond):
	}
}

func TestShareReachesOtherReplicas(t *testing.T) {
	bus := share.Local()
	defer bus.Close()
	a := newFixtureDesc(t, listenDesc(), mrtr.WithShare(bus))
	b := newFixtureDesc(t, listenDesc(), mrtr.WithShare(bus))
	defer a.srv.Close()
	defer b.srv.Close()
	for _, f := range []*fixture{a, b} {
		f.addTool("t", noopTool)
		require.NoError(t, f.srv.AddResource(mrtr.Resource{URI: "file:///a", Name: "a"}, mrtr.HandlerFunc(func(context.Context, *mrtr.Request) (mrtr.Result, error) {
			return &mrtr.ReadResourceResult{}, nil
		})))
	}
	assert.Equal(t, a.srv.Audience(), b.srv.Audience(), "replicas of one server share its changes channel")
	time.Sleep(50 * time.Millisecond) // the registrations' own events pass

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	filter := obj{"toolsListChanged": true, "resourceSubscriptions": []any{"file:///a"}}
	onA, _ := openListen(t, a, ctx, filter)
	onB, _ := openListen(t, b, ctx, filter)
	next(t, onA) // acknowledgements
	next(t, onB)

	a.srv.NotifyListChanged(true, false, false)
	assert.Equal(t, "notifications/tools/list_changed", next(t, onB)["method"])
	assert.Equal(t, "notifications/tools/list_changed", next(t, onA)["method"])
	quiet(t, onA) // a replica's own change is delivered once

	b.srv.NotifyResourceUpdated("file:///a")
	n := next(t, onA)
	assert.Equal(t, "notifications/resources/updated", n["method"])
	assert.Equal(t, "file:///a", n["params"].(obj)["uri"])
	assert.Equal(t, "file:///a", next(t, onB)["params"].(obj)["uri"])
	quiet(t, onB)
}

func TestShareIgnoresMalformedEvents(t *testing.T) {
	bus := share.Local()
	f := newFixtureDesc(t, listenDesc(), mrtr.WithShare(bus))
	defer f.srv.Close()
	f.addTool("t", noopTool)
	time.Sleep(50 * time.Millisecond)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	notes, _ := openListen(t, f, ctx, obj{"toolsListChanged": true})
	next(t, notes)
	for _, p := range []string{`not json`, `{"r":"x"}`, `{"r":"x","c":128}`, `[]`} {
		require.NoError(t, bus.Publish(ctx, changesChannel(f.srv), []byte(p)))
	}
	quiet(t, notes)
	ev, _ := json.Marshal(map[string]any{"r": "another-replica", "c": 1})
	require.NoError(t, bus.Publish(ctx, changesChannel(f.srv), ev))
	assert.Equal(t, "notifications/tools/list_changed", next(t, notes)["method"])
}

func TestShareClosedServerStopsListening(t *testing.T) {
	bus := share.Local()
	f := newFixtureDesc(t, listenDesc(), mrtr.WithShare(bus))
	require.NoError(t, f.srv.Close())
	require.NoError(t, f.srv.Close())
	f.srv.NotifyListChanged(true, true, true) // nothing to publish to, no panic
}

// changesChannel is the documented channel a Server's changes travel on:
// "mrtrkit/changes/" followed by its audience.
func changesChannel(s *mrtr.Server) string { return "mrtrkit/changes/" + s.Audience() }

// With its keys from MRTRKIT_STATE_KEYS, a Server seals the bus it is
// given: a change another replica with the same ring publishes is heard,
// and one published on the bus by anyone else is dropped.
func TestShareSealsTheBusWithTheEnvironmentsKeys(t *testing.T) {
	t.Setenv("MRTRKIT_STATE_KEYS", "k1:"+base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{7}, 32)))
	bus := share.Local()
	defer bus.Close()
	replica := func() *fixture {
		srv, err := mrtr.NewServer(listenDesc(), mrtr.WithShare(bus), mrtr.WithLogger(discardLogger))
		require.NoError(t, err)
		t.Cleanup(func() { srv.Close() })
		_, sealed := srv.SharedBus().(*share.SealedBus)
		require.True(t, sealed, "the bus in use is sealed")
		return &fixture{t: t, srv: srv}
	}
	a, b := replica(), replica()
	time.Sleep(50 * time.Millisecond)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	notes, _ := openListen(t, a, ctx, obj{"toolsListChanged": true})
	next(t, notes)

	forged, _ := json.Marshal(map[string]any{"r": "another-replica", "c": 1})
	require.NoError(t, bus.Publish(ctx, changesChannel(a.srv), forged))
	quiet(t, notes)

	b.srv.NotifyListChanged(true, false, false)
	assert.Equal(t, "notifications/tools/list_changed", next(t, notes)["method"])
}
