package typed

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"net/netip"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The property: for every validate rule the mapping renders, the input
// schema a tool publishes admits a value exactly when the tool accepts it.
// Each case is a struct with one field "v" of a given type and tag. Its
// values are the member absent, null, values at and around the rule's
// boundary, values of the wrong type, and random ones. The schema's
// verdict is jsonschema-go's Resolved.Validate on the published schema
// (after a JSON round trip, as a client reads it); the tool's is the
// Binder's, which checks the JSON types and then the validate tags.

// absent stands for a member that is not sent.
type absentT struct{}

var absent = absentT{}

// propCase is one struct type and the values to try on it.
type propCase struct {
	typ  reflect.Type // the field's type
	tag  string       // its validate tag
	omit bool         // json omitempty
	vals []any        // values to try besides the generic ones
	gen  func(r *rand.Rand) any
	// sound marks a rule with no exact form: the schema may admit what
	// the tag refuses, never the reverse.
	sound bool
}

func (c propCase) name() string {
	n := fmt.Sprintf("%v/%s", c.typ, c.tag)
	if c.omit {
		n += "/omitempty"
	}
	return n
}

func (c propCase) structType() reflect.Type {
	jt := `json:"v"`
	if c.omit {
		jt = `json:"v,omitempty"`
	}
	tag := jt
	if c.tag != "" {
		tag += fmt.Sprintf(" validate:%q", c.tag)
	}
	return reflect.StructOf([]reflect.StructField{{Name: "V", Type: c.typ, Tag: reflect.StructTag(tag)}})
}

var (
	tString   = reflect.TypeFor[string]()
	tPString  = reflect.TypeFor[*string]()
	tInt      = reflect.TypeFor[int]()
	tInt8     = reflect.TypeFor[int8]()
	tUint     = reflect.TypeFor[uint]()
	tPInt     = reflect.TypeFor[*int]()
	tFloat    = reflect.TypeFor[float64]()
	tFloat32  = reflect.TypeFor[float32]()
	tBool     = reflect.TypeFor[bool]()
	tPBool    = reflect.TypeFor[*bool]()
	tStrings  = reflect.TypeFor[[]string]()
	tInts     = reflect.TypeFor[[]int]()
	tPStrings = reflect.TypeFor[[]*string]()
	tMap      = reflect.TypeFor[map[string]int]()
)

type inner struct {
	X int    `json:"x" validate:"gte=1"`
	Y string `json:"y,omitempty" validate:"omitempty,max=2"`
}

// runes the random strings are made of: ASCII, two-byte, three-byte and
// four-byte UTF-8, and the characters the cases' parameters use.
var runes = []rune("abxy.-_ éß日本😀AB0129#")

func randString(r *rand.Rand, max int) string {
	n := r.IntN(max + 1)
	var b strings.Builder
	for range n {
		b.WriteRune(runes[r.IntN(len(runes))])
	}
	return b.String()
}

// strs returns strings of each length, of several kinds of rune.
func strs(lengths ...int) []any {
	var out []any
	for _, n := range lengths {
		for _, rs := range []string{"a", "é", "日", "😀", " "} {
			out = append(out, strings.Repeat(rs, n))
		}
	}
	return out
}

func ints(lo, hi int) []any {
	var out []any
	for i := lo; i <= hi; i++ {
		out = append(out, i)
	}
	return out
}

func genString(r *rand.Rand) any { return randString(r, 6) }
func genInt(r *rand.Rand) any    { return r.IntN(41) - 20 }
func genFloat(r *rand.Rand) any  { return math.Round((r.Float64()*8-4)*8) / 8 }
func genStrings(r *rand.Rand) any {
	out := make([]any, r.IntN(4))
	for i := range out {
		if r.IntN(8) == 0 {
			out[i] = nil
		} else {
			out[i] = []string{"a", "b", "c", "ab", "", "abc"}[r.IntN(6)]
		}
	}
	return out
}
func genInts(r *rand.Rand) any {
	out := make([]any, r.IntN(4))
	for i := range out {
		out[i] = r.IntN(14) - 2
	}
	return out
}
func genMap(r *rand.Rand) any {
	out := map[string]any{}
	for range r.IntN(4) {
		out[randString(r, 3)] = r.IntN(8) - 3
	}
	return out
}

// wrong are values of every JSON type, so that each case also meets
// values of the wrong type.
var wrong = []any{true, 2.5, "s", []any{}, map[string]any{}}

