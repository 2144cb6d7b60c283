package mrtr

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/mrtrkit/mrtrkit/internal/wire"
	"github.com/mrtrkit/mrtrkit/state"
)

// TasksExtension is the identifier of the Tasks extension (SEP-2663).
const TasksExtension = "io.modelcontextprotocol/tasks"

// Task methods and the result kind of a created task.
const (
	MethodTasksGet    = "tasks/get"
	MethodTasksUpdate = "tasks/update"
	MethodTasksCancel = "tasks/cancel"
	resultTask        = "task"
)

// Task statuses.
const (
	TaskWorking       = "working"
	TaskInputRequired = "input_required"
	TaskCompleted     = "completed"
	TaskFailed        = "failed"
	TaskCancelled     = "cancelled"
)

// Defaults of WithTasks.
const (
	DefaultTaskTTL          = time.Hour
	DefaultTaskPollInterval = 500 * time.Millisecond
	DefaultTasksPerCaller   = 100
	DefaultMaxTaskRecord    = 256 << 10
)

// TaskMode is whether a tool runs as a task (TaskSupport).
type TaskMode uint8

const (
	// TaskForbidden: the tool always answers synchronously (the default).
	TaskForbidden TaskMode = iota
	// TaskOptional: a call whose request declares the Tasks extension
	// runs as a task; others run synchronously.
	TaskOptional
	// TaskRequired: the tool runs only as a task; a request that does not
	// declare the extension gets -32021 naming it.
	TaskRequired
)

type taskConfig struct {
	mode   TaskMode
	detach bool
}

// TaskOption refines TaskSupport.
type TaskOption interface{ applyTask(*taskConfig) }

type taskOptionFunc func(*taskConfig)

func (f taskOptionFunc) applyTask(c *taskConfig) { f(c) }

// DetachInHandler makes the handler decide where the task begins, by
// calling Detach: the questions it asks before are ordinary MRTR rounds
// answered on retries of tools/call, and the call answers
// CreateTaskResult on the round where the handler reaches Detach. Without
// it, the task is created before the handler first runs, and every
// question goes through tasks/get and tasks/update.
func DetachInHandler() TaskOption { return taskOptionFunc(func(c *taskConfig) { c.detach = true }) }

// TaskSupport registers a tool's support for the Tasks extension (only
// tools may run as tasks; the option is refused on prompts and
// resources). It takes effect on a Server built WithTasks.
func TaskSupport(mode TaskMode, opts ...TaskOption) RegisterOption {
	return regFunc(func(c *regConfig) {
		c.task.mode = mode
		for _, o := range opts {
			o.applyTask(&c.task)
		}
	})
}

// errDetach is what Detach returns on the round where a call becomes a
// task.
var errDetach = errors.New("mrtr: the call continues as a task (return this error)")

// Detach marks where a tool registered with TaskSupport(...,
// DetachInHandler()) becomes a task. In a call whose request declared the
// Tasks extension it returns an error the handler must return at once:
// the Server then answers CreateTaskResult and runs the handler again
// from the top as the task, where Detach returns nil. In any other call
// (a synchronous one, or the task itself) it returns nil. Memo values
// computed before Detach are computed again in the task's run.
func Detach(_ context.Context, req *Request) error {
	if req != nil && req.taskPhase == phaseDetachable {
		return errDetach
	}
	return nil
}

// Task phases of a Request.
const (
	phaseNone       uint8 = iota // not a task call
	phaseDetachable              // a declaring call of a DetachInHandler tool, before the task
	phaseTask                    // the task's own run
)

// TasksOption configures WithTasks.
type TasksOption interface{ applyTasks(*taskEngine) }

type tasksOptionFunc func(*taskEngine)

func (f tasksOptionFunc) applyTasks(e *taskEngine) { f(e) }

// TaskStoreOption sets where task records are kept (default: a
// MemoryTaskStore, which serves one replica).
func TaskStoreOption(st TaskStore) TasksOption {
	return tasksOptionFunc(func(e *taskEngine) { e.store = st })
}

