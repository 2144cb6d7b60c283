package state

import (
	"errors"
	"strconv"
)

// Reason says why a token was refused. Reasons exist for logs and metrics
// only: a server should map every refusal to the same client-facing error so
// that a client cannot learn which check failed.
type Reason uint8

const (
	// ReasonMalformed: the token is not a well-formed token of this codec
	// (bad base64, unknown version, wrong algorithm, truncated frame,
	// undecodable claims, or a token issued in the future beyond the clock
	// skew).
	ReasonMalformed Reason = iota + 1
	// ReasonUnknownKey: the token names a key id that is not in the key ring.
	ReasonUnknownKey
	// ReasonIntegrity: authentication failed (wrong key or altered bytes).
	ReasonIntegrity
	// ReasonExpired: the token's expiry plus the clock skew has passed.
	ReasonExpired
	// ReasonPrincipal: the token was issued to a different principal.
	ReasonPrincipal
	// ReasonRequest: the token was issued for a different audience, method,
	// target or arguments.
	ReasonRequest
	// ReasonTooLarge: the token is longer than the configured maximum size.
	ReasonTooLarge
)

// String returns the reason's stable snake_case name, suitable as a metric
// label: "malformed", "unknown_key", "integrity", "expired",
// "principal_mismatch", "request_mismatch" or "too_large".
func (r Reason) String() string {
	switch r {
	case ReasonMalformed:
		return "malformed"
	case ReasonUnknownKey:
		return "unknown_key"
	case ReasonIntegrity:
		return "integrity"
	case ReasonExpired:
		return "expired"
	case ReasonPrincipal:
		return "principal_mismatch"
	case ReasonRequest:
		return "request_mismatch"
	case ReasonTooLarge:
		return "too_large"
	}
	return "reason(" + strconv.Itoa(int(r)) + ")"
}

// Error is the error returned when a token is refused (by Open or
// Claims.Verify) or cannot be produced (by Seal, for ReasonTooLarge).
type Error struct {
	// Reason classifies the refusal.
	Reason Reason
	// Detail is a short human-readable explanation for logs. It never
	// contains key material, claim values or the principal; at most it
	// names a key id, a limit or a size.
	Detail string
}

// Error formats the error as "requestState <reason>: <detail>".
func (e *Error) Error() string {
	if e.Detail == "" {
		return "requestState " + e.Reason.String()
	}
	return "requestState " + e.Reason.String() + ": " + e.Detail
}

// ReasonOf reports the Reason carried by err, looking through wrapped errors.
// The boolean is false when err carries no *Error.
func ReasonOf(err error) (Reason, bool) {
	var e *Error
	if errors.As(err, &e) && e != nil {
		return e.Reason, true
	}
	return 0, false
}

// refuse builds an *Error. Callers pass constant details only.
func refuse(r Reason, detail string) *Error {
	return &Error{Reason: r, Detail: detail}
}
