package mrtr_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mrtrkit/mrtrkit/internal/testkit"
	"github.com/mrtrkit/mrtrkit/internal/wire"
	"github.com/mrtrkit/mrtrkit/mrtr"
	"github.com/mrtrkit/mrtrkit/mrtr/mrtrtest"
	"github.com/mrtrkit/mrtrkit/state"
)

// seen is what a handler observed on one call.
type seen struct {
	Round     int
	State     string
	Keys      []string
	Principal string
	Args      string
}

// wizard is a three-round tool: round 0 asks the user's name (elicitation
// "step1"), round 1 asks the model for a greeting (sampling "step2") and
// carries the name in its state, round 2 completes from both answers.
type wizard struct {
	calls atomic.Int32
	mu    sync.Mutex
	log   []seen
}

func (w *wizard) Handle(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
	w.calls.Add(1)
	w.mu.Lock()
	w.log = append(w.log, seen{Round: req.Round, State: string(req.State), Keys: req.Responses.Keys(), Principal: req.Principal, Args: string(req.Arguments)})
	w.mu.Unlock()
	switch req.Round {
	case 0:
		return &mrtr.InputRequired{
			Requests: map[string]mrtr.InputRequest{"step1": nameForm("What is your name?")},
			State:    []byte("r0"),
		}, nil
	case 1:
		ans, ok := req.Responses.Elicitation("step1")
		if !ok || !ans.Accepted() {
			return mrtr.ErrorResult("no name given"), nil
		}
		name, _ := ans.Content["name"].(string)
		return &mrtr.InputRequired{
			Requests: map[string]mrtr.InputRequest{"step2": simpleSampling("Greet " + name)},
			State:    append(append([]byte(nil), req.State...), "|name="+name...),
		}, nil
	default:
		ans, ok := req.Responses.Sampling("step2")
		if !ok {
			return mrtr.ErrorResult("no greeting"), nil
		}
		return mrtr.TextResult(ans.Text() + " [" + string(req.State) + "]"), nil
	}
}

func (w *wizard) seen() []seen {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]seen(nil), w.log...)
}

const (
	answerStep1 = `{"action":"accept","content":{"name":"Ada"}}`
	answerStep2 = `{"role":"assistant","content":{"type":"text","text":"Hello, Ada!"},"model":"m-1","stopReason":"endTurn"}`
)

// wizardFixture registers the wizard as tool "wizard" and a tool "other"
// served by the same handler.
func wizardFixture(t *testing.T, opts ...mrtr.Option) (*fixture, *wizard) {
	f := newFixture(t, opts...)
	w := &wizard{}
	require.NoError(t, f.srv.AddTool(mrtr.Tool{Name: "wizard", InputSchema: json.RawMessage(`{"type":"object"}`)}, w))
	require.NoError(t, f.srv.AddTool(mrtr.Tool{Name: "other", InputSchema: json.RawMessage(`{"type":"object"}`)}, w))
	return f, w
}

// wizardCall renders tools/call params for the wizard.
func wizardCall(args obj, token string, responses obj) obj {
	p := obj{"_meta": meta(capsElicitSampl), "name": "wizard", "arguments": args}
	if token != "" {
		p["requestState"] = token
	}
	if responses != nil {
		p["inputResponses"] = responses
	}
	return p
}

// wizardCallRaw is wizardCall with arguments given as JSON text.
func wizardCallRaw(args string, token string, responses obj) obj {
	p := wizardCall(nil, token, responses)
	p["arguments"] = rawJSON(args)
	return p
}

func rawJSON(s string) json.RawMessage { return json.RawMessage(s) }

