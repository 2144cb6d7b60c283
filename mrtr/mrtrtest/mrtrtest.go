package mrtrtest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/mrtrkit/mrtrkit/internal/wire"
	"github.com/mrtrkit/mrtrkit/mrtr"
)

// ProtocolVersion is the protocol version the requests built here claim.
const ProtocolVersion = "2026-07-28"

// DefaultMaxRounds is how many input-required rounds a Client answers in
// one call before it gives up.
const DefaultMaxRounds = 10

// ErrTooManyRounds is returned by a Client call that was still asking for
// input after the Client's round limit.
var ErrTooManyRounds = errors.New("mrtrtest: the server kept asking for input past the client's round limit")

// ErrUnanswered is wrapped by the error a Client call returns when the
// server asks a question the Client has no function to answer.
var ErrUnanswered = errors.New("mrtrtest: no answer for an input request")

// Request builds one JSON-RPC request of MCP 2026-07-28 as a client sends
// it: params with a _meta that claims ProtocolVersion and declares the
// client's capabilities. Build one with NewRequest; its methods return
// the Request so that calls chain.
type Request struct {
	method string
	params map[string]any
	meta   map[string]any
	id     any
}

var nextID atomic.Int64

// NewRequest returns a request for method with params (nil for none). It
// declares no client capabilities ({}) until WithCapabilities says
// otherwise, and has a fresh integer id.
func NewRequest(method string, params map[string]any) *Request {
	p := make(map[string]any, len(params)+1)
	for k, v := range params {
		p[k] = v
	}
	return &Request{
		method: method,
		params: p,
		meta: map[string]any{
			wire.MetaProtocolVersion:    ProtocolVersion,
			wire.MetaClientCapabilities: json.RawMessage(`{}`),
		},
		id: nextID.Add(1),
	}
}

// WithCapabilities sets the client capabilities the request declares, as
// JSON, for example `{"sampling":{},"elicitation":{}}`.
func (r *Request) WithCapabilities(caps string) *Request {
	r.meta[wire.MetaClientCapabilities] = json.RawMessage(caps)
	return r
}

// WithMeta sets one _meta key (for example "io.modelcontextprotocol/logLevel" or
// "progressToken"). A nil value removes the key, so that a test can
// send a request without, say, its protocol version.
func (r *Request) WithMeta(key string, value any) *Request {
	if value == nil {
		delete(r.meta, key)
	} else {
		r.meta[key] = value
	}
	return r
}

// WithID sets the request id: a string or an integer. nil makes the
// request a notification.
func (r *Request) WithID(id any) *Request {
	r.id = id
	return r
}

// Body returns the request as the JSON a client sends.
func (r *Request) Body() []byte {
	p := make(map[string]any, len(r.params)+1)
	for k, v := range r.params {
		p[k] = v
	}
	p["_meta"] = r.meta
	msg := map[string]any{"jsonrpc": "2.0", "method": r.method, "params": p}
	if r.id != nil {
		msg["id"] = r.id
	}
	b, err := json.Marshal(msg)
	if err != nil {
		panic("mrtrtest: request params do not encode: " + err.Error())
	}
	return b
}

// Inbound parses the request as a transport would and returns what the
// transport hands to Server.Handle, with principal as the authenticated
// caller. It panics when the request does not parse, which only a test
// building a malformed request on purpose (with WithID(1.5), say) meets;
// such a test calls mrtr.ParseMessage on Body itself.
func (r *Request) Inbound(principal string) *mrtr.Inbound {
	msg, _, err := mrtr.ParseMessage(r.Body())
	if err != nil {
		panic("mrtrtest: request does not parse: " + err.Error())
	}
	return &mrtr.Inbound{Message: msg, Principal: principal}
}

// Send serves req on srv through mrtr.ParseMessage and Server.Handle, as
// a transport does, and returns the result or the JSON-RPC error. It
// returns (nil, nil) for a notification.
func Send(ctx context.Context, srv *mrtr.Server, principal string, req *Request) (json.RawMessage, *mrtr.Error) {
	resp := srv.Handle(ctx, req.Inbound(principal))
	if resp == nil {
		return nil, nil
	}
	return resp.Result, resp.Error
}