// TaskTTL sets how long a task stays readable after it is created
// (ttlMs; default DefaultTaskTTL). A task still running then is marked
// failed and deleted.
func TaskTTL(d time.Duration) TasksOption { return tasksOptionFunc(func(e *taskEngine) { e.ttl = d }) }

// TaskPollInterval sets the pollIntervalMs suggested to clients (default
// DefaultTaskPollInterval).
func TaskPollInterval(d time.Duration) TasksOption {
	return tasksOptionFunc(func(e *taskEngine) { e.poll = d })
}

// TaskLimits bounds the tasks one principal may hold at once on a
// replica (default DefaultTasksPerCaller; more gets -32603 with
// data.reason "too_many_tasks") and the size of one sealed task record
// (default DefaultMaxTaskRecord; a task whose answers, journal or result
// grow past it fails with data.reason "task_too_large").
func TaskLimits(perCaller, maxRecordBytes int) TasksOption {
	return tasksOptionFunc(func(e *taskEngine) { e.perCaller, e.maxRecord = perCaller, maxRecordBytes })
}

// TaskCodec sets the codec that seals task records. Build it with
// state.WithPurpose("task") and a TTL of at least TaskTTL. The default
// is an AEAD codec over the MRTRKIT_STATE_KEYS key ring (a random key
// without one), keyed for the purpose "task".
func TaskCodec(c state.Codec) TasksOption {
	return tasksOptionFunc(func(e *taskEngine) { e.codec = c })
}

// WithTasks serves the Tasks extension (SEP-2663): it advertises
// io.modelcontextprotocol/tasks, registers tasks/get, tasks/update and
// tasks/cancel on the extension seam (AddMethod), and runs tools
// registered with TaskSupport as tasks for requests that declare the
// extension. A task runs the tool's ordinary handler: a question it asks
// makes the task input_required (tasks/get lists it under a key unique
// over the task, "r<n>/<key>"), tasks/update answers it, and once every
// outstanding question is answered the handler runs again from the top
// with the answers, exactly as on an MRTR retry. The journal that a retry
// would carry in requestState stays in the task record. Task ids are 128
// random bits, and a task answers only to the principal that created it:
// to anyone else it looks exactly like an unknown id.
func WithTasks(opts ...TasksOption) Option {
	return optionFunc(func(s *Server) {
		e := &taskEngine{s: s, ttl: DefaultTaskTTL, poll: DefaultTaskPollInterval, perCaller: DefaultTasksPerCaller, maxRecord: DefaultMaxTaskRecord,
			live: make(map[string]context.CancelFunc), count: make(map[string]map[string]time.Time)}
		for _, o := range opts {
			o.applyTasks(e)
		}
		s.tasks = e
	})
}

// taskEngine runs the Tasks extension for one Server.
type taskEngine struct {
	s         *Server
	store     TaskStore
	codec     state.Codec
	ttl, poll time.Duration
	perCaller int
	maxRecord int

	mu    sync.Mutex                      // serialises record updates on this replica
	live  map[string]context.CancelFunc   // runs in progress on this replica
	count map[string]map[string]time.Time // per principal: unfinished tasks created here, to their expiry
	wg    sync.WaitGroup
}

// startTasks finishes WithTasks once the Server is built.
func (s *Server) startTasks() error {
	e := s.tasks
	if e == nil {
		return nil
	}
	if e.ttl <= 0 || e.poll <= 0 || e.perCaller < 1 || e.maxRecord < 1024 {
		return errors.New("mrtr: tasks: TTL and poll interval must be positive, at least one task per caller, and records at least 1 KiB")
	}
	if e.store == nil {
		e.store = NewMemoryTaskStore()
	}
	if e.codec == nil {
		ring, ok, err := state.KeyRingFromEnv()
		if err != nil {
			return fmt.Errorf("mrtr: tasks: %w", err)
		}
		if !ok {
			if ring, err = state.GenerateKeyRing(); err != nil {
				return fmt.Errorf("mrtr: tasks: %w", err)
			}
		}
		if e.codec, err = state.NewAEAD(ring, state.WithPurpose("task"), state.WithTTL(e.ttl+time.Minute), state.WithMaxTokenSize(e.maxRecord*2)); err != nil {
			return fmt.Errorf("mrtr: tasks: %w", err)
		}
	}
	for _, m := range []struct {
		name string
		h    MethodHandlerFunc
	}{{MethodTasksGet, e.get}, {MethodTasksUpdate, e.update}, {MethodTasksCancel, e.cancel}} {
		if err := s.AddMethod(m.name, MethodSpec{Extension: TasksExtension, Target: "taskId", Handler: m.h}); err != nil {
			return err
		}
	}
	return nil
}

