package client

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mrtrkit/mrtrkit/internal/wire"
)

// maxPages bounds how many pages one List call follows.
const maxPages = 1000

// Tool is one tool as tools/list describes it. Schemas stay raw JSON,
// exactly as the server sent them.
type Tool struct {
	Name         string          `json:"name"`                   // what CallTool takes
	Title        string          `json:"title,omitempty"`        // the display name
	Description  string          `json:"description,omitempty"`  // for the model
	InputSchema  json.RawMessage `json:"inputSchema,omitempty"`  // JSON Schema of the arguments, verbatim
	OutputSchema json.RawMessage `json:"outputSchema,omitempty"` // JSON Schema of structuredContent, verbatim
	Annotations  json.RawMessage `json:"annotations,omitempty"`  // hints such as readOnlyHint, verbatim
	Meta         json.RawMessage `json:"_meta,omitempty"`        // verbatim
}

// Prompt is one prompt as prompts/list describes it.
type Prompt struct {
	Name        string          `json:"name"`                  // what GetPrompt takes
	Title       string          `json:"title,omitempty"`       // the display name
	Description string          `json:"description,omitempty"` // what it is for
	Arguments   json.RawMessage `json:"arguments,omitempty"`   // its arguments, verbatim
}

// Resource is one resource as resources/list describes it.
type Resource struct {
	URI         string `json:"uri"`                   // what ReadResource takes
	Name        string `json:"name,omitempty"`        // its name
	Title       string `json:"title,omitempty"`       // the display name
	Description string `json:"description,omitempty"` // what it holds
	MIMEType    string `json:"mimeType,omitempty"`    // its media type
}

// ResourceTemplate is one template as resources/templates/list describes
// it.
type ResourceTemplate struct {
	URITemplate string `json:"uriTemplate"`           // an RFC 6570 template of resource URIs
	Name        string `json:"name,omitempty"`        // its name
	Description string `json:"description,omitempty"` // what its resources hold
	MIMEType    string `json:"mimeType,omitempty"`    // their media type
}

// Content is one content block of a result, verbatim apart from the
// members read here.
type Content struct {
	Type     string          `json:"type"`               // text, image, audio, resource_link or resource
	Text     string          `json:"text,omitempty"`     // of a text block
	Data     string          `json:"data,omitempty"`     // base64, of an image or audio block
	MIMEType string          `json:"mimeType,omitempty"` // of an image, audio or link block
	URI      string          `json:"uri,omitempty"`      // of a resource link
	Resource json.RawMessage `json:"resource,omitempty"` // of an embedded resource, verbatim
}

// ToolResult is a complete tools/call result.
type ToolResult struct {
	Content           []Content       `json:"content"`                     // the result's blocks
	StructuredContent json.RawMessage `json:"structuredContent,omitempty"` // verbatim
	IsError           bool            `json:"isError,omitempty"`           // a failure the model is meant to see
	Meta              json.RawMessage `json:"_meta,omitempty"`             // verbatim
	// Raw is the whole result as the server sent it.
	Raw json.RawMessage `json:"-"`
	// Exchange is what the call went through.
	Exchange `json:"-"`
}

// Text joins the result's text blocks.
func (r *ToolResult) Text() string {
	var b strings.Builder
	for _, c := range r.Content {
		if c.Type == "text" {
			b.WriteString(c.Text)
		}
	}
	return b.String()
}

// PromptMessage is one message of a prompt.
type PromptMessage struct {
	Role    string  `json:"role"`    // user or assistant
	Content Content `json:"content"` // one block
}

// PromptResult is a complete prompts/get result.
type PromptResult struct {
	Description string          `json:"description,omitempty"` // of the filled-in prompt
	Messages    []PromptMessage `json:"messages"`              // the prompt's messages
	Raw         json.RawMessage `json:"-"`                     // the whole result, verbatim
	Exchange    `json:"-"`
}

// ResourceContents is one content of a resource.
type ResourceContents struct {
	URI      string  `json:"uri"`                // where it comes from
	MIMEType string  `json:"mimeType,omitempty"` // its media type
	Text     *string `json:"text,omitempty"`     // set for text contents
	Blob     *string `json:"blob,omitempty"`     // base64, set for binary contents
}

// ResourceResult is a complete resources/read result.
type ResourceResult struct {
	Contents []ResourceContents `json:"contents"` // the resource's contents
	Raw      json.RawMessage    `json:"-"`        // the whole result, verbatim
	Exchange `json:"-"`
}

