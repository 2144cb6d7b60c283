package streamablehttp

import (
	"net/http"
	"strings"

	"github.com/mrtrkit/mrtrkit/mrtr"
)

// This file is the transport's whole mapping of answers to HTTP statuses:
// every status the package writes is decided here, and the code that
// writes an answer names a refusal or a status of this file. (The
// handlers served beside the endpoint, such as oauth.MetadataHandler,
// decide their own.)

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
		return statusResult
	case len(e.Scopes()) > 0:
		return http.StatusForbidden
	case e.Limit() == mrtr.CallerLimit || e.Limit() == mrtr.ServerLimit:
		return loadStatus(e.Limit())
	case e.Code == mrtr.CodeMethodNotFound:
		return http.StatusNotFound
	}
	return http.StatusBadRequest
}

// answerStatus returns the status of a plain JSON answer carrying resp's
// error e (nil for a result), and the WWW-Authenticate challenge it
// carries, if any: statusOf's status, except that a 403 for insufficient
// scope carries the scopes' challenge naming resourceMetadata (RFC 6750
// section 3, RFC 9728 section 5.1), and that inBand (the initialize
// era's rule for everything but session and authorization problems)
// answers every other error 200.
func answerStatus(e *mrtr.Error, inBand bool, resourceMetadata string) (status int, challenge string) {
	switch {
	case e != nil && len(e.Scopes()) > 0:
		return statusOf(e), scopeChallenge(e.Scopes(), resourceMetadata)
	case inBand:
		return statusResult, ""
	}
	return statusOf(e), ""
}

// loadStatus is the status of a refusal for load: 429 when the caller's
// share is used up (mrtr.CallerLimit), 503 when the server is full.
func loadStatus(l mrtr.Limit) int {
	if l == mrtr.CallerLimit {
		return http.StatusTooManyRequests
	}
	return http.StatusServiceUnavailable
}

// isLoadStatus reports whether status refuses a request for load, so
// that its HTTP/1 connection is closed (ConnLimit).
func isLoadStatus(status int) bool {
	return status == http.StatusTooManyRequests || status == http.StatusServiceUnavailable
}

// The statuses of answers that are not one of the refusals below.
const (
	// statusResult carries a result, or an error that travels in-band.
	statusResult = http.StatusOK
	// statusStream opens an event stream, whatever its events carry.
	statusStream = http.StatusOK
	// statusAccepted takes a notification or a client's answer, with no
	// body.
	statusAccepted = http.StatusAccepted
	// statusEnded answers the DELETE that ends a session of the
	// initialize era.
	statusEnded = http.StatusNoContent
	// statusPreflight answers a CORS preflight of an allowed origin.
	statusPreflight = http.StatusNoContent
	// statusMalformed carries the error of a body that is not one
	// JSON-RPC message (mrtr.ParseMessage's -32700 or -32600).
	statusMalformed = http.StatusBadRequest
	// statusBusy refuses a request, with Retry-After, for which there was
	// no room: in the budget of bytes in flight (busyError), or on a
	// connection over the cap (ConnLimit).
	statusBusy = http.StatusServiceUnavailable
	// statusReady and statusNotReady answer the probes (Liveness,
	// Readiness).
	statusReady    = http.StatusOK
	statusNotReady = http.StatusServiceUnavailable
)

// The transport's own refusals, before a message reaches the server: each
// is a -32600 JSON-RPC error with the status that names the problem.
var (
	refuseForbidden     = refusal{http.StatusForbidden, "Forbidden"}
	refuseMethod        = refusal{http.StatusMethodNotAllowed, "Method not allowed"}
	refuseUnauthorized  = refusal{http.StatusUnauthorized, "Unauthorized"}
	refuseTooLarge      = refusal{http.StatusRequestEntityTooLarge, "Request body too large"}
	refuseTimeout       = refusal{http.StatusRequestTimeout, "Request timeout: the body did not arrive in time"}
	refuseUnreadable    = refusal{http.StatusBadRequest, "Invalid request: the body could not be read"}
	refuseMediaType     = refusal{http.StatusUnsupportedMediaType, "Unsupported media type: Content-Type must be application/json"}
	refuseNotAcceptable = refusal{http.StatusNotAcceptable, "Not acceptable: Accept must allow both application/json and text/event-stream"}
	refuseNotFound      = refusal{http.StatusNotFound, "Not found: no MCP endpoint at this path"}
	refuseUnclaimed     = refusal{http.StatusBadRequest, "Invalid request: no protocol version served here handles this request"}
	refuseResponse      = refusal{http.StatusBadRequest, "Invalid request: clients do not send responses in this protocol version"}
)

// The refusals of the initialize era's sessions (era_2025.go).
var (
	refuseNoSession      = refusal{http.StatusBadRequest, "Invalid request: the Mcp-Session-Id header is required; send initialize first"}
	refuseSessionHeaders = refusal{http.StatusBadRequest, "Invalid request: more than one Mcp-Session-Id header"}
	refuseUnknownSession = refusal{http.StatusNotFound, "Session not found: initialize a new session"}
	refuseBusy           = refusal{http.StatusServiceUnavailable, "Too many sessions: retry later"}
	refuseCallerSessions = refusal{http.StatusTooManyRequests, "Too many sessions for this caller: end one (DELETE) or retry later"}
	refuseStoreDown      = refusal{http.StatusServiceUnavailable, "Service unavailable: the shared session store cannot be reached; retry later"}
	refuseReinitialize   = refusal{http.StatusBadRequest, "Invalid request: initialize opens a session; send it without Mcp-Session-Id"}
	refuseLegacyVersion  = refusal{http.StatusBadRequest, "Invalid request: MCP-Protocol-Version is not the session's version"}
	refuseUnknownVersion = refusal{http.StatusBadRequest, "Invalid request: unsupported MCP-Protocol-Version"}
	refuseAcceptStream   = refusal{http.StatusNotAcceptable, "Not acceptable: Accept must allow text/event-stream"}
	refuseInternal       = refusal{http.StatusInternalServerError, "Internal error"}
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