// taskRecord is what the store keeps of a task, sealed.
type taskRecord struct {
	ID        string          `json:"id"`
	Principal string          `json:"p,omitempty"`
	Tool      string          `json:"tool"`
	Args      json.RawMessage `json:"args"`
	Caps      json.RawMessage `json:"caps,omitempty"` // the creating request's clientCapabilities
	Status    string          `json:"status"`
	Message   string          `json:"msg,omitempty"`
	Created   int64           `json:"created"` // Unix ms
	Updated   int64           `json:"updated"`
	Cancel    bool            `json:"cancel,omitempty"`

	// The continuation: the round, the journal and the kinds of the
	// questions asked (handler keys), as a sealed requestState would
	// carry them.
	Round   int             `json:"round,omitempty"`
	Journal []byte          `json:"journal,omitempty"`
	Asked   map[string]byte `json:"asked,omitempty"`
	// Outstanding questions by task key, the task key's handler key, and
	// the answers received so far (task keys).
	Seq     int                        `json:"seq,omitempty"`
	Pending map[string]json.RawMessage `json:"pending,omitempty"`
	KeyMap  map[string]string          `json:"keys,omitempty"`
	Answers map[string]json.RawMessage `json:"answers,omitempty"`

	Result json.RawMessage `json:"result,omitempty"`
	Error  *Error          `json:"error,omitempty"`
}

func terminal(status string) bool {
	return status == TaskCompleted || status == TaskFailed || status == TaskCancelled
}

// newTaskID returns 128 random bits, base64url.
func newTaskID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

func (e *taskEngine) seal(r *taskRecord) ([]byte, error) {
	b, err := json.Marshal(r)
	if err != nil {
		return nil, err
	}
	if len(b) > e.maxRecord {
		return nil, errTaskTooLarge
	}
	tok, err := e.codec.Seal(state.Claims{Principal: r.Principal, Audience: e.s.audience, Method: "task", Target: r.ID, Round: 1, Payload: b})
	if err != nil {
		return nil, err
	}
	return []byte(tok), nil
}

var errTaskTooLarge = errors.New("task record too large")

// load reads and opens the record of id as principal sees it: a record
// of another principal, or one that fails to open, is ErrTaskNotFound.
func (e *taskEngine) load(ctx context.Context, id, principal string) (*taskRecord, error) {
	b, err := e.store.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	claims, err := e.codec.Open(string(b))
	if err != nil || claims.Target != id || claims.Audience != e.s.audience || claims.Principal != principal {
		if err != nil {
			e.s.log.Warn("mrtr: a task record does not open", "err", errText(err))
		}
		return nil, ErrTaskNotFound
	}
	r := new(taskRecord)
	if err := json.Unmarshal(claims.Payload, r); err != nil {
		return nil, fmt.Errorf("task record: %w", err)
	}
	return r, nil
}

// remaining is how long the record of r stays in the store.
func (e *taskEngine) remaining(r *taskRecord) time.Duration {
	return time.Until(time.UnixMilli(r.Created).Add(e.ttl))
}

