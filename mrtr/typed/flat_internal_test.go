package typed

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type flatLevel string

// flatForm has a field of every kind the flat decoder fills.
type flatForm struct {
	Name    string    `json:"name"`
	Agree   bool      `json:"agree"`
	Age     int8      `json:"age"`
	Count   uint16    `json:"count"`
	Score   float32   `json:"score"`
	Ratio   float64   `json:"ratio,omitempty"`
	Level   flatLevel `json:"level"`
	Tags    []string  `json:"tags"`
	Plain   string
	Skipped string `json:"-"`
	Dash    string `json:"-,"`
	hidden  string //nolint:unused // an unexported field is not decoded
}

// decodeBoth decodes raw as the flat decoder does, falling back as core
// does, and as encoding/json does, and reports whether the fast path took
// it.
func decodeBoth[T any](t *testing.T, raw string) (got, want T, fast bool) {
	t.Helper()
	d := newFlatDecoder(reflect.TypeFor[T]())
	require.NotNil(t, d)
	c := core{flat: d}
	errGot := c.unmarshal([]byte(raw), &got)
	errWant := json.Unmarshal([]byte(raw), &want)
	require.Equal(t, errWant == nil, errGot == nil, "%s: %v / %v", raw, errGot, errWant)
	var probe T
	fast = d.decode([]byte(raw), reflect.ValueOf(&probe).Elem())
	return got, want, fast
}

// What the flat decoder fills is what encoding/json fills; what it
// declines (names in another case, members no field has, values of other
// types) encoding/json decodes.
func TestFlatDecoderAgreesWithEncodingJSON(t *testing.T) {
	for _, c := range []struct {
		raw  string
		fast bool
	}{
		{`{"name":"Ada","agree":true,"age":-7,"count":65535,"score":1.5,"ratio":-2e-3,"level":"high","tags":["a","b"],"Plain":"p"}`, true},
		{`{"name":"\u00e9\n\"x\"","agree":false,"tags":[]}`, true},
		{`{"name":null,"tags":null,"age":null}`, true},
		{`{ "name" : "spaced" , "tags" : [ "a" , "b" ] }`, true},
		{`{"name":"first","name":"second"}`, true}, // the last wins in both
		{`{}`, true},
		{`{"NAME":"Ada"}`, false},              // another case: encoding/json matches it
		{`{"plain":"p"}`, false},               // likewise
		{`{"other":1}`, false},                 // no such field: ignored there
		{`{"Skipped":"s"}`, false},             // a field json:"-" does not take
		{`{"age":1.0}`, false},                 // an error there
		{`{"age":128}`, false},                 // overflow: an error there
		{`{"count":-1}`, false},                // likewise
		{`{"score":1e39}`, false},              // float32 overflow: an error there
		{`{"name":5}`, false},                  // wrong type: an error there
		{`{"agree":"true"}`, false},            // likewise
		{`{"tags":["a",null]}`, false},         // null element: left to encoding/json
		{`{"tags":["a",1]}`, false},            // wrong element type
		{`{"tags":"a"}`, false},                // not an array
		{`{"name":"Ada","level":"low"}`, true}, // a named string type
		{`{"tags":["a"],"tags":null}`, true},   // null sets a list to nil there
		{`{"-":"dash"}`, true},                 // the field tagged "-,"
	} {
		got, want, fast := decodeBoth[flatForm](t, c.raw)
		assert.Equal(t, want, got, c.raw)
		assert.Equal(t, c.fast, fast, c.raw)
	}
}

// Structs whose fields encoding/json fills by rules the flat decoder does
// not follow get no flat decoder.
func TestFlatDecoderDeclinesOtherShapes(t *testing.T) {
	type inner struct{ A string }
	for name, typ := range map[string]reflect.Type{
		"embedded": reflect.TypeFor[struct{ inner }](),
		"same name": reflect.TypeFor[struct {
			A string `json:"B"`
			B string
		}](),
		"string opt": reflect.TypeFor[struct {
			N int `json:"n,string"`
		}](),
		"unmarshaler":  reflect.TypeFor[struct{ R json.RawMessage }](),
		"pointer":      reflect.TypeFor[struct{ P *string }](),
		"map":          reflect.TypeFor[struct{ M map[string]string }](),
		"int slice":    reflect.TypeFor[struct{ L []int }](),
		"nested":       reflect.TypeFor[struct{ S inner }](),
		"any":          reflect.TypeFor[struct{ V any }](),
		"time-like":    reflect.TypeFor[struct{ T textForm }](),
		"textual elem": reflect.TypeFor[struct{ T []textForm }](),
		"own method":   reflect.TypeFor[trimmedForm](),
	} {
		assert.Nil(t, newFlatDecoder(typ), name)
	}
	// A tag name encoding/json does not take leaves the field's own name.
	d := newFlatDecoder(reflect.TypeFor[struct {
		A string `json:"a\"b"`
	}]())
	require.NotNil(t, d)
	assert.Contains(t, d.fields, "A")
}

// trimmedForm decodes itself: its method, not its fields, decides.
type trimmedForm struct {
	Name string `json:"name"`
}

func (f *trimmedForm) UnmarshalJSON(b []byte) error {
	var raw struct{ Name string }
	err := json.Unmarshal(b, &raw)
	f.Name = strings.TrimSpace(raw.Name)
	return err
}

// textForm decodes from JSON text by its own method.
type textForm string

func (f *textForm) UnmarshalText(b []byte) error { *f = textForm("t:" + string(b)); return nil }

// FuzzFlatDecoder: on any JSON object, the flat decoder and its fallback
// give exactly what encoding/json gives.
func FuzzFlatDecoder(f *testing.F) {
	for _, s := range []string{
		`{"name":"Ada","agree":true,"age":-7,"count":3,"score":1.5,"level":"x","tags":["a"]}`,
		`{"name":"\ud83d\ude00","tags":[]}`, `{"age":1e2}`, `{"Name":"A","name":"B"}`, `{"score":-0}`,
		`{"name":"\ud800"}`, `{"tags":["\u0000"]}`,
	} {
		f.Add([]byte(s))
	}
	d := newFlatDecoder(reflect.TypeFor[flatForm]())
	c := core{flat: d}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if !json.Valid(raw) || len(raw) == 0 || raw[0] != '{' {
			return
		}
		var got, want flatForm
		errGot := c.unmarshal(raw, &got)
		errWant := json.Unmarshal(raw, &want)
		if (errGot == nil) != (errWant == nil) {
			t.Fatalf("%s: %v / %v", raw, errGot, errWant)
		}
		if errWant == nil && !reflect.DeepEqual(got, want) {
			t.Fatalf("%s:\n got %#v\nwant %#v", raw, got, want)
		}
	})
}