// Client is an in-process client of an mrtr.Server. Each call builds the
// request as a client of MCP 2026-07-28 does, passes it through
// mrtr.ParseMessage and Server.Handle, and, while the server answers
// input_required, answers every embedded request with the Client's
// functions and retries with the answers and the requestState, as many
// rounds as the server asks, up to the Client's limit. It is safe for
// concurrent use.
type Client struct {
	srv       *mrtr.Server
	principal string
	caps      string
	maxRounds int
	sampling  mrtr.SamplingFunc
	elicit    mrtr.ElicitFunc
	roots     mrtr.RootsFunc
	meta      map[string]any
}

// Option configures a Client.
type Option interface{ apply(*Client) }

type optionFunc func(*Client)

func (f optionFunc) apply(c *Client) { f(c) }

// WithPrincipal makes the Client's requests arrive as if the transport had
// authenticated principal (default: anonymous, "").
func WithPrincipal(principal string) Option {
	return optionFunc(func(c *Client) { c.principal = principal })
}

// WithCapabilities sets the client capabilities every request declares.
// By default the Client declares what its functions can answer: sampling
// with OnSampling, elicitation (form and url) with OnElicitation, roots
// with OnRoots. Declaring less than the functions answer tests a
// handler's fallback when a question cannot be asked (-32021):
//
//	mrtrtest.WithCapabilities(mrtr.ClientCapabilities{}) // declares nothing
func WithCapabilities(caps mrtr.ClientCapabilities) Option {
	return optionFunc(func(c *Client) {
		b, err := json.Marshal(caps)
		if err != nil {
			panic(err) // not reached: the type encodes
		}
		c.caps = string(b)
	})
}

// WithMaxRounds sets how many input-required rounds one call may take
// (default DefaultMaxRounds).
func WithMaxRounds(n int) Option { return optionFunc(func(c *Client) { c.maxRounds = n }) }

// WithMeta adds a _meta key to every request, such as "io.modelcontextprotocol/logLevel".
func WithMeta(key string, value any) Option {
	return optionFunc(func(c *Client) {
		if c.meta == nil {
			c.meta = map[string]any{}
		}
		c.meta[key] = value
	})
}

// OnSampling answers sampling/createMessage requests. f is an
// mrtr.SamplingFunc, so the same value can answer for a real
// client.Client.
func OnSampling(f mrtr.SamplingFunc) Option {
	return optionFunc(func(c *Client) { c.sampling = f })
}

// OnElicitation answers elicitation/create requests (an mrtr.ElicitFunc,
// shared with client.OnElicitation).
func OnElicitation(f mrtr.ElicitFunc) Option {
	return optionFunc(func(c *Client) { c.elicit = f })
}

// OnRoots answers roots/list requests (an mrtr.RootsFunc, shared with
// client.OnRoots).
func OnRoots(f mrtr.RootsFunc) Option {
	return optionFunc(func(c *Client) { c.roots = f })
}

// WithRoots answers roots/list requests with the given roots.
func WithRoots(roots ...mrtr.Root) Option {
	return OnRoots(func(context.Context) (*mrtr.RootsResult, error) {
		return &mrtr.RootsResult{Roots: append([]mrtr.Root{}, roots...)}, nil
	})
}

// NewClient returns a Client of srv.
func NewClient(srv *mrtr.Server, opts ...Option) *Client {
	c := &Client{srv: srv, maxRounds: DefaultMaxRounds}
	for _, o := range opts {
		if o != nil {
			o.apply(c)
		}
	}
	if c.caps == "" {
		caps := map[string]any{}
		if c.sampling != nil {
			caps["sampling"] = map[string]any{}
		}
		if c.elicit != nil {
			caps["elicitation"] = map[string]any{"form": map[string]any{}, "url": map[string]any{}}
		}
		if c.roots != nil {
			caps["roots"] = map[string]any{}
		}
		b, _ := json.Marshal(caps)
		c.caps = string(b)
	}
	return c
}

// Notification is one notification the server sent while serving a call.
type Notification struct {
	// Method is the notification's method, such as
	// "notifications/progress".
	Method string `json:"method"`
	// Params are its params, verbatim.
	Params json.RawMessage `json:"params"`
}

