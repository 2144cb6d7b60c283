package mrtr

import (
	"context"
	"encoding/json"
	"sort"
	"sync/atomic"
)

// Result is what a Handler returns: exactly one of *CallToolResult,
// *GetPromptResult, *ReadResourceResult (complete results) or
// *InputRequired. The wire resultType follows from the type, so a handler
// can neither forge it nor return content and input requests at once.
type Result interface {
	// wire returns the method a complete result answers, its body without
	// resultType and _meta, and the handler's own _meta. ok is false for a
	// nil result; *InputRequired answers no method of its own ("").
	wire() (method string, body any, meta Object, ok bool)
}

// InputRequired asks the client for input before the call can complete.
// The framework checks every request against the client's declared
// capabilities, seals State together with the request's identity and the
// keys asked, and hands both back to the handler on the retry. An empty
// Requests map with no new information is a load-shedding answer: the
// client may simply retry.
type InputRequired struct {
	// Requests are the embedded requests, by key. Keys are chosen by the
	// handler and are what Responses are looked up by on the retry.
	Requests map[string]InputRequest
	// State is the handler's own state for the next round. It is sealed:
	// the client can neither read (with the default AEAD codec) nor change it.
	State []byte
}

func (r *InputRequired) wire() (string, any, Object, bool) { return "", nil, nil, r != nil }

// Ask returns an InputRequired with one request.
func Ask(key string, r InputRequest) *InputRequired {
	return &InputRequired{Requests: map[string]InputRequest{key: r}}
}

// Handler serves tools/call, prompts/get or resources/read. It is called
// again on every retry of a multi-round call, with the verified state and
// answers of the previous round in the Request; it must return a complete
// result of its method's type or an *InputRequired.
//
// A handler may run several times for one logical call, and what it asks
// for is checked against the client's capabilities only after it returns:
// keep side effects after the last question, and consult
// Request.Capabilities before acting when a question might be refused.
//
// An error that is an *Error goes to the client as is; any other error
// becomes -32603 "Internal error" and is logged.
type Handler interface {
	Handle(ctx context.Context, req *Request) (Result, error)
}

// HandlerFunc adapts a function to Handler.
type HandlerFunc func(ctx context.Context, req *Request) (Result, error)

// Handle calls f.
func (f HandlerFunc) Handle(ctx context.Context, req *Request) (Result, error) { return f(ctx, req) }

// Request is one call as a handler sees it. Everything in it has been
// validated; State and Responses have been verified against this request.
type Request struct {
	// Method is "tools/call", "prompts/get" or "resources/read".
	Method string
	// Name is the tool or prompt name; "" for resources/read.
	Name string
	// URI is the resource URI; "" for tools/call and prompts/get.
	URI string
	// Arguments is the call's input as one JSON object: the tool
	// arguments as sent ({} when absent), the prompt arguments, or the
	// values a resource template matched. Tool and prompt arguments have
	// passed the strict door: no two member names of one object are equal
	// ignoring case (as Go's decoding folds them), every number has an
	// exact IEEE 754 double form and every string is valid Unicode, so
	// decoding them into a Go value reads exactly what the sealed state
	// pinned.
	Arguments json.RawMessage
	// PromptArguments are the prompt arguments, for prompts/get.
	PromptArguments map[string]string
	// Vars are the values a resource template's variables matched, for
	// resources/read.
	Vars map[string]string
	// Meta is this request's _meta.
	Meta *Meta
	// Principal is who the transport authenticated ("" when anonymous).
	Principal string
	// Token is what the transport learned of the caller's credentials:
	// scopes, audience, expiry, claims. Nil without an authenticator that
	// gives one.
	Token *TokenInfo
	// Round counts the input-required rounds this call has been through:
	// 0 on the first call, 1 on the first retry, and so on.
	Round int
	// State is the handler's own state from the previous round, verified;
	// nil on the first call.
	State []byte
	// Responses are the client's answers to the previous round's requests.
	Responses Responses

	asked   map[string]byte
	emit    func([]byte) error
	headers map[string]string
	run     atomic.Pointer[run] // this run's asks and memos; nil until the first, or made from the journal
	resumed bool                // run holds what earlier runs of a straight-line handler recorded

	taskPhase uint8 // phaseNone, phaseDetachable or phaseTask (Detach)
}

// Capabilities returns the client capabilities declared on this request.
func (r *Request) Capabilities() ClientCapabilities { return r.Meta.ClientCapabilities }

// Asked returns the keys the previous round asked, as its sealed state
// recorded them, sorted; nil on the first call. Responses holds answers to
// these keys only (and to any StaticAsks).
func (r *Request) Asked() []string {
	if len(r.asked) == 0 {
		return nil
	}
	keys := make([]string, 0, len(r.asked))
	for k := range r.asked {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Progress sends notifications/progress for this request. It does nothing
// when the request carried no progress token.
//
// On Streamable HTTP the first notification turns the response into an
// event stream with status 200, so an error the call ends with afterwards
// (including -32021 for a question the client cannot answer) travels in
// the stream rather than with its own HTTP status: check
// Request.Capabilities before reporting progress when that matters.
func (r *Request) Progress(progress float64, total *float64, message string) error {
	if r.emit == nil || r.Meta == nil || r.Meta.ProgressToken == nil {
		return nil
	}
	p := struct {
		Token    json.RawMessage `json:"progressToken"`
		Progress float64         `json:"progress"`
		Total    *float64        `json:"total,omitempty"`
		Message  string          `json:"message,omitempty"`
	}{r.Meta.ProgressToken, progress, total, message}
	b, err := encodeNotification("notifications/progress", p)
	if err != nil {
		return err
	}
	return r.emit(b)
}

// Log sends notifications/message for this request. It does nothing unless
// the request opted in with a log level at or below level and the server
// advertises the logging capability.
func (r *Request) Log(level LogLevel, logger string, data any) error {
	if r.emit == nil || r.Meta == nil || r.Meta.LogLevel == "" || !level.AtLeast(r.Meta.LogLevel) {
		return nil
	}
	p := struct {
		Level  LogLevel `json:"level"`
		Logger string   `json:"logger,omitempty"`
		Data   any      `json:"data"`
	}{level, logger, data}
	b, err := encodeNotification("notifications/message", p)
	if err != nil {
		return err
	}
	return r.emit(b)
}

// CompletionHandler answers completion/complete.
type CompletionHandler interface {
	Complete(ctx context.Context, req *CompleteRequest) (*Completion, error)
}

// CompletionHandlerFunc adapts a function to CompletionHandler.
type CompletionHandlerFunc func(ctx context.Context, req *CompleteRequest) (*Completion, error)

// Complete calls f.
func (f CompletionHandlerFunc) Complete(ctx context.Context, req *CompleteRequest) (*Completion, error) {
	return f(ctx, req)
}
