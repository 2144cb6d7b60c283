package typed

import (
	"encoding"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
)

// This file reads `validate` tags as go-playground/validator does and
// renders the rules that have an exact JSON Schema form as schema
// keywords (see "Rules and schemas" in the package documentation). The
// rendering never claims more than the tags enforce: a value the rendered
// keywords refuse is refused by the tags. Rules without an exact form are
// left to the server.

// chain is a validate tag split as validator reads it.
type chain struct {
	items []rule // the rules of the value itself
	keys  []rule // dive,keys...endkeys: the rules of a map's keys
	dive  *chain // the rules after dive: of each element, or map value
	skip  bool   // "-": validator does not look at the field
}

// rule is one rule of a chain: a validator tag and its parameter.
type rule struct {
	tag   string
	param string
	or    bool // one of the alternatives of an a|b group (never mapped)
}

func (r rule) String() string {
	if r.param == "" {
		return r.tag
	}
	return r.tag + "=" + r.param
}

// parseChain splits a validate tag into its rules, keys and dive.
func parseChain(tag string) *chain {
	if tag == "" {
		return &chain{}
	}
	if tag == "-" {
		return &chain{skip: true}
	}
	return parseParts(strings.Split(tag, ","))
}

func parseParts(parts []string) *chain {
	c := &chain{}
	for i := 0; i < len(parts); i++ {
		p := parts[i]
		if p != "dive" {
			c.items = append(c.items, parseRule(p))
			continue
		}
		rest := parts[i+1:]
		if len(rest) > 0 && rest[0] == "keys" {
			end := slices.Index(rest, "endkeys")
			if end < 0 {
				// Malformed; validator refuses it when the Binder is made.
				return c
			}
			for _, k := range rest[1:end] {
				c.keys = append(c.keys, parseRule(k))
			}
			rest = rest[end+1:]
		}
		c.dive = parseParts(rest)
		return c
	}
	return c
}

func parseRule(p string) rule {
	if strings.Contains(p, "|") {
		return rule{tag: p, or: true}
	}
	tag, param, _ := strings.Cut(p, "=")
	param = strings.ReplaceAll(strings.ReplaceAll(param, "0x2C", ","), "0x7C", "|")
	return rule{tag: tag, param: param}
}

// vkind is the kind of JSON value a Go type decodes from, as far as the
// mapping is concerned.
type vkind int

const (
	kOther vkind = iota
	kString
	kInt
	kUint
	kFloat   // float64
	kFloat32 // bounds not mapped: decoding rounds the value
	kBool
	kSlice
	kMap
	kStruct
)

var (
	jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
	durationType    = reflect.TypeFor[time.Duration]()
)

// decodesItself reports whether values of t are decoded by a method of
// their own, so that their JSON form is not the one their kind implies.
func decodesItself(t reflect.Type) bool {
	pt := reflect.PointerTo(t)
	return t.Implements(jsonUnmarshaler) || pt.Implements(jsonUnmarshaler) ||
		t.Implements(textUnmarshaler) || pt.Implements(textUnmarshaler)
}

func kindOf(t reflect.Type) vkind {
	if decodesItself(t) || t == durationType {
		return kOther
	}
	switch t.Kind() {
	case reflect.String:
		return kString
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return kInt
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return kUint
	case reflect.Float64:
		return kFloat
	case reflect.Float32:
		return kFloat32
	case reflect.Bool:
		return kBool
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return kOther // []byte is a base64 string in JSON
		}
		return kSlice
	case reflect.Map:
		return kMap
	case reflect.Struct:
		return kStruct
	}
	return kOther
}

// jsonTypeOf is the JSON Schema type jsonschema-go generates for a kind.
func jsonTypeOf(k vkind) string {
	switch k {
	case kString:
		return "string"
	case kInt, kUint:
		return "integer"
	case kFloat, kFloat32:
		return "number"
	case kBool:
		return "boolean"
	case kSlice:
		return "array"
	case kMap, kStruct:
		return "object"
	}
	return ""
}