func TestThreeRoundTool(t *testing.T) {
	f, w := wizardFixture(t)
	args := obj{"lang": "en", "n": 1}

	// Round 0: the handler asks for the user's name.
	res, tok1 := f.call("tools/call", wizardCall(args, "", nil)).inputRequired(t)
	assert.Equal(t, []string{"_meta", "inputRequests", "requestState", "resultType"}, keysOf(res), "input_required carries no cache hint and no content")
	assert.Equal(t, obj{wire.MetaServerInfo: obj{"name": "test", "version": "1.0.0"}}, res["_meta"])
	asks := res["inputRequests"].(map[string]any)
	assert.Equal(t, []string{"step1"}, keysOf(asks))
	assert.Equal(t, obj{
		"method": "elicitation/create",
		"params": obj{
			"mode":    "form",
			"message": "What is your name?",
			"requestedSchema": obj{
				"type":       "object",
				"properties": obj{"name": obj{"type": "string"}},
				"required":   []any{"name"},
			},
		},
	}, asks["step1"])

	// Round 1: the answer arrives; the handler asks the model, with state.
	// Member order and spacing of the arguments do not matter.
	res, tok2 := f.call("tools/call", wizardCallRaw(`{"n": 1.0, "lang" : "en"}`, tok1, obj{"step1": rawJSON(answerStep1)})).inputRequired(t)
	assert.NotEqual(t, tok1, tok2, "requestState changes between rounds")
	asks = res["inputRequests"].(map[string]any)
	assert.Equal(t, []string{"step2"}, keysOf(asks))
	assert.Equal(t, obj{
		"method": "sampling/createMessage",
		"params": obj{
			"messages":  []any{obj{"role": "user", "content": obj{"type": "text", "text": "Greet Ada"}}},
			"maxTokens": float64(100),
		},
	}, asks["step2"])

	// Round 2: the sampling answer completes the call.
	res = f.call("tools/call", wizardCall(args, tok2, obj{"step2": rawJSON(answerStep2)})).complete(t)
	assert.Equal(t, "Hello, Ada! [r0|name=Ada]", toolText(t, res))
	assert.NotContains(t, res, "requestState")
	assert.NotContains(t, res, "ttlMs")

	log := w.seen()
	require.Len(t, log, 3)
	assert.Equal(t, seen{Round: 0, Keys: []string{}, Args: `{"lang":"en","n":1}`}, log[0])
	assert.Equal(t, seen{Round: 1, State: "r0", Keys: []string{"step1"}, Args: `{"n":1.0,"lang":"en"}`}, log[1])
	assert.Equal(t, seen{Round: 2, State: "r0|name=Ada", Keys: []string{"step2"}, Args: `{"lang":"en","n":1}`}, log[2])
}

// The same three rounds, answered by an in-process client.
func TestThreeRoundToolThroughClient(t *testing.T) {
	f, w := wizardFixture(t)
	var asked []string
	c := mrtrtest.NewClient(f.srv,
		mrtrtest.WithPrincipal("alice"),
		mrtrtest.OnElicitation(func(_ context.Context, r *mrtr.ElicitRequest) (*mrtr.ElicitResult, error) {
			asked = append(asked, r.Message)
			return &mrtr.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}}, nil
		}),
		mrtrtest.OnSampling(func(_ context.Context, r *mrtr.SamplingRequest) (*mrtr.SamplingResult, error) {
			asked = append(asked, r.Messages[0].Content[0].Text)
			return &mrtr.SamplingResult{Role: mrtr.RoleAssistant, Model: "m", Content: []mrtr.SamplingContent{{Type: "text", Text: "Hello, Ada!"}}}, nil
		}))
	res, err := c.CallTool(context.Background(), "wizard", obj{"lang": "en"})
	require.NoError(t, err)
	assert.Equal(t, "Hello, Ada! [r0|name=Ada]", res.Text())
	assert.False(t, res.IsError)
	assert.Equal(t, 2, res.Rounds)
	assert.Equal(t, [][]string{{"step1"}, {"step2"}}, res.Asked)
	assert.Equal(t, []string{"What is your name?", "Greet Ada"}, asked)
	log := w.seen()
	require.Len(t, log, 3)
	for i, s := range log {
		assert.Equal(t, i, s.Round)
		assert.Equal(t, "alice", s.Principal)
		assert.Equal(t, `{"lang":"en"}`, s.Args)
	}

	// A client that cannot answer is told so, and the server is not
	// asked again.
	_, err = mrtrtest.NewClient(f.srv, mrtrtest.WithCapabilities(mrtr.ClientCapabilities{Elicitation: &mrtr.ElicitCapability{}, Sampling: &mrtr.SamplingCapability{}})).CallTool(context.Background(), "wizard", nil)
	assert.ErrorIs(t, err, mrtrtest.ErrUnanswered)
	assert.EqualValues(t, 4, w.calls.Load())

	// A client that declares nothing meets the capability gate.
	_, err = mrtrtest.NewClient(f.srv).CallTool(context.Background(), "wizard", nil)
	var e *mrtr.Error
	require.ErrorAs(t, err, &e)
	assert.Equal(t, mrtr.CodeMissingCapability, e.Code)
	assert.JSONEq(t, `{"requiredCapabilities":{"elicitation":{}}}`, string(mustJSON(e.Data)))
}

