package mrtr_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mrtrkit/mrtrkit/discover"
	"github.com/mrtrkit/mrtrkit/internal/testkit"
	"github.com/mrtrkit/mrtrkit/internal/wire"
	"github.com/mrtrkit/mrtrkit/mrtr"
	"github.com/mrtrkit/mrtrkit/mrtr/mrtrtest"
)

// doorServer has a tool that asks a confirmation before it reads
// {"cents": n}, the shape of the fold-equal attack: a state sealed while
// the user confirmed one amount must never open for arguments that a Go
// handler decodes as another.
func doorServer(t testing.TB) (*mrtr.Server, *int) {
	t.Helper()
	srv := testkit.Server(t, discover.Description{Server: discover.Implementation{Name: "door", Version: "1"}},
		mrtr.WithCodec(testkit.Codec(t)), mrtr.WithLogger(testkit.Logger(&testkit.LogBuffer{}, 0)))
	charged := new(int)
	require.NoError(t, srv.AddTool(mrtr.Tool{Name: "pay"}, mrtr.HandlerFunc(func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
		var in struct{ Cents int }
		if err := json.Unmarshal(req.Arguments, &in); err != nil {
			return nil, err
		}
		if ans, ok := req.Responses.Elicitation("confirm"); !ok || !ans.Accepted() {
			return mrtr.Ask("confirm", &mrtr.ElicitRequest{Message: "Pay?", RequestedSchema: &mrtr.ElicitSchema{Type: "object", Properties: map[string]json.RawMessage{}}}), nil
		}
		*charged = in.Cents
		return mrtr.TextResult("paid"), nil
	})))
	require.NoError(t, srv.AddPrompt(mrtr.Prompt{Name: "p"}, mrtr.HandlerFunc(func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
		return &mrtr.GetPromptResult{}, nil
	})))
	return srv, charged
}

const elicitCaps = `{"elicitation":{}}`

// callPay sends one tools/call of pay with the given raw arguments and,
// when state is not "", that requestState and an accepted confirmation.
func callPay(t *testing.T, srv *mrtr.Server, args string, state string) (json.RawMessage, *mrtr.Error) {
	t.Helper()
	params := map[string]any{"name": "pay", "arguments": json.RawMessage(args)}
	if state != "" {
		params["requestState"] = state
		params["inputResponses"] = map[string]any{"confirm": map[string]any{"action": "accept"}}
	}
	return mrtrtest.Send(context.Background(), srv, "", mrtrtest.NewRequest(wire.MethodToolsCall, params).WithCapabilities(elicitCaps))
}

func stateOf(t *testing.T, res json.RawMessage) string {
	t.Helper()
	var ir struct {
		ResultType   string `json:"resultType"`
		RequestState string `json:"requestState"`
	}
	require.NoError(t, json.Unmarshal(res, &ir))
	require.Equal(t, wire.ResultInputRequired, ir.ResultType)
	return ir.RequestState
}

func TestFoldEqualNamesNeverReachTheStatePath(t *testing.T) {
	for name, args := range map[string]string{
		"long s (U+017F)": `{"cents":5,"centſ":100000}`,
		"Kelvin sign":     "{\"k\":5,\"\u212a\":100000,\"cents\":5}",
		"ASCII case":      `{"cents":5,"CENTS":100000}`,
	} {
		t.Run(name, func(t *testing.T) {
			srv, charged := doorServer(t)
			// The first round is refused: no state is ever sealed for
			// arguments a decoder could read two ways.
			_, err := callPay(t, srv, args, "")
			require.NotNil(t, err)
			assert.Equal(t, mrtr.CodeInvalidParams, err.Code)
			assert.Contains(t, err.Message, "repeats a member name")

			// A genuine state sealed for {"cents":5} does not open for the
			// same arguments plus a fold-equal twin, in either order.
			res, err := callPay(t, srv, `{"cents":5}`, "")
			require.Nil(t, err)
			tok := stateOf(t, res)
			for _, retry := range []string{args, reorder(args)} {
				_, err = callPay(t, srv, retry, tok)
				require.NotNil(t, err, retry)
				assert.Equal(t, mrtr.CodeInvalidParams, err.Code)
				assert.Contains(t, err.Message, "Invalid arguments", "the door refuses before the state is looked at")
			}
			assert.Zero(t, *charged, "no handler ran past the door")

			// The genuine retry pays what was confirmed.
			_, err = callPay(t, srv, `{"cents":5}`, tok)
			require.Nil(t, err)
			assert.Equal(t, 5, *charged)
		})
	}
}

// reorder swaps the first two members of a flat object.
func reorder(args string) string {
	var m []json.RawMessage
	parts := strings.SplitN(strings.Trim(args, "{}"), ",", 3)
	for _, p := range parts {
		m = append(m, json.RawMessage(p))
	}
	m[0], m[1] = m[1], m[0]
	var b bytes.Buffer
	b.WriteByte('{')
	for i, p := range m {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(p)
	}
	b.WriteByte('}')
	return b.String()
}