func (e *taskEngine) save(ctx context.Context, r *taskRecord) error {
	r.Updated = time.Now().UnixMilli()
	b, err := e.seal(r)
	if errors.Is(err, errTaskTooLarge) && !terminal(r.Status) || errors.Is(err, errTaskTooLarge) && r.Result != nil {
		e.s.log.Error("mrtr: a task's record outgrew its bound", "task", r.ID, "tool", r.Tool, "bound", e.maxRecord)
		*r = taskRecord{ID: r.ID, Principal: r.Principal, Tool: r.Tool, Created: r.Created, Updated: r.Updated, Status: TaskFailed,
			Error: &Error{Code: CodeInternalError, Message: "Internal error: the task's state exceeds its size limit", Data: map[string]string{"reason": "task_too_large"}}}
		b, err = e.seal(r)
	}
	if err != nil {
		return err
	}
	d := e.remaining(r)
	if d <= 0 {
		return ErrTaskNotFound
	}
	return e.store.Put(ctx, r.ID, b, d)
}

// unknownTask is the answer for an id that is not one of the caller's
// live tasks.
func unknownTask() *Error { return InvalidParamsError("Unknown or expired taskId") }

// taskParams reads the params of a task method.
func taskParams(req *MethodRequest) (id string, responses json.RawMessage, err *Error) {
	var p struct {
		TaskID         *string         `json:"taskId"`
		InputResponses json.RawMessage `json:"inputResponses"`
	}
	if json.Unmarshal(req.Params, &p) != nil || p.TaskID == nil || *p.TaskID == "" {
		return "", nil, InvalidParamsError(req.Method + " needs params.taskId, a non-empty string")
	}
	return *p.TaskID, p.InputResponses, nil
}

// toolsCall serves a tools/call of a tool with task support; done is
// false when the call runs synchronously as usual.
func (e *taskEngine) toolsCall(ctx context.Context, c *call, req *Request, args json.RawMessage) (json.RawMessage, *Error, bool) {
	tc := c.ep.task
	if !c.meta.Declares(TasksExtension) {
		if tc.mode == TaskRequired {
			c.stage = "capability"
			return nil, missingExtension(TasksExtension), true
		}
		return nil, nil, false
	}
	if tc.detach {
		req.taskPhase = phaseDetachable
	} else {
		c.autoDetach = true
	}
	out, err := e.s.invoke(ctx, c, req, args)
	if err != nil || c.detached == nil {
		return out, err, true
	}
	out, err = e.create(ctx, c, args)
	return out, err, true
}

// taskView is the wire form of a task: CreateTaskResult without result,
// error or input requests; DetailedTask with them.
type taskView struct {
	TaskID        string                     `json:"taskId"`
	Status        string                     `json:"status"`
	StatusMessage string                     `json:"statusMessage,omitempty"`
	CreatedAt     string                     `json:"createdAt"`
	LastUpdatedAt string                     `json:"lastUpdatedAt"`
	TTLMs         int64                      `json:"ttlMs"`
	PollMs        int64                      `json:"pollIntervalMs"`
	InputRequests map[string]json.RawMessage `json:"inputRequests,omitempty"`
	Result        json.RawMessage            `json:"result,omitempty"`
	Error         *Error                     `json:"error,omitempty"`
}

func (e *taskEngine) view(r *taskRecord, detailed bool) *taskView {
	v := &taskView{TaskID: r.ID, Status: r.Status, StatusMessage: r.Message,
		CreatedAt:     time.UnixMilli(r.Created).UTC().Format(time.RFC3339Nano),
		LastUpdatedAt: time.UnixMilli(r.Updated).UTC().Format(time.RFC3339Nano),
		TTLMs:         e.ttl.Milliseconds(), PollMs: e.poll.Milliseconds()}
	if detailed {
		switch r.Status {
		case TaskInputRequired:
			v.InputRequests = r.Pending
		case TaskCompleted:
			v.Result = r.Result
		case TaskFailed, TaskCancelled:
			v.Error = r.Error
		}
	}
	return v
}

