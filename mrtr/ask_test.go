package mrtr_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mrtrkit/mrtrkit/mrtr"
	"github.com/mrtrkit/mrtrkit/mrtr/mrtrtest"
)

// nameForm is a one-field form question.
func whoForm(msg string) *mrtr.ElicitRequest {
	return &mrtr.ElicitRequest{Message: msg, RequestedSchema: &mrtr.ElicitSchema{Type: "object",
		Properties: map[string]json.RawMessage{"name": json.RawMessage(`{"type":"string"}`)}, Required: []string{"name"}}}
}

// threeRounds asks a form, then the model, then the roots, each question
// depending on the one before, and counts its runs.
func threeRounds(runs *atomic.Int32) mrtr.HandlerFunc {
	return func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
		runs.Add(1)
		who, err := mrtr.Elicit(ctx, req, "who", whoForm("Who are you?"))
		if err != nil {
			return nil, err
		}
		if !who.Accepted() {
			return mrtr.TextResult("declined"), nil
		}
		name := who.Content["name"].(string)
		poem, err := mrtr.Sample(ctx, req, "poem", &mrtr.SamplingRequest{Messages: []mrtr.SamplingMessage{mrtr.UserText("A poem for " + name)}, MaxTokens: 50})
		if err != nil {
			return nil, err
		}
		roots, err := mrtr.ListRoots(ctx, req, "roots")
		if err != nil {
			return nil, err
		}
		return mrtr.TextResult(fmt.Sprintf("%s: %s (%d roots)", name, poem.Text(), len(roots.Roots))), nil
	}
}

func answeringClient(srv *mrtr.Server, opts ...mrtrtest.Option) *mrtrtest.Client {
	base := []mrtrtest.Option{
		mrtrtest.OnElicitation(func(_ context.Context, q *mrtr.ElicitRequest) (*mrtr.ElicitResult, error) {
			return &mrtr.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}}, nil
		}),
		mrtrtest.OnSampling(func(_ context.Context, q *mrtr.SamplingRequest) (*mrtr.SamplingResult, error) {
			return &mrtr.SamplingResult{Role: mrtr.RoleAssistant, Model: "m", Content: []mrtr.SamplingContent{{Type: "text", Text: "roses"}}}, nil
		}),
		mrtrtest.WithRoots(mrtr.Root{URI: "file:///a"}, mrtr.Root{URI: "file:///b"}),
	}
	return mrtrtest.NewClient(srv, append(base, opts...)...)
}

func TestStraightLineThreeRounds(t *testing.T) {
	f := newFixture(t)
	var runs atomic.Int32
	f.addTool("three", threeRounds(&runs))
	res, err := answeringClient(f.srv).CallTool(context.Background(), "three", nil)
	require.NoError(t, err)
	require.Equal(t, "Ada: roses (2 roots)", res.Text())
	require.Equal(t, 3, res.Rounds)
	require.Equal(t, [][]string{{"who"}, {"poem"}, {"roots"}}, res.Asked)
	require.EqualValues(t, 4, runs.Load())
}

// CallID and CallStart are drawn on a call's first run and are the same on
// every later run of that call; another call draws its own.
func TestCallIDIsStableWithinACall(t *testing.T) {
	f := newFixture(t)
	var mu sync.Mutex
	seen := map[string][]string{} // the name answered → the CallIDs its runs saw
	starts := map[string][]int64{}
	f.addTool("id", func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
		id, start := mrtr.CallID(req), mrtr.CallStart(req).UnixMilli()
		who, err := mrtr.Elicit(ctx, req, "who", whoForm("Who?"))
		name := "?"
		if err == nil {
			name = fmt.Sprint(who.Content["name"])
		}
		mu.Lock()
		seen[name] = append(seen[name], fmt.Sprintf("%x", id))
		starts[name] = append(starts[name], start)
		mu.Unlock()
		if err != nil {
			return nil, err
		}
		return mrtr.TextResult(name), nil
	})
	for _, name := range []string{"Ada", "Bob"} {
		_, st := f.call("tools/call", toolCall("id", capsEverything, "", nil)).inputRequired(t)
		mu.Lock()
		first := seen["?"][len(seen["?"])-1]
		firstStart := starts["?"][len(starts["?"])-1]
		mu.Unlock()
		f.call("tools/call", toolCall("id", capsEverything, st, obj{"who": accepted(name)})).complete(t)
		f.call("tools/call", toolCall("id", capsEverything, st, obj{"who": accepted(name)})).complete(t) // the same state again
		require.Equal(t, []string{first, first}, seen[name], "every run of a call sees the CallID of its first run")
		require.Equal(t, []int64{firstStart, firstStart}, starts[name])
	}
	require.Len(t, seen["?"], 2)
	require.NotEqual(t, seen["?"][0], seen["?"][1], "two calls draw two CallIDs")
	require.NotEqual(t, strings.Repeat("0", 32), seen["?"][0])
}

