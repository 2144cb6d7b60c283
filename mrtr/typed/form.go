package typed

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/mrtrkit/mrtrkit/internal/askhook"
	"github.com/mrtrkit/mrtrkit/mrtr"
)

// Form is a form the user fills in, generated from the struct F: one
// property per field, with the keywords the MCP 2026-07-28 form schema
// allows. Build one with NewForm; a Form is safe for concurrent use.
//
// A field is a string, a number (any integer or float type), a boolean,
// a pointer to one of those, or a slice of strings whose values are
// listed by `validate:"dive,oneof=..."` (a multi-select). Properties get:
//
//   - type, and the description of a `jsonschema:"..."` tag;
//   - title, default and enum titles from an `mcp` tag:
//     `mcp:"title=Plan,default=free,titles=free:Free plan|pro:Pro plan"`
//     (a comma ends a value only where the next option begins);
//   - from the `validate` tag (see "Rules and schemas" in the package
//     documentation), as far as the form schema has the keyword: minLength
//     and maxLength, format (email, uri, date and date-time only), enum
//     (oneof on a string), or oneOf of const and title when titles are
//     given, minimum and maximum (an exclusive bound of an integer becomes
//     the inclusive one next to it), minItems and maxItems;
//   - required unless the field is a pointer or tagged json omitempty,
//     and required whenever the rules refuse its zero value.
//
// Rules the form schema cannot carry (patterns, exclusive bounds of
// floats, a required number or boolean meaning non-zero, enums of
// numbers, and every rule without a JSON Schema form) are enforced when
// the answer is read, with the same result as a broken keyword. So is
// every keyword on the values the user sends: the rule the form shows,
// such as minLength 3, holds for an optional field's "" too (omit the
// field to leave it empty), although `validate:"omitempty,min=3"` alone
// would accept "".
//
// A form is bound to the key it is asked under: Ask asks it and returns
// the decoded answer in straight-line code. WithMessage and WithKey give
// copies asked with another message (one built from the call's
// arguments, say) or under another key (one per item of a loop); copies
// share the compiled schema and checks.
type Form[F any] struct {
	fc         *formCore // shared by every copy; never modified
	key        string
	message    string
	maxInvalid int
	prepared   *formAsk // what Ask asks with; nil for a copy made per call (built by Ask)
}

// formAsk is what Ask asks a form with: its question, and the options that
// identify and check it.
type formAsk struct {
	q    *mrtr.ElicitRequest
	opts []mrtr.AskOption
}

// formCore is the part of a Form that depends on neither F nor the
// message: built once by NewForm, read-only afterwards.
type formCore struct {
	schema      *mrtr.ElicitSchema
	fingerprint [sha256.Size]byte              // of the schema as sent, and of F's rules
	props       map[string]*formSchemaProperty // the properties, as rendered
	check       core                           // types, required members, case variants; tags
	titles      map[string]string              // property → title, for problems
}

// contentJSON has an answer replayed from the call's state come without
// its Content map: Ask reads the content by ContentJSON.
var contentJSON = askhook.ContentJSON.(mrtr.AskOption)

// compileAsk makes the options a form is asked with one option, applied
// once: a form's ask then allocates no options and hashes no identity.
var compileAsk = askhook.Compile.(func(...mrtr.AskOption) mrtr.AskOption)

// DefaultMaxInvalid is how many times Ask asks a form again after an
// accepted answer that breaks its rules, before it returns the
// *FormError.
const DefaultMaxInvalid = 2

// NewForm returns the form of F, asked under key with message. It fails
// when the key or message is empty, or F is not a struct of the fields
// Form describes, or its tags cannot be read.
func NewForm[F any](key, message string) (*Form[F], error) {
	t := reflect.TypeFor[F]()
	if key == "" || message == "" {
		return nil, fmt.Errorf("typed: form %v: a key and a message are required", t)
	}
	fc, err := newFormCore(t)
	if err != nil {
		return nil, err
	}
	f := &Form[F]{fc: fc, key: key, message: message, maxInvalid: DefaultMaxInvalid}
	f.prepared = f.prepare() // once, for a form asked on many calls
	return f, nil
}

// with returns a copy of f under key with message.
func (f *Form[F]) with(key, message string) *Form[F] {
	cp := *f
	if key != f.key || message != f.message {
		cp.prepared = nil // a copy made for a call stays one allocation
	}
	cp.key, cp.message = key, message
	return &cp
}