// create stores the task a declaring tools/call becomes, then starts it
// and answers CreateTaskResult.
func (e *taskEngine) create(ctx context.Context, c *call, args json.RawMessage) (json.RawMessage, *Error) {
	principal := c.in.Principal
	id := newTaskID()
	e.mu.Lock()
	held := e.count[principal]
	now := time.Now()
	for k, exp := range held {
		if !now.Before(exp) {
			delete(held, k)
		}
	}
	if len(held) >= e.perCaller {
		e.mu.Unlock()
		c.stage = "limit"
		return nil, &Error{Code: CodeInternalError, Message: "Internal error: too many tasks for this caller; wait for some to end", Data: map[string]string{"reason": "too_many_tasks"}}
	}
	if held == nil {
		held = make(map[string]time.Time)
		e.count[principal] = held
	}
	held[id] = now.Add(e.ttl)
	e.mu.Unlock()
	caps, _ := json.Marshal(c.meta.ClientCapabilities)
	d := c.detached
	r := &taskRecord{ID: id, Principal: principal, Tool: c.target, Args: args, Caps: caps, Status: TaskWorking,
		Created: now.UnixMilli(), Round: d.round, Journal: d.journal, Asked: d.asked}
	if len(d.responses) > 0 {
		// This round's answers go to the first run, under their own keys.
		r.Answers, r.KeyMap = make(map[string]json.RawMessage), make(map[string]string)
		_ = wire.EachMember(d.responses, func(k string, v json.RawMessage) error {
			if _, ok := d.asked[k]; ok {
				r.Answers[k], r.KeyMap[k] = v, k
			}
			return nil
		})
	}
	r.Updated = r.Created
	b, err := e.seal(r)
	if err == nil {
		err = e.store.Create(ctx, r.ID, b, e.ttl)
	}
	if err != nil {
		e.release(principal, id)
		if errors.Is(err, errTaskTooLarge) {
			return nil, &Error{Code: CodeInternalError, Message: "Internal error: the task's state exceeds its size limit", Data: map[string]string{"reason": "task_too_large"}}
		}
		return nil, e.s.internal("storing a new task failed", err, c)
	}
	c.rec.ResultType = resultTask
	e.start(r.ID, principal)
	return e.s.render(resultTask, e.view(r, false), nil, nil)
}

func (e *taskEngine) release(principal, id string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.releaseLocked(principal, id)
}

// start runs the task in the background on this replica.
func (e *taskEngine) start(id, principal string) {
	ctx, cancel := context.WithCancel(context.Background())
	e.mu.Lock()
	e.live[id] = cancel
	e.mu.Unlock()
	e.wg.Add(1)
	go func() {
		defer e.wg.Done()
		defer cancel()
		e.runOnce(ctx, id, principal)
		e.mu.Lock()
		delete(e.live, id)
		e.mu.Unlock()
	}()
}

// taskCapture is what a task's run asked, caught instead of sealed.
type taskCapture struct {
	round   int
	journal []byte
	asked   map[string]byte
	asks    map[string]inputRequestWire
}

// resumeState is a continuation handed to invoke instead of a presented
// requestState: a task's, or what a declaring call presented when it
// became a task.
type resumeState struct {
	round     int
	journal   []byte
	asked     map[string]byte
	responses json.RawMessage
}

// runOnce runs the task's handler once and records how it ended.
func (e *taskEngine) runOnce(ctx context.Context, id, principal string) {
	bg := context.Background()
	e.mu.Lock()
	r, err := e.load(bg, id, principal)
	e.mu.Unlock()
	if err != nil || r.Status != TaskWorking {
		if err != nil && !errors.Is(err, ErrTaskNotFound) {
			e.s.log.Error("mrtr: a task could not be read", "task", id, "err", errText(err))
		}
		if err != nil || terminal(r.Status) {
			e.release(principal, id)
		}
		return
	}
	out, rerr, capt := e.run(ctx, r)

	e.mu.Lock()
	defer e.mu.Unlock()
	r, err = e.load(bg, id, principal)
	if err != nil {
		e.releaseLocked(principal, id)
		return
	}
	switch {
	case r.Cancel && ctx.Err() != nil && (rerr != nil || capt != nil):
		r.Status, r.Message = TaskCancelled, "cancelled at the client's request"
	case rerr != nil:
		r.Status, r.Error = TaskFailed, rerr
	case capt != nil && r.Cancel:
		r.Status, r.Message = TaskCancelled, "cancelled at the client's request"
	case capt != nil:
		r.Status, r.Round, r.Journal, r.Asked = TaskInputRequired, capt.round, capt.journal, capt.asked
		r.Seq++
		r.Pending, r.KeyMap, r.Answers = make(map[string]json.RawMessage, len(capt.asks)), make(map[string]string, len(capt.asks)), nil
		for k, q := range capt.asks {
			b, merr := json.Marshal(q)
			if merr != nil {
				r.Status, r.Error = TaskFailed, internalError()
				break
			}
			tk := "r" + strconv.Itoa(r.Seq) + "/" + k
			r.Pending[tk], r.KeyMap[tk] = b, k
		}
	default:
		r.Status, r.Result = TaskCompleted, inlineResult(out)
	}
	if terminal(r.Status) {
		r.Pending, r.KeyMap, r.Answers, r.Journal, r.Asked, r.Args = nil, nil, nil, nil, nil, nil
		e.releaseLocked(principal, id)
	}
	if err := e.save(bg, r); err != nil && !errors.Is(err, ErrTaskNotFound) {
		e.s.log.Error("mrtr: a task's outcome could not be stored", "task", id, "err", errText(err))
	}
}