// ruleSet is what the mapped rules of one value ask of it. Every field is
// a conjunct: a value must satisfy all of them.
type ruleSet struct {
	minSize, maxSize *int64   // string length in runes, array items or object members
	min, max         *float64 // inclusive numeric bounds
	exMin, exMax     *float64 // exclusive numeric bounds
	allowed          []any    // the only values allowed (enum); nil when hasAllowed is false
	hasAllowed       bool
	denied           []any // values not allowed
	format           string
	patterns         []string
	unique           bool
	required         bool     // a required rule
	serverOnly       []string // rules with no schema form
}

func (r *ruleSet) atLeast(n int64) {
	if r.minSize == nil || n > *r.minSize {
		r.minSize = &n
	}
}

func (r *ruleSet) atMost(n int64) {
	if r.maxSize == nil || n < *r.maxSize {
		r.maxSize = &n
	}
}

func tighterMin(p **float64, f float64) {
	if *p == nil || f > **p {
		*p = &f
	}
}

func tighterMax(p **float64, f float64) {
	if *p == nil || f < **p {
		*p = &f
	}
}

// allow intersects the allowed values with vals.
func (r *ruleSet) allow(vals []any) {
	if !r.hasAllowed {
		r.hasAllowed, r.allowed = true, vals
		return
	}
	var keep []any
	for _, a := range r.allowed {
		if slices.ContainsFunc(vals, func(v any) bool { return sameValue(a, v) }) {
			keep = append(keep, a)
		}
	}
	r.allowed = keep
}

func sameValue(a, b any) bool {
	fa, oka := number(a)
	fb, okb := number(b)
	if oka && okb {
		return fa == fb
	}
	return a == b
}

func number(v any) (float64, bool) {
	switch n := v.(type) {
	case int64:
		return float64(n), true
	case uint64:
		return float64(n), true
	case float64:
		return n, true
	}
	return 0, false
}

// runsWhenNil lists validator's tags that are evaluated even on a nil
// pointer: they decide whether nil passes, from other fields.
var runsWhenNil = map[string]bool{
	"required_if": true, "required_unless": true, "required_with": true, "required_with_all": true,
	"required_without": true, "required_without_all": true, "excluded_if": true, "excluded_unless": true,
	"excluded_with": true, "excluded_with_all": true, "excluded_without": true, "excluded_without_all": true,
	"skip_unless": true,
}

// formats maps validator's format tags to JSON Schema formats.
var formats = map[string]string{
	"email":    "email",
	"url":      "uri",
	"uri":      "uri",
	"uuid":     "uuid",
	"hostname": "hostname",
	"ipv4":     "ipv4",
	"ipv6":     "ipv6",
}

// datetimeFormats maps the layouts of validator's datetime tag that are
// JSON Schema formats.
var datetimeFormats = map[string]string{
	"2006-01-02":     "date",
	time.RFC3339:     "date-time",
	time.RFC3339Nano: "date-time",
}

// oneofSplit matches the values of a oneof parameter.
var oneofSplit = regexp.MustCompile(`'[^']*'|\S+`)

// oneofValues splits a oneof parameter as validator does: words, or
// 'quoted phrases'.
func oneofValues(param string) []string {
	vals := oneofSplit.FindAllString(param, -1)
	for i, v := range vals {
		vals[i] = strings.ReplaceAll(v, "'", "")
	}
	return vals
}

// exactFloat returns i as a float64 when the conversion is exact.
func exactFloat(i int64) (float64, bool) {
	f := float64(i)
	if f >= 0x1p63 || f < -0x1p63 || int64(f) != i {
		return 0, false
	}
	return f, true
}

func exactFloatU(u uint64) (float64, bool) {
	f := float64(u)
	if f >= 0x1p64 || uint64(f) != u {
		return 0, false
	}
	return f, true
}