// A goroutine the handler leaves running that asks, memoises or reads the
// CallID after the handler returned gets an error and a zero CallID, and
// touches nothing of the call that is being served meanwhile (runs are
// pooled: the next call may be handed the same one).
func TestAskAfterTheHandlerReturned(t *testing.T) {
	f := newFixture(t)
	late, lateDone := make(chan struct{}), make(chan []error, 1)
	f.addTool("leak", func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
		_, err := mrtr.Elicit(ctx, req, "who", whoForm("Who?"))
		go func() {
			<-late
			_, e1 := mrtr.Elicit(ctx, req, "late", whoForm("Late?"))
			_, e2 := mrtr.Memo(ctx, req, "late-memo", func(context.Context) (int, error) { return 1, nil })
			var e3 error
			if id := mrtr.CallID(req); id != [16]byte{} {
				e3 = fmt.Errorf("CallID %x after the call ended", id)
			}
			lateDone <- []error{e1, e2, e3}
		}()
		return nil, err
	})
	inB, goB := make(chan struct{}), make(chan struct{})
	f.addTool("hold", func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
		_, err := mrtr.Elicit(ctx, req, "who2", whoForm("Who else?"))
		close(inB)
		<-goB
		return nil, err
	})
	f.call("tools/call", toolCall("leak", capsElicit, "", nil)).inputRequired(t)

	msg, _, perr := mrtr.ParseMessage([]byte(request("tools/call", toolCall("hold", capsElicit, "", nil))))
	require.Nil(t, perr)
	respB := make(chan *mrtr.Response, 1)
	go func() { respB <- f.srv.Handle(context.Background(), &mrtr.Inbound{Message: msg}) }()
	<-inB // call B holds a run while the leaked goroutine asks
	close(late)
	errs := <-lateDone
	close(goB)
	res, _ := decodeResponse(t, <-respB).inputRequired(t)
	require.Equal(t, []string{"who2"}, slices.Sorted(maps.Keys(res["inputRequests"].(obj))), "call B asks only its own question")
	require.ErrorContains(t, errs[0], "the call has ended")
	require.ErrorContains(t, errs[1], "the call has ended")
	require.NoError(t, errs[2])

	// A call whose handler never asked ends just as well.
	late2, late2Done := make(chan struct{}), make(chan []error, 1)
	f.addTool("quiet", func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
		go func() {
			<-late2
			var e1 error
			if id := mrtr.CallID(req); id != [16]byte{} || !mrtr.CallStart(req).IsZero() {
				e1 = fmt.Errorf("CallID %x after the call ended", id)
			}
			_, e2 := mrtr.Elicit(ctx, req, "late", whoForm("Late?"))
			late2Done <- []error{e1, e2}
		}()
		return mrtr.TextResult("done"), nil
	})
	f.call("tools/call", toolCall("quiet", capsElicit, "", nil)).complete(t)
	close(late2)
	errs = <-late2Done
	require.NoError(t, errs[0])
	require.ErrorContains(t, errs[1], "the call has ended")
}

