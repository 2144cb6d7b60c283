package mrtr

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
	"unsafe"

	"github.com/go-playground/validator/v10"
	"github.com/mrtrkit/mrtrkit/internal/strictjson"
	"github.com/mrtrkit/mrtrkit/internal/wire"
)

// InputRequest is one request a handler embeds in an input-required
// result: a *SamplingRequest, an *ElicitRequest or a *RootsRequest.
type InputRequest interface {
	inputKind() kind
}

// kind is the kind of an input request. The sealed state records it for
// every key asked (one byte each), so that the answer is decoded as what
// was asked, whatever shape the client sends.
type kind byte

const (
	kindSampling   kind = 1
	kindElicitForm kind = 2
	kindElicitURL  kind = 3
	kindRoots      kind = 4
)

// String names the kind as the log shows it.
func (k kind) String() string {
	switch k {
	case kindSampling:
		return "sampling"
	case kindElicitForm:
		return "form elicitation"
	case kindElicitURL:
		return "url elicitation"
	case kindRoots:
		return "roots"
	}
	return "kind " + strconv.Itoa(int(k))
}

// validate is shared: a validator caches struct metadata and is safe for
// concurrent use.
var validate = validator.New(validator.WithRequiredStructEnabled())

// SamplingRequest asks the client's model for a completion
// (sampling/createMessage).
type SamplingRequest struct {
	// Messages is the conversation to complete: at least one message.
	Messages []SamplingMessage `json:"messages" validate:"required,min=1,dive"`
	// ModelPreferences guide the client's choice of model
	// (modelPreferences); nil leaves the choice to the client.
	ModelPreferences *ModelPreferences `json:"modelPreferences,omitempty"`
	// SystemPrompt is the system prompt to use (systemPrompt).
	SystemPrompt string `json:"systemPrompt,omitempty"`
	// IncludeContext asks the client to add context from MCP servers
	// (includeContext): "none", "thisServer" or "allServers". Values
	// other than "none" are deprecated and need sampling.context.
	IncludeContext string `json:"includeContext,omitempty" validate:"omitempty,oneof=none thisServer allServers"`
	// Temperature is the sampling temperature; nil leaves it to the client.
	Temperature *float64 `json:"temperature,omitempty"`
	// MaxTokens is the most tokens the model may produce (maxTokens); it
	// must be positive.
	MaxTokens int `json:"maxTokens" validate:"gt=0"`
	// StopSequences are strings that end the generation (stopSequences).
	StopSequences []string `json:"stopSequences,omitempty"`
	// Metadata is provider-specific data for the client to pass on.
	Metadata Object `json:"metadata,omitempty"`
	// Tools are tools the model may call while sampling; they need the
	// sampling.tools capability.
	Tools []Tool `json:"tools,omitempty"`
	// ToolChoice says whether the model may, must or must not call Tools
	// (toolChoice); it needs the sampling.tools capability.
	ToolChoice *ToolChoice `json:"toolChoice,omitempty"`
}

// ModelPreferences are the server's preferences for model selection.
// Priorities are in [0,1].
type ModelPreferences struct {
	// Hints name preferred models or model families, most preferred first.
	Hints []ModelHint `json:"hints,omitempty"`
	// CostPriority is how much a low cost matters (costPriority).
	CostPriority *float64 `json:"costPriority,omitempty" validate:"omitempty,gte=0,lte=1"`
	// SpeedPriority is how much a fast answer matters (speedPriority).
	SpeedPriority *float64 `json:"speedPriority,omitempty" validate:"omitempty,gte=0,lte=1"`
	// IntelligencePriority is how much a capable model matters
	// (intelligencePriority).
	IntelligencePriority *float64 `json:"intelligencePriority,omitempty" validate:"omitempty,gte=0,lte=1"`
}

// ModelHint names a model or model family.
type ModelHint struct {
	// Name is a model name or part of one, such as "sonnet".
	Name string `json:"name,omitempty"`
}

// ToolChoice controls tool use in a sampling request.
type ToolChoice struct {
	// Mode is "auto" (the default), "required" or "none".
	Mode string `json:"mode,omitempty" validate:"omitempty,oneof=auto required none"`
}

// SamplingMessage is one message of a sampling conversation. Content holds
// one block or several; it is rendered as a single object when it has one.
type SamplingMessage struct {
	// Role is who speaks the message: user or assistant.
	Role Role `json:"role" validate:"oneof=user assistant"`
	// Content is the message's blocks (content): at least one.
	Content []SamplingContent `json:"-" validate:"min=1,dive"`
	// Meta is the message's _meta, passed through as is.
	Meta Object `json:"_meta,omitempty"`
}

