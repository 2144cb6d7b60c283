package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/mrtrkit/mrtrkit/internal/wire"
	"github.com/mrtrkit/mrtrkit/mrtr"
)

// The Tasks extension (SEP-2663, io.modelcontextprotocol/tasks) lets a
// server answer a tools/call with a task instead of a result: the client
// polls the task with tasks/get at the interval the server asks for,
// answers the questions the task asks with tasks/update, and may cancel
// it with tasks/cancel. A server runs a call as a task only when the
// request declares the extension in its client capabilities.
//
// There are two ways in:
//
//   - CallTool with AsTask: the call declares the extension, and when the
//     server makes it a task CallTool follows the task to its end and
//     returns the tool's result, as for a synchronous call. The task has
//     no handle outside the call, so a call that gives up (its context
//     ends, a question has no answer) cancels it.
//   - CreateTask, then AwaitTask or GetTask, AnswerTask and CancelTask:
//     the caller holds the task and its id, which outlive the call (and
//     the Client). AwaitTask stops waiting when its context ends; the task
//     goes on until the caller cancels it.
//
// The questions of a task are answered by the functions that answer the
// input-required rounds of any call: OnSampling, OnElicitation and
// OnRoots.

// Sentinel errors of tasks, matched with errors.Is.
var (
	// ErrTasksUnsupported: the server does not declare the Tasks
	// extension (a server of the initialize era never does). No request
	// was sent.
	ErrTasksUnsupported = errors.New("the server does not declare the Tasks extension (" + mrtr.TasksExtension + ")")
	// ErrUnknownTask: the server knows no task of this caller by that id,
	// or it has expired.
	ErrUnknownTask = errors.New("unknown or expired task")
	// ErrTaskFailed: the task ended with an error, which the *Error's
	// chain holds as an *RPCError when the server gave one.
	ErrTaskFailed = errors.New("the task failed")
	// ErrTaskCancelled: the task ended cancelled.
	ErrTaskCancelled = errors.New("the task was cancelled")
)

// DefaultTaskPollInterval is how long the client waits between two
// tasks/get of a task whose server suggests no pollIntervalMs.
const DefaultTaskPollInterval = time.Second

// maxTaskPollInterval bounds the wait between polls, so that a huge
// pollIntervalMs cannot overflow a time.Duration (the context still
// bounds the whole wait).
const maxTaskPollInterval = 24 * time.Hour

// AsTask declares the Tasks extension on the call. CallTool then runs
// the call as a task when the server makes it one (a tool the server
// always answers at once is answered at once), polls it at the server's
// interval, answers its questions with OnSampling, OnElicitation and
// OnRoots, and returns the tool's result. A task that fails or is
// cancelled is an *Error wrapping ErrTaskFailed or ErrTaskCancelled. When
// CallTool returns before the task has ended (its context ended, a
// question could not be answered, the round limit), it cancels the task
// with tasks/cancel.
//
// CallTool with AsTask fails with ErrTasksUnsupported, sending nothing,
// when the server does not declare the extension. Call with AsTask only
// declares the extension and returns the raw result; GetPrompt and
// ReadResource are never tasks.
func AsTask() CallOption { return callOptionFunc(func(o *callOpts) { o.task = true }) }

// Task is a task as the server last described it: the CreateTaskResult
// of CreateTask, or the answer of a tasks/get.
type Task struct {
	// ID is the task's id (taskId). It is "" when the server answered the
	// call at once instead of running it as a task: Status is then
	// completed and Result holds the result.
	ID string
	// Status is one of mrtr.TaskWorking, mrtr.TaskInputRequired,
	// mrtr.TaskCompleted, mrtr.TaskFailed and mrtr.TaskCancelled.
	Status string
	// StatusMessage is the server's description of the status.
	StatusMessage string
	// CreatedAt and LastUpdatedAt are the server's clock readings (zero
	// when the server sent none it could parse).
	CreatedAt, LastUpdatedAt time.Time
	// TTL is how long after its creation the server keeps the task; 0
	// when the server gave no bound.
	TTL time.Duration
	// PollInterval is the interval between polls the server asks for; 0
	// when it asked for none (AwaitTask then waits
	// DefaultTaskPollInterval).
	PollInterval time.Duration
	// InputRequests are the task's outstanding questions when Status is
	// input_required, by key, each a {method, params} request verbatim.
	InputRequests map[string]json.RawMessage
	// Result is the tool's result when Status is completed.
	Result *ToolResult
	// Error is the server's error when Status is failed (nil when it gave
	// none).
	Error *RPCError
	// Raw is the server's description as it sent it.
	Raw json.RawMessage

	tool string   // the tool, when this client created the task
	ex   Exchange // the rounds of the call before the server created the task
}

