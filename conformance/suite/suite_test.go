package suite

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// run runs the suite and fails the test on a configuration error.
func run(t *testing.T, cfg Config) *Report {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	rep, err := Run(ctx, cfg)
	require.NoError(t, err, "Run")
	require.NotEqualValues(t, 0, len(rep.Results), "no results")
	return rep
}

// requireStatus checks the status of the listed scenarios.
func requireStatus(t *testing.T, rep *Report, want Status, ids ...string) {
	t.Helper()
	for _, id := range ids {
		res, ok := rep.Result(id)
		if !ok {
			assert.Fail(t, fmt.Sprintf("%s: did not run", id))
			continue
		}
		if res.Status != want {
			assert.Fail(t, fmt.Sprintf("%s: %s, want %s: %s", id, res.Status, want, res.Reason))
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
			assert.Fail(t, fmt.Sprintf("%s: %s, want %s: %s", res.ID, res.Status, want, res.Reason))
			for _, e := range res.Evidence {
				t.Logf("    %s → %s", e.Probe, e.String())
			}
		}
	}
	assert.Lenf(t, rep.Results, len(Scenarios()), "%d results for %d scenarios", len(rep.Results), len(Scenarios()))
	assert.False(t, rep.Failed(), "the report says a scenario failed")
}

func TestMRTRKitServerPassesEverything(t *testing.T) {
	rep := run(t, frameworkConfig(newFrameworkServer(t, false)))
	// An AEAD state is opaque: there is nothing to forge. The server
	// serves 2026-07-28 only: the legacy scenarios are not run.
	requireAllPass(t, rep, append(append(legacyIDs(), taskIDs()...), "state.forged")...)
	if res, _ := rep.Result("state.forged"); !strings.Contains(res.Reason, "opaque") {
		assert.Fail(t, fmt.Sprintf("state.forged: %q", res.Reason))
	}
	if res, _ := rep.Result("state.readable"); !strings.HasPrefix(res.Reason, "opaque") {
		assert.Fail(t, fmt.Sprintf("AEAD state reported as %q", res.Reason))
	}
	if res, _ := rep.Result("answers.unsolicited-asked-key"); !strings.Contains(res.Reason, "asked again") {
		assert.Fail(t, fmt.Sprintf("unsolicited answer: %q", res.Reason))
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
	require.Falsef(t, !ok || res.Status != Info, "state.readable: %+v", res)
	for _, want := range []string{"readable", `the tool name "ask_name"`, `an argument value "mrtrcheck topic"`} {
		assert.Containsf(t, res.Reason, want, "reason %q lacks %q", res.Reason, want)
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
		assert.Fail(t, fmt.Sprintf("reason: %q", res.Reason))
	}
	assert.Lenf(t, rep.Results, 4, "want the baseline and the three replay scenarios, got %d results", len(rep.Results))
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
			assert.True(t, rep.Failed(), "the report does not say it failed")
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
			require.Falsef(t, !errors.As(err, &ce) || rep != nil, "got %v, %v; want a *ConfigError", rep, err)
		})
	}
}

func TestCancelledRunStops(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	rep, err := Run(ctx, Config{URL: "http://127.0.0.1:1/mcp"})
	require.Falsef(t, !errors.Is(err, context.Canceled) || rep == nil || len(rep.Results) != 0, "got %v, %v", rep, err)
}

// answerPOST wraps h, which judges GET and DELETE, with a POST handler
// that answers tools/list, so that the scenarios' control is accepted.
func answerPOST(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			h(w, r)
			return
		}
		var msg struct {
			ID json.RawMessage `json:"id"`
		}
		body, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(body, &msg)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(msg.ID)+`,"result":{"tools":[]}}`)
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
			ts := httptest.NewServer(answerPOST(tc.h))
			defer ts.Close()
			start := time.Now()
			rep := run(t, Config{URL: ts.URL + "/mcp", Select: func(id string) bool { return strings.HasPrefix(id, "http.") }})
			requireStatus(t, rep, tc.want, "http.get", "http.delete")
			if d := time.Since(start); d > 5*time.Second {
				assert.Fail(t, fmt.Sprintf("took %v", d))
			}
		})
	}
}