var propCases = []propCase{
	// Lengths of strings, in runes.
	{typ: tString, tag: "min=3", vals: strs(0, 1, 2, 3, 4), gen: genString},
	{typ: tString, tag: "max=3", vals: strs(0, 2, 3, 4), gen: genString},
	{typ: tString, tag: "len=3", vals: strs(0, 2, 3, 4), gen: genString},
	{typ: tString, tag: "gte=2", vals: strs(0, 1, 2, 3), gen: genString},
	{typ: tString, tag: "lte=2", vals: strs(0, 1, 2, 3), gen: genString},
	{typ: tString, tag: "gt=2", vals: strs(1, 2, 3), gen: genString},
	{typ: tString, tag: "lt=2", vals: strs(1, 2, 3), gen: genString},
	{typ: tString, tag: "min=1,max=3", omit: true, vals: strs(0, 1, 3, 4), gen: genString},
	{typ: tString, tag: "max=0x3", vals: strs(2, 3, 4), gen: genString},
	{typ: tString, tag: "required", vals: strs(0, 1), gen: genString},
	{typ: tString, tag: "required,max=5", omit: true, vals: strs(0, 1, 5, 6), gen: genString},
	{typ: tString, tag: "omitempty,min=3", vals: strs(0, 1, 3), gen: genString},
	{typ: tString, tag: "omitempty,min=3", omit: true, vals: strs(0, 1, 3), gen: genString},
	{typ: tString, tag: "omitempty,max=2", vals: strs(0, 2, 3), gen: genString},
	{typ: tString, tag: "omitzero,len=2", omit: true, vals: strs(0, 1, 2, 3), gen: genString},
	// Values of strings.
	{typ: tString, tag: "eq=abc", vals: []any{"abc", "ab", "abcd", "ABC", ""}, gen: genString},
	{typ: tString, tag: "ne=abc", vals: []any{"abc", "ab", ""}, gen: genString},
	{typ: tString, tag: "ne=", omit: true, vals: []any{"", "a"}, gen: genString},
	{typ: tString, tag: "oneof=red green 'light blue'", vals: []any{"red", "green", "light blue", "light", "blue", "Red", "", "'light"}, gen: genString},
	{typ: tString, tag: "oneof=a b,eq=b", vals: []any{"a", "b", "c"}, gen: genString},
	{typ: tString, tag: "omitempty,oneof=a b", omit: true, vals: []any{"a", "b", "", "c"}, gen: genString},
	{typ: tString, tag: "startswith=ab", vals: []any{"ab", "abc", "xab", "a", "", "AB"}, gen: genString},
	{typ: tString, tag: "endswith=.go", vals: []any{"a.go", ".go", "xgo", "a.gox", "ago", ""}, gen: genString},
	{typ: tString, tag: "contains=x.y", vals: []any{"x.y", "ax.yb", "xzy", "x", ""}, gen: genString},
	{typ: tString, tag: "contains=a0x2Cb", vals: []any{"a,b", "ab", "xa,by"}, gen: genString},
	{typ: tString, tag: "startswith=ab,endswith=ba", vals: []any{"aba", "abba", "ab", "ba", "abxba"}, gen: genString},
	{typ: tString, tag: "startswith=(,endswith=$", vals: []any{"($", "(x$", "(", "$", "x"}, gen: genString},
	{typ: tString, tag: "min=2,max=4,contains=-", omit: true, vals: []any{"-", "a-", "a-bc", "a-bcd", "ab"}, gen: genString},
	{typ: tString, tag: "hexcolour", vals: []any{"#00ff7f", "#00FF7F", "00ff7f", "#00ff7", "x#00ff7fx", ""}, gen: genString},
	// Pointers to strings: null and absent pass only after an omit rule.
	{typ: tPString, tag: "min=2", vals: strs(0, 1, 2), gen: genString},
	{typ: tPString, tag: "min=2", omit: true, vals: strs(0, 1, 2), gen: genString},
	{typ: tPString, tag: "omitempty,min=2", omit: true, vals: strs(0, 1, 2), gen: genString},
	{typ: tPString, tag: "omitnil,max=1", vals: strs(0, 1, 2), gen: genString},
	{typ: tPString, tag: "omitzero,min=2", omit: true, vals: strs(0, 1, 2), gen: genString},
	{typ: tPString, tag: "required", omit: true, vals: strs(0, 1), gen: genString},
	{typ: tPString, tag: "omitempty,oneof=a b", omit: true, vals: []any{"a", "b", "", "c"}, gen: genString},
	{typ: tPString, tag: "", omit: true, vals: []any{"a"}, gen: genString},
	// Integers.
	{typ: tInt, tag: "min=3", vals: ints(1, 5), gen: genInt},
	{typ: tInt, tag: "max=3", vals: ints(1, 5), gen: genInt},
	{typ: tInt, tag: "gte=-2", vals: ints(-4, 0), gen: genInt},
	{typ: tInt, tag: "lte=-2", vals: ints(-4, 0), gen: genInt},
	{typ: tInt, tag: "gt=5", vals: ints(3, 7), gen: genInt},
	{typ: tInt, tag: "lt=5", vals: ints(3, 7), gen: genInt},
	{typ: tInt, tag: "len=4", vals: ints(3, 5), gen: genInt},
	{typ: tInt, tag: "eq=7", vals: ints(6, 8), gen: genInt},
	{typ: tInt, tag: "ne=0", vals: ints(-1, 1), gen: genInt},
	{typ: tInt, tag: "min=0x10", vals: ints(14, 17), gen: genInt},
	{typ: tInt, tag: "oneof=1 2 3", vals: ints(0, 4), gen: genInt},
	{typ: tInt, tag: "oneof=01 2 +3 -4", vals: ints(-5, 4), gen: genInt},
	{typ: tInt, tag: "required", vals: ints(-1, 1), gen: genInt},
	{typ: tInt, tag: "required", omit: true, vals: ints(-1, 1), gen: genInt},
	{typ: tInt, tag: "omitempty,gte=1,lte=50", omit: true, vals: append(ints(-1, 2), 49, 50, 51), gen: genInt},
	{typ: tInt, tag: "omitempty,lte=5", vals: ints(-1, 6), gen: genInt},
	{typ: tInt, tag: "omitzero,gt=3", omit: true, vals: ints(-1, 5), gen: genInt},
	{typ: tInt, tag: "gte=1,lte=5,ne=3", vals: ints(0, 6), gen: genInt},
	{typ: tInt8, tag: "max=200", vals: []any{-129, -128, 126, 127, 128, 200, 201}, gen: genInt},
	{typ: tInt8, tag: "min=-200,lte=100", vals: []any{-129, -128, 100, 101}, gen: genInt},
	{typ: tUint, tag: "gte=5", vals: ints(-1, 7), gen: genInt},
	{typ: tUint, tag: "lt=3", vals: ints(-1, 4), gen: genInt},
	{typ: tUint, tag: "required", omit: true, vals: ints(-1, 2), gen: genInt},
	{typ: tUint, tag: "oneof=0 7", vals: ints(-1, 8), gen: genInt},
	{typ: tPInt, tag: "gte=1", omit: true, vals: ints(-1, 2), gen: genInt},
	{typ: tPInt, tag: "omitempty,gte=1", omit: true, vals: ints(-1, 2), gen: genInt},
	{typ: tPInt, tag: "omitzero,gte=1", omit: true, vals: ints(-1, 2), gen: genInt},
	{typ: tPInt, tag: "required", vals: ints(-1, 1), gen: genInt},
	// Floats.
	{typ: tFloat, tag: "gt=0.5", vals: []any{0.25, 0.5, math.Nextafter(0.5, 1), 0.75, 0}, gen: genFloat},
	{typ: tFloat, tag: "lt=1.5", vals: []any{1.25, 1.5, math.Nextafter(1.5, 0), 2}, gen: genFloat},
	{typ: tFloat, tag: "gte=-1.25", vals: []any{-1.5, -1.25, math.Nextafter(-1.25, -2), 0}, gen: genFloat},
	{typ: tFloat, tag: "lte=0.1", vals: []any{0.1, math.Nextafter(0.1, 1), 0.09, 1}, gen: genFloat},
	{typ: tFloat, tag: "eq=0.1", vals: []any{0.1, math.Nextafter(0.1, 1), 0}, gen: genFloat},
	{typ: tFloat, tag: "ne=0", vals: []any{0, math.Copysign(0, -1), 1}, gen: genFloat},
	{typ: tFloat, tag: "len=2.5", vals: []any{2.5, 2, 3}, gen: genFloat},
	{typ: tFloat, tag: "omitempty,gte=1", omit: true, vals: []any{0, math.Copysign(0, -1), 0.5, 1, 2}, gen: genFloat},
	{typ: tFloat, tag: "required", omit: true, vals: []any{0, 1, math.Copysign(0, -1)}, gen: genFloat},
	{typ: tFloat32, tag: "gt=0.1", vals: []any{0.1, 0.2, 0}, gen: genFloat, sound: true},
	// Booleans.
	{typ: tBool, tag: "required", vals: []any{true, false}},
	{typ: tBool, tag: "required", omit: true, vals: []any{true, false}},
	{typ: tBool, tag: "eq=false", vals: []any{true, false}},
	{typ: tBool, tag: "ne=true", omit: true, vals: []any{true, false}},
	{typ: tPBool, tag: "required", vals: []any{true, false}},
	// Arrays.
	{typ: tStrings, tag: "min=1", vals: []any{[]any{}, []any{"a"}}, gen: genStrings},
	{typ: tStrings, tag: "min=1", omit: true, vals: []any{[]any{}, []any{"a"}}, gen: genStrings},
	{typ: tStrings, tag: "max=2", omit: true, vals: []any{[]any{}, []any{"a", "b"}, []any{"a", "b", "c"}}, gen: genStrings},
	{typ: tStrings, tag: "len=2", vals: []any{[]any{"a"}, []any{"a", "b"}}, gen: genStrings},
	{typ: tStrings, tag: "gt=1,lt=3", vals: []any{[]any{"a"}, []any{"a", "b"}, []any{"a", "b", "c"}}, gen: genStrings},
	{typ: tStrings, tag: "eq=1", vals: []any{[]any{}, []any{"a"}}, gen: genStrings},
	{typ: tStrings, tag: "required", vals: []any{[]any{}, []any{"a"}}, gen: genStrings},
	{typ: tStrings, tag: "omitempty,min=1", vals: []any{[]any{}, []any{"a"}}, gen: genStrings},
	{typ: tStrings, tag: "omitzero,min=2", omit: true, vals: []any{[]any{}, []any{"a"}, []any{"a", "b"}}, gen: genStrings},
	{typ: tStrings, tag: "unique", vals: []any{[]any{"a", "a"}, []any{"a", "b"}}, gen: genStrings},
	{typ: tStrings, tag: "dive,min=2", vals: []any{[]any{"ab", "a"}, []any{"ab"}}, gen: genStrings},
	{typ: tStrings, tag: "min=1,dive,oneof=a b", vals: []any{[]any{}, []any{"a", "b"}, []any{"c"}}, gen: genStrings},
	{typ: tStrings, tag: "dive,omitempty,len=2", vals: []any{[]any{"", "ab"}, []any{"a"}}, gen: genStrings},
	{typ: tStrings, tag: "max=2,dive,required", omit: true, vals: []any{[]any{"a", ""}, []any{"a", "b", "c"}}, gen: genStrings},
	{typ: tInts, tag: "dive,gte=0,lte=9", vals: []any{[]any{0, 9}, []any{-1}, []any{10}}, gen: genInts},
	{typ: tInts, tag: "unique,dive,ne=3", vals: []any{[]any{1, 1}, []any{3}, []any{1, 2}}, gen: genInts},
	{typ: tPStrings, tag: "dive,required", vals: []any{[]any{"a", nil}, []any{""}}, gen: genStrings},
	{typ: tPStrings, tag: "dive,omitempty,min=2", vals: []any{[]any{"a", nil}, []any{"ab", nil}, []any{""}}, gen: genStrings},
	{typ: tPStrings, tag: "unique", vals: []any{[]any{nil, nil}, []any{"a", "a"}, []any{"a", nil}}, gen: genStrings},
	// Maps.
	{typ: tMap, tag: "min=1", omit: true, vals: []any{map[string]any{}, map[string]any{"a": 1}}, gen: genMap},
	{typ: tMap, tag: "max=1", vals: []any{map[string]any{}, map[string]any{"a": 1, "b": 2}}, gen: genMap},
	{typ: tMap, tag: "required", omit: true, vals: []any{map[string]any{}}, gen: genMap},
	{typ: tMap, tag: "omitzero,min=2", omit: true, vals: []any{map[string]any{}, map[string]any{"a": 1}}, gen: genMap},
	{typ: tMap, tag: "dive,keys,min=2,endkeys,gte=0", vals: []any{map[string]any{"ab": 0}, map[string]any{"a": 0}, map[string]any{"ab": -1}}, gen: genMap},
	{typ: tMap, tag: "dive,lte=1", vals: []any{map[string]any{"a": 1}, map[string]any{"a": 2}}, gen: genMap},
	{typ: tMap, tag: "dive,keys,omitempty,min=2,endkeys", vals: []any{map[string]any{"": 1}, map[string]any{"a": 1}, map[string]any{"ab": 1}}, gen: genMap, sound: true},
	// Nested structs: looked into when validator does.
	{typ: reflect.TypeFor[inner](), omit: true, vals: []any{map[string]any{"x": 1}, map[string]any{"x": 0}, map[string]any{"x": 1, "y": "abc"}, map[string]any{}}},
	{typ: reflect.TypeFor[*inner](), omit: true, vals: []any{map[string]any{"x": 1}, map[string]any{"x": 0}}},
	{typ: reflect.TypeFor[*inner](), tag: "required", vals: []any{map[string]any{"x": 1}}},
	{typ: reflect.TypeFor[[]inner](), vals: []any{[]any{map[string]any{"x": 0}}, []any{map[string]any{"x": 1}}}},
	{typ: reflect.TypeFor[[]inner](), tag: "dive", vals: []any{[]any{map[string]any{"x": 0}}, []any{map[string]any{"x": 1}}}},
	{typ: reflect.TypeFor[map[string]inner](), tag: "dive", vals: []any{map[string]any{"k": map[string]any{"x": 0}}, map[string]any{"k": map[string]any{"x": 1}}}},
	{typ: reflect.TypeFor[inner](), tag: "omitempty", omit: true, vals: []any{map[string]any{"x": 0}, map[string]any{"x": 0, "y": "abc"}}, sound: true},
	// Rules without a JSON Schema form: the schema only never claims more.
	{typ: tString, tag: "excludes=x", vals: []any{"x", "ax", "a"}, gen: genString, sound: true},
	{typ: tString, tag: "alpha", vals: []any{"ab", "a1", ""}, gen: genString, sound: true},
	{typ: tString, tag: "min=2|eq=", vals: []any{"", "a", "ab"}, gen: genString, sound: true},
	{typ: tString, tag: "min=1,omitempty,max=3", vals: strs(0, 1, 4), gen: genString, sound: true},
	{typ: tString, tag: "datetime=15:04", vals: []any{"10:30", "25:00", ""}, gen: genString, sound: true},
	{typ: tPString, tag: "required_without=V", vals: []any{"a"}, gen: genString, sound: true},
}

