package mrtr_test

// Regression tests: each guards a defect that was found in review and
// fixed (a case-variant key bypassing a check, a panic, a shared map
// mutated, an incomplete -32021). Each note says what went wrong and
// which function now prevents it. Run them alone with
//
//	go test -run 'TestRegression' ./mrtr/

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mrtrkit/mrtrkit/discover"
	"github.com/mrtrkit/mrtrkit/internal/wire"
	"github.com/mrtrkit/mrtrkit/mrtr"
)

// handleRecovering serves body like serve, but turns a panic in Handle
// into a test failure so that one bug does not abort the whole run.
func handleRecovering(t *testing.T, srv *mrtr.Server, body string, opts ...inOpt) (r reply, panicked bool) {
	t.Helper()
	msg, _, perr := mrtr.ParseMessage([]byte(body))
	require.Nil(t, perr)
	in := &mrtr.Inbound{Message: msg}
	for _, o := range opts {
		o(in)
	}
	var resp *mrtr.Response
	func() {
		defer func() {
			if p := recover(); p != nil {
				t.Errorf("Handle panicked: %v", p)
				panicked = true
			}
		}()
		resp = srv.Handle(context.Background(), in)
	}()
	if panicked {
		return reply{}, true
	}
	require.NotNil(t, resp)
	return decodeResponse(t, resp), false
}

// Regression: the version probe decoded _meta into a struct, whose tags
// encoding/json matches ignoring case (the last match winning), while the
// _meta parser read the exact key. A _meta with the real key naming an
// unsupported version followed by a case variant naming a supported one
// passed the header cross-check and the version check, and was served
// with the unsupported version. Now splitMeta splits _meta once by exact
// member name, and versionOf and parseMeta both read those members.
func TestRegressionVersionCheckBypassedByCaseVariantKey(t *testing.T) {
	const body = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","_meta":{` +
		`"io.modelcontextprotocol/clientCapabilities":{},` +
		`"io.modelcontextprotocol/protocolVersion":"1999-01-01",` +
		`"IO.MODELCONTEXTPROTOCOL/PROTOCOLVERSION":"2026-07-28"}}}`
	for _, mirrored := range []bool{false, true} {
		t.Run(fmt.Sprint("mirror=", mirrored), func(t *testing.T) {
			f := newFixture(t)
			var served string
			f.addTool("t", func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
				served = req.Meta.ProtocolVersion
				return mrtr.TextResult("ok"), nil
			})
			var opts []inOpt
			if mirrored {
				opts = append(opts, withMirror(mirror("tools/call", "t")))
			}
			r := f.raw(body, opts...)
			assert.Empty(t, served, "the handler ran for protocol version %q", served)
			require.NotNil(t, r.Error, "a request declaring protocolVersion 1999-01-01 was served: %s", r.Raw)
			if mirrored {
				// The header says 2026-07-28, the body 1999-01-01.
				assert.Equal(t, int(mrtr.CodeHeaderMismatch), r.Error.Code)
			} else {
				assert.Equal(t, int(mrtr.CodeUnsupportedVersion), r.Error.Code)
			}
		})
	}
}

// Regression: a handler that embedded a typed nil request, such as
// mrtr.Ask("k", (*mrtr.ElicitRequest)(nil)), made Handle panic: the
// capability gate read v.Mode (and v.Tools) before the embedded requests
// were validated, and an interface nil check does not catch a typed nil.
// Now inputRequired runs validateInputRequest, which refuses nil
// pointers, on every request before gateCapabilities sees any, and the
// handler bug is answered with -32603.
func TestRegressionTypedNilInputRequestPanics(t *testing.T) {
	tests := []struct {
		name string
		ir   mrtr.InputRequest
		caps obj
	}{
		{"nil elicitation", (*mrtr.ElicitRequest)(nil), capsEverything},
		{"nil elicitation, nothing declared", (*mrtr.ElicitRequest)(nil), capsNone},
		{"nil sampling with sampling declared", (*mrtr.SamplingRequest)(nil), capsSampling},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			askTool(t, f, mrtr.Ask("k", tt.ir))
			r, panicked := handleRecovering(t, f.srv, request("tools/call", obj{"_meta": meta(tt.caps), "name": "t"}))
			if panicked {
				return
			}
			e := r.fail(t, mrtr.CodeInternalError)
			assert.Equal(t, "Internal error", e.Message)
		})
	}
}

