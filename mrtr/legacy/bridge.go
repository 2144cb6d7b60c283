package legacy

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mrtrkit/mrtrkit/internal/wire"
	"github.com/mrtrkit/mrtrkit/mrtr"
)

// This file is the round bridge: it serves a legacy tools/call,
// prompts/get or resources/read as an in-process modern client of the
// Server, and turns every input_required into real requests to the
// client, round after round.

// modernRequest builds the modern form of a legacy request: the client's
// params as they are, less its _meta, plus the round's answers and state,
// plus a _meta that says what the session settled.
//
// Every piece of it was read before: the client's members and answers by
// the host's ParseMessage, the state from the Server's own output. So the
// message is made from its params directly rather than parsed again,
// unless a member name needed escaping (then ParseMessage judges it, as it
// judges any message).
func (s *Session) modernRequest(msg *mrtr.Message, answers json.RawMessage, state json.RawMessage) (*mrtr.Message, error) {
	b := make([]byte, 0, len(msg.Params)+len(answers)+len(state)+256)
	b = append(b, '{')
	var clientMeta json.RawMessage
	plain := true
	if len(msg.Params) > 0 {
		err := eachMember(msg.Params, func(name []byte, v json.RawMessage) {
			switch string(name) {
			case "_meta":
				clientMeta = v
			case "inputResponses", "requestState", "task":
				// The bridge's own, or no concern of the modern server.
			default:
				plain = plain && wire.Plain(name)
				b = appendMember(b, name, v)
			}
		})
		if err != nil {
			return nil, err
		}
	}
	if answers != nil {
		b = append(b, `"inputResponses":`...)
		b = append(b, answers...)
		b = append(b, ',')
	}
	if state != nil {
		b = append(b, `"requestState":`...)
		b = append(b, state...)
		b = append(b, ',')
	}
	b = append(b, `"_meta":`...)
	b, metaPlain := s.appendMeta(b, clientMeta)
	b = append(b, '}')
	if plain && metaPlain {
		return &mrtr.Message{ID: msg.ID, Method: msg.Method, Params: b}, nil
	}
	env := make([]byte, 0, len(b)+64)
	env = append(env, `{"jsonrpc":"2.0","id":`...)
	env = append(env, msg.ID.String()...)
	env = append(env, `,"method":`...)
	env = strconv.AppendQuote(env, msg.Method)
	env = append(env, `,"params":`...)
	env = append(env, b...)
	env = append(env, '}')
	m, _, perr := mrtr.ParseMessage(env)
	if perr != nil {
		return nil, perr
	}
	return m, nil
}

func appendMember(b []byte, name []byte, v json.RawMessage) []byte {
	b = appendQuote(b, name)
	b = append(b, ':')
	b = append(b, v...)
	return append(b, ',')
}

// appendMeta renders the _meta of a modern request for this session: the
// modern version, the session's capabilities, client info and log level,
// and of the client's own _meta its progress token and every key the
// protocol does not reserve. plain reports that every key of the client's
// is plain (wire.Plain).
func (s *Session) appendMeta(b []byte, clientMeta json.RawMessage) (_ []byte, plain bool) {
	plain = true
	b = append(b, `{"`+wire.MetaProtocolVersion+`":`...)
	b = strconv.AppendQuote(b, s.e.modern)
	b = append(b, `,"`+wire.MetaClientCapabilities+`":`...)
	b = appendCaps(b, s.fixed.Caps)
	if s.fixed.Client != nil {
		b = append(b, `,"`+wire.MetaClientInfo+`":`...)
		b = append(b, *s.fixed.Client...)
	}
	s.x.mu.Lock()
	level := s.x.level
	s.x.mu.Unlock()
	if level != "" {
		b = append(b, `,"`+wire.MetaLogLevel+`":`...)
		b = strconv.AppendQuote(b, string(level))
	}
	if len(clientMeta) > 0 && clientMeta[0] == '{' {
		_ = eachMember(clientMeta, func(name []byte, v json.RawMessage) {
			if string(name) != wire.MetaProgressToken && reserved(name) {
				return
			}
			plain = plain && wire.Plain(name)
			b = append(b, ',')
			b = appendQuote(b, name)
			b = append(b, ':')
			b = append(b, v...)
		})
	}
	return append(b, '}'), plain
}

