package typed

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/go-playground/validator/v10"
	"github.com/google/jsonschema-go/jsonschema"
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

// Problem is one thing wrong with a value a Binder checked.
type Problem struct {
	// Field is the JSON path of the offending value, such as "audience",
	// "options.depth" or "files[2]"; "" means the value as a whole.
	Field string `json:"field"`
	// Rule is what was broken: "type", "required", "unknown", "minimum",
	// "maximum", "minItems", "maxItems", "schema", or a validate tag with
	// its parameter such as "min=3".
	Rule string `json:"rule"`
	// Message says it in a sentence that names the field, for example
	// "audience must be a string".
	Message string `json:"message"`
}

// ArgumentError reports every problem a Binder found. Handlers built by
// this package turn it into an isError tool result whose text lists the
// problems, so that the model can correct its call.
type ArgumentError struct {
	// Problems lists every problem found, each with its field and rule.
	Problems []Problem
}

// Error lists the problems on one line.
func (e *ArgumentError) Error() string { return "invalid arguments: " + e.list() }

func (e *ArgumentError) list() string {
	msgs := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		msgs[i] = p.Message
	}
	return strings.Join(msgs, "; ")
}

// Text lists the problems one per line, as tool results show them.
func (e *ArgumentError) Text() string {
	var b strings.Builder
	b.WriteString("Invalid arguments:")
	for _, p := range e.Problems {
		b.WriteString("\n- ")
		b.WriteString(p.Message)
	}
	return b.String()
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
//  1. against the JSON Schema: types, required members, members the
//     schema does not allow (additionalProperties false), numeric bounds
//     and array lengths;
//  2. for a schema that was not generated from T, against the whole schema
//     with a JSON Schema validator;
//  3. by decoding into T with encoding/json;
//  4. by T's `validate` struct tags (github.com/go-playground/validator),
//     with fields named by their JSON names.
//
// Later stages run only when the earlier ones found nothing. A Binder is
// safe for concurrent use.
type Binder[T any] struct {
	schema        *jsonschema.Schema
	resolved      *jsonschema.Resolved // set when the schema was given
	ignoreUnknown bool
	structTags    bool
}

// NewBinder returns a Binder for T. opts may be nil.
func NewBinder[T any](opts *BindOptions) (*Binder[T], error) {
	if opts == nil {
		opts = &BindOptions{}
	}
	b := &Binder[T]{ignoreUnknown: opts.IgnoreUnknown}
	if opts.Schema != nil {
		r, err := opts.Schema.Resolve(nil)
		if err != nil {
			return nil, fmt.Errorf("typed: schema for %v: %w", reflect.TypeFor[T](), err)
		}
		b.schema, b.resolved = opts.Schema, r
	} else {
		s, err := SchemaFor[T](opts.ForOptions)
		if err != nil {
			return nil, err
		}
		b.schema = s
	}
	t := reflect.TypeFor[T]()
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() == reflect.Struct {
		if err := checkTags(t); err != nil {
			return nil, err
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
	var zero T
	if len(bytes.TrimSpace(raw)) == 0 {
		raw = json.RawMessage("null")
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil || d.More() {
		return zero, &ArgumentError{Problems: []Problem{{Rule: "json", Message: "the value is not valid JSON"}}}
	}
	var probs []Problem
	b.check(b.schema, v, "", &probs)
	if len(probs) == 0 && b.resolved != nil {
		var plain any
		_ = json.Unmarshal(raw, &plain)
		if err := b.resolved.Validate(plain); err != nil {
			probs = append(probs, schemaProblem(err))
		}
	}
	if len(probs) > 0 {
		return zero, &ArgumentError{Problems: probs}
	}
	var out T
	if err := json.Unmarshal(raw, &out); err != nil {
		return zero, &ArgumentError{Problems: []Problem{decodeProblem(err)}}
	}
	if b.structTags {
		if err := validate.Struct(out); err != nil {
			var ve validator.ValidationErrors
			if !errors.As(err, &ve) {
				return zero, fmt.Errorf("typed: validate %T: %w", out, err)
			}
			for _, fe := range ve {
				probs = append(probs, tagProblem(fe))
			}
			return zero, &ArgumentError{Problems: probs}
		}
	}
	return out, nil
}

func decodeProblem(err error) Problem {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		want := kindNoun(te.Type)
		return Problem{Field: te.Field, Rule: "type", Message: fmt.Sprintf("%s must be %s", label(te.Field), want)}
	}
	return Problem{Rule: "decode", Message: "the value cannot be decoded: " + err.Error()}
}

func kindNoun(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return "an integer in range"
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return "a non-negative integer in range"
	case reflect.Float32, reflect.Float64:
		return "a number in range"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Map, reflect.Struct:
		return "an object"
	}
	return "a " + t.String()
}

// label is how a path is named in a sentence.
func label(path string) string {
	if path == "" {
		return "the value"
	}
	return path
}

// joinPath appends a member name to a path, quoting names that would not
// read as one path segment.
func joinPath(parent, name string) string {
	if name == "" || strings.ContainsFunc(name, func(r rune) bool {
		return !(r == '_' || r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')
	}) {
		name = strconv.Quote(name)
	}
	if parent == "" {
		return name
	}
	return parent + "." + name
}

// check walks v against s, collecting problems. It checks the keywords
// that SchemaFor generates; a given schema is checked in full afterwards.
func (b *Binder[T]) check(s *jsonschema.Schema, v any, path string, probs *[]Problem) {
	if s == nil {
		return
	}
	if want, ok := typeOK(s, v); !ok {
		*probs = append(*probs, Problem{Field: path, Rule: "type", Message: fmt.Sprintf("%s must be %s", label(path), want)})
		return
	}
	switch x := v.(type) {
	case map[string]any:
		for _, name := range s.Required {
			if _, ok := x[name]; !ok {
				p := joinPath(path, name)
				*probs = append(*probs, Problem{Field: p, Rule: "required", Message: p + " is required"})
			}
		}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			p := joinPath(path, k)
			if ps, ok := s.Properties[k]; ok {
				b.check(ps, x[k], p, probs)
				continue
			}
			// Go's decoding would bind a case variant of a declared name
			// to that field, past the schema's checks of the declared one:
			// refuse it whatever additionalProperties says.
			if declared := foldMatch(s.Properties, k); declared != "" {
				*probs = append(*probs, Problem{Field: p, Rule: "unknown", Message: fmt.Sprintf("%s is not allowed: names are case-sensitive (did you mean %s?)", p, declared)})
				continue
			}
			ap := s.AdditionalProperties
			switch {
			case ap == nil || len(s.PatternProperties) > 0:
			case isFalse(ap):
				if !b.ignoreUnknown {
					*probs = append(*probs, Problem{Field: p, Rule: "unknown", Message: p + " is not allowed (unknown field)"})
				}
			default:
				b.check(ap, x[k], p, probs)
			}
		}
	case []any:
		if s.MinItems != nil && len(x) < *s.MinItems {
			*probs = append(*probs, Problem{Field: path, Rule: "minItems", Message: fmt.Sprintf("%s must have at least %d items", label(path), *s.MinItems)})
		}
		if s.MaxItems != nil && len(x) > *s.MaxItems {
			*probs = append(*probs, Problem{Field: path, Rule: "maxItems", Message: fmt.Sprintf("%s must have at most %d items", label(path), *s.MaxItems)})
		}
		for i, e := range x {
			b.check(s.Items, e, path+"["+strconv.Itoa(i)+"]", probs)
		}
	case json.Number:
		f, err := x.Float64()
		if err != nil {
			return
		}
		if s.Minimum != nil && f < *s.Minimum {
			*probs = append(*probs, Problem{Field: path, Rule: "minimum", Message: fmt.Sprintf("%s must be at least %s", label(path), num(*s.Minimum))})
		}
		if s.Maximum != nil && f > *s.Maximum {
			*probs = append(*probs, Problem{Field: path, Rule: "maximum", Message: fmt.Sprintf("%s must be at most %s", label(path), num(*s.Maximum))})
		}
	}
}

// foldMatch returns the declared property equal to k ignoring case, or "".
func foldMatch(props map[string]*jsonschema.Schema, k string) string {
	for name := range props {
		if strings.EqualFold(name, k) {
			return name
		}
	}
	return ""
}

func num(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// isFalse reports whether s is the schema that admits nothing, which is how
// "false" and {"not":{}} both decode.
func isFalse(s *jsonschema.Schema) bool {
	return s.Not != nil && reflect.ValueOf(*s.Not).IsZero()
}

// typeOK reports whether v has a type s allows, and if not, what s wants.
func typeOK(s *jsonschema.Schema, v any) (string, bool) {
	types := s.Types
	if s.Type != "" {
		types = []string{s.Type}
	}
	if len(types) == 0 {
		return "", true
	}
	for _, t := range types {
		if hasType(v, t) {
			return "", true
		}
	}
	nouns := make([]string, len(types))
	for i, t := range types {
		nouns[i] = typeNoun(t)
	}
	// "null" last reads best: "an array or null".
	slices.SortStableFunc(nouns, func(a, b string) int {
		switch {
		case a == "null" && b != "null":
			return 1
		case b == "null" && a != "null":
			return -1
		}
		return 0
	})
	return strings.Join(nouns, " or "), false
}

func typeNoun(t string) string {
	switch t {
	case "string", "number", "boolean", "array":
		if t == "array" {
			return "an array"
		}
		return "a " + t
	case "integer", "object":
		return "an " + t
	}
	return t
}

func hasType(v any, t string) bool {
	switch x := v.(type) {
	case nil:
		return t == "null"
	case string:
		return t == "string"
	case bool:
		return t == "boolean"
	case json.Number:
		if t == "number" {
			return true
		}
		if t != "integer" {
			return false
		}
		if _, err := strconv.ParseInt(string(x), 10, 64); err == nil {
			return true
		}
		_, err := strconv.ParseUint(string(x), 10, 64)
		return err == nil
	case map[string]any:
		return t == "object"
	case []any:
		return t == "array"
	}
	return false
}

// tagProblem turns one validator failure into a Problem named by the
// field's JSON path.
func tagProblem(fe validator.FieldError) Problem {
	field := fe.Namespace()
	if _, rest, ok := strings.Cut(field, "."); ok {
		field = rest
	}
	rule := fe.Tag()
	if fe.Param() != "" {
		rule += "=" + fe.Param()
	}
	return Problem{Field: field, Rule: rule, Message: fmt.Sprintf("%s %s (rule %q)", label(field), explain(fe), rule)}
}

// explain says in words what a validate tag asks for.
func explain(fe validator.FieldError) string {
	p := fe.Param()
	unit := ""
	switch fe.Kind() {
	case reflect.String:
		unit = " characters long"
	case reflect.Slice, reflect.Array, reflect.Map:
		unit = " items"
	}
	switch fe.Tag() {
	case "required", "required_if", "required_unless", "required_with", "required_without":
		return "is required"
	case "min", "gte":
		if unit == " items" {
			return "must have at least " + p + unit
		}
		return "must be at least " + p + unit
	case "max", "lte":
		if unit == " items" {
			return "must have at most " + p + unit
		}
		return "must be at most " + p + unit
	case "gt":
		return "must be more than " + p + unit
	case "lt":
		return "must be less than " + p + unit
	case "len":
		if unit == " items" {
			return "must have exactly " + p + unit
		}
		return "must be exactly " + p + unit
	case "eq":
		return "must equal " + p
	case "ne":
		return "must not equal " + p
	case "oneof":
		return "must be one of: " + strings.Join(strings.Fields(p), ", ")
	case "email", "url", "uri", "uuid", "hostname", "ip", "ipv4", "ipv6", "datetime", "e164", "semver":
		return "must be a valid " + fe.Tag()
	case "alphanum", "alpha", "numeric", "lowercase", "uppercase", "ascii":
		return "must be " + fe.Tag()
	case "startswith":
		return "must start with " + strconv.Quote(p)
	case "endswith":
		return "must end with " + strconv.Quote(p)
	case "contains":
		return "must contain " + strconv.Quote(p)
	case "excludes":
		return "must not contain " + strconv.Quote(p)
	case "unique":
		return "must not contain duplicates"
	}
	return "is not valid"
}

// schemaProblem turns a schema validation error, whose text names the
// failing location as "validating /properties/a/properties/b: keyword:
// detail", into a Problem naming the argument by its JSON path.
func schemaProblem(err error) Problem {
	msg := err.Error()
	i := strings.LastIndex(msg, "validating /")
	if i < 0 {
		return Problem{Rule: "schema", Message: "the value does not match the schema: " + msg}
	}
	rest := msg[i+len("validating "):]
	ptr, detail, _ := strings.Cut(rest, ": ")
	var field []string
	parts := strings.Split(strings.TrimPrefix(ptr, "/"), "/")
	for j := 0; j < len(parts); j++ {
		switch {
		case parts[j] == "properties" && j+1 < len(parts):
			field = append(field, strings.NewReplacer("~1", "/", "~0", "~").Replace(parts[j+1]))
			j++
		case parts[j] == "items" || parts[j] == "prefixItems":
			if j+1 < len(parts) && parts[j+1] != "" && parts[j+1][0] >= '0' && parts[j+1][0] <= '9' {
				j++
			}
			if len(field) > 0 {
				field[len(field)-1] += "[]"
			}
		}
	}
	name := strings.Join(field, ".")
	rule, _, _ := strings.Cut(detail, ":")
	if name == "" {
		return Problem{Rule: "schema", Message: "the value does not match the schema: " + detail}
	}
	return Problem{Field: name, Rule: strings.TrimSpace(rule), Message: name + " does not match the schema: " + detail}
}
