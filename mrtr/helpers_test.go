package mrtr_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mrtrkit/mrtrkit/discover"
	"github.com/mrtrkit/mrtrkit/internal/testkit"
	"github.com/mrtrkit/mrtrkit/internal/wire"
	"github.com/mrtrkit/mrtrkit/mrtr"
	"github.com/mrtrkit/mrtrkit/state"
)

// version is the protocol version every test request speaks.
const version = "2026-07-28"

// obj is a JSON object literal.
type obj = map[string]any

// fixture is a Server with an injected clock, a known key ring and a
// captured log.
type fixture struct {
	t     testing.TB
	srv   *mrtr.Server
	clock *testkit.Clock
	codec state.Codec
	logs  *testkit.LogBuffer
}

// testDesc is the default description of test servers.
func testDesc() discover.Description { return testkit.Desc("test", "1.0.0") }

// newFixture builds a server described by testDesc with an AEAD codec over
// the k1 ring; opts are applied after the defaults and may override them.
func newFixture(t testing.TB, opts ...mrtr.Option) *fixture {
	return newFixtureDesc(t, testDesc(), opts...)
}

func newFixtureDesc(t testing.TB, desc discover.Description, opts ...mrtr.Option) *fixture {
	t.Helper()
	f := &fixture{t: t, clock: testkit.NewClock(testkit.Start)}
	f.codec = testkit.Codec(t, state.WithClock(f.clock.Now))
	f.srv, f.logs = testkit.LoggedServer(t, desc, f.codec, slog.LevelDebug, opts...)
	return f
}

// addTool registers a tool with an object schema, failing the test on error.
func (f *fixture) addTool(name string, h mrtr.HandlerFunc, opts ...mrtr.RegisterOption) {
	f.t.Helper()
	require.NoError(f.t, f.srv.AddTool(mrtr.Tool{Name: name, InputSchema: json.RawMessage(`{"type":"object"}`)}, h, opts...))
}

// meta returns a params._meta object declaring caps (nil: none) plus extra
// members.
func meta(caps obj, extra ...any) obj {
	if caps == nil {
		caps = obj{}
	}
	m := obj{wire.MetaProtocolVersion: version, wire.MetaClientCapabilities: caps}
	for i := 0; i+1 < len(extra); i += 2 {
		m[extra[i].(string)] = extra[i+1]
	}
	return m
}

// Client capability sets used across tests.
var (
	capsNone        = obj{}
	capsElicit      = obj{"elicitation": obj{}}
	capsSampling    = obj{"sampling": obj{}}
	capsRoots       = obj{"roots": obj{}}
	capsEverything  = obj{"sampling": obj{"tools": obj{}, "context": obj{}}, "elicitation": obj{"form": obj{}, "url": obj{}}, "roots": obj{}}
	capsElicitSampl = obj{"elicitation": obj{}, "sampling": obj{}}
)

// inOpt adjusts the Inbound of one call.
type inOpt func(*mrtr.Inbound)

func asPrincipal(p string) inOpt           { return func(in *mrtr.Inbound) { in.Principal = p } }
func withMirror(m *mrtr.Mirror) inOpt      { return func(in *mrtr.Inbound) { in.Mirror = m } }
func withEmit(fn func([]byte) error) inOpt { return func(in *mrtr.Inbound) { in.Emit = fn } }

// request renders a JSON-RPC request with id 1. When params has no _meta
// member, one declaring capsEverything is added; a nil params means none.
func request(method string, params obj) string {
	m := obj{"jsonrpc": "2.0", "id": 1, "method": method}
	if params != nil {
		if _, ok := params["_meta"]; !ok {
			cp := obj{"_meta": meta(capsEverything)}
			for k, v := range params {
				cp[k] = v
			}
			params = cp
		}
		m["params"] = params
	}
	b, err := json.Marshal(m)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// reply is a decoded response.
type reply struct {
	// Envelope reports whether the error is about the request as a whole
	// ((*mrtr.Error).Envelope): a transport answers it outside the normal
	// result channel (Streamable HTTP: 4xx). False for a result.
	Envelope bool
	Raw      string
	ID       json.RawMessage
	Result   obj
	// ResultRaw is the result exactly as rendered.
	ResultRaw json.RawMessage
	Error     *wireError
}

type wireError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data"`
}

// call sends method with params (see request) and decodes the response.
func (f *fixture) call(method string, params obj, opts ...inOpt) reply {
	f.t.Helper()
	return f.raw(request(method, params), opts...)
}

// raw parses body, which must be a valid request, serves it and decodes
// the response.
func (f *fixture) raw(body string, opts ...inOpt) reply {
	f.t.Helper()
	return serve(f.t, f.srv, body, opts...)
}

func serve(t testing.TB, srv *mrtr.Server, body string, opts ...inOpt) reply {
	t.Helper()
	msg, _, perr := mrtr.ParseMessage([]byte(body))
	require.Nil(t, perr, "body does not parse: %s", body)
	in := &mrtr.Inbound{Message: msg}
	for _, o := range opts {
		o(in)
	}
	resp := srv.Handle(context.Background(), in)
	require.NotNil(t, resp, "no response to %s", body)
	return decodeResponse(t, resp)
}