// prepare builds what Ask asks the form with. The question is identified
// by its message and the form's schema and rules, hashed; the check
// decodes an answer the way Ask will, and is asked again with what was
// wrong.
func (f *Form[F]) prepare() *formAsk {
	var buf [256]byte
	d := sha256.Sum256(append(append(append(buf[:0], f.message...), 0), f.fc.fingerprint[:]...))
	check := func(r *mrtr.ElicitResult) error {
		var v F
		_, err := f.fc.decode(f.key, r, &v)
		return err
	}
	reword := func(_ *mrtr.ElicitRequest, problem error) *mrtr.ElicitRequest {
		return &mrtr.ElicitRequest{Message: f.reaskMessage(problem), RequestedSchema: f.fc.schema}
	}
	return &formAsk{
		q:    f.Elicit(),
		opts: []mrtr.AskOption{compileAsk(mrtr.BindTo(d[:]), contentJSON, mrtr.CheckAnswer(check, reword, f.maxInvalid))},
	}
}

// MustForm is NewForm for forms built in package-level variables: it
// panics when NewForm fails.
func MustForm[F any](key, message string) *Form[F] {
	f, err := NewForm[F](key, message)
	if err != nil {
		panic(err)
	}
	return f
}

func newFormCore(t reflect.Type) (*formCore, error) {
	if t.Kind() != reflect.Struct {
		return nil, fmt.Errorf("typed: form type %v must be a struct", t)
	}
	base, err := schemaForType(t, nil)
	if err != nil {
		return nil, err
	}
	fc := &formCore{titles: map[string]string{}, props: map[string]*formSchemaProperty{}}
	req := &mrtr.ElicitSchema{Type: "object", Properties: map[string]json.RawMessage{}}
	check := &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{}}
	for _, f := range fieldsOf(t) {
		ps := base.Properties[f.name]
		if ps == nil {
			continue
		}
		p, required, title, err := formProperty(f, ps, slices.Contains(base.Required, f.name))
		if err != nil {
			return nil, fmt.Errorf("typed: form %v: field %q: %w", t, f.name, err)
		}
		raw, err := json.Marshal(p)
		if err != nil {
			return nil, err
		}
		fc.props[f.name] = p
		cs, err := parseSchema(raw)
		if err != nil {
			return nil, err
		}
		req.Properties[f.name] = raw
		check.Properties[f.name] = cs
		if required {
			req.Required = append(req.Required, f.name)
		}
		if title != "" {
			fc.titles[f.name] = title
		}
	}
	if len(req.Properties) == 0 {
		return nil, fmt.Errorf("typed: form type %v must have at least one field", t)
	}
	check.Required = req.Required
	if _, err := check.Resolve(&jsonschema.ResolveOptions{ValidateDefaults: true}); err != nil {
		return nil, fmt.Errorf("typed: form %v: %w", t, err)
	}
	// Members the form does not declare are dropped, as a client may add
	// its own; case variants of declared names are still refused. The
	// one-pass walk checks types, required members, numeric bounds and
	// array lengths; checkKeywords the rest of the form's keywords.
	if err := checkTags(t); err != nil {
		return nil, err
	}
	fc.schema = req
	sj, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	fc.fingerprint = formFingerprint(t, sj)
	fc.check = core{schema: check, plan: compilePlan(check), ignoreUnknown: true, structTags: true, flat: newFlatDecoder(t)}
	return fc, nil
}

// formFingerprint identifies a form by everything that decides which
// answers it takes: its schema as sent, its type's name, and each field's
// name, position, type and tags (validate rules that have no schema
// keyword among them). An answer recorded under one fingerprint is taken
// without being checked again (Ask), so a form whose rules change is
// asked again.
func formFingerprint(t reflect.Type, schema []byte) [sha256.Size]byte {
	h := sha256.New()
	h.Write(schema)
	h.Write([]byte(t.String()))
	for _, f := range reflect.VisibleFields(t) {
		fmt.Fprintf(h, "\x00%s\x00%v\x00%s\x00%q", f.Name, f.Index, f.Type, f.Tag)
	}
	var d [sha256.Size]byte
	h.Sum(d[:0])
	return d
}

