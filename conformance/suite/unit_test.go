package suite

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"math/bits"
	"reflect"
	"strings"
	"testing"
)

func TestFlipBitChangesOneEncodedBit(t *testing.T) {
	// Tokens of every length modulo 4, so that the last character carries
	// 2, 4 or 6 bits of payload.
	for n := 1; n <= 9; n++ {
		payload := bytes.Repeat([]byte{0xA5}, n)
		for _, enc := range []*base64.Encoding{base64.RawURLEncoding, base64.RawStdEncoding, base64.URLEncoding} {
			s := enc.EncodeToString(payload)
			for _, pos := range []flipPosition{flipFirst, flipMiddle, flipLast} {
				out, desc, ok := flipBit(s, pos)
				if !ok {
					t.Fatalf("%q: no flip at %d", s, pos)
				}
				if len(out) != len(s) || out == s {
					t.Fatalf("%q → %q (%s)", s, out, desc)
				}
				// The result decodes strictly, to bytes that differ from
				// the original in exactly one bit.
				got, err := enc.Strict().DecodeString(out)
				if err != nil {
					t.Fatalf("%q → %q does not decode strictly: %v (%s)", s, out, err, desc)
				}
				diff := 0
				for i := range got {
					diff += bits.OnesCount8(got[i] ^ payload[i])
				}
				if diff != 1 {
					t.Fatalf("%q → %q changes %d bits (%s)", s, out, diff, desc)
				}
			}
		}
	}
}

func TestFlipBitKeepsAlphabet(t *testing.T) {
	for _, tc := range []struct {
		in    string
		alpha alphabet
		chars string
	}{
		{"0123456789abcdef", alphaHex, "0123456789abcdef"},
		{"DEADBEEF", alphaHex, "0123456789ABCDEF"},
		{"eyJhbGciOiJI.eyJzdWIiOiIx.c2lnbmF0dXJl", alphaBase64, b64URLChars[:62] + "."},
		{"ab-_cd", alphaBase64URL, b64URLChars},
		{"ab+/cd==", alphaBase64Std, b64StdChars + "="},
		{"not base64!", alphaOther, ""},
	} {
		if got := detectAlphabet(tc.in); got != tc.alpha {
			t.Errorf("%q: alphabet %v, want %v", tc.in, got, tc.alpha)
		}
		for _, pos := range []flipPosition{flipFirst, flipMiddle, flipLast} {
			out, _, ok := flipBit(tc.in, pos)
			if !ok || out == tc.in {
				t.Fatalf("%q: no change at %d", tc.in, pos)
			}
			if tc.chars == "" {
				continue
			}
			for i := 0; i < len(out); i++ {
				if !strings.ContainsRune(tc.chars, rune(out[i])) {
					t.Errorf("%q → %q: %q is outside the alphabet", tc.in, out, out[i])
				}
			}
		}
	}
	// Padding and segment dots are never changed.
	out, _, _ := flipBit("QQ==", flipLast)
	if !strings.HasSuffix(out, "==") || out[1] == 'Q' {
		t.Errorf("QQ== → %q", out)
	}
	if _, _, ok := flipBit("", flipMiddle); ok {
		t.Error("flipped a bit of the empty string")
	}
}

func TestHugeAndTruncate(t *testing.T) {
	if got := hugeState("abc-", 10); got != "abc-AAAAAA" {
		t.Errorf("hugeState: %q", got)
	}
	if got := truncateOne("héé"); got != "hé" {
		t.Errorf("truncateOne: %q", got)
	}
}

func TestTruncateAndAppendKeepPadding(t *testing.T) {
	for in, want := range map[string][2]string{
		"QUJD":         {"QUJ", "QUJDA"},
		"QUI=":         {"QU=", "QUIA="},
		"QQ==":         {"Q==", "QQA=="},
		"eyJh.c2ln":    {"eyJh.c2l", "eyJh.c2lnA"},
		"eyJh.c2k=.":   {"eyJh.c2=.", "eyJh.c2kA=."},
		"deadbeef":     {"deadbee", "deadbeef0"},
		"not base64!é": {"not base64!", "not base64!éx"},
	} {
		if got, _ := truncatePayload(in); got != want[0] {
			t.Errorf("truncatePayload(%q) = %q, want %q", in, got, want[0])
		}
		if got, _ := appendPayload(in); got != want[1] {
			t.Errorf("appendPayload(%q) = %q, want %q", in, got, want[1])
		}
	}
	// A lenient decoder that accepts unpadded input cannot read the
	// truncated state as the original bytes.
	orig := base64.StdEncoding.EncodeToString([]byte("abcd"))
	tr, _ := truncatePayload(orig)
	if b, err := base64.RawStdEncoding.DecodeString(strings.TrimRight(tr, "=")); err == nil && string(b) == "abcd" {
		t.Errorf("%q truncated to %q still decodes to the same bytes", orig, tr)
	}
}

