package client_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mrtrkit/mrtrkit/client"
	"github.com/mrtrkit/mrtrkit/mrtr"
	"github.com/mrtrkit/mrtrkit/mrtr/legacy"
	"github.com/mrtrkit/mrtrkit/mrtr/mrtrtest"
	"github.com/mrtrkit/mrtrkit/transport/streamablehttp"
)

// testPoll is the pollIntervalMs the task servers of these tests ask for.
const testPoll = 40 * time.Millisecond

// taskSeen is one request a server received.
type taskSeen struct {
	at     time.Time
	method string
	taskID string
	// declared: the request's clientCapabilities declared the Tasks
	// extension.
	declared bool
}

// recorder notes every request that reaches a server.
type recorder struct {
	mu   sync.Mutex
	reqs []taskSeen
}

func (r *recorder) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		req.Body = io.NopCloser(bytes.NewReader(body))
		var m struct {
			Method string `json:"method"`
			Params struct {
				TaskID string `json:"taskId"`
				Meta   struct {
					Caps struct {
						Extensions map[string]json.RawMessage `json:"extensions"`
					} `json:"io.modelcontextprotocol/clientCapabilities"`
				} `json:"_meta"`
			} `json:"params"`
		}
		if json.Unmarshal(body, &m) == nil && m.Method != "" {
			_, declared := m.Params.Meta.Caps.Extensions[mrtr.TasksExtension]
			r.mu.Lock()
			r.reqs = append(r.reqs, taskSeen{at: time.Now(), method: m.Method, taskID: m.Params.TaskID, declared: declared})
			r.mu.Unlock()
		}
		h.ServeHTTP(w, req)
	})
}

// of returns the requests for method, in order.
func (r *recorder) of(method string) []taskSeen {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []taskSeen
	for _, s := range r.reqs {
		if s.method == method {
			out = append(out, s)
		}
	}
	return out
}

// taskTools registers the tools of the task tests on srv.
func taskTools(t *testing.T, srv *mrtr.Server) {
	t.Helper()
	optional := mrtr.TaskSupport(mrtr.TaskOptional)
	args := func(req *mrtr.Request) (a struct {
		MS    int    `json:"ms"`
		Label string `json:"label"`
	}) {
		_ = json.Unmarshal(req.Arguments, &a)
		return a
	}
	sleep := func(ctx context.Context, d time.Duration) error {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(d):
			return nil
		}
	}
	confirm := func(key string) *mrtr.ElicitRequest {
		return &mrtr.ElicitRequest{Message: "Sure?", RequestedSchema: &mrtr.ElicitSchema{Type: "object",
			Properties: map[string]json.RawMessage{"confirm": json.RawMessage(`{"type":"boolean"}`)}}}
	}
	for _, tool := range []struct {
		name string
		h    mrtr.HandlerFunc
		opts []mrtr.RegisterOption
	}{
		{"compute", func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
			a := args(req)
			if err := sleep(ctx, time.Duration(a.MS)*time.Millisecond); err != nil {
				return nil, err
			}
			return mrtr.TextResult("computed " + a.Label), nil
		}, []mrtr.RegisterOption{optional}},
		{"confirm", func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
			ans, err := mrtr.Elicit(ctx, req, "confirm", confirm("confirm"))
			if err != nil {
				return nil, err
			}
			if ok, _ := ans.Content["confirm"].(bool); ans.Accepted() && ok {
				return mrtr.TextResult("deleted " + args(req).Label), nil
			}
			return mrtr.TextResult("kept " + args(req).Label), nil
		}, []mrtr.RegisterOption{optional}},
		{"boom", func(context.Context, *mrtr.Request) (mrtr.Result, error) {
			return nil, mrtr.NewError(mrtr.CodeInternalError, "boom on purpose", nil)
		}, []mrtr.RegisterOption{optional}},
		{"hang", func(ctx context.Context, _ *mrtr.Request) (mrtr.Result, error) {
			<-ctx.Done()
			return nil, ctx.Err()
		}, []mrtr.RegisterOption{optional}},
		{"pester", func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
			for i := 0; ; i++ {
				if _, err := mrtr.Elicit(ctx, req, fmt.Sprintf("q%d", i), confirm("again")); err != nil {
					return nil, err
				}
			}
		}, []mrtr.RegisterOption{optional}},
		{"named", func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
			ans, err := mrtr.Elicit(ctx, req, "name", &mrtr.ElicitRequest{Message: "Name?", RequestedSchema: &mrtr.ElicitSchema{Type: "object",
				Properties: map[string]json.RawMessage{"name": json.RawMessage(`{"type":"string"}`)}}})
			if err != nil {
				return nil, err
			}
			if err := mrtr.Detach(ctx, req); err != nil {
				return nil, err
			}
			return mrtr.TextResult(fmt.Sprintf("hello %v from a task", ans.Content["name"])), nil
		}, []mrtr.RegisterOption{mrtr.TaskSupport(mrtr.TaskRequired, mrtr.DetachInHandler())}},
		{"sync", func(context.Context, *mrtr.Request) (mrtr.Result, error) {
			return mrtr.TextResult("at once"), nil
		}, nil},
	} {
		require.NoError(t, srv.AddTool(mrtr.Tool{Name: tool.name}, tool.h, tool.opts...))
	}
}