// hexcolour is a tag registered for the test, as an application would.
func init() {
	if err := RegisterPattern("hexcolour", `^#[0-9a-f]{6}$`, "must be a colour such as #00ff7f"); err != nil {
		panic(err)
	}
}

// published returns the input schema of st as a client reads it, resolved.
func published(t *testing.T, st reflect.Type) (*jsonschema.Resolved, string) {
	t.Helper()
	s, err := inputSchemaForType(st, nil)
	require.NoError(t, err)
	b, err := json.Marshal(s)
	require.NoError(t, err)
	var back jsonschema.Schema
	require.NoError(t, json.Unmarshal(b, &back))
	rs, err := back.Resolve(nil)
	require.NoError(t, err, string(b))
	return rs, string(b)
}

// verdicts returns what the schema and the Binder say of the object
// {"v": v} ({} for absent).
func verdicts(t *testing.T, rs *jsonschema.Resolved, b core, st reflect.Type, v any) (raw string, schemaOK, tagOK bool, tagErr error) {
	obj := map[string]any{}
	if v != absent {
		obj["v"] = v
	}
	bs, err := json.Marshal(obj)
	require.NoError(t, err)
	var inst any
	require.NoError(t, json.Unmarshal(bs, &inst))
	schemaOK = rs.Validate(inst) == nil
	tagErr = b.bindInto(bs, reflect.New(st).Interface())
	return string(bs), schemaOK, tagErr == nil, tagErr
}