// formSchemaProperty is one property of a form schema, in the order its
// keywords read best.
type formSchemaProperty struct {
	Type        string          `json:"type,omitempty"`
	Title       string          `json:"title,omitempty"`
	Description string          `json:"description,omitempty"`
	Enum        []any           `json:"enum,omitempty"`
	OneOf       []titledValue   `json:"oneOf,omitempty"`
	AnyOf       []titledValue   `json:"anyOf,omitempty"`
	Items       *formSchemaItem `json:"items,omitempty"`
	MinLength   *int64          `json:"minLength,omitempty"`
	MaxLength   *int64          `json:"maxLength,omitempty"`
	Format      string          `json:"format,omitempty"`
	Minimum     *float64        `json:"minimum,omitempty"`
	Maximum     *float64        `json:"maximum,omitempty"`
	MinItems    *int64          `json:"minItems,omitempty"`
	MaxItems    *int64          `json:"maxItems,omitempty"`
	Default     json.RawMessage `json:"default,omitempty"`
}

type formSchemaItem = formSchemaProperty

type titledValue struct {
	Const any    `json:"const"`
	Title string `json:"title"`
}

// formFormats are the formats a form's string property may have.
var formFormats = map[string]bool{"email": true, "uri": true, "date": true, "date-time": true}

// formProperty renders the form property of a field: its schema, whether
// it is required, and its title.
func formProperty(f field, base *jsonschema.Schema, baseRequired bool) (*formSchemaProperty, bool, string, error) {
	tag := f.sf.Tag.Get("validate")
	a, err := analyze(f.sf.Type, parseChain(tag))
	if err != nil {
		return nil, false, "", fmt.Errorf("validate tag: %w", err)
	}
	ann, err := annotationOf(f.sf)
	if err != nil {
		return nil, false, "", err
	}
	p := formSchemaProperty{Title: ann.title, Description: base.Description}
	r := a.rules
	if r == nil || !f.mapped {
		r = &ruleSet{}
	}
	if err := formKeywords(&p, a, r, base, ann); err != nil {
		return nil, false, "", err
	}
	if ann.hasDefault {
		if p.Default, err = ann.defaultJSON(f.sf.Type, tag); err != nil {
			return nil, false, "", err
		}
	}
	if len(ann.titles) > 0 {
		if err := ann.checkTitles(a); err != nil {
			return nil, false, "", err
		}
	}
	required := baseRequired && !a.ptr || f.mapped && a.absentRefused
	return &p, required, ann.title, nil
}

// formKeywords sets the type and keywords of p, the property of a field
// analysed as a with rules r, by the field's kind. base is the schema
// generated for the field. A kind a form cannot hold is an error.
func formKeywords(p *formSchemaProperty, a *analysis, r *ruleSet, base *jsonschema.Schema, ann annotation) error {
	switch a.k {
	case kString:
		formString(p, r, ann)
	case kInt, kUint:
		formInteger(p, r, base)
	case kFloat, kFloat32:
		p.Type = "number"
		if a.k == kFloat {
			p.Minimum, p.Maximum = r.min, r.max
		}
	case kBool:
		p.Type = "boolean"
	case kSlice:
		return formList(p, a, r, ann)
	default:
		return errors.New("must be a string, number, integer, boolean or a list of choices (a form holds no objects)")
	}
	return nil
}

// formString renders a string property: its length, its format when a
// form may have it, or the values it may take (titled when the mcp tag
// gives titles), which replace the length.
func formString(p *formSchemaProperty, r *ruleSet, ann annotation) {
	p.Type = "string"
	if r.minSize != nil && *r.minSize > 0 {
		p.MinLength = r.minSize
	}
	if r.maxSize != nil && *r.maxSize >= 0 {
		p.MaxLength = r.maxSize
	}
	if formFormats[r.format] {
		p.Format = r.format
	}
	if r.hasAllowed {
		if len(ann.titles) > 0 {
			p.OneOf = ann.titled(r.allowed)
		} else {
			p.Enum = r.allowed
		}
		p.MinLength, p.MaxLength = nil, nil
	}
}

// formInteger renders an integer property: the range of its type (from
// base), narrowed by its rules, exclusive bounds made inclusive.
func formInteger(p *formSchemaProperty, r *ruleSet, base *jsonschema.Schema) {
	p.Type = "integer"
	p.Minimum, p.Maximum = base.Minimum, base.Maximum // the type's range
	if r.min != nil {
		tighterMin(&p.Minimum, *r.min)
	}
	if r.max != nil {
		tighterMax(&p.Maximum, *r.max)
	}
	if r.exMin != nil {
		tighterMin(&p.Minimum, math.Floor(*r.exMin)+1)
	}
	if r.exMax != nil {
		tighterMax(&p.Maximum, math.Ceil(*r.exMax)-1)
	}
}

