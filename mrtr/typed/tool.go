package typed

import (
	"context"
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/mrtrkit/mrtrkit/internal/wire"
	"github.com/mrtrkit/mrtrkit/mrtr"
)

// Func is a typed handler: it receives the call's input decoded into In
// (checked against the input schema and In's validate tags) and returns
// its output. It may ask the client for input in straight-line code
// (mrtr.Elicit, mrtr.Sample, mrtr.ListRoots, Form.Ask, model.Sample),
// returning the ask's error while an answer is missing: it then runs
// again from the top on the next round.
type Func[In, Out any] func(ctx context.Context, req *mrtr.Request, in In) (Out, error)

// Contenter is implemented by outputs that choose their own content
// blocks. Without it, a tool result's content is one text block holding
// the output's JSON, the same value as its structuredContent.
type Contenter interface {
	ToolContent() []mrtr.Content
}

// schemaOption carries schema generation options among a registration's
// mrtr.RegisterOptions; the embedded option does nothing.
type schemaOption struct {
	mrtr.RegisterOption
	o *jsonschema.ForOptions
}

// WithSchemaOptions sets the options used to generate the input and
// output schemas, for example TypeSchemas for types that need a
// hand-written schema. It is passed with the registration's other
// options; the Server ignores it.
func WithSchemaOptions(o *jsonschema.ForOptions) mrtr.RegisterOption {
	return schemaOption{RegisterOption: mrtr.RegisterOptions(), o: o}
}

// schemaOptions returns the schema options among opts, if any.
func schemaOptions(opts []mrtr.RegisterOption) *jsonschema.ForOptions {
	var o *jsonschema.ForOptions
	for _, opt := range opts {
		if so, ok := opt.(schemaOption); ok {
			o = so.o
		}
	}
	return o
}

// AddTool registers the tool t served by the typed function h, with the
// registration options opts (mrtr.RequireScopes, WithSchemaOptions...).
// The type arguments follow from h:
//
//	typed.AddTool(srv, mrtr.Tool{Name: "sum"}, func(ctx context.Context, req *mrtr.Request, in Sum) (Total, error) {...})
//
// See NewTool for what is generated and checked.
//
// The structured output h renders is checked against the output schema
// once, here (see NewTool), so AddTool turns the Server's own check of
// results off (mrtr.SkipOutputCheck), except when Out is
// *mrtr.CallToolResult: h builds that result itself.
func AddTool[In, Out any](srv *mrtr.Server, t mrtr.Tool, h Func[In, Out], opts ...mrtr.RegisterOption) error {
	tool, mh, err := NewTool(t, h, opts...)
	if err != nil {
		return err
	}
	reg := opts
	if th, ok := mh.(*handler[In, Out]); ok && !th.passthrough {
		reg = append(slices.Clip(reg), mrtr.SkipOutputCheck())
	}
	return srv.AddTool(tool, mh, reg...)
}

var callToolResultType = reflect.TypeFor[*mrtr.CallToolResult]()

// NewTool completes t for h and returns it with the mrtr.Handler that
// serves it; AddTool registers the pair.
//
// Schemas: unless t.InputSchema is set, it is generated from In (which
// must be a struct or a map, so that the root type is "object") by
// InputSchemaFor: property descriptions from `jsonschema:"..."` tags,
// titles and defaults from `mcp` tags, and the rules of `validate` tags
// that have a JSON Schema form as keywords (see "Rules and schemas" in
// the package documentation). Unless
// t.OutputSchema is set, it is generated from Out, except when Out is
// *mrtr.CallToolResult: then h builds the whole result itself and no
// output schema is declared.
//
// Arguments: before h runs they are checked against the input schema and
// decoded into In, then In's `validate` tags are checked (see Binder). A
// struct In generates additionalProperties false, so unknown arguments are
// refused; a hand-written schema decides for itself. Any problem ends the
// call with an isError result listing each problem by the argument's JSON
// path and the rule it broke, such as "audience must be a string", which
// the model can act on.
//
// Output: the output becomes structuredContent. A hand-written output
// schema is enforced, and so is a generated one when Out (or a type
// inside it) encodes itself (a MarshalJSON or MarshalText method, an
// interface field), since only then can the JSON differ from the schema
// generated for the type; a mismatch is a bug in the server and ends the
// call with an internal error (-32603) whose detail is logged. The content
// is one text block holding the same JSON, for clients that do not read
// structuredContent, unless Out implements Contenter.
//
// Errors from h: a *ToolError (see Errorf) becomes an isError result with
// its message; an *mrtr.Error goes to the client as is; anything else is
// an internal error.
func NewTool[In, Out any](t mrtr.Tool, h Func[In, Out], opts ...mrtr.RegisterOption) (mrtr.Tool, mrtr.Handler, error) {
	if h == nil {
		return t, nil, fmt.Errorf("typed: tool %q: nil handler", t.Name)
	}
	c := struct{ forOpts *jsonschema.ForOptions }{schemaOptions(opts)}
	th := &handler[In, Out]{name: t.Name, h: h}
	var bopts BindOptions
	if len(t.InputSchema) > 0 && string(t.InputSchema) != "null" {
		s, err := parseSchema(t.InputSchema)
		if err != nil {
			return t, nil, fmt.Errorf("typed: tool %q: inputSchema: %w", t.Name, err)
		}
		bopts.Schema = s
	} else {
		_, raw, err := objectSchema[In](c.forOpts)
		if err != nil {
			return t, nil, fmt.Errorf("typed: tool %q: %w", t.Name, err)
		}
		t.InputSchema = raw
		bopts.ForOptions = c.forOpts
	}
	b, err := NewBinder[In](&bopts)
	if err != nil {
		return t, nil, fmt.Errorf("typed: tool %q: %w", t.Name, err)
	}
	th.binder = b

	th.passthrough = reflect.TypeFor[Out]() == callToolResultType
	var outSchema *jsonschema.Schema
	handWritten := false
	switch {
	case len(t.OutputSchema) > 0 && string(t.OutputSchema) != "null":
		handWritten = true
		if outSchema, err = parseSchema(t.OutputSchema); err != nil {
			return t, nil, fmt.Errorf("typed: tool %q: outputSchema: %w", t.Name, err)
		}
	case !th.passthrough:
		if outSchema, err = SchemaFor[Out](c.forOpts); err != nil {
			return t, nil, fmt.Errorf("typed: tool %q: %w", t.Name, err)
		}
		if t.OutputSchema, err = json.Marshal(outSchema); err != nil {
			return t, nil, fmt.Errorf("typed: tool %q: outputSchema: %w", t.Name, err)
		}
	}
	if outSchema != nil && (handWritten || encodesItself(reflect.TypeFor[Out]())) {
		if th.out, err = outSchema.Resolve(nil); err != nil {
			return t, nil, fmt.Errorf("typed: tool %q: outputSchema: %w", t.Name, err)
		}
	}
	return t, th, nil
}