// Done reports whether the task has ended: completed, failed or
// cancelled.
func (t *Task) Done() bool {
	switch t.Status {
	case mrtr.TaskCompleted, mrtr.TaskFailed, mrtr.TaskCancelled:
		return true
	}
	return false
}

// SupportsTasks reports whether the server declares the Tasks extension
// (capabilities.extensions of server/discover).
func (c *Client) SupportsTasks() bool {
	c.mu.Lock()
	caps, legacy := c.serverCaps, c.legacy
	c.mu.Unlock()
	if legacy {
		return false
	}
	var s struct {
		Extensions map[string]json.RawMessage `json:"extensions"`
	}
	if json.Unmarshal(caps, &s) != nil {
		return false
	}
	_, ok := s.Extensions[mrtr.TasksExtension]
	return ok
}

// CreateTask calls the tool name with args (as CallTool takes them),
// declaring the Tasks extension, and returns the task the server
// creates, without waiting for it. Input-required rounds the server asks
// before it creates the task are answered as in CallTool. A tool the
// server answers at once gives a Task without ID whose Result holds the
// result. Follow the task with AwaitTask, or GetTask, AnswerTask and
// CancelTask.
func (c *Client) CreateTask(ctx context.Context, name string, args any, opts ...CallOption) (*Task, error) {
	co := callOptions(append(append([]CallOption(nil), opts...), AsTask()))
	return c.createTask(ctx, name, args, co)
}

// createTask is CreateTask with the call's options.
func (c *Client) createTask(ctx context.Context, name string, args any, co *callOpts) (*Task, error) {
	if !c.SupportsTasks() {
		return nil, &Error{Server: c.server, Method: wire.MethodToolsCall, Name: name, Err: ErrTasksUnsupported}
	}
	var ex Exchange
	res, err := c.toolsCall(ctx, name, args, co, &ex)
	if err != nil {
		return nil, err
	}
	var head struct {
		ResultType string `json:"resultType"`
	}
	_ = json.Unmarshal(res, &head)
	if head.ResultType != wire.ResultTask {
		r, err := c.toolResult(name, res, ex)
		if err != nil {
			return nil, err
		}
		return &Task{Status: mrtr.TaskCompleted, Result: r, Raw: res, ex: ex}, nil
	}
	t, err := decodeTask(res)
	if err != nil {
		return nil, &Error{Server: c.server, Method: wire.MethodToolsCall, Name: name, Err: fmt.Errorf("the created task does not decode: %w", err)}
	}
	t.tool, t.ex = name, ex
	return t, nil
}

// GetTask asks the server for the task id's state (tasks/get).
func (c *Client) GetTask(ctx context.Context, id string) (*Task, error) {
	return c.getTask(ctx, id, "", 0, nil)
}

// getTask is GetTask for a task of tool in its round, with the call's
// options.
func (c *Client) getTask(ctx context.Context, id, tool string, round int, co *callOpts) (*Task, error) {
	res, err := c.taskCall(ctx, mrtr.MethodTasksGet, id, tool, round, nil, co)
	if err != nil {
		return nil, err
	}
	t, err := decodeTask(res)
	if err == nil && t.ID != id {
		err = fmt.Errorf("the server described task %q", clip(t.ID, 80))
	}
	if err != nil {
		return nil, &Error{Server: c.server, Method: mrtr.MethodTasksGet, Name: tool, TaskID: id, Round: round, Err: fmt.Errorf("the task does not decode: %w", err)}
	}
	t.tool = tool
	return t, nil
}

// AnswerTask answers the outstanding questions of t (a task in status
// input_required, as GetTask returned it) with the client's functions
// (OnSampling, OnElicitation, OnRoots) and sends the answers with
// tasks/update. It does nothing for a task that asks nothing.
func (c *Client) AnswerTask(ctx context.Context, t *Task) error {
	if t == nil || t.Status != mrtr.TaskInputRequired {
		return nil
	}
	r, err := newRound(1, t.InputRequests, nil)
	if err != nil {
		return &Error{Server: c.server, Method: mrtr.MethodTasksUpdate, Name: t.tool, TaskID: t.ID, Err: err}
	}
	return c.answerTask(ctx, t, r, 0, nil)
}

// answerTask answers the questions of round r of t (the round-th of the
// task; past the round limit it is not answered) and sends the answers
// with tasks/update.
func (c *Client) answerTask(ctx context.Context, t *Task, r *Round, round int, co *callOpts) error {
	if len(r.Requests) == 0 {
		return nil
	}
	fail := func(err error) error {
		return &Error{Server: c.server, Method: mrtr.MethodTasksUpdate, Name: t.tool, TaskID: t.ID, Round: round, Err: err}
	}
	answers, err := c.answerRound(ctx, r, co.roundWatch(), r.N > c.cfg.maxRounds, fail)
	if err != nil {
		return err
	}
	_, err = c.taskCall(ctx, mrtr.MethodTasksUpdate, t.ID, t.tool, round, []member{{"inputResponses", objectOf(answers)}}, co)
	return err
}

