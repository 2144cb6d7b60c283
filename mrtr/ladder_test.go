package mrtr_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mrtrkit/mrtrkit/discover"
	"github.com/mrtrkit/mrtrkit/internal/wire"
	"github.com/mrtrkit/mrtrkit/mrtr"
)

// ladderFixture has one tool, "echo", whose region argument is mirrored in
// the Mcp-Param-Region header.
func ladderFixture(t *testing.T) *fixture {
	f := newFixture(t)
	schema := `{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"},"n":{"type":"integer"}}}`
	require.NoError(t, f.srv.AddTool(mrtr.Tool{Name: "echo", InputSchema: json.RawMessage(schema)},
		mrtr.HandlerFunc(func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
			return mrtr.TextResult(string(req.Arguments)), nil
		})))
	return f
}

// hv is a present header value.
func hv(v string) mrtr.HeaderValue { return mrtr.HeaderValue{Value: v, Present: true} }

func TestLadder(t *testing.T) {
	f := ladderFixture(t)
	good := meta(capsNone)
	call := obj{"_meta": good, "name": "echo", "arguments": obj{"region": "eu"}}
	withMeta := func(m any, rest obj) obj {
		p := obj{"_meta": m}
		for k, v := range rest {
			p[k] = v
		}
		return p
	}
	metaWithout := func(key string) obj {
		m := meta(capsNone)
		delete(m, key)
		return m
	}
	metaWith := func(kv ...any) obj { return meta(capsNone, kv...) }
	callMirror := func(edit func(m *mrtr.Mirror)) *mrtr.Mirror {
		m := mirror("tools/call", "echo")
		m.Params = map[string]mrtr.HeaderValue{"region": hv("eu")}
		if edit != nil {
			edit(m)
		}
		return m
	}

	tests := []struct {
		name     string
		method   string
		params   obj
		headers  *mrtr.Mirror
		code     mrtr.Code // 0: success
		envelope bool      // the error is about the request as a whole
		message  string    // substring of the error message, when set
	}{
		// Without headers (stdio-like transports).
		{name: "ok", method: "tools/call", params: call},
		{name: "unsupported version", method: "tools/list", params: withMeta(metaWith(wire.MetaProtocolVersion, "2099-01-01"), nil), code: mrtr.CodeUnsupportedVersion, envelope: true},
		{name: "garbage version", method: "tools/list", params: withMeta(metaWith(wire.MetaProtocolVersion, "latest"), nil), code: mrtr.CodeUnsupportedVersion, envelope: true},
		{name: "version not a string", method: "tools/list", params: withMeta(metaWith(wire.MetaProtocolVersion, 20260728), nil), code: mrtr.CodeInvalidParams, envelope: true},
		{name: "no version", method: "tools/list", params: withMeta(metaWithout(wire.MetaProtocolVersion), nil), code: mrtr.CodeInvalidParams, envelope: true},
		{name: "no params", method: "tools/list", params: nil, code: mrtr.CodeInvalidParams, envelope: true},
		{name: "no _meta", method: "tools/list", params: obj{"_meta": nil}, code: mrtr.CodeInvalidParams, envelope: true},
		{name: "_meta not an object", method: "tools/list", params: obj{"_meta": []any{}}, code: mrtr.CodeInvalidParams, envelope: true},
		{name: "no capabilities", method: "tools/list", params: withMeta(metaWithout(wire.MetaClientCapabilities), nil), code: mrtr.CodeInvalidParams, envelope: true},
		{name: "null capabilities", method: "tools/list", params: withMeta(metaWith(wire.MetaClientCapabilities, nil), nil), code: mrtr.CodeInvalidParams, envelope: true},
		{name: "array capabilities", method: "tools/list", params: withMeta(metaWith(wire.MetaClientCapabilities, []any{}), nil), code: mrtr.CodeInvalidParams, envelope: true},
		{name: "capability of the wrong type", method: "tools/list", params: withMeta(metaWith(wire.MetaClientCapabilities, obj{"sampling": "yes"}), nil), code: mrtr.CodeInvalidParams, envelope: true},
		{name: "clientInfo without name", method: "tools/list", params: withMeta(metaWith(wire.MetaClientInfo, obj{"version": "1"}), nil), code: mrtr.CodeInvalidParams, envelope: true},
		{name: "bad log level", method: "tools/list", params: withMeta(metaWith(wire.MetaLogLevel, "verbose"), nil), code: mrtr.CodeInvalidParams, envelope: true},
		{name: "float progress token", method: "tools/list", params: withMeta(metaWith(wire.MetaProgressToken, 1.5), nil), code: mrtr.CodeInvalidParams, envelope: true},
		{name: "valid optional members", method: "tools/list", params: withMeta(metaWith(wire.MetaClientInfo, obj{"name": "c", "version": "1"}, wire.MetaLogLevel, "info", wire.MetaProgressToken, "p", "traceparent", "00-x"), nil)},
		{name: "unknown method", method: "tools/frobnicate", params: obj{"_meta": good}, code: mrtr.CodeMethodNotFound, envelope: true},
		{name: "removed method initialize", method: "initialize", params: obj{"_meta": good}, code: mrtr.CodeMethodNotFound, envelope: true},
		{name: "removed method logging/setLevel", method: "logging/setLevel", params: obj{"_meta": good, "level": "info"}, code: mrtr.CodeMethodNotFound, envelope: true},
		{name: "unadvertised subscriptions/listen", method: "subscriptions/listen", params: obj{"_meta": good}, code: mrtr.CodeMethodNotFound, envelope: true},
		{name: "unadvertised prompts/list", method: "prompts/list", params: obj{"_meta": good}, code: mrtr.CodeMethodNotFound, envelope: true},
		{name: "unknown method with bad _meta is -32602 first", method: "nope/nope", params: obj{"_meta": metaWithout(wire.MetaClientCapabilities)}, code: mrtr.CodeInvalidParams, envelope: true},
		{name: "unknown method with bad version is -32022 first", method: "nope/nope", params: withMeta(metaWith(wire.MetaProtocolVersion, "2099-01-01"), nil), code: mrtr.CodeUnsupportedVersion, envelope: true},
		{name: "unknown tool is in-band", method: "tools/call", params: obj{"_meta": good, "name": "nope"}, code: mrtr.CodeInvalidParams, message: "Unknown tool: nope"},
		{name: "tool name not a string", method: "tools/call", params: obj{"_meta": good, "name": 5}, code: mrtr.CodeInvalidParams},
		{name: "arguments not an object", method: "tools/call", params: obj{"_meta": good, "name": "echo", "arguments": []any{1}}, code: mrtr.CodeInvalidParams},

		// With headers (Streamable HTTP).
		{name: "headers ok", method: "tools/call", params: call, headers: callMirror(nil)},
		{name: "version header missing", method: "tools/call", params: call, headers: callMirror(func(m *mrtr.Mirror) { m.ProtocolVersion = mrtr.HeaderValue{} }), code: mrtr.CodeHeaderMismatch, envelope: true},
		{name: "version header invalid", method: "tools/call", params: call, headers: callMirror(func(m *mrtr.Mirror) {
			m.ProtocolVersion = mrtr.HeaderValue{Present: true, Invalid: "control character"}
		}), code: mrtr.CodeHeaderMismatch, envelope: true},
		{name: "bogus body version under a good header is a mismatch", method: "tools/list", params: withMeta(metaWith(wire.MetaProtocolVersion, "2099-01-01"), nil), headers: mirror("tools/list", ""), code: mrtr.CodeHeaderMismatch, envelope: true},
		{name: "unsupported version in header and body", method: "tools/list", params: withMeta(metaWith(wire.MetaProtocolVersion, "2099-01-01"), nil), headers: func() *mrtr.Mirror {
			m := mirror("tools/list", "")
			m.ProtocolVersion = hv("2099-01-01")
			return m
		}(), code: mrtr.CodeUnsupportedVersion, envelope: true},
		{name: "no _meta under a good header", method: "tools/list", params: obj{"_meta": nil}, headers: mirror("tools/list", ""), code: mrtr.CodeInvalidParams, envelope: true},
		{name: "numeric body version under a good header", method: "tools/list", params: withMeta(metaWith(wire.MetaProtocolVersion, 1), nil), headers: mirror("tools/list", ""), code: mrtr.CodeInvalidParams, envelope: true},
		{name: "missing version header beats bad _meta", method: "tools/list", params: obj{"_meta": nil}, headers: &mrtr.Mirror{Method: hv("tools/list")}, code: mrtr.CodeHeaderMismatch, envelope: true},
		{name: "bad _meta beats Mcp-Method mismatch", method: "tools/list", params: obj{"_meta": metaWithout(wire.MetaClientCapabilities)}, headers: mirror("tools/call", ""), code: mrtr.CodeInvalidParams, envelope: true},
		{name: "unknown method beats Mcp-Method mismatch", method: "nope/nope", params: obj{"_meta": good}, headers: mirror("tools/list", ""), code: mrtr.CodeMethodNotFound, envelope: true},
		{name: "Mcp-Method missing", method: "tools/list", params: obj{"_meta": good}, headers: &mrtr.Mirror{ProtocolVersion: hv(version)}, code: mrtr.CodeHeaderMismatch, envelope: true, message: "Mcp-Method"},
		{name: "Mcp-Method mismatch", method: "tools/list", params: obj{"_meta": good}, headers: mirror("tools/call", ""), code: mrtr.CodeHeaderMismatch, envelope: true, message: "Mcp-Method"},
		{name: "Mcp-Method invalid", method: "tools/list", params: obj{"_meta": good}, headers: func() *mrtr.Mirror {
			m := mirror("tools/list", "")
			m.Method.Invalid = "bad"
			return m
		}(), code: mrtr.CodeHeaderMismatch, envelope: true},
		{name: "Mcp-Name not needed for tools/list", method: "tools/list", params: obj{"_meta": good}, headers: mirror("tools/list", "")},
		{name: "Mcp-Name missing", method: "tools/call", params: call, headers: callMirror(func(m *mrtr.Mirror) { m.Name = mrtr.HeaderValue{} }), code: mrtr.CodeHeaderMismatch, envelope: true, message: "Mcp-Name"},
		{name: "Mcp-Name mismatch", method: "tools/call", params: call, headers: callMirror(func(m *mrtr.Mirror) { m.Name = hv("other") }), code: mrtr.CodeHeaderMismatch, envelope: true, message: "Mcp-Name"},
		{name: "Mcp-Name invalid", method: "tools/call", params: call, headers: callMirror(func(m *mrtr.Mirror) { m.Name.Invalid = "bad base64" }), code: mrtr.CodeHeaderMismatch, envelope: true},
		{name: "Mcp-Param missing", method: "tools/call", params: call, headers: callMirror(func(m *mrtr.Mirror) { m.Params = nil }), code: mrtr.CodeHeaderMismatch, envelope: true, message: "Mcp-Param-Region"},
		{name: "Mcp-Param mismatch", method: "tools/call", params: call, headers: callMirror(func(m *mrtr.Mirror) { m.Params["region"] = hv("us") }), code: mrtr.CodeHeaderMismatch, envelope: true, message: "Mcp-Param-Region"},
		{name: "Mcp-Name mismatch beats unknown tool", method: "tools/call", params: obj{"_meta": good, "name": "nope"}, headers: callMirror(nil), code: mrtr.CodeHeaderMismatch, envelope: true},
		{name: "unknown tool with agreeing headers is in-band", method: "tools/call", params: obj{"_meta": good, "name": "nope"}, headers: mirror("tools/call", "nope"), code: mrtr.CodeInvalidParams},
		{name: "Mcp-Param mismatch beats bad arguments", method: "tools/call", params: obj{"_meta": good, "name": "echo", "arguments": []any{}}, headers: callMirror(nil), code: mrtr.CodeHeaderMismatch, envelope: true},
		{name: "Mcp-Param mismatch beats the strict door", method: "tools/call", params: obj{"_meta": good, "name": "echo", "arguments": rawJSON(`{"region":"us","n":9007199254740993}`)}, headers: callMirror(nil), code: mrtr.CodeHeaderMismatch, envelope: true},
		{name: "strict door after agreeing headers is in-band", method: "tools/call", params: obj{"_meta": good, "name": "echo", "arguments": rawJSON(`{"region":"eu","n":9007199254740993}`)}, headers: callMirror(nil), code: mrtr.CodeInvalidParams, message: "Invalid arguments: arguments.n is a number with no exact IEEE 754 double form"},
		{name: "strict door without headers", method: "tools/call", params: obj{"_meta": good, "name": "echo", "arguments": rawJSON(`{"region":"eu","Region":"eu"}`)}, code: mrtr.CodeInvalidParams, message: "Invalid arguments: arguments.Region repeats a member name"},
		{name: "unknown tool beats the strict door", method: "tools/call", params: obj{"_meta": good, "name": "nope", "arguments": rawJSON(`{"a":1,"A":1}`)}, code: mrtr.CodeInvalidParams, message: "Unknown tool: nope"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var opts []inOpt
			if tt.headers != nil {
				opts = append(opts, withMirror(tt.headers))
			}
			r := f.call(tt.method, tt.params, opts...)
			if tt.code == 0 {
				r.complete(t)
				return
			}
			e := r.fail(t, tt.code)
			assert.Equal(t, tt.envelope, r.Envelope, "envelope of %s", r.Raw)
			if tt.message != "" {
				assert.Contains(t, e.Message, tt.message)
			}
		})
	}
}

