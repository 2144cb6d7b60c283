package suite

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/bits"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
				require.Truef(t, ok, "%q: no flip at %d", s, pos)
				require.Falsef(t, len(out) != len(s) || out == s, "%q → %q (%s)", s, out, desc)
				// The result decodes strictly, to bytes that differ from
				// the original in exactly one bit.
				got, err := enc.Strict().DecodeString(out)
				require.NoErrorf(t, err, "%q → %q does not decode strictly: %v (%s)", s, out, err, desc)
				diff := 0
				for i := range got {
					diff += bits.OnesCount8(got[i] ^ payload[i])
				}
				require.EqualValuesf(t, 1, diff, "%q → %q changes %d bits (%s)", s, out, diff, desc)
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
			assert.Fail(t, fmt.Sprintf("%q: alphabet %v, want %v", tc.in, got, tc.alpha))
		}
		for _, pos := range []flipPosition{flipFirst, flipMiddle, flipLast} {
			out, _, ok := flipBit(tc.in, pos)
			require.Falsef(t, !ok || out == tc.in, "%q: no change at %d", tc.in, pos)
			if tc.chars == "" {
				continue
			}
			for i := 0; i < len(out); i++ {
				if !strings.ContainsRune(tc.chars, rune(out[i])) {
					assert.Fail(t, fmt.Sprintf("%q → %q: %q is outside the alphabet", tc.in, out, out[i]))
				}
			}
		}
	}
	// Padding and segment dots are never changed.
	out, _, _ := flipBit("QQ==", flipLast)
	assert.Falsef(t, !strings.HasSuffix(out, "==") || out[1] == 'Q', "QQ== → %q", out)
	if _, _, ok := flipBit("", flipMiddle); ok {
		assert.Fail(t, "flipped a bit of the empty string")
	}
}

