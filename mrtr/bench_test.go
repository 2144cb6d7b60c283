package mrtr_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/mrtrkit/mrtrkit/mrtr"
	"github.com/stretchr/testify/require"
)

// benchServe parses body, serves it and encodes the response into buf, as
// a transport does for every request.
// It runs in the timed loop, so each check is a plain if and testify is
// called only when the check fails: require calls b.Helper, which walks the
// stack, and boxes its arguments on every call, which would count in ns/op
// and allocs/op.
func benchServe(b *testing.B, srv *mrtr.Server, body []byte, buf []byte, wantError bool) []byte {
	msg, _, perr := mrtr.ParseMessage(body)
	if perr != nil {
		require.Nil(b, perr)
	}
	resp := srv.Handle(context.Background(), &mrtr.Inbound{Message: msg})
	if (resp.Error != nil) != wantError {
		require.Equalf(b, wantError, resp.Error != nil, "an error response: %+v", resp.Error)
	}
	out, err := resp.AppendJSON(buf[:0])
	if err != nil {
		require.NoError(b, err)
	}
	resp.Release() // written, as a transport releases it
	return out
}

func BenchmarkToolsCall(b *testing.B) {
	fx := newFixture(b, mrtr.WithLogger(discardLogger))
	fx.addTool("add", func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
		var args struct{ A, B int }
		if err := json.Unmarshal(req.Arguments, &args); err != nil {
			return nil, err
		}
		return mrtr.TextResult("sum"), nil
	})
	body := []byte(request("tools/call", obj{"_meta": meta(capsNone), "name": "add", "arguments": obj{"a": 1, "b": 2}}))
	buf := make([]byte, 0, 1024)
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		buf = benchServe(b, fx.srv, body, buf, false)
	}
}

func BenchmarkMRTRRound(b *testing.B) {
	// The fixture's clock is fixed, so the token stays valid throughout.
	fx := newFixture(b, mrtr.WithLogger(discardLogger))
	fx.addTool("greet", func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
		ans, ok := req.Responses.Elicitation("name")
		if !ok {
			return mrtr.Ask("name", nameForm("What is your name?")), nil
		}
		name, _ := ans.Content["name"].(string)
		return mrtr.TextResult("Hello, " + name), nil
	})
	_, tok := fx.call("tools/call", obj{"_meta": meta(capsElicit), "name": "greet", "arguments": obj{"lang": "en"}}).inputRequired(b)
	body := []byte(request("tools/call", obj{
		"_meta":          meta(capsElicit),
		"name":           "greet",
		"arguments":      obj{"lang": "en"},
		"requestState":   tok,
		"inputResponses": obj{"name": obj{"action": "accept", "content": obj{"name": "Ada"}}},
	}))
	buf := make([]byte, 0, 1024)
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		buf = benchServe(b, fx.srv, body, buf, false)
	}
}

func BenchmarkMRTRFirstRound(b *testing.B) {
	fx := newFixture(b, mrtr.WithLogger(discardLogger))
	fx.addTool("greet", func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
		return mrtr.Ask("name", nameForm("What is your name?")), nil
	})
	body := []byte(request("tools/call", obj{"_meta": meta(capsElicit), "name": "greet", "arguments": obj{"lang": "en"}}))
	buf := make([]byte, 0, 1024)
	b.ReportAllocs()
	for b.Loop() {
		buf = benchServe(b, fx.srv, body, buf, false)
	}
}

func BenchmarkToolsList(b *testing.B) {
	fx := newFixture(b, mrtr.WithLogger(discardLogger))
	for _, n := range []string{"a", "b", "c", "d", "e", "f", "g", "h"} {
		fx.addTool(n, noopTool)
	}
	body := []byte(request("tools/list", obj{"_meta": meta(capsNone)}))
	buf := make([]byte, 0, 4096)
	b.ReportAllocs()
	for b.Loop() {
		buf = benchServe(b, fx.srv, body, buf, false)
	}
}

func BenchmarkRefusedState(b *testing.B) {
	fx := newFixture(b, mrtr.WithLogger(discardLogger))
	fx.addTool("t", noopTool)
	body := []byte(request("tools/call", obj{"_meta": meta(capsNone), "name": "t", "requestState": "AQEC" + "azE" + "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"}))
	buf := make([]byte, 0, 1024)
	b.ReportAllocs()
	for b.Loop() {
		buf = benchServe(b, fx.srv, body, buf, true)
	}
}
