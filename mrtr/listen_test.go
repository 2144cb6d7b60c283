package mrtr_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mrtrkit/mrtrkit/discover"
	"github.com/mrtrkit/mrtrkit/internal/wire"
	"github.com/mrtrkit/mrtrkit/mrtr"
)

// listenDesc advertises list changes for tools and resources and
// resource subscriptions, but not prompts.
func listenDesc() discover.Description {
	d := testDesc()
	d.Capabilities.Tools = &discover.ListChanged{ListChanged: true}
	d.Capabilities.Resources = &discover.ResourcesCapability{ListChanged: true, Subscribe: true}
	return d
}

// openListen starts a subscriptions/listen request with id 9 and returns
// the stream of notifications and the final response.
func openListen(t *testing.T, f *fixture, ctx context.Context, filter obj) (<-chan obj, <-chan *mrtr.Response) {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":9,"method":"subscriptions/listen","params":` + string(mustJSON(obj{"_meta": meta(capsNone), "notifications": filter})) + `}`
	msg, _, perr := mrtr.ParseMessage([]byte(body))
	require.Nil(t, perr)
	notes := make(chan obj, 16)
	done := make(chan *mrtr.Response, 1)
	go func() {
		resp := f.srv.Handle(ctx, &mrtr.Inbound{Message: msg, Emit: func(b []byte) error {
			var n obj
			if err := json.Unmarshal(b, &n); err != nil {
				return err
			}
			notes <- n
			return nil
		}})
		done <- resp
	}()
	return notes, done
}

func next(t *testing.T, notes <-chan obj) obj {
	t.Helper()
	select {
	case n := <-notes:
		return n
	case <-time.After(5 * time.Second):
		t.Fatal("no notification")
		return nil
	}
}

func TestListen(t *testing.T) {
	f := newFixtureDesc(t, listenDesc())
	require.NoError(t, f.srv.AddResource(mrtr.Resource{URI: "file:///a", Name: "a"}, mrtr.HandlerFunc(func(context.Context, *mrtr.Request) (mrtr.Result, error) {
		return &mrtr.ReadResourceResult{}, nil
	})))
	notes, done := openListen(t, f, context.Background(), obj{
		"toolsListChanged":      true,
		"promptsListChanged":    true,                                         // not advertised: not honoured
		"resourceSubscriptions": []any{"file:///a", "file:///not-a-resource"}, // only what exists is honoured
	})
	ack := next(t, notes)
	assert.Equal(t, "notifications/subscriptions/acknowledged", ack["method"])
	assert.Equal(t, obj{
		"_meta":         obj{wire.MetaSubscriptionID: float64(9)},
		"notifications": obj{"toolsListChanged": true, "resourceSubscriptions": []any{"file:///a"}},
	}, ack["params"])

	f.addTool("t", noopTool)
	n := next(t, notes)
	assert.Equal(t, "notifications/tools/list_changed", n["method"])
	assert.Equal(t, obj{"_meta": obj{wire.MetaSubscriptionID: float64(9)}}, n["params"])

	f.srv.NotifyResourceUpdated("file:///other") // not subscribed
	f.srv.NotifyResourceUpdated("file:///a")
	n = next(t, notes)
	assert.Equal(t, "notifications/resources/updated", n["method"])
	assert.Equal(t, obj{"_meta": obj{wire.MetaSubscriptionID: float64(9)}, "uri": "file:///a"}, n["params"])

	f.srv.NotifyListChanged(false, true, false) // prompts: not honoured
	f.srv.NotifyListChanged(true, false, false)
	assert.Equal(t, "notifications/tools/list_changed", next(t, notes)["method"])

	require.NoError(t, f.srv.Close())
	var r reply
	select {
	case resp := <-done:
		r = decodeResponse(t, resp)
	case <-time.After(5 * time.Second):
		t.Fatal("listen did not end on Close")
	}
	res := r.complete(t)
	assert.Equal(t, float64(9), res["_meta"].(map[string]any)[wire.MetaSubscriptionID])
	assert.Contains(t, res["_meta"], wire.MetaServerInfo)
	assert.NotContains(t, res, "ttlMs")
	select {
	case n := <-notes:
		t.Fatalf("unexpected notification %v", n)
	default:
	}

	// Once closed, a new listen ends right after its acknowledgement, and
	// other requests are still served.
	notes, done = openListen(t, f, context.Background(), obj{"toolsListChanged": true})
	assert.Equal(t, "notifications/subscriptions/acknowledged", next(t, notes)["method"])
	decodeResponse(t, <-done).complete(t)
	f.call("tools/list", obj{"_meta": meta(capsNone)}).complete(t)
}

func TestListenCancelled(t *testing.T) {
	f := newFixtureDesc(t, listenDesc())
	ctx, cancel := context.WithCancel(context.Background())
	notes, done := openListen(t, f, ctx, obj{"toolsListChanged": true})
	next(t, notes)
	cancel()
	select {
	case resp := <-done:
		decodeResponse(t, resp).fail(t, mrtr.CodeInternalError)
	case <-time.After(5 * time.Second):
		t.Fatal("listen did not end on cancellation")
	}
}

func TestListenRefusals(t *testing.T) {
	f := newFixture(t)
	f.addTool("t", noopTool) // tools without listChanged
	r := f.call("subscriptions/listen", obj{"_meta": meta(capsNone), "notifications": obj{"toolsListChanged": true}}, withEmit(func([]byte) error { return nil }))
	r.fail(t, mrtr.CodeMethodNotFound)

	g := newFixtureDesc(t, listenDesc())
	emit := withEmit(func([]byte) error { return nil })
	for name, p := range map[string]obj{
		"no filter":            {"_meta": meta(capsNone)},
		"filter not an object": {"_meta": meta(capsNone), "notifications": []any{}},
		"filter of bad types":  {"_meta": meta(capsNone), "notifications": obj{"toolsListChanged": "yes"}},
	} {
		t.Run(name, func(t *testing.T) {
			g.call("subscriptions/listen", p, emit).fail(t, mrtr.CodeInvalidParams)
		})
	}
	// A transport that cannot stream cannot listen.
	g.call("subscriptions/listen", obj{"_meta": meta(capsNone), "notifications": obj{}}).fail(t, mrtr.CodeInvalidParams)
}

func TestListenBoundsResourceSubscriptions(t *testing.T) {
	f := newFixtureDesc(t, listenDesc())
	uris := make([]any, 256+1)
	for i := range uris {
		uris[i] = fmt.Sprintf("file:///%d", i)
	}
	r := f.call("subscriptions/listen", obj{"_meta": meta(capsNone), "notifications": obj{"resourceSubscriptions": uris}},
		withEmit(func([]byte) error { return nil }))
	e := r.fail(t, mrtr.CodeInvalidParams)
	assert.Contains(t, e.Message, "more than")
}