// An unknown tool or prompt names the nearest ones the caller sees, and
// never one hidden from it.
func TestUnknownNamesSuggestNearest(t *testing.T) {
	f := newFixture(t, mrtr.WithVisibility(func(principal string, _ *mrtr.TokenInfo, kind, name string) bool {
		return name != "admin_add"
	}))
	for _, n := range []string{"add", "adder", "admin_add", "greet"} {
		f.addTool(n, func(context.Context, *mrtr.Request) (mrtr.Result, error) { return mrtr.TextResult("ok"), nil })
	}
	_, err := mrtrtest.NewClient(f.srv).CallTool(context.Background(), "ad", nil)
	var me *mrtr.Error
	require.ErrorAs(t, err, &me)
	require.Equal(t, `Unknown tool: ad (did you mean add?)`, me.Message)
	_, err = mrtrtest.NewClient(f.srv).CallTool(context.Background(), "admin_ad", nil)
	require.ErrorAs(t, err, &me)
	require.NotContains(t, me.Message, "admin_add", "a hidden tool is never suggested")
}

// toolCall is the params of a tools/call of name with the given
// capabilities, state and answers.
func toolCall(name string, caps obj, state string, answers obj) obj {
	p := obj{"name": name, "arguments": obj{}, "_meta": meta(caps)}
	if state != "" {
		p["requestState"] = state
	}
	if answers != nil {
		p["inputResponses"] = answers
	}
	return p
}

func accepted(name string) obj { return obj{"action": "accept", "content": obj{"name": name}} }

var sampled = obj{"role": "assistant", "model": "m", "content": obj{"type": "text", "text": "roses"}}

// Independent questions asked together go out in one round, and a run
// that has every answer completes.
func TestStraightLineSeveralQuestionsInOneRound(t *testing.T) {
	f := newFixture(t)
	var runs atomic.Int32
	f.addTool("both", func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
		runs.Add(1)
		who, err1 := mrtr.Elicit(ctx, req, "who", whoForm("Who?"))
		roots, err2 := mrtr.ListRoots(ctx, req, "roots")
		if err := mrtr.Check(err1, err2); err != nil {
			return nil, err
		}
		return mrtr.TextResult(fmt.Sprintf("%v %d", who.Content["name"], len(roots.Roots))), nil
	})
	res, err := answeringClient(f.srv).CallTool(context.Background(), "both", nil)
	require.NoError(t, err)
	require.Equal(t, "Ada 2", res.Text())
	require.Equal(t, [][]string{{"roots", "who"}}, res.Asked)
	require.EqualValues(t, 2, runs.Load(), "one run per round")
}

func TestCheck(t *testing.T) {
	boom := errors.New("boom")
	require.NoError(t, mrtr.Check(nil, nil))
	require.ErrorIs(t, mrtr.Check(nil, mrtr.ErrInputRequired), mrtr.ErrInputRequired)
	require.Equal(t, boom, mrtr.Check(mrtr.ErrInputRequired, boom, nil), "a real error wins over a pending question")
	require.ErrorIs(t, mrtr.Check(fmt.Errorf("asking: %w", mrtr.ErrInputRequired)), mrtr.ErrInputRequired)
	require.Equal(t, "file/3/a", mrtr.Key("file", 3, "a"))
}

// A memo is computed once per call, whatever the number of rounds, and
// its value is the same on every run; a memo that asks runs until its
// questions are answered, and after that the answers it used are not
// needed again.
func TestStraightLineMemo(t *testing.T) {
	f := newFixture(t)
	var computed, picked atomic.Int32
	f.addTool("memo", func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
		n, err := mrtr.Memo(ctx, req, "n", func(context.Context) (int32, error) { return computed.Add(1) * 100, nil })
		if err != nil {
			return nil, err
		}
		name, err := mrtr.Memo(ctx, req, "name", func(ctx context.Context) (string, error) {
			who, err := mrtr.Elicit(ctx, req, "who", whoForm("Who?"))
			if err != nil {
				return "", err
			}
			picked.Add(1)
			return strings.ToUpper(who.Content["name"].(string)), nil
		})
		if err != nil {
			return nil, err
		}
		poem, err := mrtr.Sample(ctx, req, "poem", &mrtr.SamplingRequest{Messages: []mrtr.SamplingMessage{mrtr.UserText("for " + name)}, MaxTokens: 9})
		if err != nil {
			return nil, err
		}
		if _, err := mrtr.ListRoots(ctx, req, "roots"); err != nil {
			return nil, err
		}
		return mrtr.TextResult(fmt.Sprintf("%d %s %s", n, name, poem.Text())), nil
	})
	res, err := answeringClient(f.srv).CallTool(context.Background(), "memo", nil)
	require.NoError(t, err)
	require.Equal(t, "100 ADA roses", res.Text())
	require.Equal(t, [][]string{{"who"}, {"poem"}, {"roots"}}, res.Asked)
	require.EqualValues(t, 1, computed.Load(), "computed on the first run only")
	require.EqualValues(t, 1, picked.Load(), "the memo's body completed once")
}