// taskServer serves an mrtrkit server with the Tasks extension (when
// withTasks) and the task tools over Streamable HTTP, both eras, and
// records what reaches it.
func taskServer(t *testing.T, withTasks bool, opts ...mrtr.TasksOption) (string, *recorder) {
	t.Helper()
	var sopts []mrtr.Option
	if withTasks {
		sopts = append(sopts, mrtr.WithTasks(append([]mrtr.TasksOption{mrtr.TaskPollInterval(testPoll)}, opts...)...))
	}
	srv := mrtrtest.NewServer(t, "tasks", sopts...)
	taskTools(t, srv)
	eng, err := legacy.New(srv)
	require.NoError(t, err)
	h, err := streamablehttp.New(srv, streamablehttp.WithLegacy(eng), streamablehttp.WithLogger(mrtrtest.TestLogger(t)))
	require.NoError(t, err)
	rec := &recorder{}
	ts := httptest.NewServer(rec.wrap(h))
	t.Cleanup(func() {
		ts.Close()
		srv.Close()
		srv.WaitTasks()
	})
	return ts.URL + "/mcp", rec
}

// confirmYes accepts every elicitation with confirm: true.
var confirmYes mrtr.ElicitFunc = func(ctx context.Context, r *mrtr.ElicitRequest) (*mrtr.ElicitResult, error) {
	return &mrtr.ElicitResult{Action: mrtr.Accepted, Content: map[string]any{"confirm": true, "name": "Ada"}}, nil
}

