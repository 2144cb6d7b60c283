package mrtr

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/mrtrkit/mrtrkit/discover"
	"github.com/mrtrkit/mrtrkit/internal/strictjson"
	"github.com/mrtrkit/mrtrkit/internal/wire"
)

// emptyObject stands for absent arguments.
var emptyObject = json.RawMessage(`{}`)

func (s *Server) resolveTool(c *call) {
	if !s.sees(c.in, KindTool, c.target) {
		return
	}
	s.mu.RLock()
	if t := s.tools.byKey[c.target]; t != nil {
		c.ep = endpoint{entry: &t.entry, headers: t.headers, out: t.out}
	}
	s.mu.RUnlock()
}

func (s *Server) resolvePrompt(c *call) {
	if !s.sees(c.in, KindPrompt, c.target) {
		return
	}
	s.mu.RLock()
	if p := s.prompts.byKey[c.target]; p != nil {
		c.ep = endpoint{entry: &p.entry, prompt: &p.prompt}
	}
	s.mu.RUnlock()
}

func (s *Server) resolveResource(c *call) {
	c.ep = s.findResource(c.in, c.target)
}

// findResource looks a URI up among the resources, then the templates in
// registration order, that the caller sees.
func (s *Server) findResource(in *Inbound, uri string) endpoint {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if r := s.resources.byKey[uri]; r != nil && s.sees(in, KindResource, uri) {
		return endpoint{entry: &r.entry}
	}
	for _, name := range s.templates.names {
		t := s.templates.byKey[name]
		if vars, ok := t.tmpl.match(uri); ok && s.sees(in, KindResourceTemplate, name) {
			return endpoint{entry: &t.entry, vars: vars}
		}
	}
	return endpoint{}
}

// checkArguments passes the call's arguments through the strict door,
// using the verdict ParseMessage reached in its one pass over the body
// when there is one. With stringValues every top-level value must be a
// string (prompt arguments).
func (c *call) checkArguments(args json.RawMessage, stringValues bool) *Error {
	v := &c.in.Message.args
	if !v.Checked || len(v.Raw) != len(args) || len(args) == 0 || &v.Raw[0] != &args[0] {
		return strictArguments(args, stringValues)
	}
	if v.Fail != "" {
		return InvalidParamsError("Invalid arguments: " + v.Where + " " + v.Fail)
	}
	if stringValues && v.NonString != nil {
		return invalidArguments(strictjson.NotString("arguments", v.NonString))
	}
	return nil
}

// strictArguments passes args through the strict door (strictjson.Check),
// refusing with -32602 what it refuses.
func strictArguments(args json.RawMessage, stringValues bool) *Error {
	if err := strictjson.Check(args, "arguments", stringValues); err != nil {
		return invalidArguments(err.Error())
	}
	return nil
}

// invalidArguments is the -32602 refusal of arguments the strict door
// refused for problem.
func invalidArguments(problem string) *Error {
	return InvalidParamsError("Invalid arguments: " + problem)
}

// request starts the Request a handler sees.
func (c *call) request() *Request {
	c.req = Request{Method: c.method, Meta: c.meta, Principal: c.in.Principal, Token: c.in.Token, emit: c.in.Emit, headers: c.in.Headers}
	return &c.req
}

func (s *Server) callTool(ctx context.Context, c *call) (json.RawMessage, *Error) {
	c.stage = StageTarget
	if c.target == "" {
		return nil, InvalidParamsError("tools/call needs params.name, a non-empty string")
	}
	if c.ep.entry == nil {
		return nil, unknownTool(c.target, nearest(c.target, s.visibleNames(c.in, KindTool)))
	}
	c.stage = StageArguments
	args := c.p.Arguments
	switch {
	case isAbsent(args):
		args = emptyObject
	case args[0] != '{':
		return nil, InvalidParamsError("tools/call arguments must be an object")
	default:
		if err := c.checkArguments(args, false); err != nil {
			return nil, err
		}
	}
	req := c.request()
	req.Name, req.Arguments = c.target, args
	if s.tasks != nil && c.ep.task.mode != TaskForbidden {
		if out, err, done := s.tasks.toolsCall(ctx, c, req, args); done {
			return out, err
		}
	}
	return s.invoke(ctx, c, req, args)
}

func (s *Server) getPrompt(ctx context.Context, c *call) (json.RawMessage, *Error) {
	c.stage = StageTarget
	if c.target == "" {
		return nil, InvalidParamsError("prompts/get needs params.name, a non-empty string")
	}
	if c.ep.entry == nil {
		return nil, unknownPrompt(c.target, nearest(c.target, s.visibleNames(c.in, KindPrompt)))
	}
	c.stage = StageArguments
	req := c.request()
	req.Name = c.target
	args := c.p.Arguments
	switch {
	case isAbsent(args):
		args = emptyObject
	case args[0] != '{':
		return nil, InvalidParamsError("prompts/get arguments must be an object of strings")
	default:
		if err := c.checkArguments(args, true); err != nil {
			return nil, err
		}
		if err := json.Unmarshal(args, &req.PromptArguments); err != nil {
			return nil, InvalidParamsError("prompts/get arguments must be an object of strings")
		}
	}
	for _, a := range c.ep.prompt.Arguments {
		if _, ok := req.PromptArguments[a.Name]; a.Required && !ok {
			return nil, InvalidParamsError("Missing required argument: " + quoted(a.Name))
		}
	}
	req.Arguments = args
	return s.invoke(ctx, c, req, args)
}

func (s *Server) readResource(ctx context.Context, c *call) (json.RawMessage, *Error) {
	c.stage = StageTarget
	if c.target == "" {
		return nil, InvalidParamsError("resources/read needs params.uri, a non-empty string")
	}
	if c.ep.entry == nil {
		e := ResourceNotFoundError(clip(c.target))
		e.Message += didYouMean(nearest(c.target, s.visibleNames(c.in, KindResource)))
		return nil, e
	}
	req := c.request()
	req.URI, req.Vars, req.Arguments = c.target, c.ep.vars, varsJSON(c.ep.vars)
	// The URI is the target, and the variables derive from it: a state
	// is bound to the URI, with no arguments of its own.
	return s.invoke(ctx, c, req, emptyObject)
}

// varsJSON renders a template's matched values as one JSON object, in
// name order.
func varsJSON(vars map[string]string) json.RawMessage {
	if len(vars) == 0 {
		return emptyObject
	}
	names := make([]string, 0, len(vars))
	for k := range vars {
		names = append(names, k)
	}
	sort.Strings(names)
	b := []byte{'{'}
	for i, k := range names {
		if i > 0 {
			b = append(b, ',')
		}
		b = wire.AppendString(b, k)
		b = append(b, ':')
		b = wire.AppendString(b, vars[k])
	}
	return append(b, '}')
}

// invoke runs a handler through the requestState pipeline: open and check
// the presented state, decode the answers to what it asked, call the
// handler, and gate, seal and render what it returns. args are the
// arguments the state is bound to.
func (s *Server) invoke(ctx context.Context, c *call, req *Request, args json.RawMessage) (json.RawMessage, *Error) {
	fromState := false
	var once time.Duration // OnceOnly: the lifetime of the presented state to claim
	var presented []byte   // the payload of a presented state, for a call that becomes a task
	var presentedAsked map[string]byte
	if r := c.resume; r != nil {
		// A task's run: its continuation comes from the task record.
		fromState = true
		req.Round, req.asked = r.round, r.asked
		if len(r.journal) > 0 {
			if err := req.resume(r.journal); err != nil {
				return nil, s.internal("a task record holds a malformed journal", err, c)
			}
		}
	} else if !isAbsent(c.p.RequestState) {
		c.stage = StageState
		c.rec.StatePresented = true
		claims, err := s.openState(c, args)
		if err != nil {
			return nil, err
		}
		fromState = true
		req.Round, req.State, req.asked = claims.Round, claims.Payload, claims.Asked
		c.rec.Round = claims.Round
		if _, ok := claims.Asked[journalKey]; ok {
			if err := req.resume(claims.Payload); err != nil {
				return nil, s.internal("an authentic requestState holds a malformed journal", err, c)
			}
			delete(claims.Asked, journalKey)
			req.State = nil
		}
		presented, presentedAsked = claims.Payload, claims.Asked
		if c.ep.once {
			once = claims.ExpiresAt.Sub(claims.IssuedAt)
		}
	}
	c.stage = StageAnswers
	req.Responses.list = c.answers[:0]
	if err := s.decodeResponses(c.p.InputResponses, c.ep.asks, req.asked, &req.Responses); err != nil {
		return nil, err
	}
	if req.Responses.Len() > 0 {
		fromState = true
	}
	if once > 0 {
		c.stage = StageState
		if err := s.claimOnce(ctx, c, once); err != nil {
			return nil, err
		}
	}

	// What a call that becomes a task presented is what its task starts
	// from: its first run replays this round as a retry would.
	detach := func() {
		c.detached = &resumeState{round: req.Round, asked: presentedAsked, responses: c.p.InputResponses}
		if req.resumed {
			c.detached.journal = presented
		}
	}
	if c.autoDetach {
		detach()
		return nil, nil
	}
	c.stage = StageNone // from here, what the handler answers is its own
	hctx := ctx
	if s.limits.handlerTimeout > 0 && req.taskPhase != phaseTask {
		h := &c.hctx
		h.start(ctx, s.limits.handlerTimeout)
		defer h.end()
		hctx = h
	}
	res, herr := c.ep.handler.Handle(hctx, req)
	timedOut := ctx.Err() == nil && hctx.Err() == context.DeadlineExceeded
	if req.run.Load() != nil && !timedOut {
		out, err, done := s.settleRun(c, req, res, herr, args)
		if done {
			req.releaseRun()
			return out, err
		}
	}
	req.releaseRun()
	if req.taskPhase == phaseDetachable && herr != nil && errors.Is(herr, errDetach) {
		detach()
		return nil, nil
	}
	if timedOut {
		c.stage = StageTimeout
		s.log.Warn("mrtr: a handler ran out of time", "method", c.method, "target", clip(c.target), "timeout", s.limits.handlerTimeout)
		return nil, NewError(CodeInternalError, "Request timed out after "+s.limits.handlerTimeout.String(), nil)
	}
	if herr != nil {
		var e *Error
		if errors.As(herr, &e) {
			return nil, e
		}
		if ctx.Err() != nil {
			return nil, internalError()
		}
		return nil, s.internal("handler failed", herr, c)
	}
	if ir, ok := res.(*InputRequired); ok && ir != nil {
		return s.inputRequired(c, ir, args, req.Round)
	}
	var (
		method string
		body   any
		meta   Object
		ok     bool
	)
	if res != nil {
		method, body, meta, ok = res.wire()
	}
	if !ok || method != c.method {
		return nil, s.internal("handler returned no result of its method", fmt.Errorf("%T is not a result of %s", res, c.method), c)
	}
	if r, ok := res.(*CallToolResult); ok {
		if err := s.checkOutput(c, r); err != nil {
			return nil, err
		}
	}
	var hint *discover.Hint
	if method == wire.MethodResourcesRead {
		h := s.hint(discover.CacheRead, c.in.Principal)
		if fromState {
			// A result reached through input rounds depends on answers
			// the cache key does not capture.
			h.TTLMs = 0
		}
		hint = &h
	}
	return s.renderCall(c, wire.ResultComplete, body, meta, hint)
}

// internal logs err with what the call was and returns the opaque
// internal error. Values the caller sent are logged quoted and clipped.
func (s *Server) internal(msg string, err error, c *call) *Error {
	if c != nil {
		s.log.Error("mrtr: "+msg, "method", c.method, "target", clip(c.target), "err", errText(err))
	} else {
		s.log.Error("mrtr: "+msg, "err", errText(err))
	}
	return internalError()
}
