package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/mrtrkit/mrtrkit/client"
	"github.com/mrtrkit/mrtrkit/mrtr"
)

// The Tasks extension (SEP-2663), through the client's task API: with
// --task, tools call is a client.CreateTask, and a call the server turns
// into a task is followed with client.AwaitTask (polled at the server's
// interval, its questions answered and printed as rounds) and, when
// mcpcall is interrupted or the round limit is reached, cancelled. The
// tasks commands reach a task by its id.

// callTask runs tools call with --task: the client declares the
// extension, answers the rounds before the server creates the task, and
// the task is followed to its end.
func (s *session) callTask(ctx context.Context, cmd command, args any, opts []client.CallOption) int {
	t, err := s.c.CreateTask(ctx, cmd.target, args, opts...)
	if err != nil {
		return s.callFailed(cmd, err)
	}
	if t.ID == "" { // answered at once
		return s.result(cmd, t.Result.Raw, t.Result.Rounds)
	}
	return s.followTask(ctx, cmd, t)
}

// taskCommand runs tasks get, tasks cancel and tasks wait.
func (s *session) taskCommand(ctx context.Context, cmd command) int {
	switch cmd.method {
	case mrtr.MethodTasksCancel:
		if err := s.c.CancelTask(ctx, cmd.target); err != nil {
			return s.failed(cmd, err)
		}
		fmt.Fprintf(s.env.stderr, "mcpcall: asked task %s to cancel\n", termLine(cmd.target))
		return exitOK
	case mrtr.MethodTasksGet:
		t, err := s.c.GetTask(ctx, cmd.target)
		if err != nil {
			return s.failed(cmd, err)
		}
		if cmd.wait {
			return s.followTask(ctx, command{method: mrtr.MethodToolsCall, target: cmd.target}, t)
		}
		s.out.final(cmd, t.Raw, 0, 0)
		return exitOK
	}
	return s.fail(transportErr("unknown tasks command"))
}

// followTask follows task t until it ends, its questions answered and
// printed as rounds, and prints its result as the call's. On
// interruption, and past the round limit, it cancels the task; a task
// whose question mcpcall cannot answer is left for `tasks wait`.
func (s *session) followTask(ctx context.Context, cmd command, t *client.Task) int {
	id := termLine(t.ID)
	fmt.Fprintf(s.env.stderr, "mcpcall: the server runs the call as task %s\n", id)
	res, err := s.c.AwaitTask(ctx, t, client.WithRoundWatch(s.roundWatch(cmd)))
	var ce *client.Error
	errors.As(err, &ce)
	switch {
	case err == nil:
		return s.result(cmd, res.Raw, res.Rounds)
	case ctx.Err() != nil:
		return s.cancelTask(t.ID, ctx.Err())
	case errors.Is(err, client.ErrTooManyRounds):
		fmt.Fprintf(s.env.stderr, "mcpcall: task %s still asks for input after %d rounds; cancelling it (--max-rounds %d)\n", id, s.opts.maxRounds, s.opts.maxRounds)
		return s.cancelTask(t.ID, nil)
	case errors.Is(err, client.ErrTaskFailed):
		var rpc *client.RPCError
		if errors.As(err, &rpc) {
			fmt.Fprintf(s.env.stderr, "mcpcall: task %s failed\n", id)
			return s.failed(cmd, err)
		}
		fmt.Fprintf(s.env.stderr, "mcpcall: task %s: %s\n", id, termLine(ce.Err.Error()))
		return exitRPCError
	case errors.Is(err, client.ErrTaskCancelled):
		fmt.Fprintf(s.env.stderr, "mcpcall: task %s: %s\n", id, termLine(ce.Err.Error()))
		return exitRPCError
	}
	return s.failed(cmd, err)
}

// cancelTask asks the server to cancel task id (mcpcall is stopping).
func (s *session) cancelTask(id string, why error) int {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.c.CancelTask(ctx, id); err != nil {
		fmt.Fprintf(s.env.stderr, "mcpcall: cancelling task %s failed: %s\n", termLine(id), termText(err.Error()))
	} else {
		fmt.Fprintf(s.env.stderr, "mcpcall: asked task %s to cancel\n", termLine(id))
	}
	if why != nil && !strings.Contains(why.Error(), "canceled") {
		fmt.Fprintf(s.env.stderr, "mcpcall: %v\n", why)
	}
	return exitUsage
}
