package typed

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/go-playground/validator/v10"
)

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

// maxNameEcho bounds what a problem's path repeats of one member name.
const maxNameEcho = 32

// joinPath appends a member name to a path, quoting names that would not
// read as one path segment.
func joinPath(parent, name string) string {
	if len(name) > maxNameEcho {
		// A name the caller sent is echoed as a short prefix only.
		n := maxNameEcho
		for n > 0 && name[n]&0xC0 == 0x80 {
			n--
		}
		name = strconv.Quote(name[:n]) + "..."
	} else if name == "" || strings.ContainsFunc(name, func(r rune) bool {
		return !(r == '_' || r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')
	}) {
		name = strconv.Quote(name)
	}
	if parent == "" {
		return name
	}
	return parent + "." + name
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
		if p == "1" {
			unit = " character long"
		}
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
	if rp, ok := lookupPattern(fe.Tag()); ok {
		return rp.must
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
