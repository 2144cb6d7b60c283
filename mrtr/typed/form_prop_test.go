package typed

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mrtrkit/mrtrkit/mrtr"
)

// The property for forms: the requested schema a form sends admits an
// answer exactly when Read accepts it, for every rule the form schema can
// carry; for the others (sound), Read refuses at least what the schema
// refuses. Each property is also checked against the form schema of MCP
// 2026-07-28 (section 4.4 of the specification): a flat object of
// primitive schemas with only their keywords.

type formCase struct {
	typ   reflect.Type
	tag   string
	mcp   string
	omit  bool
	vals  []any
	gen   func(r *rand.Rand) any
	sound bool
}

func (c formCase) structType() reflect.Type {
	tag := `json:"v"`
	if c.omit {
		tag = `json:"v,omitempty"`
	}
	if c.tag != "" {
		tag += fmt.Sprintf(" validate:%q", c.tag)
	}
	if c.mcp != "" {
		tag += fmt.Sprintf(" mcp:%q", c.mcp)
	}
	return reflect.StructOf([]reflect.StructField{{Name: "V", Type: c.typ, Tag: reflect.StructTag(tag)}})
}

var formCases = []formCase{
	{typ: tString, tag: "min=3", vals: strs(0, 2, 3, 4), gen: genString},
	{typ: tString, tag: "max=3", vals: strs(0, 3, 4), gen: genString},
	{typ: tString, tag: "len=2", vals: strs(1, 2, 3), gen: genString},
	{typ: tString, tag: "gt=1,lt=3", vals: strs(1, 2, 3), gen: genString},
	{typ: tString, tag: "required", vals: strs(0, 1), gen: genString},
	{typ: tString, tag: "required", omit: true, vals: strs(0, 1), gen: genString},
	{typ: tString, tag: "oneof=a b 'c d'", vals: []any{"a", "b", "c d", "c", ""}, gen: genString},
	{typ: tString, tag: "oneof=a b", mcp: "titles=a:Aye|b:Bee", vals: []any{"a", "b", "Aye", ""}, gen: genString},
	{typ: tString, tag: "eq=abc", vals: []any{"abc", "ab"}, gen: genString},
	{typ: tString, tag: "omitempty,min=2", omit: true, vals: strs(0, 1, 2), gen: genString},
	{typ: tString, omit: true, vals: strs(0, 1), gen: genString},
	{typ: tPString, tag: "omitempty,max=2", omit: true, vals: strs(0, 2, 3), gen: genString},
	{typ: tPString, tag: "min=2", omit: true, vals: strs(0, 1, 2), gen: genString},
	{typ: tString, tag: "ne=abc", vals: []any{"abc", "ab"}, gen: genString, sound: true},
	{typ: tString, tag: "startswith=a", vals: []any{"ab", "ba"}, gen: genString, sound: true},
	{typ: tInt, tag: "gte=1,lte=5", vals: ints(0, 6), gen: genInt},
	{typ: tInt, tag: "gt=17", vals: ints(16, 19), gen: genInt},
	{typ: tInt, tag: "lt=-3", omit: true, vals: ints(-5, -2), gen: genInt},
	{typ: tInt, tag: "len=3", vals: ints(2, 4), gen: genInt},
	{typ: tInt, tag: "omitempty,gte=2", omit: true, vals: ints(-1, 3), gen: genInt},
	{typ: tInt8, vals: []any{-129, -128, 127, 128}, gen: genInt},
	{typ: tUint, tag: "lte=3", vals: ints(-1, 4), gen: genInt},
	{typ: tPInt, tag: "omitempty,gte=1", omit: true, vals: ints(-1, 2), gen: genInt},
	{typ: tInt, tag: "required", vals: ints(-1, 1), gen: genInt, sound: true},
	{typ: tInt, tag: "oneof=1 2", vals: ints(0, 3), gen: genInt, sound: true},
	{typ: tFloat, tag: "gte=0.5,lte=1.5", vals: []any{0.25, 0.5, 1.5, 1.75}, gen: genFloat},
	{typ: tFloat, tag: "gt=0", vals: []any{0, 0.5, -1}, gen: genFloat, sound: true},
	{typ: tFloat32, tag: "lte=1", vals: []any{0.5, 1, 2}, gen: genFloat, sound: true},
	{typ: tBool, vals: []any{true, false}},
	{typ: tBool, tag: "required", vals: []any{true, false}, sound: true},
	{typ: tStrings, tag: "max=2,dive,oneof=a b c", omit: true, vals: []any{[]any{}, []any{"a"}, []any{"a", "b", "c"}, []any{"d"}}, gen: genStrings},
	{typ: tStrings, tag: "min=1,dive,oneof=a b", mcp: "titles=a:Aye|b:Bee", vals: []any{[]any{}, []any{"a"}, []any{"c"}}, gen: genStrings},
	{typ: tStrings, tag: "unique,dive,oneof=a b", vals: []any{[]any{"a", "a"}, []any{"a", "b"}}, gen: genStrings, sound: true},
}