// releaseLocked forgets an ended task in the per-caller bound. The
// caller holds e.mu.
func (e *taskEngine) releaseLocked(principal, id string) {
	if held := e.count[principal]; held != nil {
		delete(held, id)
		if len(held) == 0 {
			delete(e.count, principal)
		}
	}
}

// inlineResult is a rendered tools/call result as tasks/get inlines it:
// without resultType.
func inlineResult(out json.RawMessage) json.RawMessage {
	b := make([]byte, 0, len(out))
	b = append(b, '{')
	_ = wire.EachMember(out, func(name string, v json.RawMessage) error {
		if name == "resultType" {
			return nil
		}
		if len(b) > 1 {
			b = append(b, ',')
		}
		b = appendString(b, name)
		b = append(b, ':')
		b = append(b, v...)
		return nil
	})
	return append(b, '}')
}

// run calls the tool's handler through invoke, as an MRTR retry would,
// with the task's journal and answers.
func (e *taskEngine) run(ctx context.Context, r *taskRecord) (out json.RawMessage, rerr *Error, capt *taskCapture) {
	s := e.s
	msg := &Message{Method: wire.MethodToolsCall}
	in := &Inbound{Message: msg, Principal: r.Principal}
	x := &exchange{rec: Call{Message: msg, Principal: r.Principal, Start: time.Now()}}
	c := &x.c
	c.in, c.method, c.rec, c.target = in, wire.MethodToolsCall, &x.rec, r.Tool
	c.metaBuf = Meta{}
	if len(r.Caps) > 0 {
		_ = json.Unmarshal(r.Caps, &c.metaBuf.ClientCapabilities)
	}
	c.meta = &c.metaBuf
	s.mu.RLock()
	if t := s.tools.byKey[r.Tool]; t != nil {
		c.ep = endpoint{entry: &t.entry, headers: t.headers, out: t.out}
	}
	s.mu.RUnlock()
	if c.ep.entry == nil {
		return nil, InvalidParamsError("Unknown tool: " + quoted(r.Tool)), nil
	}
	var answers json.RawMessage
	if len(r.Answers) > 0 {
		m := make(map[string]json.RawMessage, len(r.Answers))
		for tk, v := range r.Answers {
			if hk, ok := r.KeyMap[tk]; ok {
				m[hk] = v
			}
		}
		answers, _ = json.Marshal(m)
	}
	c.resume = &resumeState{round: r.Round, journal: r.Journal, asked: r.Asked, responses: answers}
	c.p.InputResponses = answers
	c.capture = new(taskCapture)
	req := c.request()
	req.Name, req.Arguments, req.taskPhase = r.Tool, r.Args, phaseTask
	out, rerr = func() (out json.RawMessage, rerr *Error) {
		defer func() {
			if v := recover(); v != nil {
				s.log.Error("mrtr: a task's handler panicked", "tool", clip(r.Tool), "panic", clip(fmt.Sprint(v)))
				out, rerr = nil, internalError()
			}
		}()
		return s.invoke(ctx, c, req, r.Args)
	}()
	if rerr != nil {
		return nil, rerr, nil
	}
	if c.capture.asks != nil {
		return nil, nil, c.capture
	}
	return out, nil, nil
}

