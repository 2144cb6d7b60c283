package suite

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// legacyIDs are the ids of the legacy scenarios.
func legacyIDs() []string {
	var ids []string
	for _, s := range legacyScenarios {
		ids = append(ids, s.ID)
	}
	return ids
}

func onlyLegacy(id string) bool { return strings.HasPrefix(id, "legacy.") }

// legacyConfig is the suite configuration for the legacy stack: its tool
// of one round for the modern scenarios, its four asking tools for the
// legacy ones, two principals.
func legacyConfig(url string) Config {
	var tools []LegacyTool
	for _, name := range legacyToolNames {
		tools = append(tools, LegacyTool{Name: name})
	}
	return Config{
		URL:         url,
		Tool:        "one_round",
		Args:        json.RawMessage(`{"topic":"mrtrcheck topic"}`),
		OtherTool:   "two_rounds",
		Token:       aliceToken,
		OtherToken:  bobToken,
		LegacyTools: tools,
		Timeout:     3 * time.Second,
	}
}

func TestLegacyStackPassesEverything(t *testing.T) {
	rep := run(t, legacyConfig(serve(t, newLegacyStack(t, true))))
	// The modern scenarios pass too: one endpoint, both eras.
	requireAllPass(t, rep, append(taskIDs(), "state.forged")...)
	res, _ := rep.Result("legacy.no-leak")
	for _, want := range []string{
		"one_round 1 round(s) of legs",
		"two_rounds 2 round(s) of legs",
		"state_only 2 round(s) of legs (3 on the 2026-07-28 wire, 1 state-only)",
		"three_inputs 1 round(s) of legs",
		"rounds covered: 1, 2, 3 of 1..3",
	} {
		assert.Containsf(t, res.Reason, want, "legacy.no-leak reason lacks %q: %s", want, res.Reason)
	}
	assert.Falsef(t, strings.Contains(res.Reason, "add one with -legacy-tool"), "legacy.no-leak asks for a tool it has: %s", res.Reason)
	if res, _ := rep.Result("legacy.leg-ids"); !strings.Contains(res.Reason, "8 legs over 4 calls, ids 1, 2, 3, 4, 5, 6, 7, 8") {
		assert.Fail(t, fmt.Sprintf("legacy.leg-ids: %s", res.Reason))
	}
	if res, _ := rep.Result("legacy.session-principal"); !strings.Contains(res.Reason, "unknown (404)") {
		assert.Fail(t, fmt.Sprintf("legacy.session-principal: %s", res.Reason))
	}
	if t.Failed() {
		var b strings.Builder
		_ = rep.WriteText(&b, true)
		t.Log("\n" + b.String())
	}
}

// The middleware that weakens the stack changes nothing by itself.
func TestLegacyMiddlewareIsTransparent(t *testing.T) {
	cfg := legacyConfig(serve(t, weaken(newLegacyStack(t, true), flawNone)))
	cfg.Select = onlyLegacy
	rep := run(t, cfg)
	requireStatus(t, rep, Pass, legacyIDs()...)
}

func TestLegacyRoundCap(t *testing.T) {
	cfg := legacyConfig(serve(t, newLegacyStack(t, true)))
	cfg.LegacyTools = []LegacyTool{{Name: "endless"}, {Name: "one_round"}, {Name: "not_a_tool"}}
	cfg.LegacyRounds = 2
	cfg.Select = func(id string) bool { return id == "legacy.no-leak" }
	rep := run(t, cfg)
	requireStatus(t, rep, Pass, "legacy.no-leak")
	res, _ := rep.Result("legacy.no-leak")
	for _, want := range []string{"endless 2 round(s) of legs (more than 2 on the 2026-07-28 wire), stopped at the cap",
		"rounds covered: 1, 2 of 1..2", "not_a_tool is not listed, skipped"} {
		assert.Containsf(t, res.Reason, want, "reason lacks %q: %s", want, res.Reason)
	}
}

func TestLegacyNotServed(t *testing.T) {
	for name, url := range map[string]string{
		"modern only":       newFrameworkServer(t, false),
		"refuses all (401)": refuseAll(t, http.StatusUnauthorized, -32600),
		"weak (405 GET)":    newWeakServer(t, weakUnbound, false),
	} {
		t.Run(name, func(t *testing.T) {
			cfg := frameworkConfig(url)
			cfg.Select = onlyLegacy
			rep := run(t, cfg)
			requireStatus(t, rep, NotRun, legacyIDs()...)
			for _, res := range rep.Results {
				assert.Truef(t, strings.HasPrefix(res.Reason, notServed), "%s: %q", res.ID, res.Reason)
			}
			assert.Lenf(t, rep.Results, len(legacyScenarios), "%d results", len(rep.Results))
		})
	}
}