func TestHugeAndTruncate(t *testing.T) {
	if got := hugeState("abc-", 10); got != "abc-AAAAAA" {
		assert.Fail(t, fmt.Sprintf("hugeState: %q", got))
	}
	if got := truncateOne("héé"); got != "hé" {
		assert.Fail(t, fmt.Sprintf("truncateOne: %q", got))
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
			assert.Fail(t, fmt.Sprintf("truncatePayload(%q) = %q, want %q", in, got, want[0]))
		}
		if got, _ := appendPayload(in); got != want[1] {
			assert.Fail(t, fmt.Sprintf("appendPayload(%q) = %q, want %q", in, got, want[1]))
		}
	}
	// A lenient decoder that accepts unpadded input cannot read the
	// truncated state as the original bytes.
	orig := base64.StdEncoding.EncodeToString([]byte("abcd"))
	tr, _ := truncatePayload(orig)
	if b, err := base64.RawStdEncoding.DecodeString(strings.TrimRight(tr, "=")); err == nil && string(b) == "abcd" {
		assert.Fail(t, fmt.Sprintf("%q truncated to %q still decodes to the same bytes", orig, tr))
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
			require.Truef(t, ok, "%q: no JSON found", tc.state)
			decode := func(s string) map[string]any {
				if tc.enc != nil {
					segs := strings.Split(s, ".")
					seg := segs[0]
					if len(segs) > 1 {
						seg = segs[1]
					}
					b, err := tc.enc.Strict().DecodeString(seg)
					require.NoErrorf(t, err, "%q does not decode", s)
					s = string(b)
				}
				var v map[string]any
				require.NoErrorf(t, json.Unmarshal([]byte(s), &v), "%q is not JSON", s)
				return v
			}
			same, _ := js.sameMeaning()
			assert.Falsef(t, same == tc.state || !reflect.DeepEqual(decode(same), decode(tc.state)), "sameMeaning: %q", same)
			assert.Equalf(t, strings.Count(tc.state, "."), strings.Count(same, "."), "segments changed: %q", same)
			other, ok := js.withValues(json.RawMessage(`{"n":1,"target":"nothing"}`), json.RawMessage(`{"n":1,"target":"everything"}`))
			require.True(t, ok, "withValues found no argument")
			if got := decode(other)["args"].(map[string]any)["target"]; got != "everything" {
				assert.Fail(t, fmt.Sprintf("withValues: %q holds target %v", other, got))
			}
		})
	}
	for _, opaque := range []string{"", "c3RhdGU", "not json at all", base64.RawURLEncoding.EncodeToString([]byte(`"a string"`)), "deadbeef"} {
		if _, ok := findJSONState(opaque); ok {
			assert.Fail(t, fmt.Sprintf("%q taken for JSON", opaque))
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
		assert.Equalf(t, tc.want, got, "%+v: %q, want %q", tc.rep.Error, got, tc.want)
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
	require.NoError(t, err)
	var form struct {
		Action  string         `json:"action"`
		Content map[string]any `json:"content"`
	}
	require.NoError(t, json.Unmarshal(got["form"], &form))
	want := map[string]any{
		"email": "mrtrcheck@example.com", "short": "mrt", "long": "mrtrcheckxxx", "age": 18.0, "score": 0.5,
		"ok": true, "color": "red", "titled": "v1", "multi": []any{"a", "b"}, "dflt": "given",
	}
	if form.Action != "accept" || !reflect.DeepEqual(form.Content, want) {
		assert.Fail(t, fmt.Sprintf("form answer %s", got["form"]))
	}
	if string(got["url"]) != `{"action":"accept"}` {
		assert.Fail(t, fmt.Sprintf("url answer %s", got["url"]))
	}
	if !bytes.Contains(got["sampling"], []byte(`"role":"assistant"`)) || !bytes.Contains(got["roots"], []byte(`"roots":[`)) {
		assert.Fail(t, fmt.Sprintf("sampling %s, roots %s", got["sampling"], got["roots"]))
	}
	assert.Lenf(t, madeUp, len(reqs), "made up %v", madeUp)
	if _, _, err := answerAll(map[string]json.RawMessage{"x": json.RawMessage(`{"method":"tasks/get"}`)}, nil); err == nil {
		assert.Fail(t, "answered an unknown request kind")
	}
	// A given answer is sent as given, even to a request the suite cannot
	// answer, and is not counted as made up.
	given := map[string]json.RawMessage{"sampling": json.RawMessage(`{"role":"assistant","content":{"type":"text","text":"[\"README.md\"]"},"model":"m"}`),
		"x": json.RawMessage(`{"done":true}`), "unasked": json.RawMessage(`{}`)}
	got, madeUp, err = answerAll(map[string]json.RawMessage{"sampling": reqs["sampling"], "x": json.RawMessage(`{"method":"tasks/get"}`), "roots": reqs["roots"]}, given)
	assert.Falsef(t, err != nil || string(got["sampling"]) != string(given["sampling"]) || string(got["x"]) != `{"done":true}` || madeUp["sampling"] || !madeUp["roots"] || len(got) != 3, "with given answers: %v, made up %v, %v", got, madeUp, err)
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
	want := http.Header{
		"Mcp-Param-Region": {"=?base64?WsO8cmljaA==?="},
		"Mcp-Param-Level":  {"3"},
		"Mcp-Param-Flag":   {"false"},
		"Mcp-Param-City":   {"Oslo"},
	}
	assert.Equalf(t, want, got, "got %v, want %v", got, want)
}

func TestNormalizeDefaults(t *testing.T) {
	c, err := Config{URL: "http://127.0.0.1:3001/mcp"}.normalize()
	require.NoError(t, err)
	assert.Falsef(t, c.Tool != DefaultTool || string(c.Args) != DefaultArgs || string(c.AltArgs) != DefaultAltArgs ||
		c.OtherTool != DefaultOtherTool || string(c.OtherArgs) != DefaultArgs || string(c.Capabilities) != DefaultCapabilities, "fixture defaults not applied: %+v", c)
	// With a tool of one's own, nothing of the fixture applies.
	c, err = Config{URL: "http://127.0.0.1:3001/mcp", Tool: "mine"}.normalize()
	require.NoError(t, err)
	assert.Falsef(t, string(c.Args) != `{}` || string(c.AltArgs) != `{"mrtrcheck":"alt"}` || c.OtherTool != "", "got args %s, alt %s, other tool %q", c.Args, c.AltArgs, c.OtherTool)
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
		assert.Falsef(t, err != nil || string(got) != want, "%s → %s, %v; want %s", in, got, err, want)
	}
}

func TestScenarioCatalogue(t *testing.T) {
	seen := map[string]bool{}
	all := Scenarios()
	assert.Equalf(t, baselineID, all[0].ID, "the baseline is not first")
	for i, s := range all {
		assert.Falsef(t, seen[s.ID], "duplicate id %s", s.ID)
		seen[s.ID] = true
		assert.Falsef(t, s.Title == "" || s.Why == "", "%s lacks a title or an explanation", s.ID)
		assert.Falsef(t, i > 0 && s.run == nil, "%s has no run function", s.ID)
	}
	all[0].ID = "changed"
	assert.Equal(t, baselineID, Scenarios()[0].ID, "Scenarios shares its slice")
}