// Regression: completion/complete was served whenever the completions
// capability was advertised, which the Description may do on its own,
// and the call of a nil CompletionHandler made Handle panic. Now the
// server's completion method answers an empty completion when no handler
// is set.
func TestRegressionCompletionAdvertisedWithoutHandlerPanics(t *testing.T) {
	desc := testDesc()
	desc.Capabilities.Completions = &discover.Empty{}
	f := newFixtureDesc(t, desc)
	body := request("completion/complete", obj{
		"_meta":    meta(capsNone),
		"ref":      obj{"type": "ref/prompt", "name": "p"},
		"argument": obj{"name": "a", "value": "x"},
	})
	r, panicked := handleRecovering(t, f.srv, body)
	if panicked {
		return
	}
	res := r.complete(t)
	assert.Equal(t, obj{"values": []any{}}, res["completion"])
}

// Regression: the result encoder deleted MetaServerInfo from the _meta
// map of the handler's result in place, mutating memory the handler owns:
// a shared, pre-built result lost the key after the first call, and
// concurrent calls raced on the map. Now render copies the map before it
// drops the key.
func TestRegressionRenderMutatesHandlerMeta(t *testing.T) {
	shared := &mrtr.CallToolResult{
		Content: []mrtr.Content{mrtr.Text("static")},
		Meta: mrtr.Object{
			wire.MetaServerInfo: json.RawMessage(`{"name":"x","version":"0"}`),
			"com.example/k":     json.RawMessage(`1`),
		},
	}
	f := newFixture(t)
	f.addTool("t", func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) { return shared, nil })
	f.call("tools/call", obj{"name": "t"}).complete(t)
	assert.Len(t, shared.Meta, 2, "the handler's result was modified: %v", shared.Meta)
	assert.Contains(t, shared.Meta, wire.MetaServerInfo)

	// Served concurrently, the shared result is only read (the race
	// detector would report a write).
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			_, _ = rawRound(f.srv, "", obj{"_meta": meta(capsNone), "name": "t"})
		})
	}
	wg.Wait()
	assert.Len(t, shared.Meta, 2)
}

