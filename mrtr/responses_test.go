package mrtr_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mrtrkit/mrtrkit/mrtr"
)

// asker asks every kind at round 0 and records what round 1 receives.
type asker struct {
	calls atomic.Int32
	last  *mrtr.Request
}

func (a *asker) Handle(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
	a.calls.Add(1)
	if req.Round == 0 && req.Responses.Len() == 0 {
		return &mrtr.InputRequired{Requests: map[string]mrtr.InputRequest{
			"s": simpleSampling("hi"),
			"f": nameForm("name?"),
			"u": &mrtr.ElicitRequest{Mode: "url", Message: "Sign in", URL: "https://example.com/login"},
			"r": &mrtr.RootsRequest{},
		}}, nil
	}
	a.last = req
	return mrtr.TextResult("done"), nil
}

// askerToken returns a fixture whose tool "ask" is served by an asker, and
// a round-1 token asking s (sampling), f (form), u (url) and r (roots).
func askerToken(t *testing.T) (*fixture, *asker, string) {
	f := newFixture(t)
	a := &asker{}
	require.NoError(t, f.srv.AddTool(mrtr.Tool{Name: "ask"}, a))
	res, tok := f.call("tools/call", obj{"name": "ask"}).inputRequired(t)
	assert.Equal(t, []string{"f", "r", "s", "u"}, keysOf(res["inputRequests"]))
	assert.Equal(t, obj{"method": "roots/list", "params": obj{}}, res["inputRequests"].(map[string]any)["r"])
	assert.Equal(t, obj{"method": "elicitation/create", "params": obj{"mode": "url", "message": "Sign in", "url": "https://example.com/login"}},
		res["inputRequests"].(map[string]any)["u"])
	return f, a, tok
}

func TestInputResponsesDecodedByKind(t *testing.T) {
	f, a, tok := askerToken(t)
	f.call("tools/call", obj{"name": "ask", "requestState": tok, "inputResponses": obj{
		"s": rawJSON(`{"role":"assistant","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}],"model":"m"}`),
		"f": rawJSON(`{"action":"accept","content":{"name":"Ada","age":36,"ok":true,"tags":["x","y"]}}`),
		"u": rawJSON(`{"action":"accept","content":{"ignored":"because url mode has no content"}}`),
		"r": rawJSON(`{"roots":[{"uri":"file:///home/ada","name":"home"}]}`),
	}}).complete(t)
	require.NotNil(t, a.last)
	assert.Equal(t, []string{"f", "r", "s", "u"}, a.last.Asked(), "the keys the sealed state recorded")
	resp := a.last.Responses
	assert.Equal(t, []string{"f", "r", "s", "u"}, resp.Keys())
	assert.Equal(t, 4, resp.Len())

	s, ok := resp.Sampling("s")
	require.True(t, ok)
	assert.Equal(t, "ab", s.Text())
	assert.Equal(t, mrtr.RoleAssistant, s.Role)
	assert.Equal(t, "m", s.Model)

	form, ok := resp.Elicitation("f")
	require.True(t, ok)
	assert.True(t, form.Accepted())
	assert.Equal(t, map[string]any{"name": "Ada", "age": float64(36), "ok": true, "tags": []any{"x", "y"}}, form.Content)
	// The form as the client sent it, for decoding into a struct.
	assert.Equal(t, `{"name":"Ada","age":36,"ok":true,"tags":["x","y"]}`, string(form.ContentJSON()))
	var typed struct {
		Name string
		Age  int
	}
	require.NoError(t, json.Unmarshal(form.ContentJSON(), &typed))
	assert.Equal(t, "Ada", typed.Name)
	assert.Equal(t, 36, typed.Age)

	url, ok := resp.Elicitation("u")
	require.True(t, ok)
	assert.True(t, url.Accepted())
	assert.Nil(t, url.Content)
	assert.Nil(t, url.ContentJSON())

	roots, ok := resp.Roots("r")
	require.True(t, ok)
	assert.Equal(t, []mrtr.Root{{URI: "file:///home/ada", Name: "home"}}, roots.Roots)

	// Lookups by the wrong kind find nothing.
	_, ok = resp.Sampling("f")
	assert.False(t, ok)
	_, ok = resp.Roots("s")
	assert.False(t, ok)
}