// SamplingContent is one block of a sampling message: text, image, audio,
// tool_use or tool_result, told apart by Type.
type SamplingContent struct {
	// Type is the block's kind: text, image, audio, tool_use or
	// tool_result.
	Type string `json:"type" validate:"oneof=text image audio tool_use tool_result"`
	// Text is the text of a text block.
	Text string `json:"text,omitempty"`
	// Data is the base64-encoded media of an image or audio block.
	Data string `json:"data,omitempty"`
	// MIMEType is the media type of an image or audio block (mimeType).
	MIMEType string `json:"mimeType,omitempty"`
	// ID identifies a tool_use block; its tool_result names it in ToolUseID.
	ID string `json:"id,omitempty"`
	// Name is the tool a tool_use block calls.
	Name string `json:"name,omitempty"`
	// Input is the arguments of a tool_use block, a JSON object.
	Input json.RawMessage `json:"input,omitempty"`
	// ToolUseID is the ID of the tool_use a tool_result block answers
	// (toolUseId).
	ToolUseID string `json:"toolUseId,omitempty"`
	// Content is the content blocks of a tool_result block, kept verbatim.
	Content []json.RawMessage `json:"content,omitempty"`
	// StructuredContent is the structured output of a tool_result block
	// (structuredContent).
	StructuredContent json.RawMessage `json:"structuredContent,omitempty"`
	// IsError marks a tool_result block that reports a failed call
	// (isError).
	IsError bool `json:"isError,omitempty"`

	// Annotations are optional hints about the block.
	Annotations *Annotations `json:"annotations,omitempty"`
	// Meta is the block's _meta, passed through as is.
	Meta Object `json:"_meta,omitempty"`
}

// UserText returns a user message with one text block.
func UserText(s string) SamplingMessage {
	return SamplingMessage{Role: RoleUser, Content: []SamplingContent{{Type: "text", Text: s}}}
}

type samplingMessageWire struct {
	Role    Role            `json:"role"`
	Content json.RawMessage `json:"content"`
	Meta    Object          `json:"_meta,omitempty"`
}

// MarshalJSON renders Content as one object or an array.
func (m SamplingMessage) MarshalJSON() ([]byte, error) {
	c, err := marshalBlocks(m.Content)
	if err != nil {
		return nil, err
	}
	return json.Marshal(samplingMessageWire{Role: m.Role, Content: c, Meta: m.Meta})
}

// UnmarshalJSON accepts Content as one object or an array.
func (m *SamplingMessage) UnmarshalJSON(b []byte) error {
	var w samplingMessageWire
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	blocks, err := unmarshalBlocks(w.Content)
	if err != nil {
		return err
	}
	*m = SamplingMessage{Role: w.Role, Content: blocks, Meta: w.Meta}
	return nil
}

func marshalBlocks(c []SamplingContent) (json.RawMessage, error) {
	if len(c) == 1 {
		return json.Marshal(c[0])
	}
	if c == nil {
		c = []SamplingContent{}
	}
	return json.Marshal(c)
}

func unmarshalBlocks(raw json.RawMessage) ([]SamplingContent, error) {
	if isAbsent(raw) {
		return nil, nil
	}
	if raw[0] == '[' {
		var cs []SamplingContent
		err := json.Unmarshal(raw, &cs)
		return cs, err
	}
	var c SamplingContent
	if err := json.Unmarshal(raw, &c); err != nil {
		return nil, err
	}
	return []SamplingContent{c}, nil
}

// ElicitRequest asks the user for input (elicitation/create). In form mode
// (Mode "" or "form") Message and RequestedSchema are required; in url mode
// Message and URL are.
type ElicitRequest struct {
	// Mode is "form" or "url"; "" means form and is sent as "form".
	Mode string `json:"mode,omitempty" validate:"omitempty,oneof=form url"`
	// Message tells the user what is asked and why.
	Message string `json:"message" validate:"required"`
	// RequestedSchema is the form the user fills in (requestedSchema);
	// form mode only.
	RequestedSchema *ElicitSchema `json:"requestedSchema,omitempty" validate:"required_unless=Mode url,excluded_if=Mode url"`
	// URL is the page the user is asked to open; url mode only.
	URL string `json:"url,omitempty" validate:"required_if=Mode url,excluded_unless=Mode url,omitempty,url"`
}