// Regression: when the client declared no sampling at all, a sampling
// request that needed sampling.tools or sampling.context yielded
// requiredCapabilities {"sampling":{}}, and a client that declared just
// that was refused again with {"sampling":{"tools":{}}}; a form and a url
// elicitation with no elicitation declared yielded
// {"elicitation":{"url":{}}}, which allows url mode only. Now
// gateCapabilities checks the sub-capabilities whether or not the parent
// was declared, and names form explicitly beside url, so that declaring
// exactly what -32021 names is always enough.
func TestRegressionRequiredCapabilitiesIncompleteWhenParentMissing(t *testing.T) {
	thisServer := simpleSampling("x")
	thisServer.IncludeContext = "thisServer"
	tests := []struct {
		name     string
		asks     map[string]mrtr.InputRequest
		required string
	}{
		{"sampling with tools", map[string]mrtr.InputRequest{"a": samplingWithTools()}, `{"sampling":{"tools":{}}}`},
		{"sampling with context", map[string]mrtr.InputRequest{"a": thisServer}, `{"sampling":{"context":{}}}`},
		{"form and url elicitation", map[string]mrtr.InputRequest{"a": nameForm("x"), "b": &mrtr.ElicitRequest{Mode: "url", Message: "x", URL: "https://example.com/"}}, `{"elicitation":{"form":{},"url":{}}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			askTool(t, f, &mrtr.InputRequired{Requests: tt.asks})
			e := f.call("tools/call", obj{"_meta": meta(capsNone), "name": "t"}).fail(t, mrtr.CodeMissingCapability)
			var data struct {
				Required json.RawMessage `json:"requiredCapabilities"`
			}
			require.NoError(t, json.Unmarshal(e.Data, &data))
			assert.JSONEq(t, tt.required, string(data.Required))

			// Declaring exactly what was named must be enough.
			var declared obj
			require.NoError(t, json.Unmarshal(data.Required, &declared))
			f.call("tools/call", obj{"_meta": meta(declared), "name": "t"}).inputRequired(t)
		})
	}
}

// Regression: the envelope was decoded into a struct, so member names
// matched ignoring case: {"JSONRPC":"2.0",...} passed the version check
// and {"METHOD":"tools/list"} was taken as the method, although JSON-RPC
// member names are case-sensitive. The same decoding read params (a
// "NAME" member overrode "name"), the _meta version probe and
// ClientCapabilities ({"SAMPLING":{}} declared sampling). Now
// ParseMessage, params.decode and ClientCapabilities.UnmarshalJSON all
// read members through wire.EachMember, by exact name.
func TestRegressionJSONRPCMemberNamesAreCaseSensitive(t *testing.T) {
	for _, body := range []string{
		`{"JSONRPC":"2.0","id":1,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":1,"METHOD":"tools/list"}`,
		`{"jsonrpc":"2.0","id":1,"Method":"tools/list"}`,
	} {
		t.Run(body, func(t *testing.T) {
			msg, _, err := mrtr.ParseMessage([]byte(body))
			if assert.NotNil(t, err, "parsed as method %q", methodOf(msg)) {
				assert.Equal(t, mrtr.CodeInvalidRequest, err.Code)
			}
		})
	}
}

func methodOf(m *mrtr.Message) string {
	if m == nil {
		return ""
	}
	return m.Method
}

func TestRegressionParamsAndCapabilitiesAreCaseSensitive(t *testing.T) {
	f := newFixture(t)
	var served []string
	f.addTool("t", func(_ context.Context, req *mrtr.Request) (mrtr.Result, error) {
		served = append(served, req.Name)
		if req.Capabilities().Sampling != nil {
			return mrtr.Ask("s", simpleSampling("x")), nil
		}
		return mrtr.TextResult("ok"), nil
	})
	f.addTool("other", noopTool)

	// "NAME" is not "name": the call names tool t.
	f.call("tools/call", obj{"_meta": meta(capsNone), "name": "t", "NAME": "other"}).complete(t)
	assert.Equal(t, []string{"t"}, served)

	// {"SAMPLING":{}} declares nothing.
	f.call("tools/call", obj{"_meta": meta(obj{"SAMPLING": obj{}}), "name": "t"}).complete(t)
	f.call("tools/call", obj{"_meta": meta(obj{"sampling": obj{}}), "name": "t"}).inputRequired(t)

	// A params member given twice is refused, not resolved by position.
	r := f.raw(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"other","name":"t",` +
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`)
	r.fail(t, mrtr.CodeInvalidRequest)
	assert.True(t, r.Envelope)
	assert.Len(t, served, 3)
}

// Regression: the Mcp-Param-* check read the declared argument with an
// exact-name lookup, while handlers decoded the arguments with
// encoding/json, which matches struct fields ignoring case with the last
// member winning. Arguments {"region":"us","REGION":"eu"} passed the check
// against "Mcp-Param-Region: us" while the handler bound region = "eu", so
// an intermediary that routed or authorised on the header was bypassed.
// Now checkParamHeaders matches names exactly and the strict door
// (strictArguments), which runs right after it on every call, refuses two
// names that Go's decoding folds together, with or without a Mirror.
func TestRegressionParamHeaderBypassThroughCaseVariantArgument(t *testing.T) {
	f := newFixture(t)
	var bound []string
	schema := `{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"}}}`
	require.NoError(t, f.srv.AddTool(mrtr.Tool{Name: "deploy", InputSchema: json.RawMessage(schema)},
		mrtr.HandlerFunc(func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
			var args struct {
				Region string `json:"region"`
			}
			if err := json.Unmarshal(req.Arguments, &args); err != nil {
				return nil, err
			}
			bound = append(bound, args.Region)
			return mrtr.TextResult(args.Region), nil
		})))
	m := mirror("tools/call", "deploy")
	m.Params = map[string]mrtr.HeaderValue{"region": hv("us")}
	for _, tt := range []struct{ args, path string }{
		{`{"region":"us","REGION":"eu"}`, "arguments.REGION"},
		{`{"REGION":"eu","region":"us"}`, "arguments.region"},
		{`{"region":"us","Region":"eu"}`, "arguments.Region"},
	} {
		// With the header, the one Go's decoding keeps (the last) is
		// compared first: a mismatch is -32020; a match leaves the
		// arguments to the strict door. Either way no handler runs.
		r := f.call("tools/call", obj{"name": "deploy", "arguments": rawJSON(tt.args)}, withMirror(m))
		require.NotNil(t, r.Error, tt.args)
		assert.Contains(t, []int{int(mrtr.CodeHeaderMismatch), int(mrtr.CodeInvalidParams)}, int(r.Error.Code), tt.args)
		r = f.call("tools/call", obj{"name": "deploy", "arguments": rawJSON(tt.args)})
		e := r.fail(t, mrtr.CodeInvalidParams)
		assert.Equal(t, "Invalid arguments: "+tt.path+" repeats a member name: names that differ only in case are one name to Go's JSON decoding", e.Message)
		assert.False(t, r.Envelope)
	}
	assert.Empty(t, bound, "the handler ran on ambiguous arguments")

	// The exact name is what the header vouches for.
	f.call("tools/call", obj{"name": "deploy", "arguments": obj{"region": "us"}}, withMirror(m)).complete(t)
	assert.Equal(t, []string{"us"}, bound)
}

// A lone case variant of a mirrored argument ({"REGION":"eu"}) binds to
// the declared field in Go's decoding, as the pair above would: the
// Mcp-Param-* check must not let the handler read a value no header
// vouched for. (Before the reshape, the check found the argument by
// folded name and required the header.)
func TestRegressionParamHeaderLoneCaseVariant(t *testing.T) {
	f := newFixture(t)
	var bound []string
	schema := `{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"}}}`
	require.NoError(t, f.srv.AddTool(mrtr.Tool{Name: "deploy", InputSchema: json.RawMessage(schema)},
		mrtr.HandlerFunc(func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
			var args struct {
				Region string `json:"region"`
			}
			if err := json.Unmarshal(req.Arguments, &args); err != nil {
				return nil, err
			}
			bound = append(bound, args.Region)
			return mrtr.TextResult(args.Region), nil
		})))
	for _, name := range []string{"REGION", "Region"} {
		// No Mcp-Param-Region header: an intermediary saw no region.
		r := f.call("tools/call", obj{"name": "deploy", "arguments": obj{name: "eu"}}, withMirror(mirror("tools/call", "deploy")))
		if r.Error == nil {
			assert.Empty(t, bound[len(bound)-1], "no Mcp-Param-Region header was sent, the handler deployed to %q (arguments {%q:\"eu\"})", bound[len(bound)-1], name)
		}
		// A header naming another region.
		m := mirror("tools/call", "deploy")
		m.Params = map[string]mrtr.HeaderValue{"region": hv("us")}
		r = f.call("tools/call", obj{"name": "deploy", "arguments": obj{name: "eu"}}, withMirror(m))
		if r.Error == nil {
			assert.Equal(t, "us", bound[len(bound)-1], "Mcp-Param-Region said us, the handler deployed to %q (arguments {%q:\"eu\"})", bound[len(bound)-1], name)
		}
	}
}