// list follows a list method's pages, passing each page's items member to
// each.
func (c *Client) list(ctx context.Context, method, items string, each func(json.RawMessage) error) error {
	var cursor *string
	seen := map[string]bool{}
	for page := 0; page < maxPages; page++ {
		var params []member
		if cursor != nil {
			params = []member{{"cursor", mustJSON(*cursor)}}
		}
		res, err := c.call(ctx, method, "", params, nil, nil, 0)
		if err != nil {
			return err
		}
		var r map[string]json.RawMessage
		if err := json.Unmarshal(res, &r); err != nil {
			return &Error{Server: c.server, Method: method, Err: fmt.Errorf("the result does not decode: %w", err)}
		}
		if err := each(r[items]); err != nil {
			return &Error{Server: c.server, Method: method, Err: err}
		}
		var next string
		if raw, ok := r["nextCursor"]; !ok || json.Unmarshal(raw, &next) != nil || next == "" {
			return nil
		}
		if seen[next] {
			return &Error{Server: c.server, Method: method, Err: fmt.Errorf("the server repeated cursor %q", clip(next, 40))}
		}
		seen[next] = true
		cursor = &next
	}
	return &Error{Server: c.server, Method: method, Err: fmt.Errorf("more than %d pages", maxPages)}
}

// ListTools lists the server's tools, every page. A tool whose
// x-mcp-header declarations break SEP-2243 (empty, not a token, repeated,
// on a property that is not a string, integer or boolean) is left out:
// calling it could not be done right. The declarations of the others are
// remembered for CallTool's Mcp-Param-* headers.
func (c *Client) ListTools(ctx context.Context) ([]Tool, error) {
	var out []Tool
	decl := map[string][]paramHeader{}
	err := c.list(ctx, wire.MethodToolsList, "tools", func(raw json.RawMessage) error {
		var page []Tool
		if err := json.Unmarshal(raw, &page); err != nil {
			return fmt.Errorf("the tools do not decode: %w", err)
		}
		for _, t := range page {
			hs, err := toolHeaders(t.InputSchema)
			if err != nil {
				continue
			}
			decl[t.Name] = hs
			out = append(out, t)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	c.tools = decl
	c.mu.Unlock()
	return out, nil
}

// ListPrompts lists the server's prompts, every page.
func (c *Client) ListPrompts(ctx context.Context) ([]Prompt, error) {
	return listAll[Prompt](ctx, c, wire.MethodPromptsList, "prompts")
}

// ListResources lists the server's resources, every page.
func (c *Client) ListResources(ctx context.Context) ([]Resource, error) {
	return listAll[Resource](ctx, c, wire.MethodResourcesList, "resources")
}

// ListResourceTemplates lists the server's resource templates, every page.
func (c *Client) ListResourceTemplates(ctx context.Context) ([]ResourceTemplate, error) {
	return listAll[ResourceTemplate](ctx, c, wire.MethodTemplatesList, "resourceTemplates")
}

// listAll follows the pages of a list method and decodes the items
// member of each.
func listAll[T any](ctx context.Context, c *Client, method, items string) ([]T, error) {
	var out []T
	err := c.list(ctx, method, items, func(raw json.RawMessage) error {
		var page []T
		if err := json.Unmarshal(raw, &page); err != nil {
			return fmt.Errorf("the %s do not decode: %w", items, err)
		}
		out = append(out, page...)
		return nil
	})
	return out, err
}

// CallTool calls the tool name with args (a value that encodes as a JSON
// object, a json.RawMessage kept as it is, or nil) and answers its
// input-required rounds. The Mcp-Param-* headers come from the tool's
// x-mcp-header declarations, as the last ListTools saw them; when the
// server refuses the headers (-32020) the client lists the tools again
// and retries once.
//
// With AsTask the call runs as a task when the server makes it one, and
// CallTool follows the task to its end (see AsTask).
func (c *Client) CallTool(ctx context.Context, name string, args any, opts ...CallOption) (*ToolResult, error) {
	co := callOptions(opts)
	if co != nil && co.task {
		return c.callAsTask(ctx, name, args, co)
	}
	var ex Exchange
	res, err := c.toolsCall(ctx, name, args, co, &ex)
	if err != nil {
		return nil, err
	}
	return c.toolResult(name, res, ex)
}

// toolsCall sends tools/call of name with args and answers its rounds;
// it returns the final result, raw.
func (c *Client) toolsCall(ctx context.Context, name string, args any, co *callOpts, ex *Exchange) (json.RawMessage, error) {
	params := []member{{"name", mustJSON(name)}}
	var rawArgs json.RawMessage
	if args != nil {
		b, err := encodeJSON(args)
		if err != nil {
			return nil, &Error{Server: c.server, Method: wire.MethodToolsCall, Name: name, Err: fmt.Errorf("the arguments do not encode: %w", err)}
		}
		rawArgs = b
		params = append(params, member{"arguments", b})
	}
	for attempt := 0; ; attempt++ {
		hdrs, err := c.paramHeaders(name, rawArgs)
		if err != nil {
			return nil, &Error{Server: c.server, Method: wire.MethodToolsCall, Name: name, Err: err}
		}
		*ex = Exchange{}
		res, err := c.run(ctx, wire.MethodToolsCall, name, params, hdrs, co, ex)
		if err != nil {
			if attempt == 0 && CodeOf(err) == CodeHeaderMismatch && !c.Legacy() {
				if _, lerr := c.ListTools(ctx); lerr == nil {
					continue
				}
			}
			return nil, err
		}
		return res, nil
	}
}

// toolResult decodes a complete tools/call result.
func (c *Client) toolResult(name string, res json.RawMessage, ex Exchange) (*ToolResult, error) {
	var out ToolResult
	if err := json.Unmarshal(res, &out); err != nil {
		return nil, &Error{Server: c.server, Method: wire.MethodToolsCall, Name: name, Err: fmt.Errorf("the result does not decode: %w", err)}
	}
	out.Raw = res
	out.Exchange = ex
	return &out, nil
}

// paramHeaders returns the Mcp-Param-* headers of a call of tool name.
func (c *Client) paramHeaders(name string, args json.RawMessage) (map[string]string, error) {
	c.mu.Lock()
	hs := c.tools[name]
	legacy := c.legacy
	c.mu.Unlock()
	if legacy {
		return nil, nil
	}
	return headerValues(hs, args)
}

// GetPrompt gets the prompt name with args and answers its rounds.
func (c *Client) GetPrompt(ctx context.Context, name string, args map[string]string, opts ...CallOption) (*PromptResult, error) {
	params := []member{{"name", mustJSON(name)}}
	if args != nil {
		params = append(params, member{"arguments", mustJSON(args)})
	}
	var out PromptResult
	res, err := c.run(ctx, wire.MethodPromptsGet, name, params, nil, callOptions(opts), &out.Exchange)
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(res, &out); err != nil {
		return nil, &Error{Server: c.server, Method: wire.MethodPromptsGet, Name: name, Err: fmt.Errorf("the result does not decode: %w", err)}
	}
	out.Raw = res
	return &out, nil
}

// ReadResource reads the resource uri and answers its rounds.
func (c *Client) ReadResource(ctx context.Context, uri string, opts ...CallOption) (*ResourceResult, error) {
	var out ResourceResult
	res, err := c.run(ctx, wire.MethodResourcesRead, uri, []member{{"uri", mustJSON(uri)}}, nil, callOptions(opts), &out.Exchange)
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(res, &out); err != nil {
		return nil, &Error{Server: c.server, Method: wire.MethodResourcesRead, Name: uri, Err: fmt.Errorf("the result does not decode: %w", err)}
	}
	out.Raw = res
	return &out, nil
}

// CompletionRef names what a completion is for: a prompt (Type
// "ref/prompt", Name) or a resource template (Type "ref/resource", URI).
type CompletionRef struct {
	Type string `json:"type"`           // ref/prompt or ref/resource
	Name string `json:"name,omitempty"` // the prompt's name
	URI  string `json:"uri,omitempty"`  // the resource template's URI template
}

// Completion is the server's completion/complete answer.
type Completion struct {
	Values  []string `json:"values"`            // the candidates, best first
	Total   int      `json:"total,omitempty"`   // how many there are in all, when known
	HasMore bool     `json:"hasMore,omitempty"` // more exist than Values holds
}

// Complete asks for completions of argument arg, typed so far as value,
// with the other arguments already filled in (nil for none).
func (c *Client) Complete(ctx context.Context, ref CompletionRef, arg, value string, filled map[string]string) (*Completion, error) {
	params := []member{
		{"ref", mustJSON(ref)},
		{"argument", mustJSON(map[string]string{"name": arg, "value": value})},
	}
	if filled != nil {
		params = append(params, member{"context", mustJSON(map[string]any{"arguments": filled})})
	}
	res, err := c.call(ctx, wire.MethodComplete, "", params, nil, nil, 0)
	if err != nil {
		return nil, err
	}
	var r struct {
		Completion Completion `json:"completion"`
	}
	if err := json.Unmarshal(res, &r); err != nil {
		return nil, &Error{Server: c.server, Method: wire.MethodComplete, Err: fmt.Errorf("the result does not decode: %w", err)}
	}
	return &r.Completion, nil
}

// Call sends one request for method with params (a value that encodes as
// a JSON object, its members sent in their order and verbatim, or nil)
// and returns the raw result, answering no rounds. It is the way to a
// method this package has no function for. The request carries Mcp-Name
// for the methods that name a target: the name of tools/call and
// prompts/get, the uri of resources/read, the taskId of tasks/get,
// tasks/update and tasks/cancel.
func (c *Client) Call(ctx context.Context, method string, params any, opts ...CallOption) (json.RawMessage, error) {
	p, err := orderedParams(params)
	if err != nil {
		return nil, &Error{Server: c.server, Method: method, Err: fmt.Errorf("params are not a JSON object: %w", err)}
	}
	return c.call(ctx, method, targetOf(method, p), p, nil, callOptions(opts), 0)
}

func callOptions(opts []CallOption) *callOpts {
	if len(opts) == 0 {
		return nil
	}
	co := &callOpts{}
	for _, o := range opts {
		o.applyCall(co)
	}
	return co
}
