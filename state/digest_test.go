package state

import (
	"crypto/sha256"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDigestEquivalentForms(t *testing.T) {
	groups := [][]string{
		{
			`{"a":1,"b":[1,2,{"x":true,"y":null}]}`,
			`{"b":[1,2,{"y":null,"x":true}],"a":1}`,
			" {\n\t\"b\" : [ 1 , 2 , { \"y\" : null , \"x\" : true } ] ,\r\n \"a\" : 1 } ",
			`{"b":[1.0,2e0,{"y":null,"x":true}],"a":10e-1}`,
		},
		{`1`, `1.0`, `1e0`, `10e-1`, `1E0`, `0.1e1`, `1.000`, ` 1 `},
		{`{"n":{"deep":[100,{"z":0,"a":-0}]}}`, `{"n":{"deep":[1e2,{"a":0,"z":-0.0}]}}`},
		{`"\u0041\u00e9"`, `"Aé"`},
		{`null`, ``},
	}
	for _, g := range groups {
		first, err := DigestJSON([]byte(g[0]))
		require.NoError(t, err, g[0])
		for _, js := range g[1:] {
			d, err := DigestJSON([]byte(js))
			require.NoError(t, err, js)
			assert.Equal(t, first, d, "%s vs %s", g[0], js)
		}
	}
}

func TestDigestDistinguishesValues(t *testing.T) {
	pairs := [][2]string{
		{`1`, `2`},
		{`"1"`, `1`},
		{`[1,2]`, `[2,1]`},
		{`{"a":1}`, `{"a":1,"b":1}`},
		{`{"a":1}`, `{"A":1}`},
		{`{"a":{"b":1}}`, `{"a":{"b":"1"}}`},
		{`null`, `false`},
		{`{}`, `[]`},
		{`""`, `null`},
		{`0`, `null`},
		{`[[1],[2]]`, `[[1,2]]`},
	}
	for _, p := range pairs {
		a, err := DigestJSON([]byte(p[0]))
		require.NoError(t, err)
		b, err := DigestJSON([]byte(p[1]))
		require.NoError(t, err)
		assert.NotEqual(t, a, b, "%s vs %s", p[0], p[1])
	}
}

func TestDigestIsSHA256OfCanonicalForm(t *testing.T) {
	d, err := DigestJSON([]byte(`{ "b":2, "a":1 }`))
	require.NoError(t, err)
	assert.Equal(t, Digest(sha256.Sum256([]byte(`{"a":1,"b":2}`))), d)
	assert.Equal(t, 64, len(d.String()))
	assert.False(t, d.IsZero())
	assert.True(t, Digest{}.IsZero())
}

// The first two cases and the Appendix B samples reproduce examples
// published in RFC 8785; the rest are ECMAScript number-formatting
// boundaries.
func TestCanonicalizeRFC8785Examples(t *testing.T) {
	cases := []struct{ name, in, want string }{
		{
			// Section 3.2.2: literals, strings and numbers.
			name: "primitives",
			in: `{
  "numbers": [333333333.33333329, 1E30, 4.50,
              2e-3, 0.000000000000000000000000001],
  "string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/",
  "literals": [null, true, false]
}`,
			want: `{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\u000f\nA'B\"\\\\\"/"}`,
		},
		{
			// Section 3.2.3: property sorting by UTF-16 code units.
			name: "sorting",
			in: `{
  "\u20ac": "Euro Sign",
  "\r": "Carriage Return",
  "\ufb33": "Hebrew Letter Dalet With Dagesh",
  "1": "One",
  "\ud83d\ude00": "Emoji: Grinning Face",
  "\u0080": "Control",
  "\u00f6": "Latin Small Letter O With Diaeresis"
}`,
			want: "{\"\\r\":\"Carriage Return\",\"1\":\"One\",\"\u0080\":\"Control\"," +
				"\"\u00f6\":\"Latin Small Letter O With Diaeresis\",\"\u20ac\":\"Euro Sign\"," +
				"\"\U0001F600\":\"Emoji: Grinning Face\",\"\ufb33\":\"Hebrew Letter Dalet With Dagesh\"}",
		},
		// Appendix B: number serialization samples.
		{name: "zero", in: `0`, want: `0`},
		{name: "minus zero", in: `-0`, want: `0`},
		{name: "min subnormal", in: `5e-324`, want: `5e-324`},
		{name: "max double", in: `1.7976931348623157e308`, want: `1.7976931348623157e+308`},
		{name: "2^53", in: `9007199254740992`, want: `9007199254740992`},
		{name: "2^68", in: `295147905179352825856`, want: `295147905179352830000`},
		{name: "just below 1e23", in: `9.999999999999997e22`, want: `9.999999999999997e+22`},
		{name: "1e23", in: `1e23`, want: `1e+23`},
		{name: "1e-6", in: `0.000001`, want: `0.000001`},
		{name: "below 1e-6", in: `9.999999999999997e-7`, want: `9.999999999999997e-7`},
		// Boundaries of the ECMAScript form.
		{name: "beyond 2^53 loses precision", in: `9007199254740993`, want: `9007199254740992`},
		{name: "1e21", in: `1e21`, want: `1e+21`},
		{name: "below 1e21", in: `999999999999999900000`, want: `999999999999999900000`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Canonicalize([]byte(tc.in))
			require.NoError(t, err)
			assert.Equal(t, tc.want, string(got))
		})
	}
}