// The sealed state cannot be altered: a changed byte is refused before
// the handler runs, as any requestState.
func TestStraightLineStateIsSealed(t *testing.T) {
	f := newFixture(t)
	var runs atomic.Int32
	f.addTool("three", threeRounds(&runs))
	_, st := f.call("tools/call", toolCall("three", capsEverything, "", nil)).inputRequired(t)
	_, st = f.call("tools/call", toolCall("three", capsEverything, st, obj{"who": accepted("Ada")})).inputRequired(t)
	before := runs.Load()
	for i := 0; i < len(st); i += 7 {
		b := []byte(st)
		b[i] ^= 0x01
		if b[i] == '=' || b[i] > 'z' {
			continue
		}
		e := f.call("tools/call", toolCall("three", capsEverything, string(b), obj{"poem": sampled})).fail(t, mrtr.CodeInvalidParams)
		require.Contains(t, e.Message, "requestState")
	}
	require.Equal(t, before, runs.Load(), "the handler never ran on an altered state")
}

// A memo or an answer that makes the state exceed the size cap ends the
// call with a clear reason; the log names the largest entries.
func TestStraightLineStateTooLarge(t *testing.T) {
	f := newFixture(t)
	f.addTool("big", func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
		blob, err := mrtr.Memo(ctx, req, "blob", func(context.Context) (string, error) { return strings.Repeat("x", 20000), nil })
		if err != nil {
			return nil, err
		}
		if _, err := mrtr.ListRoots(ctx, req, "roots"); err != nil {
			return nil, err
		}
		return mrtr.TextResult(fmt.Sprint(len(blob))), nil
	})
	e := f.call("tools/call", toolCall("big", capsRoots, "", nil)).fail(t, mrtr.CodeInternalError)
	require.JSONEq(t, `{"reason":"state_too_large"}`, string(e.Data))
	require.True(t, f.logHas("sealed state is too large", `memo \"blob\" 20002 bytes`), f.logs.String())
}