func TestStateIsSharedByReplicasWithTheSameKeys(t *testing.T) {
	a, _ := wizardFixture(t)
	b, wb := wizardFixture(t)
	_, tok := a.call("tools/call", wizardCall(obj{}, "", nil)).inputRequired(t)
	b.call("tools/call", wizardCall(obj{}, tok, obj{"step1": rawJSON(answerStep1)})).inputRequired(t)
	assert.Equal(t, 1, wb.seen()[0].Round)
}

func TestStateSurvivesKeyRotation(t *testing.T) {
	old, _ := wizardFixture(t)
	_, tok := old.call("tools/call", wizardCall(obj{}, "", nil)).inputRequired(t)

	// The new deployment seals with k2 and still opens k1.
	clock := testkit.NewClock(testkit.Start)
	codec, err := state.NewAEAD(testkit.Ring(t, testkit.Key("k2", 9), testkit.Key("k1", 7)), state.WithClock(clock.Now))
	require.NoError(t, err)
	rotated, w := wizardFixture(t, mrtr.WithCodec(codec))
	_, tok2 := rotated.call("tools/call", wizardCall(obj{}, tok, obj{"step1": rawJSON(answerStep1)})).inputRequired(t)
	assert.Equal(t, 1, w.seen()[0].Round)

	// Its new tokens are not accepted where k2 is unknown.
	r := old.call("tools/call", wizardCall(obj{}, tok2, obj{"step2": rawJSON(answerStep2)}))
	requireInvalidState(t, r, mrtr.ReasonInvalidRequestState)
	assert.True(t, old.logHas("requestState refused", "reason=unknown_key"))
}

// flipChar replaces the character at i with another base64url character.
func flipChar(tok string, i int) string {
	c := byte('A')
	if tok[i] == 'A' {
		c = 'B'
	}
	return tok[:i] + string(c) + tok[i+1:]
}