func connectTasks(t *testing.T, url string, opts ...client.Option) *client.Client {
	t.Helper()
	c, err := client.Connect(ctxT(t), client.HTTP(url), append([]client.Option{client.OnElicitation(confirmYes)}, opts...)...)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// assertPolledSlowly checks that no tasks/get of task id came sooner
// than testPoll after the request before it about the task.
func assertPolledSlowly(t *testing.T, rec *recorder, id string) {
	t.Helper()
	var last time.Time
	gets := 0
	rec.mu.Lock()
	defer rec.mu.Unlock()
	for _, s := range rec.reqs {
		switch {
		case s.method == "tools/call":
			last = s.at // the creation (ids of tools/call are not recorded)
		case s.taskID == id && s.method == mrtr.MethodTasksGet:
			gets++
			assert.GreaterOrEqual(t, s.at.Sub(last), testPoll, "tasks/get %d came sooner than pollIntervalMs", gets)
			last = s.at
		case s.taskID == id:
			last = s.at
		}
	}
	assert.Positive(t, gets)
}

// A task from creation to result, step by step and with AsTask: the
// request declares the extension, the task reports the server's poll
// interval, and the client never polls faster.
func TestTaskCreatePollResult(t *testing.T) {
	url, rec := taskServer(t, true)
	c := connectTasks(t, url)
	require.True(t, c.SupportsTasks())

	task, err := c.CreateTask(ctxT(t), "compute", map[string]any{"ms": 150, "label": "pi"})
	require.NoError(t, err)
	require.NotEmpty(t, task.ID)
	assert.Equal(t, mrtr.TaskWorking, task.Status)
	assert.Equal(t, testPoll, task.PollInterval)
	assert.Equal(t, mrtr.DefaultTaskTTL, task.TTL)
	assert.False(t, task.CreatedAt.IsZero())
	assert.False(t, task.Done())
	calls := rec.of("tools/call")
	require.Len(t, calls, 1)
	assert.True(t, calls[0].declared, "CreateTask declares the Tasks extension")

	res, err := c.AwaitTask(ctxT(t), task)
	require.NoError(t, err)
	assert.Equal(t, "computed pi", res.Text())
	gets := rec.of(mrtr.MethodTasksGet)
	assert.GreaterOrEqual(t, len(gets), 2, "a 150ms task polled every 40ms")
	for _, g := range gets {
		assert.True(t, g.declared, "tasks/get declares the extension")
	}
	assertPolledSlowly(t, rec, task.ID)

	got, err := c.GetTask(ctxT(t), task.ID)
	require.NoError(t, err)
	assert.True(t, got.Done())
	assert.Equal(t, "computed pi", got.Result.Text())

	// The same through CallTool.
	res, err = c.CallTool(ctxT(t), "compute", map[string]any{"ms": 100, "label": "e"}, client.AsTask())
	require.NoError(t, err)
	assert.Equal(t, "computed e", res.Text())
	assert.GreaterOrEqual(t, len(rec.of(mrtr.MethodTasksGet)), len(gets)+2)

	// Without AsTask the same tool answers at once, and the request
	// declares no extension.
	res, err = c.CallTool(ctxT(t), "compute", map[string]any{"ms": 0, "label": "sync"})
	require.NoError(t, err)
	assert.Equal(t, "computed sync", res.Text())
	calls = rec.of("tools/call")
	assert.False(t, calls[len(calls)-1].declared)
}

// A context ends the wait between polls.
func TestTaskAwaitContext(t *testing.T) {
	url, _ := taskServer(t, true)
	c := connectTasks(t, url)
	task, err := c.CreateTask(ctxT(t), "hang", nil)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(ctxT(t), 150*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err = c.AwaitTask(ctx, task)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Less(t, time.Since(start), 2*time.Second)
	var e *client.Error
	require.ErrorAs(t, err, &e)
	assert.Equal(t, task.ID, e.TaskID)
	// AwaitTask leaves the task running.
	got, err := c.GetTask(ctxT(t), task.ID)
	require.NoError(t, err)
	assert.Equal(t, mrtr.TaskWorking, got.Status)
	require.NoError(t, c.CancelTask(ctxT(t), task.ID))
}

// input_required inside a task: tasks/get lists the question, the
// client's OnElicitation answers it, tasks/update carries the answer.
func TestTaskInputRequired(t *testing.T) {
	url, rec := taskServer(t, true)
	c := connectTasks(t, url)

	res, err := c.CallTool(ctxT(t), "confirm", map[string]any{"label": "a.txt"}, client.AsTask())
	require.NoError(t, err)
	assert.Equal(t, "deleted a.txt", res.Text())
	assert.Equal(t, 1, res.Rounds)
	assert.Equal(t, [][]string{{"r1/confirm"}}, res.Asked)
	require.Len(t, rec.of(mrtr.MethodTasksUpdate), 1)

	// Step by step.
	task, err := c.CreateTask(ctxT(t), "confirm", map[string]any{"label": "b.txt"})
	require.NoError(t, err)
	for task.Status != mrtr.TaskInputRequired {
		time.Sleep(task.PollInterval)
		task, err = c.GetTask(ctxT(t), task.ID)
		require.NoError(t, err)
	}
	require.Contains(t, task.InputRequests, "r1/confirm")
	assert.Contains(t, string(task.InputRequests["r1/confirm"]), `"elicitation/create"`)
	require.NoError(t, c.AnswerTask(ctxT(t), task))
	res, err = c.AwaitTask(ctxT(t), task)
	require.NoError(t, err)
	assert.Equal(t, "deleted b.txt", res.Text())
}

// A question no function answers: AwaitTask says so and leaves the task;
// CallTool with AsTask cancels it.
func TestTaskUnanswerable(t *testing.T) {
	url, rec := taskServer(t, true)
	// It declares elicitation, so the server asks, but has no function.
	c, err := client.Connect(ctxT(t), client.HTTP(url), client.WithCapabilities(mrtr.ClientCapabilities{Elicitation: &mrtr.ElicitCapability{}}))
	require.NoError(t, err)
	defer c.Close()
	_, err = c.CallTool(ctxT(t), "confirm", nil, client.AsTask())
	require.ErrorIs(t, err, client.ErrUnanswered)
	var e *client.Error
	require.ErrorAs(t, err, &e)
	assert.Equal(t, mrtr.MethodTasksUpdate, e.Method)
	require.NotEmpty(t, e.TaskID)
	cancels := rec.of(mrtr.MethodTasksCancel)
	require.Len(t, cancels, 1, "the orphaned task is cancelled")
	assert.Equal(t, e.TaskID, cancels[0].taskID)
	got, err := c.GetTask(ctxT(t), e.TaskID)
	require.NoError(t, err)
	assert.Equal(t, mrtr.TaskCancelled, got.Status)
}

// The round limit holds inside a task.
func TestTaskRoundLimit(t *testing.T) {
	url, rec := taskServer(t, true)
	c := connectTasks(t, url, client.WithMaxRounds(2))
	_, err := c.CallTool(ctxT(t), "pester", nil, client.AsTask())
	require.ErrorIs(t, err, client.ErrTooManyRounds)
	assert.Len(t, rec.of(mrtr.MethodTasksUpdate), 2)
	assert.Len(t, rec.of(mrtr.MethodTasksCancel), 1)
}

// A task that fails is an error naming the server, the method, the tool,
// the task and what the server said.
func TestTaskFailed(t *testing.T) {
	url, _ := taskServer(t, true)
	c := connectTasks(t, url)
	_, err := c.CallTool(ctxT(t), "boom", nil, client.AsTask())
	require.ErrorIs(t, err, client.ErrTaskFailed)
	assert.Equal(t, int(mrtr.CodeInternalError), client.CodeOf(err))
	var e *client.Error
	require.ErrorAs(t, err, &e)
	assert.Equal(t, url, e.Server)
	assert.Equal(t, mrtr.MethodTasksGet, e.Method)
	assert.Equal(t, "boom", e.Name)
	require.NotEmpty(t, e.TaskID)
	assert.Contains(t, err.Error(), url)
	assert.Contains(t, err.Error(), `tasks/get "boom" task "`+e.TaskID+`"`)
	assert.Contains(t, err.Error(), "boom on purpose")

	task, err := c.GetTask(ctxT(t), e.TaskID)
	require.NoError(t, err)
	assert.Equal(t, mrtr.TaskFailed, task.Status)
	require.NotNil(t, task.Error)
	assert.Equal(t, "boom on purpose", task.Error.Message)
}

// A cancelled task: CancelTask ends it, AwaitTask reports it, and a
// CallTool with AsTask whose context ends cancels its task.
func TestTaskCancelled(t *testing.T) {
	url, rec := taskServer(t, true)
	c := connectTasks(t, url)
	task, err := c.CreateTask(ctxT(t), "hang", nil)
	require.NoError(t, err)
	require.NoError(t, c.CancelTask(ctxT(t), task.ID))
	_, err = c.AwaitTask(ctxT(t), task)
	require.ErrorIs(t, err, client.ErrTaskCancelled)
	assert.Contains(t, err.Error(), "cancelled at the client's request")
	var e *client.Error
	require.ErrorAs(t, err, &e)
	assert.Equal(t, task.ID, e.TaskID)
	// Cancelling an ended task is acknowledged; it stays cancelled.
	require.NoError(t, c.CancelTask(ctxT(t), task.ID))

	ctx, cancel := context.WithTimeout(ctxT(t), 200*time.Millisecond)
	defer cancel()
	_, err = c.CallTool(ctx, "hang", nil, client.AsTask())
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.ErrorAs(t, err, &e)
	cancels := rec.of(mrtr.MethodTasksCancel)
	require.Len(t, cancels, 3)
	assert.Equal(t, e.TaskID, cancels[2].taskID)
	require.Eventually(t, func() bool {
		got, err := c.GetTask(ctxT(t), e.TaskID)
		return err == nil && got.Status == mrtr.TaskCancelled
	}, 5*time.Second, 20*time.Millisecond)
}

// Unknown and expired task ids are ErrUnknownTask, on every task method.
func TestTaskUnknownAndExpired(t *testing.T) {
	url, _ := taskServer(t, true, mrtr.TaskTTL(time.Second))
	c := connectTasks(t, url)
	_, err := c.GetTask(ctxT(t), "no-such-task")
	require.ErrorIs(t, err, client.ErrUnknownTask)
	assert.Equal(t, client.CodeInvalidParams, client.CodeOf(err))
	var e *client.Error
	require.ErrorAs(t, err, &e)
	assert.Equal(t, "no-such-task", e.TaskID)
	assert.Equal(t, mrtr.MethodTasksGet, e.Method)
	require.ErrorIs(t, c.CancelTask(ctxT(t), "no-such-task"), client.ErrUnknownTask)

	task, err := c.CreateTask(ctxT(t), "compute", map[string]any{"label": "brief"})
	require.NoError(t, err)
	res, err := c.AwaitTask(ctxT(t), task)
	require.NoError(t, err)
	assert.Equal(t, "computed brief", res.Text())
	done, err := c.GetTask(ctxT(t), task.ID)
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		_, err := c.GetTask(ctxT(t), task.ID)
		return errors.Is(err, client.ErrUnknownTask)
	}, 5*time.Second, 50*time.Millisecond, "the task expires after its TTL")
	res, err = c.AwaitTask(ctxT(t), done)
	require.NoError(t, err, "a completed Task needs no server")
	assert.Equal(t, "computed brief", res.Text())
	_, err = c.AwaitTask(ctxT(t), task) // as it was: working
	require.ErrorIs(t, err, client.ErrUnknownTask)

	_, err = c.GetTask(ctxT(t), "")
	require.Error(t, err)
}

