package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mrtrkit/mrtrkit/conformance/suite"
	"github.com/mrtrkit/mrtrkit/discover"
	"github.com/mrtrkit/mrtrkit/internal/testkit"
	"github.com/mrtrkit/mrtrkit/mrtr"
	"github.com/mrtrkit/mrtrkit/mrtr/legacy"
	"github.com/mrtrkit/mrtrkit/transport/streamablehttp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func runCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(context.Background(), args, &out, &errOut)
	return code, out.String(), errOut.String()
}

// goodServer serves, with mrtrkit, a tool "ask" and its twin "ask_twin"
// that ask for a name and then complete.
func goodServer(t *testing.T) string { return askServer(t, false) }

// askServer is goodServer, which also serves clients of the initialize era
// (2025-11-25) when dual is set.
func askServer(t *testing.T, dual bool) string {
	t.Helper()
	codec := testkit.FreshCodec(t)
	desc := discover.Description{
		Server:       discover.Implementation{Name: "cli-test", Version: "1"},
		Capabilities: discover.Capabilities{Tools: &discover.ListChanged{}},
	}
	if dual {
		desc.LegacyVersions = []string{"2025-11-25"}
	}
	srv, err := mrtr.NewServer(desc, mrtr.WithCodec(codec), mrtr.WithLogger(slog.New(slog.DiscardHandler)))
	require.NoError(t, err)
	h := mrtr.HandlerFunc(func(_ context.Context, req *mrtr.Request) (mrtr.Result, error) {
		if a, ok := req.Responses.Elicitation("name"); ok && a.Accepted() {
			return &mrtr.CallToolResult{Content: []mrtr.Content{mrtr.Text("hello")}}, nil
		}
		return mrtr.Ask("name", &mrtr.ElicitRequest{
			Message:         "Name?",
			RequestedSchema: &mrtr.ElicitSchema{Type: "object", Properties: map[string]json.RawMessage{"name": json.RawMessage(`{"type":"string"}`)}},
		}), nil
	})
	schema := json.RawMessage(`{"type":"object","properties":{"topic":{"type":"string"}}}`)
	for _, name := range []string{"ask", "ask_twin"} {
		require.NoError(t, srv.AddTool(mrtr.Tool{Name: name, InputSchema: schema}, h))
	}
	opts := []streamablehttp.Option{streamablehttp.WithLogger(slog.New(slog.DiscardHandler))}
	if dual {
		eng, err := legacy.New(srv, legacy.WithLogger(slog.New(slog.DiscardHandler)))
		require.NoError(t, err)
		opts = append(opts, streamablehttp.WithLegacy(eng))
	}
	handler, err := streamablehttp.New(srv, opts...)
	require.NoError(t, err)
	ts := httptest.NewServer(handler)
	t.Cleanup(ts.Close)
	return ts.URL + "/mcp"
}

// acceptAnyState is a server that asks once and then accepts any
// requestState at all.
func acceptAnyState(t *testing.T) string {
	t.Helper()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				InputResponses json.RawMessage `json:"inputResponses"`
			} `json:"params"`
		}
		body, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(body, &msg)
		w.Header().Set("Content-Type", "application/json")
		result := `{"resultType":"input_required","requestState":"c3RhdGU","inputRequests":{"name":{"method":"elicitation/create","params":{"message":"Name?","requestedSchema":{"type":"object","properties":{"name":{"type":"string"}}}}}}}`
		switch {
		case msg.Method == "tools/list":
			result = `{"tools":[{"name":"ask","inputSchema":{"type":"object"}},{"name":"ask_twin","inputSchema":{"type":"object"}}]}`
		case len(msg.Params.InputResponses) > 0:
			result = `{"resultType":"complete","content":[]}`
		}
		_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(msg.ID)+`,"result":`+result+`}`)
	}))
	t.Cleanup(ts.Close)
	return ts.URL + "/mcp"
}

