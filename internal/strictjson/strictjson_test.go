package strictjson

import (
	"bytes"
	"encoding/json"
	"math/big"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestExactDouble(t *testing.T) {
	exact := []string{
		"0", "-0", "0.0", "0e10", "1", "-1", "1.0", "1e0", "1E+0", "10e-1", "0.1", "-0.5", "1e-7",
		"123456789012345", "9007199254740992", "5e-324", "1.7976931348623157e308",
		"0.30000000000000004", "100", "1e2", "12.50", "1e22", "1.5e300",
	}
	for _, lit := range exact {
		assert.True(t, exactDouble([]byte(lit)), lit)
	}
	inexact := []string{
		"9007199254740993", "0.10000000000000000001", "1.00000000000000000000001",
		"1e400", "-1e400", "1e-400", "3e-324", "123456789012345678901234567890",
		"0.3000000000000000444089209850062616169452667236328125",
	}
	for _, lit := range inexact {
		assert.False(t, exactDouble([]byte(lit)), lit)
	}
}

// exactByRat is the reference for exactDouble: exact rational arithmetic,
// whatever it costs.
func exactByRat(lit string) bool {
	f, err := strconv.ParseFloat(lit, 64)
	if err != nil {
		return false
	}
	want, ok := new(big.Rat).SetString(lit)
	if !ok {
		return false
	}
	got, ok := new(big.Rat).SetString(strconv.FormatFloat(f, 'g', -1, 64))
	return ok && want.Cmp(got) == 0
}

// FuzzExactDouble checks the bounded-cost check against exact rational
// arithmetic on every JSON number literal the door would examine.
func FuzzExactDouble(f *testing.F) {
	for _, s := range []string{"0", "1.5", "9007199254740993", "1e-7", "0.1", "-0", "2.5e-310", "1e308"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, lit string) {
		if len(lit) == 0 || len(lit) > maxNumberLength || !json.Valid([]byte(lit)) || (lit[0] != '-' && (lit[0] < '0' || lit[0] > '9')) {
			return
		}
		if _, ok := new(big.Rat).SetString(lit); !ok {
			return // beyond the reference's reach (an exponent of 20 digits, say)
		}
		if got, want := exactDouble([]byte(lit)), exactByRat(lit); got != want {
			t.Fatalf("exactDouble(%q) = %v, exact rational arithmetic says %v", lit, got, want)
		}
	})
}

// checkArguments is the door as the Server runs it on arguments.
func checkArguments(raw string, stringValues bool) error {
	return Check([]byte(raw), "arguments", stringValues)
}

func TestStrictArguments(t *testing.T) {
	deep := strings.Repeat(`{"a":`, maxArgumentDepth) + "1" + strings.Repeat("}", maxArgumentDepth)
	tooDeep := strings.Repeat(`[`, maxArgumentDepth+1) + strings.Repeat("]", maxArgumentDepth+1)
	cases := []struct {
		args, problem string // problem "" means accepted
	}{
		{`{}`, ""},
		{`{"a":1,"b":[1,2,{"c":"d"}],"e":null,"f":true,"g":1.5e3}`, ""},
		{`{"a":{"x":1},"b":{"x":2}}`, ""},                                         // one name in two objects
		{`{"cents":5,"centſ":100000}`, `arguments."centſ" repeats a member name`}, // U+017F folds to s
		{"{\"k\":1,\"\u212a\":2}", "arguments.\"\u212a\" repeats a member name"},  // the Kelvin sign folds to k
		{`{"region":"eu","REGION":"us"}`, `arguments.REGION repeats a member name`},
		{`{"a":{"Name":1,"name":2}}`, `arguments.a.name repeats a member name`},
		{`{"a":[{"x":1},{"x":1,"X":2}]}`, `arguments.a[1].X repeats a member name`},
		{`{"a":1,"\u0041":2}`, `repeats a member name`}, // an escaped spelling is the same name
		{`{"n":9007199254740993}`, `arguments.n is a number with no exact IEEE 754 double form`},
		{`{"n":[1,2,0.10000000000000000001]}`, `arguments.n[2] is a number with no exact`},
		{`{"n":1` + strings.Repeat("0", 40) + `}`, `arguments.n is a number literal longer than 40 characters`},
		{`{"s":"\ud800"}`, `arguments.s holds an unpaired surrogate escape`},
		{`{"s":"\udc00x"}`, `holds an unpaired surrogate escape`},
		{`{"s":"\ud83d\ude00"}`, ""}, // a pair is a character
		{"{\"s\":\"\xff\"}", `arguments.s is not valid UTF-8`},
		{"{\"\xc3\x28\":1}", `is not valid UTF-8`},
		{deep, ""},
		{tooDeep, `is nested more than 100 levels deep`},
	}
	for _, c := range cases {
		err := checkArguments(c.args, false)
		if c.problem == "" {
			assert.NoError(t, err, c.args)
			continue
		}
		if assert.Error(t, err, c.args) {
			assert.Contains(t, err.Error(), c.problem, c.args)
		}
	}
}

