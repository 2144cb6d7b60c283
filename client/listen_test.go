package client_test

import (
	"context"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mrtrkit/mrtrkit/client"
	"github.com/mrtrkit/mrtrkit/discover"
	"github.com/mrtrkit/mrtrkit/mrtr"
	"github.com/mrtrkit/mrtrkit/mrtr/mrtrtest"
)

// A listen stream against an mrtrkit server: acknowledged, then a
// list_changed when a tool is added.
func TestListenAgainstKitServer(t *testing.T) {
	srv := mrtrtest.NewServerDesc(t, discover.Description{
		Server:         discover.Implementation{Name: "kit", Version: "test"},
		Capabilities:   discover.Capabilities{Tools: &discover.ListChanged{ListChanged: true}},
		LegacyVersions: []string{"2025-11-25"},
	})
	c, err := client.Connect(ctxT(t), client.HTTP(serveHTTP(t, srv)))
	require.NoError(t, err)
	defer c.Close()
	ctx, cancel := context.WithCancel(ctxT(t))
	defer cancel()
	var mu sync.Mutex
	var got []string
	acked := make(chan struct{})
	changed := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- c.Listen(ctx, client.ListenFilter{ToolsListChanged: true}, func(n client.Notification) {
			mu.Lock()
			got = append(got, n.Method)
			mu.Unlock()
			switch n.Method {
			case "notifications/subscriptions/acknowledged":
				close(acked)
			case "notifications/tools/list_changed":
				close(changed)
			}
		})
	}()
	select {
	case <-acked:
	case err := <-done:
		t.Fatalf("listen ended: %v", err)
	case <-time.After(5 * time.Second):
		t.Fatal("no acknowledgement")
	}
	require.NoError(t, srv.AddTool(mrtr.Tool{Name: "new"}, mrtr.HandlerFunc(func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
		return mrtr.TextResult("n"), nil
	})))
	select {
	case <-changed:
	case <-time.After(5 * time.Second):
		t.Fatal("no list_changed")
	}
	cancel()
	assert.ErrorIs(t, <-done, context.Canceled)
}

// A listen stream that breaks without the server's graceful end is
// opened again; the graceful end ends Listen.
func TestListenReconnectsUntilGracefulEnd(t *testing.T) {
	var n atomic.Int32
	rs := modernRaw(t, func(w http.ResponseWriter, s *seen) bool {
		if s.RPC.Method != "subscriptions/listen" {
			return false
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(200)
		sse(w, "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/subscriptions/acknowledged\",\"params\":{\"_meta\":{\"io.modelcontextprotocol/subscriptionId\":%s},\"notifications\":{\"toolsListChanged\":true}}}\n\n", s.RPC.ID)
		if n.Add(1) == 1 {
			return true // broken: no result
		}
		sse(w, "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\",\"params\":{\"_meta\":{\"io.modelcontextprotocol/subscriptionId\":%s}}}\n\n", s.RPC.ID)
		sse(w, "data: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"resultType\":\"complete\",\"_meta\":{\"io.modelcontextprotocol/subscriptionId\":%s}}}\n\n", s.RPC.ID, s.RPC.ID)
		return true
	})
	c, err := client.Connect(ctxT(t), client.HTTP(rs.url))
	require.NoError(t, err)
	defer c.Close()
	var got []string
	err = c.Listen(ctxT(t), client.ListenFilter{ToolsListChanged: true}, func(n client.Notification) { got = append(got, n.Method) })
	require.NoError(t, err)
	assert.Equal(t, []string{"notifications/subscriptions/acknowledged", "notifications/subscriptions/acknowledged", "notifications/tools/list_changed"}, got)
	calls := rs.calls("subscriptions/listen")
	require.Len(t, calls, 2)
	assert.NotEqual(t, string(calls[0].RPC.ID), string(calls[1].RPC.ID), "a new id on reconnection")
	assert.Contains(t, string(calls[0].Body), `"notifications":{"toolsListChanged":true}`)
}
