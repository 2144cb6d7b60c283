package legacy

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mrtrkit/mrtrkit/internal/wire"
	"github.com/mrtrkit/mrtrkit/mrtr"
)

// A three-round tools/call mixing elicitation, sampling and roots: every
// question reaches the client as a real request with ids counting from 1,
// every retry carries exactly that round's answers, and the result shows
// nothing of the modern wire.
func TestBridgeThreeRounds(t *testing.T) {
	v := newEnv(t, nil)
	s := v.open("alice", capsAll)
	x := v.run(s, toolCall("call-1", "trio", `{}`), standard)
	assertLegacyResponse(t, x.resp)
	assert.Equal(t, `"call-1"`, x.resp.ID.String())
	r := decodeTool(t, x.resp)
	assert.False(t, r.IsError)
	assert.Equal(t, "s1:v-name|drafted|file:///home/u|accept", r.Content[0].Text)
	assert.JSONEq(t, `{"x.example/trace":"t1"}`, string(r.Meta), "the handler's own _meta stays, the server's identity goes")

	reqs := x.requests()
	require.Len(t, reqs, 4)
	assert.Equal(t, []int64{1, 2, 3, 4}, legIDs(t, reqs), "leg ids count from 1 per session")
	methods := []string{reqs[0].Method, reqs[1].Method, reqs[2].Method, reqs[3].Method}
	assert.Equal(t, []string{wire.MethodElicit, wire.MethodCreateMessage, wire.MethodListRoots, wire.MethodElicit}, methods, "round 2's questions go out sorted by key")
	for _, q := range reqs {
		assertNoModern(t, q.raw)
	}
	assert.JSONEq(t, `{}`, string(reqs[2].Params), "roots/list has empty params")
	assert.Equal(t, `"form"`, field(t, reqs[0].Params, "mode"))
	assert.Equal(t, `"url"`, field(t, reqs[3].Params, "mode"))
	assert.Regexp(t, `^"[0-9a-f]{24}"$`, field(t, reqs[3].Params, "elicitationId"), "a url-mode elicitation carries an elicitationId")
	assert.Equal(t, `"https://example.com/confirm"`, field(t, reqs[3].Params, "url"))

	// The tool saw, on each retry, exactly that round's answers and its
	// own state. "early" is a static ask, which the server accepts on any
	// round: had a retry carried it again, round 2 or 3 would show it.
	got := v.b.of("trio")
	require.Len(t, got, 4)
	want := []struct {
		keys  []string
		state string
	}{{[]string{}, ""}, {[]string{"early"}, "s0"}, {[]string{"draft", "where"}, "s1:v-name"}, {[]string{"confirm"}, "s1:v-name|drafted|file:///home/u"}}
	for i, w := range want {
		assert.Equal(t, i, got[i].round)
		assert.ElementsMatch(t, w.keys, got[i].keys, "round %d", i)
		assert.Equal(t, w.state, got[i].state, "round %d", i)
		assert.Equal(t, "2026-07-28", got[i].meta.ProtocolVersion, "the bridge claims the modern version")
		assert.Equal(t, "alice", got[i].who, "round %d: the session's principal", i)
	}

	// The next call of the session continues the count.
	x = v.run(s, toolCall(2, "sampler", `{}`), standard)
	assert.Equal(t, "sampled drafted", decodeTool(t, x.resp).Content[0].Text)
	assert.Equal(t, []int64{5}, legIDs(t, x.requests()))

	// Another session counts from 1.
	s2 := v.open("alice", capsAll)
	x = v.run(s2, toolCall(1, "sampler", `{}`), standard)
	assert.Equal(t, []int64{1}, legIDs(t, x.requests()))
}

// field returns the raw JSON of a member of the object raw.
func field(t testing.TB, raw json.RawMessage, name string) string {
	t.Helper()
	var m map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(raw, &m), "%s", raw)
	return string(m[name])
}

