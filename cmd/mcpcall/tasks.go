package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/mrtrkit/mrtrkit/client"
	"github.com/mrtrkit/mrtrkit/mrtr"
)

// The Tasks extension (SEP-2663): with --task, tools call declares it,
// and a call the server turns into a task is followed (tasks/get),
// answered (tasks/update) and, when mcpcall is interrupted, cancelled
// (tasks/cancel). The tasks commands reach a task by its id.

// taskView is a CreateTaskResult or a DetailedTask.
type taskView struct {
	TaskID         string           `json:"taskId"`
	Status         string           `json:"status"`
	StatusMessage  string           `json:"statusMessage"`
	PollIntervalMs int64            `json:"pollIntervalMs"`
	InputRequests  json.RawMessage  `json:"inputRequests"`
	Result         json.RawMessage  `json:"result"`
	Error          *client.RPCError `json:"error"`
}

// taskRequest sends one tasks/* request for id, with more params. It
// goes through client.CallTarget, a raw method call with Mcp-Name: id,
// until the client has a task API of its own.
func (s *session) taskRequest(ctx context.Context, method, id string, more map[string]any) (*taskView, json.RawMessage, error) {
	params := map[string]any{"taskId": id}
	for k, v := range more {
		params[k] = v
	}
	res, err := s.c.CallTarget(ctx, method, id, params)
	if err != nil {
		var rpc *client.RPCError
		if errors.As(err, &rpc) {
			return nil, nil, fmt.Errorf("%s %s: %d %s", method, id, rpc.Code, termLine(rpc.Message))
		}
		return nil, nil, err
	}
	var v taskView
	if err := json.Unmarshal(res, &v); err != nil {
		return nil, nil, transportErr("%s: the result is not a JSON object: %v", method, err)
	}
	return &v, res, nil
}

// taskCommand runs tasks get, tasks cancel and tasks wait.
func (s *session) taskCommand(ctx context.Context, cmd command) int {
	switch cmd.method {
	case mrtr.MethodTasksCancel:
		if _, _, err := s.taskRequest(ctx, mrtr.MethodTasksCancel, cmd.target, nil); err != nil {
			return s.fail(err)
		}
		fmt.Fprintf(s.env.stderr, "mcpcall: asked task %s to cancel\n", termLine(cmd.target))
		return exitOK
	case mrtr.MethodTasksGet:
		if cmd.wait {
			return s.followTask(ctx, command{method: "tools/call", target: cmd.target}, cmd.target, 0)
		}
		_, raw, err := s.taskRequest(ctx, mrtr.MethodTasksGet, cmd.target, nil)
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
		v, _, err := s.taskRequest(ctx, mrtr.MethodTasksGet, id, nil)
		if err != nil {
			if ctx.Err() != nil {
				return s.cancelTask(id, ctx.Err())
			}
			return s.failed(cmd, err)
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
			r, err := s.answerTask(ctx, cmd, rounds, names, values, answered)
			if err != nil {
				if ctx.Err() != nil {
					return s.cancelTask(id, ctx.Err())
				}
				return s.fail(err)
			}
			if len(r) > 0 {
				if _, _, err := s.taskRequest(ctx, mrtr.MethodTasksUpdate, id, map[string]any{"inputResponses": r}); err != nil {
					return s.failed(cmd, err)
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
	if _, _, err := s.taskRequest(ctx, mrtr.MethodTasksCancel, id, nil); err != nil {
		fmt.Fprintf(s.env.stderr, "mcpcall: cancelling task %s failed: %v\n", termLine(id), err)
	} else {
		fmt.Fprintf(s.env.stderr, "mcpcall: asked task %s to cancel\n", termLine(id))
	}
	if why != nil && !strings.Contains(why.Error(), "canceled") {
		fmt.Fprintf(s.env.stderr, "mcpcall: %v\n", why)
	}
	return exitUsage
}

// answerTask answers the questions of a task not answered yet, printing
// them as a round, and returns the answers by key.
func (s *session) answerTask(ctx context.Context, cmd command, n int, names []string, values []json.RawMessage, answered map[string]bool) (map[string]json.RawMessage, error) {
	r := &client.Round{N: n}
	for i, key := range names {
		if answered[key] {
			continue
		}
		var q inputRequest
		if err := json.Unmarshal(values[i], &q); err != nil || q.Method == "" {
			return nil, transportErr("tasks/get: inputRequests[%q] is not a {method, params} request", key)
		}
		r.Requests = append(r.Requests, client.InputRequest{Key: key, Method: q.Method, Params: q.Params, Raw: values[i]})
	}
	var rounds int
	w := s.roundWatch(cmd, &rounds)
	w.Asked(r)
	out := map[string]json.RawMessage{}
	for i, q := range r.Requests {
		a, err := s.answers.answer(ctx, q.Key, inputRequest{Method: q.Method, Params: q.Params})
		if err != nil {
			w.Done(r, err)
			return nil, err
		}
		s.sources[q.Key] = a.source
		r.Answers = append(r.Answers, a.value)
		w.Answered(r, i)
		out[q.Key] = a.value
		answered[q.Key] = true
	}
	w.Done(r, nil)
	return out, nil
}
