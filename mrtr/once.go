package mrtr

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"time"
)

// ReasonReplayedRequestState is the data.reason of the refusal of a
// requestState presented a second time to a OnceOnly registration.
const ReasonReplayedRequestState = "replayed_request_state"

// onceMargin is how long past a state's expiry OnceOnly remembers, at
// least, that it was used. A codec accepts a token until its expiry plus
// its clock skew (30 seconds unless state.WithClockSkew sets another), so
// the margin must exceed the skew of the codec in use.
const onceMargin = 5 * time.Minute

// onceTimeout bounds one single-use check.
const onceTimeout = 2 * time.Second

// OnceOnly makes every requestState presented to the tool, prompt or
// resource usable once: before the handler runs, the state is claimed in
// the shared store (WithShare; in memory without it) until it expires,
// and a state presented again, to any replica sharing the store, is
// refused with -32602 "Invalid or expired requestState" and data.reason
// ReasonReplayedRequestState (the Call's StateReason is "replayed"). The
// first round, which carries no state, is not affected.
//
// Use it for a tool whose rounds must not be replayed, such as one that
// acts on a confirmation: a state is otherwise good for any number of
// calls until it expires.
//
// The costs: one round trip to the shared store on every round that
// presents a state, before the handler runs; and the state is used up
// even when the handler then fails, so the client must start the call
// over. When the store cannot answer, the call is refused (fail closed:
// -32603 saying the single-use check could not be made, StateReason
// "store_unavailable"); registrations without OnceOnly are not affected.
func OnceOnly() RegisterOption { return regFunc(func(c *regConfig) { c.once = true }) }

// claimOnce claims the call's presented requestState, whose lifetime
// (expiry less issue time) is lifetime, in the claim store. The record is
// kept for the whole lifetime plus five minutes (onceMargin) from now, which outlasts the
// state whatever this replica's clock says, since the state was issued
// before now (give or take the clock skew the margin covers).
func (s *Server) claimOnce(ctx context.Context, c *call, lifetime time.Duration) *Error {
	var token string
	if json.Unmarshal(c.p.RequestState, &token) != nil {
		// openState has accepted it, so this does not happen.
		return internalError()
	}
	sum := sha256.Sum256([]byte(token))
	key := "mrtrkit/once/" + s.audience + "/" + hex.EncodeToString(sum[:])
	ttl := lifetime + onceMargin
	cctx, cancel := context.WithTimeout(ctx, onceTimeout)
	defer cancel()
	first, err := s.claimBus().Claim(cctx, key, ttl)
	if err != nil {
		c.rec.StateReason = "store_unavailable"
		s.log.Error("mrtr: the single-use check of a requestState could not be made; the call is refused",
			"method", c.method, "target", clip(c.target), "err", err)
		return NewError(CodeInternalError, "The single-use check of requestState could not be made; try again later", nil)
	}
	if !first {
		c.rec.StateReason = "replayed"
		s.log.Info("mrtr: requestState refused", "reason", "replayed", "method", c.method, "target", clip(c.target))
		return &Error{Code: CodeInvalidParams, Message: "Invalid or expired requestState", Data: map[string]string{"reason": ReasonReplayedRequestState}}
	}
	return nil
}