// CancelTask asks the server to cancel the task id (tasks/cancel).
// Cancellation is cooperative: the task ends cancelled when its handler
// stops, and a task that has already ended stays as it ended. GetTask
// tells which.
func (c *Client) CancelTask(ctx context.Context, id string) error {
	_, err := c.taskCall(ctx, mrtr.MethodTasksCancel, id, "", 0, nil, nil)
	return err
}

// AwaitTask follows t (from CreateTask or GetTask) to its end: it polls
// the task with tasks/get, never sooner than the interval the server
// last asked for, and answers its questions as AnswerTask does, up to
// the client's round limit (WithMaxRounds), which counts the rounds of
// the call that created the task too. It returns the tool's result,
// whose Exchange counts those rounds and the task's. opts apply to each
// tasks/get and tasks/update it sends (WithMeta), and WithRoundWatch
// shows it the task's questions as rounds. A task that fails or
// is cancelled is an *Error wrapping ErrTaskFailed (and the server's
// *RPCError) or ErrTaskCancelled; an id the server no longer knows,
// ErrUnknownTask. When ctx ends AwaitTask returns its error; the task
// goes on (CancelTask stops it).
func (c *Client) AwaitTask(ctx context.Context, t *Task, opts ...CallOption) (*ToolResult, error) {
	if t == nil {
		return nil, &Error{Server: c.server, Method: mrtr.MethodTasksGet, Err: errors.New("no task")}
	}
	return c.await(ctx, t, callOptions(opts))
}

// await is AwaitTask with the call's options.
func (c *Client) await(ctx context.Context, t *Task, co *callOpts) (*ToolResult, error) {
	answered := map[string]bool{}
	ex := t.ex
	ex.Asked = append([][]string(nil), ex.Asked...)
	rounds := ex.Rounds
	for {
		fail := func(err error) (*ToolResult, error) {
			return nil, &Error{Server: c.server, Method: mrtr.MethodTasksGet, Name: t.tool, TaskID: t.ID, Round: rounds, Err: err}
		}
		switch t.Status {
		case mrtr.TaskCompleted:
			if t.Result == nil {
				return fail(errors.New("the task completed without a result"))
			}
			out := *t.Result
			out.Exchange = ex
			return &out, nil
		case mrtr.TaskFailed:
			if t.Error != nil {
				return fail(fmt.Errorf("%w: %w", ErrTaskFailed, t.Error))
			}
			if t.StatusMessage != "" {
				return fail(fmt.Errorf("%w: %s", ErrTaskFailed, clip(t.StatusMessage, 300)))
			}
			return fail(ErrTaskFailed)
		case mrtr.TaskCancelled:
			if t.StatusMessage != "" {
				return fail(fmt.Errorf("%w: %s", ErrTaskCancelled, clip(t.StatusMessage, 300)))
			}
			return fail(ErrTaskCancelled)
		case mrtr.TaskInputRequired:
			r, err := newRound(ex.Rounds+1, t.InputRequests, answered)
			if err != nil {
				return fail(err)
			}
			if len(r.Requests) > 0 {
				rounds++
				if err := c.answerTask(ctx, t, r, rounds, co); err != nil {
					return nil, err
				}
				ex.add(r)
				for _, q := range r.Requests {
					answered[q.Key] = true
				}
			}
		}
		if t.ID == "" {
			return fail(fmt.Errorf("a task without id in status %q", clip(t.Status, 40)))
		}
		wait := time.NewTimer(pollInterval(t))
		select {
		case <-ctx.Done():
			wait.Stop()
			return fail(ctx.Err())
		case <-wait.C:
		}
		next, err := c.getTask(ctx, t.ID, t.tool, rounds, co)
		if err != nil {
			return nil, err
		}
		next.ex = t.ex
		t = next
	}
}

// pollInterval is how long to wait before polling t again.
func pollInterval(t *Task) time.Duration {
	if t.PollInterval <= 0 {
		return DefaultTaskPollInterval
	}
	return min(t.PollInterval, maxTaskPollInterval)
}

// callAsTask is CallTool with AsTask.
func (c *Client) callAsTask(ctx context.Context, name string, args any, co *callOpts) (*ToolResult, error) {
	t, err := c.createTask(ctx, name, args, co)
	if err != nil {
		return nil, err
	}
	if t.ID == "" {
		return t.Result, nil
	}
	res, err := c.await(ctx, t, co)
	if err != nil && !errors.Is(err, ErrTaskFailed) && !errors.Is(err, ErrTaskCancelled) && !errors.Is(err, ErrUnknownTask) {
		// Nobody else holds the task: stop it rather than leave it
		// running for nobody.
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		_ = c.CancelTask(cctx, t.ID)
		cancel()
	}
	return res, err
}

