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
	"github.com/mrtrkit/mrtrkit/share"
	"github.com/mrtrkit/mrtrkit/state"
)

// TasksExtension is the identifier of the Tasks extension (SEP-2663).
const TasksExtension = "io.modelcontextprotocol/tasks"

// Task methods.
const (
	MethodTasksGet    = "tasks/get"
	MethodTasksUpdate = "tasks/update"
	MethodTasksCancel = "tasks/cancel"
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

// TaskBus sets where task records are kept and how replicas tell each
// other of cancellations. The default is the bus given to WithShare, so
// that every replica of a deployment sees every task (Redis with the
// module github.com/mrtrkit/mrtrkit/redis); without one, an in-process
// share.Local, which serves one replica.
func TaskBus(bus share.Bus) TasksOption {
	return tasksOptionFunc(func(e *taskEngine) { e.bus = bus })
}

// TaskTTL sets how long a task stays readable after it is created
// (ttlMs; default DefaultTaskTTL). A task still running then is gone:
// tasks/get answers as for an unknown id.
func TaskTTL(d time.Duration) TasksOption { return tasksOptionFunc(func(e *taskEngine) { e.ttl = d }) }

// TaskPollInterval sets the pollIntervalMs suggested to clients (default
// DefaultTaskPollInterval).
func TaskPollInterval(d time.Duration) TasksOption {
	return tasksOptionFunc(func(e *taskEngine) { e.poll = d })
}

// TaskLease sets how often the replica running a task renews its lease
// on it (every lease/3) and how long after its last renewal another
// replica may take the task over (default DefaultTaskLease). See
// WithTasks on what happens to the task of a replica that stops.
func TaskLease(d time.Duration) TasksOption {
	return tasksOptionFunc(func(e *taskEngine) { e.lease = d })
}

// TaskLimits bounds the tasks one principal may hold at once on a
// replica (default DefaultTasksPerCaller; more gets -32603 with
// data.reason "too_many_tasks") and the size of one task record
// (default DefaultMaxTaskRecord; a task whose arguments are larger is
// refused with data.reason "task_too_large", and one whose answers,
// journal or result grow past it fails with that reason).
func TaskLimits(perCaller, maxRecordBytes int) TasksOption {
	return tasksOptionFunc(func(e *taskEngine) { e.perCaller, e.maxRecord = perCaller, maxRecordBytes })
}

// TaskCodec sets the codec that seals task records. Build it with
// state.WithPurpose("task") and a TTL of at least TaskTTL. The default
// is an AEAD codec over the MRTRKIT_STATE_KEYS key ring (a random key
// without one, which replicas do not share), keyed for the purpose
// "task".
func TaskCodec(c state.Codec) TasksOption {
	return tasksOptionFunc(func(e *taskEngine) { e.codec = c })
}

// DefaultTaskLease is the default of TaskLease.
const DefaultTaskLease = 5 * time.Second

// WithTasks serves the Tasks extension (SEP-2663): it advertises
// io.modelcontextprotocol/tasks, registers tasks/get, tasks/update and
// tasks/cancel on the extension seam (AddMethod), and runs tools
// registered with TaskSupport as tasks for requests that declare the
// extension.
//
// A task runs the tool's ordinary handler. A question it asks makes the
// task input_required: tasks/get lists it under a key unique over the
// task ("r<n>/<key>"), tasks/update answers it (partial answers wait),
// and once every outstanding question is answered the handler runs again
// from the top with the answers, exactly as on an MRTR retry; the journal
// a retry would carry in requestState stays in the task record.
// tasks/cancel cancels the run's context; a handler that returns then
// leaves the task cancelled, one that completes anyway leaves it
// completed.
//
// Task ids are 128 random bits, and a task answers only to the principal
// that created it: to anyone else it looks exactly like an unknown id.
// Records are sealed (TaskCodec), so the bus holds only ciphertext.
//
// Across replicas (TaskBus, or WithShare): the task is created with a
// claim and stored before CreateTaskResult is sent, so any replica's
// tasks/get finds it; answers are recorded one key each, and the replica
// whose tasks/update completes them claims the next run and runs it;
// tasks/cancel reaches the replica running the task through the bus. The
// replica running a task renews a lease on it; when that replica stops
// (a crash, a kill), the first request about the task on another replica
// after the lease has lapsed claims the task and runs the handler again
// from its last journal, as an MRTR retry would: the work since the last
// answered question is done again, so keep side effects idempotent or
// after the last question, as the determinism contract already asks.
func WithTasks(opts ...TasksOption) Option {
	return optionFunc(func(s *Server) {
		e := &taskEngine{s: s, ttl: DefaultTaskTTL, poll: DefaultTaskPollInterval, perCaller: DefaultTasksPerCaller,
			maxRecord: DefaultMaxTaskRecord, lease: DefaultTaskLease,
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
	bus       share.Bus
	codec     state.Codec
	ttl, poll time.Duration
	lease     time.Duration
	perCaller int
	maxRecord int
	stop      func() // the cancellation subscription

	mu      sync.Mutex
	closing bool                            // Server.Close: runs end without an outcome
	live    map[string]context.CancelFunc   // runs in progress on this replica
	count   map[string]map[string]time.Time // per principal: unfinished tasks created here, to their expiry
	wg      sync.WaitGroup
}

// taskChannel, followed by the audience, carries cancellations to the
// replica running a task.
const taskChannel = "mrtrkit/tasks/cancel/"

// startTasks finishes WithTasks once the Server is built.
func (s *Server) startTasks() error {
	e := s.tasks
	if e == nil {
		return nil
	}
	if e.ttl <= 0 || e.poll <= 0 || e.lease < 30*time.Millisecond || e.perCaller < 1 || e.maxRecord < 1024 {
		return errors.New("mrtr: tasks: TTL and poll interval must be positive, the lease at least 30ms, at least one task per caller, and records at least 1 KiB")
	}
	if e.bus == nil {
		e.bus = s.share.bus
	}
	if e.bus == nil {
		e.bus = share.Local()
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
	stop, err := e.bus.Subscribe(taskChannel+s.audience, func(id []byte) {
		e.mu.Lock()
		cancel := e.live[string(id)]
		e.mu.Unlock()
		if cancel != nil {
			cancel()
		}
	})
	if err != nil {
		return fmt.Errorf("mrtr: tasks: %w", err)
	}
	e.stop = stop
	if err := s.AddListenFilter(ListenFilter{Member: "taskIds", Extension: TasksExtension, Open: e.watch}); err != nil {
		return err
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

// taskRecord is what the bus keeps of a task, sealed. Only the replica
// that holds the task's current claim (its creator, the claimant of its
// latest run, or of its cancellation) writes it.
type taskRecord struct {
	ID        string          `json:"id"`
	Principal string          `json:"p,omitempty"`
	Tool      string          `json:"tool"`
	Args      json.RawMessage `json:"args,omitempty"`
	Caps      json.RawMessage `json:"caps,omitempty"` // the creating request's clientCapabilities
	Status    string          `json:"status"`
	Message   string          `json:"msg,omitempty"`
	Created   int64           `json:"created"` // Unix ms
	Updated   int64           `json:"updated"`
	Run       int             `json:"run"` // runs claimed so far

	// The continuation: the round, the journal and the kinds of the
	// questions asked (handler keys), as a sealed requestState would
	// carry them.
	Round   int             `json:"round,omitempty"`
	Journal []byte          `json:"journal,omitempty"`
	Asked   map[string]byte `json:"asked,omitempty"`
	// Outstanding questions by task key, each task key's handler key,
	// and the answers the next run gets (task keys).
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

// Bus keys of a task: its record, and beside it the answers received,
// its cancellation, its lease and the claims of its runs.
func taskKey(id string, parts ...string) string {
	k := "mrtrkit/task/" + id
	for _, p := range parts {
		k += "/" + p
	}
	return k
}

var errTaskTooLarge = errors.New("task record too large")

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

// load reads and opens the record of id as principal sees it: a record
// of another principal, or one that fails to open, is ErrTaskNotFound.
func (e *taskEngine) load(ctx context.Context, id, principal string) (*taskRecord, error) {
	b, found, err := e.bus.Get(ctx, taskKey(id))
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, ErrTaskNotFound
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

// remaining is how long the records of r stay on the bus.
func (e *taskEngine) remaining(r *taskRecord) time.Duration {
	return time.Until(time.UnixMilli(r.Created).Add(e.ttl))
}

// save writes r. A record that outgrew its bound is replaced by a
// failed one.
func (e *taskEngine) save(ctx context.Context, r *taskRecord) error {
	r.Updated = time.Now().UnixMilli()
	b, err := e.seal(r)
	if errors.Is(err, errTaskTooLarge) {
		e.s.log.Error("mrtr: a task's record outgrew its bound", "task", r.ID, "tool", r.Tool, "bound", e.maxRecord)
		*r = taskRecord{ID: r.ID, Principal: r.Principal, Tool: r.Tool, Created: r.Created, Updated: r.Updated, Run: r.Run, Status: TaskFailed,
			Error: tooLarge()}
		b, err = e.seal(r)
	}
	if err != nil {
		return err
	}
	d := e.remaining(r)
	if d < time.Millisecond {
		return ErrTaskNotFound
	}
	if err := e.bus.Put(ctx, taskKey(r.ID), b, d); err != nil {
		return err
	}
	// Listeners of the task, on every replica, are told (best effort).
	_ = e.bus.Publish(ctx, taskStatusChannel+e.s.audience, []byte(r.ID))
	return nil
}

// taskStatusChannel, followed by the audience, carries the ids of tasks
// whose record changed, for listeners (notifications/tasks).
const taskStatusChannel = "mrtrkit/tasks/status/"

// maxWatchedTasks bounds the taskIds one listen request may name.
const maxWatchedTasks = 100

// watch opens the taskIds member of a listen filter: the caller's live
// tasks among the ids are honoured, and each change of one is sent as
// notifications/tasks carrying the DetailedTask.
func (e *taskEngine) watch(ctx context.Context, req *MethodRequest, value json.RawMessage) (any, <-chan Notification, error) {
	var ids []string
	if json.Unmarshal(value, &ids) != nil {
		return nil, nil, InvalidParamsError("subscriptions/listen notifications.taskIds must be an array of strings")
	}
	if len(ids) > maxWatchedTasks {
		return nil, nil, InvalidParamsError(fmt.Sprintf("subscriptions/listen names more than %d tasks", maxWatchedTasks))
	}
	honoured := []string{}
	watched := map[string]bool{}
	for _, id := range ids {
		if watched[id] {
			continue
		}
		if _, err := e.load(ctx, id, req.Principal); err == nil {
			watched[id] = true
			honoured = append(honoured, id)
		}
	}
	if len(watched) == 0 {
		return honoured, nil, nil
	}
	changed := make(chan string, 16)
	stop, err := e.bus.Subscribe(taskStatusChannel+e.s.audience, func(p []byte) {
		if id := string(p); watched[id] {
			select {
			case changed <- id:
			default: // at most once, as the bus is: the client polls anyway
			}
		}
	})
	if err != nil {
		return nil, nil, err
	}
	out := make(chan Notification)
	go func() {
		defer stop()
		for {
			select {
			case <-ctx.Done():
				return
			case id := <-changed:
				r, err := e.load(ctx, id, req.Principal)
				if err != nil {
					continue
				}
				select {
				case out <- Notification{Method: wire.NotifyTasks, Params: e.detailed(ctx, r)}:
				case <-ctx.Done():
					return
				}
			}
		}
	}()
	return honoured, out, nil
}

// detailed is the DetailedTask of r: outstanding questions only.
func (e *taskEngine) detailed(ctx context.Context, r *taskRecord) *taskView {
	if r.Status == TaskInputRequired {
		for tk := range r.Pending {
			if _, found, _ := e.bus.Get(ctx, taskKey(r.ID, "answer", tk)); found {
				delete(r.Pending, tk)
			}
		}
	}
	return e.view(r, true)
}

func tooLarge() *Error {
	return &Error{Code: CodeInternalError, Message: "Internal error: the task's state exceeds its size limit", Data: map[string]string{"reason": "task_too_large"}}
}

// ErrTaskNotFound is what a task lookup finds for an id that is not one
// of the caller's live tasks.
var ErrTaskNotFound = errors.New("mrtr: task not found")

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
			c.stage = StageCapability
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
		b = wire.AppendString(b, name)
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
	c.p = &params{InputResponses: answers}
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

// admit counts a new task of principal against the per-caller bound.
func (e *taskEngine) admit(principal, id string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	held := e.count[principal]
	now := time.Now()
	for k, exp := range held {
		if !now.Before(exp) {
			delete(held, k)
		}
	}
	if len(held) >= e.perCaller {
		return false
	}
	if held == nil {
		held = make(map[string]time.Time)
		e.count[principal] = held
	}
	held[id] = now.Add(e.ttl)
	return true
}

// release forgets an ended task in the per-caller bound.
func (e *taskEngine) release(principal, id string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if held := e.count[principal]; held != nil {
		delete(held, id)
		if len(held) == 0 {
			delete(e.count, principal)
		}
	}
}

// create stores the task a declaring tools/call becomes, then starts it
// and answers CreateTaskResult.
func (e *taskEngine) create(ctx context.Context, c *call, args json.RawMessage) (json.RawMessage, *Error) {
	principal := c.in.Principal
	id := newTaskID()
	if !e.admit(principal, id) {
		c.stage = StageTaskLimit
		return nil, &Error{Code: CodeInternalError, Message: "Internal error: too many tasks for this caller; wait for some to end", Data: map[string]string{"reason": "too_many_tasks"}}
	}
	caps, _ := json.Marshal(c.meta.ClientCapabilities)
	d := c.detached
	now := time.Now().UnixMilli()
	r := &taskRecord{ID: id, Principal: principal, Tool: c.target, Args: args, Caps: caps, Status: TaskWorking,
		Created: now, Updated: now, Run: 1, Round: d.round, Journal: d.journal, Asked: d.asked}
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
	fail := func(err error) (json.RawMessage, *Error) {
		e.release(principal, id)
		if errors.Is(err, errTaskTooLarge) {
			return nil, tooLarge()
		}
		return nil, e.s.internal("storing a new task failed", err, c)
	}
	b, err := e.seal(r)
	if err != nil {
		return fail(err)
	}
	// Single creation: the claim of the id (and of its first run), then
	// the lease and the record, all before the answer.
	first, err := e.bus.Claim(ctx, taskKey(id, "run", "1"), e.ttl)
	if err == nil && !first {
		err = errors.New("task id collision")
	}
	if err == nil {
		err = e.bus.Put(ctx, taskKey(id, "lease"), []byte("1"), e.lease)
	}
	if err == nil {
		err = e.bus.Put(ctx, taskKey(id), b, e.ttl)
	}
	if err != nil {
		return fail(err)
	}
	c.rec.ResultType = wire.ResultTask
	e.start(r)
	return e.s.render(wire.ResultTask, e.view(r, false), nil, nil)
}

// start runs the task's current run in the background on this replica,
// renewing its lease meanwhile. The caller holds the run's claim.
func (e *taskEngine) start(r *taskRecord) {
	ctx, cancel := context.WithCancel(context.Background())
	id, principal := r.ID, r.Principal
	e.mu.Lock()
	e.live[id] = cancel
	e.mu.Unlock()
	e.wg.Add(2)
	done := make(chan struct{})
	go func() { // the lease
		defer e.wg.Done()
		t := time.NewTicker(e.lease / 3)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				_ = e.bus.Put(context.Background(), taskKey(id, "lease"), []byte("1"), e.lease)
			}
		}
	}()
	go func() {
		defer e.wg.Done()
		defer cancel()
		defer close(done)
		e.runOnce(ctx, r.Run, id, principal)
		e.mu.Lock()
		delete(e.live, id)
		e.mu.Unlock()
	}()
}

// claimRun claims run r.Run+1 of the task for this replica.
func (e *taskEngine) claimRun(ctx context.Context, r *taskRecord) (bool, error) {
	return e.bus.Claim(ctx, taskKey(r.ID, "run", strconv.Itoa(r.Run+1)), e.ttl)
}

// cancelled reports whether the task's cancellation was asked for.
func (e *taskEngine) cancelled(ctx context.Context, id string) bool {
	_, found, err := e.bus.Get(ctx, taskKey(id, "cancel"))
	return found || err != nil
}

// runOnce runs the handler once, as run number run of the task, and
// records how it ended.
func (e *taskEngine) runOnce(ctx context.Context, run int, id, principal string) {
	bg := context.Background()
	r, err := e.load(bg, id, principal)
	if err != nil || r.Status != TaskWorking || r.Run != run {
		if err != nil && !errors.Is(err, ErrTaskNotFound) {
			e.s.log.Error("mrtr: a task could not be read", "task", id, "err", errText(err))
		}
		if err != nil || terminal(r.Status) {
			e.release(principal, id)
		}
		return
	}
	var (
		out  json.RawMessage
		rerr *Error
		capt *taskCapture
	)
	if e.cancelled(bg, id) {
		r.Status, r.Message = TaskCancelled, "cancelled at the client's request"
	} else {
		out, rerr, capt = e.run(ctx, r)
	}
	e.mu.Lock()
	closing := e.closing
	e.mu.Unlock()
	if closing {
		// The replica is stopping: the run leaves no outcome, its lease
		// lapses, and another replica takes the task over.
		return
	}
	switch {
	case r.Status == TaskCancelled:
	case (rerr != nil || capt != nil) && e.cancelled(bg, id):
		r.Status, r.Message = TaskCancelled, "cancelled at the client's request"
	case rerr != nil:
		r.Status, r.Error = TaskFailed, rerr
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
		r.Pending, r.KeyMap, r.Answers, r.Journal, r.Asked, r.Args, r.Caps = nil, nil, nil, nil, nil, nil, nil
		e.release(principal, id)
	}
	if err := e.save(bg, r); err != nil && !errors.Is(err, ErrTaskNotFound) {
		e.s.log.Error("mrtr: a task's outcome could not be stored", "task", id, "err", errText(err))
	}
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
	if r.Status == TaskWorking {
		e.takeOver(ctx, r)
	}
	return &MethodResult{Body: e.detailed(ctx, r)}, nil
}

// takeOver runs again a working task whose replica stopped renewing its
// lease, once the lease has lapsed.
func (e *taskEngine) takeOver(ctx context.Context, r *taskRecord) {
	if _, found, err := e.bus.Get(ctx, taskKey(r.ID, "lease")); found || err != nil {
		return
	}
	if first, err := e.claimRun(ctx, r); err != nil || !first {
		return
	}
	e.s.log.Warn("mrtr: taking over a task whose replica stopped", "task", r.ID, "tool", r.Tool, "run", r.Run+1)
	r.Run++
	if err := e.bus.Put(ctx, taskKey(r.ID, "lease"), []byte("1"), e.lease); err != nil {
		return
	}
	if err := e.save(ctx, r); err != nil {
		return
	}
	e.admit(r.Principal, r.ID)
	e.start(r)
}

func (e *taskEngine) lookupError(err error, id string) error {
	if errors.Is(err, ErrTaskNotFound) {
		return unknownTask()
	}
	e.s.log.Error("mrtr: reading a task failed", "task", clip(id), "err", errText(err))
	return internalError()
}

// update serves tasks/update: answers to outstanding questions are kept;
// others are ignored. The request whose answers leave none outstanding
// claims the next run and starts it.
func (e *taskEngine) update(ctx context.Context, req *MethodRequest) (*MethodResult, error) {
	id, responses, perr := taskParams(req)
	if perr != nil {
		return nil, perr
	}
	if !isAbsent(responses) && responses[0] != '{' {
		return nil, InvalidParamsError("inputResponses must be an object")
	}
	r, err := e.load(ctx, id, req.Principal)
	if err != nil {
		return nil, e.lookupError(err, id)
	}
	if r.Status == TaskWorking {
		e.takeOver(ctx, r)
	}
	if r.Status != TaskInputRequired || isAbsent(responses) {
		return &MethodResult{}, nil
	}
	d := e.remaining(r)
	if d < time.Millisecond {
		return nil, unknownTask()
	}
	var bad error
	_ = wire.EachMember(responses, func(tk string, v json.RawMessage) error {
		if _, ok := r.Pending[tk]; !ok || isAbsent(v) {
			return nil
		}
		if _, err := decodeAnswer(kind(r.Asked[r.KeyMap[tk]]), v); err != nil {
			bad = InvalidParamsError(fmt.Sprintf("Invalid input response %s: %v", quoted(tk), err))
			return bad
		}
		if len(v) > e.maxRecord {
			bad = tooLarge()
			return bad
		}
		if err := e.bus.Put(ctx, taskKey(id, "answer", tk), v, d); err != nil {
			bad = e.lookupError(err, id)
			return bad
		}
		return nil
	})
	if bad != nil {
		return nil, bad
	}
	answers := make(map[string]json.RawMessage, len(r.Pending))
	for tk := range r.Pending {
		v, found, err := e.bus.Get(ctx, taskKey(id, "answer", tk))
		if err != nil {
			return nil, e.lookupError(err, id)
		}
		if !found {
			return &MethodResult{}, nil // more to come
		}
		answers[tk] = v
	}
	if first, err := e.claimRun(ctx, r); err != nil || !first {
		return &MethodResult{}, nil // another request resumes it
	}
	if e.cancelled(ctx, id) {
		e.finishCancelled(ctx, r)
		return &MethodResult{}, nil
	}
	r.Run++
	r.Status, r.Pending, r.Answers = TaskWorking, nil, answers
	if err := e.bus.Put(ctx, taskKey(id, "lease"), []byte("1"), e.lease); err != nil {
		return nil, e.lookupError(err, id)
	}
	if err := e.save(ctx, r); err != nil {
		return nil, e.lookupError(err, id)
	}
	e.admit(r.Principal, id)
	e.start(r)
	return &MethodResult{}, nil
}

// finishCancelled ends a task that runs nowhere as cancelled. The caller
// holds its run's claim.
func (e *taskEngine) finishCancelled(ctx context.Context, r *taskRecord) {
	r.Run++
	r.Status, r.Message = TaskCancelled, "cancelled at the client's request"
	r.Pending, r.KeyMap, r.Answers, r.Journal, r.Asked, r.Args, r.Caps = nil, nil, nil, nil, nil, nil, nil
	e.release(r.Principal, r.ID)
	if err := e.save(ctx, r); err != nil && !errors.Is(err, ErrTaskNotFound) {
		e.s.log.Error("mrtr: a task's cancellation could not be stored", "task", r.ID, "err", errText(err))
	}
}

// cancel serves tasks/cancel: cooperative, and an acknowledgement on a
// task that has ended.
func (e *taskEngine) cancel(ctx context.Context, req *MethodRequest) (*MethodResult, error) {
	id, _, perr := taskParams(req)
	if perr != nil {
		return nil, perr
	}
	r, err := e.load(ctx, id, req.Principal)
	if err != nil {
		return nil, e.lookupError(err, id)
	}
	if terminal(r.Status) {
		return &MethodResult{}, nil
	}
	d := e.remaining(r)
	if d < time.Millisecond {
		return nil, unknownTask()
	}
	if err := e.bus.Put(ctx, taskKey(id, "cancel"), []byte("1"), d); err != nil {
		return nil, e.lookupError(err, id)
	}
	if r.Status == TaskInputRequired {
		// It runs nowhere: whoever claims its next run ends it.
		if first, err := e.claimRun(ctx, r); err == nil && first {
			e.finishCancelled(ctx, r)
		}
		return &MethodResult{}, nil
	}
	// It runs somewhere: tell that replica (this one included).
	if err := e.bus.Publish(ctx, taskChannel+e.s.audience, []byte(id)); err != nil {
		return nil, e.lookupError(err, id)
	}
	e.mu.Lock()
	stop := e.live[id]
	e.mu.Unlock()
	if stop != nil {
		stop()
	}
	return &MethodResult{}, nil
}

// close stops every task run on this replica without recording an
// outcome (Server.Close), as if the replica had stopped: their leases
// lapse and other replicas take them over.
func (e *taskEngine) close() {
	e.mu.Lock()
	e.closing = true
	for _, cancel := range e.live {
		cancel()
	}
	e.mu.Unlock()
	if e.stop != nil {
		e.stop()
	}
}

// WaitTasks blocks until every task run in progress on this replica has
// ended (tests and graceful shutdown; cancel them first to hurry them).
func (s *Server) WaitTasks() {
	if s.tasks != nil {
		s.tasks.wg.Wait()
	}
}