// reserved reports whether a _meta key belongs to MCP itself: its prefix's
// second label is modelcontextprotocol or mcp (io.modelcontextprotocol/,
// dev.mcp/). A client of the initialize era has no business sending those,
// and a modern server must not read them as if it had.
func reserved(key []byte) bool {
	slash := bytes.IndexByte(key, '/')
	if slash < 0 {
		return false
	}
	prefix := key[:slash]
	dot := bytes.IndexByte(prefix, '.')
	if dot < 0 {
		return false
	}
	second := prefix[dot+1:]
	if end := bytes.IndexByte(second, '.'); end >= 0 {
		second = second[:end]
	}
	return string(second) == "modelcontextprotocol" || string(second) == "mcp"
}

// appendCaps renders the session's client capabilities in the modern shape.
func appendCaps(b []byte, c uint8) []byte {
	b = append(b, '{')
	first := true
	sep := func() {
		if !first {
			b = append(b, ',')
		}
		first = false
	}
	if c&capSampling != 0 {
		sep()
		b = append(b, `"sampling":{`...)
		switch {
		case c&capSamplingTools != 0 && c&capSamplingContext != 0:
			b = append(b, `"context":{},"tools":{}`...)
		case c&capSamplingTools != 0:
			b = append(b, `"tools":{}`...)
		case c&capSamplingContext != 0:
			b = append(b, `"context":{}`...)
		}
		b = append(b, '}')
	}
	if c&(capElicitForm|capElicitURL) != 0 {
		sep()
		b = append(b, `"elicitation":{`...)
		switch {
		case c&capElicitForm != 0 && c&capElicitURL != 0:
			b = append(b, `"form":{},"url":{}`...)
		case c&capElicitURL != 0:
			b = append(b, `"url":{}`...)
		default:
			b = append(b, `"form":{}`...)
		}
		b = append(b, '}')
	}
	if c&capRoots != 0 {
		sep()
		b = append(b, `"roots":{}`...)
	}
	return append(b, '}')
}

// serve sends one modern request to the Server, forwarding its
// notifications to out.
func (s *Session) serve(ctx context.Context, m *mrtr.Message, out Sender) *mrtr.Response {
	in := &mrtr.Inbound{Message: m, Principal: s.principal, Token: s.token, Headers: s.headers, Peer: s.peer}
	if out != nil {
		in.Emit = out.Send
	}
	return s.e.srv.Handle(ctx, in)
}

// pass serves a method that is the same in both eras (the lists,
// completion/complete), translating the answer.
func (s *Session) pass(ctx context.Context, msg *mrtr.Message, out Sender) *mrtr.Response {
	s.refreshOrWarn(ctx) // the log level another replica recorded
	m, err := s.modernRequest(msg, nil, nil)
	if err != nil {
		return failure(msg, mrtr.CodeInvalidParams, "Invalid params: "+err.Error())
	}
	return s.translate(msg, s.serve(ctx, m, out))
}

// translate turns the Server's answer into what a client of the
// initialize era expects: a result without resultType, cache hints or the
// server's identity in _meta, or an error with a code of that era.
func (s *Session) translate(msg *mrtr.Message, resp *mrtr.Response) *mrtr.Response {
	if resp == nil {
		return failure(msg, mrtr.CodeInternalError, "Internal error")
	}
	if resp.Error != nil {
		return &mrtr.Response{ID: msg.ID, Error: legacyError(resp.Error)}
	}
	r, err := stripResult(resp.Result)
	if err != nil {
		s.e.log.Error("legacy: a result does not translate", "method", msg.Method, "err", err)
		return failure(msg, mrtr.CodeInternalError, "Internal error")
	}
	return result(msg, r)
}

// inputRequired is an input_required result as the bridge reads it: the
// embedded requests in the order of their keys, and the state verbatim.
type inputRequired struct {
	asks  []legAsk
	state json.RawMessage
}

// legAsk is one request embedded in an input_required result.
type legAsk struct {
	key    string
	method string
	params json.RawMessage
}

// errUnreadableResult reports a result of the Server the bridge cannot read.
var errUnreadableResult = errors.New("legacy: a result of the server does not read")

