package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/mrtrkit/mrtrkit/mrtr"
)

// The Tasks extension (SEP-2663): with --task, tools call declares it,
// and a call the server turns into a task is followed (tasks/get),
// answered (tasks/update) and, when mcpcall is interrupted, cancelled
// (tasks/cancel). The tasks commands reach a task by its id.

// taskView is a CreateTaskResult or a DetailedTask.
type taskView struct {
	TaskID         string          `json:"taskId"`
	Status         string          `json:"status"`
	StatusMessage  string          `json:"statusMessage"`
	PollIntervalMs int64           `json:"pollIntervalMs"`
	InputRequests  json.RawMessage `json:"inputRequests"`
	Result         json.RawMessage `json:"result"`
	Error          *rpcError       `json:"error"`
}

// withTasksExtension adds the Tasks extension to a clientCapabilities
// object.
func withTasksExtension(caps json.RawMessage) (json.RawMessage, error) {
	m := map[string]json.RawMessage{}
	if len(caps) > 0 {
		if err := json.Unmarshal(caps, &m); err != nil {
			return nil, err
		}
	}
	ext := map[string]json.RawMessage{}
	if raw, ok := m["extensions"]; ok {
		if err := json.Unmarshal(raw, &ext); err != nil {
			return nil, fmt.Errorf("--capabilities: extensions is not an object")
		}
	}
	ext[mrtr.TasksExtension] = json.RawMessage(`{}`)
	m["extensions"] = mustJSON(ext)
	return json.Marshal(m)
}

// taskRequest sends one tasks/* request for id.
func (s *session) taskRequest(ctx context.Context, method, id string, more ...member) (*taskView, json.RawMessage, error) {
	resp, err := s.client.call(ctx, method, id, append([]member{{"taskId", mustJSON(id)}}, more...), nil)
	if err != nil {
		return nil, nil, err
	}
	if resp.Error != nil {
		return nil, nil, fmt.Errorf("%s %s: %d %s", method, id, resp.Error.Code, termLine(resp.Error.Message))
	}
	var v taskView
	if err := json.Unmarshal(resp.Result, &v); err != nil {
		return nil, nil, transportErr("%s: the result is not a JSON object: %v", method, err)
	}
	return &v, resp.Result, nil
}

// taskCommand runs tasks get, tasks cancel and tasks wait.
func (s *session) taskCommand(ctx context.Context, cmd command) int {
	switch cmd.method {
	case mrtr.MethodTasksCancel:
		if _, _, err := s.taskRequest(ctx, mrtr.MethodTasksCancel, cmd.target); err != nil {
			return s.fail(err)
		}
		fmt.Fprintf(s.env.stderr, "mcpcall: asked task %s to cancel\n", termLine(cmd.target))
		return exitOK
	case mrtr.MethodTasksGet:
		if cmd.wait {
			return s.followTask(ctx, command{method: "tools/call", target: cmd.target}, cmd.target, 0)
		}
		_, raw, err := s.taskRequest(ctx, mrtr.MethodTasksGet, cmd.target)
		if err != nil {
			return s.fail(err)
		}
		s.out.final(cmd, raw, 0, 0)
		return exitOK
	}
	return s.fail(transportErr("unknown tasks command"))
}

// followTask polls task id until it ends, answering its questions, and
// prints its result as the call's. On interruption it cancels the task.
func (s *session) followTask(ctx context.Context, cmd command, id string, rounds int) int {
	fmt.Fprintf(s.env.stderr, "mcpcall: the server runs the call as task %s\n", termLine(id))
	answered := map[string]bool{}
	poll := time.Second
	for {
		v, _, err := s.taskRequest(ctx, mrtr.MethodTasksGet, id)
		if err != nil {
			if ctx.Err() != nil {
				return s.cancelTask(id, ctx.Err())
			}
			return s.fail(err)
		}
		if v.PollIntervalMs > 0 {
			poll = min(time.Duration(v.PollIntervalMs)*time.Millisecond, 10*time.Second)
		}
		switch v.Status {
		case mrtr.TaskCompleted:
			s.out.final(cmd, v.Result, rounds, 0)
			var h resultHead
			_ = json.Unmarshal(v.Result, &h)
			if h.IsError {
				fmt.Fprintln(s.env.stderr, "mcpcall: the tool reported an error (result with isError: true)")
				return exitRPCError
			}
			return exitOK
		case mrtr.TaskFailed:
			if v.Error != nil {
				fmt.Fprintf(s.env.stderr, "mcpcall: task %s failed: %d %s\n", termLine(id), v.Error.Code, termLine(v.Error.Message))
			} else {
				fmt.Fprintf(s.env.stderr, "mcpcall: task %s failed\n", termLine(id))
			}
			return exitRPCError
		case mrtr.TaskCancelled:
			fmt.Fprintf(s.env.stderr, "mcpcall: task %s was cancelled %s\n", termLine(id), termLine(v.StatusMessage))
			return exitRPCError
		case mrtr.TaskInputRequired:
			names, values, err := orderedMembers(v.InputRequests)
			if err != nil {
				return s.fail(transportErr("tasks/get: inputRequests is not an object: %v", err))
			}
			rounds++
			if rounds > s.opts.maxRounds {
				fmt.Fprintf(s.env.stderr, "mcpcall: task %s still asks for input after %d rounds; cancelling it (--max-rounds %d)\n", termLine(id), rounds-1, s.opts.maxRounds)
				return s.cancelTask(id, nil)
			}
			rec := &roundRecord{Type: "round", Round: rounds, Method: cmd.method, Target: cmd.target}
			s.out.roundStart(rec, len(names))
			var answers []member
			for i, key := range names {
				if answered[key] {
					continue
				}
				var req inputRequest
				if err := json.Unmarshal(values[i], &req); err != nil || req.Method == "" {
					return s.fail(transportErr("tasks/get: inputRequests[%q] is not a {method, params} request", key))
				}
				rec.asked(key, values[i])
				s.out.asked(key, req)
				a, err := s.answers.answer(ctx, key, req)
				if err != nil {
					s.out.roundEnd(rec)
					if ctx.Err() != nil {
						return s.cancelTask(id, ctx.Err())
					}
					return s.fail(err)
				}
				rec.answered(key, a)
				s.out.answered(key, req, a)
				answers = append(answers, member{key, a.value})
				answered[key] = true
			}
			s.out.roundEnd(rec)
			if len(answers) > 0 {
				obj, err := objectOf(answers)
				if err != nil {
					return s.fail(err)
				}
				if _, _, err := s.taskRequest(ctx, mrtr.MethodTasksUpdate, id, member{"inputResponses", obj}); err != nil {
					return s.fail(err)
				}
				continue
			}
		}
		select {
		case <-ctx.Done():
			return s.cancelTask(id, ctx.Err())
		case <-time.After(poll):
		}
	}
}

// cancelTask asks the server to cancel task id (mcpcall is stopping).
func (s *session) cancelTask(id string, why error) int {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, _, err := s.taskRequest(ctx, mrtr.MethodTasksCancel, id); err != nil {
		fmt.Fprintf(s.env.stderr, "mcpcall: cancelling task %s failed: %v\n", termLine(id), err)
	} else {
		fmt.Fprintf(s.env.stderr, "mcpcall: asked task %s to cancel\n", termLine(id))
	}
	if why != nil && !strings.Contains(why.Error(), "canceled") {
		fmt.Fprintf(s.env.stderr, "mcpcall: %v\n", why)
	}
	return exitUsage
}