func TestStrictArgumentsManyMembers(t *testing.T) {
	// Past the pairwise phase the names go through a set: a duplicate
	// far from its twin is still found, whichever phase each is in.
	var b strings.Builder
	b.WriteString("{")
	for i := 0; i < 3*pairwiseNames; i++ {
		b.WriteString(`"m` + strconv.Itoa(i) + `":0,`)
	}
	ok := b.String() + `"z":0}`
	assert.NoError(t, checkArguments(ok, false))
	for _, twin := range []string{`"M0"`, `"M` + strconv.Itoa(pairwiseNames-1) + `"`, `"M` + strconv.Itoa(2*pairwiseNames) + `"`, `"m1\u017f"`} {
		bad := b.String() + twin + `:1}`
		if twin == `"m1\u017f"` {
			bad = b.String() + `"m1s":1,` + twin + `:1}`
		}
		err := checkArguments(bad, false)
		if assert.Error(t, err, twin) {
			assert.Contains(t, err.Error(), "repeats a member name")
		}
	}
}

func TestStrictPromptArguments(t *testing.T) {
	assert.NoError(t, checkArguments(`{"a":"x","b":"y"}`, true))
	err := checkArguments(`{"a":"x","b":1}`, true)
	require.Error(t, err)
	assert.Equal(t, "arguments.b must be a string", err.Error())
	err = checkArguments(`{"a":"x","A":"y"}`, true)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "repeats a member name")
}

func TestStrictArgumentsQuoteAShortPrefix(t *testing.T) {
	long := strings.Repeat("a", 64<<10)
	for _, args := range []string{
		`{"` + long + `":1,"` + strings.ToUpper(long) + `":2}`,
		`{"` + long + `":9007199254740993}`,
		`{"` + strings.Repeat("é", 40000) + `\n":` + "1" + strings.Repeat("1", 100) + `}`,
	} {
		err := checkArguments(args, false)
		require.Error(t, err)
		assert.Less(t, len(err.Error()), 200, "the message quotes a short prefix of the name")
		assert.True(t, utf8.ValidString(err.Error()))
		assert.NotContains(t, err.Error(), "\n", "no raw line break of the caller's reaches the message")
	}
}