// ElicitSchema is the flat object schema of a form elicitation. Each
// property is a primitive schema (string, number, integer, boolean or an
// enum), kept verbatim.
type ElicitSchema struct {
	// Schema is the URI of the JSON Schema dialect ($schema), if given.
	Schema string `json:"$schema,omitempty"`
	// Type is always "object".
	Type string `json:"type" validate:"eq=object"`
	// Properties are the form's fields by name, each a primitive schema.
	Properties map[string]json.RawMessage `json:"properties" validate:"required"`
	// Required lists the fields the user must fill in.
	Required []string `json:"required,omitempty"`
}

// RootsRequest asks for the client's roots (roots/list).
type RootsRequest struct{}

func (*SamplingRequest) inputKind() kind { return kindSampling }
func (*RootsRequest) inputKind() kind    { return kindRoots }
func (r *ElicitRequest) inputKind() kind {
	if r.Mode == "url" {
		return kindElicitURL
	}
	return kindElicitForm
}

// SamplingResult is the client's answer to a SamplingRequest (or the
// answer of a model the server calls itself). Content is one block or
// several; it is rendered as a single object when it has one.
type SamplingResult struct {
	// Role is who speaks the answer, normally assistant.
	Role Role `json:"role" validate:"oneof=user assistant"`
	// Content is the answer's blocks (content): at least one.
	Content []SamplingContent `json:"-" validate:"min=1,dive"`
	// Model names the model that produced the answer.
	Model string `json:"model" validate:"required"`
	// StopReason is why the generation ended (stopReason): "endTurn",
	// "stopSequence", "maxTokens", "toolUse" or another value.
	StopReason string `json:"stopReason,omitempty"`
	// Meta is the answer's _meta, passed through as is.
	Meta Object `json:"_meta,omitempty"`
}

type samplingResultWire struct {
	Role       Role            `json:"role"`
	Content    json.RawMessage `json:"content"`
	Model      string          `json:"model"`
	StopReason string          `json:"stopReason,omitempty"`
	Meta       Object          `json:"_meta,omitempty"`
}

// MarshalJSON renders Content as one object or an array.
func (r SamplingResult) MarshalJSON() ([]byte, error) {
	c, err := marshalBlocks(r.Content)
	if err != nil {
		return nil, err
	}
	return json.Marshal(samplingResultWire{Role: r.Role, Content: c, Model: r.Model, StopReason: r.StopReason, Meta: r.Meta})
}

// UnmarshalJSON accepts content as one object or an array.
func (r *SamplingResult) UnmarshalJSON(b []byte) error {
	var w samplingResultWire
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	blocks, err := unmarshalBlocks(w.Content)
	if err != nil {
		return err
	}
	*r = SamplingResult{Role: w.Role, Content: blocks, Model: w.Model, StopReason: w.StopReason, Meta: w.Meta}
	return nil
}

// Validate checks what every sampling answer must hold: a role (user or
// assistant), at least one well-formed content block (media as canonical
// base64 with a MIME type of its kind), and the model that produced it.
func (r *SamplingResult) Validate() error {
	if r == nil {
		return errors.New("no sampling result")
	}
	if err := validate.Struct(r); err != nil {
		return errors.New("a sampling answer needs role (user or assistant), content and model")
	}
	return checkBlocks(r.Content)
}

// Text joins the text blocks of the answer.
func (r *SamplingResult) Text() string {
	var s string
	for _, c := range r.Content {
		if c.Type == "text" {
			s += c.Text
		}
	}
	return s
}

// Action is what the user did with an elicitation: the action of its
// answer, or Unanswered.
type Action string

// The actions of an elicitation answer.
const (
	// Unanswered means there is no answer yet.
	Unanswered Action = ""
	// Accepted means the user submitted the form (or, in url mode,
	// agreed to open the URL).
	Accepted Action = "accept"
	// Declined means the user explicitly refused to give what was asked.
	// Do not ask again in this call: complete it without the answer, or
	// end it saying why it cannot go on.
	Declined Action = "decline"
	// Cancelled means the user dismissed the question without choosing.
	// End the call (or go on without the answer); asking again at once
	// would put the same question back in front of a user who just
	// closed it.
	Cancelled Action = "cancel"
)