// Adapt returns an mrtr.Handler that serves h for tools/call, prompts/get
// or resources/read. In is bound from the tool arguments, the prompt
// arguments or the resource template's variables, each taken as a JSON
// object and checked as NewTool describes; a problem is an isError result
// for a tool and -32602 naming the fields otherwise. An output that is
// itself a result (*mrtr.GetPromptResult, *mrtr.ReadResourceResult,
// *mrtr.CallToolResult) is returned as is; any other output answers
// tools/call as structured content. For tools, prefer NewTool, which also
// declares the schemas.
func Adapt[In, Out any](h Func[In, Out], opts ...mrtr.RegisterOption) (mrtr.Handler, error) {
	if h == nil {
		return nil, errors.New("typed: nil handler")
	}
	c := struct{ forOpts *jsonschema.ForOptions }{schemaOptions(opts)}
	if _, _, err := objectSchema[In](c.forOpts); err != nil {
		return nil, err
	}
	b, err := NewBinder[In](&BindOptions{ForOptions: c.forOpts})
	if err != nil {
		return nil, err
	}
	return &handler[In, Out]{h: h, binder: b, passthrough: reflect.TypeFor[Out]() == callToolResultType}, nil
}

// handler is the mrtr.Handler built around a typed Handler.
type handler[In, Out any] struct {
	name        string
	h           Func[In, Out]
	binder      *Binder[In]
	out         *jsonschema.Resolved // nil: structured output is not checked
	passthrough bool                 // Out is *mrtr.CallToolResult
}

// Handle binds the input, runs the typed handler and renders its outcome.
func (th *handler[In, Out]) Handle(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
	raw := req.Arguments
	if len(raw) == 0 {
		raw = json.RawMessage(`{}`)
	}
	// The arguments come from the Server, which has checked that they are
	// one valid JSON object.
	in, err := th.binder.bindValid(raw)
	if err != nil {
		var ae *ArgumentError
		if !errors.As(err, &ae) {
			return nil, err
		}
		if req.Method == wire.MethodToolsCall {
			return mrtr.ErrorResult(ae.Text()), nil
		}
		return nil, mrtr.NewError(mrtr.CodeInvalidParams, "Invalid arguments: "+ae.list(), map[string]any{"problems": ae.Problems})
	}
	out, err := th.h(ctx, req, in)
	if err != nil {
		var te *ToolError
		if errors.As(err, &te) {
			if req.Method == wire.MethodToolsCall {
				return mrtr.ErrorResult(te.Message), nil
			}
			// Not wrapped: the chain may hold an *mrtr.Error that must not
			// reach the client for a failure the handler meant for a tool.
			return nil, fmt.Errorf("typed: %s %s failed: %s", req.Method, req.Name+req.URI, te.Message)
		}
		return nil, err
	}
	return th.render(req.Method, out)
}

func isNil(v any) bool {
	if v == nil {
		return true
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Interface, reflect.Func, reflect.Chan:
		return rv.IsNil()
	}
	return false
}

