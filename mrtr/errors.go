package mrtr

import (
	"errors"
	"fmt"
	"net/http"
)

// Code is a JSON-RPC error code. Every error mrtrkit puts on the wire has
// one of the codes below.
type Code int

// The error codes used by MCP 2026-07-28.
const (
	CodeParseError         Code = -32700 // the body is not JSON
	CodeInvalidRequest     Code = -32600 // not a single JSON-RPC request or notification
	CodeMethodNotFound     Code = -32601 // unknown, removed or unadvertised method
	CodeInvalidParams      Code = -32602 // bad _meta, bad params, unknown tool, bad requestState
	CodeInternalError      Code = -32603 // the server failed
	CodeHeaderMismatch     Code = -32020 // an HTTP header disagrees with the body, or is missing
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

// Error is a JSON-RPC error as it goes on the wire. Build one with the
// constructors in this file; HTTPStatus maps it to a status code.
type Error struct {
	// Code is the JSON-RPC error code.
	Code Code `json:"code"`
	// Message is a short description of the error, for people.
	Message string `json:"message"`
	// Data is extra detail the client can act on, such as
	// requiredCapabilities for -32021; nil for none.
	Data any `json:"data,omitempty"`

	// envelope marks a -32602 raised while validating the request envelope
	// (_meta), which is answered with HTTP 400 rather than in-band.
	envelope bool
}

// Error implements the error interface.
func (e *Error) Error() string {
	return fmt.Sprintf("mcp error %d: %s", int(e.Code), e.Message)
}

// HTTPStatus is the one mapping from an error to the HTTP status that
// carries it on Streamable HTTP. Nil means a successful response (200).
func HTTPStatus(err *Error) int {
	if err == nil {
		return http.StatusOK
	}
	switch err.Code {
	case CodeParseError, CodeInvalidRequest, CodeHeaderMismatch, CodeMissingCapability, CodeUnsupportedVersion:
		return http.StatusBadRequest
	case CodeMethodNotFound:
		return http.StatusNotFound
	case CodeInvalidParams:
		if err.envelope {
			return http.StatusBadRequest
		}
	}
	return http.StatusOK
}

// AsError returns err as an *Error when it is (or wraps) one.
func AsError(err error) (*Error, bool) {
	var e *Error
	if errors.As(err, &e) {
		return e, true
	}
	return nil, false
}

// ErrParse reports a body that is not valid JSON.
func ErrParse(detail string) *Error {
	return &Error{Code: CodeParseError, Message: "Parse error: " + detail}
}

// ErrInvalidRequest reports a message that is not one JSON-RPC request or
// notification.
func ErrInvalidRequest(detail string) *Error {
	return &Error{Code: CodeInvalidRequest, Message: "Invalid request: " + detail}
}

// ErrMethodNotFound reports an unknown, removed or unadvertised method.
func ErrMethodNotFound(method string) *Error {
	return &Error{Code: CodeMethodNotFound, Message: "Method not found: " + method}
}

// ErrInvalidParams reports bad method parameters. It is answered in-band
// (HTTP 200). Data may be nil.
func ErrInvalidParams(message string, data any) *Error {
	return &Error{Code: CodeInvalidParams, Message: message, Data: data}
}

// ErrInvalidMeta reports a missing or malformed params._meta: the request
// envelope itself is broken, so it is answered with HTTP 400.
func ErrInvalidMeta(detail string) *Error {
	return &Error{Code: CodeInvalidParams, Message: "Invalid _meta: " + detail, envelope: true}
}

// ErrUnknownTool reports a tools/call for a tool the server does not have.
func ErrUnknownTool(name string) *Error {
	return ErrInvalidParams("Unknown tool: "+name, nil)
}

// ErrUnknownPrompt reports a prompts/get for a prompt the server does not have.
func ErrUnknownPrompt(name string) *Error {
	return ErrInvalidParams("Unknown prompt: "+name, nil)
}

// ErrResourceNotFound reports a resources/read for a URI that does not
// exist, with data {"uri": uri}.
func ErrResourceNotFound(uri string) *Error {
	return ErrInvalidParams("Resource not found", map[string]string{"uri": uri})
}

// ErrInternal reports a server failure. The message is fixed so that no
// detail of the failure reaches the client.
func ErrInternal() *Error {
	return &Error{Code: CodeInternalError, Message: "Internal error"}
}

// ErrHeaderMismatch reports a required HTTP header that is missing,
// malformed, or disagrees with the body.
func ErrHeaderMismatch(detail string) *Error {
	return &Error{Code: CodeHeaderMismatch, Message: "Header mismatch: " + detail}
}

// ErrMissingCapability reports that serving the request needs client
// capabilities the request did not declare. required is keyed like
// ClientCapabilities, for example {"sampling":{}}.
func ErrMissingCapability(required ClientCapabilities) *Error {
	return &Error{
		Code:    CodeMissingCapability,
		Message: "Server requires the " + required.names() + " capability for this request",
		Data:    map[string]any{"requiredCapabilities": required},
	}
}

// ErrUnsupportedVersion reports a protocol version the server does not offer.
func ErrUnsupportedVersion(supported []string, requested string) *Error {
	if supported == nil {
		supported = []string{}
	}
	return &Error{
		Code:    CodeUnsupportedVersion,
		Message: "Unsupported protocol version",
		Data:    map[string]any{"supported": supported, "requested": requested},
	}
}

// Reasons carried in the data of a requestState failure.
const (
	ReasonInvalidRequestState = "invalid_request_state"
	ReasonExpiredRequestState = "expired_request_state"
)

// ErrInvalidState is the single client-facing requestState failure: -32602
// "Invalid or expired requestState" with data.reason set to
// ReasonExpiredRequestState when expired is true, else
// ReasonInvalidRequestState. The precise cause goes to logs only.
func ErrInvalidState(expired bool) *Error {
	reason := ReasonInvalidRequestState
	if expired {
		reason = ReasonExpiredRequestState
	}
	return ErrInvalidParams("Invalid or expired requestState", map[string]string{"reason": reason})
}