// ElicitResult is the user's answer to an ElicitRequest. Content is set
// only when Action is Accepted in form mode.
type ElicitResult struct {
	// Action is the user's choice: Accepted, Declined or Cancelled.
	Action Action `json:"action" validate:"oneof=accept decline cancel"`
	// Content is the submitted form, by field name.
	Content map[string]any `json:"content,omitempty"`

	raw json.RawMessage // Content as the client sent it
}

// ContentJSON returns the submitted form as the client sent it (one JSON
// object, checked as Content is), or nil when there is no content. Decode
// it into a struct to read the form typed, without a detour through
// Content.
func (r *ElicitResult) ContentJSON() json.RawMessage { return r.raw }

// Accepted reports whether the user accepted.
func (r *ElicitResult) Accepted() bool { return r.Action == Accepted }

// RootsResult is the client's answer to a RootsRequest.
type RootsResult struct {
	// Roots are the client's roots.
	Roots []Root `json:"roots" validate:"required,dive"`
}

// Root is a directory or file the client exposes; URI is a file:// URI.
type Root struct {
	// URI locates the root; it starts with file://.
	URI string `json:"uri" validate:"required,startswith=file://"`
	// Name is the root's display name.
	Name string `json:"name,omitempty"`
	// Meta is the root's _meta, passed through as is.
	Meta Object `json:"_meta,omitempty"`
}

// inputRequestWire renders an embedded request as {method, params}.
type inputRequestWire struct {
	Method string `json:"method"`
	Params any    `json:"params"`
}

func wireInputRequest(r InputRequest) inputRequestWire {
	switch v := r.(type) {
	case *SamplingRequest:
		return inputRequestWire{Method: wire.MethodCreateMessage, Params: v}
	case *ElicitRequest:
		if v.Mode == "" {
			cp := *v
			cp.Mode = "form"
			return inputRequestWire{Method: wire.MethodElicit, Params: &cp}
		}
		return inputRequestWire{Method: wire.MethodElicit, Params: v}
	default:
		return inputRequestWire{Method: wire.MethodListRoots, Params: struct{}{}}
	}
}

// validateInputRequest checks what a handler embeds; a failure is a bug
// in the handler.
func validateInputRequest(r InputRequest) error {
	switch v := r.(type) {
	case *SamplingRequest:
		if v == nil {
			return errors.New("nil sampling request")
		}
		if err := validate.Struct(v); err != nil {
			return err
		}
		for i, m := range v.Messages {
			if err := checkBlocks(m.Content); err != nil {
				return fmt.Errorf("messages[%d]: %w", i, err)
			}
		}
		for _, t := range v.Tools {
			if !toolNameRE.MatchString(t.Name) || isAbsent(t.InputSchema) {
				return fmt.Errorf("sampling tool %q needs a valid name and an inputSchema", t.Name)
			}
		}
	case *ElicitRequest:
		if v == nil {
			return errors.New("nil elicitation request")
		}
		if v.Message == "" || (v.Mode != "" && v.Mode != "form" && v.Mode != "url") {
			return errors.New("elicitation needs a message and mode form or url")
		}
		switch v.Mode {
		case "", "form":
			if v.RequestedSchema == nil || v.URL != "" {
				return errors.New("form elicitation needs requestedSchema and no url")
			}
			if v.RequestedSchema.Type != "object" || v.RequestedSchema.Properties == nil {
				return errors.New("requestedSchema must be an object schema with properties")
			}
			for name, p := range v.RequestedSchema.Properties {
				if err := checkPrimitiveSchema(p); err != nil {
					return fmt.Errorf("requestedSchema property %q: %w", name, err)
				}
			}
		case "url":
			if v.RequestedSchema != nil || v.URL == "" {
				return errors.New("url elicitation needs a url and no requestedSchema")
			}
			if err := validate.Var(v.URL, "url"); err != nil {
				return errors.New("url elicitation: url is not a URL")
			}
		}
	case *RootsRequest:
		if v == nil {
			return errors.New("nil roots request")
		}
	default:
		return fmt.Errorf("unknown input request type %T", r)
	}
	return nil
}

