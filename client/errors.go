package client

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// Error codes of MCP a client acts on.
const (
	CodeMethodNotFound     = -32601
	CodeInvalidParams      = -32602
	CodeHeaderMismatch     = -32020
	CodeMissingCapability  = -32021
	CodeUnsupportedVersion = -32022
)

// Sentinel errors, matched with errors.Is against what a call returns.
var (
	// ErrTooManyRounds: the server kept answering input_required past the
	// client's round limit (WithMaxRounds).
	ErrTooManyRounds = errors.New("the server kept asking for input past the client's round limit")
	// ErrUnanswered: the server asked a question the client has no
	// function for.
	ErrUnanswered = errors.New("no function answers this input request")
	// ErrClosed: the Client was closed.
	ErrClosed = errors.New("client closed")
	// ErrInsecureToken: a bearer token would have gone over plain http to
	// a host that is not loopback.
	ErrInsecureToken = errors.New("refusing to send a token over plain http to a non-loopback host")
)

// RPCError is a JSON-RPC error object a server answered with.
type RPCError struct {
	Code    int             `json:"code"`           // the JSON-RPC error code, such as -32602
	Message string          `json:"message"`        // what the server said
	Data    json.RawMessage `json:"data,omitempty"` // its details, verbatim
}

// Error renders the code, the message and the data, clipped.
func (e *RPCError) Error() string {
	s := fmt.Sprintf("server error %d: %s", e.Code, clip(e.Message, 300))
	if len(e.Data) > 0 && string(e.Data) != "null" {
		s += " (data: " + clip(string(e.Data), 300) + ")"
	}
	return s
}

// Error is what a Client's call returns when it fails: which server,
// which method, which input-required round, and the cause, which is an
// *RPCError when the server answered with a JSON-RPC error.
type Error struct {
	// Server is the server's URL, or the command line of a subprocess.
	Server string
	// Method is the MCP method of the call, such as "tools/call".
	Method string
	// Name is the tool or prompt name, or the resource URI, when the
	// method has one.
	Name string
	// TaskID is the task the failure concerns, for the methods of the
	// Tasks extension and a call that runs as a task ("" otherwise).
	TaskID string
	// Round is the input-required round the call was in: 0 for the first
	// request, n after the client answered n rounds (of the task, for a
	// failure that concerns one).
	Round int
	// HTTPStatus is the HTTP status of the failed exchange (0 when there
	// was none, as over stdio).
	HTTPStatus int
	// Err is the cause.
	Err error
}

// Error renders the server, the method and its target, the task, the
// round, the HTTP status and the cause in one line.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("mcp client: ")
	b.WriteString(e.Server)
	b.WriteString(": ")
	b.WriteString(e.Method)
	if e.Name != "" {
		fmt.Fprintf(&b, " %q", clip(e.Name, 80))
	}
	if e.TaskID != "" {
		fmt.Fprintf(&b, " task %q", clip(e.TaskID, 80))
	}
	if e.Round > 0 {
		fmt.Fprintf(&b, " (round %d)", e.Round+1)
	}
	if e.HTTPStatus != 0 {
		fmt.Fprintf(&b, ": HTTP %d", e.HTTPStatus)
	}
	b.WriteString(": ")
	b.WriteString(e.Err.Error())
	return b.String()
}

// Unwrap returns the cause, for errors.Is and errors.As.
func (e *Error) Unwrap() error { return e.Err }

// CodeOf returns the JSON-RPC error code in err's chain, or 0 when the
// server did not answer with a JSON-RPC error.
func CodeOf(err error) int {
	var r *RPCError
	if errors.As(err, &r) {
		return r.Code
	}
	return 0
}

// clip cuts s to at most n bytes at a rune boundary, so that what a
// server sends cannot make an error message grow without bound.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n] + "..."
}
