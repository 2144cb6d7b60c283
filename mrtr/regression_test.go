package mrtr_test

// Regression tests: each guards a defect that was found in review and
// fixed (a case-variant key bypassing a check, a panic, a shared map
// mutated, an incomplete -32021). Run them alone with
//
//	go test -run 'TestRegression' ./mrtr/

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mrtrkit/mrtrkit/discover"
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

// BUG (meta.go, versionFromMeta): the version probe decodes _meta into a
// struct, and encoding/json matches struct tags case-insensitively with the
// last matching member winning, while parseMeta reads the exact key from a
// map. A _meta carrying the real key with an unsupported version followed
// by a case variant with a supported one passes the header cross-check and
// the version check, and the request is then served with the unsupported
// version. Fix: look the version up by its exact key, e.g. decode _meta
// into map[string]json.RawMessage once and read
// MetaProtocolVersion from it in versionFromMeta too.
func TestRegressionVersionCheckBypassedByCaseVariantKey(t *testing.T) {
	const body = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","_meta":{` +
		`"io.modelcontextprotocol/clientCapabilities":{},` +
		`"io.modelcontextprotocol/protocolVersion":"1999-01-01",` +
		`"IO.MODELCONTEXTPROTOCOL/PROTOCOLVERSION":"2026-07-28"}}}`
	for _, withMirror := range []bool{false, true} {
		t.Run(fmt.Sprint("mirror=", withMirror), func(t *testing.T) {
			f := newFixture(t)
			var served string
			f.addTool("t", func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
				served = req.Meta.ProtocolVersion
				return textResult("ok"), nil
			})
			var opts []inOpt
			if withMirror {
				opts = append(opts, withHeaders(mirror("tools/call", "t")))
			}
			r := f.raw(body, opts...)
			assert.Empty(t, served, "the handler ran for protocol version %q", served)
			require.NotNil(t, r.Error, "a request declaring protocolVersion 1999-01-01 was served: %s", r.Raw)
			if withMirror {
				// The header says 2026-07-28, the body 1999-01-01.
				assert.Equal(t, int(mrtr.CodeHeaderMismatch), r.Error.Code)
			} else {
				assert.Equal(t, int(mrtr.CodeUnsupportedVersion), r.Error.Code)
			}
		})
	}
}

// BUG (validate.go, gateCapabilities): a handler that embeds a typed nil
// request, e.g. mrtr.Ask("k", (*mrtr.ElicitRequest)(nil)), makes Handle
// panic with a nil pointer dereference: gateCapabilities reads v.Mode
// (and, when sampling is declared, v.Tools) before validateInputRequest,
// which has explicit nil checks meant to turn this handler bug into
// -32603, gets to run. The interface nil check in inputRequired (ir == nil)
// does not catch typed nils. Fix: skip nil pointers in gateCapabilities
// (or run validateInputRequest before the gate).
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

// BUG (pipeline.go, methodExists / completion): methodExists accepts
// completion/complete whenever the completions capability is advertised,
// which the Description may do on its own; completion then calls
// h.Complete on a nil CompletionHandler and Handle panics. Fix: treat
// completion/complete as existing only when a handler is set (answer
// -32601 otherwise), or answer an empty completion when h is nil.
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
	if r.Error != nil {
		assert.Equal(t, int(mrtr.CodeMethodNotFound), r.Error.Code)
	} else {
		assert.Equal(t, obj{"values": []any{}}, r.Result["completion"])
	}
}

// BUG (pipeline.go, render): render deletes MetaServerInfo from the _meta
// map of the handler's result in place (delete(meta, MetaServerInfo)),
// mutating memory the handler owns. A handler that returns a shared,
// pre-built result loses the key after the first call, and when such a
// result is served concurrently the deletes and the json.Marshal reads of
// the same map race (fatal "concurrent map writes" / race detector
// report). Fix: copy the map before removing the key, or skip the key
// while encoding instead of deleting it.
func TestRegressionRenderMutatesHandlerMeta(t *testing.T) {
	shared := &mrtr.CallToolResult{
		Content: []mrtr.Content{mrtr.Text("static")},
		Meta: mrtr.Object{
			mrtr.MetaServerInfo: json.RawMessage(`{"name":"x","version":"0"}`),
			"com.example/k":     json.RawMessage(`1`),
		},
	}
	f := newFixture(t)
	f.addTool("t", func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) { return shared, nil })
	f.call("tools/call", obj{"name": "t"}).complete(t)
	assert.Len(t, shared.Meta, 2, "the handler's result was modified: %v", shared.Meta)
	assert.Contains(t, shared.Meta, mrtr.MetaServerInfo)
}