func TestUnsupportedVersionData(t *testing.T) {
	desc := testDesc()
	desc.Versions = []string{"2026-07-28", "2026-12-01"}
	f := newFixtureDesc(t, desc)
	r := f.call("server/discover", obj{"_meta": meta(capsNone, wire.MetaProtocolVersion, "2030-01-01")})
	e := r.fail(t, mrtr.CodeUnsupportedVersion)
	assert.Equal(t, "Unsupported protocol version", e.Message)
	assert.JSONEq(t, `{"supported":["2026-07-28","2026-12-01"],"requested":"2030-01-01"}`, string(e.Data))

	// Both offered versions are served.
	f.call("server/discover", obj{"_meta": meta(capsNone, wire.MetaProtocolVersion, "2026-12-01")}).complete(t)
}

func TestNotificationHasNoResponse(t *testing.T) {
	f := newFixture(t)
	for _, body := range []string{
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`,
		`{"jsonrpc":"2.0","method":"tools/list"}`,
	} {
		msg, _, err := mrtr.ParseMessage([]byte(body))
		require.Nil(t, err)
		assert.Nil(t, f.srv.Handle(context.Background(), &mrtr.Inbound{Message: msg}))
	}
}

func TestResponseEchoesID(t *testing.T) {
	f := newFixture(t)
	for _, id := range []string{`"req-1"`, `0`, `-1`, `123456789012`, `"\u00e9"`} {
		body := `{"jsonrpc":"2.0","id":` + id + `,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
		r := f.raw(body)
		r.complete(t)
		assert.Equal(t, id, string(r.ID))
		// Errors echo the id too.
		body = `{"jsonrpc":"2.0","id":` + id + `,"method":"server/discover","params":{}}`
		r = f.raw(body)
		r.fail(t, mrtr.CodeInvalidParams)
		assert.Equal(t, id, string(r.ID))
	}
}

// Error messages repeat what the caller sent only as a short prefix: as
// is when it is short visible ASCII, else Go-quoted (no control character
// or line break reaches a message or a log line) and clipped to 64 bytes
// at a rune boundary, marked "...".
func TestCallerValuesAreQuotedAndClipped(t *testing.T) {
	f := newFixture(t)
	f.addTool("t", noopTool)
	require.NoError(t, f.srv.AddPrompt(mrtr.Prompt{Name: "p"}, mrtr.HandlerFunc(noopTool)))
	require.NoError(t, f.srv.AddResource(mrtr.Resource{URI: "file:///r", Name: "r"}, mrtr.HandlerFunc(noopTool)))

	x64 := strings.Repeat("x", 64)
	x63 := strings.Repeat("x", 63)
	for _, tt := range []struct{ name, want string }{
		{"nope", "Unknown tool: nope"},
		{"a.b-c_D", "Unknown tool: a.b-c_D"},
		{x64, "Unknown tool: " + x64},
		{x64 + "y", `Unknown tool: "` + x64 + `..."`},
		{x63 + "é", `Unknown tool: "` + x63 + `..."`}, // not cut inside the rune
		{"a b", `Unknown tool: "a b"`},
		{"line\nbreak\r", `Unknown tool: "line\nbreak\r"`},
		{"bell\a", `Unknown tool: "bell\a"`},
		{`a"b\c`, `Unknown tool: "a\"b\\c"`},
		{"é", `Unknown tool: "é"`},
		{"\u2028", `Unknown tool: "\u2028"`},
	} {
		e := f.call("tools/call", obj{"name": tt.name}).fail(t, mrtr.CodeInvalidParams)
		assert.Equal(t, tt.want, e.Message, "%q", tt.name)
	}
	e := f.call("prompts/get", obj{"name": "a\tb"}).fail(t, mrtr.CodeInvalidParams)
	assert.Equal(t, `Unknown prompt: "a\tb"`, e.Message)

	// The method, and the Mcp-Method header compared with it.
	r := f.call("tools/"+x64, obj{"_meta": meta(capsNone)})
	e = r.fail(t, mrtr.CodeMethodNotFound)
	assert.Equal(t, `Method not found: "tools/`+x63[:58]+`..."`, e.Message)
	assert.True(t, r.Envelope)
	e = f.call("tools/list", obj{"_meta": meta(capsNone)}, withMirror(mirror("tools/list\n"+x64, ""))).fail(t, mrtr.CodeHeaderMismatch)
	assert.Equal(t, `Header mismatch: Mcp-Method header value "tools/list\n`+x63[:53]+`..." does not match body value tools/list`, e.Message)

	// Values in data are clipped.
	long := "file:///" + strings.Repeat("a", 100)
	e = f.call("resources/read", obj{"uri": long}).fail(t, mrtr.CodeInvalidParams)
	assert.Equal(t, obj{"uri": long[:64] + "..."}, e.dataJSON(t))
	e = f.call("tools/list", obj{"_meta": meta(capsNone, wire.MetaProtocolVersion, "2099-"+x64)}).fail(t, mrtr.CodeUnsupportedVersion)
	assert.Equal(t, obj{"supported": []any{version}, "requested": "2099-" + x63[:59] + "..."}, e.dataJSON(t))
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