// readResult reads a result of the Server in one pass over its members,
// reporting whether it is input_required; only then are its embedded
// requests read. The result is the Server's own output, so its names are
// matched exactly.
func readResult(r json.RawMessage) (ir inputRequired, input bool, err error) {
	var rtype, asks json.RawMessage
	err = wire.EachMemberBytes(r, func(name []byte, v json.RawMessage) error {
		switch string(name) {
		case "resultType":
			rtype = v
		case "inputRequests":
			asks = v
		case "requestState":
			ir.state = v
		}
		return nil
	})
	if err != nil {
		return ir, false, err
	}
	t, ok := wire.Interned(rtype, resultTypes)
	if rtype != nil && !ok {
		return ir, false, errUnreadableResult
	}
	if t != wire.ResultInputRequired {
		return ir, false, nil
	}
	if len(asks) == 0 || string(asks) == "null" {
		return ir, true, nil
	}
	err = wire.EachMember(asks, func(key string, v json.RawMessage) error {
		a := legAsk{key: key}
		if string(v) != "null" {
			var bad bool
			if err := wire.EachMemberBytes(v, func(name []byte, v json.RawMessage) error {
				switch string(name) {
				case "method":
					var ok bool
					if a.method, ok = wire.Interned(v, legMethods); !ok {
						bad = true
					}
				case "params":
					a.params = v
				}
				return nil
			}); err != nil || bad {
				return errUnreadableResult
			}
		}
		ir.asks = append(ir.asks, a)
		return nil
	})
	if err != nil {
		return inputRequired{}, false, err
	}
	slices.SortFunc(ir.asks, func(a, b legAsk) int { return strings.Compare(a.key, b.key) })
	return ir, true, nil
}

// resultTypes are the result types of the Server, read without a copy.
var resultTypes = []string{wire.ResultComplete, wire.ResultInputRequired}

// legMethods are the methods a handler embeds, read without a copy.
var legMethods = []string{wire.MethodListRoots, wire.MethodElicit, wire.MethodCreateMessage}

// bridge serves a tools/call, prompts/get or resources/read: it calls the
// handler through the Server as a modern client would, and while the
// answer is input_required it sends every embedded request to the client
// as a real request on out, waits for the answers and retries with exactly
// that round's answers and the state byte for byte, as many rounds as the
// handler needs, up to the Server's round limit.
func (s *Session) bridge(ctx context.Context, msg *mrtr.Message, out Sender) *mrtr.Response {
	key := idKey(json.RawMessage(msg.ID.String()))
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	// The caller's count first: the Engine's lock is never taken under
	// the session's.
	if !s.e.startCall(s.x.owner) {
		return s.refuseCall(msg, refusedOwner)
	}
	defer s.e.endCall(s.x.owner)
	if r := s.addCall(msg, key, cancel); r != 0 {
		return s.refuseCall(msg, r)
	}
	defer s.dropCall(key)
	ctx, stop := context.WithTimeoutCause(ctx, s.e.callLimit, errCallTimeout)
	defer stop()
	s.refreshOrWarn(ctx) // the log level another replica recorded
	return s.rounds(ctx, msg, out)
}

// Why a bridged call is refused before it starts.
const (
	refusedOwner = 1 + iota
	refusedClosed
	refusedSession
	refusedDuplicate
)

// addCall registers the call of id key with the session, its cancel to
// end it, or returns why it is refused.
func (s *Session) addCall(msg *mrtr.Message, key string, cancel context.CancelCauseFunc) int {
	s.x.mu.Lock()
	defer s.x.mu.Unlock()
	switch {
	case s.x.closed:
		return refusedClosed
	case len(s.x.calls) >= s.e.maxCalls:
		return refusedSession
	}
	if _, dup := s.x.calls[key]; dup {
		return refusedDuplicate
	}
	s.x.calls[key] = cancel
	return 0
}

// dropCall removes the call of id key from the session.
func (s *Session) dropCall(key string) {
	s.x.mu.Lock()
	delete(s.x.calls, key)
	s.x.mu.Unlock()
}

