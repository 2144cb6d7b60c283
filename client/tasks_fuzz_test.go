package client

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mrtrkit/mrtrkit/mrtr"
)

// FuzzDecodeTask feeds untrusted task descriptions to the decoder: what
// it accepts has an id, a known status, a result exactly when completed,
// and durations that did not overflow.
func FuzzDecodeTask(f *testing.F) {
	f.Add([]byte(`{"resultType":"task","taskId":"t1","status":"working","createdAt":"2026-07-28T10:00:00Z","lastUpdatedAt":"2026-07-28T10:00:00Z","ttlMs":3600000,"pollIntervalMs":500}`))
	f.Add([]byte(`{"taskId":"t1","status":"input_required","inputRequests":{"r1/k":{"method":"elicitation/create","params":{}}},"ttlMs":null}`))
	f.Add([]byte(`{"taskId":"t1","status":"completed","result":{"content":[{"type":"text","text":"hi"}]}}`))
	f.Add([]byte(`{"taskId":"t1","status":"failed","error":{"code":-32603,"message":"boom"}}`))
	f.Add([]byte(`{"taskId":"t1","status":"cancelled","pollIntervalMs":1e300}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		task, err := decodeTask(b)
		if err != nil {
			return
		}
		if task.ID == "" {
			t.Fatal("a task without id")
		}
		switch task.Status {
		case mrtr.TaskWorking, mrtr.TaskInputRequired, mrtr.TaskCompleted, mrtr.TaskFailed, mrtr.TaskCancelled:
		default:
			t.Fatalf("unknown status %q accepted", task.Status)
		}
		if (task.Result != nil) != (task.Status == mrtr.TaskCompleted) {
			t.Fatal("a result on a task that is not completed, or none on one that is")
		}
		if task.PollInterval < 0 || task.TTL < 0 || pollInterval(task) <= 0 || pollInterval(task) > maxTaskPollInterval {
			t.Fatalf("durations out of range: poll %v, ttl %v", task.PollInterval, task.TTL)
		}
	})
}

// The server's milliseconds become durations without overflow, and a
// missing or useless interval means the default.
func TestTaskDurations(t *testing.T) {
	ms := func(v float64) *float64 { return &v }
	assert.Equal(t, time.Duration(0), millis(nil))
	assert.Equal(t, time.Duration(0), millis(ms(-5)))
	assert.Equal(t, 1500*time.Microsecond, millis(ms(1.5)))
	assert.Positive(t, millis(ms(1e300)))
	assert.Equal(t, DefaultTaskPollInterval, pollInterval(&Task{}))
	assert.Equal(t, maxTaskPollInterval, pollInterval(&Task{PollInterval: millis(ms(1e300))}))
	assert.Equal(t, 250*time.Millisecond, pollInterval(&Task{PollInterval: 250 * time.Millisecond}))
}

// Declaring the extension keeps every other capability.
func TestWithTasksExtension(t *testing.T) {
	got := withTasksExtension(json.RawMessage(`{"elicitation":{"form":{}},"extensions":{"com.example/x":{"a":1}}}`))
	var m map[string]map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(got, &m))
	assert.JSONEq(t, `{"form":{}}`, string(mustJSON(m["elicitation"])))
	assert.JSONEq(t, `{"a":1}`, string(m["extensions"]["com.example/x"]))
	assert.JSONEq(t, `{}`, string(m["extensions"][mrtr.TasksExtension]))
	assert.JSONEq(t, `{"extensions":{"io.modelcontextprotocol/tasks":{}}}`, string(withTasksExtension(json.RawMessage(`{}`))))
}
