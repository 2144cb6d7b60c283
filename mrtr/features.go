package mrtr

import "encoding/json"

// Tool describes a tool the model may call.
type Tool struct {
	// Name identifies the tool in tools/call: 1 to 128 characters of
	// A-Z a-z 0-9 _ . -, unique on the server.
	Name string `json:"name"`
	// Title is the tool's display name.
	Title string `json:"title,omitempty"`
	// Description tells the model what the tool does and when to use it.
	Description string `json:"description,omitempty"`
	// InputSchema is the JSON Schema of the arguments (inputSchema); its
	// root type is "object". Empty means {"type":"object"}.
	InputSchema json.RawMessage `json:"inputSchema"`
	// OutputSchema is the JSON Schema of the result's structuredContent
	// (outputSchema), if the tool declares one.
	OutputSchema json.RawMessage `json:"outputSchema,omitempty"`
	// Annotations are hints about the tool's behaviour.
	Annotations *ToolAnnotations `json:"annotations,omitempty"`
	// Icons are icons the client may show for the tool.
	Icons []Icon `json:"icons,omitempty"`
	// Meta is the tool's _meta, passed through as is.
	Meta Object `json:"_meta,omitempty"`
}

// ToolAnnotations are untrusted hints about a tool's behaviour.
type ToolAnnotations struct {
	// Title is a display name, used when the Tool has no Title.
	Title string `json:"title,omitempty"`
	// ReadOnlyHint says the tool does not change its environment
	// (readOnlyHint); nil means false.
	ReadOnlyHint *bool `json:"readOnlyHint,omitempty"`
	// DestructiveHint says the tool may destroy or overwrite data
	// (destructiveHint); nil means true.
	DestructiveHint *bool `json:"destructiveHint,omitempty"`
	// IdempotentHint says repeating a call with the same arguments has no
	// further effect (idempotentHint); nil means false.
	IdempotentHint *bool `json:"idempotentHint,omitempty"`
	// OpenWorldHint says the tool reaches beyond a closed domain, such as
	// the web (openWorldHint); nil means true.
	OpenWorldHint *bool `json:"openWorldHint,omitempty"`
}

// CallToolResult is the complete result of tools/call.
type CallToolResult struct {
	// Content is the result as content blocks for the model.
	Content []Content `json:"content"`
	// StructuredContent is the result as one JSON value
	// (structuredContent); it must match the tool's OutputSchema, if any.
	StructuredContent any `json:"structuredContent,omitempty"`
	// IsError marks a failure the model can see and act on (isError).
	IsError bool `json:"isError,omitempty"`
	// Meta is the result's _meta; the Server sets the serverInfo key itself.
	Meta Object `json:"_meta,omitempty"`
}

// ToolError returns an isError result with one text block: the form for
// problems the model can fix, such as bad arguments.
func ToolError(text string) *CallToolResult {
	return &CallToolResult{Content: []Content{Text(text)}, IsError: true}
}

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
	Icons []Icon `json:"icons,omitempty"`
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

// Resource describes a resource the server can read.
type Resource struct {
	// URI identifies the resource in resources/read; it is matched exactly.
	URI string `json:"uri"`
	// Name is the resource's name.
	Name string `json:"name"`
	// Title is the resource's display name.
	Title string `json:"title,omitempty"`
	// Description says what the resource holds.
	Description string `json:"description,omitempty"`
	// MIMEType is the resource's media type, when known (mimeType).
	MIMEType string `json:"mimeType,omitempty"`
	// Size is the resource's size in bytes; nil when unknown.
	Size *int64 `json:"size,omitempty"`
	// Annotations are optional hints about the resource.
	Annotations *Annotations `json:"annotations,omitempty"`
	// Icons are icons the client may show for the resource.
	Icons []Icon `json:"icons,omitempty"`
	// Meta is the resource's _meta, passed through as is.
	Meta Object `json:"_meta,omitempty"`
}

// ResourceTemplate describes a family of resources by an RFC 6570 URI
// template. mrtrkit matches simple {name} expressions, each standing for
// one or more characters other than '/'.
type ResourceTemplate struct {
	// URITemplate is the template the URIs of the family match
	// (uriTemplate), such as "db://{schema}/{table}".
	URITemplate string `json:"uriTemplate"`
	// Name is the template's name.
	Name string `json:"name"`
	// Title is the template's display name.
	Title string `json:"title,omitempty"`
	// Description says what the resources of the family hold.
	Description string `json:"description,omitempty"`
	// MIMEType is the media type of every resource of the family, when
	// they share one (mimeType).
	MIMEType string `json:"mimeType,omitempty"`
	// Annotations are optional hints about the resources.
	Annotations *Annotations `json:"annotations,omitempty"`
	// Icons are icons the client may show for the template.
	Icons []Icon `json:"icons,omitempty"`
	// Meta is the template's _meta, passed through as is.
	Meta Object `json:"_meta,omitempty"`
}

// ReadResourceResult is the complete result of resources/read.
type ReadResourceResult struct {
	// Contents are the resource's contents. A handler answers a missing
	// resource with ErrResourceNotFound, not with empty Contents.
	Contents []ResourceContents `json:"contents"`
	// Meta is the result's _meta; the Server sets the serverInfo key itself.
	Meta Object `json:"_meta,omitempty"`
}

// CompleteRequest is the params of completion/complete.
type CompleteRequest struct {
	// Ref is the prompt or resource template whose argument is completed.
	Ref CompletionRef `json:"ref"`
	// Argument is the argument being completed.
	Argument CompletionArgument `json:"argument"`
	// Context holds arguments already chosen; nil when not sent.
	Context *CompletionContext `json:"context,omitempty"`
}

// CompletionRef names what is being completed: a prompt (type
// "ref/prompt", Name) or a resource template (type "ref/resource", URI).
type CompletionRef struct {
	// Type is "ref/prompt" or "ref/resource".
	Type string `json:"type"`
	// Name is the prompt's name, for "ref/prompt".
	Name string `json:"name,omitempty"`
	// URI is the resource's URI or URI template, for "ref/resource".
	URI string `json:"uri,omitempty"`
}

// CompletionArgument is the argument being completed and its partial value.
type CompletionArgument struct {
	// Name is the argument's name.
	Name string `json:"name"`
	// Value is what the user has typed so far.
	Value string `json:"value"`
}

// CompletionContext carries the values of arguments already chosen.
type CompletionContext struct {
	// Arguments are the values already chosen, by argument name.
	Arguments map[string]string `json:"arguments,omitempty"`
}

// Completion is the answer to completion/complete. At most 100 values.
type Completion struct {
	// Values are the suggested values. The Server sends at most 100 and
	// sets HasMore when it cuts the list.
	Values []string `json:"values"`
	// Total is how many values exist in all, when known.
	Total *int `json:"total,omitempty"`
	// HasMore reports that there are values beyond Values (hasMore).
	HasMore bool `json:"hasMore,omitempty"`
}
