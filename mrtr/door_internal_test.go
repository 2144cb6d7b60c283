package mrtr

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

// FuzzArgumentsVerdict holds the door that ParseMessage runs in its one
// pass to the door run on its own: same verdict, same message, and a body
// that is not JSON is still a parse error.
func FuzzArgumentsVerdict(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":1}`, `{"a":1,"A":2}`, `{"n":9007199254740993}`, `{"s":"\ud800"}`, `{"a":01}`, `{"a":"\q"}`, `{"a":[1,}`, `{"a":"x","b":2}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		body := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":` + string(raw) + `}}`)
		msg, _, perr := ParseMessage(body)
		if !json.Valid(body) {
			require.Falsef(t, perr == nil || perr.Code != CodeParseError, "body %q is not JSON but parsed with %v", body, perr)
			return
		}
		if perr != nil {
			require.Falsef(t, perr.Code == CodeParseError, "valid body %q refused as unparsable", body)
			return
		}
		trimmed := bytes.TrimSpace(raw)
		if len(trimmed) == 0 || trimmed[0] != '{' {
			return
		}
		c := &call{in: &Inbound{Message: msg}}
		var args json.RawMessage
		if msg.params != nil {
			args = msg.params.Arguments
		}
		for _, strings := range []bool{false, true} {
			got, want := c.checkArguments(args, strings), strictArguments(args, strings)
			require.Falsef(t, (got == nil) != (want == nil) || (got != nil && got.Message != want.Message), "arguments %q (strings %v): one pass says %v, the door alone %v", raw, strings, got, want)
		}
	})
}
