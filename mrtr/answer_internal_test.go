package mrtr

import (
	"encoding/json"
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
