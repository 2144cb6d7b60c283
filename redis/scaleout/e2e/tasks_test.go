//go:build scaleout

package e2e

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// tasksExtension is the Tasks extension (SEP-2663).
const tasksExtension = "io.modelcontextprotocol/tasks"

// taskMeta is meta declaring the Tasks extension too.
func taskMeta() map[string]any {
	m := meta()
	caps := m["io.modelcontextprotocol/clientCapabilities"].(map[string]any)
	c := map[string]any{"extensions": map[string]any{tasksExtension: map[string]any{}}}
	for k, v := range caps {
		c[k] = v
	}
	m["io.modelcontextprotocol/clientCapabilities"] = c
	return m
}

// taskView is a CreateTaskResult or a DetailedTask.
type taskView struct {
	ResultType    string                     `json:"resultType"`
	TaskID        string                     `json:"taskId"`
	Status        string                     `json:"status"`
	InputRequests map[string]json.RawMessage `json:"inputRequests"`
	Result        *toolResult                `json:"result"`
	Error         *rpcError                  `json:"error"`
}

// taskRequest sends one task-extension request (tools/call or tasks/*)
// to url and returns its result and the replica that answered.
func taskRequest(t testing.TB, url, method, name string, params map[string]any) (taskView, string) {
	t.Helper()
	params["_meta"] = taskMeta()
	x := post(t, method+" "+name, url, modernHeaders(method, name), map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	require.Equal(t, http.StatusOK, x.status, "%s %s: HTTP status", method, name)
	m := x.next(t)
	require.Nil(t, m.Error, "%s %s: %+v", method, name, m.Error)
	var v taskView
	require.NoError(t, json.Unmarshal(m.Result, &v), method)
	return v, x.replica
}

// waitTask polls tasks/get at url until the task has status want.
func waitTask(t testing.TB, url, id, want string, within time.Duration) (taskView, []string) {
	t.Helper()
	var served []string
	deadline := time.Now().Add(within)
	for {
		v, rep := taskRequest(t, url, "tasks/get", id, map[string]any{"taskId": id})
		served = append(served, rep)
		if v.Status == want {
			return v, served
		}
		require.Contains(t, []string{"working", "input_required"}, v.Status, "task %s: status %q, want %q", id, v.Status, want)
		require.False(t, time.Now().After(deadline), "task %s: status %q after %s, want %q", id, v.Status, within, want)
		time.Sleep(100 * time.Millisecond)
	}
}

// A task created on one replica is polled on a second, answered on a
// third, and another one is cancelled through nginx from wherever the
// round robin sends the request.
func TestSharedTasks(t *testing.T) {
	a, b, c := reps[0], reps[1], reps[2]
	created, rep := taskRequest(t, a.url, "tools/call", "task_confirm", map[string]any{"name": "task_confirm", "arguments": map[string]any{}})
	require.Equal(t, "task", created.ResultType, "tools/call on %s: %+v", a.name, created)
	require.Equal(t, a.name, rep, "tools/call on %s answered by", a.name)
	id := created.TaskID
	// Durable before sent: the second replica finds it at once.
	v, _ := taskRequest(t, b.url, "tasks/get", id, map[string]any{"taskId": id})
	require.Equal(t, id, v.TaskID, "tasks/get on %s right after creation: %+v", b.name, v)
	v, _ = waitTask(t, b.url, id, "input_required", 10*time.Second)
	require.Contains(t, v.InputRequests, "r1/ok", "input requests")
	taskRequest(t, c.url, "tasks/update", id, map[string]any{"taskId": id, "inputResponses": map[string]any{
		"r1/ok": map[string]any{"action": "accept", "content": map[string]any{"yes": true}}}})
	v, _ = waitTask(t, b.url, id, "completed", 10*time.Second)
	want := "asked=" + a.name + " finished=" + c.name + " action=accept"
	require.NotNil(t, v.Result, "want %q", want)
	require.Equal(t, want, v.Result.text(), "the task resumed on the replica that completed its answers")
	t.Logf("task %s: created on %s, polled on %s, answered on %s: %s", id, a.name, b.name, c.name, v.Result.text())

	// Another principal does not exist here (no authentication), but a
	// guessed id is unknown on every replica.
	for _, r := range reps {
		x := post(t, "tasks/get guessed on "+r.name, r.url, modernHeaders("tasks/get", "AAAAAAAAAAAAAAAAAAAAAA"), map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tasks/get",
			"params": map[string]any{"taskId": "AAAAAAAAAAAAAAAAAAAAAA", "_meta": taskMeta()}})
		m := x.next(t)
		require.NotNil(t, m.Error, "guessed id on %s: %+v", r.name, m)
		require.Equal(t, -32602, m.Error.Code, "guessed id on %s: %+v", r.name, m)
	}

	// A task running on a, cancelled through nginx, ends cancelled.
	slow, _ := taskRequest(t, a.url, "tools/call", "task_slow", map[string]any{"name": "task_slow", "arguments": map[string]any{"ms": 30000}})
	_, cancelledBy := taskRequest(t, proxyURL, "tasks/cancel", slow.TaskID, map[string]any{"taskId": slow.TaskID})
	v, served := waitTask(t, proxyURL, slow.TaskID, "cancelled", 10*time.Second)
	t.Logf("task %s: running on %s, cancelled through nginx by %s, seen cancelled by %s", slow.TaskID, a.name, cancelledBy, strings.Join(served, ","))

	// Through nginx alone: create, poll and answer land on several replicas.
	created, createdOn := taskRequest(t, proxyURL, "tools/call", "task_confirm", map[string]any{"name": "task_confirm", "arguments": map[string]any{}})
	_, polledOn := waitTask(t, proxyURL, created.TaskID, "input_required", 10*time.Second)
	_, answeredOn := taskRequest(t, proxyURL, "tasks/update", created.TaskID, map[string]any{"taskId": created.TaskID, "inputResponses": map[string]any{
		"r1/ok": map[string]any{"action": "decline"}}})
	v, more := waitTask(t, proxyURL, created.TaskID, "completed", 10*time.Second)
	all := append(append([]string{createdOn}, polledOn...), append([]string{answeredOn}, more...)...)
	require.GreaterOrEqual(t, len(distinct(all)), 2, "every request of the task landed on %v: nginx should spread them", all)
	t.Logf("task %s through nginx: served by %v: %s", created.TaskID, all, v.Result.text())
}

// startVictimTask starts a slow task on the replica about to be killed.
func startVictimTask(t *testing.T, victim *replica) string {
	t.Helper()
	v, rep := taskRequest(t, victim.url, "tools/call", "task_slow", map[string]any{"name": "task_slow", "arguments": map[string]any{"ms": 1500}})
	require.Equal(t, "task", v.ResultType, "task_slow on %s: %+v", victim.name, v)
	require.Equal(t, victim.name, rep, "task_slow on %s answered by", victim.name)
	return v.TaskID
}

// checkVictimTask: the task of the killed replica is taken over by
// another once its lease lapses, and completes there.
func checkVictimTask(t *testing.T, victim *replica, id string) {
	t.Helper()
	v, served := waitTask(t, proxyURL, id, "completed", 20*time.Second)
	require.NotNil(t, v.Result, "the task of the killed replica")
	require.True(t, strings.HasPrefix(v.Result.text(), "finished="), "the task of the killed replica: %+v", v.Result)
	require.NotEqual(t, "finished="+victim.name, v.Result.text(), "the task of the killed replica finished on it")
	t.Logf("task %s of the killed replica %s: taken over, %s (polled on %v)", id, victim.name, v.Result.text(), served)
}
