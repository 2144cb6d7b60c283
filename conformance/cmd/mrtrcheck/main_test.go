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
	if err != nil {
		t.Fatal(err)
	}
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
		if err := srv.AddTool(mrtr.Tool{Name: name, InputSchema: schema}, h); err != nil {
			t.Fatal(err)
		}
	}
	opts := []streamablehttp.Option{streamablehttp.WithLogger(slog.New(slog.DiscardHandler))}
	if dual {
		eng, err := legacy.New(srv, legacy.WithLogger(slog.New(slog.DiscardHandler)))
		if err != nil {
			t.Fatal(err)
		}
		opts = append(opts, streamablehttp.WithLegacy(eng))
	}
	handler, err := streamablehttp.New(srv, opts...)
	if err != nil {
		t.Fatal(err)
	}
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
			if code != exitUsage {
				t.Errorf("exit %d, want %d; stdout %q stderr %q", code, exitUsage, out, errOut)
			}
			if out != "" {
				t.Errorf("usage error wrote to stdout: %q", out)
			}
		})
	}
	if code, _, errOut := runCLI(t, "-h"); code != exitOK || !strings.Contains(errOut, "Usage: mrtrcheck") {
		t.Errorf("-h: exit %d, %q", code, errOut)
	}
}

func TestList(t *testing.T) {
	code, out, _ := runCLI(t, "-list")
	if code != exitOK || !strings.Contains(out, "state.flip-middle") || !strings.Contains(out, "(informational)") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	code, out, _ = runCLI(t, "-list", "-json")
	var all []suite.Scenario
	if code != exitOK || json.Unmarshal([]byte(out), &all) != nil || len(all) != len(suite.Scenarios())+len(hardeningScenarios()) {
		t.Fatalf("exit %d:\n%s", code, out)
	}
}

func TestGoodServerExitsZero(t *testing.T) {
	url := goodServer(t)
	code, out, errOut := runCLI(t, "-url", url, "-tool", "ask", "-args", `{"topic":"x"}`, "-other-tool", "ask_twin", "-json", "-body-wait", "500ms")
	if code != exitOK {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	var rep suite.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("the JSON report does not decode: %v\n%s", err, out)
	}
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
	if legacyNotRun == 0 || rep.Counts[suite.Fail] != 0 || rep.Counts[suite.NotRun] != 3+legacyNotRun || rep.Counts[suite.Pass] < 20 {
		t.Errorf("counts %v, %d legacy NOT-RUN", rep.Counts, legacyNotRun)
	}
	if res, ok := rep.Result("replay.other-principal"); !ok || res.Status != suite.NotRun {
		t.Errorf("replay.other-principal: %+v", res)
	}
}

func TestWeakServerExitsOne(t *testing.T) {
	url := acceptAnyState(t)
	code, out, errOut := runCLI(t, "-url", url, "-tool", "ask", "-other-tool", "ask_twin", "-run", `^(state\.flip|replay\.)`)
	if code != exitFail {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	for _, want := range []string{"baseline.round-trip", "state.flip-middle", "FAIL", "accepted: HTTP 200, result complete", "scenarios:"} {
		if !strings.Contains(out, want) {
			t.Errorf("the table lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "envelope.") {
		t.Errorf("-run did not select:\n%s", out)
	}
}

func TestUnreachableServerExitsOne(t *testing.T) {
	code, out, _ := runCLI(t, "-url", "http://127.0.0.1:1/mcp", "-timeout", "2s", "-run", "^http\\.get$")
	if code != exitFail || !strings.Contains(out, "http.get") {
		t.Fatalf("exit %d\n%s", code, out)
	}
}

func TestStrictExitsOneOnNotRun(t *testing.T) {
	url := goodServer(t)
	args := []string{"-url", url, "-tool", "ask", "-args", `{"topic":"x"}`, "-other-tool", "ask_twin", "-run", `^replay\.`}
	if code, out, errOut := runCLI(t, args...); code != exitOK {
		t.Fatalf("without -strict: exit %d\n%s\n%s", code, out, errOut)
	}
	code, out, errOut := runCLI(t, append(args, "-strict")...)
	if code != exitFail || !strings.Contains(out, "-strict counts as a failure") {
		t.Fatalf("with -strict: exit %d\n%s\n%s", code, out, errOut)
	}
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
	if code != exitOK || !strings.Contains(out, "NOT-RUN") || !strings.Contains(out, "supply the answer it expects with -answers") {
		t.Fatalf("without -answers: exit %d\n%s", code, out)
	}
	code, out, _ = runCLI(t, append(args, "-answers", `{"name":{"role":"assistant","content":{"type":"text","text":"magic"},"model":"m"}}`)...)
	if code != exitOK || !strings.Contains(out, "1 PASS, 0 FAIL") {
		t.Fatalf("with -answers: exit %d\n%s", code, out)
	}
}

func TestLegacyFlags(t *testing.T) {
	url := askServer(t, true)
	code, out, errOut := runCLI(t, "-url", url, "-tool", "ask", "-args", `{"topic":"x"}`, "-run", `^legacy\.`,
		"-legacy-tool", `ask={"topic":"legacy"}`, "-legacy-tool", "ask_twin", "-legacy-tool", "not_listed", "-legacy-rounds", "2")
	if code != exitOK {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	for _, want := range []string{"legacy.no-leak", "ask 1 round(s) of legs; ask_twin 1 round(s) of legs", "of 1..2", "not_listed is not listed, skipped",
		"legacy.session-principal", "needs two principals", "11 PASS, 0 FAIL, 1 NOT-RUN"} {
		if !strings.Contains(out, want) {
			t.Errorf("the table lacks %q:\n%s", want, out)
		}
	}
	// A server of 2026-07-28 only: every legacy scenario is NOT-RUN.
	code, out, _ = runCLI(t, "-url", goodServer(t), "-tool", "ask", "-run", `^legacy\.`)
	if code != exitOK || !strings.Contains(out, "server does not serve the initialize era") || !strings.Contains(out, "0 PASS, 0 FAIL, 12 NOT-RUN") {
		t.Fatalf("exit %d\n%s", code, out)
	}
}