func TestRequestStateRefusals(t *testing.T) {
	tests := []struct {
		name string
		// retry returns the params and options of the retry, given a round-1
		// token issued for wizardCall(obj{}) to principal "alice".
		retry  func(t *testing.T, f *fixture, tok string) (method string, params obj, opts []inOpt)
		reason string // refusal reason in data
		logged string // reason the log records
		opts   []mrtr.Option
	}{
		{
			name: "flipped character",
			retry: func(t *testing.T, f *fixture, tok string) (string, obj, []inOpt) {
				return "tools/call", wizardCall(obj{}, flipChar(tok, len(tok)/2), obj{"step1": rawJSON(answerStep1)}), []inOpt{asPrincipal("alice")}
			},
			reason: mrtr.ReasonInvalidRequestState, logged: "integrity",
		},
		{
			name: "appended suffix",
			retry: func(t *testing.T, f *fixture, tok string) (string, obj, []inOpt) {
				return "tools/call", wizardCall(obj{}, tok+"-TAMPERED", obj{"step1": rawJSON(answerStep1)}), []inOpt{asPrincipal("alice")}
			},
			reason: mrtr.ReasonInvalidRequestState,
		},
		{
			name: "truncated",
			retry: func(t *testing.T, f *fixture, tok string) (string, obj, []inOpt) {
				return "tools/call", wizardCall(obj{}, tok[:len(tok)-4], obj{"step1": rawJSON(answerStep1)}), []inOpt{asPrincipal("alice")}
			},
			reason: mrtr.ReasonInvalidRequestState,
		},
		{
			name: "not base64url",
			retry: func(t *testing.T, f *fixture, tok string) (string, obj, []inOpt) {
				return "tools/call", wizardCall(obj{}, "!!"+tok, obj{"step1": rawJSON(answerStep1)}), []inOpt{asPrincipal("alice")}
			},
			reason: mrtr.ReasonInvalidRequestState, logged: "malformed",
		},
		{
			name: "empty string",
			retry: func(t *testing.T, f *fixture, tok string) (string, obj, []inOpt) {
				p := wizardCall(obj{}, "", obj{"step1": rawJSON(answerStep1)})
				p["requestState"] = ""
				return "tools/call", p, []inOpt{asPrincipal("alice")}
			},
			reason: mrtr.ReasonInvalidRequestState, logged: "malformed",
		},
		{
			name: "number",
			retry: func(t *testing.T, f *fixture, tok string) (string, obj, []inOpt) {
				p := wizardCall(obj{}, "", nil)
				p["requestState"] = 42
				return "tools/call", p, []inOpt{asPrincipal("alice")}
			},
			reason: mrtr.ReasonInvalidRequestState, logged: "not_a_string",
		},
		{
			name: "object",
			retry: func(t *testing.T, f *fixture, tok string) (string, obj, []inOpt) {
				p := wizardCall(obj{}, "", nil)
				p["requestState"] = obj{"token": tok}
				return "tools/call", p, []inOpt{asPrincipal("alice")}
			},
			reason: mrtr.ReasonInvalidRequestState, logged: "not_a_string",
		},
		{
			name: "other arguments",
			retry: func(t *testing.T, f *fixture, tok string) (string, obj, []inOpt) {
				return "tools/call", wizardCall(obj{"a": 1}, tok, obj{"step1": rawJSON(answerStep1)}), []inOpt{asPrincipal("alice")}
			},
			reason: mrtr.ReasonInvalidRequestState, logged: "request_mismatch",
		},
		{
			name: "extra argument",
			retry: func(t *testing.T, f *fixture, tok string) (string, obj, []inOpt) {
				return "tools/call", wizardCall(obj{"b": nil}, tok, obj{"step1": rawJSON(answerStep1)}), []inOpt{asPrincipal("alice")}
			},
			reason: mrtr.ReasonInvalidRequestState, logged: "request_mismatch",
		},
		{
			name: "another tool",
			retry: func(t *testing.T, f *fixture, tok string) (string, obj, []inOpt) {
				p := wizardCall(obj{}, tok, obj{"step1": rawJSON(answerStep1)})
				p["name"] = "other"
				return "tools/call", p, []inOpt{asPrincipal("alice")}
			},
			reason: mrtr.ReasonInvalidRequestState, logged: "request_mismatch",
		},
		{
			name: "another method with the same name",
			retry: func(t *testing.T, f *fixture, tok string) (string, obj, []inOpt) {
				// prompts/get of a prompt named like the tool, with the same
				// (empty) arguments: only the method differs.
				p := obj{"_meta": meta(capsElicitSampl), "name": "wizard", "requestState": tok, "inputResponses": obj{"step1": rawJSON(answerStep1)}}
				return "prompts/get", p, []inOpt{asPrincipal("alice")}
			},
			reason: mrtr.ReasonInvalidRequestState, logged: "request_mismatch",
		},
		{
			name: "another principal",
			retry: func(t *testing.T, f *fixture, tok string) (string, obj, []inOpt) {
				return "tools/call", wizardCall(obj{}, tok, obj{"step1": rawJSON(answerStep1)}), []inOpt{asPrincipal("mallory")}
			},
			reason: mrtr.ReasonInvalidRequestState, logged: "principal_mismatch",
		},
		{
			name: "anonymous",
			retry: func(t *testing.T, f *fixture, tok string) (string, obj, []inOpt) {
				return "tools/call", wizardCall(obj{}, tok, obj{"step1": rawJSON(answerStep1)}), nil
			},
			reason: mrtr.ReasonInvalidRequestState, logged: "principal_mismatch",
		},
		{
			name: "expired",
			retry: func(t *testing.T, f *fixture, tok string) (string, obj, []inOpt) {
				// state's default TTL and clock skew (documented on
				// state.WithTTL and state.WithClockSkew), and just past.
				f.clock.Advance(10*time.Minute + 30*time.Second + time.Millisecond)
				return "tools/call", wizardCall(obj{}, tok, obj{"step1": rawJSON(answerStep1)}), []inOpt{asPrincipal("alice")}
			},
			reason: mrtr.ReasonExpiredRequestState, logged: "expired",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, w := wizardFixture(t, tt.opts...)
			require.NoError(t, f.srv.AddPrompt(mrtr.Prompt{Name: "wizard"}, w))
			_, tok := f.call("tools/call", wizardCall(obj{}, "", nil), asPrincipal("alice")).inputRequired(t)
			require.EqualValues(t, 1, w.calls.Load())
			method, params, opts := tt.retry(t, f, tok)
			r := f.call(method, params, opts...)
			requireInvalidState(t, r, tt.reason)
			assert.EqualValues(t, 1, w.calls.Load(), "the handler must not run on a refused state")
			if tt.logged != "" {
				assert.True(t, f.logHas("requestState refused", "reason="+tt.logged), "log: %s", f.logs.String())
			}
		})
	}
}

