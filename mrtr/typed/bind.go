package typed

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/go-playground/validator/v10"
	"github.com/google/jsonschema-go/jsonschema"

	"github.com/mrtrkit/mrtrkit/internal/wire"
)

// validate checks struct tags. A validator caches struct metadata and is
// safe for concurrent use, so one serves every Binder.
var validate = func() *validator.Validate {
	v := validator.New(validator.WithRequiredStructEnabled())
	v.RegisterTagNameFunc(jsonName)
	return v
}()

// jsonName names a struct field as encoding/json does, so that validation
// problems carry the name the client sent.
func jsonName(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	switch name {
	case "-":
		return ""
	case "":
		return f.Name
	}
	return name
}

// BindOptions configure NewBinder. The zero value checks against the
// schema generated from the target type and refuses unknown members.
type BindOptions struct {
	// Schema is the JSON Schema values are checked against. Nil means the
	// schema SchemaFor generates for the target type. A schema given here
	// is also enforced in full by a JSON Schema validator, so keywords the
	// Binder does not check itself (pattern, enum, allOf, ...) still hold.
	Schema *jsonschema.Schema
	// ForOptions are passed to jsonschema.ForType when the schema is
	// generated.
	ForOptions *jsonschema.ForOptions
	// IgnoreUnknown drops object members the schema does not declare
	// instead of reporting them.
	IgnoreUnknown bool
}

// Binder decodes JSON values into T and checks them, collecting every
// problem with the JSON path of the value concerned:
//
//  1. in one pass over the JSON text, against the schema: types, required
//     members, members the schema does not allow (additionalProperties
//     false), numeric bounds and array lengths; and, whatever the schema
//     allows, no member whose name differs only in case from a name the
//     schema declares (through properties, $ref, $defs, allOf, anyOf or
//     oneOf), since Go's decoding would bind it to the declared field past
//     the schema's checks;
//  2. for a schema that was not generated from T, against the whole schema
//     with a JSON Schema validator;
//  3. by decoding into T with encoding/json;
//  4. by T's `validate` struct tags (github.com/go-playground/validator),
//     with fields named by their JSON names.
//
// Later stages run only when the earlier ones found nothing. A Binder is
// safe for concurrent use.
type Binder[T any] struct {
	core
}

// core is the part of a Binder that does not depend on T.
type core struct {
	schema        *jsonschema.Schema
	plan          *plan
	resolved      *jsonschema.Resolved // set when the schema was given
	ignoreUnknown bool
	structTags    bool
	flat          *flatDecoder // set for a form whose struct it can fill
}

// NewBinder returns a Binder for T. opts may be nil.
func NewBinder[T any](opts *BindOptions) (*Binder[T], error) {
	c, err := newCore(reflect.TypeFor[T](), opts)
	if err != nil {
		return nil, err
	}
	return &Binder[T]{core: c}, nil
}

func newCore(t reflect.Type, opts *BindOptions) (core, error) {
	if opts == nil {
		opts = &BindOptions{}
	}
	b := core{ignoreUnknown: opts.IgnoreUnknown}
	if opts.Schema != nil {
		r, err := opts.Schema.Resolve(nil)
		if err != nil {
			return core{}, fmt.Errorf("typed: schema for %v: %w", t, err)
		}
		b.schema, b.resolved = opts.Schema, r
	} else {
		s, err := schemaForType(t, opts.ForOptions)
		if err != nil {
			return core{}, err
		}
		b.schema = s
	}
	b.plan = compilePlan(b.schema)
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() == reflect.Struct {
		if err := checkTags(t); err != nil {
			return core{}, err
		}
		b.structTags = true
	}
	return b, nil
}

// checkTags validates a zero value once so that a malformed validate tag
// fails at registration rather than on the first call.
func checkTags(t reflect.Type) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("typed: validate tags of %v: %v", t, r)
		}
	}()
	err = validate.Struct(reflect.New(t).Interface())
	var invalid *validator.InvalidValidationError
	if errors.As(err, &invalid) {
		return fmt.Errorf("typed: validate tags of %v: %w", t, err)
	}
	return nil
}

