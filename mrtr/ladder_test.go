package mrtr_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mrtrkit/mrtrkit/mrtr"
)

// ladderFixture has one tool, "echo", whose region argument is mirrored in
// the Mcp-Param-Region header.
func ladderFixture(t *testing.T) *fixture {
	f := newFixture(t)
	schema := `{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"},"n":{"type":"integer"}}}`
	require.NoError(t, f.srv.AddTool(mrtr.Tool{Name: "echo", InputSchema: json.RawMessage(schema)},
		mrtr.HandlerFunc(func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
			return textResult(string(req.Arguments)), nil
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
		name    string
		method  string
		params  obj
		headers *mrtr.Mirror
		code    mrtr.Code // 0: success
		status  int
		message string // substring of the error message, when set
	}{
		// Without headers (stdio-like transports).
		{name: "ok", method: "tools/call", params: call},
		{name: "unsupported version", method: "tools/list", params: withMeta(metaWith(mrtr.MetaProtocolVersion, "2099-01-01"), nil), code: mrtr.CodeUnsupportedVersion, status: 400},
		{name: "garbage version", method: "tools/list", params: withMeta(metaWith(mrtr.MetaProtocolVersion, "latest"), nil), code: mrtr.CodeUnsupportedVersion, status: 400},
		{name: "version not a string", method: "tools/list", params: withMeta(metaWith(mrtr.MetaProtocolVersion, 20260728), nil), code: mrtr.CodeInvalidParams, status: 400},
		{name: "no version", method: "tools/list", params: withMeta(metaWithout(mrtr.MetaProtocolVersion), nil), code: mrtr.CodeInvalidParams, status: 400},
		{name: "no params", method: "tools/list", params: nil, code: mrtr.CodeInvalidParams, status: 400},
		{name: "no _meta", method: "tools/list", params: obj{"_meta": nil}, code: mrtr.CodeInvalidParams, status: 400},
		{name: "_meta not an object", method: "tools/list", params: obj{"_meta": []any{}}, code: mrtr.CodeInvalidParams, status: 400},
		{name: "no capabilities", method: "tools/list", params: withMeta(metaWithout(mrtr.MetaClientCapabilities), nil), code: mrtr.CodeInvalidParams, status: 400},
		{name: "null capabilities", method: "tools/list", params: withMeta(metaWith(mrtr.MetaClientCapabilities, nil), nil), code: mrtr.CodeInvalidParams, status: 400},
		{name: "array capabilities", method: "tools/list", params: withMeta(metaWith(mrtr.MetaClientCapabilities, []any{}), nil), code: mrtr.CodeInvalidParams, status: 400},
		{name: "capability of the wrong type", method: "tools/list", params: withMeta(metaWith(mrtr.MetaClientCapabilities, obj{"sampling": "yes"}), nil), code: mrtr.CodeInvalidParams, status: 400},
		{name: "clientInfo without name", method: "tools/list", params: withMeta(metaWith(mrtr.MetaClientInfo, obj{"version": "1"}), nil), code: mrtr.CodeInvalidParams, status: 400},
		{name: "bad log level", method: "tools/list", params: withMeta(metaWith(mrtr.MetaLogLevel, "verbose"), nil), code: mrtr.CodeInvalidParams, status: 400},
		{name: "float progress token", method: "tools/list", params: withMeta(metaWith(mrtr.MetaProgressToken, 1.5), nil), code: mrtr.CodeInvalidParams, status: 400},
		{name: "valid optional members", method: "tools/list", params: withMeta(metaWith(mrtr.MetaClientInfo, obj{"name": "c", "version": "1"}, mrtr.MetaLogLevel, "info", mrtr.MetaProgressToken, "p", "traceparent", "00-x"), nil)},
		{name: "unknown method", method: "tools/frobnicate", params: obj{"_meta": good}, code: mrtr.CodeMethodNotFound, status: 404},
		{name: "removed method initialize", method: "initialize", params: obj{"_meta": good}, code: mrtr.CodeMethodNotFound, status: 404},
		{name: "removed method logging/setLevel", method: "logging/setLevel", params: obj{"_meta": good, "level": "info"}, code: mrtr.CodeMethodNotFound, status: 404},
		{name: "unadvertised subscriptions/listen", method: "subscriptions/listen", params: obj{"_meta": good}, code: mrtr.CodeMethodNotFound, status: 404},
		{name: "unadvertised prompts/list", method: "prompts/list", params: obj{"_meta": good}, code: mrtr.CodeMethodNotFound, status: 404},
		{name: "unknown method with bad _meta is -32602 first", method: "nope/nope", params: obj{"_meta": metaWithout(mrtr.MetaClientCapabilities)}, code: mrtr.CodeInvalidParams, status: 400},
		{name: "unknown method with bad version is -32022 first", method: "nope/nope", params: withMeta(metaWith(mrtr.MetaProtocolVersion, "2099-01-01"), nil), code: mrtr.CodeUnsupportedVersion, status: 400},
		{name: "unknown tool is in-band", method: "tools/call", params: obj{"_meta": good, "name": "nope"}, code: mrtr.CodeInvalidParams, status: 200, message: "Unknown tool: nope"},
		{name: "tool name not a string", method: "tools/call", params: obj{"_meta": good, "name": 5}, code: mrtr.CodeInvalidParams, status: 200},
		{name: "arguments not an object", method: "tools/call", params: obj{"_meta": good, "name": "echo", "arguments": []any{1}}, code: mrtr.CodeInvalidParams, status: 200},

		// With headers (Streamable HTTP).
		{name: "headers ok", method: "tools/call", params: call, headers: callMirror(nil)},
		{name: "version header missing", method: "tools/call", params: call, headers: callMirror(func(m *mrtr.Mirror) { m.ProtocolVersion = mrtr.HeaderValue{} }), code: mrtr.CodeHeaderMismatch, status: 400},
		{name: "version header invalid", method: "tools/call", params: call, headers: callMirror(func(m *mrtr.Mirror) {
			m.ProtocolVersion = mrtr.HeaderValue{Present: true, Invalid: "control character"}
		}), code: mrtr.CodeHeaderMismatch, status: 400},
		{name: "bogus body version under a good header is a mismatch", method: "tools/list", params: withMeta(metaWith(mrtr.MetaProtocolVersion, "2099-01-01"), nil), headers: mirror("tools/list", ""), code: mrtr.CodeHeaderMismatch, status: 400},
		{name: "unsupported version in header and body", method: "tools/list", params: withMeta(metaWith(mrtr.MetaProtocolVersion, "2099-01-01"), nil), headers: func() *mrtr.Mirror {
			m := mirror("tools/list", "")
			m.ProtocolVersion = hv("2099-01-01")
			return m
		}(), code: mrtr.CodeUnsupportedVersion, status: 400},
		{name: "no _meta under a good header", method: "tools/list", params: obj{"_meta": nil}, headers: mirror("tools/list", ""), code: mrtr.CodeInvalidParams, status: 400},
		{name: "numeric body version under a good header", method: "tools/list", params: withMeta(metaWith(mrtr.MetaProtocolVersion, 1), nil), headers: mirror("tools/list", ""), code: mrtr.CodeInvalidParams, status: 400},
		{name: "missing version header beats bad _meta", method: "tools/list", params: obj{"_meta": nil}, headers: &mrtr.Mirror{Method: hv("tools/list")}, code: mrtr.CodeHeaderMismatch, status: 400},
		{name: "bad _meta beats Mcp-Method mismatch", method: "tools/list", params: obj{"_meta": metaWithout(mrtr.MetaClientCapabilities)}, headers: mirror("tools/call", ""), code: mrtr.CodeInvalidParams, status: 400},
		{name: "unknown method beats Mcp-Method mismatch", method: "nope/nope", params: obj{"_meta": good}, headers: mirror("tools/list", ""), code: mrtr.CodeMethodNotFound, status: 404},
		{name: "Mcp-Method missing", method: "tools/list", params: obj{"_meta": good}, headers: &mrtr.Mirror{ProtocolVersion: hv(version)}, code: mrtr.CodeHeaderMismatch, status: 400, message: "Mcp-Method"},
		{name: "Mcp-Method mismatch", method: "tools/list", params: obj{"_meta": good}, headers: mirror("tools/call", ""), code: mrtr.CodeHeaderMismatch, status: 400, message: "Mcp-Method"},
		{name: "Mcp-Method invalid", method: "tools/list", params: obj{"_meta": good}, headers: func() *mrtr.Mirror {
			m := mirror("tools/list", "")
			m.Method.Invalid = "bad"
			return m
		}(), code: mrtr.CodeHeaderMismatch, status: 400},
		{name: "Mcp-Name not needed for tools/list", method: "tools/list", params: obj{"_meta": good}, headers: mirror("tools/list", "")},
		{name: "Mcp-Name missing", method: "tools/call", params: call, headers: callMirror(func(m *mrtr.Mirror) { m.Name = mrtr.HeaderValue{} }), code: mrtr.CodeHeaderMismatch, status: 400, message: "Mcp-Name"},
		{name: "Mcp-Name mismatch", method: "tools/call", params: call, headers: callMirror(func(m *mrtr.Mirror) { m.Name = hv("other") }), code: mrtr.CodeHeaderMismatch, status: 400, message: "Mcp-Name"},
		{name: "Mcp-Name invalid", method: "tools/call", params: call, headers: callMirror(func(m *mrtr.Mirror) { m.Name.Invalid = "bad base64" }), code: mrtr.CodeHeaderMismatch, status: 400},
		{name: "Mcp-Param missing", method: "tools/call", params: call, headers: callMirror(func(m *mrtr.Mirror) { m.Params = nil }), code: mrtr.CodeHeaderMismatch, status: 400, message: "Mcp-Param-Region"},
		{name: "Mcp-Param mismatch", method: "tools/call", params: call, headers: callMirror(func(m *mrtr.Mirror) { m.Params["region"] = hv("us") }), code: mrtr.CodeHeaderMismatch, status: 400, message: "Mcp-Param-Region"},
		{name: "Mcp-Name mismatch beats unknown tool", method: "tools/call", params: obj{"_meta": good, "name": "nope"}, headers: callMirror(nil), code: mrtr.CodeHeaderMismatch, status: 400},
		{name: "unknown tool with agreeing headers is in-band", method: "tools/call", params: obj{"_meta": good, "name": "nope"}, headers: mirror("tools/call", "nope"), code: mrtr.CodeInvalidParams, status: 200},
		{name: "Mcp-Param mismatch beats bad arguments", method: "tools/call", params: obj{"_meta": good, "name": "echo", "arguments": []any{}}, headers: callMirror(nil), code: mrtr.CodeHeaderMismatch, status: 400},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var opts []inOpt
			if tt.headers != nil {
				opts = append(opts, withHeaders(tt.headers))
			}
			r := f.call(tt.method, tt.params, opts...)
			if tt.code == 0 {
				r.complete(t)
				return
			}
			e := r.fail(t, tt.code)
			assert.Equal(t, tt.status, r.Status, "status of %s", r.Raw)
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
	r := f.call("server/discover", obj{"_meta": meta(capsNone, mrtr.MetaProtocolVersion, "2030-01-01")})
	e := r.fail(t, mrtr.CodeUnsupportedVersion)
	assert.Equal(t, "Unsupported protocol version", e.Message)
	assert.JSONEq(t, `{"supported":["2026-07-28","2026-12-01"],"requested":"2030-01-01"}`, string(e.Data))

	// Both offered versions are served.
	f.call("server/discover", obj{"_meta": meta(capsNone, mrtr.MetaProtocolVersion, "2026-12-01")}).complete(t)
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

func TestHTTPStatus(t *testing.T) {
	tests := []struct {
		name string
		err  *mrtr.Error
		want int
	}{
		{"success", nil, http.StatusOK},
		{"parse error", mrtr.ErrParse("x"), http.StatusBadRequest},
		{"invalid request", mrtr.ErrInvalidRequest("x"), http.StatusBadRequest},
		{"envelope -32602", mrtr.ErrInvalidMeta("x"), http.StatusBadRequest},
		{"in-band -32602", mrtr.ErrInvalidParams("x", nil), http.StatusOK},
		{"unknown tool", mrtr.ErrUnknownTool("t"), http.StatusOK},
		{"unknown prompt", mrtr.ErrUnknownPrompt("p"), http.StatusOK},
		{"resource not found", mrtr.ErrResourceNotFound("file:///x"), http.StatusOK},
		{"invalid state", mrtr.ErrInvalidState(false), http.StatusOK},
		{"expired state", mrtr.ErrInvalidState(true), http.StatusOK},
		{"method not found", mrtr.ErrMethodNotFound("m"), http.StatusNotFound},
		{"header mismatch", mrtr.ErrHeaderMismatch("x"), http.StatusBadRequest},
		{"missing capability", mrtr.ErrMissingCapability(mrtr.ClientCapabilities{Roots: &mrtr.Object{}}), http.StatusBadRequest},
		{"unsupported version", mrtr.ErrUnsupportedVersion([]string{version}, "x"), http.StatusBadRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, mrtr.HTTPStatus(tt.err))
			assert.Equal(t, tt.want, (&mrtr.Response{Error: tt.err, Result: json.RawMessage(`{}`)}).Status())
		})
	}
}

func TestInvalidStateError(t *testing.T) {
	b, err := json.Marshal(mrtr.ErrInvalidState(false))
	require.NoError(t, err)
	assert.JSONEq(t, `{"code":-32602,"message":"Invalid or expired requestState","data":{"reason":"invalid_request_state"}}`, string(b))
	b, err = json.Marshal(mrtr.ErrInvalidState(true))
	require.NoError(t, err)
	assert.JSONEq(t, `{"code":-32602,"message":"Invalid or expired requestState","data":{"reason":"expired_request_state"}}`, string(b))
}
