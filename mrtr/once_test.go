package mrtr_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mrtrkit/mrtrkit/mrtr"
	"github.com/mrtrkit/mrtrkit/share"
)

// onceFixture registers the wizard as "wizard" with OnceOnly and as
// "other" without it.
func onceFixture(t *testing.T, opts ...mrtr.Option) (*fixture, *wizard) {
	f := newFixture(t, opts...)
	w := &wizard{}
	f.addTool("wizard", w.Handle, mrtr.OnceOnly())
	f.addTool("other", w.Handle)
	return f, w
}

func otherCall(token string, responses obj) obj {
	p := wizardCall(obj{}, token, responses)
	p["name"] = "other"
	return p
}

func TestOnceOnlyRefusesReplay(t *testing.T) {
	var calls []*mrtr.Call
	f, w := onceFixture(t, mrtr.WithInterceptors(func(ctx context.Context, c *mrtr.Call, next func(context.Context) *mrtr.Response) *mrtr.Response {
		r := next(ctx)
		calls = append(calls, c)
		return r
	}))
	_, tok := f.call("tools/call", wizardCall(obj{}, "", nil)).inputRequired(t)
	answer := obj{"step1": rawJSON(answerStep1)}
	f.call("tools/call", wizardCall(obj{}, tok, answer)).inputRequired(t)
	r := f.call("tools/call", wizardCall(obj{}, tok, answer))
	requireInvalidState(t, r, mrtr.ReasonReplayedRequestState)
	assert.Equal(t, 2, int(w.calls.Load()), "the handler does not see a replay")
	last := calls[len(calls)-1]
	assert.Equal(t, "state", last.Refusal)
	assert.Equal(t, "replayed", last.StateReason)
	assert.True(t, f.logHas("requestState refused", "reason=replayed"))
}

func TestOnceOnlyLeavesOtherToolsAlone(t *testing.T) {
	f, _ := onceFixture(t)
	p := otherCall("", nil)
	_, tok := f.call("tools/call", p).inputRequired(t)
	answer := obj{"step1": rawJSON(answerStep1)}
	f.call("tools/call", otherCall(tok, answer)).inputRequired(t)
	f.call("tools/call", otherCall(tok, answer)).inputRequired(t)
}

func TestOnceOnlyAcrossReplicas(t *testing.T) {
	bus := share.Local()
	a, _ := onceFixture(t, mrtr.WithShare(bus))
	b, _ := onceFixture(t, mrtr.WithShare(bus))
	_, tok := a.call("tools/call", wizardCall(obj{}, "", nil)).inputRequired(t)
	answer := obj{"step1": rawJSON(answerStep1)}
	a.call("tools/call", wizardCall(obj{}, tok, answer)).inputRequired(t)
	requireInvalidState(t, b.call("tools/call", wizardCall(obj{}, tok, answer)), mrtr.ReasonReplayedRequestState)
}

func TestOnceOnlyEscapedTokenIsTheSameToken(t *testing.T) {
	f, _ := onceFixture(t)
	_, tok := f.call("tools/call", wizardCall(obj{}, "", nil)).inputRequired(t)
	answer := obj{"step1": rawJSON(answerStep1)}
	f.call("tools/call", wizardCall(obj{}, tok, answer)).inputRequired(t)
	// The same token written with a JSON escape is still a replay.
	escaped := `"\u00` + string("0123456789abcdef"[tok[0]>>4]) + string("0123456789abcdef"[tok[0]&15]) + tok[1:] + `"`
	p := wizardCall(obj{}, "", answer)
	p["requestState"] = rawJSON(escaped)
	requireInvalidState(t, f.call("tools/call", p), mrtr.ReasonReplayedRequestState)
}

// downBus is a shared store that cannot be reached.
type downBus struct{}

var errDown = errors.New("connection refused")

func (downBus) Publish(context.Context, string, []byte) error { return errDown }
func (downBus) Subscribe(string, func([]byte)) (func(), error) {
	return func() {}, nil
}
func (downBus) Claim(context.Context, string, time.Duration) (bool, error) { return false, errDown }
func (downBus) Put(context.Context, string, []byte, time.Duration) error   { return errDown }
func (downBus) Get(context.Context, string) ([]byte, bool, error)          { return nil, false, errDown }

func TestOnceOnlyFailsClosed(t *testing.T) {
	var last *mrtr.Call
	f, w := onceFixture(t, mrtr.WithShare(downBus{}), mrtr.WithInterceptors(func(ctx context.Context, c *mrtr.Call, next func(context.Context) *mrtr.Response) *mrtr.Response {
		r := next(ctx)
		last = c
		return r
	}))
	_, tok := f.call("tools/call", wizardCall(obj{}, "", nil)).inputRequired(t)
	answer := obj{"step1": rawJSON(answerStep1)}
	e := f.call("tools/call", wizardCall(obj{}, tok, answer)).fail(t, mrtr.CodeInternalError)
	assert.Contains(t, e.Message, "single-use check")
	assert.Equal(t, "store_unavailable", last.StateReason)
	assert.Equal(t, 1, int(w.calls.Load()))
	// A tool without OnceOnly is served.
	_, tok = f.call("tools/call", otherCall("", nil)).inputRequired(t)
	f.call("tools/call", otherCall(tok, answer)).inputRequired(t)
	require.True(t, f.logHas("single-use check"))
}