// refuseCall answers a call refused for why (addCall's reasons).
//
//go:noinline
func (s *Session) refuseCall(msg *mrtr.Message, why int) *mrtr.Response {
	switch why {
	case refusedOwner:
		return failure(msg, mrtr.CodeInternalError, "Too many calls in flight for this caller (at most "+strconv.Itoa(s.e.maxCallsPerOwner)+" over all its sessions); retry when one ends")
	case refusedClosed:
		return failure(msg, mrtr.CodeInvalidRequest, "Invalid request: the session is closed")
	case refusedSession:
		return failure(msg, mrtr.CodeInternalError, "Too many calls in flight on this session (at most "+strconv.Itoa(s.e.maxCalls)+"); retry when one ends")
	default:
		return failure(msg, mrtr.CodeInvalidRequest, "Invalid request: a request with this id is in flight")
	}
}

// rounds runs the call's rounds: it serves the modern form of msg, and
// while the answer is input_required, asks the client and retries. Its
// frame stays small, the handler's stack growing on top of it; the
// answers that end a call are made out of line.
func (s *Session) rounds(ctx context.Context, msg *mrtr.Message, out Sender) *mrtr.Response {
	var answers, state json.RawMessage
	for round := 0; ; round++ {
		m, err := s.modernRequest(msg, answers, state)
		if err != nil {
			return badParams(msg, err)
		}
		resp := s.serve(ctx, m, out)
		if ctx.Err() != nil {
			return s.ended(ctx, msg)
		}
		if resp == nil || resp.Error != nil {
			return s.refused(msg, resp)
		}
		ir, input, err := readResult(resp.Result)
		if err != nil {
			return s.translate(msg, &mrtr.Response{ID: msg.ID, Error: mrtr.NewError(mrtr.CodeInternalError, "Internal error", nil)})
		}
		if !input {
			return s.translate(msg, resp)
		}
		if round >= s.e.srv.MaxRounds() {
			return s.tooManyRounds(msg)
		}
		state = ir.state
		if len(ir.asks) == 0 {
			// A state-only round: the server asks for a retry, nothing else.
			if !s.pause(ctx) {
				return s.ended(ctx, msg)
			}
			answers = nil
			continue
		}
		got, failed := s.legs(ctx, ir, out)
		if ctx.Err() != nil {
			return s.ended(ctx, msg)
		}
		if failed != "" {
			return s.fail(msg, failed)
		}
		answers = got
	}
}

