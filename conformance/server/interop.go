package main

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/mrtrkit/mrtrkit/mrtr"
)

// This file holds the fixtures the client interop tests
// (conformance/interop) call beyond the official suite's: a handler of
// three rounds that mixes the three kinds of input, a leg the test client
// answers too late or never, a tool that runs until it is cancelled and
// one that reports what became of it, and a resource that asks for input
// before it is read. Like every MRTR fixture they keep their progress only in
// InputRequired.State, so the same handlers serve a 2026-07-28 client
// (input_required rounds) and a 2025-11-25 client (real server-to-client
// requests, through package mrtr/legacy).

// Names and keys the interop tests rely on.
const (
	threeRoundsTool   = "test_three_rounds"
	legTimeoutTool    = "test_leg_timeout"
	slowTool          = "test_slow"
	slowStatusTool    = "test_slow_status"
	inputResourceURI  = "test://input-required-resource"
	legTimeoutMessage = "Answer this after the leg timeout, or never"
)

// slowLimit bounds how long test_slow waits for its cancellation.
const slowLimit = 30 * time.Second

// slowCalls counts the test_slow calls of one fixture process, for
// test_slow_status: a stdio client has the process to itself, so the counts
// are its own.
type slowCalls struct {
	mu        sync.Mutex
	running   int
	cancelled int
	finished  int
	lastCause string
}

func (s *slowCalls) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return fmt.Sprintf("running=%d cancelled=%d finished=%d last_cause=%q", s.running, s.cancelled, s.finished, s.lastCause)
}

// wait is test_slow: it reports progress 0 (when the request has a progress
// token) so that the client knows the call has started, then waits until
// the request's context ends, or slowLimit.
func (s *slowCalls) wait(ctx context.Context, req *mrtr.Request) (*mrtr.CallToolResult, error) {
	s.mu.Lock()
	s.running++
	s.mu.Unlock()
	// A failure here means the client is gone or cancelled the call
	// already, which the context tells below.
	_ = req.Progress(0, nil, "waiting until cancelled")
	t := time.NewTimer(slowLimit)
	defer t.Stop()
	select {
	case <-ctx.Done():
		s.mu.Lock()
		s.running--
		s.cancelled++
		s.lastCause = context.Cause(ctx).Error()
		s.mu.Unlock()
		return nil, ctx.Err()
	case <-t.C:
		s.mu.Lock()
		s.running--
		s.finished++
		s.mu.Unlock()
		return textResult("test_slow was not cancelled within " + slowLimit.String()), nil
	}
}

// registerInteropFixtures registers the interop fixtures: four tools, after
// every other tool, and one resource, after every other resource (the
// suite's caching scenario reads resources[0], which must not ask for
// input).
func (f *fixtures) registerInteropFixtures() error {
	threeRounds := gatherTool([]question{
		{
			key:      "elicitation",
			req:      formRequest("Round 1 of 3: what is your name?", []string{"name"}, "name", `{"type":"string","description":"Your name"}`),
			declared: hasForm,
			answer:   formAnswer("elicitation", "name"),
		},
		samplingQuestion("sampling", "Round 2 of 3: what is the capital of France?", 50),
		rootsQuestion("roots"),
	}, askInTurn, func(a map[string]string) string {
		return fmt.Sprintf("Three rounds completed: elicitation=%s; sampling=%s; roots=%s", a["elicitation"], a["sampling"], a["roots"])
	})
	if err := f.srv.AddTool(mrtr.Tool{
		Name:        threeRoundsTool,
		Description: "Asks, one round each, a name by elicitation (key elicitation), a model answer by sampling (key sampling) and the client's roots (key roots), then reports all three",
		InputSchema: emptySchema,
	}, threeRounds); err != nil {
		return err
	}

	late := gatherTool([]question{{
		key:      "late",
		req:      formRequest(legTimeoutMessage, []string{"answer"}, "answer", `{"type":"string","description":"Any answer"}`),
		declared: hasForm,
		answer:   formAnswer("late", "answer"),
	}}, askAll, func(a map[string]string) string { return "The late question was answered: " + a["late"] })
	if err := f.srv.AddTool(mrtr.Tool{
		Name: legTimeoutTool,
		Description: "Asks one elicitation (key late) that the interop clients answer after the leg timeout (-leg-timeout) or never; " +
			"a 2025-11-25 client then gets an isError result naming the request",
		InputSchema: emptySchema,
	}, late); err != nil {
		return err
	}

	slow := &slowCalls{}
	if err := f.srv.AddTool(mrtr.Tool{
		Name: slowTool,
		Description: "Reports progress 0 (with a progress token), then waits until the request is cancelled (at most 30 s), and stops at once when it is; " +
			"test_slow_status tells what became of the calls",
		InputSchema: emptySchema,
	}, toolFunc(slow.wait)); err != nil {
		return err
	}
	if err := f.srv.AddTool(mrtr.Tool{
		Name: slowStatusTool,
		Description: "Reports the test_slow calls of this server process: running=N cancelled=N finished=N last_cause=\"...\" " +
			"(cancelled: stopped by the end of their context, whose cause is last_cause; finished: not cancelled within 30 s)",
		InputSchema: emptySchema,
	}, toolFunc(func(context.Context, *mrtr.Request) (*mrtr.CallToolResult, error) {
		return textResult(slow.String()), nil
	})); err != nil {
		return err
	}

	return f.srv.AddResource(mrtr.Resource{
		URI:         inputResourceURI,
		Name:        "input-required-resource",
		Description: "Asks for the client's roots (key client_roots) before it is read; its text lists them",
		MIMEType:    "text/plain",
	}, mrtr.HandlerFunc(func(_ context.Context, req *mrtr.Request) (mrtr.Result, error) {
		return gather(req, []question{rootsQuestion("client_roots")}, askAll, func(a map[string]string) (mrtr.Result, error) {
			return &mrtr.ReadResourceResult{Contents: []mrtr.ResourceContents{
				mrtr.TextResource(inputResourceURI, "text/plain", "Client roots: "+a["client_roots"]),
			}}, nil
		})
	}))
}