// checkPrimitiveSchema accepts the flat schemas form elicitation allows.
func checkPrimitiveSchema(raw json.RawMessage) error {
	if primitiveType(raw) {
		return nil
	}
	var p struct {
		Type  string          `json:"type"`
		Enum  json.RawMessage `json:"enum"`
		OneOf json.RawMessage `json:"oneOf"`
		Items *struct {
			Type  string          `json:"type"`
			Enum  json.RawMessage `json:"enum"`
			AnyOf json.RawMessage `json:"anyOf"`
		} `json:"items"`
	}
	if json.Unmarshal(raw, &p) != nil {
		return errors.New("must be an object")
	}
	switch p.Type {
	case "string", "number", "integer", "boolean":
		return nil
	case "array":
		if p.Items != nil && (p.Items.Enum != nil || p.Items.AnyOf != nil) {
			return nil
		}
		return errors.New("array properties must be multi-select enums")
	}
	return fmt.Errorf("type %q is not a primitive schema type", p.Type)
}

// primitiveTypes are the types of a flat schema that need nothing else.
var primitiveTypes = []string{"string", "number", "integer", "boolean"}

// primitiveType reports, in one pass, whether raw is a valid JSON object
// whose "type" is one of primitiveTypes and that has no member
// encoding/json would read as enum, oneOf or items (matching names
// without regard to case): what checkPrimitiveSchema accepts without
// looking further. Anything else it leaves to checkPrimitiveSchema's
// decoding.
func primitiveType(raw json.RawMessage) bool {
	if !strictjson.Valid(raw) {
		return false
	}
	typed, ok := false, true
	err := wire.EachMemberBytes(raw, func(name []byte, v json.RawMessage) error {
		switch string(name) {
		case "type":
			t, isString := wire.Interned(v, primitiveTypes)
			typed = isString && v[0] == '"' && slices.Contains(primitiveTypes, t)
			return nil
		}
		for _, c := range name {
			if c >= utf8.RuneSelf {
				ok = false // a name encoding/json might fold onto one it reads
				return nil
			}
		}
		for _, n := range []string{"type", "enum", "oneOf", "items"} {
			if strings.EqualFold(string(name), n) {
				ok = false
			}
		}
		return nil
	})
	return err == nil && ok && typed
}

// checkBlocks checks sampling content: media must be canonical base64 with
// a MIME type of its kind.
func checkBlocks(blocks []SamplingContent) error {
	for i, c := range blocks {
		if err := validate.Struct(c); err != nil {
			return fmt.Errorf("content[%d]: %w", i, err)
		}
		switch c.Type {
		case "image", "audio":
			if !strings.HasPrefix(c.MIMEType, c.Type+"/") {
				return fmt.Errorf("content[%d]: %s content needs a %s/* mimeType, not %s", i, c.Type, c.Type, quoted(c.MIMEType))
			}
			if !canonicalBase64(c.Data) {
				return fmt.Errorf("content[%d]: data is not canonical base64", i)
			}
		case "tool_use":
			if c.ID == "" || c.Name == "" || isAbsent(c.Input) || c.Input[0] != '{' {
				return fmt.Errorf("content[%d]: tool_use needs id, name and an input object", i)
			}
		case "tool_result":
			if c.ToolUseID == "" {
				return fmt.Errorf("content[%d]: tool_result needs toolUseId", i)
			}
		}
	}
	return nil
}

// canonicalBase64 reports whether s is padded standard base64 that
// re-encodes to itself.
func canonicalBase64(s string) bool {
	if s == "" {
		return false
	}
	b, err := base64.StdEncoding.Strict().DecodeString(s)
	return err == nil && base64.StdEncoding.EncodeToString(b) == s
}

// decodeAnswer decodes an untrusted answer by the kind it was asked as.
func decodeAnswer(k kind, raw json.RawMessage) (any, error) {
	if raw[0] != '{' {
		return nil, errors.New("must be an object")
	}
	dec := func(v any) error {
		if err := json.Unmarshal(raw, v); err != nil {
			return fmt.Errorf("malformed: %v", err)
		}
		return nil
	}
	switch k {
	case kindSampling:
		var r SamplingResult
		if err := dec(&r); err != nil {
			return nil, err
		}
		if err := r.Validate(); err != nil {
			return nil, err
		}
		return &r, nil
	case kindElicitForm, kindElicitURL:
		action, content, fast := readElicitAnswer(raw)
		if !fast {
			var w struct {
				Action  Action          `json:"action"`
				Content json.RawMessage `json:"content"`
			}
			if err := dec(&w); err != nil {
				return nil, err
			}
			action, content = w.Action, w.Content
		}
		r := ElicitResult{Action: action}
		if r.Action != "accept" && r.Action != "decline" && r.Action != "cancel" {
			return nil, errors.New("an elicitation answer needs action accept, decline or cancel")
		}
		if r.Action != "accept" || k == kindElicitURL || isAbsent(content) {
			return &r, nil
		}
		if content[0] != '{' {
			return nil, errors.New("content must be an object")
		}
		if err := strictjson.Check(content, "content", false); err != nil {
			return nil, err
		}
		if r.Content, fast = readFlatContent(content, false); !fast {
			if err := json.Unmarshal(content, &r.Content); err != nil {
				return nil, fmt.Errorf("malformed: %v", err)
			}
		}
		for name, v := range r.Content {
			if !elicitValue(v) {
				return nil, fmt.Errorf("content %s must be a string, number, boolean or array of strings", quoted(name))
			}
		}
		r.raw = content
		return &r, nil
	case kindRoots:
		var r RootsResult
		if err := dec(&r); err != nil {
			return nil, err
		}
		if err := validate.Struct(&r); err != nil {
			return nil, errors.New("a roots answer needs roots, each with a file:// uri")
		}
		return &r, nil
	}
	return nil, fmt.Errorf("unknown kind %d", k)
}