// formList renders a multi-select: a slice of strings whose choices are
// listed by dive,oneof (titled when the mcp tag gives titles), and the
// number of choices. Any other slice is an error.
func formList(p *formSchemaProperty, a *analysis, r *ruleSet, ann annotation) error {
	if a.t.Elem().Kind() != reflect.String || a.items == nil || a.items.ptr || a.items.rules == nil || !a.items.rules.hasAllowed {
		return errors.New(`a list must be a multi-select: a slice of strings whose choices are listed by validate:"dive,oneof=..."`)
	}
	p.Type = "array"
	if len(ann.titles) > 0 {
		p.Items = &formSchemaItem{AnyOf: ann.titled(a.items.rules.allowed)}
	} else {
		p.Items = &formSchemaItem{Type: "string", Enum: a.items.rules.allowed}
	}
	if r.minSize != nil && *r.minSize > 0 {
		p.MinItems = r.minSize
	}
	if r.maxSize != nil && *r.maxSize >= 0 {
		p.MaxItems = r.maxSize
	}
	return nil
}

// titled pairs each of vals with its title from the mcp tag, or with the
// value as text when the tag gives none (the last title given wins).
func (a annotation) titled(vals []any) []titledValue {
	out := make([]titledValue, len(vals))
	for i, v := range vals {
		out[i] = titledValue{Const: v, Title: fmt.Sprint(v)}
		for _, vt := range a.titles {
			if vt.value == fmt.Sprint(v) {
				out[i].Title = vt.title
			}
		}
	}
	return out
}

// Schema returns the requested schema of the form. It must not be
// modified.
func (f *Form[F]) Schema() *mrtr.ElicitSchema { return f.fc.schema }

// Message returns the message the form is asked with.
func (f *Form[F]) Message() string { return f.message }

// Key returns the key the form is asked under.
func (f *Form[F]) Key() string { return f.key }

// WithMessage returns a copy of the form asked with message instead of
// the form's own, for a message that depends on the call. The copy is
// cheap to make for each call; f is not changed. With message "",
// WithMessage returns f.
func (f *Form[F]) WithMessage(message string) *Form[F] {
	if message == "" {
		return f
	}
	return f.with(f.key, message)
}

// WithKey returns a copy of the form asked under key, for a form asked
// once per item of a loop: f.WithKey(mrtr.Key("confirm", i)).
func (f *Form[F]) WithKey(key string) *Form[F] {
	if key == "" {
		return f
	}
	return f.with(key, f.message)
}

// WithMaxInvalid returns a copy of the form that Ask asks again at most n
// times after an answer that breaks its rules (DefaultMaxInvalid by
// default); 0 returns the *FormError at the first.
func (f *Form[F]) WithMaxInvalid(n int) *Form[F] {
	cp := *f
	if cp.maxInvalid = max(n, 0); cp.maxInvalid != f.maxInvalid {
		cp.prepared = nil
	}
	return &cp
}

// Ask asks the form in straight-line code. When the call has the user's
// answer, Ask returns it: mrtr.Accepted with the content decoded into F and
// checked against the form's schema and F's validate tags, or mrtr.Declined
// or mrtr.Cancelled with the zero F (values, not errors; the form is not
// asked again in this call). Otherwise it returns an error matching
// mrtr.ErrInputRequired, which the handler returns:
//
//	name, act, err := askName.Ask(ctx, req)
//	if err != nil {
//		return Greeting{}, err
//	}
//
// An accepted answer that breaks the form's rules is asked again, the
// message followed by what was wrong, up to WithMaxInvalid times (each
// one more round); then Ask returns the *FormError, which refuses the
// call with -32602 naming each problem. Without the elicitation
// capability on the request, Ask returns -32021 at once.
func (f *Form[F]) Ask(ctx context.Context, req *mrtr.Request, opts ...mrtr.AskOption) (F, mrtr.Action, error) {
	var zero, v F
	p := f.prepared
	if p == nil {
		p = f.prepare()
	}
	all := p.opts
	if len(opts) > 0 {
		all = append(slices.Clip(all), opts...)
	}
	r, err := mrtr.Elicit(ctx, req, f.key, p.q, all...)
	if err != nil {
		return zero, mrtr.Unanswered, err
	}
	if r.Action != mrtr.Accepted {
		return zero, r.Action, nil
	}
	// The form's check passed this answer, on this round or on the one it
	// came (a recorded answer, sealed in the call's state since under this
	// form's identity, which covers its rules: formFingerprint): decode it
	// without checking it again. With options of the caller's (a check or
	// an identity of its own), check it as the form does.
	if len(opts) == 0 {
		err = f.fc.decodeChecked(f.key, r, &v)
	} else {
		_, err = f.fc.decode(f.key, r, &v)
	}
	if err != nil {
		return zero, mrtr.Accepted, err
	}
	return v, mrtr.Accepted, nil
}