func TestCanonicalizeRejectsInvalidJSON(t *testing.T) {
	for _, in := range []string{``, `{`, `{"a":}`, `[1,]`, `{"a":1}x`, `nul`, `'a'`, `{"a" 1}`, `NaN`, `1e400`, `{"a":1,"a":2}`, `{"x":{"b":1,"b":1}}`, "\"\xff\"", `"\ud800"`} {
		_, err := Canonicalize([]byte(in))
		assert.Error(t, err, "%q", in)
		if err != nil {
			assert.Contains(t, err.Error(), "canonicalize JSON")
		}
		if in != "" {
			_, err = DigestJSON([]byte(in))
			assert.Error(t, err, "%q", in)
		}
	}
}

// TestCanonicalFastPath: the text DigestJSON digests as it is, without
// canonicalizing it, is exactly its canonical form, and text that is not
// canonical takes the long way.
func TestCanonicalFastPath(t *testing.T) {
	canonical := []string{
		`{}`, `[]`, `null`, `true`, `0`, `-7`, `123456789012345`, `"a b~"`, `""`,
		`{"a":1,"b":[true,false,null],"c":{"d":"x"}}`, `{"A":1,"_":2,"a":3}`, `[[],{},[1,"2"]]`,
	}
	for _, s := range canonical {
		require.Truef(t, isCanonical([]byte(s)), "%s is canonical", s)
		c, err := Canonicalize([]byte(s))
		require.NoError(t, err)
		require.Equal(t, s, string(c), "what is digested as it is must be the canonical form")
	}
	for _, s := range []string{
		`{"b":1,"a":2}`, `{"a":1,"a":1}`, `{ }`, `[1, 2]`, `-0`, `01`, `1.0`, `1e3`, `1234567890123456`,
		`"\u0041"`, `"é"`, "\"\x01\"", `tru`, `truex`, `{"a":1}x`, `{"a":}`, `[1,]`, `{"a"1}`, `"open`, ``,
		`{"a":1,}`, `[`, `{`,
	} {
		require.Falsef(t, isCanonical([]byte(s)), "%s is not taken as canonical", s)
	}
	d, err := DigestJSON([]byte(`{"b":1,"a":2}`))
	require.NoError(t, err)
	want, err := DigestJSON([]byte(`{"a":2,"b":1}`))
	require.NoError(t, err)
	require.Equal(t, want, d, "the long and the short way agree")
}

// FuzzCanonicalFastPath: whatever isCanonical accepts, Canonicalize
// returns unchanged.
func FuzzCanonicalFastPath(f *testing.F) {
	for _, s := range []string{`{"a":1}`, `[1,"x",null]`, `{"b":{"a":[]}}`, `-12`, `"x"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if !isCanonical(raw) {
			return
		}
		c, err := Canonicalize(raw)
		require.NoError(t, err, "%q", raw)
		require.Equal(t, string(raw), string(c))
	})
}