// Schema returns the schema values are checked against. It must not be
// modified.
func (b *Binder[T]) Schema() *jsonschema.Schema { return b.schema }

// Bind decodes raw into a T and checks it. A problem with the value is
// reported as an *ArgumentError.
func (b *Binder[T]) Bind(raw json.RawMessage) (T, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		raw = json.RawMessage("null")
	}
	if !json.Valid(raw) {
		var zero T
		return zero, &ArgumentError{Problems: []Problem{{Rule: "json", Message: "the value is not valid JSON"}}}
	}
	return b.bindValid(raw)
}

// bindValid is Bind for raw that is known to be one valid JSON value, as
// the arguments mrtr hands to handlers are.
func (b *Binder[T]) bindValid(raw json.RawMessage) (T, error) {
	var zero, out T
	if err := b.bindInto(raw, &out); err != nil {
		return zero, err
	}
	return out, nil
}

// bindInto checks raw, decodes it into out (a pointer) and checks the
// struct tags of what it points to.
func (b *core) bindInto(raw json.RawMessage, out any) error {
	if probs := b.checkJSON(raw); len(probs) > 0 {
		return &ArgumentError{Problems: probs}
	}
	return b.decode(raw, out)
}

// checkJSON checks raw against the schema: in one pass, and in full for a
// schema that was given.
func (b *core) checkJSON(raw json.RawMessage) []Problem {
	w := walker{raw: raw, ignoreUnknown: b.ignoreUnknown}
	w.value(b.plan, 0)
	probs := w.probs
	if len(probs) == 0 && b.resolved != nil {
		var plain any
		_ = json.Unmarshal(raw, &plain)
		if err := b.resolved.Validate(plain); err != nil {
			probs = append(probs, schemaProblem(err))
		}
	}
	return probs
}

// decode decodes raw into out (a pointer to a zero value) and checks the
// struct tags of what it points to.
func (b *core) decode(raw json.RawMessage, out any) error {
	if err := b.unmarshal(raw, out); err != nil {
		return &ArgumentError{Problems: []Problem{decodeProblem(err)}}
	}
	if b.structTags {
		v := reflect.ValueOf(out).Elem().Interface()
		if err := validate.Struct(v); err != nil {
			var ve validator.ValidationErrors
			if !errors.As(err, &ve) {
				return fmt.Errorf("typed: validate %T: %w", v, err)
			}
			probs := make([]Problem, 0, len(ve))
			for _, fe := range ve {
				probs = append(probs, tagProblem(fe))
			}
			return &ArgumentError{Problems: probs}
		}
	}
	return nil
}

// unmarshal is json.Unmarshal(raw, out), out a pointer to a zero value,
// through the flat decoder when there is one and it can.
func (b *core) unmarshal(raw json.RawMessage, out any) error {
	if b.flat != nil {
		v := reflect.ValueOf(out).Elem()
		if b.flat.decode(raw, v) {
			return nil
		}
		v.SetZero() // what the flat decoder wrote before it declined
	}
	return json.Unmarshal(raw, out)
}

// plan is a schema compiled for checking JSON text in one pass.
type plan struct {
	types      []string         // allowed JSON types; empty allows all
	required   []string         // members that must be present
	props      map[string]*plan // the schema's own properties
	additional *plan            // the schema of other members; nil when not constrained
	forbid     bool             // additionalProperties false
	patterns   bool             // patternProperties present: other members are not judged here
	items      *plan
	minItems   *int
	maxItems   *int
	minimum    *float64
	maximum    *float64

	// refs are the schemas that also apply ($ref, allOf); alts those that
	// may apply (anyOf, oneOf). Their keywords are the JSON Schema
	// validator's to check; the walk takes only their names.
	refs, alts []*plan

	// declared holds every name a value may be matched against, through
	// properties, refs and alts, and folded the same names by their case
	// folding; both are filled once the whole schema is compiled.
	declared map[string]*plan
	folded   map[string]string
	finished bool
}

