package streamablehttp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mrtrkit/mrtrkit/discover"
	"github.com/mrtrkit/mrtrkit/internal/testkit"
	"github.com/mrtrkit/mrtrkit/mrtr"
	"github.com/mrtrkit/mrtrkit/state"
)

// This file proves the multi-round security properties on the wire: a
// three-round call over HTTP with sealed state, and every way of misusing
// that state refused with -32602 before any handler code runs.

// wizard is a replica serving the three-round "wizard" tool (and its twin
// "wizard2") behind bearer authentication, where the token is the principal.
type wizard struct {
	url   string
	calls atomic.Int64 // handler invocations
}

func newWizard(t *testing.T, codec state.Codec, opts ...mrtr.Option) *wizard {
	t.Helper()
	w := &wizard{}
	all := append([]mrtr.Option{mrtr.WithCodec(codec), mrtr.WithLogger(quiet)}, opts...)
	srv, err := mrtr.NewServer(discover.Description{Server: discover.Implementation{Name: "wizard", Version: "1"}}, all...)
	require.NoError(t, err)
	h := mrtr.HandlerFunc(func(_ context.Context, req *mrtr.Request) (mrtr.Result, error) {
		w.calls.Add(1)
		switch req.Round {
		case 0:
			return mrtr.Ask("step1", &mrtr.ElicitRequest{
				Message:         "Name?",
				RequestedSchema: &mrtr.ElicitSchema{Type: "object", Properties: map[string]json.RawMessage{"name": json.RawMessage(`{"type":"string"}`)}},
			}), nil
		case 1:
			ans, ok := req.Responses.Elicitation("step1")
			if !ok || !ans.Accepted() {
				return nil, mrtr.InvalidParamsError("step1 unanswered")
			}
			ir := mrtr.Ask("step2", &mrtr.SamplingRequest{Messages: []mrtr.SamplingMessage{mrtr.UserText("Say hi")}, MaxTokens: 10})
			ir.State = []byte(fmt.Sprint(ans.Content["name"]))
			return ir, nil
		default:
			ans, ok := req.Responses.Sampling("step2")
			if !ok {
				return nil, mrtr.InvalidParamsError("step2 unanswered")
			}
			return &mrtr.CallToolResult{Content: []mrtr.Content{mrtr.Text(string(req.State) + ": " + ans.Text())}}, nil
		}
	})
	schema := json.RawMessage(`{"type":"object","properties":{"topic":{"type":"string"}}}`)
	require.NoError(t, srv.AddTool(mrtr.Tool{Name: "wizard", InputSchema: schema}, h))
	require.NoError(t, srv.AddTool(mrtr.Tool{Name: "wizard2", InputSchema: schema}, h))
	require.NoError(t, srv.AddTool(mrtr.Tool{Name: "sampler"}, mrtr.HandlerFunc(func(context.Context, *mrtr.Request) (mrtr.Result, error) {
		w.calls.Add(1)
		return mrtr.Ask("s", &mrtr.SamplingRequest{Messages: []mrtr.SamplingMessage{mrtr.UserText("x")}, MaxTokens: 5}), nil
	})))
	auth := BearerAuthenticator(func(_ context.Context, token string) (*mrtr.TokenInfo, error) {
		if token == "" {
			return nil, errors.New("empty token")
		}
		return &mrtr.TokenInfo{Subject: token}, nil
	}, "")
	handler, err := New(srv, WithAuthenticator(auth), WithLogger(quiet))
	require.NoError(t, err)
	ts := httptest.NewServer(handler)
	t.Cleanup(ts.Close)
	w.url = ts.URL + defaultPath
	return w
}

// wizardReply is the decoded JSON-RPC response.
type wizardReply struct {
	status int
	Result struct {
		ResultType    string                     `json:"resultType"`
		InputRequests map[string]json.RawMessage `json:"inputRequests"`
		RequestState  string                     `json:"requestState"`
		Content       []struct {
			Text string `json:"text"`
		} `json:"content"`
	} `json:"result"`
	Error *struct {
		Code int             `json:"code"`
		Data json.RawMessage `json:"data"`
	} `json:"error"`
}