// numParam parses a numeric parameter as validator does for the kind,
// returning it as an exact float64 and as the typed JSON value.
func numParam(k vkind, p string) (float64, any, error) {
	switch k {
	case kInt:
		i, err := strconv.ParseInt(p, 0, 64)
		if err != nil {
			return 0, nil, fmt.Errorf("parameter %q is not an integer", p)
		}
		f, ok := exactFloat(i)
		if !ok {
			return 0, nil, errInexact
		}
		return f, i, nil
	case kUint:
		u, err := strconv.ParseUint(p, 0, 64)
		if err != nil {
			return 0, nil, fmt.Errorf("parameter %q is not a non-negative integer", p)
		}
		f, ok := exactFloatU(u)
		if !ok {
			return 0, nil, errInexact
		}
		return f, u, nil
	case kFloat:
		f, err := strconv.ParseFloat(p, 64)
		if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
			return 0, nil, fmt.Errorf("parameter %q is not a number", p)
		}
		return f, f, nil
	}
	return 0, nil, errInexact
}

var errInexact = fmt.Errorf("no exact JSON Schema form")

func sizeParam(p string) (int64, error) {
	n, err := strconv.ParseInt(p, 0, 64)
	if err != nil {
		return 0, fmt.Errorf("parameter %q is not an integer", p)
	}
	return n, nil
}

// zeroValue is the JSON form of the zero value of a kind.
func zeroValue(k vkind) any {
	switch k {
	case kString:
		return ""
	case kInt:
		return int64(0)
	case kUint:
		return uint64(0)
	case kFloat:
		return 0.0
	case kBool:
		return false
	case kSlice:
		return []any{}
	case kMap:
		return map[string]any{}
	}
	return nil
}

// admitsZero reports whether the zero value of kind k (an empty slice or
// map for those kinds) satisfies the mapped rules.
func (r *ruleSet) admitsZero(k vkind) bool {
	if r.minSize != nil && *r.minSize > 0 || r.maxSize != nil && *r.maxSize < 0 {
		return false
	}
	if r.min != nil && *r.min > 0 || r.max != nil && *r.max < 0 ||
		r.exMin != nil && *r.exMin >= 0 || r.exMax != nil && *r.exMax <= 0 {
		return false
	}
	z := zeroValue(k)
	if r.hasAllowed && !slices.ContainsFunc(r.allowed, func(v any) bool { return sameValue(v, z) }) {
		return false
	}
	if slices.ContainsFunc(r.denied, func(v any) bool { return sameValue(v, z) }) {
		return false
	}
	if r.format != "" {
		return false // no format admits the empty string
	}
	for _, p := range r.patterns {
		if !regexp.MustCompile(p).MatchString("") {
			return false
		}
	}
	return true
}