func TestDoorRefusesInexactNumbersOnEveryCall(t *testing.T) {
	srv, _ := doorServer(t)
	_, err := callPay(t, srv, `{"cents":9007199254740993}`, "")
	require.NotNil(t, err)
	assert.Contains(t, err.Message, "arguments.cents is a number with no exact IEEE 754 double form")
	_, err = callPay(t, srv, `{"cents":5,"rate":1e0,"share":0.1}`, "")
	assert.Nil(t, err, "1e0 is exactly 1 and 0.1 is the shortest form of its double")
}

func TestDoorGuardsPromptArguments(t *testing.T) {
	srv, _ := doorServer(t)
	for args, want := range map[string]string{
		`{"a":"x","A":"y"}`: "repeats a member name",
		`{"a":1}`:           "arguments.a must be a string",
		`{"a":"\ud800"}`:    "unpaired surrogate",
	} {
		_, err := mrtrtest.Send(context.Background(), srv, "", mrtrtest.NewRequest(wire.MethodPromptsGet,
			map[string]any{"name": "p", "arguments": json.RawMessage(args)}))
		require.NotNil(t, err, args)
		assert.Equal(t, mrtr.CodeInvalidParams, err.Code, args)
		assert.Contains(t, err.Message, want, args)
	}
}

// abusiveBodies are arguments of 4 MiB built to make a check cost more
// than their size: one number literal; a 64 KiB member name before an
// array of two million elements; an array of small objects, each with its
// own set of names.
func abusiveBodies() map[string]string {
	const size = 4 << 20
	var arr bytes.Buffer
	arr.WriteString(`{"` + strings.Repeat("a", 64<<10) + `":[`)
	for i := 0; arr.Len() < size-200; i++ {
		if i > 0 {
			arr.WriteByte(',')
		}
		arr.WriteByte('0')
	}
	arr.WriteString("]}")
	var objs bytes.Buffer
	objs.WriteString(`{"a":[`)
	for objs.Len() < size-300 {
		objs.WriteString(`{"x":1,"y":2},`)
	}
	objs.WriteString(`{}]}`)
	return map[string]string{
		"long number":       `{"n":0.` + strings.Repeat("7", size-200) + `3}`,
		"long name + array": arr.String(),
		"many objects":      objs.String(),
	}
}

// abusiveRequest is a tools/call of pay with args and a requestState that
// is not a token.
func abusiveRequest(args string) []byte {
	return mrtrtest.NewRequest(wire.MethodToolsCall, map[string]any{
		"name": "pay", "arguments": json.RawMessage(args), "requestState": "x",
	}).Body()
}

func TestAbusiveArgumentsAreRefusedCheaply(t *testing.T) {
	srv, charged := doorServer(t)
	for name, args := range abusiveBodies() {
		msg, _, perr := mrtr.ParseMessage(abusiveRequest(args))
		require.Nil(t, perr, name)
		resp := srv.Handle(context.Background(), &mrtr.Inbound{Message: msg})
		require.NotNil(t, resp.Error, name)
		assert.Equal(t, mrtr.CodeInvalidParams, resp.Error.Code, name)
		assert.Less(t, len(resp.Error.Message), 200, "%s: the message quotes a short prefix at most", name)
	}
	assert.Zero(t, *charged)
}

// BenchmarkAbusiveArguments measures the server CPU a request of each
// abusive shape costs, with a bogus requestState, parse included.
func BenchmarkAbusiveArguments(b *testing.B) {
	srv, _ := doorServer(b)
	for name, args := range abusiveBodies() {
		body := abusiveRequest(args)
		b.Run(strings.ReplaceAll(name, " ", "_"), func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				msg, _, perr := mrtr.ParseMessage(body)
				if perr != nil {
					b.Fatal(perr)
				}
				if resp := srv.Handle(context.Background(), &mrtr.Inbound{Message: msg}); resp.Error == nil {
					b.Fatal("accepted")
				}
			}
		})
	}
}

