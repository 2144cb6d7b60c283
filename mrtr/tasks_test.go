package mrtr_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mrtrkit/mrtrkit/internal/testkit"
	"github.com/mrtrkit/mrtrkit/internal/wire"
	"github.com/mrtrkit/mrtrkit/mrtr"
	"github.com/mrtrkit/mrtrkit/transport/streamablehttp"
)

// capsTasks declares the Tasks extension (and elicitation).
var capsTasks = obj{"elicitation": obj{}, "extensions": obj{mrtr.TasksExtension: obj{}}}

// wireClient posts JSON-RPC requests to a Streamable HTTP server, with
// the routing headers a conforming client sends.
type wireClient struct {
	t     testing.TB
	url   string
	token string // bearer token: the principal
	id    int
}

type wireReply struct {
	Status int
	Result map[string]json.RawMessage
	Error  *struct {
		Code    int             `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	}
}

// call sends method with params and caps; name, when not "", is the
// Mcp-Name header (the params' target otherwise).
func (c *wireClient) call(method string, caps obj, params obj, name ...string) wireReply {
	c.t.Helper()
	c.id++
	if params == nil {
		params = obj{}
	}
	params["_meta"] = meta(caps)
	body, err := json.Marshal(obj{"jsonrpc": "2.0", "id": c.id, "method": method, "params": params})
	require.NoError(c.t, err)
	req, err := http.NewRequest(http.MethodPost, c.url, bytes.NewReader(body))
	require.NoError(c.t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", version)
	req.Header.Set("Mcp-Method", method)
	target := ""
	for _, k := range []string{"name", "uri", "taskId", "note"} {
		if v, ok := params[k].(string); ok {
			target = v
		}
	}
	if len(name) > 0 {
		target = name[0]
	}
	if target != "" {
		req.Header.Set("Mcp-Name", target)
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(c.t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(c.t, err)
	var out wireReply
	require.NoError(c.t, json.Unmarshal(raw, &out), "body %s", raw)
	out.Status = resp.StatusCode
	return out
}

func (r wireReply) str(member string) string {
	var s string
	_ = json.Unmarshal(r.Result[member], &s)
	return s
}

// taskServer serves the task fixtures over a real HTTP listener. Tokens
// "alice" and "bob" authenticate as those principals.
func taskServer(t *testing.T, opts ...mrtr.TasksOption) (*mrtr.Server, func(token string) *wireClient) {
	t.Helper()
	return taskReplica(t, nil, opts...)
}

// taskReplica is taskServer with more Server options: replicas of one
// deployment share a bus, the codecs and the audience.
func taskReplica(t *testing.T, srvOpts []mrtr.Option, opts ...mrtr.TasksOption) (*mrtr.Server, func(token string) *wireClient) {
	t.Helper()
	srv := testkit.Server(t, testDesc(), append(srvOpts, mrtr.WithTasks(opts...))...)
	addTaskFixtures(t, srv)
	h, err := streamablehttp.New(srv, streamablehttp.WithAuthenticator(func(r *http.Request) (*mrtr.TokenInfo, error) {
		tok, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if tok == "" {
			return nil, nil
		}
		return &mrtr.TokenInfo{Subject: tok}, nil
	}))
	require.NoError(t, err)
	hs := httptest.NewServer(h)
	t.Cleanup(func() {
		hs.Close()
		srv.WaitTasks()
	})
	return srv, func(token string) *wireClient { return &wireClient{t: t, url: hs.URL + "/mcp", token: token} }
}

func form(msg string, fields ...string) *mrtr.ElicitRequest {
	props := map[string]json.RawMessage{}
	for _, f := range fields {
		props[f] = json.RawMessage(`{"type":"string"}`)
	}
	return &mrtr.ElicitRequest{Message: msg, RequestedSchema: &mrtr.ElicitSchema{Type: "object", Properties: props}}
}

func addTaskFixtures(t *testing.T, srv *mrtr.Server) {
	t.Helper()
	add := func(name string, h mrtr.HandlerFunc, opts ...mrtr.RegisterOption) {
		require.NoError(t, srv.AddTool(mrtr.Tool{Name: name}, h, opts...))
	}
	add("greet", func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
		return mrtr.TextResult("Hello!"), nil
	})
	add("slow", func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
		var a struct{ Ms int }
		_ = json.Unmarshal(req.Arguments, &a)
		select {
		case <-time.After(time.Duration(a.Ms) * time.Millisecond):
			return mrtr.TextResult(fmt.Sprintf("slept %d", a.Ms)), nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}, mrtr.TaskSupport(mrtr.TaskOptional))
	add("failing", func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
		return mrtr.ErrorResult("it broke"), nil
	}, mrtr.TaskSupport(mrtr.TaskRequired))
	add("protoerr", func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
		return nil, mrtr.NewError(mrtr.CodeInternalError, "the job blew up", nil)
	}, mrtr.TaskSupport(mrtr.TaskOptional))
	add("confirm", func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
		a, err := mrtr.Elicit(ctx, req, "confirm", form("Delete?", "confirm"))
		if err != nil {
			return nil, err
		}
		return mrtr.TextResult("answered " + string(a.Action)), nil
	}, mrtr.TaskSupport(mrtr.TaskOptional))
	add("multi", func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
		a, err1 := mrtr.Elicit(ctx, req, "first", form("First?", "name"))
		b, err2 := mrtr.Elicit(ctx, req, "second", form("Second?", "name"))
		if err := errors.Join(err1, err2); err != nil {
			return nil, err
		}
		return mrtr.TextResult(fmt.Sprint(a.Content["name"], "+", b.Content["name"])), nil
	}, mrtr.TaskSupport(mrtr.TaskOptional))
	add("composed", func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
		a, err := mrtr.Elicit(ctx, req, "user_name", form("Your name?", "name"))
		if err != nil {
			return nil, err
		}
		if err := mrtr.Detach(ctx, req); err != nil {
			return nil, err
		}
		b, err := mrtr.Elicit(ctx, req, "confirm", form("Go on?", "ok"))
		if err != nil {
			return nil, err
		}
		return mrtr.TextResult(fmt.Sprint("Hello ", a.Content["name"], " ", b.Action)), nil
	}, mrtr.TaskSupport(mrtr.TaskRequired, mrtr.DetachInHandler()))
}

// waitStatus polls tasks/get until the task has status want (or ends).
func waitStatus(t *testing.T, c *wireClient, id, want string) wireReply {
	t.Helper()
	var r wireReply
	require.Eventually(t, func() bool {
		r = c.call(mrtr.MethodTasksGet, capsTasks, obj{"taskId": id})
		s := r.str("status")
		return r.Error == nil && (s == want || s == mrtr.TaskCompleted || s == mrtr.TaskFailed || s == mrtr.TaskCancelled)
	}, 5*time.Second, 10*time.Millisecond)
	require.Equal(t, want, r.str("status"), "%s", r.Result)
	return r
}

func TestTasksLifecycleOnTheWire(t *testing.T) {
	_, client := taskServer(t)
	c := client("alice")

	// Advertised in server/discover under capabilities.extensions.
	d := c.call("server/discover", nil, nil)
	require.Nil(t, d.Error)
	assert.Contains(t, string(d.Result["capabilities"]), `"extensions":{"`+mrtr.TasksExtension+`":{}}`)
	assert.NotContains(t, string(d.Result["capabilities"]), `"tasks"`)

	// A declaring call of a task-supporting tool: a flat CreateTaskResult.
	r := c.call("tools/call", capsTasks, obj{"name": "slow", "arguments": obj{"ms": 150}})
	require.Nil(t, r.Error)
	assert.Equal(t, `"task"`, string(r.Result["resultType"]))
	id := r.str("taskId")
	assert.Len(t, id, 22, "128 bits, base64url")
	assert.Equal(t, mrtr.TaskWorking, r.str("status"))
	for _, k := range []string{"createdAt", "lastUpdatedAt", "ttlMs", "pollIntervalMs"} {
		assert.Contains(t, r.Result, k)
	}
	for _, k := range []string{"result", "error", "inputRequests", "requestState", "ttl", "pollInterval", "task"} {
		assert.NotContains(t, r.Result, k)
	}
	assert.Equal(t, "3600000", string(r.Result["ttlMs"]))
	_, err := time.Parse(time.RFC3339Nano, r.str("createdAt"))
	require.NoError(t, err)

	// Durable before sent: the next get resolves.
	g := c.call(mrtr.MethodTasksGet, capsTasks, obj{"taskId": id})
	require.Nil(t, g.Error)
	assert.Equal(t, `"complete"`, string(g.Result["resultType"]))
	assert.Equal(t, id, g.str("taskId"))

	g = waitStatus(t, c, id, mrtr.TaskCompleted)
	assert.Contains(t, string(g.Result["result"]), `slept 150`)
	assert.NotContains(t, string(g.Result["result"]), `resultType`)
	assert.NotContains(t, g.Result, "requestState")

	// isError → completed with the result; a JSON-RPC error → failed.
	r = c.call("tools/call", capsTasks, obj{"name": "failing"})
	g = waitStatus(t, c, r.str("taskId"), mrtr.TaskCompleted)
	assert.Contains(t, string(g.Result["result"]), `"isError":true`)
	r = c.call("tools/call", capsTasks, obj{"name": "protoerr"})
	g = waitStatus(t, c, r.str("taskId"), mrtr.TaskFailed)
	assert.JSONEq(t, `{"code":-32603,"message":"the job blew up"}`, string(g.Result["error"]))
	assert.NotContains(t, g.Result, "result")

	// Cancel: an empty ack, the task ends cancelled; again on the
	// terminal task: the same ack.
	r = c.call("tools/call", capsTasks, obj{"name": "slow", "arguments": obj{"ms": 60000}})
	id = r.str("taskId")
	for range 2 {
		a := c.call(mrtr.MethodTasksCancel, capsTasks, obj{"taskId": id})
		require.Nil(t, a.Error)
		assert.Equal(t, map[string]json.RawMessage{"resultType": json.RawMessage(`"complete"`)}, withoutMeta(a.Result))
		waitStatus(t, c, id, mrtr.TaskCancelled)
	}
}

func withoutMeta(m map[string]json.RawMessage) map[string]json.RawMessage {
	out := map[string]json.RawMessage{}
	for k, v := range m {
		if k != "_meta" {
			out[k] = v
		}
	}
	return out
}

func TestTasksNegotiationOnTheWire(t *testing.T) {
	_, client := taskServer(t)
	c := client("alice")
	// Without the declaration: tasks/* are -32021 even for a bogus id.
	for _, m := range []string{mrtr.MethodTasksGet, mrtr.MethodTasksUpdate, mrtr.MethodTasksCancel} {
		r := c.call(m, capsNone, obj{"taskId": "bogus"})
		require.NotNil(t, r.Error, m)
		assert.Equal(t, -32021, r.Error.Code, m)
		assert.Equal(t, http.StatusBadRequest, r.Status)
		assert.Contains(t, string(r.Error.Data), mrtr.TasksExtension)
	}
	// A task-supporting tool runs synchronously; a required one is -32021.
	r := c.call("tools/call", capsNone, obj{"name": "slow", "arguments": obj{"ms": 0}})
	require.Nil(t, r.Error)
	assert.Equal(t, `"complete"`, string(r.Result["resultType"]))
	assert.NotContains(t, r.Result, "taskId")
	r = c.call("tools/call", capsNone, obj{"name": "failing"})
	require.NotNil(t, r.Error)
	assert.Equal(t, -32021, r.Error.Code)
	assert.JSONEq(t, `{"requiredCapabilities":{"extensions":{"`+mrtr.TasksExtension+`":{}}}}`, string(r.Error.Data))
	// A legacy task param does not promote a synchronous tool.
	r = c.call("tools/call", capsTasks, obj{"name": "greet", "task": obj{"ttl": 1000}})
	require.Nil(t, r.Error)
	assert.Equal(t, `"complete"`, string(r.Result["resultType"]))
	// tasks/result and tasks/list do not exist.
	for _, m := range []string{"tasks/result", "tasks/list"} {
		r = c.call(m, capsTasks, obj{"taskId": "x"})
		require.NotNil(t, r.Error)
		assert.Equal(t, -32601, r.Error.Code)
	}
	// Unknown id: -32602.
	r = c.call(mrtr.MethodTasksGet, capsTasks, obj{"taskId": "tasks-conformance-nonexistent"})
	require.NotNil(t, r.Error)
	assert.Equal(t, -32602, r.Error.Code)
}

func TestTasksMcpNameMustMirrorTaskID(t *testing.T) {
	_, client := taskServer(t)
	c := client("alice")
	id := c.call("tools/call", capsTasks, obj{"name": "slow", "arguments": obj{"ms": 0}}).str("taskId")
	r := c.call(mrtr.MethodTasksGet, capsTasks, obj{"taskId": id}, "another-task")
	require.NotNil(t, r.Error)
	assert.Equal(t, -32020, r.Error.Code)
	assert.Equal(t, http.StatusBadRequest, r.Status)
}

func TestTasksInputThroughUpdate(t *testing.T) {
	_, client := taskServer(t)
	c := client("alice")
	id := c.call("tools/call", capsTasks, obj{"name": "multi"}).str("taskId")
	g := waitStatus(t, c, id, mrtr.TaskInputRequired)
	var reqs map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(g.Result["inputRequests"], &reqs))
	keys := make([]string, 0, len(reqs))
	for k := range reqs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	require.Equal(t, []string{"r1/first", "r1/second"}, keys)
	assert.Contains(t, string(reqs["r1/first"]), `"method":"elicitation/create"`)

	// A partial answer (and an unknown key): still input_required, with
	// only the unanswered key.
	u := c.call(mrtr.MethodTasksUpdate, capsTasks, obj{"taskId": id, "inputResponses": obj{
		"r1/first": obj{"action": "accept", "content": obj{"name": "a"}}, "unknown": obj{"x": 1}}})
	require.Nil(t, u.Error)
	assert.Equal(t, `"complete"`, string(u.Result["resultType"]))
	g = c.call(mrtr.MethodTasksGet, capsTasks, obj{"taskId": id})
	assert.Equal(t, mrtr.TaskInputRequired, g.str("status"))
	assert.NotContains(t, string(g.Result["inputRequests"]), "r1/first")
	assert.Contains(t, string(g.Result["inputRequests"]), "r1/second")

	c.call(mrtr.MethodTasksUpdate, capsTasks, obj{"taskId": id, "inputResponses": obj{
		"r1/second": obj{"action": "accept", "content": obj{"name": "b"}}}})
	g = waitStatus(t, c, id, mrtr.TaskCompleted)
	assert.Contains(t, string(g.Result["result"]), "a+b")
}

func TestTasksComposeWithMRTRRoundsBeforeCreation(t *testing.T) {
	_, client := taskServer(t)
	c := client("alice")
	r := c.call("tools/call", capsTasks, obj{"name": "composed"})
	require.Nil(t, r.Error)
	require.Equal(t, `"input_required"`, string(r.Result["resultType"]))
	assert.NotContains(t, r.Result, "taskId")
	r = c.call("tools/call", capsTasks, obj{"name": "composed", "requestState": r.str("requestState"),
		"inputResponses": obj{"user_name": obj{"action": "accept", "content": obj{"name": "Alice"}}}})
	require.Nil(t, r.Error)
	require.Equal(t, `"task"`, string(r.Result["resultType"]))
	assert.NotContains(t, r.Result, "requestState")
	id := r.str("taskId")
	// After creation, the task's own question goes through tasks/update.
	g := waitStatus(t, c, id, mrtr.TaskInputRequired)
	assert.Contains(t, string(g.Result["inputRequests"]), `"r1/confirm"`)
	assert.NotContains(t, string(g.Result["inputRequests"]), `user_name`)
	c.call(mrtr.MethodTasksUpdate, capsTasks, obj{"taskId": id, "inputResponses": obj{"r1/confirm": obj{"action": "accept", "content": obj{"ok": "y"}}}})
	g = waitStatus(t, c, id, mrtr.TaskCompleted)
	assert.Contains(t, string(g.Result["result"]), "Hello Alice accept")
}

func TestTasksAreBoundToTheirCreator(t *testing.T) {
	_, client := taskServer(t)
	alice, bob := client("alice"), client("bob")
	id := alice.call("tools/call", capsTasks, obj{"name": "confirm"}).str("taskId")
	waitStatus(t, alice, id, mrtr.TaskInputRequired)
	unknown := bob.call(mrtr.MethodTasksGet, capsTasks, obj{"taskId": "AAAAAAAAAAAAAAAAAAAAAA"})
	require.NotNil(t, unknown.Error)
	for _, m := range []string{mrtr.MethodTasksGet, mrtr.MethodTasksUpdate, mrtr.MethodTasksCancel} {
		r := bob.call(m, capsTasks, obj{"taskId": id, "inputResponses": obj{"r1/confirm": obj{"action": "decline"}}})
		require.NotNil(t, r.Error, m)
		assert.Equal(t, *unknown.Error, *r.Error, "another principal's task looks like an unknown id")
		assert.Equal(t, unknown.Status, r.Status)
	}
	// Bob's attempts changed nothing.
	g := alice.call(mrtr.MethodTasksGet, capsTasks, obj{"taskId": id})
	assert.Equal(t, mrtr.TaskInputRequired, g.str("status"))
	a := alice.call(mrtr.MethodTasksCancel, capsTasks, obj{"taskId": id})
	require.Nil(t, a.Error)
	waitStatus(t, alice, id, mrtr.TaskCancelled)
}

func TestTasksExpireAfterTTLAndAreBoundedPerCaller(t *testing.T) {
	_, client := taskServer(t, mrtr.TaskTTL(300*time.Millisecond), mrtr.TaskLimits(2, 64<<10))
	c := client("alice")
	first := c.call("tools/call", capsTasks, obj{"name": "confirm"}).str("taskId")
	require.NotEmpty(t, first)
	require.NotEmpty(t, c.call("tools/call", capsTasks, obj{"name": "confirm"}).str("taskId"))
	r := c.call("tools/call", capsTasks, obj{"name": "confirm"})
	require.NotNil(t, r.Error, "a third task for one caller")
	assert.Contains(t, string(r.Error.Data), "too_many_tasks")
	// Another caller has its own bound.
	require.NotEmpty(t, client("bob").call("tools/call", capsTasks, obj{"name": "confirm"}).str("taskId"))
	// Readable until its TTL, gone after.
	require.Nil(t, c.call(mrtr.MethodTasksGet, capsTasks, obj{"taskId": first}).Error)
	time.Sleep(350 * time.Millisecond)
	g := c.call(mrtr.MethodTasksGet, capsTasks, obj{"taskId": first})
	require.NotNil(t, g.Error)
	assert.Equal(t, -32602, g.Error.Code)
	// Expired tasks leave the bound.
	require.NotEmpty(t, c.call("tools/call", capsTasks, obj{"name": "confirm"}).str("taskId"))
}

func TestTaskRecordsAreBoundedInSize(t *testing.T) {
	_, client := taskServer(t, mrtr.TaskLimits(10, 2048))
	c := client("alice")
	id := c.call("tools/call", capsTasks, obj{"name": "slow", "arguments": obj{"ms": 0, "pad": strings.Repeat("x", 4096)}})
	require.NotNil(t, id.Error, "a task whose arguments exceed the record bound is refused")
	assert.Contains(t, string(id.Error.Data), "task_too_large")
}

var _ = wire.MethodToolsCall