// keywords returns the schema keywords of the mapped rules, for a value
// of kind k; nil when there are none. nullOK adds null to an enum.
func (r *ruleSet) keywords(k vkind, nullOK bool) *jsonschema.Schema {
	s := &jsonschema.Schema{}
	some := false
	size := func(n *int64) *int {
		if n == nil {
			return nil
		}
		i := int(*n)
		return &i
	}
	if r.minSize != nil && *r.minSize > 0 {
		switch k {
		case kString:
			s.MinLength = size(r.minSize)
		case kSlice:
			s.MinItems = size(r.minSize)
		case kMap:
			s.MinProperties = size(r.minSize)
		}
		some = true
	}
	if r.maxSize != nil {
		n := r.maxSize
		if *n < 0 {
			// Nothing is that short: only the empty schema "not {}" says
			// so, but validator's message is clearer.
			n = nil
		} else {
			some = true
		}
		switch k {
		case kString:
			s.MaxLength = size(n)
		case kSlice:
			s.MaxItems = size(n)
		case kMap:
			s.MaxProperties = size(n)
		}
	}
	if r.min != nil {
		s.Minimum, some = r.min, true
	}
	if r.max != nil {
		s.Maximum, some = r.max, true
	}
	if r.exMin != nil {
		s.ExclusiveMinimum, some = r.exMin, true
	}
	if r.exMax != nil {
		s.ExclusiveMaximum, some = r.exMax, true
	}
	if r.hasAllowed {
		s.Enum = slices.Clone(r.allowed)
		if s.Enum == nil {
			s.Enum = []any{}
		}
		if nullOK {
			s.Enum = append(s.Enum, nil)
		}
		some = true
	}
	if len(r.denied) > 0 {
		s.Not = &jsonschema.Schema{Enum: slices.Clone(r.denied)}
		some = true
	}
	if r.format != "" {
		s.Format, some = r.format, true
	}
	for i, p := range r.patterns {
		if i == 0 {
			s.Pattern = p
		} else {
			s.AllOf = append(s.AllOf, &jsonschema.Schema{Pattern: p})
		}
		some = true
	}
	if r.unique {
		s.UniqueItems, some = true, true
	}
	if !some {
		return nil
	}
	return s
}

// analysis is what validate rules say of one value: its kind, the mapped
// rules and how null, zero and absence fare.
type analysis struct {
	t          reflect.Type // the value's type, pointer removed
	k          vkind
	ptr        bool // a pointer to the value's type
	lead       string
	rules      *ruleSet
	mapped     bool // rules were read; false leaves the schema as generated
	nullOK     bool // null (a nil pointer or slice) passes
	zeroExempt bool // the zero value passes whatever the rules say
	// absentRefused: the value an absent member decodes to is refused.
	absentRefused bool
	nested        bool      // a struct whose fields are checked
	items         *analysis // dive: elements or map values
	keys          *ruleSet  // dive,keys: map keys
}

// analyze reads the chain of a value of type t. It never fails on rules
// it does not know (they stay server-side); it fails on parameters of
// mapped rules that validator cannot read.
func analyze(t reflect.Type, ch *chain) (*analysis, error) {
	a := &analysis{}
	et := t
	if t.Kind() == reflect.Pointer {
		a.ptr, et = true, t.Elem()
		if et.Kind() == reflect.Pointer {
			return a, nil
		}
	}
	a.t, a.k = et, kindOf(et)
	if ch.skip || a.k == kOther || a.ptr && (a.k == kSlice || a.k == kMap) {
		return a, nil
	}
	lead, items, ok := leadingOmit(ch.items)
	if !ok {
		// An omit rule in the middle ends the checks at the zero value
		// from there: left to the server.
		return &analysis{t: a.t, k: a.k, ptr: a.ptr}, nil
	}
	a.lead = lead
	// A nil pointer passes when the tag lets it: a leading omit rule, no
	// rule at all, or a first rule that looks at other fields.
	nilOK := a.lead != "" || len(ch.items) == 0 || crossFirst(ch.items)
	if a.k == kStruct {
		a.readStruct(items, nilOK)
		return a, nil
	}
	r, err := collect(a.k, a.ptr, items)
	if err != nil {
		return nil, err
	}
	a.rules, a.mapped = r, true
	a.judgeAbsence(nilOK)
	if ch.dive != nil {
		if err := a.dive(ch); err != nil {
			return nil, err
		}
	}
	return a, nil
}

// leadingOmit splits a leading omitempty, omitnil or omitzero from the
// rules that follow it. ok is false when an omit rule (or isdefault)
// comes later in the chain.
func leadingOmit(items []rule) (lead string, rest []rule, ok bool) {
	rest = items
	if len(rest) > 0 {
		switch rest[0].tag {
		case "omitempty", "omitnil", "omitzero":
			lead, rest = rest[0].tag, rest[1:]
		}
	}
	for _, it := range rest {
		switch it.tag {
		case "omitempty", "omitnil", "omitzero", "isdefault":
			return "", nil, false
		}
	}
	return lead, rest, true
}

