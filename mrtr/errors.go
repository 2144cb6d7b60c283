package mrtr

import (
	"errors"
	"fmt"

	"github.com/mrtrkit/mrtrkit/internal/wire"
)

// Code is a JSON-RPC error code. Every error mrtrkit puts on the wire has
// one of the codes below, unless a handler chooses another with NewError.
type Code int

// The error codes used by MCP 2026-07-28.
const (
	CodeParseError         Code = -32700 // the body is not JSON
	CodeInvalidRequest     Code = -32600 // not a single JSON-RPC request or notification
	CodeMethodNotFound     Code = -32601 // unknown, removed or unadvertised method
	CodeInvalidParams      Code = -32602 // bad _meta, bad params, unknown tool, bad requestState
	CodeInternalError      Code = -32603 // the server failed
	CodeHeaderMismatch     Code = -32020 // a transport header disagrees with the body, or is missing
	CodeMissingCapability  Code = -32021 // the request lacks a client capability the server needs
	CodeUnsupportedVersion Code = -32022 // the protocol version is not offered
)

// String returns the code's name.
func (c Code) String() string {
	switch c {
	case CodeParseError:
		return "parse_error"
	case CodeInvalidRequest:
		return "invalid_request"
	case CodeMethodNotFound:
		return "method_not_found"
	case CodeInvalidParams:
		return "invalid_params"
	case CodeInternalError:
		return "internal_error"
	case CodeHeaderMismatch:
		return "header_mismatch"
	case CodeMissingCapability:
		return "missing_required_client_capability"
	case CodeUnsupportedVersion:
		return "unsupported_protocol_version"
	}
	return fmt.Sprintf("code(%d)", int(c))
}

// Error is a JSON-RPC error as it goes on the wire. Handlers build one
// with NewError or the helpers below; a handler error that is not an
// *Error reaches the client as -32603 "Internal error".
type Error struct {
	// Code is the JSON-RPC error code.
	Code Code `json:"code"`
	// Message is a short description of the error, for people.
	Message string `json:"message"`
	// Data is extra detail the client can act on, such as
	// requiredCapabilities for -32021; nil for none.
	Data any `json:"data,omitempty"`

	// envelope marks a -32602 raised while validating params._meta.
	envelope bool
	// limit marks a refusal for load.
	limit Limit
	// scopes are the scopes a refusal for insufficient scope asks for.
	scopes []string
}

// NewError returns an error with the given code, message and data (nil
// for none).
func NewError(code Code, message string, data any) *Error {
	return &Error{Code: code, Message: message, Data: data}
}

// Error implements the error interface.
func (e *Error) Error() string {
	return fmt.Sprintf("mcp error %d: %s", int(e.Code), e.Message)
}

// Envelope reports whether the error is about the request as a whole (it
// could not be parsed, names no method the server serves, carries a bad
// protocol version, _meta or mirrored header, or needs a capability the
// client did not declare) rather than about the method's params or its
// execution. Transports answer envelope errors outside the normal result
// channel: Streamable HTTP with a 4xx status (404 for -32601, 400 for the
// rest), where other errors travel in-band with 200.
func (e *Error) Envelope() bool {
	if e.limit != NoLimit || len(e.scopes) > 0 {
		return true
	}
	switch e.Code {
	case CodeParseError, CodeInvalidRequest, CodeMethodNotFound, CodeHeaderMismatch, CodeMissingCapability, CodeUnsupportedVersion:
		return true
	case CodeInvalidParams:
		return e.envelope
	}
	return false
}

// Limit says which limit refused the request, when the error is a
// refusal for load: NoLimit otherwise. Such a refusal is an envelope
// error too.
func (e *Error) Limit() Limit { return e.limit }

// Scopes returns the scopes the request lacked, when the error refuses a
// caller whose token does not grant what the target requires
// (RequireScopes): a transport answers it as an authorization failure
// (HTTP 403 with error="insufficient_scope" on Streamable HTTP). Nil
// otherwise.
func (e *Error) Scopes() []string { return e.scopes }

// checkScopes refuses a token that does not grant every scope of need.
func checkScopes(t *TokenInfo, need []string) *Error {
	for _, sc := range need {
		if !t.HasScope(sc) {
			return &Error{Code: CodeInvalidRequest, Message: "Forbidden: insufficient scope", scopes: append([]string(nil), need...)}
		}
	}
	return nil
}

