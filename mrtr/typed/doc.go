// Package typed is the recommended way to write tools: a Go function from
// an input struct to an output struct, which may ask the client for input
// in straight-line code. It generates the tool's JSON Schemas, checks the
// arguments before your function runs, and turns its output into the tool
// result. It also builds the forms a function asks the user to fill in
// (Form) from Go structs.
//
// A tool is a function; the type arguments follow from it:
//
//	type In struct {
//		City string `json:"city" jsonschema:"the city to report on" validate:"min=2"`
//	}
//	type Out struct {
//		Forecast string `json:"forecast"`
//	}
//
//	err := typed.AddTool(srv, mrtr.Tool{Name: "forecast"},
//		func(ctx context.Context, req *mrtr.Request, in In) (Out, error) {
//			return Out{Forecast: "sunny in " + in.City}, nil
//		})
//
// # Schemas
//
// The inputSchema is generated from In by InputSchemaFor: the shape of
// In's JSON as github.com/google/jsonschema-go describes it (root type
// "object", additionalProperties false, fields required unless tagged
// omitempty, a `jsonschema:"..."` tag as the description), plus the rules
// of In's `validate` tags that have a JSON Schema form (next section) and
// the title and default of its `mcp` tags. The outputSchema is generated
// from Out by SchemaFor, which describes the shape only: validate tags
// say what a tool accepts, not what it returns. A schema already set on
// the Tool is kept. With Out = *mrtr.CallToolResult the function builds
// the whole result and no output schema is declared.
//
// An `mcp` tag annotates a field: `mcp:"title=Plan,default=free"`. Its
// options are title=, default= (a value of the field's type; a list of
// strings is written a|b) and, for forms, titles= (the titles of the
// values a oneof rule allows, `titles=free:Free plan|pro:Pro plan`). A
// comma ends a value only where the next option begins, so titles may
// hold commas. A default must pass the field's rules. The server does not
// fill a default in: a member the client leaves out is the zero value.
//
// # Rules and schemas
//
// The validate tags are the one source of the rules: the Binder enforces
// them (with go-playground/validator), and the input schema carries each
// rule that has an exact JSON Schema form, so that the schema a client
// sees admits a value exactly when the tags accept it. Rules without such
// a form are enforced by the server alone: the schema then admits more
// than the server accepts, never less. A property test
// (rules_prop_test.go) checks every mapped rule on values at, around and
// far from its boundary.
//
//	rule                      on                     JSON Schema
//	min=n, gte=n              string                 minLength n (in code points, as validator counts runes)
//	max=n, lte=n              string                 maxLength n
//	gt=n, lt=n                string                 minLength n+1, maxLength n-1
//	len=n                     string                 minLength n, maxLength n
//	min, max, gt, lt, len     slice                  minItems, maxItems, as for strings
//	min, max, gt, lt, len     map                    minProperties, maxProperties, as for strings
//	eq=n                      slice, map             its size is n, as len=n
//	min=x, gte=x              integer, float64       minimum x
//	max=x, lte=x              integer, float64       maximum x
//	gt=x, lt=x                integer, float64       exclusiveMinimum x, exclusiveMaximum x
//	len=x                     integer, float64       minimum x, maximum x
//	eq=v                      string, number, bool   enum [v]
//	ne=v                      string, number, bool   not {enum [v]} (several ne: one not with every value)
//	oneof=a b 'c d'           string                 enum ["a","b","c d"]
//	oneof=1 2                 integer                enum [1,2] (only values written as validator prints them: not 01, +1)
//	required                  string                 minLength 1, and required
//	required                  number                 not {enum [0]}, and required (-0 is zero to both)
//	required                  bool                   enum [true], and required
//	required                  pointer, slice         null not allowed, and required
//	required                  map                    required
//	email                     string                 format email
//	url, uri                  string                 format uri
//	uuid, hostname            string                 format uuid, format hostname
//	ipv4, ipv6                string                 format ipv4, format ipv6
//	datetime=2006-01-02       string                 format date
//	datetime=<RFC 3339>       string                 format date-time (layouts time.RFC3339 and time.RFC3339Nano)
//	startswith=p              string                 pattern ^p (p escaped with regexp.QuoteMeta)
//	endswith=p                string                 pattern p$
//	contains=p                string                 pattern p
//	a RegisterPattern tag     string                 its pattern
//	unique                    slice of scalars       uniqueItems true
//	dive,<rules>              slice                  items: the rules after dive
//	dive,<rules>              map                    additionalProperties: the rules after dive
//	dive,keys,<r>,endkeys     map with string keys   propertyNames: the rules r
//
// Several patterns on one string are an allOf of patterns. Nested structs
// are followed as validator follows them: a struct field and a pointer to
// a struct always, and the elements of a slice or map only after dive.
// Tag parameters are read as validator reads them (0x2C is a comma, 0x7C a
// bar, integers may be written 0x10); one validator cannot read is an
// error when the tool is made.
//
// Absence and null follow validator too. A member the client leaves out
// is decoded as the zero value, so a member whose zero value the rules
// refuse is listed in required (a string with min=1, a number with
// gte=1, an email, a struct whose own fields refuse their zero values). A
// pointer whose tag has rules and does not begin with omitempty, omitnil
// or omitzero refuses nil: its member is required and null not allowed.
// Leading omitempty or omitzero on a non-pointer value exempts the zero
// value from the rules; when the zero value breaks them the schema says
// so with anyOf: `validate:"omitempty,gte=1,lte=50"` on an int is
// {"type":"integer","anyOf":[{"const":0},{"minimum":1,"maximum":50}]}, and
// omitempty,email on a string is {"anyOf":[{"const":""},{"format":"email"}]}.
// On a pointer, omitempty and omitnil exempt only null (omitzero a pointer
// to the zero value too); on a slice, null (omitzero also []); enums of
// values that may be null list null.
//
// These rules have no JSON Schema form and are enforced by the server
// alone: excludes, excludesall, excludesrune, containsany, containsrune,
// startsnotwith, endsnotwith; alpha, alphanum, numeric, number, ascii,
// printascii, lowercase, uppercase and the other character classes; ip,
// cidr, mac, e164, semver, uuid4 and every other format, datetime with
// another layout; unique on a map or with a field name; ne on a slice or
// map; alternatives (a|b) and aliases such as iscolor; every rule that
// looks at another field (eqfield, gtfield, required_if, required_with,
// excluded_unless and the rest) and struct-level rules; isdefault; required
// on a struct (which asks for a non-zero struct: the schema only makes the
// member required); the rules of a struct tagged omitempty or omitzero,
// which validator skips when the struct is zero; omitempty in the middle
// of a tag; oneof with a number too large for a double, or on a float.
// Rules are not mapped on float32 values (decoding rounds the number, so
// no bound is exact), on time.Duration and other types that decode
// themselves (UnmarshalJSON, UnmarshalText) or encode as a string ([]byte),
// on pointers to slices and
// maps, or on fields promoted from an embedded pointer or an embedded
// field with tags. Numeric bounds beyond 2^53 that a double cannot hold
// are not mapped either.
//
// Formats are annotations in JSON Schema 2020-12 and jsonschema-go does
// not assert them; the server's check is validator's. Validator's notion
// differs from the format's definition in these cases (the test lists
// them): email accepts non-ASCII addresses (which are idn-email) and
// refuses a domain without a dot (a@localhost); url refuses "http:" and
// accepts a space in a path; uri accepts an absolute path such as /a/b,
// which is a relative reference; hostname (RFC 952) refuses a first label
// that begins with a digit; ipv4 accepts an IPv4-mapped IPv6 address
// (::ffff:1.2.3.4) and ipv6 refuses it; date-time refuses a lower-case t
// or z and the leap second 60.
//
// RegisterPattern adds a tag of your own that holds a string to a regular
// expression and is carried as a pattern, for a rule validator's tags
// cannot say.
//
// # Arguments
//
// Arguments reach a typed tool through the Server's strict door (see
// package mrtr), then are checked in layers by a Binder, each problem
// named by the argument's JSON path: in one pass over the JSON text, JSON
// types, required members, members the schema does not allow and case
// variants of declared names (through $ref, $defs, allOf, anyOf and oneOf
// as well, since Go's decoding would bind them to the declared field); a
// hand-written schema in full; then In's `validate` tags
// (github.com/go-playground/validator). Unknown arguments
// follow the schema: a generated schema refuses them; a hand-written one
// decides. A problem ends the call with an isError result the model can act
// on, for example:
//
//	Invalid arguments:
//	- city must be a string
//	- days must be at most 7 (rule "lte=7")
//
// # Forms
//
// A Form asks the user to fill in a form generated from a struct, in the
// restricted schema of MCP 2026-07-28 (flat, primitive properties), under
// the key it was built with. Ask returns the answer decoded and checked
// against the schema asked and the struct's validate tags, or the error
// that ends this run with the question (see "Asking in straight-line
// code" in package mrtr):
//
//	type Name struct {
//		Name string `json:"name" mcp:"title=Your name" validate:"required,max=100"`
//	}
//	var askName = typed.MustForm[Name]("name", "What is your name?")
//
//	func greet(ctx context.Context, req *mrtr.Request, _ struct{}) (*mrtr.CallToolResult, error) {
//		name, action, err := askName.Ask(ctx, req)
//		switch {
//		case err != nil:
//			return nil, err // the question, or -32602 after repeated bad answers
//		case action != mrtr.Accepted:
//			return mrtr.TextResult("No name, no greeting."), nil // declined or cancelled
//		}
//		return mrtr.TextResult("Hello, " + name.Name + "!"), nil
//	}
//
// An answer that fails the checks (a wrong type, "yes" for a boolean, a
// missing required field, a value out of bounds, a value not among the
// choices) is never handed on: Ask asks again under the same key, the
// message followed by what was wrong, up to WithMaxInvalid times
// (DefaultMaxInvalid), each one more round; then it returns the
// *FormError naming each problem, which refuses the call with -32602
// "Invalid input response". Declined and Cancelled are values, told
// apart, and the form is not asked again in the call. See Form for the
// fields and keywords a form has.
//
// A message that depends on the call goes through WithMessage, and a form
// asked once per item of a loop through WithKey; each returns a copy that
// shares the form's schema and checks:
//
//	ask := askName.WithMessage("Who should " + in.Team + " invite?")
//
// For handlers written against mrtr.Result, Read, Reask and InputRequired
// do the same by hand.
//
// # Output and errors
//
// The output is the result's structuredContent and also its one text
// block, for clients that only read content; an Out that implements
// Contenter chooses its own blocks. A hand-written outputSchema is
// enforced (a mismatch is a server bug: -32603, detail logged), and so is
// a generated one when Out can encode itself differently from its schema
// (a MarshalJSON or MarshalText method, an interface inside it, a ",string"
// field option, an embedded pointer). Any other Out encodes to JSON its
// generated schema admits (nil maps and slices as null, a []byte as a
// base64 string), so it is not checked again, and AddTool spares it the
// Server's own check too (mrtr.SkipOutputCheck). A *ToolError from the
// function (see Errorf) is an isError result with its message; an
// *mrtr.Error goes to the client as is; any other error is -32603.
//
// # More than one round
//
// A function asks in straight-line code (Form.Ask, mrtr.Elicit,
// mrtr.Sample, mrtr.ListRoots, model.Sample) and returns the ask's error
// while an answer is missing; it then runs again from the top on the next
// round. Adapt serves a function for prompts/get and resources/read too.
package typed
