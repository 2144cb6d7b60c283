package typed_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mrtrkit/mrtrkit/internal/testkit"
	"github.com/mrtrkit/mrtrkit/internal/wire"
	"github.com/mrtrkit/mrtrkit/mrtr"
	"github.com/mrtrkit/mrtrkit/mrtr/mrtrtest"
	"github.com/mrtrkit/mrtrkit/mrtr/typed"
)

// FuzzBinder feeds arbitrary arguments to a Binder: it must never panic,
// and it either returns a value or an *ArgumentError with problems. A
// value it accepts holds only the member names the generated schema
// declares, spelt exactly: no unknown member and no case variant (which
// Go's decoding would bind to a field past the declared name's checks)
// gets through.
func FuzzBinder(f *testing.F) {
	for _, s := range []string{
		`{"audience":"World"}`, `{"audience":7}`, `{}`, `null`, `[]`, `{"options":{"depth":1e999}}`,
		`{"audience":"W","max_words":-1,"tone":"x","options":null}`, `{"a":{"b":[1,{"c":null}]}}`, `"\u0000"`,
		`{"audience":"World","AUDIENCE":"x"}`, `{"Audience":"World"}`, `{"audience":"World","optionſ":{"depth":1}}`,
		`{"audience":"World","options":{"DEPTH":1}}`, `{"\u0061udience":"World"}`, `{"audience":"World","max_words":9007199254740993}`,
		`{"audience":"\ud800World"}`, "{\"audience\":\"Wor\xffld\"}", `{"audience":"World","options":{"depth":2,"depth":9}}`,
	} {
		f.Add([]byte(s))
	}
	b, err := typed.NewBinder[GreetIn](nil)
	if err != nil {
		f.Fatal(err)
	}
	declared := map[string]bool{"audience": true, "max_words": true, "tone": true, "options": true}
	f.Fuzz(func(t *testing.T, raw []byte) {
		v, err := b.Bind(json.RawMessage(raw))
		if err != nil {
			var ae *typed.ArgumentError
			require.Falsef(t, !errors.As(err, &ae) || len(ae.Problems) == 0, "%q: %v is not an ArgumentError with problems", raw, err)
			return
		}
		require.Falsef(t, len([]rune(v.Audience)) < 2, "accepted %q with audience %q", raw, v.Audience)
		var top map[string]json.RawMessage
		require.NoErrorf(t, json.Unmarshal(raw, &top), "accepted %q, which is not an object", raw)
		for name := range top {
			require.Truef(t, declared[name], "accepted %q with member %q", raw, name)
		}
		if opts, ok := top["options"]; ok {
			var inner map[string]json.RawMessage
			_ = json.Unmarshal(opts, &inner)
			for name := range inner {
				require.EqualValuesf(t, "depth", name, "accepted %q with options member %q", raw, name)
			}
		}
	})
}

// FuzzToolCall sends arbitrary arguments to a typed tool through the
// server: the strict door, then the Binder. The call ends with a JSON-RPC
// -32602, an isError result, or the function's output; when the function
// runs, it sees exactly what a plain decoding of the arguments gives, from
// arguments that name only declared members, spelt exactly.
func FuzzToolCall(f *testing.F) {
	for _, s := range []string{
		`{"audience":"World"}`, `{"audience":"World","max_words":3,"tone":"warm","options":{"depth":2}}`,
		`{"audience":"World","AUDIENCE":"x"}`, `{"Audience":"World"}`, `{"audience":"World","optionſ":{"depth":1}}`,
		`{"audience":"World","max_words":9007199254740993}`, `{"audience":"\ud800x"}`, `{"audience":"World","max_words":1e0}`,
		`{"audience":"World","options":{"depth":1,"Depth":2}}`, `{}`, `[]`, `null`, `{"audience":"World","options":null}`,
	} {
		f.Add([]byte(s))
	}
	srv := testkit.Server(f, testkit.Desc("fuzz", "1"), mrtr.WithCodec(testkit.Codec(f)))
	var got GreetIn
	var ran bool
	if err := typed.AddTool(srv, mrtr.Tool{Name: "greet"}, func(ctx context.Context, req *mrtr.Request, in GreetIn) (GreetOut, error) {
		got, ran = in, true
		return greet(ctx, req, in)
	}); err != nil {
		f.Fatal(err)
	}
	declared := map[string]bool{"audience": true, "max_words": true, "tone": true, "options": true}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if !json.Valid(raw) {
			return // not a request a client can send
		}
		got, ran = GreetIn{}, false
		res, e := mrtrtest.Send(context.Background(), srv, "", mrtrtest.NewRequest(wire.MethodToolsCall,
			map[string]any{"name": "greet", "arguments": json.RawMessage(raw)}))
		if e != nil {
			require.Falsef(t, e.Code != mrtr.CodeInvalidParams || ran, "%q: error %v (function ran: %v)", raw, e, ran)
			return
		}
		var r struct {
			IsError bool `json:"isError"`
		}
		require.NoErrorf(t, json.Unmarshal(res, &r), "%q: result %s", raw, res)
		if r.IsError {
			require.Falsef(t, ran, "%q: the function ran on arguments refused with %s", raw, res)
			return
		}
		require.Truef(t, ran, "%q: a complete result without the function: %s", raw, res)
		var want GreetIn
		if err := json.Unmarshal(raw, &want); err != nil || !reflect.DeepEqual(got, want) {
			require.FailNow(t, fmt.Sprintf("%q: the function got %+v; a plain decoding gives %+v (%v)", raw, got, want, err))
		}
		var top map[string]json.RawMessage
		require.NoErrorf(t, json.Unmarshal(raw, &top), "%q: accepted arguments that are not an object", raw)
		for name := range top {
			require.Truef(t, declared[name], "%q: accepted member %q", raw, name)
		}
	})
}