func TestLegacyPrincipalNeedsAuthentication(t *testing.T) {
	url := serve(t, newLegacyStack(t, false))
	cfg := legacyConfig(url)
	cfg.Select = func(id string) bool { return id == "legacy.session-principal" }
	rep := run(t, cfg)
	requireStatus(t, rep, NotRun, "legacy.session-principal")
	if res, _ := rep.Result("legacy.session-principal"); !strings.Contains(res.Reason, "does not authenticate") {
		assert.Fail(t, fmt.Sprintf("reason: %q", res.Reason))
	}
	cfg.Token, cfg.OtherToken = "", ""
	rep = run(t, cfg)
	requireStatus(t, rep, NotRun, "legacy.session-principal")
	if res, _ := rep.Result("legacy.session-principal"); !strings.Contains(res.Reason, "needs two principals") {
		assert.Fail(t, fmt.Sprintf("reason: %q", res.Reason))
	}
	// Without tokens the other scenarios run as they do against the fixture.
	cfg.Select = onlyLegacy
	rep = run(t, cfg)
	ids := legacyIDs()
	requireStatus(t, rep, Pass, ids[:len(ids)-1]...)
}

// Each flaw of a weakened stack must fail the scenario that checks it, for
// the reason it names.
func TestLegacyFlawsFail(t *testing.T) {
	for _, tc := range []struct {
		name     string
		flaw     legacyFlaw
		scenario string
		reason   string
	}{
		{"resultType in tools/call results", flawLeakResultType, "legacy.no-leak", "result of tools/call one_round: resultType"},
		{"serverInfo in the _meta of legs", flawLeakLegMeta, "legacy.no-leak", "(elicitation/create) of tools/call one_round: _meta io.modelcontextprotocol/serverInfo"},
		{"-32021 for a missing capability", flawLeakCode, "legacy.no-leak", "error answering tools/call one_round without capabilities: error code -32021"},
		{"ping answered with resultType", flawPingResultType, "legacy.empty-results", `ping answered {"resultType":"complete"}, not {}`},
		{"legs numbered from 0", flawLegsFromZero, "legacy.leg-ids", "leg 0 (elicitation/create) of one_round: the id is below 1"},
		{"legs numbered per call", flawLegsPerCall, "legacy.leg-ids", "id 1 used again by a leg of two_rounds (first used by one_round)"},
		{"legs on the GET stream", flawLegsOnGet, "legacy.legs-on-post-stream", "came on the GET stream instead of the POST's"},
		{"client's cancellation ignored", flawCancelIgnored, "legacy.cancel", "no notifications/cancelled on the call's stream for its open leg(s) 1"},
		{"legs not cancelled", flawNoLegCancel, "legacy.cancel", "no notifications/cancelled on the call's stream for its open leg(s) 1"},
		{"late answers refused with 400", flawLateAnswer400, "legacy.late-answers", "an answer to id 987654321, which the server never used was answered HTTP 400"},
		{"answers routed across sessions", flawCrossSessionAnswers, "legacy.answer-other-session", "the second session's answers to leg(s) 1 were taken for the first session's: the call completed"},
		{"unknown session answered 400", flawUnknown400, "legacy.session-unknown", "a made-up session id: answered HTTP 400"},
		{"DELETE ignored", flawDeleteIgnored, "legacy.session-deleted", "after DELETE, the session id was answered HTTP 200"},
		{"session id optional", flawSessionOptional, "legacy.session-required", "served without a session"},
		{"JSON-RPC errors with 400", flawErrorStatus, "legacy.error-status", "an unknown method: error -32601 with HTTP 400"},
		{"session not bound to its principal", flawUnbound, "legacy.session-principal", "a session served another principal"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg := legacyConfig(serve(t, weaken(newLegacyStack(t, true), tc.flaw)))
			cfg.Select = func(id string) bool { return id == tc.scenario }
			rep := run(t, cfg)
			requireStatus(t, rep, Fail, tc.scenario)
			if res, _ := rep.Result(tc.scenario); !strings.Contains(res.Reason, tc.reason) {
				assert.Fail(t, fmt.Sprintf("reason lacks %q: %s", tc.reason, res.Reason))
			}
			assert.True(t, rep.Failed(), "the report does not say it failed")
		})
	}
}

