package mrtr

import (
	"encoding/json"

	"github.com/mrtrkit/mrtrkit/discover"
	"github.com/mrtrkit/mrtrkit/internal/wire"
)

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
	Icons []discover.Icon `json:"icons,omitempty"`
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

func (r *CallToolResult) wire() (string, any, Object, bool) {
	if r == nil {
		return "", nil, nil, false
	}
	cp := *r
	if cp.Content == nil {
		cp.Content = []Content{}
	}
	cp.Meta = nil
	return wire.MethodToolsCall, &cp, r.Meta, true
}

// TextResult returns a complete tool result with one text block.
func TextResult(text string) *CallToolResult {
	return &CallToolResult{Content: []Content{Text(text)}}
}

// ErrorResult returns an isError tool result with one text block: the form
// for problems the model can see and fix, such as bad arguments. (A
// JSON-RPC error is for problems of the request itself.)
func ErrorResult(text string) *CallToolResult {
	return &CallToolResult{Content: []Content{Text(text)}, IsError: true}
}