func TestBridgePromptAndResource(t *testing.T) {
	v := newEnv(t, nil)
	s := v.open("", capsAll)
	x := v.run(s, `{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{"name":"pwiz"}}`, standard)
	assertLegacyResponse(t, x.resp)
	require.Nil(t, x.resp.Error)
	assert.JSONEq(t, `{"messages":[{"role":"user","content":{"type":"text","text":"about v-topic"}}]}`, string(x.resp.Result))
	assert.Equal(t, []int64{1}, legIDs(t, x.requests()))
	assert.Equal(t, wire.MethodElicit, x.requests()[0].Method)

	x = v.run(s, `{"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":"file:///wiz.txt"}}`, standard)
	assertLegacyResponse(t, x.resp)
	require.Nil(t, x.resp.Error)
	assert.JSONEq(t, `{"contents":[{"uri":"file:///wiz.txt","mimeType":"text/plain","text":"root file:///home/u"}]}`, string(x.resp.Result))
	assert.Equal(t, []int64{2}, legIDs(t, x.requests()))
	assert.Equal(t, wire.MethodListRoots, x.requests()[0].Method)

	assert.Len(t, v.b.of("pwiz"), 2)
	assert.Len(t, v.b.of("wiz"), 2)
}

// Every number of rounds the server allows completes, state-only rounds
// included (retried after a pause, with the state alone), and nothing of
// the modern wire shows; one round more is stopped with a result saying so.
func TestBridgeRoundsUpToTheLimit(t *testing.T) {
	const limit = 3
	v := newEnv(t, []mrtr.Option{mrtr.WithMaxRounds(limit)})
	require.Equal(t, limit, v.srv.MaxRounds())
	s := v.open("", capsAll)
	id := 0
	legs := int64(0)
	for n := 1; n <= limit; n++ {
		for _, stateOnly := range [][]int{nil, {0}, {n - 1}} {
			id++
			args := fmt.Sprintf(`{"n":%d,"stateOnly":%s}`, n, jsonOf(stateOnly))
			before := len(v.b.of("deep"))
			x := v.run(s, toolCall(id, "deep", args), standard)
			assertLegacyResponse(t, x.resp)
			r := decodeTool(t, x.resp)
			require.False(t, r.IsError, "%s: %s", args, x.resp.Result)
			assert.Equal(t, fmt.Sprintf("rounds=%d", n), r.Content[0].Text, args)
			asked := n - len(stateOnly)
			require.Len(t, x.requests(), asked, args)
			for _, q := range x.requests() {
				legs++
				assert.Equal(t, wire.MethodListRoots, q.Method)
				assert.Equal(t, []int64{legs}, legIDs(t, []wireMsg{q}), "leg ids keep counting per session")
			}
			for _, m := range x.traffic {
				assertNoModern(t, m.raw)
			}
			// A state-only round is retried after the pause, with no answers.
			calls := v.b.of("deep")[before:]
			require.Len(t, calls, n+1, args)
			for _, r := range stateOnly {
				assert.GreaterOrEqual(t, calls[r+1].at.Sub(calls[r].at), 240*time.Millisecond, "%s: state-only round %d retried too soon", args, r)
				assert.Empty(t, calls[r+1].keys)
			}
		}
	}

	// One round past the limit: tools/call ends with an isError result.
	x := v.run(s, toolCall("over", "deep", fmt.Sprintf(`{"n":%d}`, limit+1)), standard)
	assertLegacyResponse(t, x.resp)
	r := decodeTool(t, x.resp)
	assert.True(t, r.IsError)
	assert.Contains(t, r.Content[0].Text, fmt.Sprintf("more than %d rounds", limit))
	assert.Len(t, x.requests(), limit)
}

func jsonOf(v any) string {
	b, _ := json.Marshal(v)
	if string(b) == "null" {
		return "[]"
	}
	return string(b)
}