// The state and replay scenarios that a state checked only by parsing
// passes, because every mutation breaks its structure.
var structuralScenarios = []string{
	"state.flip-first", "state.flip-middle", "state.flip-last",
	"state.truncated", "state.appended", "state.empty", "state.number", "state.object", "state.huge",
	"replay.other-arguments", "replay.other-tool", "replay.other-principal",
}

func TestUnsignedStateFailsForged(t *testing.T) {
	rep := run(t, weakConfig(newWeakServer(t, weakUnsigned, false)))
	requireStatus(t, rep, Pass, append([]string{baselineID}, structuralScenarios...)...)
	requireStatus(t, rep, Fail, "state.forged")
	if res, _ := rep.Result("state.forged"); !strings.Contains(res.Reason, "forged to name the other arguments") {
		assert.Fail(t, fmt.Sprintf("reason: %q", res.Reason))
	}
}

// A server whose integrity check covers the decoded meaning of its JSON
// state, not the bytes, accepts a re-encoding of the same meaning; that is
// not a weakness as long as a forgery that changes the meaning is refused.
func TestMeaningCheckedStatePassesForged(t *testing.T) {
	rep := run(t, weakConfig(newWeakServer(t, meaningSigned, false)))
	requireStatus(t, rep, Pass, "state.forged")
	if res, _ := rep.Result("state.forged"); !strings.Contains(res.Reason, "accepted a re-encoded state of the same meaning") || !strings.Contains(res.Reason, "refused a forged state naming the other arguments") {
		assert.Fail(t, fmt.Sprintf("reason: %q", res.Reason))
	}
}

func TestSignedJSONStatePassesForged(t *testing.T) {
	rep := run(t, weakConfig(newWeakServer(t, signedJSON, false)))
	requireStatus(t, rep, Pass, append([]string{baselineID, "state.forged", "answers.random-keys"}, structuralScenarios...)...)
	if res, _ := rep.Result("state.forged"); !strings.Contains(res.Reason, "refused a forged state naming the other arguments") {
		assert.Fail(t, fmt.Sprintf("reason: %q", res.Reason))
	}
	if res, _ := rep.Result("state.readable"); !strings.Contains(res.Reason, "readable") {
		assert.Fail(t, fmt.Sprintf("state.readable: %q", res.Reason))
	}
}

func TestMergeOnRetryFailsRandomKeys(t *testing.T) {
	cfg := weakConfig(newWeakServer(t, weakMergeOnRetry, false))
	cfg.Select = func(id string) bool { return id == "answers.random-keys" }
	rep := run(t, cfg)
	requireStatus(t, rep, Pass, baselineID)
	requireStatus(t, rep, Fail, "answers.random-keys")
	if res, _ := rep.Result("answers.random-keys"); !strings.Contains(res.Reason, "only unasked answers") {
		assert.Fail(t, fmt.Sprintf("reason: %q", res.Reason))
	}
}

func TestLenientPaddedDecoderPasses(t *testing.T) {
	cfg := weakConfig(newWeakServer(t, lenientPadded, false))
	cfg.Select = func(id string) bool { return strings.HasPrefix(id, "state.") }
	rep := run(t, cfg)
	requireStatus(t, rep, Pass, baselineID, "state.flip-first", "state.flip-middle", "state.flip-last",
		"state.truncated", "state.appended", "state.empty", "state.number", "state.object", "state.huge")
}

