package suite

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// run runs the suite and fails the test on a configuration error.
func run(t *testing.T, cfg Config) *Report {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	rep, err := Run(ctx, cfg)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if len(rep.Results) == 0 {
		t.Fatal("no results")
	}
	return rep
}

// requireStatus checks the status of the listed scenarios.
func requireStatus(t *testing.T, rep *Report, want Status, ids ...string) {
	t.Helper()
	for _, id := range ids {
		res, ok := rep.Result(id)
		if !ok {
			t.Errorf("%s: did not run", id)
			continue
		}
		if res.Status != want {
			t.Errorf("%s: %s, want %s: %s", id, res.Status, want, res.Reason)
			for _, e := range res.Evidence {
				t.Logf("    %s → %s", e.Probe, e.String())
			}
		}
	}
}

// requireAllPass checks that every scenario passed, except the
// informational ones, which must be INFO, and those in notRun.
func requireAllPass(t *testing.T, rep *Report, notRun ...string) {
	t.Helper()
	skip := map[string]bool{}
	for _, id := range notRun {
		skip[id] = true
	}
	informational := map[string]bool{}
	for _, s := range Scenarios() {
		informational[s.ID] = s.Informational
	}
	for _, res := range rep.Results {
		want := Pass
		switch {
		case skip[res.ID]:
			want = NotRun
		case informational[res.ID]:
			want = Info
		}
		if res.Status != want {
			t.Errorf("%s: %s, want %s: %s", res.ID, res.Status, want, res.Reason)
			for _, e := range res.Evidence {
				t.Logf("    %s → %s", e.Probe, e.String())
			}
		}
	}
	if len(rep.Results) != len(Scenarios()) {
		t.Errorf("%d results for %d scenarios", len(rep.Results), len(Scenarios()))
	}
	if rep.Failed() {
		t.Error("the report says a scenario failed")
	}
}

func TestMRTRKitServerPassesEverything(t *testing.T) {
	rep := run(t, frameworkConfig(newFrameworkServer(t, false)))
	requireAllPass(t, rep)
	if res, _ := rep.Result("state.readable"); !strings.HasPrefix(res.Reason, "opaque") {
		t.Errorf("AEAD state reported as %q", res.Reason)
	}
	if res, _ := rep.Result("answers.unsolicited-asked-key"); !strings.Contains(res.Reason, "asked again") {
		t.Errorf("unsolicited answer: %q", res.Reason)
	}
	if t.Failed() {
		var b strings.Builder
		_ = rep.WriteText(&b, true)
		t.Log("\n" + b.String())
	}
}

func TestReadableStateIsReported(t *testing.T) {
	cfg := frameworkConfig(newFrameworkServer(t, true))
	cfg.Select = func(id string) bool { return id == "state.readable" }
	rep := run(t, cfg)
	res, ok := rep.Result("state.readable")
	if !ok || res.Status != Info {
		t.Fatalf("state.readable: %+v", res)
	}
	for _, want := range []string{"readable", `the tool name "ask_name"`, `an argument value "mrtrcheck topic"`} {
		if !strings.Contains(res.Reason, want) {
			t.Errorf("reason %q lacks %q", res.Reason, want)
		}
	}
}

func TestCrossPrincipalNeedsTwoTokens(t *testing.T) {
	cfg := frameworkConfig(newFrameworkServer(t, false))
	cfg.OtherToken = ""
	cfg.Select = func(id string) bool { return strings.HasPrefix(id, "replay.") }
	rep := run(t, cfg)
	requireStatus(t, rep, NotRun, "replay.other-principal")
	requireStatus(t, rep, Pass, baselineID, "replay.other-arguments", "replay.other-tool")
	if res, _ := rep.Result("replay.other-principal"); !strings.Contains(res.Reason, "needs two principals") {
		t.Errorf("reason: %q", res.Reason)
	}
	if len(rep.Results) != 4 {
		t.Errorf("want the baseline and the three replay scenarios, got %d results", len(rep.Results))
	}
}

func TestCrossToolNeedsOtherTool(t *testing.T) {
	cfg := frameworkConfig(newFrameworkServer(t, false))
	cfg.OtherTool = ""
	cfg.Select = func(id string) bool { return id == "replay.other-tool" }
	rep := run(t, cfg)
	requireStatus(t, rep, NotRun, "replay.other-tool")
}

func TestControlRefusedMeansNotRun(t *testing.T) {
	cfg := frameworkConfig(newFrameworkServer(t, false))
	// The other tool does not exist, so the replay to it would be refused
	// whatever the state: the scenario must not count that as a pass.
	cfg.OtherTool = "no_such_tool"
	// A topic that is not a string is refused before any handler runs
	// (its Mcp-Param-Topic mirror is declared for a string), so a refusal
	// of these arguments with a state would prove nothing either.
	cfg.AltArgs = []byte(`{"topic":5}`)
	cfg.Select = func(id string) bool { return strings.HasPrefix(id, "replay.other-") }
	rep := run(t, cfg)
	requireStatus(t, rep, NotRun, "replay.other-tool", "replay.other-arguments")
	requireStatus(t, rep, Pass, "replay.other-principal")
}