func TestInputResponsesToKeysNotAskedAreIgnored(t *testing.T) {
	f, a, tok := askerToken(t)
	f.call("tools/call", obj{"name": "ask", "requestState": tok, "inputResponses": obj{
		"f":     rawJSON(`{"action":"decline","content":{"name":"dropped on decline"}}`),
		"extra": rawJSON(`{"action":"accept","content":{"x":1}}`),
		"bogus": rawJSON(`12345`),
		"s":     nil, // null: not answered
	}}).complete(t)
	assert.Equal(t, []string{"f"}, a.last.Responses.Keys())
	form, _ := a.last.Responses.Elicitation("f")
	assert.Equal(t, mrtr.Declined, form.Action)
	assert.Nil(t, form.Content)
	assert.Nil(t, form.ContentJSON())
	assert.True(t, f.logHas("ignored input responses", "count=3"))
}

func TestInputResponsesWithoutStateAreIgnored(t *testing.T) {
	f, a, _ := askerToken(t)
	a.calls.Store(0)
	// With no requestState, nothing was asked: the handler starts over.
	_, _ = f.call("tools/call", obj{"name": "ask", "inputResponses": obj{"f": rawJSON(`{"action":"accept"}`)}}).inputRequired(t)
	assert.EqualValues(t, 1, a.calls.Load())
}