func TestServerRefusingEverythingIsNotRun(t *testing.T) {
	controlled := []string{
		"envelope.duplicate-method", "envelope.duplicate-meta", "envelope.meta-key-case", "envelope.meta-member-case",
		"envelope.batch", "http.get", "http.delete", "header.version-mismatch", "header.name-base64-mismatch",
		"rebinding.host", "rebinding.origin",
	}
	for name, tc := range map[string]struct{ status, code int }{
		"401 -32600": {http.StatusUnauthorized, -32600},
		"403 -32020": {http.StatusForbidden, -32020},
		"400 -32600": {http.StatusBadRequest, -32600},
	} {
		t.Run(name, func(t *testing.T) {
			rep := run(t, Config{URL: refuseAll(t, tc.status, tc.code)})
			requireStatus(t, rep, NotRun, controlled...)
			requireStatus(t, rep, Fail, baselineID, "header.name-base64-match")
			if rep.Counts[Pass] != 0 {
				assert.Fail(t, fmt.Sprintf("%d scenarios passed a server that refuses everything", rep.Counts[Pass]))
			}
		})
	}
}

func pickConfig(url string) Config {
	return Config{URL: url, Tool: "pick", Args: json.RawMessage(`{"dir":"."}`)}
}

func TestModelOutputValidationNeedsAnswers(t *testing.T) {
	url := newPickServer(t)
	rep := run(t, pickConfig(url))
	requireStatus(t, rep, NotRun, baselineID, "state.flip-middle", "replay.other-arguments", "answers.random-keys")
	if res, _ := rep.Result(baselineID); !strings.Contains(res.Reason, `made-up answer to "pick_files"`) || !strings.Contains(res.Reason, "-answers") {
		assert.Fail(t, fmt.Sprintf("baseline: %q", res.Reason))
	}
	assert.False(t, rep.Failed(), "a correct server that validates model output failed")

	cfg := pickConfig(url)
	cfg.Answers = map[string]json.RawMessage{
		"pick_files":  json.RawMessage(`{"role":"assistant","content":{"type":"text","text":"[\"README.md\"]"},"model":"m","stopReason":"endTurn"}`),
		"never_asked": json.RawMessage(`{"action":"accept"}`),
	}
	rep = run(t, cfg)
	requireAllPass(t, rep, append(append(legacyIDs(), taskIDs()...), "state.forged", "replay.other-tool", "replay.other-principal")...)

	// An answer given in -answers that the tool refuses is not its fault either.
	cfg.Answers = map[string]json.RawMessage{"pick_files": json.RawMessage(`{"role":"assistant","content":{"type":"text","text":"[\"nope\"]"},"model":"m"}`)}
	cfg.Select = func(id string) bool { return id == baselineID }
	rep = run(t, cfg)
	requireStatus(t, rep, NotRun, baselineID)
	if res, _ := rep.Result(baselineID); !strings.Contains(res.Reason, "given in -answers") {
		assert.Fail(t, fmt.Sprintf("baseline: %q", res.Reason))
	}
}

func TestStrictCountsNotRunSecurityScenarios(t *testing.T) {
	cfg := frameworkConfig(newFrameworkServer(t, false))
	cfg.OtherToken = ""
	cfg.Strict = true
	rep := run(t, cfg)
	requireStatus(t, rep, Fail, "replay.other-principal")
	if res, _ := rep.Result("replay.other-principal"); !strings.Contains(res.Reason, "-strict") {
		assert.Fail(t, fmt.Sprintf("reason: %q", res.Reason))
	}
	// An opaque state cannot be forged: not a gap -strict reports.
	requireStatus(t, rep, NotRun, "state.forged")
	requireStatus(t, rep, Info, "answers.unsolicited-asked-key", "state.readable")
	requireStatus(t, rep, Pass, "replay.other-arguments", "answers.random-keys", "envelope.batch")
	assert.True(t, rep.Failed(), "the report does not say it failed")

	// Outside the security groups, NOT-RUN stays NOT-RUN.
	rep = run(t, Config{URL: refuseAll(t, http.StatusUnauthorized, -32600), Strict: true,
		Select: func(id string) bool { return strings.HasPrefix(id, "envelope.") || id == "state.flip-first" }})
	requireStatus(t, rep, NotRun, "envelope.batch", "envelope.duplicate-method")
	requireStatus(t, rep, Fail, baselineID, "state.flip-first")
}