// Exchange is what one call went through: the rounds the Client answered
// and the notifications the server sent on the way.
type Exchange struct {
	// Rounds is how many input-required rounds the Client answered.
	Rounds int
	// Asked lists, round by round, the keys each input-required result
	// asked, sorted.
	Asked [][]string
	// Notifications are the notifications of every round, in order.
	Notifications []Notification
}

// Content is one content block of a result, as a client reads it.
type Content struct {
	// Type is the block's kind: text, image, audio, resource_link or
	// resource.
	Type string `json:"type"`
	// Text is the text of a text block.
	Text string `json:"text,omitempty"`
	// Data is the base64 data of an image or audio block.
	Data string `json:"data,omitempty"`
	// MIMEType is the media type of an image, audio or link block.
	MIMEType string `json:"mimeType,omitempty"`
	// URI is the URI of a resource link.
	URI string `json:"uri,omitempty"`
	// Resource is the embedded contents of a resource block, verbatim.
	Resource json.RawMessage `json:"resource,omitempty"`
}

// ToolResult is a complete tools/call result as a client reads it.
type ToolResult struct {
	// Content is the result's content blocks.
	Content []Content `json:"content"`
	// StructuredContent is the structured result, verbatim.
	StructuredContent json.RawMessage `json:"structuredContent,omitempty"`
	// IsError marks a failure the model is meant to see.
	IsError bool `json:"isError,omitempty"`
	// Meta is the result's _meta, verbatim.
	Meta map[string]json.RawMessage `json:"_meta,omitempty"`
	// Exchange is what the call went through.
	Exchange `json:"-"`
}

// Text joins the result's text blocks.
func (r *ToolResult) Text() string {
	var s string
	for _, c := range r.Content {
		if c.Type == "text" {
			s += c.Text
		}
	}
	return s
}

// PromptResult is a complete prompts/get result as a client reads it.
type PromptResult struct {
	// Description describes the prompt as filled in.
	Description string `json:"description,omitempty"`
	// Messages are the prompt's messages.
	Messages []struct {
		Role    string  `json:"role"`
		Content Content `json:"content"`
	} `json:"messages"`
	// Exchange is what the call went through.
	Exchange `json:"-"`
}

// ResourceResult is a complete resources/read result as a client reads
// it.
type ResourceResult struct {
	// Contents are the resource's contents.
	Contents []struct {
		URI      string  `json:"uri"`
		MIMEType string  `json:"mimeType,omitempty"`
		Text     *string `json:"text,omitempty"`
		Blob     *string `json:"blob,omitempty"`
	} `json:"contents"`
	// TTLMs and CacheScope are the result's cache hint.
	TTLMs      int64  `json:"ttlMs"`
	CacheScope string `json:"cacheScope"`
	// Exchange is what the call went through.
	Exchange `json:"-"`
}

// CallTool calls the tool name with args (any value that encodes as a
// JSON object; nil for none) and answers its rounds. A JSON-RPC error
// from the server is returned as an *mrtr.Error.
func (c *Client) CallTool(ctx context.Context, name string, args any) (*ToolResult, error) {
	params := map[string]any{"name": name}
	if args != nil {
		params["arguments"] = args
	}
	var out ToolResult
	if err := c.run(ctx, wire.MethodToolsCall, params, &out, &out.Exchange); err != nil {
		return nil, err
	}
	return &out, nil
}

// GetPrompt gets the prompt name with args and answers its rounds.
func (c *Client) GetPrompt(ctx context.Context, name string, args map[string]string) (*PromptResult, error) {
	params := map[string]any{"name": name}
	if args != nil {
		params["arguments"] = args
	}
	var out PromptResult
	if err := c.run(ctx, wire.MethodPromptsGet, params, &out, &out.Exchange); err != nil {
		return nil, err
	}
	return &out, nil
}

// ReadResource reads the resource uri and answers its rounds.
func (c *Client) ReadResource(ctx context.Context, uri string) (*ResourceResult, error) {
	var out ResourceResult
	if err := c.run(ctx, wire.MethodResourcesRead, map[string]any{"uri": uri}, &out, &out.Exchange); err != nil {
		return nil, err
	}
	return &out, nil
}