func TestLegacyConfig(t *testing.T) {
	c, err := Config{URL: "http://127.0.0.1:3001/mcp"}.normalize()
	require.NoError(t, err)
	assert.Falsef(t, len(c.LegacyTools) != len(DefaultLegacyTools()) || c.LegacyTools[0].Name != DefaultTool || c.LegacyRounds != DefaultLegacyRounds, "fixture defaults: %+v, %d", c.LegacyTools, c.LegacyRounds)
	c, err = Config{URL: "http://127.0.0.1:3001/mcp", Tool: "mine", Args: json.RawMessage(`{ "a": 1 }`)}.normalize()
	require.NoError(t, err)
	assert.Falsef(t, len(c.LegacyTools) != 1 || c.LegacyTools[0].Name != "mine" || string(c.LegacyTools[0].Args) != `{"a":1}`, "with -tool: %+v", c.LegacyTools)
	c, err = Config{URL: "http://127.0.0.1:3001/mcp", LegacyTools: []LegacyTool{{Name: "x"}}}.normalize()
	assert.Falsef(t, err != nil || string(c.LegacyTools[0].Args) != `{}`, "no args: %+v, %v", c.LegacyTools, err)
	for name, cfg := range map[string]Config{
		"nameless tool":  {URL: "http://127.0.0.1/mcp", LegacyTools: []LegacyTool{{Args: json.RawMessage(`{}`)}}},
		"args array":     {URL: "http://127.0.0.1/mcp", LegacyTools: []LegacyTool{{Name: "x", Args: json.RawMessage(`[]`)}}},
		"negative cap":   {URL: "http://127.0.0.1/mcp", LegacyRounds: -1},
		"cap too large":  {URL: "http://127.0.0.1/mcp", LegacyRounds: maxLegacyRounds + 1},
		"args not JSON":  {URL: "http://127.0.0.1/mcp", LegacyTools: []LegacyTool{{Name: "x", Args: json.RawMessage(`{`)}}},
		"args a string":  {URL: "http://127.0.0.1/mcp", LegacyTools: []LegacyTool{{Name: "x", Args: json.RawMessage(`"a"`)}}},
		"args null JSON": {URL: "http://127.0.0.1/mcp", LegacyTools: []LegacyTool{{Name: "x", Args: json.RawMessage(`null`)}}},
	} {
		if _, err := cfg.normalize(); err == nil {
			assert.Fail(t, fmt.Sprintf("%s: accepted", name))
		}
	}
}

func TestLeaksOf(t *testing.T) {
	for raw, want := range map[string]string{
		`{"jsonrpc":"2.0","id":1,"result":{}}`:                                                             "",
		`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"resultType"}]}}`:              "",
		`{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","ttlMs":5}}`:                            "resultType, ttlMs",
		`{"jsonrpc":"2.0","id":1,"result":{"_meta":{"io.modelcontextprotocol/serverInfo":{}}}}`:            "_meta io.modelcontextprotocol/serverInfo",
		`{"jsonrpc":"2.0","id":1,"result":{"_meta":{"mine":1}}}`:                                           "",
		`{"jsonrpc":"2.0","id":1,"error":{"code":-32022,"message":"x"}}`:                                   "error code -32022",
		`{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"x"}}`:                                   "",
		`{"jsonrpc":"2.0","id":2,"method":"elicitation/create","params":{"requestState":"x"}}`:             "requestState",
		`{"jsonrpc":"2.0","method":"notifications/progress","params":{"inputRequests":{},"cacheScope":1}}`: "inputRequests, cacheScope",
	} {
		var msg lmsg
		require.NoError(t, json.Unmarshal([]byte(raw), &msg), raw)
		if got := strings.Join(leaksOf(msg), ", "); got != want {
			assert.Fail(t, fmt.Sprintf("%s: %q, want %q", raw, got, want))
		}
	}
}

func TestBadLegID(t *testing.T) {
	for id, bad := range map[string]bool{`1`: false, `42`: false, `"a"`: false, `0`: true, `-1`: true, `""`: true, `1.5`: true, `null`: true, `{}`: true} {
		if got := badLegID(json.RawMessage(id)) != ""; got != bad {
			assert.Fail(t, fmt.Sprintf("%s: bad %v, want %v", id, got, bad))
		}
	}
}
