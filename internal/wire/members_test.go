package wire

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// members collects the members of object b into a map through
// EachMember, refusing duplicates: the shape the Server's readers give
// EachMember, checked here against encoding/json.
func members(b []byte) (map[string]json.RawMessage, error) {
	m := make(map[string]json.RawMessage, 8)
	err := EachMember(b, func(name string, v json.RawMessage) error {
		if _, dup := m[name]; dup {
			return ErrDuplicateMember
		}
		m[name] = v
		return nil
	})
	return m, err
}

func TestMembersMatchesEncodingJSON(t *testing.T) {
	cases := []string{
		`{}`,
		` { "a" : 1 , "b":[1,{"c":"}"}], "d":"x\"y", "e":null, "f":true, "g":-1.5e3 } `,
		`{"\u0061b":{"nested":{"deep":["]","}"]}},"z":"\\"}`,
		`{"k":"v"}`,
	}
	for _, c := range cases {
		got, err := members([]byte(c))
		require.NoError(t, err, c)
		var want map[string]json.RawMessage
		require.NoError(t, json.Unmarshal([]byte(c), &want))
		require.Len(t, got, len(want), c)
		for k, v := range want {
			assert.JSONEq(t, string(v), string(got[k]), "%s: member %q", c, k)
		}
	}
}

func TestMembersRefusesDuplicatesAndNonObjects(t *testing.T) {
	_, err := members([]byte(`{"a":1,"a":2}`))
	assert.ErrorIs(t, err, ErrDuplicateMember)
	_, err = members([]byte(`{"a":1,"\u0061":2}`))
	assert.ErrorIs(t, err, ErrDuplicateMember, "an escaped spelling is the same name")
	_, err = members([]byte(`[1]`))
	assert.Error(t, err)
	// Case variants are different names, as JSON-RPC and MCP require.
	m, err := members([]byte(`{"a":1,"A":2}`))
	require.NoError(t, err)
	assert.Len(t, m, 2)
}

// FuzzMembers checks the exact-name splitter against encoding/json on
// every valid object: same names, same values.
func FuzzMembers(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":1}`, `{"a":{"b":[1,"]"]},"c":"\"}"}`, `{"\u00e9":null}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if !json.Valid(b) || len(bytes.TrimSpace(b)) == 0 || bytes.TrimSpace(b)[0] != '{' {
			return
		}
		got, err := members(b)
		var want map[string]json.RawMessage
		if json.Unmarshal(b, &want) != nil {
			return
		}
		if err != nil {
			// Only duplicates may be refused; encoding/json keeps the last.
			require.ErrorIs(t, err, ErrDuplicateMember)
			return
		}
		require.Len(t, got, len(want))
		for k, v := range want {
			var a, b any
			require.NoError(t, json.Unmarshal(v, &a))
			require.NoError(t, json.Unmarshal(got[k], &b), "member %q: %q", k, got[k])
			require.Equal(t, a, b)
		}
	})
}
