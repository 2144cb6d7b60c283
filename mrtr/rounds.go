package mrtr

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"unsafe"

	"github.com/mrtrkit/mrtrkit/internal/wire"
	"github.com/mrtrkit/mrtrkit/state"
)

// This file is the round pipeline: opening a presented requestState,
// decoding the answers to what it asked, and sealing the next round. The
// Server's round limit is enforced here and only here: once when a state
// is opened, once when one is sealed.

// binding is what a state for this call is bound to. The argument digest
// is computed at most once per request, and only once a presented state
// has proved authentic or a new one is sealed.
func (s *Server) binding(c *call, args json.RawMessage) (state.Binding, *Error) {
	if !c.digested {
		d, err := state.DigestJSON(args)
		if err != nil {
			return state.Binding{}, InvalidParamsError("Invalid arguments: they have no canonical form")
		}
		c.digest, c.digested = d, true
	}
	return state.Binding{Principal: c.in.Principal, Audience: s.audience, Method: c.method, Target: c.target, ArgsDigest: c.digest}, nil
}

// openState verifies a presented requestState against this call: the
// token is authenticated first (a forged one costs no work on the
// arguments), then its round is held to the limit, then its binding is
// checked. Every failure is the same client-facing error; the reason goes
// to the log.
func (s *Server) openState(c *call, args json.RawMessage) (state.Claims, *Error) {
	refuse := func(reason string) (state.Claims, *Error) {
		c.rec.StateReason = reason
		s.log.Info("mrtr: requestState refused", "reason", reason, "method", c.method, "target", clip(c.target))
		return state.Claims{}, InvalidStateError(reason == state.ReasonExpired.String())
	}
	// A Codec keeps nothing of the token it opens, and the request body is
	// not written to while it does: it reads the token where it lies.
	token, ok := wire.StringView(c.p.RequestState)
	if !ok {
		return refuse("not_a_string")
	}
	claims, err := s.codec.Open(token)
	if err != nil {
		reason, _ := state.ReasonOf(err)
		return refuse(reason.String())
	}
	if claims.Round > s.maxRounds {
		return refuse("round_limit")
	}
	want, perr := s.binding(c, args)
	if perr != nil {
		return state.Claims{}, perr
	}
	if err := claims.Verify(want); err != nil {
		reason, _ := state.ReasonOf(err)
		return refuse(reason.String())
	}
	return claims, nil
}

// askedKind returns the kind key was asked as: by the sealed state, else
// by the static asks of the call's registration.
func askedKind(static map[string]kind, sealed map[string]byte, key string) (kind, bool) {
	if v, ok := sealed[key]; ok {
		return kind(v), true
	}
	k, ok := static[key]
	return k, ok
}

// decodeResponses decodes the answers to the asked keys (askedKind) by the
// kind each was asked as. Answers to keys not asked are ignored.
func (s *Server) decodeResponses(raw json.RawMessage, static map[string]kind, sealed map[string]byte, out *Responses) *Error {
	if isAbsent(raw) {
		return nil
	}
	if raw[0] != '{' {
		return InvalidParamsError("inputResponses must be an object")
	}
	total := 0
	var perr *Error
	err := wire.EachMember(raw, func(key string, v json.RawMessage) error {
		total++
		k, ok := askedKind(static, sealed, key)
		if !ok || isAbsent(v) {
			return nil
		}
		if out.has(key) {
			perr = InvalidParamsError(fmt.Sprintf("Invalid input response %s: answered twice", quoted(key)))
			return perr
		}
		ans, err := decodeAnswer(k, v)
		if err != nil {
			perr = InvalidParamsError(fmt.Sprintf("Invalid input response %s: %v", quoted(key), err))
			perr.Data = map[string]string{"key": clip(key)}
			return perr
		}
		out.put(key, ans)
		return nil
	})
	if perr != nil {
		return perr
	}
	if err != nil {
		return InvalidParamsError("inputResponses must be an object")
	}
	if total > out.Len() {
		s.log.Debug("mrtr: ignored input responses to keys that were not asked", "count", total-out.Len())
	}
	return nil
}

// inputRequired gates, seals and renders an input-required result.
func (s *Server) inputRequired(c *call, r *InputRequired, args json.RawMessage, round int) (json.RawMessage, *Error) {
	return s.inputRequiredJournal(c, r, args, round, nil)
}