func TestUsageErrors(t *testing.T) {
	for name, args := range map[string][]string{
		"no url":                 {},
		"bad flag":               {"-nope"},
		"extra argument":         {"-url", "http://127.0.0.1:1/mcp", "extra"},
		"args not JSON":          {"-url", "http://127.0.0.1:1/mcp", "-args", "{"},
		"args not object":        {"-url", "http://127.0.0.1:1/mcp", "-args", "[]"},
		"caps not JSON":          {"-url", "http://127.0.0.1:1/mcp", "-caps", "x"},
		"answers not JSON":       {"-url", "http://127.0.0.1:1/mcp", "-answers", "{"},
		"answers array":          {"-url", "http://127.0.0.1:1/mcp", "-answers", "[]"},
		"answer not object":      {"-url", "http://127.0.0.1:1/mcp", "-answers", `{"k":1}`},
		"bad regexp":             {"-url", "http://127.0.0.1:1/mcp", "-run", "("},
		"bad url":                {"-url", "127.0.0.1:1/mcp"},
		"same tool":              {"-url", "http://127.0.0.1:1/mcp", "-tool", "a", "-other-tool", "a"},
		"same tokens":            {"-url", "http://127.0.0.1:1/mcp", "-token", "x", "-other-token", "x"},
		"zero timeout":           {"-url", "http://127.0.0.1:1/mcp", "-timeout", "0s"},
		"legacy tool unnamed":    {"-url", "http://127.0.0.1:1/mcp", "-legacy-tool", `={}`},
		"legacy args not JSON":   {"-url", "http://127.0.0.1:1/mcp", "-legacy-tool", `t={`},
		"legacy args not object": {"-url", "http://127.0.0.1:1/mcp", "-legacy-tool", `t=[1]`},
		"zero legacy rounds":     {"-url", "http://127.0.0.1:1/mcp", "-legacy-rounds", "0"},
		"too many legacy rounds": {"-url", "http://127.0.0.1:1/mcp", "-legacy-rounds", "51"},
	} {
		t.Run(name, func(t *testing.T) {
			code, out, errOut := runCLI(t, args...)
			assert.Equal(t, exitUsage, code, "exit code; stdout %q stderr %q", out, errOut)
			assert.Empty(t, out, "usage error wrote to stdout")
		})
	}
	code, _, errOut := runCLI(t, "-h")
	assert.Equal(t, exitOK, code, "-h: exit code; stderr %q", errOut)
	assert.Contains(t, errOut, "Usage: mrtrcheck", "-h")
}

func TestList(t *testing.T) {
	code, out, _ := runCLI(t, "-list")
	require.Equal(t, exitOK, code, "exit code:\n%s", out)
	require.Contains(t, out, "state.flip-middle")
	require.Contains(t, out, "(informational)")
	code, out, _ = runCLI(t, "-list", "-json")
	require.Equal(t, exitOK, code, "-json: exit code:\n%s", out)
	var all []suite.Scenario
	require.NoError(t, json.Unmarshal([]byte(out), &all), "-json:\n%s", out)
	require.Len(t, all, len(suite.Scenarios())+len(hardeningScenarios()), "-json: every scenario, the hardening ones too")
}

func TestGoodServerExitsZero(t *testing.T) {
	url := goodServer(t)
	code, out, errOut := runCLI(t, "-url", url, "-tool", "ask", "-args", `{"topic":"x"}`, "-other-tool", "ask_twin", "-json", "-body-wait", "500ms")
	require.Equal(t, exitOK, code, "exit code\n%s\n%s", out, errOut)
	var rep suite.Report
	require.NoError(t, json.Unmarshal([]byte(out), &rep), "the JSON report does not decode\n%s", out)
	// NOT-RUN: the cross-principal replay (no tokens), state.forged (the
	// AEAD state is opaque), hardening.listen-cap (the server advertises
	// no list changes, so serves no listen streams), and the legacy
	// scenarios and the server.* ones (the server serves 2026-07-28 only),
	// and the task scenarios (the server has no tasks).
	legacyNotRun := 0
	for _, res := range rep.Results {
		if (strings.HasPrefix(res.ID, "legacy.") || strings.HasPrefix(res.ID, "server.") || strings.HasPrefix(res.ID, "tasks.")) && res.Status == suite.NotRun {
			legacyNotRun++
		}
	}
	assert.NotZero(t, legacyNotRun, "legacy, server and tasks scenarios NOT-RUN; counts %v", rep.Counts)
	assert.Zero(t, rep.Counts[suite.Fail], "FAIL count; counts %v", rep.Counts)
	assert.Equal(t, 3+legacyNotRun, rep.Counts[suite.NotRun], "NOT-RUN count; counts %v, %d legacy NOT-RUN", rep.Counts, legacyNotRun)
	assert.GreaterOrEqual(t, rep.Counts[suite.Pass], 20, "PASS count; counts %v", rep.Counts)
	res, ok := rep.Result("replay.other-principal")
	if assert.True(t, ok, "replay.other-principal did not run") {
		assert.Equal(t, suite.NotRun, res.Status, "replay.other-principal: %+v", res)
	}
}