// render turns the output into the method's result.
func (th *handler[In, Out]) render(method string, out Out) (mrtr.Result, error) {
	if r, ok := any(out).(mrtr.Result); ok {
		if isNil(r) {
			return nil, fmt.Errorf("typed: %s %q: handler returned a nil %T", method, th.name, out)
		}
		if ctr, ok := r.(*mrtr.CallToolResult); ok && th.out != nil && ctr.StructuredContent != nil && !ctr.IsError {
			b, err := json.Marshal(ctr.StructuredContent)
			if err != nil {
				return nil, fmt.Errorf("typed: tool %q: encode structured content: %w", th.name, err)
			}
			if err := th.checkOutput(b); err != nil {
				return nil, err
			}
		}
		return r, nil
	}
	if method != wire.MethodToolsCall {
		return nil, fmt.Errorf("typed: output %T cannot answer %s; return *mrtr.GetPromptResult or *mrtr.ReadResourceResult", out, method)
	}
	b, err := json.Marshal(out)
	if err != nil {
		return nil, fmt.Errorf("typed: tool %q: encode output: %w", th.name, err)
	}
	if th.out != nil {
		if err := th.checkOutput(b); err != nil {
			return nil, err
		}
	}
	res := &mrtr.CallToolResult{StructuredContent: json.RawMessage(b)}
	if c, ok := any(out).(Contenter); ok {
		res.Content = c.ToolContent()
	} else {
		res.Content = []mrtr.Content{mrtr.Text(string(b))}
	}
	return res, nil
}

// checkOutput validates encoded structured content against the output
// schema. A mismatch is the server's bug: the error is not an *mrtr.Error,
// so the server logs it and answers -32603.
func (th *handler[In, Out]) checkOutput(b []byte) error {
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return fmt.Errorf("typed: tool %q: structured content is not JSON: %w", th.name, err)
	}
	if err := th.out.Validate(v); err != nil {
		return fmt.Errorf("typed: tool %q: structured content does not match the outputSchema: %w", th.name, err)
	}
	return nil
}

// ToolError is a failure the model can act on, such as a missing record
// or a request the tool cannot fulfil. Returned (or wrapped) by a handler
// of a tool, it ends the call with an isError result whose text is
// Message; for prompts and resources it is an internal error.
type ToolError struct {
	// Message is the text of the isError result, for the model to read.
	Message string
	err     error
}

// Errorf returns a *ToolError with a formatted message; %w wraps as in
// fmt.Errorf.
func Errorf(format string, args ...any) error {
	err := fmt.Errorf(format, args...)
	return &ToolError{Message: err.Error(), err: err}
}

// Error returns the message.
func (e *ToolError) Error() string { return e.Message }

// Unwrap returns the errors wrapped by Errorf's %w verbs.
func (e *ToolError) Unwrap() []error {
	switch u := e.err.(type) {
	case interface{ Unwrap() error }:
		if w := u.Unwrap(); w != nil {
			return []error{w}
		}
	case interface{ Unwrap() []error }:
		return u.Unwrap()
	}
	return nil
}

// encodesItself reports whether values of t may encode to JSON that the
// schema SchemaFor generates from t does not describe: t or a type it
// holds has a MarshalJSON or MarshalText method, holds an interface, has
// a field with the ",string" option, or embeds a pointer (whose nil value
// leaves its fields out). Otherwise the schema describes every encoding,
// which TestPlainOutputConformsToItsSchema checks on many types.
func encodesItself(t reflect.Type) bool {
	return encodesItselfSeen(t, map[reflect.Type]bool{})
}

var (
	jsonMarshaler = reflect.TypeFor[json.Marshaler]()
	textMarshaler = reflect.TypeFor[encoding.TextMarshaler]()
)

// marshalsItself reports whether t, or a pointer to it, has a MarshalJSON
// or MarshalText method.
func marshalsItself(t reflect.Type) bool {
	pt := reflect.PointerTo(t)
	return t.Implements(jsonMarshaler) || t.Implements(textMarshaler) || pt.Implements(jsonMarshaler) || pt.Implements(textMarshaler)
}

func encodesItselfSeen(t reflect.Type, seen map[reflect.Type]bool) bool {
	if seen[t] {
		return false
	}
	seen[t] = true
	if marshalsItself(t) {
		return true
	}
	switch t.Kind() {
	case reflect.Interface:
		return true
	case reflect.Pointer, reflect.Slice, reflect.Array:
		return encodesItselfSeen(t.Elem(), seen)
	case reflect.Map:
		return encodesItselfSeen(t.Key(), seen) || encodesItselfSeen(t.Elem(), seen)
	case reflect.Struct:
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			if f.Anonymous && f.Type.Kind() == reflect.Pointer {
				return true
			}
			if _, opts, _ := strings.Cut(f.Tag.Get("json"), ","); slices.Contains(strings.Split(opts, ","), "string") {
				return true
			}
			if (f.IsExported() || f.Anonymous) && encodesItselfSeen(f.Type, seen) {
				return true
			}
		}
	}
	return false
}