// Regression: the fast path of the x-mcp-header scan looked for the
// keyword in the raw schema text, so a declaration whose key was written
// with a JSON escape ("x-mcp-h\u0065ader") was neither validated nor
// enforced, although every client decodes it as x-mcp-header (the schema
// is advertised verbatim in tools/list). Now paramHeaders takes the full
// walk whenever the schema holds an escape.
func TestRegressionEscapedParamHeaderKeyIgnored(t *testing.T) {
	f := newFixture(t)
	bad := `{"type":"object","properties":{"a":{"type":"number","x-mcp-h\u0065ader":"A"}}}`
	assert.Error(t, f.srv.AddTool(mrtr.Tool{Name: "bad", InputSchema: json.RawMessage(bad)}, mrtr.HandlerFunc(noopTool)),
		"an x-mcp-header on a number property must be refused")

	good := `{"type":"object","properties":{"a":{"type":"string","x-mcp-h\u0065ader":"A"}}}`
	require.NoError(t, f.srv.AddTool(mrtr.Tool{Name: "good", InputSchema: json.RawMessage(good)}, mrtr.HandlerFunc(noopTool)))
	r := f.call("tools/call", obj{"name": "good", "arguments": obj{"a": "x"}}, withMirror(mirror("tools/call", "good")))
	if assert.NotNil(t, r.Error, "missing Mcp-Param-A header was accepted") {
		assert.Equal(t, int(mrtr.CodeHeaderMismatch), r.Error.Code)
	}
}