func TestWeakServerExitsOne(t *testing.T) {
	url := acceptAnyState(t)
	code, out, errOut := runCLI(t, "-url", url, "-tool", "ask", "-other-tool", "ask_twin", "-run", `^(state\.flip|replay\.)`)
	require.Equal(t, exitFail, code, "exit code\n%s\n%s", out, errOut)
	for _, want := range []string{"baseline.round-trip", "state.flip-middle", "FAIL", "accepted: HTTP 200, result complete", "scenarios:"} {
		assert.Contains(t, out, want, "the table")
	}
	assert.NotContains(t, out, "envelope.", "-run did not select")
}

func TestUnreachableServerExitsOne(t *testing.T) {
	code, out, _ := runCLI(t, "-url", "http://127.0.0.1:1/mcp", "-timeout", "2s", "-run", "^http\\.get$")
	require.Equal(t, exitFail, code, "exit code\n%s", out)
	require.Contains(t, out, "http.get")
}

func TestStrictExitsOneOnNotRun(t *testing.T) {
	url := goodServer(t)
	args := []string{"-url", url, "-tool", "ask", "-args", `{"topic":"x"}`, "-other-tool", "ask_twin", "-run", `^replay\.`}
	code, out, errOut := runCLI(t, args...)
	require.Equal(t, exitOK, code, "without -strict: exit code\n%s\n%s", out, errOut)
	code, out, errOut = runCLI(t, append(args, "-strict")...)
	require.Equal(t, exitFail, code, "with -strict: exit code\n%s\n%s", out, errOut)
	require.Contains(t, out, "-strict counts as a failure", "with -strict")
}

func TestAnswersFlagIsSent(t *testing.T) {
	// The server completes only when the answer to "name" is the one
	// given; the suite's made-up one is refused with -32602 naming it.
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				InputResponses map[string]json.RawMessage `json:"inputResponses"`
			} `json:"params"`
		}
		body, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(body, &msg)
		w.Header().Set("Content-Type", "application/json")
		result := `{"resultType":"input_required","requestState":"c3RhdGU","inputRequests":{"name":{"method":"sampling/createMessage","params":{"messages":[],"maxTokens":5}}}}`
		switch a, ok := msg.Params.InputResponses["name"]; {
		case msg.Method == "tools/list":
			result = `{"tools":[{"name":"ask","inputSchema":{"type":"object"}}]}`
		case ok && !strings.Contains(string(a), "magic"):
			_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(msg.ID)+`,"error":{"code":-32602,"message":"Invalid answer","data":{"key":"name"}}}`)
			return
		case ok:
			result = `{"resultType":"complete","content":[]}`
		}
		_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(msg.ID)+`,"result":`+result+`}`)
	}))
	defer ts.Close()
	args := []string{"-url", ts.URL + "/mcp", "-tool", "ask", "-run", `^baseline`}
	code, out, _ := runCLI(t, args...)
	require.Equal(t, exitOK, code, "without -answers: exit code\n%s", out)
	require.Contains(t, out, "NOT-RUN", "without -answers")
	require.Contains(t, out, "supply the answer it expects with -answers", "without -answers")
	code, out, _ = runCLI(t, append(args, "-answers", `{"name":{"role":"assistant","content":{"type":"text","text":"magic"},"model":"m"}}`)...)
	require.Equal(t, exitOK, code, "with -answers: exit code\n%s", out)
	require.Contains(t, out, "1 PASS, 0 FAIL", "with -answers")
}

func TestLegacyFlags(t *testing.T) {
	url := askServer(t, true)
	code, out, errOut := runCLI(t, "-url", url, "-tool", "ask", "-args", `{"topic":"x"}`, "-run", `^legacy\.`,
		"-legacy-tool", `ask={"topic":"legacy"}`, "-legacy-tool", "ask_twin", "-legacy-tool", "not_listed", "-legacy-rounds", "2")
	require.Equal(t, exitOK, code, "exit code\n%s\n%s", out, errOut)
	for _, want := range []string{"legacy.no-leak", "ask 1 round(s) of legs; ask_twin 1 round(s) of legs", "of 1..2", "not_listed is not listed, skipped",
		"legacy.session-principal", "needs two principals", "11 PASS, 0 FAIL, 1 NOT-RUN"} {
		assert.Contains(t, out, want, "the table")
	}
	// A server of 2026-07-28 only: every legacy scenario is NOT-RUN.
	code, out, _ = runCLI(t, "-url", goodServer(t), "-tool", "ask", "-run", `^legacy\.`)
	require.Equal(t, exitOK, code, "2026-07-28 only: exit code\n%s", out)
	require.Contains(t, out, "server does not serve the initialize era", "2026-07-28 only")
	require.Contains(t, out, "0 PASS, 0 FAIL, 12 NOT-RUN", "2026-07-28 only")
}