// call posts one tools/call with every header the protocol requires.
// extra is spliced into params (inputResponses, requestState).
func (w *wizard) call(t *testing.T, user, tool, args, caps, extra string) wizardReply {
	t.Helper()
	params := `"name":"` + tool + `","arguments":` + args + extra +
		`,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":` + caps + `}`
	body := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{` + params + `}}`
	req, err := http.NewRequest(http.MethodPost, w.url, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "tools/call")
	req.Header.Set("Mcp-Name", tool)
	req.Header.Set("Authorization", "Bearer "+user)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	var r wizardReply
	require.NoError(t, json.Unmarshal(raw, &r), "%s", raw)
	r.status = resp.StatusCode
	return r
}

const (
	capsBoth    = `{"elicitation":{},"sampling":{}}`
	answerName  = `"inputResponses":{"step1":{"action":"accept","content":{"name":"Ada"}}}`
	answerModel = `"inputResponses":{"step2":{"role":"assistant","content":{"type":"text","text":"hello"},"model":"m"}}`
)

func withState(answer, token string) string {
	return `,` + answer + `,"requestState":"` + token + `"`
}

// rounds runs the first two rounds as alice and returns both tokens.
func (w *wizard) rounds(t *testing.T) (s1, s2 string) {
	t.Helper()
	r := w.call(t, "alice", "wizard", `{"topic":"x"}`, capsBoth, "")
	require.Equal(t, "input_required", r.Result.ResultType)
	s1 = r.Result.RequestState
	r = w.call(t, "alice", "wizard", `{"topic":"x"}`, capsBoth, withState(answerName, s1))
	require.Equal(t, "input_required", r.Result.ResultType)
	return s1, r.Result.RequestState
}

func TestMRTRThreeRoundsOverHTTP(t *testing.T) {
	codec := testkit.Codec(t)
	w := newWizard(t, codec)
	r := w.call(t, "alice", "wizard", `{"topic":"x"}`, capsBoth, "")
	require.Equal(t, http.StatusOK, r.status)
	require.Equal(t, "input_required", r.Result.ResultType)
	require.Contains(t, r.Result.InputRequests, "step1")
	s1 := r.Result.RequestState

	// Round 2 is served by another replica holding the same keys.
	other := newWizard(t, codec)
	r = other.call(t, "alice", "wizard", `{"topic":"x"}`, capsBoth, withState(answerName, s1))
	require.Equal(t, "input_required", r.Result.ResultType)
	require.Contains(t, r.Result.InputRequests, "step2")
	s2 := r.Result.RequestState
	assert.NotEqual(t, s1, s2, "every round gets its own state")
	assert.NotContains(t, s2, "Ada", "the default codec encrypts the handler's state")

	// Arguments re-spelt with other whitespace are the same arguments.
	r = w.call(t, "alice", "wizard", `{ "topic" : "x" }`, capsBoth, withState(answerModel, s2))
	require.Equal(t, "complete", r.Result.ResultType)
	require.Len(t, r.Result.Content, 1)
	assert.Equal(t, "Ada: hello", r.Result.Content[0].Text)
}

func TestMRTRStateMisuseRefusedOverHTTP(t *testing.T) {
	clock := testkit.NewClock(testkit.Start)
	codec := testkit.Codec(t, state.WithClock(clock.Now))
	w := newWizard(t, codec)
	s1, s2 := w.rounds(t)

	flip := []byte(s2)
	flip[len(flip)/2] ^= 0x01
	if flip[len(flip)/2] == '-' || flip[len(flip)/2] == '_' {
		flip[len(flip)/2] = 'A'
	}
	otherCodec := testkit.AEAD(t, testkit.Ring(t, testkit.Key("k2", 9)))
	foreign := newWizard(t, otherCodec)

	tests := []struct {
		name   string
		target *wizard
		user   string
		tool   string
		args   string
		extra  string
		before func()
		reason string
	}{
		{name: "tampered character", user: "alice", tool: "wizard", args: `{"topic":"x"}`, extra: withState(answerModel, string(flip)), reason: mrtr.ReasonInvalidRequestState},
		{name: "tampered suffix", user: "alice", tool: "wizard", args: `{"topic":"x"}`, extra: withState(answerModel, s2+"-TAMPERED"), reason: mrtr.ReasonInvalidRequestState},
		{name: "replayed with other arguments", user: "alice", tool: "wizard", args: `{"topic":"y"}`, extra: withState(answerModel, s2), reason: mrtr.ReasonInvalidRequestState},
		{name: "replayed for another tool", user: "alice", tool: "wizard2", args: `{"topic":"x"}`, extra: withState(answerModel, s2), reason: mrtr.ReasonInvalidRequestState},
		{name: "presented by another principal", user: "mallory", tool: "wizard", args: `{"topic":"x"}`, extra: withState(answerModel, s2), reason: mrtr.ReasonInvalidRequestState},
		{name: "sealed under a key this replica lacks", target: foreign, user: "alice", tool: "wizard", args: `{"topic":"x"}`, extra: withState(answerModel, s2), reason: mrtr.ReasonInvalidRequestState},
		{name: "not a string", user: "alice", tool: "wizard", args: `{"topic":"x"}`, extra: `,` + answerModel + `,"requestState":12`, reason: mrtr.ReasonInvalidRequestState},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			target := w
			if tt.target != nil {
				target = tt.target
			}
			before := target.calls.Load()
			r := target.call(t, tt.user, tt.tool, tt.args, capsBoth, tt.extra)
			requireInvalidState(t, r, tt.reason)
			assert.Equal(t, before, target.calls.Load(), "no handler code may run for a refused state")
		})
	}

	t.Run("past the round limit", func(t *testing.T) {
		// A replica configured for one round refuses the round-two state
		// that a replica allowing more rounds issued.
		strict := newWizard(t, codec, mrtr.WithMaxRounds(1))
		r := strict.call(t, "alice", "wizard", `{"topic":"x"}`, capsBoth, withState(answerModel, s2))
		requireInvalidState(t, r, mrtr.ReasonInvalidRequestState)
		assert.Zero(t, strict.calls.Load())
		// The same replica still serves round one.
		r = strict.call(t, "alice", "wizard", `{"topic":"x"}`, capsBoth, withState(answerName, s1))
		require.NotNil(t, r.Error, "round one would ask for a second round, past the limit")
		assert.Equal(t, int(mrtr.CodeInternalError), r.Error.Code)
	})

	t.Run("after expiry", func(t *testing.T) {
		before := w.calls.Load()
		// state's default TTL and clock skew (documented on state.WithTTL
		// and state.WithClockSkew), and just past.
		clock.Advance(10*time.Minute + 30*time.Second + time.Millisecond)
		r := w.call(t, "alice", "wizard", `{"topic":"x"}`, capsBoth, withState(answerModel, s2))
		requireInvalidState(t, r, mrtr.ReasonExpiredRequestState)
		assert.Equal(t, before, w.calls.Load())
	})
}

func requireInvalidState(t *testing.T, r wizardReply, reason string) {
	t.Helper()
	assert.Equal(t, http.StatusOK, r.status, "a refused state is an in-band error")
	require.NotNil(t, r.Error, "want an error, got resultType %q", r.Result.ResultType)
	assert.Equal(t, int(mrtr.CodeInvalidParams), r.Error.Code)
	assert.JSONEq(t, `{"reason":"`+reason+`"}`, string(r.Error.Data))
}

func TestMissingSamplingCapabilityOverHTTP(t *testing.T) {
	w := newWizard(t, testkit.Codec(t))
	r := w.call(t, "alice", "sampler", `{}`, `{"elicitation":{}}`, "")
	assert.Equal(t, http.StatusBadRequest, r.status)
	require.NotNil(t, r.Error)
	assert.Equal(t, int(mrtr.CodeMissingCapability), r.Error.Code)
	assert.JSONEq(t, `{"requiredCapabilities":{"sampling":{}}}`, string(r.Error.Data))

	r = w.call(t, "alice", "sampler", `{}`, `{"sampling":{}}`, "")
	assert.Equal(t, "input_required", r.Result.ResultType)
}

// Member names equal under the folding encoding/json binds with (ſ and s,
// the Kelvin sign and k, ASCII case) never reach a handler or the state
// path: over HTTP, a first round and a retry carrying a genuine state are
// both refused with -32602 before the handler runs or the state opens.
func TestFoldEqualNamesOnTheWire(t *testing.T) {
	f := newFixture(t)
	meta := `{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}`
	resp, body := f.do(t, toolCall(1, "confirm", `{"item":"x"}`).withMeta(meta))
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
	var first struct {
		Result struct {
			RequestState string `json:"requestState"`
		} `json:"result"`
	}
	require.NoError(t, json.Unmarshal(body, &first))
	require.NotEmpty(t, first.Result.RequestState, "%s", body)

	for name, args := range map[string]string{
		"long s (U+017F)": `{"item":"x","s":1,"ſ":2}`,
		"Kelvin sign":     "{\"item\":\"x\",\"\u212a\":1,\"k\":2}",
		"ASCII case":      `{"item":"x","ITEM":"y"}`,
	} {
		t.Run(name, func(t *testing.T) {
			for _, c := range []call{
				toolCall(2, "confirm", args).withMeta(meta),
				mrtrRetry(3, meta, first.Result.RequestState, args),
			} {
				_, body := f.do(t, c)
				m := decodeRPC(t, body)
				require.NotNil(t, m.Error, "%s", body)
				assert.Equal(t, int(mrtr.CodeInvalidParams), m.Error.Code, "%s", body)
				assert.Contains(t, m.Error.Message, "repeats a member name", "%s", body)
			}
		})
	}
	// The genuine retry is served.
	_, body = f.do(t, mrtrRetry(4, meta, first.Result.RequestState, `{"item":"x"}`))
	assert.Contains(t, string(body), "confirmed=accept")
}