// A server without the extension: nothing is sent, ErrTasksUnsupported
// names the extension. A server of the initialize era never declares it.
func TestTaskServerWithoutExtension(t *testing.T) {
	url, rec := taskServer(t, false)
	c := connectTasks(t, url)
	assert.False(t, c.SupportsTasks())
	_, err := c.CreateTask(ctxT(t), "compute", nil)
	require.ErrorIs(t, err, client.ErrTasksUnsupported)
	assert.Contains(t, err.Error(), mrtr.TasksExtension)
	_, err = c.CallTool(ctxT(t), "compute", nil, client.AsTask())
	require.ErrorIs(t, err, client.ErrTasksUnsupported)
	_, err = c.GetTask(ctxT(t), "some-id")
	require.ErrorIs(t, err, client.ErrTasksUnsupported)
	require.ErrorIs(t, c.CancelTask(ctxT(t), "some-id"), client.ErrTasksUnsupported)
	assert.Empty(t, rec.of("tools/call"))
	assert.Empty(t, rec.of(mrtr.MethodTasksGet))
	assert.Empty(t, rec.of(mrtr.MethodTasksCancel))

	url, _ = taskServer(t, true)
	old := connectTasks(t, url, client.WithProtocolVersion(client.LegacyVersion))
	assert.False(t, old.SupportsTasks())
	_, err = old.CallTool(ctxT(t), "compute", nil, client.AsTask())
	require.ErrorIs(t, err, client.ErrTasksUnsupported)
}