func caseSeed(name string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(name))
	return h.Sum64()
}

func TestSchemaAdmitsWhatTagsAccept(t *testing.T) {
	for _, c := range propCases {
		t.Run(c.name(), func(t *testing.T) {
			st := c.structType()
			rs, schema := published(t, st)
			b, err := newCore(st, nil)
			require.NoError(t, err)
			r := rand.New(rand.NewPCG(caseSeed(c.name()), 1))
			vals := append([]any{absent, nil}, wrong...)
			vals = append(vals, c.vals...)
			if c.gen != nil {
				for range 300 {
					vals = append(vals, c.gen(r))
				}
			}
			var accepted, refused, failures int
			for _, v := range vals {
				if failures >= 5 {
					break
				}
				raw, schemaOK, tagOK, tagErr := verdicts(t, rs, b, st, v)
				if tagOK {
					accepted++
				} else {
					refused++
				}
				ok := true
				switch {
				case c.sound:
					if !schemaOK {
						ok = assert.False(t, tagOK, "the schema refuses %s, which the tag accepts: schema %s", raw, schema)
					}
				default:
					ok = assert.Equal(t, tagOK, schemaOK, "value %s: tags say %v (%v), schema %s says %v", raw, tagOK, tagErr, schema, schemaOK)
				}
				if !ok {
					failures++
				}
			}
			if !c.sound {
				assert.Positive(t, accepted, "some value passes")
				assert.Positive(t, refused, "some value is refused")
			}
		})
	}
}