// get serves tasks/get.
func (e *taskEngine) get(ctx context.Context, req *MethodRequest) (*MethodResult, error) {
	id, _, perr := taskParams(req)
	if perr != nil {
		return nil, perr
	}
	r, err := e.load(ctx, id, req.Principal)
	if err != nil {
		return nil, e.lookupError(err, id)
	}
	return &MethodResult{Body: e.view(r, true)}, nil
}

func (e *taskEngine) lookupError(err error, id string) error {
	if errors.Is(err, ErrTaskNotFound) {
		return unknownTask()
	}
	e.s.log.Error("mrtr: reading a task failed", "task", clip(id), "err", errText(err))
	return internalError()
}

// update serves tasks/update: answers to outstanding questions are kept;
// others are ignored. When none is outstanding any more, the task runs
// again.
func (e *taskEngine) update(ctx context.Context, req *MethodRequest) (*MethodResult, error) {
	id, responses, perr := taskParams(req)
	if perr != nil {
		return nil, perr
	}
	if !isAbsent(responses) && responses[0] != '{' {
		return nil, InvalidParamsError("inputResponses must be an object")
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	r, err := e.load(ctx, id, req.Principal)
	if err != nil {
		return nil, e.lookupError(err, id)
	}
	if r.Status != TaskInputRequired || isAbsent(responses) {
		return &MethodResult{}, nil
	}
	var bad *Error
	_ = wire.EachMember(responses, func(tk string, v json.RawMessage) error {
		if _, ok := r.Pending[tk]; !ok || isAbsent(v) {
			return nil
		}
		hk := r.KeyMap[tk]
		if _, err := decodeAnswer(kind(r.Asked[hk]), v); err != nil {
			bad = InvalidParamsError(fmt.Sprintf("Invalid input response %s: %v", quoted(tk), err))
			return bad
		}
		if r.Answers == nil {
			r.Answers = make(map[string]json.RawMessage)
		}
		r.Answers[tk] = v
		delete(r.Pending, tk)
		return nil
	})
	if bad != nil {
		return nil, bad
	}
	resume := len(r.Pending) == 0
	if resume {
		r.Status, r.Pending = TaskWorking, nil
	}
	if err := e.save(ctx, r); err != nil {
		return nil, e.lookupError(err, id)
	}
	if resume {
		e.mu.Unlock()
		e.start(id, r.Principal)
		e.mu.Lock()
	}
	return &MethodResult{}, nil
}

// cancel serves tasks/cancel: cooperative, and an acknowledgement on a
// task that has ended.
func (e *taskEngine) cancel(ctx context.Context, req *MethodRequest) (*MethodResult, error) {
	id, _, perr := taskParams(req)
	if perr != nil {
		return nil, perr
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	r, err := e.load(ctx, id, req.Principal)
	if err != nil {
		return nil, e.lookupError(err, id)
	}
	if terminal(r.Status) || r.Cancel {
		return &MethodResult{}, nil
	}
	r.Cancel = true
	if r.Status == TaskInputRequired {
		r.Status, r.Message = TaskCancelled, "cancelled at the client's request"
		r.Pending, r.KeyMap, r.Answers, r.Journal, r.Asked, r.Args = nil, nil, nil, nil, nil, nil
		e.releaseLocked(r.Principal, id)
	}
	if err := e.save(ctx, r); err != nil {
		return nil, e.lookupError(err, id)
	}
	if stop := e.live[id]; stop != nil {
		stop()
	}
	return &MethodResult{}, nil
}

// WaitTasks blocks until every task run in progress on this replica has
// ended (tests and graceful shutdown; cancel them first to hurry them).
func (s *Server) WaitTasks() {
	if s.tasks != nil {
		s.tasks.wg.Wait()
	}
}