// pause waits before a state-only round is retried, reporting false when
// ctx ends first.
func (s *Session) pause(ctx context.Context) bool {
	t := time.NewTimer(s.e.pace)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// badParams answers a call whose modern form cannot be made.
//
//go:noinline
func badParams(msg *mrtr.Message, err error) *mrtr.Response {
	return failure(msg, mrtr.CodeInvalidParams, "Invalid params: "+err.Error())
}

// ended answers a call whose ctx ended: the call timed out, or nothing is
// sent (nil) when it was cancelled or its client is gone.
//
//go:noinline
func (s *Session) ended(ctx context.Context, msg *mrtr.Message) *mrtr.Response {
	if context.Cause(ctx) == errCallTimeout {
		return s.fail(msg, "The call did not complete within "+s.e.callLimit.String())
	}
	return nil
}

// tooManyRounds answers a call that needed more rounds than the Server
// allows.
//
//go:noinline
func (s *Session) tooManyRounds(msg *mrtr.Message) *mrtr.Response {
	return s.fail(msg, fmt.Sprintf("The call needed more than %d rounds of input and was stopped", s.e.srv.MaxRounds()))
}

// refused answers a call the Server answered with an error (or nothing).
//
//go:noinline
func (s *Session) refused(msg *mrtr.Message, resp *mrtr.Response) *mrtr.Response {
	if resp != nil && isRoundLimit(resp.Error) {
		return s.tooManyRounds(msg)
	}
	if resp != nil && resp.Error.Code == mrtr.CodeMissingCapability && msg.Method == wire.MethodToolsCall {
		return s.fail(msg, resp.Error.Message+"; this session's client did not declare it at initialize")
	}
	return s.translate(msg, resp)
}

var errCallTimeout = errors.New("legacy: the call ran out of time")

// isRoundLimit reports whether the Server ended the call because its
// handler asked for more rounds than the limit.
func isRoundLimit(e *mrtr.Error) bool {
	if e.Code != mrtr.CodeInternalError {
		return false
	}
	d, ok := e.Data.(map[string]string)
	return ok && d["reason"] == mrtr.ReasonRoundLimit
}

// fail ends a bridged call the client cannot complete: a tools/call with
// an isError result the model can read, any other method with -32603.
func (s *Session) fail(msg *mrtr.Message, text string) *mrtr.Response {
	if msg.Method == wire.MethodToolsCall {
		b, _ := json.Marshal(map[string]any{"content": []map[string]string{{"type": "text", "text": text}}, "isError": true})
		return result(msg, b)
	}
	return failure(msg, mrtr.CodeInternalError, text)
}

// legs sends one round's requests to the client, all at once, and waits
// for every answer. It returns the answers as an inputResponses object,
// or why the round failed (a refusal, a timeout, the client gone); the
// requests still open are then cancelled. When ctx ends, the open requests
// are cancelled and nothing is returned.
func (s *Session) legs(ctx context.Context, ir inputRequired, out Sender) (json.RawMessage, string) {
	if out == nil {
		return nil, "The server's questions cannot reach this client: the request has no stream"
	}
	answers := make(chan legAnswer, len(ir.asks))
	rd := legRound{legs: make([]openLeg, 0, len(ir.asks))}
	defer s.forgetLegs(&rd)
	for _, a := range ir.asks {
		if failed := s.sendLeg(out, answers, &rd, a); failed != "" {
			return nil, failed
		}
	}
	return s.waitLegs(ctx, out, answers, &rd)
}

// legRound is what one round of the server's requests (legs) to the
// client keeps: its legs in the order of their keys, and how many of them
// are still open.
type legRound struct {
	legs []openLeg
	open int
}

// openLeg is one leg of a round: the id it was sent with, the key and
// method it was asked under, and its answer once it came.
type openLeg struct {
	id, key, method string
	answered        bool
	result          json.RawMessage
}

// find returns the open leg sent with id, or nil.
func (rd *legRound) find(id string) *openLeg {
	for i := range rd.legs {
		if l := &rd.legs[i]; !l.answered && l.id == id {
			return l
		}
	}
	return nil
}

// forgetLegs removes the round's open legs from the session: an answer to
// one of them is late from then on.
func (s *Session) forgetLegs(rd *legRound) {
	if rd.open == 0 {
		return
	}
	s.x.mu.Lock()
	for i := range rd.legs {
		if !rd.legs[i].answered {
			delete(s.x.legs, rd.legs[i].id)
		}
	}
	s.x.mu.Unlock()
}

// cancelLegs tells the client, with notifications/cancelled on out, that
// every leg of the round still open is no longer wanted, and why.
func (s *Session) cancelLegs(out Sender, rd *legRound, reason string) {
	for i := range rd.legs {
		if rd.legs[i].answered {
			continue
		}
		n, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": "notifications/cancelled",
			"params": map[string]any{"requestId": json.RawMessage(rd.legs[i].id), "reason": reason}})
		if out.Send(n) != nil {
			// The request's stream is gone (the client cancelled or
			// left): the session's own stream, if one is open, carries
			// the news instead.
			s.x.mu.Lock()
			stream := s.x.stream
			s.x.mu.Unlock()
			if stream != nil {
				_ = stream.Send(n)
			}
		}
	}
}

// sendLeg registers the leg a with the session, its answer to come on
// answers, and sends it to the client on out. It returns why it could
// not, or "".
func (s *Session) sendLeg(out Sender, answers chan legAnswer, rd *legRound, a legAsk) string {
	params, err := legParams(a.method, a.params, s.fixed.Version)
	if err != nil {
		return fmt.Sprintf("The server's %s request %s could not be sent: %v", a.method, strconv.Quote(a.key), err)
	}
	s.x.mu.Lock()
	if len(s.x.legs) >= maxPendingLegs {
		s.x.mu.Unlock()
		s.cancelLegs(out, rd, "another request of the round failed")
		return "Too many of the server's requests wait for answers on this session (at most " + strconv.Itoa(maxPendingLegs) + ")"
	}
	id := s.e.legID(s.x) // ids start at 1, never 0
	s.x.legs[id] = legWaiter{call: answers, key: a.key}
	s.x.mu.Unlock()
	rd.legs = append(rd.legs, openLeg{id: id, key: a.key, method: a.method})
	rd.open++
	if err := out.Send(legRequest(id, a.method, params)); err != nil {
		return "The client could not be reached"
	}
	return ""
}

