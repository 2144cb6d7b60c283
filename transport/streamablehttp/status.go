package streamablehttp

import (
	"net/http"
	"strings"

	"github.com/mrtrkit/mrtrkit/mrtr"
)

// This file is the transport's whole mapping of answers to HTTP statuses.

// statusOf returns the status that carries a response whose error is e
// (nil for a result): 200 for a result and for an error about the
// method's params or its execution, which travels in-band; for an error
// about the request as a whole (mrtr.Error.Envelope), 429 or 503 for a
// refusal for load (mrtr.Error.Limit: the caller's share, or the whole
// server), 403 for a caller whose token lacks a scope the target requires
// (mrtr.Error.Scopes), 404 for -32601 and 400 for the rest.
func statusOf(e *mrtr.Error) int {
	switch {
	case e == nil || !e.Envelope():
		return http.StatusOK
	case len(e.Scopes()) > 0:
		return http.StatusForbidden
	case e.Limit() == mrtr.CallerLimit:
		return http.StatusTooManyRequests
	case e.Limit() == mrtr.ServerLimit:
		return http.StatusServiceUnavailable
	case e.Code == mrtr.CodeMethodNotFound:
		return http.StatusNotFound
	}
	return http.StatusBadRequest
}

// The transport's own refusals, before a message reaches the server: each
// is a -32600 JSON-RPC error with the status that names the problem.
var (
	refuseForbidden     = refusal{http.StatusForbidden, "Forbidden"}
	refuseMethod        = refusal{http.StatusMethodNotAllowed, "Method not allowed"}
	refuseUnauthorized  = refusal{http.StatusUnauthorized, "Unauthorized"}
	refuseTooLarge      = refusal{http.StatusRequestEntityTooLarge, "Request body too large"}
	refuseUnreadable    = refusal{http.StatusBadRequest, "Invalid request: the body could not be read"}
	refuseMediaType     = refusal{http.StatusUnsupportedMediaType, "Unsupported media type: Content-Type must be application/json"}
	refuseNotAcceptable = refusal{http.StatusNotAcceptable, "Not acceptable: Accept must allow both application/json and text/event-stream"}
	refuseNotFound      = refusal{http.StatusNotFound, "Not found: no MCP endpoint at this path"}
	refuseUnclaimed     = refusal{http.StatusBadRequest, "Invalid request: no protocol version served here handles this request"}
	refuseResponse      = refusal{http.StatusBadRequest, "Invalid request: clients do not send responses in this protocol version"}
)

// refusal is one of the transport's refusals.
type refusal struct {
	status  int
	message string
}

// with returns the refusal with detail added to its message.
func (r refusal) with(detail string) refusal {
	r.message += ": " + detail
	return r
}

func (r refusal) error() *mrtr.Error {
	return mrtr.NewError(mrtr.CodeInvalidRequest, r.message, nil)
}

// internalError is the opaque -32603.
func internalError() *mrtr.Error {
	return mrtr.NewError(mrtr.CodeInternalError, "Internal error", nil)
}

// scopeChallenge is the WWW-Authenticate value of a 403 for insufficient
// scope: the scopes needed and, when known, where the resource's metadata
// is (RFC 6750 section 3, RFC 9728 section 5.1).
func scopeChallenge(scopes []string, resourceMetadata string) string {
	v := `Bearer error="insufficient_scope", scope="` + strings.Join(scopes, " ") + `"`
	if resourceMetadata != "" {
		v += `, resource_metadata="` + resourceMetadata + `"`
	}
	return v
}
