package mrtr

import (
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// decodeElicitSlow is decodeAnswer's elicitation decoding as encoding/json
// alone does it: the reference the one-pass readers must agree with.
func decodeElicitSlow(raw json.RawMessage) (Action, map[string]any, error) {
	var w struct {
		Action  Action          `json:"action"`
		Content json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(raw, &w); err != nil {
		return "", nil, err
	}
	var m map[string]any
	if w.Action == Accepted && !isAbsent(w.Content) && w.Content[0] == '{' {
		if err := json.Unmarshal(w.Content, &m); err != nil {
			return "", nil, err
		}
	}
	return w.Action, m, nil
}

// TestElicitAnswerReadersAgree: whatever answer a client sends, the
// one-pass readers decode it as encoding/json does, or leave it to
// encoding/json (names in another case, odd values, invalid JSON).
func TestElicitAnswerReadersAgree(t *testing.T) {
	for _, raw := range []string{
		`{"action":"accept","content":{"name":"Ada","age":36,"ok":true,"no":false,"x":-1.5e3}}`,
		`{"action":"decline"}`, `{"action":"cancel","content":null}`,
		`{"content":{"a":"b"},"action":"accept"}`,
		`{"Action":"accept","content":{"a":"b"}}`, `{"ACTION":"decline","action":"accept"}`,
		`{"action":"accept","CONTENT":{"a":"b"}}`, `{"action":"accept","content":{"a":"b"},"Content":{"a":"c"}}`,
		`{"action":"accept","action":null,"content":{"a":"x"}}`, `{"action":"accept","action":"decline"}`,
		`{"action":"accept","_meta":{"k":1},"content":{"u":"\u00e9\n"}}`,
		`{"action":"accept","content":{"tags":["a","b"],"n":null}}`, `{"action":5}`, `{"action":"maybe"}`,
		`{"action":"accept","content":{"a":1}`, `{"action":"accept","content":{"a":tru}}`,
		`{"action":"accept","conte\u006et":{"a":"z"}}`, `{"actıon":"accept"}`,
	} {
		wantAction, wantContent, wantErr := decodeElicitSlow(json.RawMessage(raw))
		got, err := decodeAnswer(kindElicitForm, json.RawMessage(raw))
		if wantErr != nil {
			require.Errorf(t, err, "%s: encoding/json refuses it", raw)
			continue
		}
		// decodeAnswer also refuses what encoding/json reads but an
		// answer may not be: an unknown action, a value of another kind.
		refuse := wantAction != Accepted && wantAction != Declined && wantAction != Cancelled
		for _, v := range wantContent {
			refuse = refuse || !elicitValue(v)
		}
		if refuse {
			require.Errorf(t, err, "%s", raw)
			continue
		}
		require.NoErrorf(t, err, "%s", raw)
		r := got.(*ElicitResult)
		require.Equalf(t, wantAction, r.Action, "%s", raw)
		if wantAction == Accepted {
			require.Equalf(t, wantContent, r.Content, "%s", raw)
		}
	}
}

// TestInputRequiredBodyMatchesEncodingJSON: the input-required body is
// rendered byte for byte as encoding/json renders it, whatever the
// questions hold.
func TestInputRequiredBodyMatchesEncodingJSON(t *testing.T) {
	form := func(msg string, props map[string]json.RawMessage, required ...string) *ElicitRequest {
		return &ElicitRequest{Message: msg, RequestedSchema: &ElicitSchema{Type: "object", Properties: props, Required: required}}
	}
	str := map[string]json.RawMessage{"name": json.RawMessage(`{"type":"string"}`)}
	cases := []map[string]InputRequest{
		{},
		{"name": form("What is your name?", str, "name")},
		{"b": form("two", map[string]json.RawMessage{"z": json.RawMessage(`{"type":"integer","minimum":1}`), "a": json.RawMessage(`{"type":"boolean"}`)}), "a": &RootsRequest{}},
		{"x": form("spaced", map[string]json.RawMessage{"s": json.RawMessage(`{ "type" : "string" }`)})},
		{"x": form("escaped", map[string]json.RawMessage{"s": json.RawMessage(`{"type":"string","title":"\u00e9\/"}`)})},
		{"x": form("html <b> & co", str)}, {"<k>": form("key", str)}, {"x": form("bs\b ff\f nl\n \u2028 \x01 é \xff", str, "name")},
		{"x": form("no props", nil)}, {"x": form("empty required", str, []string{}...)},
		{"x": &ElicitRequest{Mode: "form", Message: "m", RequestedSchema: &ElicitSchema{Schema: "https://json-schema.org/draft/2020-12/schema", Type: "object", Properties: str}}},
		{"u": &ElicitRequest{Mode: "url", Message: "open", URL: "https://example.com/a?b=1&c=2"}},
		{"s": &SamplingRequest{MaxTokens: 10}},
	}
	for _, asks := range cases {
		for _, token := range []string{"tok-en_1", `a "quoted" é tok\en`, "a<b"} {
			body := inputRequiredBody{requests: asks, keys: slices.Sorted(maps.Keys(asks)), token: token}
			want, err := json.Marshal(&inputRequiredWire{wireInputRequests(asks), token})
			require.NoError(t, err)
			got, err := body.appendMembers([]byte("{"))
			require.NoError(t, err)
			require.Equal(t, string(want), string(got)+"}")
		}
	}
}

// TestPrimitiveTypeAgrees: what the one-pass check accepts, the decoding
// check accepts too, and it declines what needs a closer look.
func TestPrimitiveTypeAgrees(t *testing.T) {
	for raw, fast := range map[string]bool{
		`{"type":"string"}`: true, `{"type":"integer","minimum":1,"title":"n"}`: true, `{"title":"b","type":"boolean"}`: true,
		`{"type":"array","items":{"enum":["a"]}}`: false, `{"type":"object"}`: false, `{"Type":"string"}`: false,
		`{"type":"string","TYPE":"object"}`: false, `{"type":"string","Enum":["a"]}`: false, `{"type":"str\u0069ng"}`: true,
		`{"type":5}`: false, `{"type":null}`: false, `"string"`: false, `{"type":"string"`: false, `{"type":"string","ıtems":1}`: false,
		`{"type":"string","type":"object"}`: false,
	} {
		require.Equalf(t, fast, primitiveType(json.RawMessage(raw)), "%s", raw)
		if fast {
			require.NoErrorf(t, checkPrimitiveSchemaSlow(json.RawMessage(raw)), "%s", raw)
		}
	}
}

// checkPrimitiveSchemaSlow is checkPrimitiveSchema's decoding alone.
func checkPrimitiveSchemaSlow(raw json.RawMessage) error {
	var p struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal(raw, &p); err != nil {
		return err
	}
	if !slices.Contains(primitiveTypes, p.Type) {
		return errors.New("not primitive")
	}
	return nil
}