// Elicit returns the form's elicitation request, asked with the form's
// message, for handlers written against mrtr.Result.
func (f *Form[F]) Elicit() *mrtr.ElicitRequest {
	return &mrtr.ElicitRequest{Message: f.message, RequestedSchema: f.fc.schema}
}

// InputRequired returns the input-required result that asks the form
// under its key, for handlers written against mrtr.Result.
func (f *Form[F]) InputRequired() *mrtr.InputRequired { return mrtr.Ask(f.key, f.Elicit()) }

// Reask returns the input-required result that asks the form again, its
// message followed by what was wrong with the last answer (err, from
// Read), for handlers written against mrtr.Result.
func (f *Form[F]) Reask(err error) *mrtr.InputRequired {
	return mrtr.Ask(f.key, &mrtr.ElicitRequest{Message: f.reaskMessage(err), RequestedSchema: f.fc.schema})
}

// reaskMessage returns the form's message followed by what was wrong with
// an answer (err; nil for nothing), as Reask asks it.
func (f *Form[F]) reaskMessage(err error) string {
	if err == nil {
		return f.message
	}
	var fe *FormError
	hint := err.Error()
	if errors.As(err, &fe) {
		hint = fe.Hint()
	}
	return f.message + "\n\nYour last answer could not be used: " + hint
}

// Read returns the answer to the form in this request, for handlers
// written against mrtr.Result: the action, and for mrtr.Accepted the content
// decoded into F and checked as Ask checks it (a problem is a *FormError
// with mrtr.Accepted and the zero F). Without an answer under the form's key
// in this request, Read returns mrtr.Unanswered.
func (f *Form[F]) Read(req *mrtr.Request) (F, mrtr.Action, error) {
	if req == nil {
		var zero F
		return zero, mrtr.Unanswered, nil
	}
	r, ok := req.Responses.Elicitation(f.key)
	if !ok {
		var zero F
		return zero, mrtr.Unanswered, nil
	}
	return f.Decode(r)
}

// Decode is Read for an answer at hand.
func (f *Form[F]) Decode(r *mrtr.ElicitResult) (F, mrtr.Action, error) {
	var v F
	act, err := f.fc.decode(f.key, r, &v)
	if err != nil {
		var zero F
		return zero, act, err
	}
	return v, act, nil
}

// decodeChecked decodes into out the content of an accepted answer that
// decode has already checked.
func (fc *formCore) decodeChecked(key string, r *mrtr.ElicitResult, out any) error {
	raw := r.ContentJSON()
	if raw == nil {
		_, err := fc.decode(key, r, out) // not from the wire: the whole way
		return err
	}
	if err := fc.check.unmarshal(raw, out); err != nil {
		return &FormError{Key: key, Problems: []Problem{decodeProblem(err)}, titles: fc.titles}
	}
	return nil
}

func (fc *formCore) decode(key string, r *mrtr.ElicitResult, out any) (mrtr.Action, error) {
	if r == nil {
		return mrtr.Unanswered, nil
	}
	switch r.Action {
	case mrtr.Declined, mrtr.Cancelled:
		return r.Action, nil
	case mrtr.Accepted:
	default:
		return mrtr.Unanswered, nil
	}
	raw := r.ContentJSON()
	if raw == nil && r.Content != nil {
		// An answer the Server did not decode (built by a test, say):
		// ContentJSON holds only what came over the wire.
		b, err := json.Marshal(r.Content)
		if err != nil {
			return mrtr.Accepted, fmt.Errorf("typed: form %q: content does not encode: %w", key, err)
		}
		raw = b
	}
	if raw == nil {
		raw = json.RawMessage(`{}`)
	}
	probs := fc.check.checkJSON(raw)
	if len(probs) > 0 {
		// Wrong types or missing members: nothing more can be read.
		return mrtr.Accepted, &FormError{Key: key, Problems: probs, titles: fc.titles}
	}
	// The remaining keywords and the validate tags, all reported at once
	// so that the user can fix every field in one go; a field the
	// keywords refuse is not reported again by its tags.
	probs = fc.checkKeywords(raw)
	if err := fc.check.decode(raw, out); err != nil {
		var ae *ArgumentError
		if !errors.As(err, &ae) {
			return mrtr.Accepted, err
		}
		for _, p := range ae.Problems {
			if !slices.ContainsFunc(probs, func(q Problem) bool { return q.Field == p.Field }) {
				probs = append(probs, p)
			}
		}
	}
	if len(probs) > 0 {
		return mrtr.Accepted, &FormError{Key: key, Problems: probs, titles: fc.titles}
	}
	return mrtr.Accepted, nil
}

