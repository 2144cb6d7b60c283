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
	"github.com/mrtrkit/mrtrkit/state"
)

// taskReplica is one replica serving tasks on a shared Redis: the same
// key rings and audience as every other, a Redis client of its own.
func taskReplica(t testing.TB, srv *redisServer) *mrtr.Server {
	t.Helper()
	client := redis.NewClient(&redis.Options{Addr: srv.Addr, MaxRetries: -1, DialTimeout: 500 * time.Millisecond})
	t.Cleanup(func() { client.Close() })
	s, err := mrtr.NewServer(discover.Description{Server: discover.Implementation{Name: "tasks", Version: "1.0.0"}},
		mrtr.WithCodec(mrtrtest.ReplicaCodec(t)),
		mrtr.WithAudience("https://mcp.example.test/mcp"),
		mrtr.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))),
		mrtr.WithShare(redisshare.New(client)),
		mrtr.WithTasks(mrtr.TaskCodec(mrtrtest.ReplicaCodec(t, state.WithPurpose("task"), state.WithTTL(2*time.Hour))), mrtr.TaskLease(300*time.Millisecond)))
	require.NoError(t, err)
	t.Cleanup(func() {
		s.Close()
		s.WaitTasks()
	})
	require.NoError(t, s.AddTool(mrtr.Tool{Name: "confirm"}, mrtr.HandlerFunc(func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
		a, err := mrtr.Elicit(ctx, req, "ok", &mrtr.ElicitRequest{Message: "Proceed?", RequestedSchema: &mrtr.ElicitSchema{Type: "object",
			Properties: map[string]json.RawMessage{"yes": json.RawMessage(`{"type":"boolean"}`)}}})
		if err != nil {
			return nil, err
		}
		return mrtr.TextResult("confirmed " + string(a.Action)), nil
	}), mrtr.TaskSupport(mrtr.TaskOptional)))
	require.NoError(t, s.AddTool(mrtr.Tool{Name: "slow"}, mrtr.HandlerFunc(func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
		select {
		case <-time.After(time.Minute):
			return mrtr.TextResult("slept"), nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}), mrtr.TaskSupport(mrtr.TaskRequired)))
	return s
}

type taskResult struct {
	ResultType    string                     `json:"resultType"`
	TaskID        string                     `json:"taskId"`
	Status        string                     `json:"status"`
	InputRequests map[string]json.RawMessage `json:"inputRequests"`
	Result        json.RawMessage            `json:"result"`
}

// taskCall sends a request declaring the Tasks extension, as principal.
func taskCall(t testing.TB, s *mrtr.Server, principal, method string, params obj) (taskResult, *mrtr.Error) {
	t.Helper()
	caps := `{"elicitation":{},"extensions":{"` + mrtr.TasksExtension + `":{}}}`
	res, rerr := mrtrtest.Send(context.Background(), s, principal, mrtrtest.NewRequest(method, params).WithCapabilities(caps))
	var r taskResult
	if rerr == nil {
		require.NoError(t, json.Unmarshal(res, &r))
	}
	return r, rerr
}

func waitTaskStatus(t testing.TB, s *mrtr.Server, id, want string) taskResult {
	t.Helper()
	var r taskResult
	require.Eventually(t, func() bool {
		var err *mrtr.Error
		r, err = taskCall(t, s, "alice", mrtr.MethodTasksGet, obj{"taskId": id})
		require.Nil(t, err)
		return r.Status == want
	}, 5*time.Second, 20*time.Millisecond, "task %s: status %q, want %q", id, r.Status, want)
	return r
}

func TestTasksAcrossReplicasOnRedis(t *testing.T) {
	srv := startRedis(t)
	r := []*mrtr.Server{taskReplica(t, srv), taskReplica(t, srv), taskReplica(t, srv), taskReplica(t, srv)}

	created, err := taskCall(t, r[0], "alice", "tools/call", obj{"name": "confirm", "arguments": obj{}})
	require.Nil(t, err)
	require.Equal(t, "task", created.ResultType)
	id := created.TaskID
	_, err = taskCall(t, r[1], "alice", mrtr.MethodTasksGet, obj{"taskId": id})
	require.Nil(t, err, "stored in Redis before CreateTaskResult was sent")
	got := waitTaskStatus(t, r[1], id, mrtr.TaskInputRequired)
	assert.Contains(t, got.InputRequests, "r1/ok")

	// Another principal sees an unknown id on every replica.
	for _, s := range r {
		_, err := taskCall(t, s, "mallory", mrtr.MethodTasksGet, obj{"taskId": id})
		require.NotNil(t, err)
		assert.Equal(t, mrtr.CodeInvalidParams, err.Code)
	}

	_, err = taskCall(t, r[2], "alice", mrtr.MethodTasksUpdate, obj{"taskId": id, "inputResponses": obj{"r1/ok": obj{"action": "accept", "content": obj{"yes": true}}}})
	require.Nil(t, err)
	got = waitTaskStatus(t, r[1], id, mrtr.TaskCompleted)
	assert.Contains(t, string(got.Result), "confirmed accept")

	// Running on replica 0, cancelled from replica 3: the cancellation
	// reaches replica 0 over Redis pub/sub.
	slow, err := taskCall(t, r[0], "alice", "tools/call", obj{"name": "slow", "arguments": obj{}})
	require.Nil(t, err)
	_, err = taskCall(t, r[3], "alice", mrtr.MethodTasksCancel, obj{"taskId": slow.TaskID})
	require.Nil(t, err)
	waitTaskStatus(t, r[2], slow.TaskID, mrtr.TaskCancelled)
}

func TestTasksFailClosedWhenRedisIsDown(t *testing.T) {
	srv := startRedis(t)
	s := taskReplica(t, srv)
	created, err := taskCall(t, s, "alice", "tools/call", obj{"name": "confirm", "arguments": obj{}})
	require.Nil(t, err)
	srv.Stop()
	_, err = taskCall(t, s, "alice", mrtr.MethodTasksGet, obj{"taskId": created.TaskID})
	require.NotNil(t, err)
	assert.Equal(t, mrtr.CodeInternalError, err.Code, "a store that cannot answer is not an unknown id")
	_, err = taskCall(t, s, "alice", "tools/call", obj{"name": "confirm", "arguments": obj{}})
	require.NotNil(t, err, "no task is created without the store")
}
