package mrtr

import (
	"encoding/json"
	"errors"

	"github.com/mrtrkit/mrtrkit/state"
)

// The embedded request methods.
const (
	MethodCreateMessage = "sampling/createMessage"
	MethodElicit        = "elicitation/create"
	MethodListRoots     = "roots/list"
)

// InputRequest is one request a handler embeds in an input-required
// result: a *SamplingRequest, an *ElicitRequest or a *RootsRequest.
type InputRequest interface {
	inputKind() state.Kind
}

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

func (*SamplingRequest) inputKind() state.Kind { return state.KindSampling }
func (*RootsRequest) inputKind() state.Kind    { return state.KindRoots }
func (r *ElicitRequest) inputKind() state.Kind {
	if r.Mode == "url" {
		return state.KindElicitURL
	}
	return state.KindElicitForm
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

// ElicitResult is the user's answer to an ElicitRequest. Content is set
// only when Action is "accept" in form mode.
type ElicitResult struct {
	// Action is the user's choice: "accept", "decline" or "cancel". In
	// url mode, accept means the user agreed to open the URL.
	Action string `json:"action" validate:"oneof=accept decline cancel"`
	// Content is the submitted form, by field name.
	Content map[string]any `json:"content,omitempty"`
}

// Accepted reports whether the user accepted.
func (r *ElicitResult) Accepted() bool { return r.Action == "accept" }

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
		return inputRequestWire{Method: MethodCreateMessage, Params: v}
	case *ElicitRequest:
		if v.Mode == "" {
			cp := *v
			cp.Mode = "form"
			return inputRequestWire{Method: MethodElicit, Params: &cp}
		}
		return inputRequestWire{Method: MethodElicit, Params: v}
	default:
		return inputRequestWire{Method: MethodListRoots, Params: struct{}{}}
	}
}