// A client that refuses a question ends the call: tools/call with an
// isError result naming the question, other methods with -32603; the
// round's other questions are withdrawn.
func TestLegRefused(t *testing.T) {
	v := newEnv(t, nil)
	s := v.open("", capsAll)
	refuseA := func(m wireMsg) reply {
		if strings.Contains(string(m.Params), `"A?"`) {
			return reply{Error: `{"code":-1,"message":"User rejected"}`}
		}
		return reply{} // b stays open
	}
	x := v.run(s, toolCall(1, "pair", `{}`), refuseA)
	assertLegacyResponse(t, x.resp)
	r := decodeTool(t, x.resp)
	assert.True(t, r.IsError)
	assert.Equal(t, `The client refused the elicitation/create request "a": "User rejected"`, r.Content[0].Text)
	cancelled := x.notifications("notifications/cancelled")
	require.Len(t, cancelled, 1, "the open question b is withdrawn")
	assert.JSONEq(t, `{"requestId":2,"reason":"another request of the round failed"}`, string(cancelled[0].Params))

	// An answer to the withdrawn question is dropped.
	v.answer(s, json.RawMessage(`2`), reply{Result: `{"action":"accept","content":{"b":"x"}}`})
	s.x.mu.Lock()
	assert.Empty(t, s.x.legs)
	assert.Empty(t, s.x.calls)
	s.x.mu.Unlock()

	// A result without content is a refusal too... as is one that the
	// server cannot read as an answer, which the server reports.
	x = v.run(s, `{"jsonrpc":"2.0","id":2,"method":"prompts/get","params":{"name":"pwiz"}}`, func(wireMsg) reply {
		return reply{Error: `{"code":-32603,"message":"no"}`}
	})
	assertLegacyResponse(t, x.resp)
	require.NotNil(t, x.resp.Error)
	assert.Equal(t, mrtr.CodeInternalError, x.resp.Error.Code)
	assert.Contains(t, x.resp.Error.Message, `refused the elicitation/create request "topic"`)

	x = v.run(s, toolCall(3, "sampler", `{}`), func(wireMsg) reply { return reply{Result: `{"role":"assistant"}`} })
	assertLegacyResponse(t, x.resp)
	require.NotNil(t, x.resp.Error, "an unreadable answer: %s", x.resp.Result)
	assert.Equal(t, mrtr.CodeInvalidParams, x.resp.Error.Code)
}

// A question the client does not answer in time ends the call; the late
// answer is accepted and dropped.
func TestLegTimeout(t *testing.T) {
	v := newEnv(t, nil, WithLegTimeout(100*time.Millisecond))
	s := v.open("", capsAll)
	start := time.Now()
	x := v.run(s, toolCall(1, "pair", `{}`), func(m wireMsg) reply {
		if strings.Contains(string(m.Params), `"B?"`) {
			return standard(m) // a is never answered
		}
		return reply{}
	})
	assert.GreaterOrEqual(t, time.Since(start), 100*time.Millisecond)
	assertLegacyResponse(t, x.resp)
	r := decodeTool(t, x.resp)
	assert.True(t, r.IsError)
	assert.Equal(t, `The client did not answer the elicitation/create request "a" within 100ms`, r.Content[0].Text)
	cancelled := x.notifications("notifications/cancelled")
	require.Len(t, cancelled, 1)
	assert.JSONEq(t, `{"requestId":1,"reason":"timed out"}`, string(cancelled[0].Params))

	// Late: dropped, nothing else happens.
	v.answer(s, json.RawMessage(`1`), standard(x.requests()[0]))
	s.x.mu.Lock()
	assert.Empty(t, s.x.legs)
	s.x.mu.Unlock()

	// resources/read: -32603.
	x = v.run(s, `{"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":"file:///wiz.txt"}}`, nil)
	require.NotNil(t, x.resp.Error)
	assert.Equal(t, mrtr.CodeInternalError, x.resp.Error.Code)
	assert.Contains(t, x.resp.Error.Message, `did not answer the roots/list request "r" within 100ms`)
	noLeftovers(t)
}

// A duplicate answer, an answer to an id never asked, or of another
// type of id, is dropped; the call completes once.
func TestDuplicateAndStrayAnswers(t *testing.T) {
	v := newEnv(t, nil)
	s := v.open("", capsAll)
	x := v.run(s, toolCall(1, "pair", `{}`), func(m wireMsg) reply {
		r := standard(m)
		v.answer(s, json.RawMessage(`"`+string(m.ID)+`"`), r) // a string id is another id
		v.answer(s, json.RawMessage(`99`), r)
		v.answer(s, m.ID, r)
		return r // answered twice
	})
	r := decodeTool(t, x.resp)
	assert.Equal(t, "pair a,b", r.Content[0].Text)
	assert.Len(t, v.b.of("pair"), 2, "one retry")
	s.x.mu.Lock()
	assert.Empty(t, s.x.legs)
	s.x.mu.Unlock()
}

