package suite

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/mrtrkit/mrtrkit/client"
)

// The Tasks extension (SEP-2663): a task id is a bearer handle, so it
// must be unguessable and answer only to its creator; a task must stay
// readable for its ttlMs; and tasks/get must carry Mcp-Name = taskId.
// These scenarios create tasks with DefaultTaskTool, declaring the
// extension; a server without it leaves them not run.

const (
	tasksExtension = "io.modelcontextprotocol/tasks"
	// DefaultTaskTool is the fixture server's task tool: it runs as a
	// task for a client that declares the extension.
	DefaultTaskTool = "slow_compute"
	// defaultTaskArgs keep the task working long enough for the probes.
	defaultTaskArgs = `{"seconds":20,"label":"mrtrcheck"}`
)

var taskScenarios = []Scenario{
	{
		ID:    "tasks.guessed-id",
		Title: "guessed task ids are unknown",
		Why: "A task id is all a client needs to read a task's result or answer its questions: ids that can be " +
			"guessed (counters, timestamps, short random strings, a neighbour of a real id) hand one user's task to another.",
		run: tasksGuessedID,
	},
	{
		ID:    "tasks.other-principal",
		Title: "another principal's tasks/get, tasks/update, tasks/cancel look like an unknown id",
		Why: "A task is bound to the principal that created it: anyone else must get exactly what an unknown id gets, " +
			"or a leaked id lets them read, answer or cancel it, and a different error tells them the id exists. Needs two bearer tokens.",
		run: tasksOtherPrincipal,
	},
	{
		ID:    "tasks.no-early-expiry",
		Title: "a task stays readable within its ttlMs",
		Why:   "A client polls at its pace within ttlMs; a server that drops a task earlier loses its result.",
		run:   tasksNoEarlyExpiry,
	},
	{
		ID:    "tasks.name-spoofing",
		Title: "tasks/get with an Mcp-Name naming another task is refused",
		Why: "Balancers route tasks/* by Mcp-Name: a request whose header names one task and whose body names another " +
			"would be routed and authorised for the first and served for the second (-32020, HTTP 400).",
		run: tasksNameSpoof,
	},
}

// taskMeta is _meta declaring the configured capabilities and the Tasks
// extension.
func (r *runner) taskMeta() json.RawMessage {
	caps := map[string]json.RawMessage{}
	_ = json.Unmarshal(r.cfg.Capabilities, &caps)
	ext := map[string]json.RawMessage{}
	_ = json.Unmarshal(caps["extensions"], &ext)
	ext[tasksExtension] = json.RawMessage(`{}`)
	caps["extensions"], _ = json.Marshal(ext)
	c, _ := json.Marshal(caps)
	return client.RawMeta(ProtocolVersion, c, clientInfo)
}

// taskRequest sends tasks/* method for id, with Mcp-Name name ("" for
// id), as the main or the other principal.
func (r *runner) taskRequest(ctx context.Context, label, method, id, name string, other bool, more ...member) reply {
	params := append([]member{m("taskId", str(id))}, more...)
	params = append(params, m("_meta", r.taskMeta()))
	h := r.header(method, other)
	if name == "" {
		name = id
	}
	h.Set("Mcp-Name", client.EncodeHeaderValue(name))
	rid := r.id()
	return r.send(ctx, probe{label: label, body: envelope(rid, method, object(params...)), header: h, id: rid})
}

// createTask calls DefaultTaskTool declaring the extension and returns
// the task id and its ttlMs, or a not-run result.
func (r *runner) createTask(ctx context.Context) (string, int64, reply, *Result) {
	id := r.id()
	h := r.header("tools/call", false)
	h.Set("Mcp-Name", DefaultTaskTool)
	params := object(m("name", str(DefaultTaskTool)), m("arguments", json.RawMessage(defaultTaskArgs)), m("_meta", r.taskMeta()))
	rep := r.send(ctx, probe{label: "tools/call " + DefaultTaskTool + " declaring " + tasksExtension, body: envelope(id, "tools/call", params), header: h, id: id})
	var t struct {
		TaskID string `json:"taskId"`
		TTLMs  *int64 `json:"ttlMs"`
	}
	if rep.ResultType != "task" || json.Unmarshal(rep.result, &t) != nil || t.TaskID == "" {
		res := notRun("the server created no task (no Tasks extension, or no "+DefaultTaskTool+" tool): "+rep.String(), rep.Evidence)
		return "", 0, rep, &res
	}
	ttl := int64(-1)
	if t.TTLMs != nil {
		ttl = *t.TTLMs
	}
	return t.TaskID, ttl, rep, nil
}

// cancelTask ends a task a scenario created (best effort).
func (r *runner) cancelTask(ctx context.Context, id string) {
	_ = r.taskRequest(ctx, "tasks/cancel (clean-up)", "tasks/cancel", id, "", false)
}