func TestRequestStateOtherAudience(t *testing.T) {
	f, w := wizardFixture(t)
	_, tok := f.call("tools/call", wizardCall(obj{}, "", nil)).inputRequired(t)
	// Same keys, another server identity.
	other, wo := wizardFixture(t, mrtr.WithCodec(f.codec), mrtr.WithAudience("https://elsewhere"))
	r := other.call("tools/call", wizardCall(obj{}, tok, obj{"step1": rawJSON(answerStep1)}))
	requireInvalidState(t, r, mrtr.ReasonInvalidRequestState)
	assert.True(t, other.logHas("requestState refused", "reason=request_mismatch"))
	assert.EqualValues(t, 0, wo.calls.Load())
	assert.EqualValues(t, 1, w.calls.Load())
}

func TestRequestStateValidUntilExpiry(t *testing.T) {
	f, w := wizardFixture(t)
	_, tok := f.call("tools/call", wizardCall(obj{}, "", nil)).inputRequired(t)
	// state's default TTL and clock skew (documented on state.WithTTL
	// and state.WithClockSkew): the last instant the state is valid.
	f.clock.Advance(10*time.Minute + 30*time.Second)
	f.call("tools/call", wizardCall(obj{}, tok, obj{"step1": rawJSON(answerStep1)})).inputRequired(t)
	assert.EqualValues(t, 2, w.calls.Load())
}

// kindSampling is the byte mrtr records in a sealed state for a key asked
// as a sampling request (elicitation form 2, url 3, roots 4).
const kindSampling byte = 1