// actionNames are the actions an elicitation answer has, read without a
// copy.
var actionNames = []string{string(Accepted), string(Declined), string(Cancelled)}

// readElicitAnswer reads the action and content of an elicitation answer
// in one pass, as encoding/json would decode them into a struct with
// those two fields: fast is false, and the answer is decoded with
// encoding/json instead, unless raw is valid JSON, every member name is
// ASCII and none but "action" and "content" themselves matches either in
// another case (encoding/json matches names without regard to case), and
// the action is a string or null.
func readElicitAnswer(raw json.RawMessage) (action Action, content json.RawMessage, fast bool) {
	if !strictjson.Valid(raw) {
		return "", nil, false
	}
	fast = true
	err := wire.EachMemberBytes(raw, func(name []byte, v json.RawMessage) error {
		switch string(name) {
		case "action":
			if string(v) == "null" {
				return nil // as encoding/json: null leaves the field alone
			}
			if v[0] != '"' {
				fast = false
				return nil
			}
			a, ok := wire.Interned(v, actionNames)
			if !ok {
				fast = false
				return nil
			}
			action = Action(a)
		case "content":
			content = v
		default:
			for _, c := range name {
				if c >= utf8.RuneSelf {
					fast = false
					return nil
				}
			}
			if strings.EqualFold(string(name), "action") || strings.EqualFold(string(name), "content") {
				fast = false
			}
		}
		return nil
	})
	if err != nil || !fast {
		return "", nil, false
	}
	return action, content, true
}

// readFlatContent decodes the content of a form answer (an object the
// strict door passed) as encoding/json decodes it into a map[string]any,
// when every value is a string, a number, a boolean or null; fast is
// false for anything else (arrays, objects), which encoding/json then
// decodes.
// When alias is set, raw is part of a buffer nothing writes again (a
// journal's payload): names and plain strings are not copied but alias it
// (a name the reader unescaped is a copy of its own, aliased as well).
func readFlatContent(raw json.RawMessage, alias bool) (m map[string]any, fast bool) {
	m = make(map[string]any, 4)
	fast = true
	str := wire.String
	if alias {
		str = wire.StringView
	}
	err := wire.EachMemberBytes(raw, func(name []byte, v json.RawMessage) error {
		var val any
		switch c := v[0]; {
		case c == '"':
			s, ok := str(v)
			if !ok {
				fast = false
				return errNotFlat
			}
			val = s
		case c == 't' && string(v) == "true":
			val = true
		case c == 'f' && string(v) == "false":
			val = false
		case c == 'n' && string(v) == "null":
			val = nil
		case c == '-' || (c >= '0' && c <= '9'):
			f, err := strconv.ParseFloat(string(v), 64)
			if err != nil {
				fast = false
				return errNotFlat
			}
			val = f
		default:
			fast = false
			return errNotFlat
		}
		if alias {
			m[unsafe.String(unsafe.SliceData(name), len(name))] = val
		} else {
			m[string(name)] = val
		}
		return nil
	})
	if err != nil || !fast {
		return nil, false
	}
	return m, true
}

var errNotFlat = errors.New("not a flat object")

func elicitValue(v any) bool {
	switch t := v.(type) {
	case string, float64, bool:
		return true
	case []any:
		for _, e := range t {
			if _, ok := e.(string); !ok {
				return false
			}
		}
		return true
	}
	return false
}