// legRequest renders a leg: a JSON-RPC request with id, method and params.
func legRequest(id, method string, params json.RawMessage) []byte {
	req := make([]byte, 0, len(params)+64)
	req = append(req, `{"jsonrpc":"2.0","id":`...)
	req = append(req, id...)
	req = append(req, `,"method":`...)
	req = strconv.AppendQuote(req, method)
	req = append(req, `,"params":`...)
	req = append(req, params...)
	req = append(req, '}')
	return req
}

// waitLegs collects the answers to the round's legs until none is open,
// the first refusal, the leg timeout or the end of ctx, cancelling the
// legs still open in the last three cases.
func (s *Session) waitLegs(ctx context.Context, out Sender, answers chan legAnswer, rd *legRound) (json.RawMessage, string) {
	timer := time.NewTimer(s.e.leg)
	defer timer.Stop()
	size := 2
	for rd.open > 0 {
		select {
		case <-ctx.Done():
			if context.Cause(ctx) == errCallTimeout {
				s.cancelLegs(out, rd, "timed out")
			} else {
				s.cancelLegs(out, rd, "the request was cancelled")
			}
			return nil, ""
		case <-timer.C:
			// The open leg of the lowest id, as text, is the one named.
			var first *openLeg
			for i := range rd.legs {
				if l := &rd.legs[i]; !l.answered && (first == nil || l.id < first.id) {
					first = l
				}
			}
			s.cancelLegs(out, rd, "timed out")
			return nil, fmt.Sprintf("The client did not answer the %s request %s within %s", first.method, strconv.Quote(first.key), s.e.leg)
		case a := <-answers:
			l := rd.find(a.id)
			if l == nil {
				continue
			}
			l.answered = true
			rd.open--
			if a.err != nil || a.result == nil {
				var e struct {
					Message string `json:"message"`
				}
				_ = json.Unmarshal(a.err, &e)
				s.cancelLegs(out, rd, "another request of the round failed")
				return nil, fmt.Sprintf("The client refused the %s request %s: %s", l.method, strconv.Quote(l.key), clipped(e.Message))
			}
			l.result = a.result
			size += len(l.key) + len(a.result) + 4
		}
	}
	// The answers in the order of their keys, as encoding/json orders a
	// map's.
	b := make([]byte, 0, size)
	b = append(b, '{')
	for i, l := range rd.legs {
		if i > 0 {
			b = append(b, ',')
		}
		b = wire.AppendString(b, l.key)
		b = append(b, ':')
		b = append(b, l.result...)
	}
	return append(b, '}'), ""
}

// legParams adapts an embedded request's params to the initialize era: a
// url-mode elicitation gets the elicitationId that era requires, and a
// form elicitation loses its mode for 2025-06-18, which had none.
func legParams(method string, params json.RawMessage, version string) (json.RawMessage, error) {
	if len(params) == 0 {
		params = emptyResult
	}
	if method != wire.MethodElicit {
		return params, nil
	}
	var p struct {
		Mode string `json:"mode"`
	}
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, err
	}
	if p.Mode != "url" {
		if version >= "2025-11-25" || p.Mode == "" {
			return params, nil
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(params, &m); err != nil {
			return nil, err
		}
		delete(m, "mode")
		return json.Marshal(m)
	}
	var id [12]byte
	if _, err := rand.Read(id[:]); err != nil {
		return nil, err
	}
	trimmed := bytes.TrimSpace(params)
	if len(trimmed) < 2 || trimmed[0] != '{' {
		return nil, errors.New("params must be an object")
	}
	out := []byte(`{"elicitationId":"` + hex.EncodeToString(id[:]) + `"`)
	if rest := bytes.TrimSpace(trimmed[1:]); len(rest) > 0 && rest[0] != '}' {
		out = append(out, ',')
	}
	return append(out, trimmed[1:]...), nil
}