func TestFindJSONStateAndForge(t *testing.T) {
	payload := `{"tool":"t","args":{"target":"nothing","n":1},"step":1}`
	for name, tc := range map[string]struct {
		state string
		enc   *base64.Encoding
	}{
		"plain":           {payload, nil},
		"base64url":       {base64.RawURLEncoding.EncodeToString([]byte(payload)), base64.RawURLEncoding},
		"base64 (padded)": {base64.StdEncoding.EncodeToString([]byte(payload + " ")), base64.StdEncoding},
		"jwt-like": {base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"HS256"}`)) + "." +
			base64.RawURLEncoding.EncodeToString([]byte(payload)) + ".c2ln", base64.RawURLEncoding},
	} {
		t.Run(name, func(t *testing.T) {
			js, ok := findJSONState(tc.state)
			if !ok {
				t.Fatalf("%q: no JSON found", tc.state)
			}
			decode := func(s string) map[string]any {
				if tc.enc != nil {
					segs := strings.Split(s, ".")
					seg := segs[0]
					if len(segs) > 1 {
						seg = segs[1]
					}
					b, err := tc.enc.Strict().DecodeString(seg)
					if err != nil {
						t.Fatalf("%q does not decode: %v", s, err)
					}
					s = string(b)
				}
				var v map[string]any
				if err := json.Unmarshal([]byte(s), &v); err != nil {
					t.Fatalf("%q is not JSON: %v", s, err)
				}
				return v
			}
			same, _ := js.sameMeaning()
			if same == tc.state || !reflect.DeepEqual(decode(same), decode(tc.state)) {
				t.Errorf("sameMeaning: %q", same)
			}
			if strings.Count(same, ".") != strings.Count(tc.state, ".") {
				t.Errorf("segments changed: %q", same)
			}
			other, ok := js.withValues(json.RawMessage(`{"n":1,"target":"nothing"}`), json.RawMessage(`{"n":1,"target":"everything"}`))
			if !ok {
				t.Fatal("withValues found no argument")
			}
			if got := decode(other)["args"].(map[string]any)["target"]; got != "everything" {
				t.Errorf("withValues: %q holds target %v", other, got)
			}
		})
	}
	for _, opaque := range []string{"", "c3RhdGU", "not json at all", base64.RawURLEncoding.EncodeToString([]byte(`"a string"`)), "deadbeef"} {
		if _, ok := findJSONState(opaque); ok {
			t.Errorf("%q taken for JSON", opaque)
		}
	}
}

func TestRefusedAnswerKey(t *testing.T) {
	mk := func(code int, msg, data string) reply {
		return reply{Evidence: Evidence{Error: &RPCError{Code: code, Message: msg, Data: json.RawMessage(data)}}}
	}
	for _, tc := range []struct {
		rep  reply
		want string
	}{
		{mk(-32602, "Invalid answer", `{"key":"pick_files"}`), "pick_files"},
		{mk(-32602, "Invalid answer to pick_files: not a list", ``), "pick_files"},
		{mk(-32602, "Invalid answer to pick_files_extra", ``), ""},
		{mk(-32602, "bad requestState", `{"key":"other"}`), ""},
		{mk(-32600, "Invalid answer to pick_files", `{"key":"pick_files"}`), ""},
	} {
		got, _ := refusedAnswerKey(tc.rep, []string{"pick_files"})
		if got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.rep.Error, got, tc.want)
		}
	}
}

func TestAnswerAll(t *testing.T) {
	reqs := map[string]json.RawMessage{
		"form": json.RawMessage(`{"method":"elicitation/create","params":{"message":"m","requestedSchema":{"type":"object","properties":{
			"email":{"type":"string","format":"email"},
			"short":{"type":"string","maxLength":3},
			"long":{"type":"string","minLength":12},
			"age":{"type":"integer","minimum":18},
			"score":{"type":"number","maximum":0.5},
			"ok":{"type":"boolean"},
			"color":{"type":"string","enum":["red","blue"]},
			"titled":{"type":"string","oneOf":[{"const":"v1","title":"One"}]},
			"multi":{"type":"array","minItems":2,"items":{"anyOf":[{"const":"a"},{"const":"b"},{"const":"c"}]}},
			"dflt":{"type":"string","default":"given"}}}}}`),
		"url":      json.RawMessage(`{"method":"elicitation/create","params":{"mode":"url","message":"m","url":"https://example.com"}}`),
		"sampling": json.RawMessage(`{"method":"sampling/createMessage","params":{"messages":[],"maxTokens":5}}`),
		"roots":    json.RawMessage(`{"method":"roots/list"}`),
	}
	got, madeUp, err := answerAll(reqs, nil)
	if err != nil {
		t.Fatal(err)
	}
	var form struct {
		Action  string         `json:"action"`
		Content map[string]any `json:"content"`
	}
	if err := json.Unmarshal(got["form"], &form); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"email": "mrtrcheck@example.com", "short": "mrt", "long": "mrtrcheckxxx", "age": 18.0, "score": 0.5,
		"ok": true, "color": "red", "titled": "v1", "multi": []any{"a", "b"}, "dflt": "given",
	}
	if form.Action != "accept" || !reflect.DeepEqual(form.Content, want) {
		t.Errorf("form answer %s", got["form"])
	}
	if string(got["url"]) != `{"action":"accept"}` {
		t.Errorf("url answer %s", got["url"])
	}
	if !bytes.Contains(got["sampling"], []byte(`"role":"assistant"`)) || !bytes.Contains(got["roots"], []byte(`"roots":[`)) {
		t.Errorf("sampling %s, roots %s", got["sampling"], got["roots"])
	}
	if len(madeUp) != len(reqs) {
		t.Errorf("made up %v", madeUp)
	}
	if _, _, err := answerAll(map[string]json.RawMessage{"x": json.RawMessage(`{"method":"tasks/get"}`)}, nil); err == nil {
		t.Error("answered an unknown request kind")
	}
	// A given answer is sent as given, even to a request the suite cannot
	// answer, and is not counted as made up.
	given := map[string]json.RawMessage{"sampling": json.RawMessage(`{"role":"assistant","content":{"type":"text","text":"[\"README.md\"]"},"model":"m"}`),
		"x": json.RawMessage(`{"done":true}`), "unasked": json.RawMessage(`{}`)}
	got, madeUp, err = answerAll(map[string]json.RawMessage{"sampling": reqs["sampling"], "x": json.RawMessage(`{"method":"tasks/get"}`), "roots": reqs["roots"]}, given)
	if err != nil || string(got["sampling"]) != string(given["sampling"]) || string(got["x"]) != `{"done":true}` || madeUp["sampling"] || !madeUp["roots"] || len(got) != 3 {
		t.Errorf("with given answers: %v, made up %v, %v", got, madeUp, err)
	}
}

func TestReadSSEPicksTheResponse(t *testing.T) {
	stream := ": comment\n\n" +
		"event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{}}\n\n" +
		"data: {\"jsonrpc\":\"2.0\",\"id\":6,\"result\":{}}\n\n" +
		"data: {\"jsonrpc\":\"2.0\",\n" +
		"data: \"id\":7,\"result\":{\"resultType\":\"complete\"}}\n\n" +
		"data: never read\n\n"
	msg, _, err := readSSE(strings.NewReader(stream), 7)
	if err != nil || msg == nil || string(msg.ID) != "7" {
		t.Fatalf("got %+v, %v", msg, err)
	}
	// An error without an id is the fallback when no response matches.
	msg, _, err = readSSE(strings.NewReader("data: {\"jsonrpc\":\"2.0\",\"error\":{\"code\":-32600,\"message\":\"x\"}}\n"), 7)
	if err != nil || msg == nil || msg.Error == nil || msg.Error.Code != -32600 {
		t.Fatalf("got %+v, %v", msg, err)
	}
	msg, _, _ = readSSE(strings.NewReader("data: {\"jsonrpc\":\"2.0\",\"id\":8,\"result\":{}}\n\n"), 7)
	if msg != nil {
		t.Fatalf("took the response to another request: %+v", msg)
	}
}

func TestPickMessage(t *testing.T) {
	for body, ok := range map[string]bool{
		`{"jsonrpc":"2.0","id":3,"result":{}}`:                        true,
		`{"jsonrpc":"2.0","id":null,"error":{"code":1,"message":""}}`: true,
		`{"jsonrpc":"2.0","error":{"code":1,"message":""}}`:           true,
		`{"jsonrpc":"2.0","id":4,"result":{}}`:                        false,
		`{"jsonrpc":"2.0","id":"3","result":{}}`:                      false,
		`{"jsonrpc":"2.0","method":"notifications/x"}`:                false,
		`[{"jsonrpc":"2.0","id":3,"result":{}}]`:                      false,
		`{"jsonrpc":"2.0","id":null,"result":{}}`:                     false,
		`not json`: false,
		`{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{},"x":1}`: false,
	} {
		if got := pickMessage([]byte(body), 3) != nil; got != ok {
			t.Errorf("%s: picked %v, want %v", body, got, ok)
		}
	}
}

func TestEncodeHeaderValue(t *testing.T) {
	for in, want := range map[string]string{
		"tool_name":       "tool_name",
		"Zürich":          "=?base64?WsO8cmljaA==?=",
		" padded":         "=?base64?IHBhZGRlZA==?=",
		"=?base64?abc?=":  "=?base64?PT9iYXNlNjQ/YWJjPz0=?=",
		"inner space ok":  "inner space ok",
		"tab\there":       "=?base64?dGFiCWhlcmU=?=",
		"":                "=?base64??=",
		"trailing space ": "=?base64?dHJhaWxpbmcgc3BhY2Ug?=",
	} {
		if got := encodeHeaderValue(in); got != want {
			t.Errorf("%q → %q, want %q", in, got, want)
		}
	}
}

func TestParamHeaders(t *testing.T) {
	r := &runner{tools: map[string]json.RawMessage{"t": json.RawMessage(`{"type":"object","properties":{
		"region":{"type":"string","x-mcp-header":"Region"},
		"level":{"type":"integer","x-mcp-header":"Level"},
		"flag":{"type":"boolean","x-mcp-header":"Flag"},
		"absent":{"type":"string","x-mcp-header":"Absent"},
		"nested":{"type":"object","properties":{"city":{"type":"string","x-mcp-header":"City"}}},
		"plain":{"type":"string"}}}`)}}
	got := r.paramHeaders("t", json.RawMessage(`{"region":"Zürich","level":3,"flag":false,"nested":{"city":"Oslo"},"plain":"x","absent":null}`))
	want := map[string]string{
		"Mcp-Param-Region": "=?base64?WsO8cmljaA==?=",
		"Mcp-Param-Level":  "3",
		"Mcp-Param-Flag":   "false",
		"Mcp-Param-City":   "Oslo",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

func TestNormalizeDefaults(t *testing.T) {
	c, err := Config{URL: "http://127.0.0.1:3001/mcp"}.normalize()
	if err != nil {
		t.Fatal(err)
	}
	if c.Tool != DefaultTool || string(c.Args) != DefaultArgs || string(c.AltArgs) != DefaultAltArgs ||
		c.OtherTool != DefaultOtherTool || string(c.OtherArgs) != DefaultArgs || string(c.Capabilities) != DefaultCapabilities {
		t.Errorf("fixture defaults not applied: %+v", c)
	}
	// With a tool of one's own, nothing of the fixture applies.
	c, err = Config{URL: "http://127.0.0.1:3001/mcp", Tool: "mine"}.normalize()
	if err != nil {
		t.Fatal(err)
	}
	if string(c.Args) != `{}` || string(c.AltArgs) != `{"mrtrcheck":"alt"}` || c.OtherTool != "" {
		t.Errorf("got args %s, alt %s, other tool %q", c.Args, c.AltArgs, c.OtherTool)
	}
}

func TestDeriveAltArgs(t *testing.T) {
	for in, want := range map[string]string{
		`{"b":"x","a":"y"}`:    `{"a":"y (mrtrcheck)","b":"x"}`,
		`{"n":41,"flag":true}`: `{"flag":true,"n":42}`,
		`{"f":1.5}`:            `{"f":2.5}`,
		`{"flag":true}`:        `{"flag":true,"mrtrcheck":"alt"}`,
		`{}`:                   `{"mrtrcheck":"alt"}`,
	} {
		got, err := deriveAltArgs(json.RawMessage(in))
		if err != nil || string(got) != want {
			t.Errorf("%s → %s, %v; want %s", in, got, err, want)
		}
	}
}

func TestScenarioCatalogue(t *testing.T) {
	seen := map[string]bool{}
	all := Scenarios()
	if all[0].ID != baselineID {
		t.Errorf("the baseline is not first")
	}
	for i, s := range all {
		if seen[s.ID] {
			t.Errorf("duplicate id %s", s.ID)
		}
		seen[s.ID] = true
		if s.Title == "" || s.Why == "" {
			t.Errorf("%s lacks a title or an explanation", s.ID)
		}
		if i > 0 && s.run == nil {
			t.Errorf("%s has no run function", s.ID)
		}
	}
	all[0].ID = "changed"
	if Scenarios()[0].ID != baselineID {
		t.Error("Scenarios shares its slice")
	}
}