// The mapped cases carry the keywords the documentation's table names.
func TestSchemaKeywordsOfTags(t *testing.T) {
	for tag, want := range map[string]string{
		"min=3":                              `{"type":"string","minLength":3}`,
		"max=3":                              `{"type":"string","maxLength":3}`,
		"len=3":                              `{"type":"string","minLength":3,"maxLength":3}`,
		"gt=2":                               `{"type":"string","minLength":3}`,
		"lt=2":                               `{"type":"string","maxLength":1}`,
		"required":                           `{"type":"string","minLength":1}`,
		"eq=abc":                             `{"type":"string","enum":["abc"]}`,
		"ne=abc":                             `{"type":"string","not":{"enum":["abc"]}}`,
		"oneof=red 'light blue'":             `{"type":"string","enum":["red","light blue"]}`,
		"startswith=a.b":                     `{"type":"string","pattern":"^a\\.b"}`,
		"endswith=.go":                       `{"type":"string","pattern":"\\.go$"}`,
		"contains=(x)":                       `{"type":"string","pattern":"\\(x\\)"}`,
		"startswith=a,endswith=b":            `{"type":"string","pattern":"^a","allOf":[{"pattern":"b$"}]}`,
		"email":                              `{"type":"string","format":"email"}`,
		"url":                                `{"type":"string","format":"uri"}`,
		"uri":                                `{"type":"string","format":"uri"}`,
		"uuid":                               `{"type":"string","format":"uuid"}`,
		"hostname":                           `{"type":"string","format":"hostname"}`,
		"ipv4":                               `{"type":"string","format":"ipv4"}`,
		"ipv6":                               `{"type":"string","format":"ipv6"}`,
		"datetime=2006-01-02":                `{"type":"string","format":"date"}`,
		"datetime=2006-01-02T15:04:05Z07:00": `{"type":"string","format":"date-time"}`,
		"omitempty,email":                    `{"type":"string","anyOf":[{"const":""},{"format":"email"}]}`,
		"omitempty,max=3":                    `{"type":"string","maxLength":3}`,
		"excludes=x":                         `{"type":"string"}`,
		"hexcolour":                          `{"type":"string","pattern":"^#[0-9a-f]{6}$"}`,
	} {
		st := propCase{typ: tString, tag: tag}.structType()
		s, err := inputSchemaForType(st, nil)
		require.NoError(t, err, tag)
		b, _ := json.Marshal(s.Properties["v"])
		assert.JSONEq(t, want, string(b), tag)
	}
	for tag, want := range map[string]string{
		"gte=1,lte=5":            `{"type":"integer","minimum":1,"maximum":5}`,
		"gt=1,lt=5":              `{"type":"integer","exclusiveMinimum":1,"exclusiveMaximum":5}`,
		"len=4":                  `{"type":"integer","minimum":4,"maximum":4}`,
		"oneof=1 2":              `{"type":"integer","enum":[1,2]}`,
		"required":               `{"type":"integer","not":{"enum":[0]}}`,
		"omitempty,gte=1,lte=50": `{"type":"integer","anyOf":[{"const":0},{"minimum":1,"maximum":50}]}`,
	} {
		st := propCase{typ: tInt, tag: tag}.structType()
		s, err := inputSchemaForType(st, nil)
		require.NoError(t, err, tag)
		b, _ := json.Marshal(s.Properties["v"])
		assert.JSONEq(t, want, string(b), tag)
	}
	for _, c := range []struct {
		typ  reflect.Type
		tag  string
		want string
	}{
		{tPString, "omitempty,oneof=a b", `{"type":["null","string"],"enum":["a","b",null]}`},
		{tPString, "min=2", `{"type":"string","minLength":2}`},
		{tStrings, "min=1,max=3,unique,dive,min=2", `{"type":"array","items":{"type":"string","minLength":2},"minItems":1,"maxItems":3,"uniqueItems":true}`},
		{tStrings, "omitempty,min=1", `{"type":["null","array"],"items":{"type":"string"},"minItems":1}`},
		{tMap, "min=1,dive,keys,max=3,endkeys,gte=0", `{"type":"object","additionalProperties":{"type":"integer","minimum":0},"minProperties":1,"propertyNames":{"maxLength":3}}`},
		{tBool, "required", `{"type":"boolean","enum":[true]}`},
		{tFloat, "gt=0.5,lte=2", `{"type":"number","exclusiveMinimum":0.5,"maximum":2}`},
		{tFloat, "required", `{"type":"number","not":{"enum":[0]}}`},
		{tFloat32, "gt=0.5", `{"type":"number"}`},
	} {
		st := propCase{typ: c.typ, tag: c.tag}.structType()
		s, err := inputSchemaForType(st, nil)
		require.NoError(t, err, c.tag)
		b, _ := json.Marshal(s.Properties["v"])
		assert.JSONEq(t, c.want, string(b), "%v %s", c.typ, c.tag)
	}
}