// inputRequiredJournal is inputRequired for a straight-line run, whose
// State is the encoded journal j.
func (s *Server) inputRequiredJournal(c *call, r *InputRequired, args json.RawMessage, round int, j *journal) (json.RawMessage, *Error) {
	// What the handler embeds is validated first: a malformed request is a
	// server bug whatever the client declared.
	// The map lives only until Seal returns (a Codec keeps nothing), or
	// is copied into a task's capture: take it from the pool.
	asked := askedPool.Get().(map[string]byte)
	defer putAsked(asked)
	// One pass over the questions: check the keys (and, for a raw
	// handler, the questions and the client's capabilities), note each
	// key's kind for the state and collect the keys, sorted once below
	// for the record and the body alike.
	keys := make([]string, 0, len(r.Requests))
	incapable := false
	for key, ir := range r.Requests {
		if key == "" || len(key) > state.MaxAskedKeyLen || strings.HasPrefix(key, reservedKeyPrefix) {
			return nil, s.internal("handler asked with a bad key", fmt.Errorf("input request keys are 1 to %d bytes and do not begin with %q", state.MaxAskedKeyLen, reservedKeyPrefix), c)
		}
		if j == nil { // a straight-line run checked each question when it asked it
			if err := validateInputRequest(ir); err != nil {
				return nil, s.internal("handler asked a malformed question", fmt.Errorf("request %q: %w", key, err), c)
			}
			incapable = incapable || !capable(ir, c.meta.ClientCapabilities)
		}
		asked[key] = byte(ir.inputKind())
		keys = append(keys, key)
	}
	c.stage = StageCapability
	if incapable { // as above: a straight-line run gated each when asked
		return nil, gateCapabilities(r.Requests, c.meta.ClientCapabilities)
	}
	next := round + 1
	if next > s.maxRounds {
		c.stage = StageRoundLimit
		s.log.Error("mrtr: a handler asked past the round limit", "method", c.method, "target", clip(c.target), "round", next, "limit", s.maxRounds)
		return nil, roundLimitError()
	}
	c.stage = StageNone
	if c.capture != nil {
		// A task's run: the questions and the journal stay in the task
		// record, under its bound, rather than going to the client. What
		// the round was built in (a run's scratch, the pooled map) is not
		// the record's: copy it.
		*c.capture = taskCapture{round: next, journal: slices.Clone(r.State), asked: maps.Clone(asked), asks: wireInputRequests(r.Requests)}
		return nil, nil
	}
	b, perr := s.binding(c, args)
	if perr != nil {
		return nil, perr
	}
	if j != nil {
		asked[journalKey] = journalVersion
	}
	claims := state.Claims{
		Principal: b.Principal, Audience: b.Audience, Method: b.Method,
		Target: b.Target, ArgsDigest: b.ArgsDigest, Round: next, Asked: asked, Payload: r.State,
	}
	var token string
	var err error
	if as, ok := s.codec.(state.AppendSealer); ok {
		// The token goes into a pooled buffer that outlives it only until
		// the body is rendered (c.irBody is cleared below).
		tb := resultBufs.Get().(*[]byte)
		defer putResultBuf(tb)
		if *tb, err = as.AppendSeal((*tb)[:0], claims); err == nil {
			token = unsafe.String(unsafe.SliceData(*tb), len(*tb))
		}
	} else {
		token, err = s.codec.Seal(claims)
	}
	if err != nil {
		if reason, _ := state.ReasonOf(err); reason == state.ReasonTooLarge && j != nil {
			return nil, s.journalTooLarge(c, j, err)
		}
		return nil, s.internal("sealing requestState failed", err, c)
	}
	// inputRequests is always present, {} for a load-shedding round: some
	// clients retry a state-only answer only when they see the map.
	slices.Sort(keys)
	c.irBody = inputRequiredBody{requests: r.Requests, keys: keys, token: token}
	c.rec.ResultType = wire.ResultInputRequired
	c.rec.Asked = keys
	out, perr := s.renderCall(c, wire.ResultInputRequired, &c.irBody, nil, nil)
	c.irBody = inputRequiredBody{} // its questions may be a pooled run's
	return out, perr
}

// askedPool holds the maps of asked keys that inputRequiredJournal hands
// to the codec, which keeps nothing it is given. Maps that grew
// past maxPooledAsked entries are left to the garbage collector.
var askedPool = sync.Pool{New: func() any { return make(map[string]byte, 8) }}

const maxPooledAsked = 16

func putAsked(m map[string]byte) {
	if len(m) > maxPooledAsked {
		return
	}
	clear(m)
	askedPool.Put(m)
}
