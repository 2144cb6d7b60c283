package flow

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// The sealed position is not HTML-escaped: a state of '<' keeps its size,
// also once it sits in the position as raw JSON.
func TestSealedStateNotEscaped(t *testing.T) {
	text := strings.Repeat("<&>", 1000)
	st, err := marshalPlain(struct{ Summary string }{text})
	if err != nil {
		t.Fatal(err)
	}
	b, err := marshalPlain(&position{V: positionVersion, State: st})
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(b, []byte(`\u003c`)) || len(b) > len(text)+200 {
		t.Fatalf("escaped or grown: %d bytes for a %d-byte text", len(b), len(text))
	}
	var back struct {
		State json.RawMessage `json:"s"`
	}
	if err := json.Unmarshal(b, &back); err != nil || !bytes.Contains(back.State, []byte(text)) {
		t.Fatalf("does not decode back: %v", err)
	}
}