// checkKeywords checks the keywords of the form's properties that the
// one-pass walk does not: string lengths and enums. Formats come from
// validate tags, which check them after decoding.
func (fc *formCore) checkKeywords(raw json.RawMessage) []Problem {
	var content map[string]any
	if json.Unmarshal(raw, &content) != nil {
		return nil // the walk has refused it
	}
	var probs []Problem
	names := make([]string, 0, len(content))
	for name := range content {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		p := fc.props[name]
		if p == nil {
			continue
		}
		field := joinPath("", name)
		switch v := content[name].(type) {
		case string:
			n := int64(utf8.RuneCountInString(v))
			if p.MinLength != nil && n < *p.MinLength {
				probs = append(probs, Problem{Field: field, Rule: "minLength", Message: fmt.Sprintf("%s must be at least %s long", field, characters(*p.MinLength))})
			}
			if p.MaxLength != nil && n > *p.MaxLength {
				probs = append(probs, Problem{Field: field, Rule: "maxLength", Message: fmt.Sprintf("%s must be at most %s long", field, characters(*p.MaxLength))})
			}
			if pr, ok := p.choice(field, v); !ok {
				probs = append(probs, pr)
			}
		case []any:
			if p.Items == nil {
				continue
			}
			for i, e := range v {
				if s, ok := e.(string); ok {
					if pr, ok := p.Items.choice(field+"["+strconv.Itoa(i)+"]", s); !ok {
						probs = append(probs, pr)
					}
				}
			}
		}
	}
	return probs
}

func characters(n int64) string {
	if n == 1 {
		return "1 character"
	}
	return strconv.FormatInt(n, 10) + " characters"
}

// choice checks v against the property's enum or titled values.
func (p *formSchemaProperty) choice(field, v string) (Problem, bool) {
	var vals []string
	for _, e := range p.Enum {
		vals = append(vals, fmt.Sprint(e))
	}
	for _, t := range append(p.OneOf, p.AnyOf...) {
		vals = append(vals, fmt.Sprint(t.Const))
	}
	if len(vals) == 0 || slices.Contains(vals, v) {
		return Problem{}, true
	}
	return Problem{Field: field, Rule: "enum", Message: fmt.Sprintf("%s must be one of: %s", field, strings.Join(vals, ", "))}, false
}

// FormError is an accepted form answer that the form refused: each
// problem names the field by its JSON name. To errors.As it is also the
// *mrtr.Error a handler returns to refuse the call: -32602 "Invalid input
// response", with data {key, problems}.
type FormError struct {
	// Key is the key the form was asked under.
	Key string
	// Problems lists what is wrong, one problem per field and rule.
	Problems []Problem

	titles map[string]string
}

// Error lists the problems.
func (e *FormError) Error() string {
	return fmt.Sprintf("invalid answer to form %q: %s", e.Key, e.list())
}

func (e *FormError) list() string {
	msgs := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		msgs[i] = p.Message
	}
	return strings.Join(msgs, "; ")
}

// Unwrap returns the -32602 error that refuses the call.
func (e *FormError) Unwrap() error {
	return mrtr.NewError(mrtr.CodeInvalidParams, "Invalid input response "+strconv.Quote(e.Key)+": "+e.list(),
		map[string]any{"key": e.Key, "problems": e.Problems})
}

// Hint says what is wrong for the user who fills the form in: each
// problem without its rule, the field named by its title when it has one.
func (e *FormError) Hint() string {
	msgs := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		m := strings.TrimSuffix(p.Message, fmt.Sprintf(" (rule %q)", p.Rule))
		if t := e.titles[p.Field]; t != "" && strings.HasPrefix(m, p.Field+" ") {
			m = t + m[len(p.Field):]
		}
		msgs[i] = m
	}
	return strings.Join(msgs, "; ") + "."
}