// BUG (validate.go, gateCapabilities): when the client declared no
// sampling at all, a sampling request that needs sampling.tools or
// sampling.context yields requiredCapabilities {"sampling":{}} (the
// `continue` skips the sub-capability checks). A client that follows that
// answer and declares {"sampling":{}} is refused again with
// {"sampling":{"tools":{}}}. The same happens for elicitation: a form and
// a url request with no elicitation declared yield {"elicitation":{"url":{}}},
// which declares url mode only and still does not allow the form request.
// The function's own contract is to name every capability needed and not
// declared. Fix: check tools/context even when caps.Sampling is nil, and
// name form explicitly when url is also needed.
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

// BUG (jsonrpc.go, ParseMessage): the envelope is decoded into a struct, so
// member names match case-insensitively: {"JSONRPC":"2.0",...} passes the
// version check and {"METHOD":"tools/list"} is taken as the method, although
// JSON-RPC 2.0 member names are case-sensitive and these messages have no
// "jsonrpc" / "method" member. The same decoding is used for params in
// serve (a "NAME" member overrides "name"), for the _meta version probe
// (see TestRegressionVersionCheckBypassedByCaseVariantKey) and for
// ClientCapabilities ({"SAMPLING":{}} declares sampling). Fix: decode into
// map[string]json.RawMessage and read the exact member names.
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

// BUG (xheader.go checkParamHeaders vs handler.go Request.BindArguments):
// the Mcp-Param-* check reads the declared argument with an exact-name map
// lookup, but BindArguments decodes with encoding/json, which matches
// struct fields case-insensitively with the last member winning. Arguments
// {"region":"us","REGION":"eu"} pass the check against
// "Mcp-Param-Region: us" while the handler binds region = "eu", so an
// intermediary that routed or authorised on the header was bypassed.
// Fix: refuse (-32602) arguments whose member names collide ignoring case
// (at least along declared header paths), or make BindArguments
// case-sensitive.
func TestRegressionParamHeaderBypassThroughCaseVariantArgument(t *testing.T) {
	f := newFixture(t)
	var bound string
	schema := `{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"}}}`
	require.NoError(t, f.srv.AddTool(mrtr.Tool{Name: "deploy", InputSchema: json.RawMessage(schema)},
		mrtr.HandlerFunc(func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
			var args struct {
				Region string `json:"region"`
			}
			if err := req.BindArguments(&args); err != nil {
				return nil, err
			}
			bound = args.Region
			return textResult(args.Region), nil
		})))
	m := mirror("tools/call", "deploy")
	m.Params = map[string]mrtr.HeaderValue{"region": hv("us")}
	r := f.call("tools/call", obj{"name": "deploy", "arguments": rawJSON(`{"region":"us","REGION":"eu"}`)}, withHeaders(m))
	if r.Error == nil {
		assert.Equal(t, "us", bound, "Mcp-Param-Region said us, the handler deployed to %q", bound)
	}
}

// BUG (xheader.go, paramHeaders): the fast path
// bytes.Contains(schema, `"x-mcp-header"`) looks at the raw schema text, so
// a declaration whose key is written with a JSON escape
// ("x-mcp-h\u0065ader") is neither validated nor enforced, although every
// client decodes it as x-mcp-header (the schema is advertised verbatim in
// tools/list). Fix: drop the fast path, or search for a form that
// survives escaping (e.g. decode first, or check for "x-mcp-h" and "\\u").
func TestRegressionEscapedParamHeaderKeyIgnored(t *testing.T) {
	f := newFixture(t)
	bad := `{"type":"object","properties":{"a":{"type":"number","x-mcp-h\u0065ader":"A"}}}`
	assert.Error(t, f.srv.AddTool(mrtr.Tool{Name: "bad", InputSchema: json.RawMessage(bad)}, mrtr.HandlerFunc(noopTool)),
		"an x-mcp-header on a number property must be refused")

	good := `{"type":"object","properties":{"a":{"type":"string","x-mcp-h\u0065ader":"A"}}}`
	require.NoError(t, f.srv.AddTool(mrtr.Tool{Name: "good", InputSchema: json.RawMessage(good)}, mrtr.HandlerFunc(noopTool)))
	r := f.call("tools/call", obj{"name": "good", "arguments": obj{"a": "x"}}, withHeaders(mirror("tools/call", "good")))
	if assert.NotNil(t, r.Error, "missing Mcp-Param-A header was accepted") {
		assert.Equal(t, int(mrtr.CodeHeaderMismatch), r.Error.Code)
	}
}