// crossFirst reports whether the first rule of a chain, or one of its
// alternatives, is evaluated even on a nil pointer (see runsWhenNil).
func crossFirst(items []rule) bool {
	return len(items) > 0 && slices.ContainsFunc(strings.Split(items[0].tag, "|"), func(alt string) bool {
		name, _, _ := strings.Cut(alt, "=")
		return runsWhenNil[name]
	})
}

// readStruct analyses a struct's rules: whether its fields are looked
// into, and of its own rules only required, which makes the member
// required. nilOK says whether a nil pointer to it passes.
func (a *analysis) readStruct(items []rule, nilOK bool) {
	a.nested = !slices.ContainsFunc(items, func(r rule) bool { return r.tag == "structonly" || r.tag == "nostructlevel" })
	if !a.ptr && a.lead == "omitempty" || a.lead == "omitzero" {
		// A zero struct is not looked into: its fields' rules hold only
		// for some values, which the schema cannot say.
		a.nested = false
	}
	a.rules = &ruleSet{}
	for _, it := range items {
		if it.tag == "required" && !it.or {
			a.rules.required = true
		}
	}
	switch {
	case a.ptr:
		a.nullOK = nilOK
		a.absentRefused = !a.nullOK
	default:
		a.absentRefused = a.lead == "" && a.rules.required
	}
	a.mapped = true
}

// judgeAbsence decides, from the lead and the mapped rules, how null, the
// zero value and an absent member fare. nilOK says whether a nil pointer
// passes.
func (a *analysis) judgeAbsence(nilOK bool) {
	r, k := a.rules, a.k
	switch {
	case a.ptr:
		a.nullOK = nilOK
		a.zeroExempt = a.lead == "omitzero"
		a.absentRefused = !a.nullOK
	case k == kSlice:
		a.zeroExempt = a.lead == "omitzero"
		a.nullOK = a.lead != "" || !r.required && r.admitsZero(k)
		a.absentRefused = !a.nullOK
	case k == kMap:
		a.zeroExempt = a.lead == "omitzero"
		a.absentRefused = a.lead == "" && (r.required || !r.admitsZero(k))
	default:
		a.zeroExempt = a.lead == "omitempty" || a.lead == "omitzero"
		a.absentRefused = !a.zeroExempt && !r.admitsZero(k)
	}
}

// dive analyses the rules after dive: of a slice's elements, of a map's
// values, and (dive,keys...endkeys) of a map's string keys.
func (a *analysis) dive(ch *chain) error {
	var elem reflect.Type
	switch a.k {
	case kSlice:
		elem = a.t.Elem()
	case kMap:
		elem = a.t.Elem()
		omits := slices.ContainsFunc(ch.keys, func(r rule) bool {
			return r.tag == "omitempty" || r.tag == "omitnil" || r.tag == "omitzero" || r.tag == "isdefault"
		})
		if a.t.Key().Kind() == reflect.String && !decodesItself(a.t.Key()) && len(ch.keys) > 0 && !omits {
			kr, err := collect(kString, false, ch.keys)
			if err != nil {
				return err
			}
			a.keys = kr
		}
	}
	if elem == nil {
		return nil
	}
	items, err := analyze(elem, ch.dive)
	if err != nil {
		return err
	}
	a.items = items
	return nil
}

// matches reports whether s is the schema jsonschema-go generates for the
// analysed type, so that keywords may be added to it.
func (a *analysis) matches(s *jsonschema.Schema) bool {
	want := jsonTypeOf(a.k)
	switch {
	case a.k == kSlice:
		return s.Type == "" && slices.Equal(s.Types, []string{"null", "array"})
	case a.ptr:
		return s.Type == "" && slices.Equal(s.Types, []string{"null", want})
	}
	return s.Type == want
}