// A retry that does not fit the path the handler now takes is refused
// with the requestState error, never answered with a wrong answer.
func TestStraightLineDivergenceIsRefused(t *testing.T) {
	f := newFixture(t)
	var askOther atomic.Bool
	f.addTool("fork", func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
		key := "a"
		if askOther.Load() {
			key = "b" // as if decided by the clock or a read
		}
		who, err := mrtr.Elicit(ctx, req, key, whoForm("Who?"))
		if err != nil {
			return nil, err
		}
		if _, err := mrtr.ListRoots(ctx, req, "roots"); err != nil {
			return nil, err
		}
		return mrtr.TextResult(fmt.Sprint(who.Content["name"])), nil
	})
	_, st := f.call("tools/call", toolCall("fork", capsEverything, "", nil)).inputRequired(t)
	_, st = f.call("tools/call", toolCall("fork", capsEverything, st, obj{"a": accepted("Ada")})).inputRequired(t)
	askOther.Store(true)
	e := f.call("tools/call", toolCall("fork", capsEverything, st, obj{"roots": obj{"roots": []obj{}}})).fail(t, mrtr.CodeInvalidParams)
	require.Contains(t, e.Message, "the tool's questions changed since this call began")
	require.JSONEq(t, `{"reason":"invalid_request_state"}`, string(e.Data))
	require.True(t, f.logHas("replay diverged", "reason=diverged", `\"a\" (answered in round 2) was not asked`), f.logs.String())

	// The same key asked as another kind.
	g := newFixture(t)
	var asRoots atomic.Bool
	g.addTool("kind", func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
		if asRoots.Load() {
			if _, err := mrtr.ListRoots(ctx, req, "q"); err != nil {
				return nil, err
			}
		} else if _, err := mrtr.Elicit(ctx, req, "q", whoForm("Who?")); err != nil {
			return nil, err
		}
		return mrtr.TextResult("done"), nil
	})
	_, st = g.call("tools/call", toolCall("kind", capsEverything, "", nil)).inputRequired(t)
	asRoots.Store(true)
	g.call("tools/call", toolCall("kind", capsEverything, st, obj{"q": accepted("Ada")})).fail(t, mrtr.CodeInvalidParams)
	require.True(t, g.logHas("replay diverged", "was asked as form elicitation and is now asked as roots"), g.logs.String())

	// A retry whose run asks nothing at all: the answered question is
	// not asked, so the answer the journal holds decided nothing.
	h := newFixture(t)
	var skip atomic.Bool
	h.addTool("skip", func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
		if skip.Load() {
			return mrtr.TextResult("done"), nil
		}
		if _, err := mrtr.Elicit(ctx, req, "a", whoForm("Who?")); err != nil {
			return nil, err
		}
		if _, err := mrtr.ListRoots(ctx, req, "roots"); err != nil {
			return nil, err
		}
		return mrtr.TextResult("done"), nil
	})
	_, st = h.call("tools/call", toolCall("skip", capsEverything, "", nil)).inputRequired(t)
	_, st = h.call("tools/call", toolCall("skip", capsEverything, st, obj{"a": accepted("Ada")})).inputRequired(t)
	skip.Store(true)
	h.call("tools/call", toolCall("skip", capsEverything, st, obj{"roots": obj{"roots": []obj{}}})).fail(t, mrtr.CodeInvalidParams)
	require.True(t, h.logHas("replay diverged", `\"a\" (answered in round 2) was not asked`), h.logs.String())
}

// A question that changes between rounds is asked again once (the user
// answered another question); one that changes on every round is
// refused as unstable.
func TestStraightLineChangingQuestion(t *testing.T) {
	f := newFixture(t)
	var version atomic.Int32
	f.addTool("clock", func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
		who, err := mrtr.Elicit(ctx, req, "who", whoForm(fmt.Sprintf("Who? (v%d)", version.Load())))
		if err != nil {
			return nil, err
		}
		return mrtr.TextResult(fmt.Sprint(who.Content["name"])), nil
	})
	res, st := f.call("tools/call", toolCall("clock", capsEverything, "", nil)).inputRequired(t)
	require.Contains(t, fmt.Sprint(res["inputRequests"]), "Who? (v0)")
	version.Store(1)
	res, st = f.call("tools/call", toolCall("clock", capsEverything, st, obj{"who": accepted("Ada")})).inputRequired(t)
	require.Contains(t, fmt.Sprint(res["inputRequests"]), "Who? (v1)", "asked again: the answer was to another question")
	// Answered against the question now shown: accepted.
	out := f.call("tools/call", toolCall("clock", capsEverything, st, obj{"who": accepted("Bob")})).complete(t)
	require.Contains(t, fmt.Sprint(out["content"]), "Bob")
	// Changing again on the next round as well: unstable.
	version.Store(2)
	f.call("tools/call", toolCall("clock", capsEverything, st, obj{"who": accepted("Eve")})).fail(t, mrtr.CodeInvalidParams)
	require.True(t, f.logHas("replay diverged", "question_unstable"), f.logs.String())
}