func decodeResponse(t testing.TB, resp *mrtr.Response) reply {
	t.Helper()
	b, err := resp.AppendJSON(nil)
	require.NoError(t, err)
	require.True(t, json.Valid(b), "response is not JSON: %s", b)
	var env struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Result  json.RawMessage `json:"result"`
		Error   *wireError      `json:"error"`
	}
	require.NoError(t, json.Unmarshal(b, &env))
	require.Equal(t, "2.0", env.JSONRPC)
	require.True(t, (env.Result == nil) != (env.Error == nil), "exactly one of result and error: %s", b)
	r := reply{Envelope: resp.Error != nil && resp.Error.Envelope(), Raw: string(b), ID: env.ID, Error: env.Error, ResultRaw: env.Result}
	if env.Result != nil {
		require.NoError(t, json.Unmarshal(env.Result, &r.Result))
	}
	return r
}

// ok requires a result and returns it.
func (r reply) ok(t testing.TB) obj {
	t.Helper()
	require.Nil(t, r.Error, "unexpected error response: %s", r.Raw)
	return r.Result
}

// fail requires an error with code and returns it.
func (r reply) fail(t testing.TB, code mrtr.Code) *wireError {
	t.Helper()
	require.NotNil(t, r.Error, "expected error %d, got result: %s", code, r.Raw)
	require.Equal(t, int(code), r.Error.Code, "response: %s", r.Raw)
	return r.Error
}

// complete requires a complete result.
func (r reply) complete(t testing.TB) obj {
	t.Helper()
	res := r.ok(t)
	require.Equal(t, "complete", res["resultType"], "response: %s", r.Raw)
	return res
}

// inputRequired requires an input_required result and returns it with its
// requestState.
func (r reply) inputRequired(t testing.TB) (obj, string) {
	t.Helper()
	res := r.ok(t)
	require.Equal(t, "input_required", res["resultType"], "response: %s", r.Raw)
	tok, ok := res["requestState"].(string)
	require.True(t, ok && tok != "", "requestState missing: %s", r.Raw)
	return res, tok
}

// dataJSON decodes an error's data into a generic value.
func (e *wireError) dataJSON(t testing.TB) any {
	t.Helper()
	if e.Data == nil {
		return nil
	}
	var v any
	require.NoError(t, json.Unmarshal(e.Data, &v))
	return v
}

// requireInvalidState checks the single client-facing requestState refusal.
func requireInvalidState(t testing.TB, r reply, reason string) {
	t.Helper()
	e := r.fail(t, mrtr.CodeInvalidParams)
	require.Equal(t, "Invalid or expired requestState", e.Message)
	require.JSONEq(t, `{"reason":"`+reason+`"}`, string(e.Data))
	require.False(t, r.Envelope, "a requestState refusal is answered in-band")
}

// toolText returns the text of the first content block of a tools/call
// result.
func toolText(t testing.TB, res obj) string {
	t.Helper()
	content, ok := res["content"].([]any)
	require.True(t, ok && len(content) > 0, "no content in %v", res)
	block := content[0].(map[string]any)
	require.Equal(t, "text", block["type"])
	return block["text"].(string)
}

// nameForm is a form elicitation asking for a name.
func nameForm(message string) *mrtr.ElicitRequest {
	return &mrtr.ElicitRequest{
		Message: message,
		RequestedSchema: &mrtr.ElicitSchema{
			Type:       "object",
			Properties: map[string]json.RawMessage{"name": json.RawMessage(`{"type":"string"}`)},
			Required:   []string{"name"},
		},
	}
}

// simpleSampling is a valid sampling request.
func simpleSampling(prompt string) *mrtr.SamplingRequest {
	return &mrtr.SamplingRequest{Messages: []mrtr.SamplingMessage{mrtr.UserText(prompt)}, MaxTokens: 100}
}

// mirror returns headers that agree with a request for method and name.
func mirror(method, name string) *mrtr.Mirror {
	m := &mrtr.Mirror{
		ProtocolVersion: mrtr.HeaderValue{Value: version, Present: true},
		Method:          mrtr.HeaderValue{Value: method, Present: true},
	}
	if name != "" {
		m.Name = mrtr.HeaderValue{Value: name, Present: true}
	}
	return m
}

// logHas reports whether the captured log has a line containing every part.
func (f *fixture) logHas(parts ...string) bool {
	for _, line := range strings.Split(f.logs.String(), "\n") {
		all := true
		for _, p := range parts {
			if !strings.Contains(line, p) {
				all = false
				break
			}
		}
		if all && line != "" {
			return true
		}
	}
	return false
}

// keysOf returns the sorted keys of a JSON object value.
func keysOf(v any) []string {
	m, _ := v.(map[string]any)
	return slices.Sorted(maps.Keys(m))
}

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

func methodOf(m *mrtr.Message) string {
	if m == nil {
		return ""
	}
	return m.Method
}
