package mrtr

import (
	"github.com/mrtrkit/mrtrkit/discover"
	"github.com/mrtrkit/mrtrkit/internal/wire"
)

// Prompt describes a prompt template.
type Prompt struct {
	// Name identifies the prompt in prompts/get.
	Name string `json:"name"`
	// Title is the prompt's display name.
	Title string `json:"title,omitempty"`
	// Description says what the prompt is for.
	Description string `json:"description,omitempty"`
	// Arguments are the arguments the prompt takes.
	Arguments []PromptArgument `json:"arguments,omitempty"`
	// Icons are icons the client may show for the prompt.
	Icons []discover.Icon `json:"icons,omitempty"`
	// Meta is the prompt's _meta, passed through as is.
	Meta Object `json:"_meta,omitempty"`
}

// PromptArgument describes one argument of a prompt.
type PromptArgument struct {
	// Name is the argument's key in prompts/get arguments.
	Name string `json:"name"`
	// Title is the argument's display name.
	Title string `json:"title,omitempty"`
	// Description says what the argument means.
	Description string `json:"description,omitempty"`
	// Required means a prompts/get without the argument is refused
	// with -32602 before the handler runs.
	Required bool `json:"required,omitempty"`
}

// PromptMessage is one message of a prompt.
type PromptMessage struct {
	// Role is who speaks the message: user or assistant.
	Role Role `json:"role"`
	// Content is the message's one content block.
	Content Content `json:"content"`
}

// GetPromptResult is the complete result of prompts/get.
type GetPromptResult struct {
	// Description describes the prompt as filled in.
	Description string `json:"description,omitempty"`
	// Messages are the prompt's messages, in order.
	Messages []PromptMessage `json:"messages"`
	// Meta is the result's _meta; the Server sets the serverInfo key itself.
	Meta Object `json:"_meta,omitempty"`
}

func (r *GetPromptResult) wire() (string, any, Object, bool) {
	if r == nil {
		return "", nil, nil, false
	}
	cp := *r
	if cp.Messages == nil {
		cp.Messages = []PromptMessage{}
	}
	cp.Meta = nil
	return wire.MethodPromptsGet, &cp, r.Meta, true
}