// guessLike returns a random id of the shape of id: same length, the
// base64url alphabet.
func guessLike(id string) string {
	b := make([]byte, len(id))
	_, _ = rand.Read(b)
	s := base64.RawURLEncoding.EncodeToString(b)
	return s[:len(id)]
}

// neighbour changes the last character of id.
func neighbour(id string) string {
	last := id[len(id)-1]
	repl := byte('A')
	if last == 'A' {
		repl = 'B'
	}
	return id[:len(id)-1] + string(repl)
}

func tasksGuessedID(ctx context.Context, r *runner) Result {
	id, _, created, nr := r.createTask(ctx)
	if nr != nil {
		return *nr
	}
	defer r.cancelTask(ctx, id)
	ev := []Evidence{created.Evidence}
	if len(id) < 22 {
		return fail(fmt.Sprintf("task id %q is %d characters: fewer than the 128 random bits a bearer handle needs (22 base64url characters)", id, len(id)), ev...)
	}
	for _, g := range []string{guessLike(id), guessLike(id), neighbour(id), "1", "task-1"} {
		rep := r.taskRequest(ctx, "tasks/get "+g+" (guessed)", "tasks/get", g, "", false)
		ev = append(ev, rep.Evidence)
		if !rep.isRPCError() {
			return fail("a guessed id was not refused: "+rep.String(), ev...)
		}
	}
	return pass("every guessed id was refused", ev...)
}

func tasksOtherPrincipal(ctx context.Context, r *runner) Result {
	if r.cfg.Token == "" || r.cfg.OtherToken == "" {
		return notRun("needs two principals: set a token and another token")
	}
	id, _, created, nr := r.createTask(ctx)
	if nr != nil {
		return *nr
	}
	defer r.cancelTask(ctx, id)
	ev := []Evidence{created.Evidence}
	unknown := r.taskRequest(ctx, "control: tasks/get of an unknown id as the other principal", "tasks/get", guessLike(id), "", true)
	ev = append(ev, unknown.Evidence)
	if !unknown.isRPCError() {
		return notRun("an unknown id is not refused for the other principal: "+unknown.String(), ev...)
	}
	for _, method := range []string{"tasks/get", "tasks/update", "tasks/cancel"} {
		var more []member
		if method == "tasks/update" {
			more = []member{m("inputResponses", json.RawMessage(`{}`))}
		}
		rep := r.taskRequest(ctx, method+" of the first principal's task as the other principal", method, id, "", true, more...)
		ev = append(ev, rep.Evidence)
		switch {
		case !rep.isRPCError():
			return fail(method+" of another principal's task was served: "+rep.String(), ev...)
		case rep.Error.Code != unknown.Error.Code || rep.Error.Message != unknown.Error.Message || rep.HTTPStatus != unknown.HTTPStatus:
			return fail(method+" of another principal's task is refused differently from an unknown id (the id's existence shows): "+rep.String(), ev...)
		}
	}
	after := r.taskRequest(ctx, "tasks/get as the creator afterwards", "tasks/get", id, "", false)
	ev = append(ev, after.Evidence)
	var t struct {
		Status string `json:"status"`
	}
	_ = json.Unmarshal(after.result, &t)
	if !after.isResult() || t.Status == "cancelled" {
		return fail("the other principal's requests changed the task: "+after.String(), ev...)
	}
	return pass("refused exactly as an unknown id, and the task is untouched", ev...)
}

func tasksNoEarlyExpiry(ctx context.Context, r *runner) Result {
	id, ttl, created, nr := r.createTask(ctx)
	if nr != nil {
		return *nr
	}
	defer r.cancelTask(ctx, id)
	wait := 2 * time.Second
	if ttl >= 0 && time.Duration(ttl)*time.Millisecond/2 < wait {
		wait = time.Duration(ttl) * time.Millisecond / 2
	}
	select {
	case <-ctx.Done():
		return notRun("interrupted")
	case <-time.After(wait):
	}
	rep := r.taskRequest(ctx, fmt.Sprintf("tasks/get %s after %s (ttlMs %d)", id, wait, ttl), "tasks/get", id, "", false)
	if rep.isResult() {
		return pass("still readable within its ttlMs", created.Evidence, rep.Evidence)
	}
	return fail("the task was gone within its ttlMs: "+rep.String(), created.Evidence, rep.Evidence)
}

func tasksNameSpoof(ctx context.Context, r *runner) Result {
	id, _, created, nr := r.createTask(ctx)
	if nr != nil {
		return *nr
	}
	defer r.cancelTask(ctx, id)
	rep := r.taskRequest(ctx, "tasks/get with Mcp-Name naming another task", "tasks/get", id, guessLike(id), false)
	return expectCode(rep, -32020, http.StatusBadRequest, created.Evidence)
}