// apply adds the mapped rules to s, the schema generated for the value,
// and reports whether the value an absent member decodes to is refused.
// A struct's fields are mapped too, when validator looks into them.
func (a *analysis) apply(s *jsonschema.Schema, path string) (absentRefused bool, err error) {
	if !a.mapped || !a.matches(s) {
		return false, nil
	}
	if a.k == kStruct {
		zeroRefused := false
		if a.nested {
			if zeroRefused, err = applyStruct(a.t, s, path); err != nil {
				return false, err
			}
		}
		if a.ptr {
			if !a.nullOK {
				s.Type, s.Types = "object", nil
			}
			return a.absentRefused, nil
		}
		return a.absentRefused || a.lead == "" && zeroRefused, nil
	}
	k := a.k
	kw := a.rules.keywords(k, a.nullOK)
	if kw != nil {
		if a.zeroExempt && !a.rules.admitsZero(k) {
			var zero *jsonschema.Schema
			switch k {
			case kSlice:
				zero = &jsonschema.Schema{MaxItems: jsonschema.Ptr(0)}
			case kMap:
				zero = &jsonschema.Schema{MaxProperties: jsonschema.Ptr(0)}
			default:
				z := zeroValue(k)
				zero = &jsonschema.Schema{Const: &z}
			}
			s.AnyOf = append(s.AnyOf, zero, kw)
		} else {
			merge(s, kw)
		}
	}
	if (a.ptr || k == kSlice) && !a.nullOK {
		s.Type, s.Types = jsonTypeOf(k), nil
	}
	if a.items != nil {
		var sub *jsonschema.Schema
		switch k {
		case kSlice:
			sub = s.Items
		case kMap:
			sub = s.AdditionalProperties
		}
		if sub != nil {
			if _, err := a.items.apply(sub, path+"[]"); err != nil {
				return false, err
			}
		}
	}
	if a.keys != nil {
		if kw := a.keys.keywords(kString, false); kw != nil {
			s.PropertyNames = kw
		}
	}
	return a.absentRefused, nil
}

// merge copies the keywords of kw into s, keeping the tighter of two
// bounds.
func merge(s, kw *jsonschema.Schema) {
	if kw.MinLength != nil {
		s.MinLength = kw.MinLength
	}
	if kw.MaxLength != nil {
		s.MaxLength = kw.MaxLength
	}
	if kw.MinItems != nil && (s.MinItems == nil || *kw.MinItems > *s.MinItems) {
		s.MinItems = kw.MinItems
	}
	if kw.MaxItems != nil && (s.MaxItems == nil || *kw.MaxItems < *s.MaxItems) {
		s.MaxItems = kw.MaxItems
	}
	if kw.MinProperties != nil {
		s.MinProperties = kw.MinProperties
	}
	if kw.MaxProperties != nil {
		s.MaxProperties = kw.MaxProperties
	}
	if kw.Minimum != nil && (s.Minimum == nil || *kw.Minimum > *s.Minimum) {
		s.Minimum = kw.Minimum
	}
	if kw.Maximum != nil && (s.Maximum == nil || *kw.Maximum < *s.Maximum) {
		s.Maximum = kw.Maximum
	}
	if kw.ExclusiveMinimum != nil {
		s.ExclusiveMinimum = kw.ExclusiveMinimum
	}
	if kw.ExclusiveMaximum != nil {
		s.ExclusiveMaximum = kw.ExclusiveMaximum
	}
	if kw.Enum != nil {
		s.Enum = kw.Enum
	}
	if kw.Not != nil {
		s.Not = kw.Not
	}
	if kw.Format != "" {
		s.Format = kw.Format
	}
	if kw.Pattern != "" {
		s.Pattern = kw.Pattern
	}
	s.AllOf = append(s.AllOf, kw.AllOf...)
	if kw.UniqueItems {
		s.UniqueItems = true
	}
}