// An initialize-era client (no _meta claim) learns which versions the
// server speaks instead of reading a header complaint.
func TestRegressionLegacyInitializeNamesSupportedVersions(t *testing.T) {
	f := newFixture(t)
	r := f.raw(`{"jsonrpc":"2.0","id":11,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`,
		withHeaders(&mrtr.Mirror{}))
	e := r.fail(t, mrtr.CodeUnsupportedVersion)
	assert.Equal(t, 400, r.Status)
	assert.JSONEq(t, `{"supported":["2026-07-28"],"requested":"2025-06-18"}`, string(e.Data))

	// With a modern claim, initialize is a removed method.
	r = f.call("initialize", obj{"_meta": meta(nil)})
	r.fail(t, mrtr.CodeMethodNotFound)
}

// A name that is not a string is a params error, not a header mismatch.
func TestRegressionNonStringNameIsInvalidParams(t *testing.T) {
	f := newFixture(t)
	f.addTool("t", noopTool)
	r := f.call("tools/call", obj{"name": 42}, withHeaders(mirror("tools/call", "42")))
	e := r.fail(t, mrtr.CodeInvalidParams)
	assert.Contains(t, e.Message, "params.name must be a string")
}

// A sealed state must not open for arguments that decode differently:
// case-variant member names (Go's decoding binds them ignoring case, last
// wins) and integers that round to the same double are refused when a
// state is sealed or opened.
func TestRegressionDigestPinsWhatHandlersRead(t *testing.T) {
	f := newFixture(t)
	var paid []string
	f.addTool("pay", func(_ context.Context, req *mrtr.Request) (mrtr.Result, error) {
		var in struct {
			Amount json.Number `json:"amount"`
		}
		if err := req.BindArguments(&in); err != nil {
			return nil, err
		}
		if ans, ok := req.Responses.Elicitation("confirm"); ok && ans.Accepted() {
			paid = append(paid, in.Amount.String())
			return textResult("paid " + in.Amount.String()), nil
		}
		return mrtr.Ask("confirm", nameForm("Pay "+in.Amount.String()+"?")), nil
	})
	caps := obj{"elicitation": obj{}}

	for _, args := range []string{
		`{"amount":5,"AMOUNT":1000}`,
		`{"amount":9007199254740993}`,
		`{"amount":0.10000000000000000001}`,
		`{"nested":{"a":1,"A":2}}`,
		`{"list":[{"x":1,"X":2}]}`,
	} {
		r := f.raw(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"pay","arguments":` + args +
			`,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}}}`)
		e := r.fail(t, mrtr.CodeInvalidParams)
		assert.Contains(t, e.Message, "cannot be bound", args)
	}

	// Canonical spellings are fine, and equal values share a state.
	_, st := f.call("tools/call", obj{"_meta": meta(caps), "name": "pay", "arguments": rawJSON(`{"amount":1e0}`)}).inputRequired(t)
	r := f.call("tools/call", obj{"_meta": meta(caps), "name": "pay", "arguments": rawJSON(`{"amount":1.0}`),
		"requestState": st, "inputResponses": obj{"confirm": obj{"action": "accept", "content": obj{"name": "x"}}}})
	r.complete(t)
	assert.Equal(t, []string{"1.0"}, paid)
}

// A Message built by hand (not by ParseMessage) with malformed params is
// an error, never a panic.
func TestRegressionMalformedParamsDoNotPanic(t *testing.T) {
	f := newFixture(t)
	f.addTool("t", noopTool)
	for _, p := range []string{`{"`, `{0`, `{"a":`, `{"a" 1}`, `{"a":"x`, `{"a":[1,`} {
		resp := f.srv.Handle(context.Background(), &mrtr.Inbound{Message: &mrtr.Message{ID: mrtr.IntID(1), Method: "tools/call", Params: json.RawMessage(p)}})
		require.NotNil(t, resp, p)
		require.NotNil(t, resp.Error, p)
	}
}

// Results served to an authenticated principal are private unless the
// description says results never depend on who asks.
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

// -32022 lists only the versions a request can name in _meta, never the
// legacy version just refused.
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

// An answer given twice under the same key is refused, not resolved by
// position.
func TestRegressionDuplicateAnswerRefused(t *testing.T) {
	f := newFixture(t)
	f.addTool("ask", func(_ context.Context, req *mrtr.Request) (mrtr.Result, error) {
		if _, ok := req.Responses.Elicitation("name"); ok {
			return textResult("done"), nil
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