// referenceViolations lists, by other means, what the door must refuse
// in a valid JSON text: names equal under folding in one object, inexact
// numbers, invalid UTF-8.
func referenceViolations(t *testing.T, raw []byte) (names, numbers, utf, unknown bool) {
	utf = !utf8.Valid(raw) // JSON syntax is ASCII: bad bytes sit in strings
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var walk func() error
	walk = func() error {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		switch v := tok.(type) {
		case json.Delim:
			switch v {
			case '{':
				var seen []string
				for dec.More() {
					k, err := dec.Token()
					if err != nil {
						return err
					}
					name := k.(string)
					for _, s := range seen {
						if strings.EqualFold(s, name) {
							names = true
						}
					}
					seen = append(seen, name)
					if err := walk(); err != nil {
						return err
					}
				}
				_, err = dec.Token()
				return err
			case '[':
				for dec.More() {
					if err := walk(); err != nil {
						return err
					}
				}
				_, err = dec.Token()
				return err
			}
		case json.Number:
			if _, ok := new(big.Rat).SetString(string(v)); !ok && len(v) <= maxNumberLength {
				unknown = true // beyond the reference's reach: an exponent of 20 digits, say
			} else if len(v) > maxNumberLength || !exactByRat(string(v)) {
				numbers = true
			}
		}
		return nil
	}
	require.NoError(t, walk())
	return names, numbers, utf, unknown
}

// FuzzStrictArguments checks the door against a reference built on
// encoding/json's tokenizer and exact arithmetic: what the door accepts
// has none of the refused properties, and what it refuses has one.
func FuzzStrictArguments(f *testing.F) {
	for _, s := range []string{
		`{}`, `{"a":1}`, `{"a":1,"A":2}`, `{"centſ":1,"cents":2}`, `{"k":1,"K":2}`,
		`{"n":9007199254740993}`, `{"a":[{"b":[1.5,"x",null]}]}`, `{"s":"\ud800"}`, `{"a":{"b":{}},"c":[]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if !json.Valid(raw) || len(bytes.TrimSpace(raw)) == 0 {
			return
		}
		err := Check(raw, "arguments", false)
		names, numbers, utf, unknown := referenceViolations(t, raw)
		if unknown {
			return
		}
		if err == nil {
			if names || numbers || utf {
				t.Fatalf("door accepted %q: names %v numbers %v utf8 %v", raw, names, numbers, utf)
			}
			return
		}
		m := err.Error()
		switch {
		case strings.Contains(m, "repeats a member name"):
			if !names {
				t.Fatalf("door refused %q for a repeated name the reference does not see: %s", raw, m)
			}
		case strings.Contains(m, "number"):
			if !numbers {
				t.Fatalf("door refused %q for a number the reference finds exact: %s", raw, m)
			}
		case strings.Contains(m, "UTF-8"):
			if !utf {
				t.Fatalf("door refused %q as invalid UTF-8: %s", raw, m)
			}
		case strings.Contains(m, "surrogate"), strings.Contains(m, "nested"):
		default:
			t.Fatalf("door refused valid JSON %q with %s", raw, m)
		}
	})
}

func TestAppendFoldedMatchesEqualFold(t *testing.T) {
	names := []string{"s", "S", "ſ", "k", "K", "K", "ß", "ẞ", "Σ", "σ", "ς", "ǅ", "ǆ", "Ǆ", "é", "É", "i", "İ", "ı", "x"}
	for _, a := range names {
		for _, b := range names {
			same := bytes.Equal(appendFolded(nil, []byte(a)), appendFolded(nil, []byte(b)))
			assert.Equal(t, bytes.EqualFold([]byte(a), []byte(b)), same, "%q %q", a, b)
		}
	}
}

// FuzzValidJSON holds Valid to encoding/json's verdict.
func FuzzValidJSON(f *testing.F) {
	for _, s := range []string{`{}`, `[1,2]`, ` {"a" : [true, false, null, -0.5e+3, "\u00e9\n"]} `, `{"a":}`, `01`, `1.`, `"\x"`, `[1,]`, "\"\x01\"", `{"a":1}x`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := Valid(b), json.Valid(b); got != want {
			t.Fatalf("Valid(%q) = %v, json.Valid says %v", b, got, want)
		}
	})
}

func TestValidJSONDepth(t *testing.T) {
	assert.True(t, Valid([]byte(strings.Repeat("[", maxValidDepth)+strings.Repeat("]", maxValidDepth))))
	assert.False(t, Valid([]byte(strings.Repeat("[", maxValidDepth+1)+strings.Repeat("]", maxValidDepth+1))))
}
