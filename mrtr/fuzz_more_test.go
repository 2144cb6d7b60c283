package mrtr_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mrtrkit/mrtrkit/mrtr"
)

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
		if !json.Valid(raw) && resp.Error == nil {
			t.Fatalf("_meta that is not JSON was accepted: %q", raw)
		}
		// The same bytes as a whole message: ParseMessage refuses what is
		// not JSON, and what it accepts is served as well.
		body := append([]byte(`{"jsonrpc":"2.0","id":2,"method":"tools/list","params":`), params...)
		body = append(body, '}')
		if parsed, _, perr := mrtr.ParseMessage(body); perr == nil {
			checkResponse(t, fx.srv.Handle(context.Background(), &mrtr.Inbound{Message: parsed}))
		} else if perr.Code != mrtr.CodeParseError && perr.Code != mrtr.CodeInvalidRequest {
			t.Fatalf("ParseMessage refused with code %d", perr.Code)
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
			if r.Error.Code != int(mrtr.CodeInvalidParams) || r.Error.Message != "Invalid cursor" {
				t.Fatalf("cursor %q refused with %d %q", cursor, r.Error.Code, r.Error.Message)
			}
			return
		}
		tools, _ := r.Result["tools"].([]any)
		if len(tools) == 0 || len(tools) > 2 {
			t.Fatalf("cursor %q: page of %d tools: %s", cursor, len(tools), r.Raw)
		}
		for i, n := range names {
			if cursor == cursorFor(n) {
				if got := tools[0].(map[string]any)["name"]; got != names[i] {
					t.Fatalf("cursor of %q starts at %v", n, got)
				}
			}
		}
		if next, ok := r.Result["nextCursor"].(string); ok {
			again := serve(t, fx.srv, request("tools/list", obj{"_meta": m, "cursor": next}))
			if again.Error != nil {
				t.Fatalf("the server's own nextCursor %q was refused: %s", next, again.Raw)
			}
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
	if err := fx.srv.AddTool(mrtr.Tool{Name: "ask"}, a); err != nil {
		f.Fatal(err)
	}
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
			if perr.Code != mrtr.CodeParseError && perr.Code != mrtr.CodeInvalidRequest {
				t.Fatalf("ParseMessage refused with code %d", perr.Code)
			}
			if perr.Code == mrtr.CodeParseError && json.Valid(raw) {
				t.Fatalf("a message whose inputResponses are valid JSON does not parse: %q: %s", raw, perr.Message)
			}
			return
		}
		resp := fx.srv.Handle(context.Background(), &mrtr.Inbound{Message: msg})
		checkResponse(t, resp)
		if resp.Error != nil {
			switch resp.Error.Code {
			case mrtr.CodeInvalidParams, mrtr.CodeInvalidRequest:
			default:
				t.Fatalf("inputResponses %q refused with code %d %q", raw, resp.Error.Code, resp.Error.Message)
			}
			return
		}
		// Accepted: raw may have closed inputResponses and added members
		// of its own, so what was accepted is the parsed message, which
		// must render its inputResponses as an object or null.
		var p struct {
			InputResponses json.RawMessage `json:"inputResponses"`
		}
		if json.Unmarshal(msg.Params, &p) != nil {
			t.Fatalf("accepted params do not decode: %q", msg.Params)
		}
		if ir := strings.TrimSpace(string(p.InputResponses)); ir != "" && ir != "null" && !strings.HasPrefix(ir, "{") {
			t.Fatalf("inputResponses %s accepted", ir)
		}
	})
}

// FuzzRequestState sends arbitrary requestState strings on a tools/call.
// A forged state must never reach the handler's later rounds: the call is
// refused with the invalid-state error, or answered as a first call when
// the state is absent.
func FuzzRequestState(f *testing.F) {
	fx := newFixture(f, mrtr.WithLogger(discardLogger))
	a := &asker{}
	if err := fx.srv.AddTool(mrtr.Tool{Name: "ask"}, a); err != nil {
		f.Fatal(err)
	}
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
			if s != "" {
				t.Fatalf("forged requestState %q accepted: %s", s, r.Raw)
			}
			return
		}
		if r.Error.Code != int(mrtr.CodeInvalidParams) {
			t.Fatalf("requestState %q refused with %d: %s", s, r.Error.Code, r.Raw)
		}
		if len(r.Raw) > 4096 {
			t.Fatalf("refusal of %d-byte state is %d bytes", len(s), len(r.Raw))
		}
	})
}