func TestSuffixCheckerFails(t *testing.T) {
	for _, sse := range []bool{false, true} {
		name := "json"
		if sse {
			name = "sse"
		}
		t.Run(name, func(t *testing.T) {
			rep := run(t, weakConfig(newWeakServer(t, weakSuffix, sse)))
			requireStatus(t, rep, Pass, baselineID)
			requireStatus(t, rep, Fail,
				"state.flip-first", "state.flip-middle", "state.flip-last",
				"state.truncated", "state.appended", "state.empty", "state.number", "state.object", "state.huge",
				"replay.other-arguments", "replay.other-tool", "replay.other-principal")
			if !rep.Failed() {
				t.Error("the report does not say it failed")
			}
		})
	}
}

func TestUnboundMACFailsTheReplays(t *testing.T) {
	rep := run(t, weakConfig(newWeakServer(t, weakUnbound, false)))
	requireStatus(t, rep, Pass, baselineID,
		"state.flip-first", "state.flip-middle", "state.flip-last",
		"state.truncated", "state.appended", "state.empty", "state.number", "state.object", "state.huge")
	requireStatus(t, rep, Fail, "replay.other-arguments", "replay.other-tool", "replay.other-principal")
}

func TestServerRefusingEveryRetryFailsTheBaseline(t *testing.T) {
	rep := run(t, weakConfig(newWeakServer(t, weakRefuseRetries, false)))
	requireStatus(t, rep, Fail, baselineID)
	requireStatus(t, rep, NotRun, "state.flip-middle", "state.empty", "replay.other-arguments", "state.readable")
}

func TestWeakServerEnvelopeAndHeaders(t *testing.T) {
	// The weak server checks no header, no Host and no Origin, and its
	// parser resolves duplicates: each of those scenarios must fail.
	rep := run(t, weakConfig(newWeakServer(t, weakUnbound, false)))
	requireStatus(t, rep, Fail,
		"envelope.duplicate-method", "envelope.duplicate-meta", "envelope.meta-key-case", "envelope.meta-member-case",
		"header.version-mismatch", "header.name-base64-mismatch", "rebinding.host", "rebinding.origin")
	requireStatus(t, rep, Pass, "http.get", "http.delete", "header.name-base64-match", "answers.random-keys")
}

func TestUnreachableServerFails(t *testing.T) {
	cfg := Config{URL: "http://127.0.0.1:1/mcp", Timeout: 2 * time.Second, Select: func(id string) bool { return id == "state.flip-middle" }}
	rep := run(t, cfg)
	requireStatus(t, rep, Fail, baselineID)
	requireStatus(t, rep, NotRun, "state.flip-middle")
}

func TestInvalidConfig(t *testing.T) {
	for name, cfg := range map[string]Config{
		"no URL":             {},
		"bad scheme":         {URL: "ftp://127.0.0.1/mcp"},
		"args not an object": {URL: "http://127.0.0.1/mcp", Tool: "t", Args: []byte(`[1]`)},
		"args not JSON":      {URL: "http://127.0.0.1/mcp", Tool: "t", Args: []byte(`{`)},
		"same alt args":      {URL: "http://127.0.0.1/mcp", Tool: "t", Args: []byte(`{"a":1}`), AltArgs: []byte(`{ "a" : 1.0 }`)},
		"same other tool":    {URL: "http://127.0.0.1/mcp", Tool: "t", OtherTool: "t"},
		"same tokens":        {URL: "http://127.0.0.1/mcp", Token: "x", OtherToken: "x"},
		"token with space":   {URL: "http://127.0.0.1/mcp", Token: "a b"},
		"caps not an object": {URL: "http://127.0.0.1/mcp", Capabilities: []byte(`true`)},
	} {
		t.Run(name, func(t *testing.T) {
			rep, err := Run(context.Background(), cfg)
			var ce *ConfigError
			if !errors.As(err, &ce) || rep != nil {
				t.Fatalf("got %v, %v; want a *ConfigError", rep, err)
			}
		})
	}
}

func TestCancelledRunStops(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	rep, err := Run(ctx, Config{URL: "http://127.0.0.1:1/mcp"})
	if !errors.Is(err, context.Canceled) || rep == nil || len(rep.Results) != 0 {
		t.Fatalf("got %v, %v", rep, err)
	}
}

func TestGetAndDeleteJudgement(t *testing.T) {
	for name, tc := range map[string]struct {
		h    http.HandlerFunc
		want Status
	}{
		"405":            {func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusMethodNotAllowed) }, Pass},
		"400 (dual era)": {func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusBadRequest) }, Pass},
		"500":            {func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusInternalServerError) }, Fail},
		"200 with a result": {func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete"}}`)
		}, Fail},
		"200 with an open stream": {func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(http.StatusOK)
			http.NewResponseController(w).Flush()
			<-r.Context().Done()
		}, Pass},
	} {
		t.Run(name, func(t *testing.T) {
			ts := httptest.NewServer(tc.h)
			defer ts.Close()
			start := time.Now()
			rep := run(t, Config{URL: ts.URL + "/mcp", Select: func(id string) bool { return strings.HasPrefix(id, "http.") }})
			requireStatus(t, rep, tc.want, "http.get", "http.delete")
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("took %v", d)
			}
		})
	}
}