// A tool the server answers at once gives a Task without id that holds
// the result; MRTR rounds before the task begins are answered as rounds
// of the call.
func TestTaskSyncAnswerAndRoundsBeforeTask(t *testing.T) {
	url, _ := taskServer(t, true)
	c := connectTasks(t, url)
	task, err := c.CreateTask(ctxT(t), "sync", nil)
	require.NoError(t, err)
	assert.Empty(t, task.ID)
	assert.True(t, task.Done())
	assert.Equal(t, "at once", task.Result.Text())
	res, err := c.CallTool(ctxT(t), "sync", nil, client.AsTask())
	require.NoError(t, err)
	assert.Equal(t, "at once", res.Text())

	res, err = c.CallTool(ctxT(t), "named", nil, client.AsTask())
	require.NoError(t, err)
	assert.Equal(t, "hello Ada from a task", res.Text())
	assert.Equal(t, 1, res.Rounds, "the MRTR round before the task")
	assert.Equal(t, [][]string{{"name"}}, res.Asked)

	// A tool that runs only as a task refuses a call that does not
	// declare the extension.
	_, err = c.CallTool(ctxT(t), "named", nil)
	assert.Equal(t, client.CodeMissingCapability, client.CodeOf(err))
}

// WithCapabilities keeps what it declares and gains the extension on
// task requests.
func TestTaskWithExplicitCapabilities(t *testing.T) {
	url, _ := taskServer(t, true)
	c := connectTasks(t, url, client.WithCapabilities(mrtr.ClientCapabilities{
		Elicitation: &mrtr.ElicitCapability{},
		Extensions:  map[string]mrtr.Object{"com.example/other": {}},
	}))
	res, err := c.CallTool(ctxT(t), "confirm", map[string]any{"label": "c.txt"}, client.AsTask())
	require.NoError(t, err)
	assert.Equal(t, "deleted c.txt", res.Text())
}