// formWrong are values of every type a form answer may hold.
var formWrong = []any{true, 2, 2.5, "s", []any{"a"}}

// restricted lists the keywords the form schema allows, by type.
var restricted = map[string][]string{
	"string":  {"type", "title", "description", "minLength", "maxLength", "format", "default", "enum", "enumNames", "oneOf"},
	"number":  {"type", "title", "description", "minimum", "maximum", "default"},
	"integer": {"type", "title", "description", "minimum", "maximum", "default"},
	"boolean": {"type", "title", "description", "default"},
	"array":   {"type", "title", "description", "minItems", "maxItems", "items", "default"},
}

// checkRestricted checks one property against the form schema of MCP
// 2026-07-28.
func checkRestricted(t *testing.T, raw json.RawMessage) {
	t.Helper()
	var p map[string]any
	require.NoError(t, json.Unmarshal(raw, &p))
	typ, _ := p["type"].(string)
	allowed, ok := restricted[typ]
	require.True(t, ok, "type of %s", raw)
	for k := range p {
		assert.Contains(t, allowed, k, "keyword %q in %s", k, raw)
	}
	if f, ok := p["format"]; ok {
		assert.Contains(t, []any{"email", "uri", "date", "date-time"}, f, string(raw))
	}
	titled := func(v any) {
		list, ok := v.([]any)
		require.True(t, ok, string(raw))
		for _, e := range list {
			m := e.(map[string]any)
			assert.Len(t, m, 2, string(raw))
			assert.IsType(t, "", m["const"], string(raw))
			assert.IsType(t, "", m["title"], string(raw))
		}
	}
	if v, ok := p["oneOf"]; ok {
		titled(v)
	}
	if typ == "array" {
		items := p["items"].(map[string]any)
		if v, ok := items["anyOf"]; ok {
			assert.Len(t, items, 1, string(raw))
			titled(v)
		} else {
			assert.Equal(t, "string", items["type"], string(raw))
			assert.Len(t, items, 2, string(raw))
			assert.IsType(t, []any{}, items["enum"], string(raw))
		}
	}
}

func TestFormSchemaAdmitsWhatReadAccepts(t *testing.T) {
	for _, c := range formCases {
		name := fmt.Sprintf("%v/%s/%s/%v", c.typ, c.tag, c.mcp, c.omit)
		t.Run(name, func(t *testing.T) {
			st := c.structType()
			fc, err := newFormCore(st)
			require.NoError(t, err)
			// What a client receives, and what it would check.
			b, err := json.Marshal(fc.schema)
			require.NoError(t, err)
			var es mrtr.ElicitSchema
			require.NoError(t, json.Unmarshal(b, &es))
			for _, p := range es.Properties {
				checkRestricted(t, p)
			}
			var s jsonschema.Schema
			require.NoError(t, json.Unmarshal(b, &s))
			rs, err := s.Resolve(nil)
			require.NoError(t, err, string(b))

			r := rand.New(rand.NewPCG(caseSeed(name), 2))
			vals := append([]any{absent}, formWrong...)
			vals = append(vals, c.vals...)
			if c.gen != nil {
				for range 300 {
					vals = append(vals, c.gen(r))
				}
			}
			var accepted, refused, failures int
			for _, v := range vals {
				if l, ok := v.([]any); ok && slices.Contains(l, nil) {
					continue // not a form answer: refused by the server before any handler
				}
				if failures >= 5 {
					break
				}
				content := map[string]any{}
				if v != absent {
					content["v"] = v
				}
				raw, err := json.Marshal(content)
				require.NoError(t, err)
				var inst any
				require.NoError(t, json.Unmarshal(raw, &inst))
				schemaOK := rs.Validate(inst) == nil
				_, readErr := fc.decode("k", elicitResult(t, raw), reflect.New(st).Interface())
				readOK := readErr == nil
				if readOK {
					accepted++
				} else {
					refused++
				}
				ok := true
				if c.sound {
					if readOK {
						ok = assert.True(t, schemaOK, "Read accepts %s, which the schema %s refuses", raw, b)
					}
				} else {
					ok = assert.Equal(t, schemaOK, readOK, "content %s: schema %s says %v, Read says %v", raw, b, schemaOK, readErr)
				}
				if !ok {
					failures++
				}
			}
			assert.Positive(t, accepted)
			assert.Positive(t, refused)
		})
	}
}

// elicitResult decodes an accepted answer as the Server does.
func elicitResult(t *testing.T, content json.RawMessage) *mrtr.ElicitResult {
	t.Helper()
	var r mrtr.ElicitResult
	require.NoError(t, json.Unmarshal([]byte(`{"action":"accept","content":`+string(content)+`}`), &r))
	return &r
}
