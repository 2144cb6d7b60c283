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
	Messages         []SamplingMessage `json:"messages" validate:"required,min=1,dive"`
	ModelPreferences *ModelPreferences `json:"modelPreferences,omitempty"`
	SystemPrompt     string            `json:"systemPrompt,omitempty"`
	IncludeContext   string            `json:"includeContext,omitempty" validate:"omitempty,oneof=none thisServer allServers"`
	Temperature      *float64          `json:"temperature,omitempty"`
	MaxTokens        int               `json:"maxTokens" validate:"gt=0"`
	StopSequences    []string          `json:"stopSequences,omitempty"`
	Metadata         Object            `json:"metadata,omitempty"`
	Tools            []Tool            `json:"tools,omitempty"`
	ToolChoice       *ToolChoice       `json:"toolChoice,omitempty"`
}

// ModelPreferences are the server's preferences for model selection.
// Priorities are in [0,1].
type ModelPreferences struct {
	Hints                []ModelHint `json:"hints,omitempty"`
	CostPriority         *float64    `json:"costPriority,omitempty" validate:"omitempty,gte=0,lte=1"`
	SpeedPriority        *float64    `json:"speedPriority,omitempty" validate:"omitempty,gte=0,lte=1"`
	IntelligencePriority *float64    `json:"intelligencePriority,omitempty" validate:"omitempty,gte=0,lte=1"`
}

// ModelHint names a model or model family.
type ModelHint struct {
	Name string `json:"name,omitempty"`
}

// ToolChoice controls tool use in a sampling request.
type ToolChoice struct {
	Mode string `json:"mode,omitempty" validate:"omitempty,oneof=auto required none"`
}

// SamplingMessage is one message of a sampling conversation. Content holds
// one block or several; it is rendered as a single object when it has one.
type SamplingMessage struct {
	Role    Role              `json:"role" validate:"oneof=user assistant"`
	Content []SamplingContent `json:"-" validate:"min=1,dive"`
	Meta    Object            `json:"_meta,omitempty"`
}

// SamplingContent is one block of a sampling message: text, image, audio,
// tool_use or tool_result, told apart by Type.
type SamplingContent struct {
	Type string `json:"type" validate:"oneof=text image audio tool_use tool_result"`
	// text
	Text string `json:"text,omitempty"`
	// image, audio: base64 data and its MIME type
	Data     string `json:"data,omitempty"`
	MIMEType string `json:"mimeType,omitempty"`
	// tool_use
	ID    string          `json:"id,omitempty"`
	Name  string          `json:"name,omitempty"`
	Input json.RawMessage `json:"input,omitempty"`
	// tool_result
	ToolUseID         string            `json:"toolUseId,omitempty"`
	Content           []json.RawMessage `json:"content,omitempty"`
	StructuredContent json.RawMessage   `json:"structuredContent,omitempty"`
	IsError           bool              `json:"isError,omitempty"`

	Annotations *Annotations `json:"annotations,omitempty"`
	Meta        Object       `json:"_meta,omitempty"`
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
	Mode            string        `json:"mode,omitempty" validate:"omitempty,oneof=form url"`
	Message         string        `json:"message" validate:"required"`
	RequestedSchema *ElicitSchema `json:"requestedSchema,omitempty" validate:"required_unless=Mode url,excluded_if=Mode url"`
	URL             string        `json:"url,omitempty" validate:"required_if=Mode url,excluded_unless=Mode url,omitempty,url"`
}

// ElicitSchema is the flat object schema of a form elicitation. Each
// property is a primitive schema (string, number, integer, boolean or an
// enum), kept verbatim.
type ElicitSchema struct {
	Schema     string                     `json:"$schema,omitempty"`
	Type       string                     `json:"type" validate:"eq=object"`
	Properties map[string]json.RawMessage `json:"properties" validate:"required"`
	Required   []string                   `json:"required,omitempty"`
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
	Role       Role              `json:"role" validate:"oneof=user assistant"`
	Content    []SamplingContent `json:"-" validate:"min=1,dive"`
	Model      string            `json:"model" validate:"required"`
	StopReason string            `json:"stopReason,omitempty"`
	Meta       Object            `json:"_meta,omitempty"`
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
	Action  string         `json:"action" validate:"oneof=accept decline cancel"`
	Content map[string]any `json:"content,omitempty"`
}

// Accepted reports whether the user accepted.
func (r *ElicitResult) Accepted() bool { return r.Action == "accept" }

// RootsResult is the client's answer to a RootsRequest.
type RootsResult struct {
	Roots []Root `json:"roots" validate:"required,dive"`
}

// Root is a directory or file the client exposes; URI is a file:// URI.
type Root struct {
	URI  string `json:"uri" validate:"required,startswith=file://"`
	Name string `json:"name,omitempty"`
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
