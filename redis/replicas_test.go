package redisshare_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mrtrkit/mrtrkit/discover"
	"github.com/mrtrkit/mrtrkit/mrtr"
	"github.com/mrtrkit/mrtrkit/mrtr/mrtrtest"
	redisshare "github.com/mrtrkit/mrtrkit/redis"
)

type obj = map[string]any

// replica is one mrtr.Server of a deployment sharing a Redis: the same
// key ring and audience as every other, a Redis client of its own.
func replica(t testing.TB, srv *redisServer, opts ...redisshare.Option) *mrtr.Server {
	t.Helper()
	desc := discover.Description{Server: discover.Implementation{Name: "replicas", Version: "1.0.0"}}
	desc.Capabilities.Tools = &discover.ListChanged{ListChanged: true}
	desc.Capabilities.Resources = &discover.ResourcesCapability{ListChanged: true, Subscribe: true}
	client := redis.NewClient(&redis.Options{Addr: srv.Addr, MaxRetries: -1, DialTimeout: 500 * time.Millisecond})
	t.Cleanup(func() { client.Close() })
	s, err := mrtr.NewServer(desc,
		mrtr.WithCodec(mrtrtest.ReplicaCodec(t)),
		mrtr.WithAudience("https://mcp.example.test/mcp"),
		mrtr.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))),
		mrtr.WithShare(redisshare.New(client, opts...)))
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	confirm := mrtr.HandlerFunc(func(_ context.Context, req *mrtr.Request) (mrtr.Result, error) {
		if req.Round == 0 {
			return &mrtr.InputRequired{Requests: map[string]mrtr.InputRequest{"ok": &mrtr.ElicitRequest{
				Message: "Proceed?",
				RequestedSchema: &mrtr.ElicitSchema{Type: "object",
					Properties: map[string]json.RawMessage{"yes": json.RawMessage(`{"type":"boolean"}`)}},
			}}}, nil
		}
		return mrtr.TextResult("done"), nil
	})
	schema := json.RawMessage(`{"type":"object"}`)
	require.NoError(t, s.AddTool(mrtr.Tool{Name: "once", InputSchema: schema}, confirm, mrtr.OnceOnly()))
	require.NoError(t, s.AddTool(mrtr.Tool{Name: "plain", InputSchema: schema}, confirm))
	require.NoError(t, s.AddResource(mrtr.Resource{URI: "file:///a", Name: "a"}, mrtr.HandlerFunc(func(context.Context, *mrtr.Request) (mrtr.Result, error) {
		return &mrtr.ReadResourceResult{}, nil
	})))
	return s
}

// message is a request for method with params from a client that
// declares elicitation.
func message(method string, params obj) *mrtr.Message {
	return mrtrtest.NewRequest(method, params).WithCapabilities(`{"elicitation":{}}`).Inbound("").Message
}

// listen opens subscriptions/listen on s and returns its notifications'
// methods and params; the acknowledgement has been read.
func listen(t *testing.T, ctx context.Context, s *mrtr.Server) <-chan obj {
	t.Helper()
	msg := message("subscriptions/listen", obj{"notifications": obj{"toolsListChanged": true, "resourceSubscriptions": []any{"file:///a"}}})
	notes := make(chan obj, 16)
	go s.Handle(ctx, &mrtr.Inbound{Message: msg, Emit: func(b []byte) error {
		var n obj
		if err := json.Unmarshal(b, &n); err != nil {
			return err
		}
		notes <- n
		return nil
	}})
	ack := next(t, notes)
	require.Equal(t, "notifications/subscriptions/acknowledged", ack["method"])
	return notes
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

func quiet(t *testing.T, notes <-chan obj) {
	t.Helper()
	select {
	case n := <-notes:
		t.Fatalf("unexpected notification %v", n)
	case <-time.After(150 * time.Millisecond):
	}
}

// drain reads what is waiting.
func drain(notes <-chan obj) {
	for {
		select {
		case <-notes:
		case <-time.After(150 * time.Millisecond):
			return
		}
	}
}

func TestNotificationsReachOtherReplica(t *testing.T) {
	srv := startRedis(t)
	a, b := replica(t, srv), replica(t, srv)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	onA, onB := listen(t, ctx, a), listen(t, ctx, b)
	drain(onA) // registration events published at start-up
	drain(onB)

	a.NotifyListChanged(true, false, false)
	assert.Equal(t, "notifications/tools/list_changed", next(t, onB)["method"])
	assert.Equal(t, "notifications/tools/list_changed", next(t, onA)["method"])
	quiet(t, onA) // the publishing replica delivers its own change once
	quiet(t, onB)

	b.NotifyResourceUpdated("file:///a")
	n := next(t, onA)
	assert.Equal(t, "notifications/resources/updated", n["method"])
	assert.Equal(t, "file:///a", n["params"].(obj)["uri"])
	next(t, onB)
	quiet(t, onB)
}

// call serves tools/call of tool on s, with state and an answer when
// state is not empty.
func call(t testing.TB, s *mrtr.Server, tool, state string) *mrtr.Response {
	t.Helper()
	p := obj{"name": tool, "arguments": obj{}}
	if state != "" {
		p["requestState"] = state
		p["inputResponses"] = obj{"ok": obj{"action": "accept", "content": obj{"yes": true}}}
	}
	resp := s.Handle(context.Background(), &mrtr.Inbound{Message: message("tools/call", p)})
	require.NotNil(t, resp)
	return resp
}

func stateOf(t testing.TB, resp *mrtr.Response) string {
	t.Helper()
	require.Nil(t, resp.Error)
	var r struct {
		ResultType   string `json:"resultType"`
		RequestState string `json:"requestState"`
	}
	require.NoError(t, json.Unmarshal(resp.Result, &r))
	require.Equal(t, "input_required", r.ResultType)
	return r.RequestState
}

func complete(t testing.TB, resp *mrtr.Response) {
	t.Helper()
	require.Nil(t, resp.Error, "error %v", resp.Error)
	assert.Contains(t, string(resp.Result), `"resultType":"complete"`)
}

func TestOnceOnlyAcrossReplicas(t *testing.T) {
	srv := startRedis(t)
	a, b := replica(t, srv), replica(t, srv)
	tok := stateOf(t, call(t, a, "once", ""))
	complete(t, call(t, a, "once", tok))
	resp := call(t, b, "once", tok)
	require.NotNil(t, resp.Error)
	assert.Equal(t, mrtr.CodeInvalidParams, resp.Error.Code)
	assert.Equal(t, map[string]string{"reason": mrtr.ReasonReplayedRequestState}, resp.Error.Data)

	// A tool without OnceOnly takes the same state twice.
	tok = stateOf(t, call(t, b, "plain", ""))
	complete(t, call(t, a, "plain", tok))
	complete(t, call(t, b, "plain", tok))
}

func TestRedisDownFailsClosed(t *testing.T) {
	srv := startRedis(t)
	a := replica(t, srv)
	tokOnce := stateOf(t, call(t, a, "once", ""))
	tokPlain := stateOf(t, call(t, a, "plain", ""))
	srv.Stop()

	start := time.Now()
	resp := call(t, a, "once", tokOnce)
	require.NotNil(t, resp.Error)
	assert.Equal(t, mrtr.CodeInternalError, resp.Error.Code)
	assert.Contains(t, resp.Error.Message, "single-use check of requestState could not be made")
	assert.Less(t, time.Since(start), 3*time.Second)

	// Everything else is served, notifications included.
	a.NotifyListChanged(true, true, true)
	complete(t, call(t, a, "plain", tokPlain))
	stateOf(t, call(t, a, "once", "")) // a first round presents no state
}