// taskCall sends one tasks/* request for the task id (of tool, in its
// round, with the call's options co), declaring the extension, with
// Mcp-Name naming the task.
func (c *Client) taskCall(ctx context.Context, method, id, tool string, round int, more []member, co *callOpts) (json.RawMessage, error) {
	fail := func(err error) error {
		return &Error{Server: c.server, Method: method, Name: tool, TaskID: id, Round: round, Err: err}
	}
	if id == "" {
		return nil, fail(errors.New("no task id"))
	}
	if !c.SupportsTasks() {
		return nil, fail(ErrTasksUnsupported)
	}
	tco := callOpts{task: true}
	if co != nil {
		tco = *co
		tco.task = true
	}
	res, err := c.call(ctx, method, id, append([]member{{"taskId", mustJSON(id)}}, more...), nil, &tco, round)
	if err != nil {
		var e *Error
		if errors.As(err, &e) {
			e.Name, e.TaskID, e.Round = tool, id, round
			// An unknown or expired id is -32602 (an update's -32602 may
			// also be about its answers).
			if method != mrtr.MethodTasksUpdate && CodeOf(err) == CodeInvalidParams {
				e.Err = fmt.Errorf("%w: %w", ErrUnknownTask, e.Err)
			}
		}
		return nil, err
	}
	return res, nil
}

// taskWire is a CreateTaskResult or a DetailedTask as the server sends
// it.
type taskWire struct {
	TaskID         *string                    `json:"taskId"`
	Status         string                     `json:"status"`
	StatusMessage  string                     `json:"statusMessage"`
	CreatedAt      string                     `json:"createdAt"`
	LastUpdatedAt  string                     `json:"lastUpdatedAt"`
	TTLMs          *float64                   `json:"ttlMs"`
	PollIntervalMs *float64                   `json:"pollIntervalMs"`
	InputRequests  map[string]json.RawMessage `json:"inputRequests"`
	Result         json.RawMessage            `json:"result"`
	Error          *RPCError                  `json:"error"`
}

// decodeTask reads a task the server described.
func decodeTask(raw json.RawMessage) (*Task, error) {
	var w taskWire
	if err := json.Unmarshal(raw, &w); err != nil {
		return nil, err
	}
	if w.TaskID == nil || *w.TaskID == "" {
		return nil, errors.New("no taskId")
	}
	t := &Task{ID: *w.TaskID, Status: w.Status, StatusMessage: w.StatusMessage, Error: w.Error, Raw: raw,
		TTL: millis(w.TTLMs), PollInterval: millis(w.PollIntervalMs)}
	t.CreatedAt, _ = time.Parse(time.RFC3339Nano, w.CreatedAt)
	t.LastUpdatedAt, _ = time.Parse(time.RFC3339Nano, w.LastUpdatedAt)
	switch w.Status {
	case mrtr.TaskWorking, mrtr.TaskFailed, mrtr.TaskCancelled:
	case mrtr.TaskInputRequired:
		t.InputRequests = w.InputRequests
	case mrtr.TaskCompleted:
		if len(w.Result) == 0 || string(w.Result) == "null" {
			return nil, errors.New("a completed task without result")
		}
		var r ToolResult
		if err := json.Unmarshal(w.Result, &r); err != nil {
			return nil, fmt.Errorf("the result does not decode: %w", err)
		}
		r.Raw = w.Result
		t.Result = &r
	default:
		return nil, fmt.Errorf("unknown status %q", clip(w.Status, 40))
	}
	return t, nil
}

// millis converts a count of milliseconds the server sent: absent,
// negative or not a number is 0, and it is bounded (at about 31 years)
// so that it cannot overflow.
func millis(ms *float64) time.Duration {
	const most = 1e12
	if ms == nil || math.IsNaN(*ms) || *ms <= 0 {
		return 0
	}
	return time.Duration(math.Min(*ms, most) * float64(time.Millisecond))
}

// withTasksExtension returns the client capabilities caps with the Tasks
// extension declared in extensions.
func withTasksExtension(caps json.RawMessage) json.RawMessage {
	m := map[string]json.RawMessage{}
	_ = json.Unmarshal(caps, &m)
	ext := map[string]json.RawMessage{}
	_ = json.Unmarshal(m["extensions"], &ext)
	if _, ok := ext[mrtr.TasksExtension]; !ok {
		ext[mrtr.TasksExtension] = json.RawMessage(`{}`)
	}
	m["extensions"] = mustJSON(ext)
	return mustJSON(m)
}