// Formats are annotations in JSON Schema 2020-12, and jsonschema-go does
// not assert them: the property is checked against reference checkers of
// each format (written from the RFCs the JSON Schema specification
// names), on a corpus of valid and invalid strings. Where validator's
// notion differs from the format's, the value is listed: these are the
// differences the package documentation states.
type formatCase struct {
	tag, format string
	valid       []string // valid in the format
	invalid     []string // invalid in the format
	// accepts and refuses are the strings validator judges otherwise
	// than the format: accepted although invalid, refused although valid.
	accepts, refuses []string
}

var formatCases = []formatCase{
	{tag: "email", format: "email",
		valid:   []string{"a@example.com", "first.last@sub.example.org", "x+tag@example.co", "o'brien@example.ie"},
		invalid: []string{"", "a", "a@", "@example.com", "a@@example.com", "a b@example.com", "a@example..com", ".a@example.com", "a.@example.com", "a@-example.com"},
		accepts: []string{"é@example.com"},
		refuses: []string{"a@localhost"},
	},
	{tag: "url", format: "uri",
		valid:   []string{"https://example.com", "http://example.com/a?b=c#d", "mailto:a@example.com", "urn:isbn:0451450523", "file:///etc/hosts", "http:"},
		invalid: []string{"", "example.com", "/a/b", "//example.com", "http://exa mple.com", "http://example.com/a b", "1http://x"},
		accepts: []string{"http://example.com/a b"},
		refuses: []string{"http:"},
	},
	{tag: "uri", format: "uri",
		valid:   []string{"https://example.com", "http://example.com/a?b=c#d", "urn:isbn:0451450523", "mailto:a@example.com"},
		invalid: []string{"", "example.com", "/a/b", "a/b", "http://exa mple.com"},
		accepts: []string{"/a/b"},
	},
	{tag: "uuid", format: "uuid",
		valid:   []string{"123e4567-e89b-12d3-a456-426614174000", "123E4567-E89B-12D3-A456-426614174000", "00000000-0000-0000-0000-000000000000"},
		invalid: []string{"", "123e4567e89b12d3a456426614174000", "123e4567-e89b-12d3-a456-42661417400", "123e4567-e89b-12d3-a456-4266141740000", "g23e4567-e89b-12d3-a456-426614174000", "{123e4567-e89b-12d3-a456-426614174000}"},
	},
	{tag: "hostname", format: "hostname",
		valid:   []string{"example.com", "a", "a-b.c", "xn--bcher-kva.example", "1example.com", "a.1b"},
		invalid: []string{"", "-a.com", "a-.com", "a..com", "a_b.com", "é.com", strings.Repeat("a", 64) + ".com"},
		refuses: []string{"1example.com"},
	},
	{tag: "ipv4", format: "ipv4",
		valid:   []string{"0.0.0.0", "192.168.1.1", "255.255.255.255"},
		invalid: []string{"", "256.1.1.1", "1.1.1", "1.1.1.1.1", "01.1.1.1", "1.1.1.1 ", "::1", "::ffff:1.2.3.4"},
		accepts: []string{"::ffff:1.2.3.4"},
	},
	{tag: "ipv6", format: "ipv6",
		valid:   []string{"::1", "::", "2001:db8::1", "fe80::1:2:3:4", "::ffff:1.2.3.4", "1:2:3:4:5:6:7:8"},
		invalid: []string{"", "1.2.3.4", "2001:db8:::1", "1:2:3:4:5:6:7:8:9", "fe80::1%eth0", "g::1"},
		refuses: []string{"::ffff:1.2.3.4"},
	},
	{tag: "datetime=2006-01-02", format: "date",
		valid:   []string{"2024-02-29", "1999-12-31", "0001-01-01"},
		invalid: []string{"", "2023-02-29", "2024-13-01", "2024-1-01", "24-01-01", "2024-01-32", "2024-01-01T00:00:00Z"},
	},
	{tag: "datetime=2006-01-02T15:04:05Z07:00", format: "date-time",
		valid:   []string{"2024-02-29T12:30:00Z", "2024-02-29T12:30:00.123+02:00", "1999-12-31T23:59:59-08:00", "2024-02-29t12:30:00z", "2016-12-31T23:59:60Z"},
		invalid: []string{"", "2024-02-29", "2024-02-29T24:00:00Z", "2024-02-29 12:30:00Z", "2024-02-29T12:30:00", "2024-02-30T00:00:00Z"},
		refuses: []string{"2024-02-29t12:30:00z", "2016-12-31T23:59:60Z"},
	},
}