// The mistakes a handler can make with asks are server bugs: -32603 and
// a log line saying what went wrong.
func TestStraightLineMisuse(t *testing.T) {
	f := newFixture(t)
	f.addTool("dropped", func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
		_, _ = mrtr.Elicit(ctx, req, "who", whoForm("Who?")) // the error is dropped
		return mrtr.TextResult("done"), nil
	})
	f.addTool("mixed", func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
		if _, err := mrtr.Elicit(ctx, req, "who", whoForm("Who?")); err != nil {
			return mrtr.Ask("other", &mrtr.RootsRequest{}), nil
		}
		return mrtr.TextResult("done"), nil
	})
	f.addTool("twice", func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
		_, err1 := mrtr.Elicit(ctx, req, "who", whoForm("Who?"))
		_, err2 := mrtr.Elicit(ctx, req, "who", whoForm("Who else?"))
		return nil, mrtr.Check(err1, err2)
	})
	f.addTool("reserved", func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
		_, err := mrtr.Elicit(ctx, req, "mrtr.journal", whoForm("Who?"))
		return nil, err
	})
	f.call("tools/call", toolCall("dropped", capsEverything, "", nil)).fail(t, mrtr.CodeInternalError)
	require.True(t, f.logHas("handler completed while a question was unanswered"), f.logs.String())
	f.call("tools/call", toolCall("mixed", capsEverything, "", nil)).fail(t, mrtr.CodeInternalError)
	require.True(t, f.logHas("use one style"), f.logs.String())
	f.call("tools/call", toolCall("twice", capsEverything, "", nil)).fail(t, mrtr.CodeInvalidParams)
	require.True(t, f.logHas("duplicate_key", `asked twice in one run with different questions`), f.logs.String())
	f.call("tools/call", toolCall("reserved", capsEverything, "", nil)).fail(t, mrtr.CodeInternalError)
}

// An ask the client cannot answer returns -32021 at once, so that the
// handler may go on without it.
func TestStraightLineMissingCapability(t *testing.T) {
	f := newFixture(t)
	f.addTool("fallback", func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
		poem, err := mrtr.Sample(ctx, req, "poem", &mrtr.SamplingRequest{Messages: []mrtr.SamplingMessage{mrtr.UserText("x")}, MaxTokens: 9})
		var me *mrtr.Error
		if errors.As(err, &me) && me.Code == mrtr.CodeMissingCapability {
			return mrtr.TextResult("no model: plain text"), nil
		}
		if err != nil {
			return nil, err
		}
		return mrtr.TextResult(poem.Text()), nil
	})
	f.addTool("strict", func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
		_, err := mrtr.ListRoots(ctx, req, "roots")
		return nil, err
	})
	out := f.call("tools/call", toolCall("fallback", capsNone, "", nil)).complete(t)
	require.Contains(t, fmt.Sprint(out["content"]), "no model")
	f.call("tools/call", toolCall("strict", capsNone, "", nil)).fail(t, mrtr.CodeMissingCapability)
}

// A server-side model answers inline: a call whose questions it answers
// completes in one round, and its answer is recorded so that a later
// round neither calls it again nor gets another answer.
func TestStraightLineInlineModel(t *testing.T) {
	f := newFixture(t)
	var calls atomic.Int32
	serverModel := func(_ context.Context, q *mrtr.SamplingRequest) (*mrtr.SamplingResult, error) {
		n := calls.Add(1)
		return &mrtr.SamplingResult{Role: mrtr.RoleAssistant, Model: "server", Content: []mrtr.SamplingContent{{Type: "text", Text: fmt.Sprintf("answer %d", n)}}}, nil
	}
	f.addTool("inline", func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
		a, err := mrtr.Sample(ctx, req, "plan", &mrtr.SamplingRequest{Messages: []mrtr.SamplingMessage{mrtr.UserText("plan")}, MaxTokens: 9}, mrtr.AnswerWith(serverModel))
		if err != nil {
			return nil, err
		}
		if req.Principal != "" { // a caller that must also confirm
			if _, err := mrtr.Elicit(ctx, req, "ok", whoForm("OK? "+a.Text())); err != nil {
				return nil, err
			}
		}
		return mrtr.TextResult(a.Text()), nil
	})
	out := f.call("tools/call", toolCall("inline", capsNone, "", nil)).complete(t)
	require.Contains(t, fmt.Sprint(out["content"]), "answer 1")
	require.EqualValues(t, 1, calls.Load())

	asAda := func(in *mrtr.Inbound) { in.Principal = "ada" }
	_, st := f.call("tools/call", toolCall("inline", capsEverything, "", nil), asAda).inputRequired(t)
	require.EqualValues(t, 2, calls.Load())
	out = f.call("tools/call", toolCall("inline", capsEverything, st, obj{"ok": accepted("yes")}), asAda).complete(t)
	require.Contains(t, fmt.Sprint(out["content"]), "answer 2", "the recorded answer, not a new one")
	require.EqualValues(t, 2, calls.Load(), "the model is not called again on the retry")
}