// Regression: a sealed state opened for arguments that decode
// differently from those it was issued for: case-variant member names
// (Go's decoding binds them ignoring case, the last one winning) and
// numbers that round to the same double have one digest. Such arguments
// were refused only on calls that carried or produced a requestState.
// Now strictArguments refuses them on every tools/call and prompts/get,
// before any handler or state work, so the digest pins what a handler
// decodes.
func TestRegressionDigestPinsWhatHandlersRead(t *testing.T) {
	f := newFixture(t)
	var paid []string
	calls := 0
	f.addTool("pay", func(_ context.Context, req *mrtr.Request) (mrtr.Result, error) {
		calls++
		var in struct {
			Amount json.Number `json:"amount"`
		}
		if err := json.Unmarshal(req.Arguments, &in); err != nil {
			return nil, err
		}
		if ans, ok := req.Responses.Elicitation("confirm"); ok && ans.Accepted() {
			paid = append(paid, in.Amount.String())
			return mrtr.TextResult("paid " + in.Amount.String()), nil
		}
		return mrtr.Ask("confirm", nameForm("Pay "+in.Amount.String()+"?")), nil
	})
	// A tool that never asks: no state is sealed or opened for it.
	f.addTool("plain", func(context.Context, *mrtr.Request) (mrtr.Result, error) {
		calls++
		return mrtr.TextResult("ok"), nil
	})
	caps := obj{"elicitation": obj{}}

	const (
		repeats  = " repeats a member name: names that differ only in case are one name to Go's JSON decoding"
		inexact  = " is a number with no exact IEEE 754 double form; send it as a string"
		tooLong  = " is a number literal longer than 40 characters; send it as a string"
		badUTF8  = " is not valid UTF-8"
		lone     = " holds an unpaired surrogate escape"
		tooDeep  = " is nested more than 100 levels deep"
		longZero = "1." + "000000000000000000000000000000000000000" // 41 characters
	)
	deep100 := `{"a":` + strings.Repeat("[", 99) + strings.Repeat("]", 99) + `}`
	deep101 := `{"a":` + strings.Repeat("[", 100) + strings.Repeat("]", 100) + `}`
	for _, tt := range []struct{ args, message string }{
		{`{"amount":5,"AMOUNT":1000}`, "arguments.AMOUNT" + repeats},
		{`{"AMOUNT":1000,"amount":5}`, "arguments.amount" + repeats},
		{`{"amount":5,"Amount":5}`, "arguments.Amount" + repeats},
		{`{"nested":{"a":1,"A":2}}`, "arguments.nested.A" + repeats},
		{`{"list":[{"x":1,"X":2}]}`, "arguments.list[0].X" + repeats},
		// Go's folding is Unicode simple folding: the long s is an s, the
		// Kelvin sign a k, whether sent raw or escaped.
		{`{"sum":1,"ſum":2}`, `arguments."ſum"` + repeats},
		{`{"sum":1,"\u017fum":2}`, `arguments."ſum"` + repeats},
		{`{"k":1,"\u212a":2}`, `arguments."K"` + repeats},
		{`{"amount":9007199254740993}`, "arguments.amount" + inexact},
		{`{"amount":0.10000000000000000001}`, "arguments.amount" + inexact},
		{`{"amount":1e400}`, "arguments.amount" + inexact},
		{`{"amount":[1,2,18446744073709551617]}`, "arguments.amount[2]" + inexact},
		{`{"amount":` + longZero + `}`, "arguments.amount" + tooLong},
		{`{"memo":"\ud800"}`, "arguments.memo" + lone},
		{`{"memo":"\udc00\ud800"}`, "arguments.memo" + lone},
		{"{\"memo\":\"\xff\"}", "arguments.memo" + badUTF8},
		{deep101, "arguments.a[0][0]...[0][0][0][0]" + tooDeep}, // a deep path shows its ends
	} {
		for _, tool := range []string{"pay", "plain"} {
			r := f.raw(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"` + tool + `","arguments":` + tt.args +
				`,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}}}`)
			e := r.fail(t, mrtr.CodeInvalidParams)
			assert.Equal(t, "Invalid arguments: "+tt.message, e.Message, "%s: %s", tool, tt.args)
			assert.False(t, r.Envelope)
		}
	}
	// A bad member name is refused too. (Only the problem is asserted
	// here, not the path the message reports.)
	for _, args := range []string{"{\"m\xffemo\":1}", `{"a":1,"\ud800":2}`, `{"a":{"\udc00":1}}`} {
		e := f.raw(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"plain","arguments":`+args+
			`,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`).fail(t, mrtr.CodeInvalidParams)
		assert.True(t, strings.HasPrefix(e.Message, "Invalid arguments: arguments"), e.Message)
		assert.True(t, strings.HasSuffix(e.Message, badUTF8) || strings.HasSuffix(e.Message, lone), e.Message)
	}
	assert.Zero(t, calls, "a handler ran on arguments the door refuses")

	// Within the limits, the arguments reach the handler.
	for _, args := range []string{deep100, `{"amount":` + longZero[:len(longZero)-1] + `}`, `{"memo":"\ud83d\ude00 é"}`, `{"Sum":1,"sun":2}`} {
		f.call("tools/call", obj{"name": "plain", "arguments": rawJSON(args)}).complete(t)
	}
	assert.Equal(t, 4, calls)

	// Canonical spellings are fine, and equal values share a state.
	_, st := f.call("tools/call", obj{"_meta": meta(caps), "name": "pay", "arguments": rawJSON(`{"amount":1e0}`)}).inputRequired(t)
	r := f.call("tools/call", obj{"_meta": meta(caps), "name": "pay", "arguments": rawJSON(`{"amount":1.0}`),
		"requestState": st, "inputResponses": obj{"confirm": obj{"action": "accept", "content": obj{"name": "x"}}}})
	r.complete(t)
	assert.Equal(t, []string{"1.0"}, paid)
}
