package mrtr_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"log/slog"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/mrtrkit/mrtrkit/mrtr"
)

var discardLogger = slog.New(slog.NewTextHandler(io.Discard, nil))

func FuzzParseMessage(f *testing.F) {
	for _, seed := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`,
		`{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":"t","arguments":{"a":[1,2,{"b":null}]}}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled"}`,
		`{"jsonrpc":"2.0","id":null,"method":"m"}`,
		`{"jsonrpc":"2.0","id":1.5,"method":"m"}`,
		`{"jsonrpc":"2.0","id":1,"result":{}}`,
		`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"x"}}`,
		`{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"x"}}`,
		`{"jsonrpc":"2.0","id":1,"method":"m","params":[]}`,
		`[{"jsonrpc":"2.0","id":1,"method":"m"}]`,
		`{"jsonrpc":"2.0","id":1,"method":""}`,
		`{"jsonrpc":"2.0","id":1,"METHOD":"m"}`,
		`{"jsonrpc":"2.0","id":99999999999999999999,"method":"m"}`,
		` {"jsonrpc" : "2.0" , "id" : "\u0000" , "method" : "\ud800"} `,
		`{`, `null`, `"x"`, ``, "\xff",
	} {
		f.Add([]byte(seed))
	}
	srv := newFixture(f, mrtr.WithLogger(discardLogger)).srv
	f.Fuzz(func(t *testing.T, body []byte) {
		msg, id, err := mrtr.ParseMessage(body)
		require.Falsef(t, (msg == nil) == (err == nil), "exactly one of message and error expected: %v %v", msg, err)
		if err != nil {
			require.Falsef(t, err.Code != mrtr.CodeParseError && err.Code != mrtr.CodeInvalidRequest, "unexpected code %d", err.Code)
			require.Falsef(t, !err.Envelope(), "a message that does not parse is not an envelope error: %d", err.Code)
			require.Falsef(t, !id.IsZero() && !json.Valid([]byte(id.String())), "echoed id is not JSON: %q", id.String())
			b, merr := (&mrtr.Response{ID: id, Error: err}).AppendJSON(nil)
			require.Falsef(t, merr != nil || !json.Valid(b), "error response is not JSON: %q %v", b, merr)
			return
		}
		require.Falsef(t, id.String() != msg.ID.String(), "returned id %q, message id %q", id.String(), msg.ID.String())
		if !msg.ID.IsZero() {
			var v any
			require.Falsef(t, json.Unmarshal([]byte(msg.ID.String()), &v) != nil, "id is not JSON: %q", msg.ID.String())
			_, isString := v.(string)
			_, isNumber := v.(float64)
			require.Truef(t, isString || isNumber, "id is neither a string nor a number: %q", msg.ID.String())
		}
		if msg.IsResponse() {
			// A response (from a client of the initialize era): exactly one
			// of result and error, and Handle refuses it.
			require.Falsef(t, msg.Method != "" || msg.Params != nil || (msg.Result == nil) == (msg.Error == nil), "malformed response message: %+v", msg)
			require.Falsef(t, msg.Result != nil && (msg.Result[0] != '{' || msg.ID.IsZero()), "result response without an object result or an id: %+v", msg)
			resp := srv.Handle(context.Background(), &mrtr.Inbound{Message: msg})
			require.Falsef(t, resp == nil || resp.Error == nil || resp.Error.Code != mrtr.CodeInvalidRequest || resp.ID.String() != msg.ID.String(), "a response message was not refused with -32600: %+v", resp)
			return
		}
		require.NotEmpty(t, msg.Method, "empty method")
		require.Falsef(t, msg.Result != nil || msg.Error != nil, "a request with a result or an error: %+v", msg)
		require.Falsef(t, msg.Params != nil && (len(msg.Params) == 0 || msg.Params[0] != '{'), "params is not an object: %q", msg.Params)
		b, merr := (&mrtr.Response{ID: msg.ID, Result: json.RawMessage(`{}`)}).AppendJSON(nil)
		require.Falsef(t, merr != nil || !json.Valid(b), "response is not JSON: %q %v", b, merr)
	})
}

// messageID returns the id of a request with the JSON id text raw, as
// ParseMessage reads it: handler tests that build a Message by hand need
// one, since a Message without an id is a notification.
func messageID(tb testing.TB, raw string) mrtr.ID {
	tb.Helper()
	msg, _, err := mrtr.ParseMessage([]byte(`{"jsonrpc":"2.0","id":` + raw + `,"method":"m"}`))
	require.Nil(tb, err)
	return msg.ID
}

// codeUndecodable is the error code the fuzz handlers answer with when
// arguments that passed the strict door do not decode: checkResponse fails
// on it.
const codeUndecodable mrtr.Code = -1

// fuzzServer serves a tool, a prompt, a resource template and completions;
// the tool asks for a name in round 0 and mirrors "region".
func fuzzServer(t testing.TB) *fixture {
	fx := newFixture(t, mrtr.WithLogger(discardLogger), mrtr.WithPageSize(1))
	h := mrtr.HandlerFunc(func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
		if req.Round == 0 && req.Responses.Len() == 0 {
			return &mrtr.InputRequired{Requests: map[string]mrtr.InputRequest{
				"f": nameForm("name?"),
				"s": simpleSampling("x"),
			}, State: []byte("s0")}, nil
		}
		switch req.Method {
		case "prompts/get":
			return &mrtr.GetPromptResult{}, nil
		case "resources/read":
			return &mrtr.ReadResourceResult{}, nil
		}
		// What passed the strict door decodes with encoding/json.
		var args map[string]any
		if err := json.Unmarshal(req.Arguments, &args); err != nil {
			return nil, mrtr.NewError(codeUndecodable, "arguments passed the door but do not decode: "+err.Error(), nil)
		}
		return mrtr.TextResult("ok"), nil
	})
	schema := `{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"},"n":{"type":"integer","x-mcp-header":"N"}}}`
	require.NoError(t, fx.srv.AddTool(mrtr.Tool{Name: "t", InputSchema: json.RawMessage(schema)}, h, mrtr.StaticAsks(nil)))
	require.NoError(t, fx.srv.AddTool(mrtr.Tool{Name: "u"}, h))
	require.NoError(t, fx.srv.AddPrompt(mrtr.Prompt{Name: "t", Arguments: []mrtr.PromptArgument{{Name: "a", Required: true}}}, h))
	require.NoError(t, fx.srv.AddResourceTemplate(mrtr.ResourceTemplate{URITemplate: "file:///{a}/{b}", Name: "f"}, h))
	fx.srv.SetCompletionHandler(mrtr.CompletionHandlerFunc(func(ctx context.Context, req *mrtr.CompleteRequest) (*mrtr.Completion, error) {
		return &mrtr.Completion{Values: []string{req.Argument.Value}}, nil
	}))
	return fx
}

// checkResponse verifies the invariants of every response.
func checkResponse(t *testing.T, resp *mrtr.Response) {
	require.NotNil(t, resp, "no response to a request")
	b, err := resp.AppendJSON(nil)
	require.Falsef(t, err != nil || !json.Valid(b), "response is not JSON: %q %v", b, err)
	var env struct {
		Result map[string]json.RawMessage `json:"result"`
		Error  *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	require.NoError(t, json.Unmarshal(b, &env), "response: %s", b)
	require.Falsef(t, (env.Result == nil) == (env.Error == nil), "exactly one of result and error expected: %s", b)
	if e := resp.Error; e != nil {
		require.Falsef(t, e.Code == codeUndecodable, "%s", e.Message)
		// Envelope errors are the ladder's envelope codes and -32602 for
		// _meta; every other error travels in-band.
		switch e.Code {
		case mrtr.CodeParseError, mrtr.CodeInvalidRequest, mrtr.CodeMethodNotFound, mrtr.CodeHeaderMismatch, mrtr.CodeMissingCapability, mrtr.CodeUnsupportedVersion:
			require.Falsef(t, !e.Envelope(), "%d is not an envelope error: %s", e.Code, b)
		case mrtr.CodeInvalidParams:
			require.Falsef(t, e.Envelope() != strings.HasPrefix(e.Message, "Invalid _meta: "), "-32602 envelope=%v: %s", e.Envelope(), b)
		default:
			require.Falsef(t, e.Envelope(), "%d is an envelope error: %s", e.Code, b)
		}
		// Values the caller sent are quoted: no control character or line
		// break reaches a message.
		require.Falsef(t, !utf8.ValidString(e.Message) || strings.IndexFunc(e.Message, unicode.IsControl) >= 0, "message with a raw control character or invalid UTF-8: %q", e.Message)
	}
	if env.Result != nil {
		rt := string(env.Result["resultType"])
		require.Falsef(t, rt != `"complete"` && rt != `"input_required"`, "bad resultType: %s", b)
		require.Containsf(t, env.Result, "_meta", "result without _meta: %s", b)
		if rt == `"input_required"` {
			require.NotContainsf(t, env.Result, "ttlMs", "input_required with ttlMs: %s", b)
		}
	}
	require.Falsef(t, env.Error != nil && env.Error.Code == int(mrtr.CodeInternalError) && env.Error.Message != "Internal error", "internal error with detail: %s", b)
}

var fuzzMethods = []string{"tools/call", "tools/call", "tools/call", "prompts/get", "resources/read", "tools/list", "prompts/list", "resources/list", "resources/templates/list", "completion/complete", "server/discover", "nope"}

func FuzzHandle(f *testing.F) {
	fx := fuzzServer(f)
	m := string(mustJSON(meta(capsEverything)))
	_, tok := fx.call("tools/call", obj{"name": "t", "arguments": obj{"region": "eu"}}).inputRequired(f)
	for _, seed := range []string{
		`{"_meta":` + m + `,"name":"t","arguments":{"region":"eu"}}`,
		`{"_meta":` + m + `,"name":"t","arguments":{"region":"eu"},"requestState":"` + tok + `","inputResponses":{"f":{"action":"accept","content":{"name":"x"}},"s":{"role":"assistant","content":{"type":"text","text":"x"},"model":"m"}}}`,
		`{"_meta":` + m + `,"name":"t","arguments":{"region":"eu"},"requestState":"` + tok[:len(tok)/2] + `"}`,
		`{"_meta":` + m + `,"name":"t","arguments":[],"requestState":7,"inputResponses":[]}`,
		`{"_meta":` + m + `,"name":"u","arguments":{"n":1e400}}`,
		`{"_meta":` + m + `,"name":"t","arguments":{"a":"1"}}`,
		`{"_meta":` + m + `,"uri":"file:///x/y"}`,
		`{"_meta":` + m + `,"cursor":"bjp1"}`,
		`{"_meta":` + m + `,"ref":{"type":"ref/prompt","name":"t"},"argument":{"name":"a","value":"v"}}`,
		`{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}`,
		`{"_meta":null}`, `{}`, `null`, `[]`, `{"_meta":{"io.modelcontextprotocol/protocolVersion":5}}`,
	} {
		for _, method := range []uint8{0, 3, 4, 5, 9} {
			f.Add(method, false, []byte(seed))
		}
		f.Add(uint8(0), true, []byte(seed))
	}
	id := messageID(f, "1")
	f.Fuzz(func(t *testing.T, method uint8, headers bool, params []byte) {
		msg := &mrtr.Message{ID: id, Method: fuzzMethods[int(method)%len(fuzzMethods)]}
		if len(params) > 0 {
			msg.Params = params
		}
		in := &mrtr.Inbound{Message: msg, Principal: ""}
		if headers {
			mr := mirror(msg.Method, "t")
			mr.Params = map[string]mrtr.HeaderValue{"region": hv("eu"), "n": hv("1")}
			in.Mirror = mr
		}
		checkResponse(t, fx.srv.Handle(context.Background(), in))

		// The same bytes as a whole message through ParseMessage.
		var body bytes.Buffer
		body.WriteString(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":`)
		body.Write(params)
		body.WriteString(`}`)
		if parsed, _, perr := mrtr.ParseMessage(body.Bytes()); perr == nil {
			checkResponse(t, fx.srv.Handle(context.Background(), &mrtr.Inbound{Message: parsed}))
		}
	})
}

var fuzzKeys = []string{"s", "f", "u", "r", "unasked"}

func FuzzDecodeAnswer(f *testing.F) {
	fx := newFixture(f, mrtr.WithLogger(discardLogger))
	a := &asker{}
	require.NoError(f, fx.srv.AddTool(mrtr.Tool{Name: "ask"}, mrtr.HandlerFunc(func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
		if req.Round == 0 {
			return a.Handle(ctx, req)
		}
		for _, k := range req.Responses.Keys() {
			switch k {
			case "s", "f", "u", "r":
			default:
				return nil, mrtr.NewError(mrtr.CodeInternalError, "unasked key reached the handler: "+k, nil)
			}
		}
		if s, ok := req.Responses.Sampling("s"); ok {
			_ = s.Text()
		}
		return mrtr.TextResult("ok"), nil
	})))
	_, tok := fx.call("tools/call", obj{"name": "ask"}).inputRequired(f)
	for _, seed := range []string{
		`{"role":"assistant","content":{"type":"text","text":"x"},"model":"m","stopReason":"endTurn"}`,
		`{"role":"user","content":[{"type":"image","data":"AAE=","mimeType":"image/png"},{"type":"tool_use","id":"1","name":"x","input":{}}],"model":"m"}`,
		`{"action":"accept","content":{"a":"x","b":1,"c":true,"d":["x"]}}`,
		`{"action":"decline"}`, `{"action":"cancel","content":null}`,
		`{"roots":[{"uri":"file:///a","name":"a","_meta":{}}]}`, `{"roots":[]}`,
		`12345`, `"x"`, `[]`, `{}`, `null`, `{"role":5}`, `{"content":{"type":"text","text":{}}}`,
	} {
		for k := range fuzzKeys {
			f.Add(uint8(k), []byte(seed))
		}
	}
	prefix := `{"_meta":` + string(mustJSON(meta(capsEverything))) + `,"name":"ask","requestState":"` + tok + `","inputResponses":{"`
	id := messageID(f, "1")
	f.Fuzz(func(t *testing.T, key uint8, answer []byte) {
		k := fuzzKeys[int(key)%len(fuzzKeys)]
		params := []byte(prefix + k + `":`)
		params = append(params, answer...)
		params = append(params, "}}"...)
		resp := fx.srv.Handle(context.Background(), &mrtr.Inbound{Message: &mrtr.Message{ID: id, Method: "tools/call", Params: params}})
		checkResponse(t, resp)
		if resp.Error != nil {
			require.Containsf(t, []mrtr.Code{mrtr.CodeInvalidParams, mrtr.CodeInvalidRequest}, resp.Error.Code, "unexpected error %d %s for %q", resp.Error.Code, resp.Error.Message, answer)
			require.Falsef(t, resp.Error.Code == mrtr.CodeInvalidParams && k == "unasked" && json.Valid(answer), "an answer to an unasked key was judged: %s", resp.Error.Message)
		}
	})
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// FuzzParamsMeta feeds arbitrary bytes as params._meta of every method.
// Nothing may panic, every response is well formed (checkResponse), and a
// refusal of _meta is an envelope -32602 whose message starts "Invalid
// _meta: " or the unsupported-version / missing-capability codes.
func FuzzParamsMeta(f *testing.F) {
	fx := fuzzServer(f)
	for _, seed := range []string{
		string(mustJSON(meta(capsEverything))),
		string(mustJSON(meta(nil))),
		`{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}`,
		`{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"sampling":[]}}`,
		`{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":5}}}`,
		`{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/logLevel":"nope"}`,
		`{"io.modelcontextprotocol/protocolVersion":"2026-07-28","progressToken":{"a":1}}`,
		`{"io.modelcontextprotocol/protocolVersion":"2026-07-28","traceparent":"00-` + strings.Repeat("0", 32) + `-` + strings.Repeat("0", 16) + `-01"}`,
		`{"io.modelcontextprotocol/protocolVersion":"1999-01-01"}`,
		`{"io.modelcontextprotocol/protocolVersion":"2026-07-28\n"}`,
		`{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/protocolVersion":"2025-11-25"}`,
		`{"io.modelcontextprotocol/clientInfo":{"name":"\u0000","version":1}}`,
		`null`, `[]`, `"x"`, `{}`, `{"a":`, "\xff",
	} {
		for _, m := range []uint8{0, 5, 9, 10} {
			f.Add(m, []byte(seed))
		}
	}
	id := messageID(f, "1")
	f.Fuzz(func(t *testing.T, method uint8, raw []byte) {
		params := make([]byte, 0, len(raw)+64)
		params = append(params, `{"name":"t","arguments":{"region":"eu"},"_meta":`...)
		params = append(params, raw...)
		params = append(params, '}')
		msg := &mrtr.Message{ID: id, Method: fuzzMethods[int(method)%len(fuzzMethods)], Params: params}
		resp := fx.srv.Handle(context.Background(), &mrtr.Inbound{Message: msg})
		checkResponse(t, resp)
		require.Falsef(t, !json.Valid(raw) && resp.Error == nil, "_meta that is not JSON was accepted: %q", raw)
		// The same bytes as a whole message: ParseMessage refuses what is
		// not JSON, and what it accepts is served as well.
		body := append([]byte(`{"jsonrpc":"2.0","id":2,"method":"tools/list","params":`), params...)
		body = append(body, '}')
		if parsed, _, perr := mrtr.ParseMessage(body); perr == nil {
			checkResponse(t, fx.srv.Handle(context.Background(), &mrtr.Inbound{Message: parsed}))
		} else {
			require.Containsf(t, []mrtr.Code{mrtr.CodeParseError, mrtr.CodeInvalidRequest}, perr.Code, "ParseMessage refused with code %d", perr.Code)
		}
	})
}

// cursorFor is a cursor in the documented format: base64url (no padding)
// of "n:" and the name of the first item of the page.
func cursorFor(name string) string {
	return base64.RawURLEncoding.EncodeToString([]byte("n:" + name))
}

// FuzzListCursor feeds arbitrary cursors to tools/list. A cursor is
// either refused with -32602 "Invalid cursor" or answers a page; the
// cursor of an existing tool answers the page starting at it; every
// nextCursor handed out is accepted in turn (the round trip).
func FuzzListCursor(f *testing.F) {
	fx := newFixture(f, mrtr.WithLogger(discardLogger), mrtr.WithPageSize(2))
	names := []string{"a", "b", "c", "d", "e_f", "x.y-z"}
	for _, n := range names {
		fx.addTool(n, func(context.Context, *mrtr.Request) (mrtr.Result, error) { return mrtr.TextResult("ok"), nil })
	}
	for _, n := range names {
		f.Add(cursorFor(n))
	}
	for _, s := range []string{"", "bjp1", "n:a", cursorFor(""), cursorFor("zzz"), cursorFor("a") + "=", "bjp", "!!!", "bjo", base64.StdEncoding.EncodeToString([]byte("n:a")), strings.Repeat("A", 4096), "\xff", "bg"} {
		f.Add(s)
	}
	m := meta(nil)
	f.Fuzz(func(t *testing.T, cursor string) {
		r := serve(t, fx.srv, request("tools/list", obj{"_meta": m, "cursor": cursor}))
		if r.Error != nil {
			require.Falsef(t, r.Error.Code != int(mrtr.CodeInvalidParams) || r.Error.Message != "Invalid cursor", "cursor %q refused with %d %q", cursor, r.Error.Code, r.Error.Message)
			return
		}
		tools, _ := r.Result["tools"].([]any)
		require.Falsef(t, len(tools) == 0 || len(tools) > 2, "cursor %q: page of %d tools: %s", cursor, len(tools), r.Raw)
		for i, n := range names {
			if cursor == cursorFor(n) {
				require.Equalf(t, names[i], tools[0].(map[string]any)["name"], "cursor of %q", n)
			}
		}
		if next, ok := r.Result["nextCursor"].(string); ok {
			again := serve(t, fx.srv, request("tools/list", obj{"_meta": m, "cursor": next}))
			require.Falsef(t, again.Error != nil, "the server's own nextCursor %q was refused: %s", next, again.Raw)
		}
	})
}

// FuzzInputResponses feeds arbitrary bytes as the whole
// params.inputResponses of a retry that carries a genuine requestState.
// Nothing may panic; a refusal is -32602 (or the envelope's -32600); an
// inputResponses that is not a JSON object (or null) is never accepted.
func FuzzInputResponses(f *testing.F) {
	fx := newFixture(f, mrtr.WithLogger(discardLogger))
	a := &asker{}
	require.NoError(f, fx.srv.AddTool(mrtr.Tool{Name: "ask"}, a))
	_, tok := fx.call("tools/call", obj{"name": "ask", "_meta": meta(capsEverything)}).inputRequired(f)
	for _, seed := range []string{
		`{"s":{"role":"assistant","content":{"type":"text","text":"x"},"model":"m"},"f":{"action":"accept","content":{"name":"x"}},"u":{"action":"accept"},"r":{"roots":[]}}`,
		`{"f":{"action":"decline"}}`,
		`{"unasked":{"action":"accept"}}`,
		`{"f":{"action":"accept"},"f":{"action":"decline"}}`,
		`{"":null}`, `{"s":[]}`, `{"s":"` + strings.Repeat("x", 1000) + `"}`,
		`{}`, `[]`, `null`, `1`, `"x"`, `{"f":`, "\xff", `{"f\n":{"action":"accept"}}`,
	} {
		f.Add([]byte(seed))
	}
	prefix := `{"_meta":` + string(mustJSON(meta(capsEverything))) + `,"name":"ask","requestState":"` + tok + `","inputResponses":`
	f.Fuzz(func(t *testing.T, raw []byte) {
		// The whole message goes through ParseMessage first, as a
		// transport sends it: raw that is not one JSON value (say "{}}")
		// makes the body invalid, which ParseMessage refuses.
		body := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":` + prefix)
		body = append(body, raw...)
		body = append(body, "}}"...)
		msg, _, perr := mrtr.ParseMessage(body)
		if perr != nil {
			require.Falsef(t, perr.Code != mrtr.CodeParseError && perr.Code != mrtr.CodeInvalidRequest, "ParseMessage refused with code %d", perr.Code)
			require.Falsef(t, perr.Code == mrtr.CodeParseError && json.Valid(raw), "a message whose inputResponses are valid JSON does not parse: %q: %s", raw, perr.Message)
			return
		}
		resp := fx.srv.Handle(context.Background(), &mrtr.Inbound{Message: msg})
		checkResponse(t, resp)
		if resp.Error != nil {
			require.Containsf(t, []mrtr.Code{mrtr.CodeInvalidParams, mrtr.CodeInvalidRequest}, resp.Error.Code, "inputResponses %q refused with code %d %q", raw, resp.Error.Code, resp.Error.Message)
			return
		}
		// Accepted: raw may have closed inputResponses and added members
		// of its own, so what was accepted is the parsed message, which
		// must render its inputResponses as an object or null.
		var p struct {
			InputResponses json.RawMessage `json:"inputResponses"`
		}
		require.Falsef(t, json.Unmarshal(msg.Params, &p) != nil, "accepted params do not decode: %q", msg.Params)
		ir := strings.TrimSpace(string(p.InputResponses))
		require.Falsef(t, ir != "" && ir != "null" && !strings.HasPrefix(ir, "{"), "inputResponses %s accepted", ir)
	})
}

// FuzzRequestState sends arbitrary requestState strings on a tools/call.
// A forged state must never reach the handler's later rounds: the call is
// refused with the invalid-state error, or answered as a first call when
// the state is absent.
func FuzzRequestState(f *testing.F) {
	fx := newFixture(f, mrtr.WithLogger(discardLogger))
	a := &asker{}
	require.NoError(f, fx.srv.AddTool(mrtr.Tool{Name: "ask"}, a))
	_, tok := fx.call("tools/call", obj{"name": "ask", "_meta": meta(capsEverything)}).inputRequired(f)
	for _, s := range []string{tok[:len(tok)-1], tok[1:], tok + "A", "", "A", "AQEC", strings.Repeat("A", 5000), "\n", "time=x level=ERROR msg=forged"} {
		f.Add(s)
	}
	m := meta(capsEverything)
	answers := obj{"f": obj{"action": "decline"}}
	f.Fuzz(func(t *testing.T, s string) {
		if s == tok {
			return
		}
		r := serve(t, fx.srv, request("tools/call", obj{"_meta": m, "name": "ask", "requestState": s, "inputResponses": answers}))
		if r.Error == nil {
			require.Falsef(t, s != "", "forged requestState %q accepted: %s", s, r.Raw)
			return
		}
		require.Falsef(t, r.Error.Code != int(mrtr.CodeInvalidParams), "requestState %q refused with %d: %s", s, r.Error.Code, r.Raw)
		require.Falsef(t, len(r.Raw) > 4096, "refusal of %d-byte state is %d bytes", len(s), len(r.Raw))
	})
}