// compilePlan compiles s (resolving local $refs against s itself).
func compilePlan(s *jsonschema.Schema) *plan {
	c := planCompiler{root: s, done: map[*jsonschema.Schema]*plan{}}
	p := c.compile(s)
	for _, q := range c.done {
		q.finish()
	}
	return p
}

type planCompiler struct {
	root *jsonschema.Schema
	done map[*jsonschema.Schema]*plan
}

var pointerEscapes = strings.NewReplacer("~1", "/", "~0", "~")

// resolve follows a local reference ("#/$defs/X", "#/definitions/X" or
// another JSON pointer into the root schema through $defs, definitions,
// properties, items or additionalProperties). Remote references are not
// followed.
func (c *planCompiler) resolve(ref string) *jsonschema.Schema {
	if ref == "#" {
		return c.root
	}
	if !strings.HasPrefix(ref, "#/") {
		return nil
	}
	cur := c.root
	parts := strings.Split(ref[2:], "/")
	for i := 0; i < len(parts) && cur != nil; i++ {
		var m map[string]*jsonschema.Schema
		switch pointerEscapes.Replace(parts[i]) {
		case "$defs":
			m = cur.Defs
		case "definitions":
			m = cur.Definitions
		case "properties":
			m = cur.Properties
		case "items":
			cur = cur.Items
			continue
		case "additionalProperties":
			cur = cur.AdditionalProperties
			continue
		default:
			return nil
		}
		if i+1 >= len(parts) {
			return nil
		}
		i++
		cur = m[pointerEscapes.Replace(parts[i])]
	}
	return cur
}

func (c *planCompiler) compile(s *jsonschema.Schema) *plan {
	if s == nil {
		return nil
	}
	if p, ok := c.done[s]; ok {
		return p
	}
	p := &plan{required: s.Required, patterns: len(s.PatternProperties) > 0,
		minItems: s.MinItems, maxItems: s.MaxItems, minimum: s.Minimum, maximum: s.Maximum}
	c.done[s] = p
	if s.Type != "" {
		p.types = []string{s.Type}
	} else if len(s.Types) > 0 {
		p.types = s.Types
	}
	if len(s.Properties) > 0 {
		p.props = make(map[string]*plan, len(s.Properties))
		for name, ps := range s.Properties {
			p.props[name] = c.compile(ps)
		}
	}
	if ap := s.AdditionalProperties; ap != nil {
		if isFalse(ap) {
			p.forbid = true
		} else {
			p.additional = c.compile(ap)
		}
	}
	p.items = c.compile(s.Items)
	if s.Ref != "" {
		if t := c.resolve(s.Ref); t != nil {
			p.refs = append(p.refs, c.compile(t))
		}
	}
	for _, sub := range s.AllOf {
		p.refs = append(p.refs, c.compile(sub))
	}
	for _, sub := range append(append([]*jsonschema.Schema(nil), s.AnyOf...), s.OneOf...) {
		p.alts = append(p.alts, c.compile(sub))
	}
	return p
}

// finish fills declared and folded with every name p's value may be
// matched against, following refs and alts (cycles included).
func (p *plan) finish() {
	if p == nil || p.finished {
		return
	}
	p.finished = true
	for name, q := range p.props {
		p.declare(name, q)
	}
	for _, q := range append(append([]*plan(nil), p.refs...), p.alts...) {
		if q == nil {
			continue
		}
		q.finish()
		for name, qq := range q.props {
			p.declare(name, qq)
		}
		for name, qq := range q.declared {
			p.declare(name, qq)
		}
	}
}

func (p *plan) declare(name string, q *plan) {
	if p.declared == nil {
		p.declared = map[string]*plan{}
		p.folded = map[string]string{}
	}
	if _, ok := p.declared[name]; !ok {
		p.declared[name] = q
	}
	key := string(appendFolded(nil, name))
	if _, ok := p.folded[key]; !ok {
		p.folded[key] = name
	}
}