// Regression: an initialize-era client (no _meta claim) read a header
// complaint. Now initializeRefused answers -32022 naming the versions the
// server speaks, before the header checks.
func TestRegressionLegacyInitializeNamesSupportedVersions(t *testing.T) {
	f := newFixture(t)
	r := f.raw(`{"jsonrpc":"2.0","id":11,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`,
		withMirror(&mrtr.Mirror{}))
	e := r.fail(t, mrtr.CodeUnsupportedVersion)
	assert.True(t, r.Envelope)
	assert.JSONEq(t, `{"supported":["2026-07-28"],"requested":"2025-06-18"}`, string(e.Data))

	// With a modern claim, initialize is a removed method.
	r = f.call("initialize", obj{"_meta": meta(nil)})
	r.fail(t, mrtr.CodeMethodNotFound)
}

// Regression: a name that is not a string was taken for a header
// mismatch. Now readTarget refuses it as a params error (-32602, in-band)
// before the Mcp-Name header is compared.
func TestRegressionNonStringNameIsInvalidParams(t *testing.T) {
	f := newFixture(t)
	f.addTool("t", noopTool)
	r := f.call("tools/call", obj{"name": 42}, withMirror(mirror("tools/call", "42")))
	e := r.fail(t, mrtr.CodeInvalidParams)
	assert.Equal(t, "tools/call params.name must be a string", e.Message)
	assert.False(t, r.Envelope)
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

// Regression: a Message built by hand (not by ParseMessage) with malformed
// params made Handle panic. Now params.decode reads them through
// wire.EachMember, which reports malformed input as an error.
func TestRegressionMalformedParamsDoNotPanic(t *testing.T) {
	f := newFixture(t)
	f.addTool("t", noopTool)
	id := messageID(t, "1")
	for _, p := range []string{`{"`, `{0`, `{"a":`, `{"a" 1}`, `{"a":"x`, `{"a":[1,`, `[`, `"x"`} {
		resp := f.srv.Handle(context.Background(), &mrtr.Inbound{Message: &mrtr.Message{ID: id, Method: "tools/call", Params: json.RawMessage(p)}})
		require.NotNil(t, resp, p)
		require.NotNil(t, resp.Error, p)
		assert.Equal(t, mrtr.CodeInvalidRequest, resp.Error.Code, p)
		assert.Equal(t, "1", resp.ID.String())
	}
}

// Regression: results served to an authenticated principal were cached as
// public. Now the Server's hint makes them private unless the description
// sets a scope (results that never depend on who asks).
func TestRegressionAuthenticatedResultsArePrivateByDefault(t *testing.T) {
	f := newFixture(t)
	f.addTool("t", noopTool)
	r := f.call("tools/list", obj{"_meta": meta(nil)})
	assert.Equal(t, "public", r.ok(t)["cacheScope"])
	r = f.call("tools/list", obj{"_meta": meta(nil)}, asPrincipal("alice"))
	assert.Equal(t, "private", r.ok(t)["cacheScope"])

	desc := testDesc()
	desc.Cache.Scope = discover.Public
	g := newFixtureDesc(t, desc)
	g.addTool("t", noopTool)
	r = g.call("tools/list", obj{"_meta": meta(nil)}, asPrincipal("alice"))
	assert.Equal(t, "public", r.ok(t)["cacheScope"], "an explicit scope is kept")
}

// Regression: -32022 listed the legacy versions too, including the one
// just refused. Now unsupportedVersion names the description's
// ModernVersions only: those a request can name in _meta.
func TestRegressionUnsupportedVersionListsModernVersionsOnly(t *testing.T) {
	desc := testDesc()
	desc.LegacyVersions = []string{"2025-11-25"}
	f := newFixtureDesc(t, desc)
	m := meta(nil)
	m["io.modelcontextprotocol/protocolVersion"] = "2025-11-25"
	r := f.call("server/discover", obj{"_meta": m})
	e := r.fail(t, mrtr.CodeUnsupportedVersion)
	assert.JSONEq(t, `{"supported":["2026-07-28"],"requested":"2025-11-25"}`, string(e.Data))
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