// Listen with TaskIDs declares the extension and delivers
// notifications/tasks with the task's new state.
func TestTaskListen(t *testing.T) {
	url, rec := taskServer(t, true)
	c := connectTasks(t, url)
	task, err := c.CreateTask(ctxT(t), "hang", nil)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(ctxT(t))
	defer cancel()
	got := make(chan client.Notification, 8)
	done := make(chan error, 1)
	go func() {
		done <- c.Listen(ctx, client.ListenFilter{TaskIDs: []string{task.ID}}, func(n client.Notification) { got <- n })
	}()
	var ack client.Notification
	select {
	case ack = <-got:
	case err := <-done:
		t.Fatalf("Listen ended: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("no acknowledgement")
	}
	require.Equal(t, "notifications/subscriptions/acknowledged", ack.Method)
	assert.Contains(t, string(ack.Params), task.ID, "the server honours the task")
	listens := rec.of("subscriptions/listen")
	require.Len(t, listens, 1)
	assert.True(t, listens[0].declared)

	require.NoError(t, c.CancelTask(ctxT(t), task.ID))
	for {
		select {
		case n := <-got:
			require.Equal(t, "notifications/tasks", n.Method)
			var st struct{ TaskID, Status string }
			require.NoError(t, json.Unmarshal(n.Params, &st))
			require.Equal(t, task.ID, st.TaskID)
			if st.Status != mrtr.TaskCancelled {
				continue
			}
			cancel()
			require.ErrorIs(t, <-done, context.Canceled)
			return
		case <-time.After(10 * time.Second):
			t.Fatal("no notifications/tasks saying cancelled")
		}
	}
}

// The questions of a task are rounds of the call: the RoundWatch sees
// them, numbered after the rounds before the task, and the answer
// functions learn their keys.
func TestTaskRoundsAreWatched(t *testing.T) {
	url, _ := taskServer(t, true)
	var keys []string
	c := connectTasks(t, url, client.OnElicitation(func(ctx context.Context, r *mrtr.ElicitRequest) (*mrtr.ElicitResult, error) {
		keys = append(keys, client.InputKey(ctx))
		return confirmYes(ctx, r)
	}))
	var asked []string
	w := client.WithRoundWatch(&client.RoundWatch{
		Asked: func(r *client.Round) {
			for _, q := range r.Requests {
				asked = append(asked, fmt.Sprintf("%d:%s:%s", r.N, q.Key, q.Method))
			}
		},
		Done: func(r *client.Round, err error) { assert.NoError(t, err) },
	})
	res, err := c.CallTool(ctxT(t), "confirm", map[string]any{"label": "a.txt"}, client.AsTask(), w)
	require.NoError(t, err)
	assert.Equal(t, "deleted a.txt", res.Text())
	assert.Equal(t, []string{"1:r1/confirm:elicitation/create"}, asked)
	assert.Equal(t, []string{"r1/confirm"}, keys)

	// CreateTask and AwaitTask: the same, the watch given to AwaitTask.
	asked, keys = nil, nil
	task, err := c.CreateTask(ctxT(t), "confirm", map[string]any{"label": "b.txt"})
	require.NoError(t, err)
	res, err = c.AwaitTask(ctxT(t), task, w)
	require.NoError(t, err)
	assert.Equal(t, "deleted b.txt", res.Text())
	assert.Equal(t, []string{"1:r1/confirm:elicitation/create"}, asked)
	assert.Equal(t, []string{"r1/confirm"}, keys)
}