// sealFor seals a token for the wizard as the server would, with codec.
func sealFor(t *testing.T, codec state.Codec, args string, round int, asked map[string]byte, payload string) string {
	t.Helper()
	digest, err := state.DigestJSON([]byte(args))
	require.NoError(t, err)
	tok, err := codec.Seal(state.Claims{
		Audience: "test", Method: "tools/call", Target: "wizard", ArgsDigest: digest,
		Round: round, Asked: asked, Payload: []byte(payload),
	})
	require.NoError(t, err)
	return tok
}

// The round limit is the Server's alone: a state sealed with the server's
// keys opens up to WithMaxRounds and is refused past it, whatever round
// the codec can carry.
func TestRoundLimit(t *testing.T) {
	clock := testkit.NewClock(testkit.Start)
	codec := testkit.Codec(t, state.WithClock(clock.Now))
	asked := map[string]byte{"step2": kindSampling}

	f, w := wizardFixture(t, mrtr.WithMaxRounds(3))
	// A token sealed by the server's own format is accepted up to the limit...
	tok := sealFor(t, codec, `{}`, 3, asked, "x")
	f.call("tools/call", wizardCall(obj{}, tok, obj{"step2": rawJSON(answerStep2)})).complete(t)
	require.EqualValues(t, 1, w.calls.Load())
	assert.Equal(t, 3, w.seen()[0].Round)
	assert.Equal(t, []string{"step2"}, w.seen()[0].Keys, "the answer was decoded by the kind the state recorded")

	// ...and refused past it, without running the handler.
	tok = sealFor(t, codec, `{}`, 4, asked, "x")
	r := f.call("tools/call", wizardCall(obj{}, tok, obj{"step2": rawJSON(answerStep2)}))
	requireInvalidState(t, r, mrtr.ReasonInvalidRequestState)
	assert.EqualValues(t, 1, w.calls.Load())
	assert.True(t, f.logHas("requestState refused", "reason=round_limit"))

	// The round is held to the limit once the token is authentic and
	// before the arguments are digested: other arguments do not change
	// the reason.
	f.logs.Reset()
	r = f.call("tools/call", wizardCall(obj{"other": true}, tok, obj{"step2": rawJSON(answerStep2)}))
	requireInvalidState(t, r, mrtr.ReasonInvalidRequestState)
	assert.True(t, f.logHas("requestState refused", "reason=round_limit"), "log: %s", f.logs.String())

	// The default limit is DefaultMaxRounds: its last round opens, the
	// next one does not.
	g, wg := wizardFixture(t)
	require.Equal(t, defaultRounds, g.srv.MaxRounds())
	tok = sealFor(t, codec, `{}`, defaultRounds, asked, "x")
	g.call("tools/call", wizardCall(obj{}, tok, obj{"step2": rawJSON(answerStep2)})).complete(t)
	assert.EqualValues(t, 1, wg.calls.Load())
	tok = sealFor(t, codec, `{}`, defaultRounds+1, asked, "x")
	requireInvalidState(t, g.call("tools/call", wizardCall(obj{}, tok, obj{"step2": rawJSON(answerStep2)})), mrtr.ReasonInvalidRequestState)
	assert.EqualValues(t, 1, wg.calls.Load())
	assert.True(t, g.logHas("requestState refused", "reason=round_limit"))
}

func TestHandlerAskingPastTheRoundLimit(t *testing.T) {
	f := newFixture(t, mrtr.WithMaxRounds(2))
	var rounds []int
	f.addTool("forever", func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
		rounds = append(rounds, req.Round)
		return mrtr.Ask("again", &mrtr.RootsRequest{}), nil
	})
	p := obj{"name": "forever"}
	_, tok := f.call("tools/call", p).inputRequired(t)
	p["requestState"] = tok
	_, tok = f.call("tools/call", p).inputRequired(t)
	p["requestState"] = tok
	e := f.call("tools/call", p).fail(t, mrtr.CodeInternalError)
	assert.Equal(t, "Internal error", e.Message)
	assert.Equal(t, []int{0, 1, 2}, rounds)
	assert.True(t, f.logHas("round limit"))
}