func TestMalformedInputResponses(t *testing.T) {
	tests := []struct {
		name   string
		key    string
		answer string
	}{
		{"elicitation number", "f", `12345`},
		{"elicitation string", "f", `"accept"`},
		{"elicitation array", "f", `[]`},
		{"elicitation unknown action", "f", `{"action":"maybe"}`},
		{"elicitation without action", "f", `{}`},
		{"elicitation object value", "f", `{"action":"accept","content":{"a":{"b":1}}}`},
		{"elicitation null value", "f", `{"action":"accept","content":{"a":null}}`},
		{"elicitation mixed array", "f", `{"action":"accept","content":{"a":["x",1]}}`},
		{"elicitation content not an object", "f", `{"action":"accept","content":"x"}`},
		{"elicitation content with case-variant names", "f", `{"action":"accept","content":{"name":"Ada","NAME":"Eve"}}`},
		{"elicitation content with folded names", "f", `{"action":"accept","content":{"s":"a","\u017f":"b"}}`},
		{"elicitation content with an inexact number", "f", `{"action":"accept","content":{"age":9007199254740993}}`},
		{"elicitation content with a lone surrogate", "f", `{"action":"accept","content":{"name":"\ud800"}}`},
		{"url elicitation without action", "u", `{"content":{}}`},
		{"sampling without model", "s", `{"role":"assistant","content":{"type":"text","text":"x"}}`},
		{"sampling without content", "s", `{"role":"assistant","model":"m"}`},
		{"sampling empty content", "s", `{"role":"assistant","content":[],"model":"m"}`},
		{"sampling system role", "s", `{"role":"system","content":{"type":"text","text":"x"},"model":"m"}`},
		{"sampling unknown block", "s", `{"role":"assistant","content":{"type":"video"},"model":"m"}`},
		{"sampling image with bad base64", "s", `{"role":"assistant","content":{"type":"image","data":"***","mimeType":"image/png"},"model":"m"}`},
		{"sampling content a string", "s", `{"role":"assistant","content":"hi","model":"m"}`},
		{"sampling model a number", "s", `{"role":"assistant","content":{"type":"text","text":"x"},"model":5}`},
		{"roots with http uri", "r", `{"roots":[{"uri":"http://example.com/"}]}`},
		{"roots without roots", "r", `{}`},
		{"roots null", "r", `{"roots":null}`},
		{"root without uri", "r", `{"roots":[{"name":"x"}]}`},
		{"roots a string", "r", `"file:///"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, a, tok := askerToken(t)
			r := f.call("tools/call", obj{"name": "ask", "requestState": tok, "inputResponses": obj{tt.key: rawJSON(tt.answer)}})
			e := r.fail(t, mrtr.CodeInvalidParams)
			assert.False(t, r.Envelope)
			assert.True(t, strings.HasPrefix(e.Message, "Invalid input response "+tt.key+": "), e.Message)
			assert.JSONEq(t, `{"key":"`+tt.key+`"}`, string(e.Data))
			assert.EqualValues(t, 1, a.calls.Load(), "the handler must not run")
		})
	}
}

func TestInputResponsesShape(t *testing.T) {
	f, a, tok := askerToken(t)
	for _, v := range []any{[]any{}, "x", 1, true} {
		r := f.call("tools/call", obj{"name": "ask", "requestState": tok, "inputResponses": v})
		e := r.fail(t, mrtr.CodeInvalidParams)
		assert.Equal(t, "inputResponses must be an object", e.Message)
	}
	assert.EqualValues(t, 1, a.calls.Load())

	// null is the same as absent: the handler runs round 1 with no answers.
	f.call("tools/call", obj{"name": "ask", "requestState": tok, "inputResponses": nil}).complete(t)
	assert.Equal(t, 1, a.last.Round)
	assert.Equal(t, 0, a.last.Responses.Len())
}

func TestStaticAsks(t *testing.T) {
	f := newFixture(t)
	var got []*mrtr.Request
	h := func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
		got = append(got, req)
		if ans, ok := req.Responses.Elicitation("confirm"); ok && ans.Accepted() {
			return mrtr.TextResult("confirmed"), nil
		}
		return &mrtr.InputRequired{Requests: map[string]mrtr.InputRequest{
			"confirm": &mrtr.ElicitRequest{Message: "Sure?", RequestedSchema: &mrtr.ElicitSchema{Type: "object", Properties: map[string]json.RawMessage{}}},
			"model":   simpleSampling("x"),
		}}, nil
	}
	asks := map[string]mrtr.InputRequest{"confirm": &mrtr.ElicitRequest{}}
	f.addTool("deploy", h, mrtr.StaticAsks(asks))
	asks["confirm"] = &mrtr.RootsRequest{} // the registration keeps its own copy

	// A first call may answer the declared question up front; other keys
	// are still ignored without a sealed state.
	res := f.call("tools/call", obj{"name": "deploy", "inputResponses": obj{
		"confirm": rawJSON(`{"action":"accept","content":{}}`),
		"model":   rawJSON(`{"role":"assistant","content":{"type":"text","text":"x"},"model":"m"}`),
	}}).complete(t)
	assert.Equal(t, "confirmed", toolText(t, res))
	require.Len(t, got, 1)
	assert.Equal(t, 0, got[0].Round)
	assert.Nil(t, got[0].State)
	assert.Equal(t, []string{"confirm"}, got[0].Responses.Keys())

	assert.Nil(t, got[0].Asked(), "nothing was asked in a sealed round")

	// The static answer is validated by its declared kind.
	r := f.call("tools/call", obj{"name": "deploy", "inputResponses": obj{"confirm": rawJSON(`{"roots":[]}`)}})
	e := r.fail(t, mrtr.CodeInvalidParams)
	assert.Equal(t, `Invalid input response confirm: an elicitation answer needs action accept, decline or cancel`, e.Message)
	assert.Len(t, got, 1)

	// With a sealed state, both the static key and the asked keys count.
	_, tok := f.call("tools/call", obj{"name": "deploy"}).inputRequired(t)
	f.call("tools/call", obj{"name": "deploy", "requestState": tok, "inputResponses": obj{
		"confirm": rawJSON(`{"action":"decline"}`),
		"model":   rawJSON(`{"role":"assistant","content":{"type":"text","text":"x"},"model":"m"}`),
	}}).inputRequired(t)
	last := got[len(got)-1]
	assert.Equal(t, 1, last.Round)
	assert.Equal(t, []string{"confirm", "model"}, last.Responses.Keys())
	assert.Equal(t, []string{"confirm", "model"}, last.Asked())
	s, ok := last.Responses.Sampling("model")
	require.True(t, ok)
	assert.Equal(t, "x", s.Text())

	// Other tools do not inherit the declaration.
	var plain *mrtr.Request
	f.addTool("plain", func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
		plain = req
		return mrtr.TextResult("ok"), nil
	})
	f.call("tools/call", obj{"name": "plain", "inputResponses": obj{"confirm": rawJSON(`{"action":"accept"}`)}}).complete(t)
	assert.Equal(t, 0, plain.Responses.Len())
}

// An input response is refused quoting at most a short prefix of its key
// and of the values in it.
func TestInputResponseErrorsQuoteAShortPrefix(t *testing.T) {
	f := newFixture(t)
	key := "k\n" + strings.Repeat("x", 100)
	f.addTool("t", noopTool, mrtr.StaticAsks(map[string]mrtr.InputRequest{key: &mrtr.ElicitRequest{}, "s": &mrtr.SamplingRequest{}}))

	e := f.call("tools/call", obj{"name": "t", "inputResponses": obj{key: obj{"action": "maybe"}}}).fail(t, mrtr.CodeInvalidParams)
	assert.Equal(t, `Invalid input response "k\n`+strings.Repeat("x", 62)+`...": an elicitation answer needs action accept, decline or cancel`, e.Message)
	assert.Equal(t, obj{"key": key[:64] + "..."}, e.dataJSON(t))

	long := strings.Repeat("y", 200)
	for name, answer := range map[string]obj{
		"form field name": {"action": "accept", "content": obj{long: obj{}}},
		"media type": {"role": "assistant", "model": "m",
			"content": obj{"type": "image", "data": "AAE=", "mimeType": "image/" + long}},
		"media type of another kind": {"role": "assistant", "model": "m",
			"content": obj{"type": "image", "data": "AAE=", "mimeType": "text/" + long}},
	} {
		t.Run(name, func(t *testing.T) {
			k := key
			if _, sampling := answer["role"]; sampling {
				k = "s"
			}
			r := f.call("tools/call", obj{"name": "t", "inputResponses": obj{k: answer}})
			if name == "media type" {
				// A long image/* type is a valid answer.
				r.complete(t)
				return
			}
			e := r.fail(t, mrtr.CodeInvalidParams)
			assert.NotContains(t, e.Message, long[:65], "the message repeats more than 64 bytes of a value the caller sent")
		})
	}
}

// Regression: an answer given twice under the same key was resolved by
// position. Now decodeResponses refuses it.
func TestRegressionDuplicateAnswerRefused(t *testing.T) {
	f := newFixture(t)
	f.addTool("ask", func(_ context.Context, req *mrtr.Request) (mrtr.Result, error) {
		if _, ok := req.Responses.Elicitation("name"); ok {
			return mrtr.TextResult("done"), nil
		}
		return mrtr.Ask("name", nameForm("Name?")), nil
	})
	caps := obj{"elicitation": obj{}}
	_, st := f.call("tools/call", obj{"_meta": meta(caps), "name": "ask"}).inputRequired(t)
	body := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"ask","requestState":"` + st + `",` +
		`"inputResponses":{"name":{"action":"decline"},"name":{"action":"accept","content":{"name":"x"}}},` +
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}}}`
	e := f.raw(body).fail(t, mrtr.CodeInvalidParams)
	assert.Contains(t, e.Message, "answered twice")
}