var (
	atext    = `[A-Za-z0-9!#$%&'*+/=?^_` + "`" + `{|}~-]+`
	emailRE  = regexp.MustCompile(`^` + atext + `(\.` + atext + `)*@` + hostRE + `$`)
	dnsLabel = `[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?`
	hostRE   = dnsLabel + `(\.` + dnsLabel + `)*`
	hostOnly = regexp.MustCompile(`^` + hostRE + `$`)
	uriRE    = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*:([A-Za-z0-9\-._~!$&'()*+,;=:@/?#\[\]]|%[0-9A-Fa-f]{2})*$`)
	uuidRE   = regexp.MustCompile(`^[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}$`)
	ipv4RE   = regexp.MustCompile(`^((25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])\.){3}(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])$`)
	dateRE   = regexp.MustCompile(`^(\d{4})-(\d{2})-(\d{2})$`)
	dtRE     = regexp.MustCompile(`^(\d{4}-\d{2}-\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-](\d{2}):(\d{2}))$`)
)

func validDate(s string) bool {
	m := dateRE.FindStringSubmatch(s)
	if m == nil {
		return false
	}
	y, _ := strconv.Atoi(m[1])
	mo, _ := strconv.Atoi(m[2])
	d, _ := strconv.Atoi(m[3])
	days := []int{31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31}
	if y%4 == 0 && (y%100 != 0 || y%400 == 0) {
		days[1] = 29
	}
	return mo >= 1 && mo <= 12 && d >= 1 && d <= days[mo-1]
}

// inFormat is the reference checker of a JSON Schema format.
func inFormat(format, s string) bool {
	switch format {
	case "email":
		return emailRE.MatchString(s) && len(s) <= 254
	case "uri":
		return uriRE.MatchString(s)
	case "uuid":
		return uuidRE.MatchString(s)
	case "hostname":
		return len(s) <= 253 && hostOnly.MatchString(s)
	case "ipv4":
		return ipv4RE.MatchString(s)
	case "ipv6":
		a, err := netip.ParseAddr(s)
		return err == nil && a.Is6() && a.Zone() == ""
	case "date":
		return validDate(s)
	case "date-time":
		m := dtRE.FindStringSubmatch(s)
		if m == nil || !validDate(m[1]) {
			return false
		}
		h, _ := strconv.Atoi(m[2])
		mi, _ := strconv.Atoi(m[3])
		sec, _ := strconv.Atoi(m[4])
		oh, _ := strconv.Atoi(m[7])
		om, _ := strconv.Atoi(m[8])
		return h <= 23 && mi <= 59 && sec <= 60 && oh <= 23 && om <= 59
	}
	panic(format)
}

func TestFormatsMatchTheirTags(t *testing.T) {
	for _, fc := range formatCases {
		for _, omit := range []bool{false, true} {
			tag := fc.tag
			if omit {
				tag = "omitempty," + tag
			}
			t.Run(tag, func(t *testing.T) {
				st := propCase{typ: tString, tag: tag}.structType()
				rs, schema := published(t, st)
				b, err := newCore(st, nil)
				require.NoError(t, err)
				// The schema carries the format, and nothing else that
				// judges a string (but the empty string under omitempty).
				s, err := inputSchemaForType(st, nil)
				require.NoError(t, err)
				if omit {
					require.Len(t, s.Properties["v"].AnyOf, 2, schema)
					assert.Equal(t, fc.format, s.Properties["v"].AnyOf[1].Format, schema)
				} else {
					assert.Equal(t, fc.format, s.Properties["v"].Format, schema)
				}
				for _, v := range append(append([]string{}, fc.valid...), fc.invalid...) {
					assert.True(t, slices.Contains(fc.valid, v) == inFormat(fc.format, v), "reference checker on %q", v)
					_, schemaOK, tagOK, _ := verdicts(t, rs, b, st, v)
					formatOK := schemaOK && (omit && v == "" || inFormat(fc.format, v))
					switch {
					case slices.Contains(fc.accepts, v):
						assert.True(t, tagOK && !formatOK, "%q: validator is documented to accept it", v)
					case slices.Contains(fc.refuses, v):
						assert.True(t, !tagOK && formatOK, "%q: validator is documented to refuse it", v)
					default:
						assert.Equal(t, formatOK, tagOK, "%q under %s", v, schema)
					}
				}
			})
		}
	}
}

// Defaults and titles come from the mcp tag; a default must pass the
// field's rules.
func TestAnnotations(t *testing.T) {
	type ok struct {
		Plan  string   `json:"plan" mcp:"title=Plan, as billed,default=free" validate:"oneof=free pro"`
		Count int      `json:"count,omitempty" mcp:"default=3" validate:"omitempty,lte=5"`
		Tags  []string `json:"tags,omitempty" mcp:"default=a|b"`
		Flag  *bool    `json:"flag,omitempty" mcp:"default=true"`
	}
	s, err := inputSchemaForType(reflect.TypeFor[ok](), nil)
	require.NoError(t, err)
	assert.Equal(t, "Plan, as billed", s.Properties["plan"].Title)
	assert.JSONEq(t, `"free"`, string(s.Properties["plan"].Default))
	assert.JSONEq(t, `3`, string(s.Properties["count"].Default))
	assert.JSONEq(t, `["a","b"]`, string(s.Properties["tags"].Default))
	assert.JSONEq(t, `true`, string(s.Properties["flag"].Default))

	for name, typ := range map[string]reflect.Type{
		"default breaks oneof": reflect.TypeFor[struct {
			P string `json:"p" mcp:"default=gold" validate:"oneof=free pro"`
		}](),
		"default breaks a format": reflect.TypeFor[struct {
			E string `json:"e" mcp:"default=nobody" validate:"email"`
		}](),
		"default not a number": reflect.TypeFor[struct {
			N int `json:"n" mcp:"default=many"`
		}](),
		"unknown option": reflect.TypeFor[struct {
			N int `json:"n" mcp:"label=x"`
		}](),
		"twice": reflect.TypeFor[struct {
			N int `json:"n" mcp:"title=a,title=b"`
		}](),
		"titles without oneof": reflect.TypeFor[struct {
			P string `json:"p" mcp:"titles=a:A"`
		}](),
		"titles of another value": reflect.TypeFor[struct {
			P string `json:"p" mcp:"titles=c:C" validate:"oneof=a b"`
		}](),
		"bad parameter": reflect.TypeFor[struct {
			N int `json:"n" validate:"omitempty,min=x"`
		}](),
	} {
		_, err := inputSchemaForType(typ, nil)
		assert.Error(t, err, name)
	}
}