// CodeOf returns the code of the *Error in err's chain: CodeInternalError
// when there is none (that is how the Server answers such an error), 0 for
// a nil err.
func CodeOf(err error) Code {
	if err == nil {
		return 0
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return CodeInternalError
}

// InvalidParamsError returns a -32602 error: the request's params are
// wrong in a way the client can fix. It is answered in-band.
func InvalidParamsError(message string) *Error {
	return &Error{Code: CodeInvalidParams, Message: message}
}

// ResourceNotFoundError returns the error for a resources/read of a URI
// that does not exist: -32602 with data {"uri": uri}.
func ResourceNotFoundError(uri string) *Error {
	return &Error{Code: CodeInvalidParams, Message: "Resource not found", Data: map[string]string{"uri": uri}}
}

// Reasons carried in the data of a requestState refusal.
const (
	ReasonInvalidRequestState = "invalid_request_state"
	ReasonExpiredRequestState = "expired_request_state"
)

// InvalidStateError returns the one client-facing requestState refusal:
// -32602 "Invalid or expired requestState" with data.reason set to
// ReasonExpiredRequestState when expired is true, else
// ReasonInvalidRequestState. The Server answers every state it cannot
// accept with it, the precise cause going to its log only; a handler that
// finds an authentic state it cannot resume (one sealed by an older
// version of itself, say) may answer with it too.
func InvalidStateError(expired bool) *Error {
	reason := ReasonInvalidRequestState
	if expired {
		reason = ReasonExpiredRequestState
	}
	return &Error{Code: CodeInvalidParams, Message: "Invalid or expired requestState", Data: map[string]string{"reason": reason}}
}

// The ladder's own errors.

func parseError(detail string) *Error {
	return &Error{Code: CodeParseError, Message: "Parse error: " + detail}
}

func invalidRequest(detail string) *Error {
	return &Error{Code: CodeInvalidRequest, Message: "Invalid request: " + detail}
}

func methodNotFound(method string) *Error {
	return &Error{Code: CodeMethodNotFound, Message: "Method not found: " + quoted(method)}
}

// invalidMeta reports a missing or malformed params._meta: the request
// envelope itself is broken.
func invalidMeta(detail string) *Error {
	return &Error{Code: CodeInvalidParams, Message: "Invalid _meta: " + detail, envelope: true}
}

func headerMismatch(detail string) *Error {
	return &Error{Code: CodeHeaderMismatch, Message: "Header mismatch: " + detail}
}

// unknownTool names the tool asked for and the nearest the caller sees.
func unknownTool(name string, near []string) *Error {
	return InvalidParamsError("Unknown tool: " + quoted(name) + didYouMean(near))
}

// unknownPrompt names the prompt asked for and the nearest the caller sees.
func unknownPrompt(name string, near []string) *Error {
	return InvalidParamsError("Unknown prompt: " + quoted(name) + didYouMean(near))
}

// ReasonRoundLimit is the data.reason of the -32603 that ends a call
// whose handler asked for one round more than the Server's limit.
const ReasonRoundLimit = "round_limit"

func roundLimitError() *Error {
	return &Error{Code: CodeInternalError, Message: "Internal error", Data: map[string]string{"reason": ReasonRoundLimit}}
}

// internalError is the opaque -32603: no detail of the failure reaches
// the client.
func internalError() *Error {
	return &Error{Code: CodeInternalError, Message: "Internal error"}
}

// missingCapability reports that serving the request needs client
// capabilities the request did not declare. required is keyed like
// ClientCapabilities, for example {"sampling":{}}.
func missingCapability(required ClientCapabilities) *Error {
	return &Error{
		Code:    CodeMissingCapability,
		Message: "Server requires the " + required.names() + " capability for this request",
		Data:    map[string]any{"requiredCapabilities": required},
	}
}

func unsupportedVersion(supported []string, requested string) *Error {
	if supported == nil {
		supported = []string{}
	}
	return &Error{
		Code:    CodeUnsupportedVersion,
		Message: "Unsupported protocol version",
		Data:    map[string]any{"supported": supported, "requested": clip(requested)},
	}
}

// quoted renders a value the caller sent for an error message: as is
// when it is short visible ASCII, else clipped and in Go quotes, so that no
// control character or line break of it reaches a message or a log line.
func quoted(s string) string {
	plain := s != "" && len(s) <= wire.MaxEcho
	for i := 0; plain && i < len(s); i++ {
		plain = s[i] > ' ' && s[i] < 0x7f && s[i] != '"' && s[i] != '\\'
	}
	if plain {
		return s
	}
	return fmt.Sprintf("%q", clip(s))
}