// Concurrent calls on one session get distinct leg ids, and each answer
// reaches its own call.
func TestConcurrentCallsShareTheCount(t *testing.T) {
	v := newEnv(t, nil)
	s := v.open("", capsAll)
	const n = 6
	var wg sync.WaitGroup
	ids := make(chan int64, 4*n)
	for i := range n {
		wg.Go(func() {
			x := v.run(s, toolCall(i+1, "trio", `{}`), standard)
			if assert.NotNil(t, x.resp) && assert.Nil(t, x.resp.Error) {
				assert.Contains(t, string(x.resp.Result), "s1:v-name|drafted|file:///home/u|accept")
			}
			for _, q := range x.requests() {
				var id int64
				assert.NoError(t, json.Unmarshal(q.ID, &id))
				ids <- id
			}
		})
	}
	wg.Wait()
	close(ids)
	seen := map[int64]bool{}
	for id := range ids {
		assert.False(t, seen[id], "leg id %d used twice", id)
		seen[id] = true
	}
	assert.Len(t, seen, 4*n)
	for i := int64(1); i <= 4*n; i++ {
		assert.True(t, seen[i], "leg id %d missing", i)
	}
}

// notifications/cancelled for the outer request cancels the call: the
// open questions are withdrawn and the request gets no response.
func TestCancelledByTheClient(t *testing.T) {
	v := newEnv(t, nil)
	s := v.open("", capsAll)
	x := v.runCtx(context.Background(), s, toolCall("c1", "pair", `{}`), nil, func(m wireMsg) {
		if m.isRequest() && string(m.ID) == "2" {
			// Both questions are out: the client changes its mind.
			again, err := v.e.Session(s.ID(), nil)
			require.NoError(t, err)
			assert.Nil(t, again.Handle(context.Background(), parse(t, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"c1","reason":"user"}}`), nil))
		}
	})
	assert.Nil(t, x.resp, "a cancelled request gets no response")
	cancelled := x.notifications("notifications/cancelled")
	require.Len(t, cancelled, 2)
	var withdrawn []map[string]any
	for _, c := range cancelled {
		var p map[string]any
		require.NoError(t, json.Unmarshal(c.Params, &p))
		withdrawn = append(withdrawn, p)
	}
	assert.ElementsMatch(t, []map[string]any{{"requestId": 1.0, "reason": "the request was cancelled"}, {"requestId": 2.0, "reason": "the request was cancelled"}}, withdrawn)
	s.x.mu.Lock()
	assert.Empty(t, s.x.legs)
	assert.Empty(t, s.x.calls)
	s.x.mu.Unlock()

	// A running handler sees its context end, with the cause.
	b := &book{in: make(chan struct{}, 1), ctxs: make(chan error, 1)}
	srv := newTestServer(t, b)
	v2 := &env{t: t, srv: srv, e: newEngine(t, srv), b: b}
	s2 := v2.open("", capsAll)
	done := make(chan *mrtr.Response, 1)
	go func() { done <- s2.Handle(context.Background(), parse(t, toolCall(7, "hold", `{}`)), newPipe()) }()
	<-b.in
	assert.Nil(t, s2.Handle(context.Background(), parse(t, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"7"}}`), nil), "another id: nothing")
	assert.Nil(t, s2.Handle(context.Background(), parse(t, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}`), nil))
	assert.ErrorIs(t, <-b.ctxs, errCancelled)
	assert.Nil(t, <-done)
	noLeftovers(t)
}

// The client going away (the request's context ending) cancels the call
// the same way.
func TestCancelledByDisconnect(t *testing.T) {
	v := newEnv(t, nil)
	s := v.open("", capsAll)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	x := v.runCtx(ctx, s, toolCall(1, "sampler", `{}`), nil, func(m wireMsg) {
		if m.isRequest() {
			cancel()
		}
	})
	assert.Nil(t, x.resp)
	cancelled := x.notifications("notifications/cancelled")
	require.Len(t, cancelled, 1)
	assert.JSONEq(t, `{"requestId":1,"reason":"the request was cancelled"}`, string(cancelled[0].Params))

	// A Sender that fails: the call ends with an error result at once.
	out := newPipe()
	out.failAt = 1
	r := decodeTool(t, s.Handle(context.Background(), parse(t, toolCall(2, "sampler", `{}`)), out))
	assert.True(t, r.IsError)
	assert.Equal(t, "The client could not be reached", r.Content[0].Text)
	noLeftovers(t)
}

// BUG: WithCallTimeout ends a call silently. When the call's own deadline
// passes, the bridge takes it for a cancellation by the client: the
// request gets no response at all (a Streamable HTTP client sees its
// stream end without one) and the open question is withdrawn with
// "the request was cancelled".
func TestCallTimeoutAnswers(t *testing.T) {
	v := newEnv(t, nil, WithCallTimeout(150*time.Millisecond))
	s := v.open("", capsAll)
	x := v.run(s, toolCall(1, "sampler", `{}`), nil) // never answered
	require.NotNil(t, x.resp, "a call that runs out of time gets no response at all")
	r := decodeTool(t, x.resp)
	assert.True(t, r.IsError)
}

func TestMaxCallsPerSession(t *testing.T) {
	b := &book{in: make(chan struct{}, 2), ctxs: make(chan error, 2)}
	srv := newTestServer(t, b)
	v := &env{t: t, srv: srv, e: newEngine(t, srv, WithMaxCalls(1)), b: b}
	s := v.open("", capsAll)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan *mrtr.Response, 1)
	go func() { done <- s.Handle(ctx, parse(t, toolCall(1, "hold", `{}`)), newPipe()) }()
	<-b.in

	resp := s.Handle(context.Background(), parse(t, toolCall(2, "trio", `{}`)), newPipe())
	require.NotNil(t, resp.Error)
	assert.Equal(t, mrtr.CodeInternalError, resp.Error.Code)
	assert.Equal(t, "Too many calls in flight on this session (at most 1); retry when one ends", resp.Error.Message)
	assertLegacyResponse(t, resp)

	// Lists are not bridged calls, and other sessions have their own count.
	list := s.Handle(context.Background(), parse(t, `{"jsonrpc":"2.0","id":3,"method":"tools/list"}`), nil)
	assert.Nil(t, list.Error)
	x := v.run(v.open("", capsAll), toolCall(1, "sampler", `{}`), standard)
	assert.False(t, decodeTool(t, x.resp).IsError)

	cancel()
	assert.Nil(t, <-done)
	<-b.ctxs
	x = v.run(s, toolCall(4, "sampler", `{}`), standard)
	assert.False(t, decodeTool(t, x.resp).IsError, "room again once the call ended")
	noLeftovers(t)
}

func TestDuplicateRequestIDInFlight(t *testing.T) {
	b := &book{in: make(chan struct{}, 2), ctxs: make(chan error, 2)}
	srv := newTestServer(t, b)
	v := &env{t: t, srv: srv, e: newEngine(t, srv), b: b}
	s := v.open("", capsAll)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan *mrtr.Response, 1)
	go func() { done <- s.Handle(ctx, parse(t, toolCall(1, "hold", `{}`)), newPipe()) }()
	<-b.in
	resp := s.Handle(context.Background(), parse(t, toolCall(1, "trio", `{}`)), newPipe())
	require.NotNil(t, resp.Error)
	assert.Equal(t, mrtr.CodeInvalidRequest, resp.Error.Code)
	cancel()
	assert.Nil(t, <-done)
	<-b.ctxs
}

// Without a capability declared at initialize, a question that needs it
// is refused: tools/call with an isError result, other methods with
// -32603 (never -32021, a code of 2026-07-28).
func TestCapabilityGate(t *testing.T) {
	v := newEnv(t, nil)
	s := v.open("", `{"elicitation":{}}`)
	x := v.run(s, toolCall(1, "sampler", `{}`), standard)
	assertLegacyResponse(t, x.resp)
	r := decodeTool(t, x.resp)
	assert.True(t, r.IsError)
	assert.Contains(t, r.Content[0].Text, "this session's client did not declare it at initialize")
	assert.Empty(t, x.requests(), "nothing was asked")

	x = v.run(s, `{"jsonrpc":"2.0","id":2,"method":"prompts/get","params":{"name":"psample"}}`, standard)
	assertLegacyResponse(t, x.resp)
	require.NotNil(t, x.resp.Error)
	assert.Equal(t, mrtr.CodeInternalError, x.resp.Error.Code)
	assert.Nil(t, x.resp.Error.Data, "the modern requiredCapabilities data goes too")

	// elicitation {} means form only: a url question is refused, a form
	// one asked.
	x = v.run(s, toolCall(3, "url", `{}`), standard)
	assert.True(t, decodeTool(t, x.resp).IsError)
	x = v.run(s, `{"jsonrpc":"2.0","id":4,"method":"prompts/get","params":{"name":"pwiz"}}`, standard)
	require.Nil(t, x.resp.Error)

	// roots not declared: the resource that asks for them fails.
	x = v.run(s, `{"jsonrpc":"2.0","id":5,"method":"resources/read","params":{"uri":"file:///wiz.txt"}}`, standard)
	require.NotNil(t, x.resp.Error)
	assert.Equal(t, mrtr.CodeInternalError, x.resp.Error.Code)

	// url only: a form question is refused, a url one carries its id.
	s2 := v.open("", `{"elicitation":{"url":{}}}`)
	x = v.run(s2, toolCall(6, "url", `{}`), standard)
	assert.Equal(t, "url accept", decodeTool(t, x.resp).Content[0].Text)
	require.Len(t, x.requests(), 1)
	p := x.requests()[0].Params
	assert.Regexp(t, regexp.MustCompile(`^\{"elicitationId":"[0-9a-f]{24}",`), string(p), "elicitationId first, the rest verbatim")
	assert.JSONEq(t, `"Open this"`, field(t, p, "message"))
	x = v.run(s2, `{"jsonrpc":"2.0","id":7,"method":"prompts/get","params":{"name":"pwiz"}}`, standard)
	require.NotNil(t, x.resp.Error)

	// Every capability bit reaches the modern request as declared.
	for caps, want := range map[string]string{
		`{}`:                                                 `{}`,
		`{"sampling":{},"roots":{}}`:                         `{"sampling":{},"roots":{}}`,
		`{"sampling":{"tools":{},"context":{}}}`:             `{"sampling":{"context":{},"tools":{}}}`,
		`{"sampling":{"tools":{}}}`:                          `{"sampling":{"tools":{}}}`,
		`{"sampling":{"context":{}}}`:                        `{"sampling":{"context":{}}}`,
		`{"elicitation":{"form":{},"url":{}}}`:               `{"elicitation":{"form":{},"url":{}}}`,
		`{"elicitation":{"form":{}}}`:                        `{"elicitation":{"form":{}}}`,
		`{"elicitation":{"form":null}}`:                      `{"elicitation":{"form":{}}}`,
		`{"roots":null,"sampling":null,"experimental":{}}`:   `{}`,
		`{"roots":{"listChanged":true},"elicitation":{}}`:    `{"elicitation":{"form":{}},"roots":{}}`,
		`{"sampling":{"tools":null},"elicitation":{"x":{}}}`: `{"sampling":{},"elicitation":{"form":{}}}`,
	} {
		s := v.open("", caps)
		x := v.run(s, toolCall(1, "report", `{}`), nil)
		text := decodeTool(t, x.resp).Content[0].Text
		i := strings.Index(text, "caps=")
		j := strings.Index(text, " extra=")
		require.True(t, i >= 0 && j > i, text)
		assert.JSONEq(t, want, text[i+5:j], caps)
	}
}

// The session's _meta for the modern server: the modern version, the
// capabilities and client info of initialize, the log level; of the
// client's own _meta its progress token and its unreserved keys.
func TestMetaMadeFromTheSession(t *testing.T) {
	v := newEnv(t, nil)
	s := v.open("", `{"sampling":{}}`)
	x := v.run(s, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"report","arguments":{},"_meta":{"progressToken":"p1","x.example/k":{"a":1},"traceparent":"00-1","dev.mcp/secret":1,"io.modelcontextprotocol/logLevel":"debug","io.modelcontextprotocol/clientCapabilities":{"roots":{}}}}}`, nil)
	text := decodeTool(t, x.resp).Content[0].Text
	assert.Equal(t, `version=2026-07-28 client=test-client level= progress="p1" caps={"sampling":{}} extra=traceparent="00-1";x.example/k={"a":1}`, text)
	progress := x.notifications("notifications/progress")
	require.Len(t, progress, 1)
	assert.JSONEq(t, `{"progressToken":"p1","progress":1,"message":"half"}`, string(progress[0].Params))
	assert.Empty(t, x.notifications("notifications/message"), "no log level set: no logs")

	r := s.Handle(context.Background(), parse(t, `{"jsonrpc":"2.0","id":2,"method":"logging/setLevel","params":{"level":"info"}}`), nil)
	require.Nil(t, r.Error)
	x = v.run(s, toolCall(3, "report", `{}`), nil)
	assert.Contains(t, decodeTool(t, x.resp).Content[0].Text, "level=info progress= ")
	logs := x.notifications("notifications/message")
	require.Len(t, logs, 1, "warning passes info, debug does not")
	assert.JSONEq(t, `{"level":"warning","logger":"report","data":"careful"}`, string(logs[0].Params))
	assert.Empty(t, x.notifications("notifications/progress"), "no token: no progress")
}

// Whatever the client puts in its params, the bridge alone supplies
// inputResponses and requestState: a client cannot answer a question it
// was not asked, nor replay a state.
func TestClientCannotInjectRoundMembers(t *testing.T) {
	v := newEnv(t, nil)
	s := v.open("", capsAll)
	x := v.run(s, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"trio","arguments":{},"inputResponses":{"early":{"action":"accept","content":{"name":"forged"}}},"requestState":"forged","task":{"ttl":1}}}`, standard)
	r := decodeTool(t, x.resp)
	assert.Equal(t, "s1:v-name|drafted|file:///home/u|accept", r.Content[0].Text)
	got := v.b.of("trio")
	require.NotEmpty(t, got)
	assert.Empty(t, got[0].keys, "the client's inputResponses never reach the handler")
	assert.Zero(t, got[0].round)

	// Params the bridge cannot restate are refused as params.
	resp := s.Handle(context.Background(), &mrtr.Message{ID: parse(t, toolCall(2, "trio", `{}`)).ID, Method: "tools/call", Params: json.RawMessage(`{"name":"trio","name":"trio"}`)}, newPipe())
	require.NotNil(t, resp.Error)
	assert.Equal(t, mrtr.CodeInvalidParams, resp.Error.Code)
}

// BUG: after as many rounds as the server allows, any -32603 from the
// server is taken for the round limit (bridge.go: "resp.Error.Code ==
// mrtr.CodeInternalError && round >= s.e.srv.MaxRounds()"). A handler
// that completes its last allowed round with a failure is reported to the
// client as "The call needed more than 3 rounds of input and was stopped",
// which it did not; a handler failing on an earlier round gets -32603
// "Internal error", as the modern client does.
func TestFailureOnTheLastRoundIsNoRoundLimit(t *testing.T) {
	v := newEnv(t, []mrtr.Option{mrtr.WithMaxRounds(3)})
	s := v.open("", capsAll)
	x := v.run(s, toolCall(1, "deep", `{"n":2,"fail":true}`), standard)
	require.NotNil(t, x.resp.Error, "%s", x.resp.Result)
	assert.Equal(t, mrtr.CodeInternalError, x.resp.Error.Code)

	x = v.run(s, toolCall(2, "deep", `{"n":3,"fail":true}`), standard)
	assert.NotContains(t, string(x.resp.Result), "more than 3 rounds", "a handler failure reported as the round limit")
	require.NotNil(t, x.resp.Error, "%s", x.resp.Result)
	assert.Equal(t, mrtr.CodeInternalError, x.resp.Error.Code)
}

// The modern request the bridge makes is not parsed again: the strict
// door still judges the client's arguments (the Server runs it on them),
// and params whose member names need escaping still go through
// ParseMessage, with the same answer as before.
func TestBridgeModernRequestStillJudged(t *testing.T) {
	v := newEnv(t, nil)
	s := v.open("alice", capsAll)

	x := v.run(s, toolCall(1, "trio", `{"a":1,"a":2}`), standard)
	require.NotNil(t, x.resp.Error, "arguments that repeat a member name are refused")
	assert.Equal(t, mrtr.CodeInvalidParams, x.resp.Error.Code)
	assert.Contains(t, x.resp.Error.Message, "Invalid arguments")
	assert.Empty(t, x.requests(), "nothing is asked of the client")

	x = v.run(s, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"trio","arguments":{},"odd\u0001name":1}}`, standard)
	require.NotNil(t, x.resp.Error, "a params member whose name strconv.Quote cannot write as JSON")
	assert.Equal(t, mrtr.CodeInvalidParams, x.resp.Error.Code)
	assert.True(t, strings.HasPrefix(x.resp.Error.Message, "Invalid params: "), x.resp.Error.Message)

	x = v.run(s, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"n\u0061me":"sampler","arguments":{},"x-\u00e9":1}}`, standard)
	require.Nil(t, x.resp.Error, "escaped and non-ASCII names are written and read back")
	assert.Equal(t, "sampled drafted", decodeTool(t, x.resp).Content[0].Text)
}
