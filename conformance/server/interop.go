package main

import (
	"context"
	"fmt"

	"github.com/mrtrkit/mrtrkit/mrtr"
)

// This file holds the fixtures the client interop tests
// (conformance/interop) call beyond the official suite's: a handler of
// three rounds that mixes the three kinds of input, a leg the test client
// answers too late or never, and a resource that asks for input before it
// is read. Like every MRTR fixture they keep their progress only in
// InputRequired.State, so the same handlers serve a 2026-07-28 client
// (input_required rounds) and a 2025-11-25 client (real server-to-client
// requests, through package mrtr/legacy).

// Names and keys the interop tests rely on.
const (
	threeRoundsTool   = "test_three_rounds"
	legTimeoutTool    = "test_leg_timeout"
	inputResourceURI  = "test://input-required-resource"
	legTimeoutMessage = "Answer this after the leg timeout, or never"
)

// registerInteropFixtures registers the interop fixtures: two tools, after
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
