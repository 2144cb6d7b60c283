package mrtr_test

import (
	"context"
	"encoding/json"
	"runtime"
	"strconv"
	"testing"

	"github.com/mrtrkit/mrtrkit/mrtr"
	"github.com/stretchr/testify/require"
)

func benchTaskServer(b *testing.B, opts ...mrtr.TasksOption) *fixture {
	fx := newFixture(b, mrtr.WithLogger(discardLogger), mrtr.WithTasks(opts...))
	add := func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
		var args struct{ A, B int }
		if err := json.Unmarshal(req.Arguments, &args); err != nil {
			return nil, err
		}
		return mrtr.TextResult("sum"), nil
	}
	fx.addTool("add", add)
	fx.addTool("add_task", add, mrtr.TaskSupport(mrtr.TaskOptional))
	fx.addTool("confirm", func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
		a, err := mrtr.Elicit(ctx, req, "ok", nameForm("Proceed?"))
		if err != nil {
			return nil, err
		}
		return mrtr.TextResult(string(a.Action)), nil
	}, mrtr.TaskSupport(mrtr.TaskOptional))
	return fx
}

var capsTaskBench = obj{"elicitation": obj{}, "extensions": obj{mrtr.TasksExtension: obj{}}}

// BenchmarkToolsCallTaskSupportUndeclared is a tools/call of a tool that
// supports tasks from a client that does not declare the extension (it
// runs synchronously); compare with BenchmarkToolsCallNoTaskSupport on
// the same server.
func BenchmarkToolsCallTaskSupportUndeclared(b *testing.B) {
	benchToolsCall(b, "add_task")
}

// BenchmarkToolsCallNoTaskSupport is the same call of a tool without task
// support.
func BenchmarkToolsCallNoTaskSupport(b *testing.B) {
	benchToolsCall(b, "add")
}

func benchToolsCall(b *testing.B, tool string) {
	fx := benchTaskServer(b)
	body := []byte(request("tools/call", obj{"_meta": meta(capsNone), "name": tool, "arguments": obj{"a": 1, "b": 2}}))
	buf := make([]byte, 0, 1024)
	b.ReportAllocs()
	for b.Loop() {
		buf = benchServe(b, fx.srv, body, buf, false)
	}
}

// BenchmarkTaskCreateAndGet is the latency of creating a task (the
// record sealed and stored before the answer) and its first tasks/get,
// in process, on the default in-process bus.
func BenchmarkTaskCreateAndGet(b *testing.B) {
	fx := benchTaskServer(b, mrtr.TaskLimits(1<<30, mrtr.DefaultMaxTaskRecord))
	create := []byte(request("tools/call", obj{"_meta": meta(capsTaskBench), "name": "confirm", "arguments": obj{"file": "a.txt"}}))
	buf := make([]byte, 0, 1024)
	b.ReportAllocs()
	for b.Loop() {
		buf = benchServe(b, fx.srv, create, buf, false)
		var r struct {
			Result struct {
				TaskID string `json:"taskId"`
			} `json:"result"`
		}
		// testify only on failure, as in benchServe.
		if err := json.Unmarshal(buf, &r); err != nil || r.Result.TaskID == "" {
			require.NoError(b, err, "%s", buf)
			require.NotEmpty(b, r.Result.TaskID, "no task created: %s", buf)
		}
		get := []byte(request("tasks/get", obj{"_meta": meta(capsTaskBench), "taskId": r.Result.TaskID}))
		buf = benchServe(b, fx.srv, get, buf, false)
	}
	b.StopTimer()
	fx.srv.WaitTasks()
}

// BenchmarkTaskMemory reports the heap a task waiting for input holds
// (its sealed record on the in-process bus, its claims and lease, and the
// per-caller bookkeeping), per task, over 2,000 tasks.
func BenchmarkTaskMemory(b *testing.B) {
	const n = 2000
	for b.Loop() {
		fx := benchTaskServer(b, mrtr.TaskLimits(1<<30, mrtr.DefaultMaxTaskRecord))
		buf := make([]byte, 0, 1024)
		var ids []string
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for i := range n {
			body := []byte(request("tools/call", obj{"_meta": meta(capsTaskBench), "name": "confirm", "arguments": obj{"file": "f" + strconv.Itoa(i) + ".txt"}}))
			buf = benchServe(b, fx.srv, body, buf, false)
			var r struct {
				Result struct {
					TaskID string `json:"taskId"`
				} `json:"result"`
			}
			_ = json.Unmarshal(buf, &r)
			ids = append(ids, r.Result.TaskID)
		}
		fx.srv.WaitTasks() // every task is now input_required
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/n, "B/task")
		// Every task is still there, waiting for its answer.
		get := []byte(request("tasks/get", obj{"_meta": meta(capsTaskBench), "taskId": ids[0]}))
		buf = benchServe(b, fx.srv, get, buf, false)
		var r struct {
			Result struct {
				Status string `json:"status"`
			} `json:"result"`
		}
		if err := json.Unmarshal(buf, &r); err != nil || r.Result.Status != mrtr.TaskInputRequired {
			require.NoError(b, err, "first task: %s", buf)
			require.Equal(b, mrtr.TaskInputRequired, r.Result.Status, "first task: %s", buf)
		}
		b.ReportMetric(float64(len(buf)), "B/get")
		runtime.KeepAlive(ids)
	}
}