func TestNewServerOptions(t *testing.T) {
	_, err := mrtr.NewServer(testDesc(), mrtr.WithMaxRounds(0))
	assert.Error(t, err)
	_, err = mrtr.NewServer(testDesc(), mrtr.WithMaxRounds(state.MaxRound+1))
	assert.Error(t, err, "a limit beyond what a requestState carries")
	srv, err := mrtr.NewServer(testDesc(), mrtr.WithMaxRounds(1))
	require.NoError(t, err)
	assert.Equal(t, 1, srv.MaxRounds())
	_, err = mrtr.NewServer(testDesc(), mrtr.WithPageSize(0))
	assert.Error(t, err)
	desc := testDesc()
	desc.Server.Name = ""
	_, err = mrtr.NewServer(desc)
	assert.Error(t, err)
}

func TestDefaultCodecFromEnvironment(t *testing.T) {
	t.Setenv(state.EnvKeys, "k1:"+base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{3}, 32)))
	a, err := mrtr.NewServer(testDesc())
	require.NoError(t, err)
	b, err := mrtr.NewServer(testDesc())
	require.NoError(t, err)
	w := &wizard{}
	for _, s := range []*mrtr.Server{a, b} {
		require.NoError(t, s.AddTool(mrtr.Tool{Name: "wizard"}, w))
	}
	_, tok := serve(t, a, request("tools/call", wizardCall(obj{}, "", nil))).inputRequired(t)
	serve(t, b, request("tools/call", wizardCall(obj{}, tok, obj{"step1": rawJSON(answerStep1)}))).inputRequired(t)

	t.Setenv(state.EnvKeys, "not a key ring")
	_, err = mrtr.NewServer(testDesc())
	assert.Error(t, err)
}

// rawRound serves one wizard call without testing helpers, for use off
// the test goroutine; it returns the result object or an error.
func rawRound(srv *mrtr.Server, principal string, params obj) (obj, error) {
	msg, _, perr := mrtr.ParseMessage([]byte(request("tools/call", params)))
	if perr != nil {
		return nil, perr
	}
	resp := srv.Handle(context.Background(), &mrtr.Inbound{Message: msg, Principal: principal})
	if resp.Error != nil {
		return nil, resp.Error
	}
	var res obj
	return res, json.Unmarshal(resp.Result, &res)
}

func TestConcurrentRounds(t *testing.T) {
	f, w := wizardFixture(t)
	const n = 16
	texts := make([]string, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			args := obj{"i": i}
			who := fmt.Sprint("user", i)
			res, err := rawRound(f.srv, who, wizardCall(args, "", nil))
			if err != nil {
				errs[i] = err
				return
			}
			tok, _ := res["requestState"].(string)
			if res, err = rawRound(f.srv, who, wizardCall(args, tok, obj{"step1": rawJSON(answerStep1)})); err != nil {
				errs[i] = err
				return
			}
			tok, _ = res["requestState"].(string)
			if res, err = rawRound(f.srv, who, wizardCall(args, tok, obj{"step2": rawJSON(answerStep2)})); err != nil {
				errs[i] = err
				return
			}
			content, _ := res["content"].([]any)
			if len(content) == 1 {
				texts[i], _ = content[0].(map[string]any)["text"].(string)
			}
		}()
		// Registrations change while calls are served.
		name := fmt.Sprint("extra", i)
		require.NoError(t, f.srv.AddTool(mrtr.Tool{Name: name}, w))
		f.srv.RemoveTool(name)
	}
	wg.Wait()
	for i := range n {
		require.NoError(t, errs[i])
		assert.Equal(t, "Hello, Ada! [r0|name=Ada]", texts[i])
	}
	assert.EqualValues(t, 3*n, w.calls.Load())
}

// defaultRounds is the documented default of WithMaxRounds.
const defaultRounds = 10