// Call sends one request for method with params, without answering
// rounds, and returns the raw result (input_required included) or the
// JSON-RPC error as an *mrtr.Error.
func (c *Client) Call(ctx context.Context, method string, params map[string]any) (json.RawMessage, error) {
	res, err := c.send(ctx, method, params, nil)
	if err != nil {
		return nil, err
	}
	return res, nil
}

func (c *Client) newRequest(method string, params map[string]any) *Request {
	r := NewRequest(method, params).WithCapabilities(c.caps)
	for k, v := range c.meta {
		r.WithMeta(k, v)
	}
	return r
}

// send serves one request, collecting its notifications into ex.
func (c *Client) send(ctx context.Context, method string, params map[string]any, ex *Exchange) (json.RawMessage, error) {
	in := c.newRequest(method, params).Inbound(c.principal)
	var mu sync.Mutex
	in.Emit = func(n []byte) error {
		var note Notification
		if err := json.Unmarshal(n, &note); err != nil {
			return err
		}
		if ex != nil {
			mu.Lock()
			ex.Notifications = append(ex.Notifications, note)
			mu.Unlock()
		}
		return nil
	}
	resp := c.srv.Handle(ctx, in)
	if resp == nil {
		return nil, errors.New("mrtrtest: the server gave no response to a request")
	}
	if resp.Error != nil {
		return nil, resp.Error
	}
	return resp.Result, nil
}

// inputRequired is an input_required result as the client reads it.
type inputRequired struct {
	ResultType    string `json:"resultType"`
	InputRequests map[string]struct {
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	} `json:"inputRequests"`
	RequestState *string `json:"requestState"`
}

// run calls method until it completes, answering its rounds, and decodes
// the complete result into out.
func (c *Client) run(ctx context.Context, method string, params map[string]any, out any, ex *Exchange) error {
	for {
		res, err := c.send(ctx, method, params, ex)
		if err != nil {
			return err
		}
		var ir inputRequired
		if err := json.Unmarshal(res, &ir); err != nil {
			return fmt.Errorf("mrtrtest: result does not decode: %w", err)
		}
		switch ir.ResultType {
		case wire.ResultComplete:
			if err := json.Unmarshal(res, out); err != nil {
				return fmt.Errorf("mrtrtest: result does not decode: %w", err)
			}
			return nil
		case wire.ResultInputRequired:
		default:
			return fmt.Errorf("mrtrtest: unknown resultType %q", ir.ResultType)
		}
		if ex.Rounds >= c.maxRounds {
			return ErrTooManyRounds
		}
		ex.Rounds++
		keys := make([]string, 0, len(ir.InputRequests))
		for k := range ir.InputRequests {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		ex.Asked = append(ex.Asked, keys)
		answers := make(map[string]any, len(keys))
		for _, k := range keys {
			q := ir.InputRequests[k]
			a, err := c.answer(ctx, q.Method, q.Params)
			if err != nil {
				return fmt.Errorf("mrtrtest: answering %q (%s): %w", k, q.Method, err)
			}
			answers[k] = a
		}
		next := make(map[string]any, len(params)+2)
		for k, v := range params {
			if k != "inputResponses" && k != "requestState" {
				next[k] = v
			}
		}
		next["inputResponses"] = answers
		if ir.RequestState != nil {
			next["requestState"] = *ir.RequestState
		}
		params = next
	}
}

// answer answers one embedded request with the Client's functions.
func (c *Client) answer(ctx context.Context, method string, params json.RawMessage) (any, error) {
	switch method {
	case wire.MethodCreateMessage:
		if c.sampling == nil {
			return nil, ErrUnanswered
		}
		var r mrtr.SamplingRequest
		if err := json.Unmarshal(params, &r); err != nil {
			return nil, err
		}
		return c.sampling(ctx, &r)
	case wire.MethodElicit:
		if c.elicit == nil {
			return nil, ErrUnanswered
		}
		var r mrtr.ElicitRequest
		if err := json.Unmarshal(params, &r); err != nil {
			return nil, err
		}
		return c.elicit(ctx, &r)
	case wire.MethodListRoots:
		if c.roots == nil {
			return nil, ErrUnanswered
		}
		return c.roots(ctx)
	}
	return nil, fmt.Errorf("%w: unknown method %q", ErrUnanswered, method)
}