// A memo that asks and another question go out in one round; once the
// memo completes, the other answer stays recorded and is not asked again.
func TestStraightLineMemoAndQuestionInOneRound(t *testing.T) {
	f := newFixture(t)
	var asked atomic.Int32
	f.addTool("both", func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
		name, err1 := mrtr.Memo(ctx, req, "name", func(ctx context.Context) (string, error) {
			who, err := mrtr.Elicit(ctx, req, "who", whoForm("Who?"))
			if err != nil {
				return "", err
			}
			return who.Content["name"].(string), nil
		})
		roots, err2 := mrtr.ListRoots(ctx, req, "roots")
		if err := mrtr.Check(err1, err2); err != nil {
			return nil, err
		}
		if _, err := mrtr.Sample(ctx, req, "poem", &mrtr.SamplingRequest{Messages: []mrtr.SamplingMessage{mrtr.UserText("for " + name)}, MaxTokens: 9}); err != nil {
			return nil, err
		}
		asked.Add(1)
		return mrtr.TextResult(fmt.Sprint(name, len(roots.Roots))), nil
	})
	res, err := answeringClient(f.srv).CallTool(context.Background(), "both", nil)
	require.NoError(t, err)
	require.Equal(t, "Ada2", res.Text())
	require.Equal(t, [][]string{{"roots", "who"}, {"poem"}}, res.Asked, "the roots are not asked again")
}

// The quick capability check agrees with the gate for every kind of
// question and every declaration.
func TestCapableAgreesWithTheGate(t *testing.T) {
	qs := []mrtr.InputRequest{
		whoForm("x"),
		&mrtr.ElicitRequest{Mode: "url", Message: "x", URL: "https://example.com"},
		&mrtr.RootsRequest{},
		&mrtr.SamplingRequest{Messages: []mrtr.SamplingMessage{mrtr.UserText("x")}, MaxTokens: 1},
		&mrtr.SamplingRequest{Messages: []mrtr.SamplingMessage{mrtr.UserText("x")}, MaxTokens: 1, IncludeContext: "thisServer"},
		&mrtr.SamplingRequest{Messages: []mrtr.SamplingMessage{mrtr.UserText("x")}, MaxTokens: 1, ToolChoice: &mrtr.ToolChoice{Mode: "auto"}},
	}
	capsList := []obj{capsNone, capsElicit, capsSampling, capsRoots, capsEverything, {"elicitation": obj{"url": obj{}}}, {"sampling": obj{"tools": obj{}}}}
	for _, caps := range capsList {
		for i, q := range qs {
			f := newFixture(t)
			f.addTool("q", func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
				var err error
				switch v := q.(type) {
				case *mrtr.ElicitRequest:
					_, err = mrtr.Elicit(ctx, req, "q", v)
				case *mrtr.SamplingRequest:
					_, err = mrtr.Sample(ctx, req, "q", v)
				default:
					_, err = mrtr.ListRoots(ctx, req, "q")
				}
				return nil, err
			})
			g := newFixture(t)
			g.addTool("q", func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
				return mrtr.Ask("q", q), nil
			})
			a := f.call("tools/call", toolCall("q", caps, "", nil))
			b := g.call("tools/call", toolCall("q", caps, "", nil))
			require.Equal(t, b.Error == nil, a.Error == nil, "question %d, caps %v: %s vs %s", i, caps, a.Raw, b.Raw)
			if a.Error != nil {
				require.Equal(t, b.Error.Code, a.Error.Code)
				require.JSONEq(t, string(b.Error.Data), string(a.Error.Data), "question %d, caps %v", i, caps)
			}
		}
	}
}