// isFalse reports whether s is the schema that admits nothing, which is how
// "false" and {"not":{}} both decode.
func isFalse(s *jsonschema.Schema) bool {
	return s.Not != nil && reflect.ValueOf(*s.Not).IsZero()
}

// appendFolded appends the case-folded form of name: two names fold alike
// exactly when Go's encoding/json would match one to the other.
func appendFolded(out []byte, name string) []byte {
	for _, r := range name {
		if r < utf8.RuneSelf {
			if 'a' <= r && r <= 'z' {
				r -= 'a' - 'A'
			}
			out = append(out, byte(r))
			continue
		}
		for {
			r2 := unicode.SimpleFold(r)
			if r2 <= r {
				r = r2
				break
			}
			r = r2
		}
		out = utf8.AppendRune(out, r)
	}
	return out
}

// walker checks one JSON text against a plan. The text is valid JSON; the
// path of the value being walked is kept as raw segments and rendered only
// for a problem.
type walker struct {
	raw           []byte
	i             int
	ignoreUnknown bool
	path          []segment
	probs         []Problem
}

type segment struct {
	name  []byte
	index int
	isIdx bool
}

func (w *walker) where() string {
	var b strings.Builder
	for _, s := range w.path {
		if s.isIdx {
			b.WriteString("[" + strconv.Itoa(s.index) + "]")
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(joinPath("", string(s.name)))
	}
	return b.String()
}

func (w *walker) problem(rule, format string, args ...any) {
	field := w.where()
	w.probs = append(w.probs, Problem{Field: field, Rule: rule, Message: fmt.Sprintf(format, append([]any{label(field)}, args...)...)})
}

func (w *walker) space() { w.i = wire.SkipSpace(w.raw, w.i) }

// value walks the value at w.i against p and leaves w.i just past it.
func (w *walker) value(p *plan, depth int) {
	w.space()
	if w.i >= len(w.raw) || depth > 10000 {
		w.i = len(w.raw)
		return
	}
	start := w.i
	jt := jsonType(w.raw, start)
	if p != nil && len(p.types) > 0 {
		if !typeAllowed(p.types, jt) {
			w.problem("type", "%s must be %s", typeWant(p.types))
			w.i = skip(w.raw, start)
			return
		}
	}
	switch jt {
	case "object":
		w.object(p, depth)
	case "array":
		w.array(p, depth)
	case "number", "integer":
		w.i = skip(w.raw, start)
		if p != nil && (p.minimum != nil || p.maximum != nil) {
			f, err := strconv.ParseFloat(string(w.raw[start:w.i]), 64)
			if err != nil {
				return
			}
			if p.minimum != nil && f < *p.minimum {
				w.problem("minimum", "%s must be at least %s", num(*p.minimum))
			}
			if p.maximum != nil && f > *p.maximum {
				w.problem("maximum", "%s must be at most %s", num(*p.maximum))
			}
		}
	default:
		w.i = skip(w.raw, start)
	}
}

func (w *walker) object(p *plan, depth int) {
	w.i++                        // {
	var seen uint64              // required members present, by index (the first 64)
	var seenMore map[string]bool // the others, for a schema that requires more
	if p != nil && len(p.required) > 64 {
		seenMore = map[string]bool{}
	}
	w.path = append(w.path, segment{})
	slot := len(w.path) - 1
	for {
		w.space()
		if w.i >= len(w.raw) {
			return
		}
		if w.raw[w.i] == '}' {
			w.i++
			break
		}
		if w.raw[w.i] == ',' {
			w.i++
			continue
		}
		end := skip(w.raw, w.i)
		name, err := wire.MemberNameBytes(w.raw[w.i:end])
		if err != nil {
			w.i = len(w.raw)
			return
		}
		w.i = end
		w.space()
		w.i++ // :
		w.path[slot] = segment{name: name}
		if p == nil {
			w.value(nil, depth+1)
			continue
		}
		for k, r := range p.required {
			if r == string(name) {
				if k < 64 {
					seen |= 1 << k
				} else {
					seenMore[r] = true
				}
			}
		}
		if pp, ok := p.props[string(name)]; ok {
			w.value(pp, depth+1)
			continue
		}
		if pp, ok := p.declared[string(name)]; ok {
			w.value(pp, depth+1)
			continue
		}
		// Go's decoding would bind a case variant of a declared name to
		// that field, past the schema's checks of the declared one:
		// refuse it whatever additionalProperties says.
		if declared, ok := p.folded[string(appendFolded(nil, string(name)))]; ok {
			w.problem("unknown", "%s is not allowed: names are case-sensitive (did you mean %s?)", declared)
			w.value(nil, depth+1)
			continue
		}
		switch {
		case p.patterns:
			w.value(nil, depth+1)
		case p.forbid:
			if !w.ignoreUnknown {
				w.problem("unknown", "%s is not allowed (unknown field)")
			}
			w.value(nil, depth+1)
		default:
			w.value(p.additional, depth+1)
		}
	}
	w.path = w.path[:slot]
	if p == nil {
		return
	}
	for k, r := range p.required {
		if k < 64 && seen&(1<<k) != 0 {
			continue
		}
		if k >= 64 && seenMore[r] {
			continue
		}
		w.path = append(w.path, segment{name: []byte(r)})
		w.problem("required", "%s is required")
		w.path = w.path[:slot]
	}
}

func (w *walker) array(p *plan, depth int) {
	w.i++ // [
	var items *plan
	if p != nil {
		items = p.items
	}
	w.path = append(w.path, segment{isIdx: true})
	slot := len(w.path) - 1
	n := 0
	for {
		w.space()
		if w.i >= len(w.raw) {
			return
		}
		if w.raw[w.i] == ']' {
			w.i++
			break
		}
		if w.raw[w.i] == ',' {
			w.i++
			continue
		}
		w.path[slot] = segment{isIdx: true, index: n}
		w.value(items, depth+1)
		n++
	}
	w.path = w.path[:slot]
	if p == nil {
		return
	}
	if p.minItems != nil && n < *p.minItems {
		w.problem("minItems", "%s must have at least %d items", *p.minItems)
	}
	if p.maxItems != nil && n > *p.maxItems {
		w.problem("maxItems", "%s must have at most %d items", *p.maxItems)
	}
}

// jsonType names the JSON type of the value at raw[i]; numbers that parse
// as 64-bit integers are "integer".
func jsonType(raw []byte, i int) string {
	switch c := raw[i]; {
	case c == '{':
		return "object"
	case c == '[':
		return "array"
	case c == '"':
		return "string"
	case c == 't' || c == 'f':
		return "boolean"
	case c == 'n':
		return "null"
	}
	lit := raw[i:skip(raw, i)]
	if bytes.ContainsAny(lit, ".eE") {
		return "number"
	}
	if len(lit) <= 18 {
		return "integer" // fits an int64 whatever the digits
	}
	s := string(lit)
	if _, err := strconv.ParseInt(s, 10, 64); err == nil {
		return "integer"
	}
	if _, err := strconv.ParseUint(s, 10, 64); err == nil {
		return "integer"
	}
	return "number"
}

func typeAllowed(types []string, jt string) bool {
	for _, t := range types {
		if t == jt || (t == "number" && jt == "integer") {
			return true
		}
	}
	return false
}

// typeWant says what types allow, "null" last: "an array or null".
func typeWant(types []string) string {
	nouns := make([]string, 0, len(types))
	null := false
	for _, t := range types {
		if t == "null" {
			null = true
			continue
		}
		nouns = append(nouns, typeNoun(t))
	}
	if null {
		nouns = append(nouns, "null")
	}
	return strings.Join(nouns, " or ")
}

// skip returns the index just past the value starting at raw[i]. The
// arguments a walker reads are valid JSON (the Server checked them), so a
// value always ends; the end of raw stands in for one that would not.
func skip(raw []byte, i int) int {
	if end := wire.SkipValue(raw, i); end >= 0 {
		return end
	}
	return len(raw)
}

func num(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }
