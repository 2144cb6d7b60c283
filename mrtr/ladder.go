package mrtr

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime/debug"
	"time"
	"unsafe"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/mrtrkit/mrtrkit/internal/wire"
	"github.com/mrtrkit/mrtrkit/state"
)

// params holds every params member any method uses, raw, so that one
// pass over the params serves the whole validation ladder.
type params struct {
	Meta           json.RawMessage
	Name           json.RawMessage
	URI            json.RawMessage
	Arguments      json.RawMessage
	Cursor         json.RawMessage
	InputResponses json.RawMessage
	RequestState   json.RawMessage
	Ref            json.RawMessage
	Argument       json.RawMessage
	Context        json.RawMessage
	Notifications  json.RawMessage
}

// readParams returns the params of msg, matching member names exactly:
// those ParseMessage read in its one pass over the body, or, for a
// Message built some other way, read from Params now.
func readParams(msg *Message) (*params, error) {
	if msg.params != nil {
		return msg.params, msg.paramsErr
	}
	p := new(params)
	if len(msg.Params) == 0 {
		return p, nil
	}
	return p, wire.EachMember(msg.Params, p.set)
}

// set records the params member name.
func (p *params) set(name string, v json.RawMessage) error {
	{
		var slot *json.RawMessage
		switch name {
		case "_meta":
			slot = &p.Meta
		case "name":
			slot = &p.Name
		case "uri":
			slot = &p.URI
		case "arguments":
			slot = &p.Arguments
		case "cursor":
			slot = &p.Cursor
		case "inputResponses":
			slot = &p.InputResponses
		case "requestState":
			slot = &p.RequestState
		case "ref":
			slot = &p.Ref
		case "argument":
			slot = &p.Argument
		case "context":
			slot = &p.Context
		case "notifications":
			slot = &p.Notifications
		default:
			return nil
		}
		if *slot != nil {
			return wire.ErrDuplicateMember
		}
		*slot = v
		return nil
	}
}

// call is one request on its way through the ladder.
type call struct {
	in     *Inbound
	method string
	p      *params
	meta   *Meta
	target string   // the name or uri of a method with a target
	ep     endpoint // what the target resolved to

	digest   state.Digest // of the arguments, once computed
	digested bool

	rec   *Call // what interceptors see
	stage Stage // the step of the ladder the call is at

	// Tasks (tasks.go): a continuation to run instead of a presented
	// requestState; where a task's questions are caught instead of
	// sealed; whether the call becomes a task before its handler runs;
	// and the continuation it becomes a task with.
	resume     *resumeState
	capture    *taskCapture
	autoDetach bool
	detached   *resumeState

	// Room for what serving the call needs, so that it takes one
	// allocation rather than one each: the parsed _meta, the handler's
	// Request and its context, an input-required body.
	metaBuf Meta
	req     Request
	hctx    handlerContext
	irBody  inputRequiredBody

	result  *[]byte   // the pooled buffer renderCall rendered the result into
	answers [1]answer // room for a round of one answer, as most rounds are
}

// exchange is the memory serving one request takes, allocated at once:
// what interceptors see and the call. (A handler or interceptor that
// keeps a pointer into it keeps all of it alive, which is only memory:
// nothing in it is reused.) The Response is allocated on its own: the
// transport holds it while it writes, and it must not keep the call, and
// through it the request body, alive that long.
type exchange struct {
	rec Call
	c   call
}

// endpoint is the registry entry a call's target resolved to, with what
// the lookup learned. entry is nil when nothing is registered under the
// target.
type endpoint struct {
	*entry
	headers []paramHeader        // a tool's x-mcp-header declarations
	out     *jsonschema.Resolved // a tool's output schema, when results are held to it
	prompt  *Prompt              // a prompt's declaration
	vars    map[string]string    // the values a resource template matched
}

// Handle serves one message and returns the response to write: nil for a
// notification, which has no response. A response message (which only
// clients of the initialize era send) is refused with -32600.
func (s *Server) Handle(ctx context.Context, in *Inbound) *Response {
	msg := in.Message
	switch {
	case msg.IsResponse():
		return &Response{ID: msg.ID, Error: invalidRequest("clients do not send responses in this protocol version")}
	case msg.IsNotification():
		return nil
	}
	x := &exchange{rec: Call{Message: msg, Principal: in.Principal, Token: in.Token, Headers: in.Headers, Start: time.Now()}}
	if len(s.intercept) == 0 {
		return s.respond(ctx, in, &x.rec, &x.c, new(Response))
	}
	return s.intercepted(ctx, in, &x.rec)
}

// respond serves one request within the Server's limits, recovering from
// a panic of anything it runs, and records the outcome in rec. c and out
// are the memory the call and its response take.
func (s *Server) respond(ctx context.Context, in *Inbound, rec *Call, c *call, out *Response) (resp *Response) {
	msg := in.Message
	defer func() {
		if v := recover(); v != nil {
			s.log.Error("mrtr: a handler panicked", "method", clip(msg.Method), "target", clip(rec.Target),
				"panic", clip(fmt.Sprint(v)), "stack", string(debug.Stack()))
			rec.RefusedAt, rec.Refusal, rec.ResultType = StagePanic, StagePanic.String(), ""
			rec.Error = internalError()
			*out = Response{ID: msg.ID, Error: rec.Error}
			resp = out
		}
	}()
	if msg.Method != wire.MethodSubscriptionsListen {
		key := limitKey(in)
		if lerr := s.limits.admit(key); lerr != nil {
			rec.RefusedAt, rec.Refusal, rec.Error = StageLimit, StageLimit.String(), lerr
			*out = Response{ID: msg.ID, Error: lerr}
			return out
		}
		defer s.limits.release(key)
	}
	result, err := s.serve(ctx, in, rec, c)
	if err != nil {
		rec.Error, rec.ResultType = err, ""
		*out = Response{ID: msg.ID, Error: err}
		return out
	}
	if rec.ResultType == "" {
		rec.ResultType = wire.ResultComplete
	}
	*out = Response{ID: msg.ID, Result: result}
	if c.result != nil && len(s.intercept) == 0 && len(result) > 0 && unsafe.SliceData(result) == unsafe.SliceData(*c.result) {
		// Nothing but the Response holds the result: its transport may
		// hand the buffer back once written. (An interceptor may keep
		// what it was given, so intercepted results are never pooled.)
		out.pooled = c.result
	}
	return out
}

// serve runs the validation ladder, then the method. The order is that of
// the package documentation; each step refuses with its own code, and a
// refusal is recorded in rec with the step that made it.
func (s *Server) serve(ctx context.Context, in *Inbound, rec *Call, c *call) (res json.RawMessage, err *Error) {
	c.in, c.method, c.rec, c.stage = in, in.Message.Method, rec, StageParams
	defer func() {
		if err != nil && rec.RefusedAt == StageNone {
			rec.RefusedAt, rec.Refusal = c.stage, c.stage.String()
		}
	}()
	var perr error
	if c.p, perr = readParams(in.Message); perr != nil {
		c.p = new(params)
		return nil, invalidRequest("params: " + perr.Error())
	}
	// _meta is split once; its version claim is read before the rest is
	// judged, because header and body must agree on the version before the
	// version itself is: a bogus body version under a good header is a
	// mismatch.
	fields, metaErr := splitMeta(c.p.Meta)
	version, claimed := versionOf(&fields, s.versions)
	c.stage = StageVersion
	if c.method == "initialize" && !claimed {
		return nil, s.initializeRefused(in.Message.Params)
	}
	c.stage = StageVersionHeader
	if err := checkVersionHeader(in.Mirror, version, claimed); err != nil {
		return nil, err
	}
	c.stage = StageVersion
	if claimed && !s.desc.Supports(version) {
		return nil, unsupportedVersion(s.desc.ModernVersions(), version)
	}
	c.stage = StageMeta
	if metaErr != nil {
		return nil, metaErr
	}
	meta, err := parseMeta(&fields, &c.metaBuf, s.versions)
	if err != nil {
		return nil, err
	}
	if meta.LogLevel != "" && s.desc.Capabilities.Logging == nil {
		meta.LogLevel = "" // the server does not log: the opt-in means nothing
	}
	c.meta = meta
	c.stage = StageMethod
	m := methods[c.method]
	if m == nil {
		m = s.extMethod(c.method)
	}
	if m == nil || (m.served != nil && !m.served(s.advertised()) && !(c.method == wire.MethodSubscriptionsListen && s.hasListenFilters())) {
		return nil, methodNotFound(c.method)
	}
	if m.extension != "" && !meta.Declares(m.extension) {
		c.stage = StageCapability
		return nil, missingExtension(m.extension)
	}
	if m.target != "" {
		c.stage = StageTarget
		if err := c.readTarget(m.target); err != nil {
			return nil, err
		}
		rec.Target = c.target
		if c.target != "" && m.resolve != nil {
			m.resolve(s, c)
			rec.Resolved = c.ep.entry != nil
		}
		if c.ep.entry != nil && len(c.ep.scopes) > 0 {
			c.stage = StageScope
			if err := checkScopes(in.Token, c.ep.scopes); err != nil {
				return nil, err
			}
		}
	}
	c.stage = StageHeader
	if err := checkMirror(c, m); err != nil {
		return nil, err
	}
	c.stage = StageMethodParams
	return m.serve(s, ctx, c)
}

// readTarget decodes the params member naming the call's target.
func (c *call) readTarget(member string) *Error {
	var raw json.RawMessage
	switch member {
	case "name":
		raw = c.p.Name
	case "uri":
		raw = c.p.URI
	default:
		raw = c.readMember(member)
	}
	if isAbsent(raw) {
		return nil
	}
	var ok bool
	if c.target, ok = wire.String(raw); raw[0] != '"' || !ok {
		return InvalidParamsError(c.method + " params." + member + " must be a string")
	}
	return nil
}

// initializeRefused answers a client of the initialize era, which this
// Server does not serve by itself (package mrtr/legacy does): -32022
// naming the versions it speaks, so the user sees something to act on.
func (s *Server) initializeRefused(raw json.RawMessage) *Error {
	var legacy struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	_ = json.Unmarshal(raw, &legacy)
	return unsupportedVersion(s.desc.ModernVersions(), legacy.ProtocolVersion)
}
