package mrtr

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/mrtrkit/mrtrkit/discover"
	"github.com/mrtrkit/mrtrkit/state"
)

// Methods of MCP 2026-07-28 that a server answers.
const (
	MethodDiscover            = "server/discover"
	MethodToolsList           = "tools/list"
	MethodToolsCall           = "tools/call"
	MethodPromptsList         = "prompts/list"
	MethodPromptsGet          = "prompts/get"
	MethodResourcesList       = "resources/list"
	MethodResourcesRead       = "resources/read"
	MethodTemplatesList       = "resources/templates/list"
	MethodComplete            = "completion/complete"
	MethodSubscriptionsListen = "subscriptions/listen"
)

// params holds every params member any method uses, raw, so that one
// decode of the body serves the whole validation ladder.
type params struct {
	Meta           json.RawMessage `json:"_meta"`
	Name           json.RawMessage `json:"name"`
	URI            json.RawMessage `json:"uri"`
	Arguments      json.RawMessage `json:"arguments"`
	Cursor         json.RawMessage `json:"cursor"`
	InputResponses json.RawMessage `json:"inputResponses"`
	RequestState   json.RawMessage `json:"requestState"`
	Ref            json.RawMessage `json:"ref"`
	Argument       json.RawMessage `json:"argument"`
	Context        json.RawMessage `json:"context"`
	Notifications  json.RawMessage `json:"notifications"`
}

// decode fills p from the params object, matching member names exactly.
func (p *params) decode(b []byte) error {
	return eachMember(b, func(name string, v json.RawMessage) error {
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
			return errDuplicateMember
		}
		*slot = v
		return nil
	})
}

// call is one request on its way through the ladder.
type call struct {
	in     *Inbound
	method string
	p      params
	meta   *Meta
	target string // name or uri, as a string; "" when absent or not a string
}

// Handle serves one message. It returns nil for a notification, which has
// no response; otherwise the response to write, whose Status is the HTTP
// status to write it with.
func (s *Server) Handle(ctx context.Context, in *Inbound) *Response {
	msg := in.Message
	if msg.IsNotification() {
		return nil
	}
	result, err := s.serve(ctx, in)
	if err != nil {
		return &Response{ID: msg.ID, Error: err}
	}
	return &Response{ID: msg.ID, Result: result}
}

// serve runs the validation ladder, then the method.
func (s *Server) serve(ctx context.Context, in *Inbound) (json.RawMessage, *Error) {
	c := &call{in: in, method: in.Message.Method}
	if len(in.Message.Params) > 0 {
		if err := c.p.decode(in.Message.Params); err != nil {
			return nil, ErrInvalidRequest("params: " + err.Error())
		}
	}
	// _meta is split once; its version claim is read before the rest is
	// judged, because header and body must agree on the version before the
	// version itself is: a bogus body version under a good header is a
	// mismatch.
	fields, metaErr := splitMeta(c.p.Meta)
	version, hasVersion := versionOf(fields)
	if c.method == "initialize" && !hasVersion {
		// A client of the initialize era: name the versions this server
		// speaks, so the user sees something to act on.
		var legacy struct {
			ProtocolVersion string `json:"protocolVersion"`
		}
		_ = json.Unmarshal(in.Message.Params, &legacy)
		return nil, ErrUnsupportedVersion(s.desc.ModernVersions(), legacy.ProtocolVersion)
	}
	if h := in.Headers; h != nil {
		pv := h.ProtocolVersion
		switch {
		case !pv.Present:
			return nil, ErrHeaderMismatch("MCP-Protocol-Version header is required")
		case pv.Invalid != "":
			return nil, ErrHeaderMismatch("MCP-Protocol-Version header is invalid: " + pv.Invalid)
		case hasVersion && pv.Value != version:
			return nil, ErrHeaderMismatch(fmt.Sprintf("MCP-Protocol-Version header value %s does not match body value %s", strconv.Quote(pv.Value), strconv.Quote(version)))
		}
	}
	if hasVersion && !s.desc.Supports(version) {
		return nil, ErrUnsupportedVersion(s.desc.ModernVersions(), version)
	}
	if metaErr != nil {
		return nil, metaErr
	}
	meta, err := parseMeta(fields)
	if err != nil {
		return nil, err
	}
	c.meta = meta
	if err := s.methodExists(c.method); err != nil {
		return nil, err
	}
	if err := s.checkStandardHeaders(c); err != nil {
		return nil, err
	}
	switch c.method {
	case MethodDiscover:
		return s.discover()
	case MethodToolsList:
		return s.listTools(c)
	case MethodPromptsList:
		return s.listPrompts(c)
	case MethodResourcesList:
		return s.listResources(c)
	case MethodTemplatesList:
		return s.listTemplates(c)
	case MethodToolsCall, MethodPromptsGet, MethodResourcesRead:
		return s.invoke(ctx, c)
	case MethodComplete:
		return s.completion(ctx, c)
	case MethodSubscriptionsListen:
		return s.listen(ctx, c)
	}
	return nil, ErrMethodNotFound(c.method)
}

// methodExists answers -32601 for unknown and removed methods and for
// methods whose capability the server does not advertise.
func (s *Server) methodExists(method string) *Error {
	caps := s.advertised()
	ok := false
	switch method {
	case MethodDiscover:
		ok = true
	case MethodToolsList, MethodToolsCall:
		ok = caps.Tools != nil
	case MethodPromptsList, MethodPromptsGet:
		ok = caps.Prompts != nil
	case MethodResourcesList, MethodResourcesRead, MethodTemplatesList:
		ok = caps.Resources != nil
	case MethodComplete:
		ok = caps.Completions != nil
	case MethodSubscriptionsListen:
		ok = listenAdvertised(*caps)
	}
	if !ok {
		return ErrMethodNotFound(method)
	}
	return nil
}

// checkStandardHeaders compares Mcp-Method and Mcp-Name with the body, and
// for tools/call the Mcp-Param-* headers with the tool's declarations.
func (s *Server) checkStandardHeaders(c *call) *Error {
	switch c.method {
	case MethodToolsCall, MethodPromptsGet:
		if !isAbsent(c.p.Name) && json.Unmarshal(c.p.Name, &c.target) != nil {
			return ErrInvalidParams(c.method+" params.name must be a string", nil)
		}
	case MethodResourcesRead:
		if !isAbsent(c.p.URI) && json.Unmarshal(c.p.URI, &c.target) != nil {
			return ErrInvalidParams("resources/read params.uri must be a string", nil)
		}
	}
	h := c.in.Headers
	if h == nil {
		return nil
	}
	switch m := h.Method; {
	case !m.Present:
		return ErrHeaderMismatch("Mcp-Method header is required")
	case m.Invalid != "":
		return ErrHeaderMismatch("Mcp-Method header is invalid: " + m.Invalid)
	case m.Value != c.method:
		return ErrHeaderMismatch(fmt.Sprintf("Mcp-Method header value %s does not match body value %s", strconv.Quote(m.Value), strconv.Quote(c.method)))
	}
	switch c.method {
	case MethodToolsCall, MethodPromptsGet, MethodResourcesRead:
	default:
		return nil
	}
	switch n := h.Name; {
	case !n.Present:
		return ErrHeaderMismatch("Mcp-Name header is required for " + c.method)
	case n.Invalid != "":
		return ErrHeaderMismatch("Mcp-Name header is invalid: " + n.Invalid)
	case n.Value != c.target:
		return ErrHeaderMismatch(fmt.Sprintf("Mcp-Name header value %s does not match body value %s", strconv.Quote(n.Value), strconv.Quote(c.target)))
	}
	if c.method != MethodToolsCall {
		return nil
	}
	s.mu.RLock()
	t := s.tools.byKey[c.target]
	s.mu.RUnlock()
	if t == nil {
		return nil
	}
	return checkParamHeaders(t.headers, c.p.Arguments, h.Params)
}

func (s *Server) discover() (json.RawMessage, *Error) {
	d := s.desc
	s.mu.RLock()
	d.Capabilities = s.capabilitiesLocked()
	s.mu.RUnlock()
	b, err := json.Marshal(d.Discover())
	if err != nil {
		return nil, s.internal("render discover", err)
	}
	return b, nil
}

// internal logs err and returns the opaque internal error.
func (s *Server) internal(what string, err error) *Error {
	s.log.Error("mrtr: "+what, "err", err)
	return ErrInternal()
}

// invoke runs a tools/call, prompts/get or resources/read handler through
// the requestState pipeline.
func (s *Server) invoke(ctx context.Context, c *call) (json.RawMessage, *Error) {
	req := &Request{Method: c.method, Meta: c.meta, Principal: c.in.Principal, emit: c.in.Emit}
	if c.meta.LogLevel != "" && s.desc.Capabilities.Logging == nil {
		req.Meta = withoutLogLevel(c.meta)
	}
	var (
		h    Handler
		asks map[string]state.Kind
		args json.RawMessage
	)
	switch c.method {
	case MethodToolsCall:
		if c.target == "" {
			return nil, ErrInvalidParams("tools/call needs params.name, a non-empty string", nil)
		}
		s.mu.RLock()
		t := s.tools.byKey[c.target]
		s.mu.RUnlock()
		if t == nil {
			return nil, ErrUnknownTool(c.target)
		}
		args = c.p.Arguments
		if isAbsent(args) {
			args = json.RawMessage(`{}`)
		} else if args[0] != '{' {
			return nil, ErrInvalidParams("tools/call arguments must be an object", nil)
		}
		req.Name, req.Arguments, h, asks = c.target, args, t.handler, t.asks
	case MethodPromptsGet:
		if c.target == "" {
			return nil, ErrInvalidParams("prompts/get needs params.name, a non-empty string", nil)
		}
		s.mu.RLock()
		p := s.prompts.byKey[c.target]
		s.mu.RUnlock()
		if p == nil {
			return nil, ErrUnknownPrompt(c.target)
		}
		args = c.p.Arguments
		if isAbsent(args) {
			args = json.RawMessage(`{}`)
		}
		if json.Unmarshal(args, &req.PromptArguments) != nil {
			return nil, ErrInvalidParams("prompts/get arguments must be an object of strings", nil)
		}
		for _, a := range p.prompt.Arguments {
			if _, ok := req.PromptArguments[a.Name]; a.Required && !ok {
				return nil, ErrInvalidParams("Missing required argument: "+a.Name, nil)
			}
		}
		req.Name, h, asks = c.target, p.handler, p.asks
	case MethodResourcesRead:
		if c.target == "" {
			return nil, ErrInvalidParams("resources/read needs params.uri, a non-empty string", nil)
		}
		args = json.RawMessage(`{}`)
		req.URI = c.target
		h, asks, req.Vars = s.findResource(c.target)
		if h == nil {
			return nil, ErrResourceNotFound(c.target)
		}
	}

	// The argument digest is computed only when a state is opened or
	// sealed: a plain call does not pay for canonicalisation.
	var binding *state.Binding
	bind := func() (*state.Binding, *Error) {
		if binding == nil {
			if err := checkBindable(args); err != nil {
				return nil, ErrInvalidParams("arguments cannot be bound to a requestState: "+err.Error(), nil)
			}
			digest, err := state.DigestJSON(args)
			if err != nil {
				return nil, ErrInvalidParams("arguments cannot be canonicalised: "+err.Error(), nil)
			}
			binding = &state.Binding{Principal: c.in.Principal, Audience: s.audience, Method: c.method, Target: c.target, ArgsDigest: digest}
		}
		return binding, nil
	}

	asked := asks
	fromState := false
	if !isAbsent(c.p.RequestState) {
		b, err := bind()
		if err != nil {
			return nil, err
		}
		claims, err := s.openState(c.p.RequestState, *b)
		if err != nil {
			return nil, err
		}
		fromState = true
		req.Round, req.State = claims.Round, claims.Payload
		if len(asks) > 0 {
			asked = make(map[string]state.Kind, len(asks)+len(claims.Asked))
			for k, v := range asks {
				asked[k] = v
			}
			for k, v := range claims.Asked {
				asked[k] = v
			}
		} else {
			asked = claims.Asked
		}
	}
	if err := s.decodeResponses(c.p.InputResponses, asked, &req.Responses); err != nil {
		return nil, err
	}
	if req.Responses.Len() > 0 {
		fromState = true
	}

	res, herr := h.Handle(ctx, req)
	if herr != nil {
		if e, ok := AsError(herr); ok {
			return nil, e
		}
		if ctx.Err() != nil {
			return nil, ErrInternal()
		}
		return nil, s.internal("handler for "+c.method+" "+c.target, herr)
	}
	switch r := res.(type) {
	case *InputRequired:
		if r == nil {
			break
		}
		b, err := bind()
		if err != nil {
			return nil, err
		}
		return s.inputRequired(c, r, *b, req.Round)
	case *CallToolResult:
		if r != nil && c.method == MethodToolsCall {
			cp := *r
			if cp.Content == nil {
				cp.Content = []Content{}
			}
			meta := cp.Meta
			cp.Meta = nil
			return s.render(ResultComplete, &cp, meta, nil)
		}
	case *GetPromptResult:
		if r != nil && c.method == MethodPromptsGet {
			cp := *r
			if cp.Messages == nil {
				cp.Messages = []PromptMessage{}
			}
			meta := cp.Meta
			cp.Meta = nil
			return s.render(ResultComplete, &cp, meta, nil)
		}
	case *ReadResourceResult:
		if r != nil && c.method == MethodResourcesRead {
			cp := *r
			if cp.Contents == nil {
				cp.Contents = []ResourceContents{}
			}
			meta := cp.Meta
			cp.Meta = nil
			hint := s.hint(discover.KindRead, c.in.Principal)
			if fromState {
				// A result reached through input rounds depends on answers
				// the cache key does not capture.
				hint.TTLMs = 0
			}
			return s.render(ResultComplete, &cp, meta, &hint)
		}
	}
	return nil, s.internal("handler result", fmt.Errorf("handler for %s %q returned %T, which is not a result of that method", c.method, c.target, res))
}

func withoutLogLevel(m *Meta) *Meta {
	cp := *m
	cp.LogLevel = ""
	return &cp
}

// findResource looks a URI up among resources, then templates in
// registration order.
func (s *Server) findResource(uri string) (Handler, map[string]state.Kind, map[string]string) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if r := s.resources.byKey[uri]; r != nil {
		return r.handler, r.asks, nil
	}
	for _, name := range s.templates.names {
		t := s.templates.byKey[name]
		m := t.match.FindStringSubmatch(uri)
		if m == nil {
			continue
		}
		vars := make(map[string]string, len(t.vars))
		for i, v := range t.vars {
			vars[v] = m[i+1]
		}
		return t.handler, t.asks, vars
	}
	return nil, nil, nil
}

// openState verifies a requestState against this request. Every failure
// is the same client-facing error; the reason goes to the log.
func (s *Server) openState(raw json.RawMessage, want state.Binding) (state.Claims, *Error) {
	var token string
	if n := len(raw); n >= 2 && raw[0] == '"' && raw[n-1] == '"' && !bytes.ContainsAny(raw[1:n-1], "\\\"") {
		token = string(raw[1 : n-1])
	} else if json.Unmarshal(raw, &token) != nil {
		s.log.Info("mrtr: requestState refused", "reason", "not_a_string", "method", want.Method, "target", want.Target)
		return state.Claims{}, ErrInvalidState(false)
	}
	claims, err := s.codec.Open(token, want)
	if err == nil && claims.Round > s.maxRounds {
		err = &state.Error{Reason: state.ReasonRoundLimit, Detail: "round past the server's limit"}
	}
	if err != nil {
		reason, _ := state.ReasonOf(err)
		s.log.Info("mrtr: requestState refused", "reason", reason.String(), "method", want.Method, "target", want.Target)
		return state.Claims{}, ErrInvalidState(reason == state.ReasonExpired)
	}
	return claims, nil
}

// decodeResponses decodes the answers to the asked keys by the kind each
// was asked as. Answers to keys not asked are ignored.
func (s *Server) decodeResponses(raw json.RawMessage, asked map[string]state.Kind, out *Responses) *Error {
	if isAbsent(raw) {
		return nil
	}
	if raw[0] != '{' {
		return ErrInvalidParams("inputResponses must be an object", nil)
	}
	total := 0
	var perr *Error
	err := eachMember(raw, func(key string, v json.RawMessage) error {
		total++
		kind, ok := asked[key]
		if !ok || isAbsent(v) {
			return nil
		}
		if out.has(key) {
			perr = ErrInvalidParams(fmt.Sprintf("Invalid input response %q: answered twice", key), map[string]string{"key": key})
			return perr
		}
		ans, err := decodeAnswer(kind, v)
		if err != nil {
			perr = ErrInvalidParams(fmt.Sprintf("Invalid input response %q: %v", key, err), map[string]string{"key": key})
			return perr
		}
		out.put(key, kind, ans)
		return nil
	})
	if perr != nil {
		return perr
	}
	if err != nil {
		return ErrInvalidParams("inputResponses must be an object", nil)
	}
	if total > out.Len() {
		s.log.Debug("mrtr: ignored input responses to keys that were not asked", "count", total-out.Len())
	}
	return nil
}

// inputRequired gates, seals and renders an input-required result.
func (s *Server) inputRequired(c *call, r *InputRequired, binding state.Binding, round int) (json.RawMessage, *Error) {
	// What the handler embeds is validated first: a malformed request is a
	// server bug whatever the client declared.
	asked := make(map[string]state.Kind, len(r.Requests))
	wire := make(map[string]inputRequestWire, len(r.Requests))
	for key, ir := range r.Requests {
		if key == "" {
			return nil, s.internal("input request", fmt.Errorf("handler for %s %q asked with an empty key", c.method, c.target))
		}
		if err := validateInputRequest(ir); err != nil {
			return nil, s.internal("input request", fmt.Errorf("handler for %s %q: request %q: %w", c.method, c.target, key, err))
		}
		asked[key] = ir.inputKind()
		wire[key] = wireInputRequest(ir)
	}
	if err := gateCapabilities(r.Requests, c.meta.ClientCapabilities); err != nil {
		return nil, err
	}
	next := round + 1
	if next > s.maxRounds {
		return nil, s.internal("round limit", fmt.Errorf("handler for %s %q asked for round %d; the limit is %d", c.method, c.target, next, s.maxRounds))
	}
	token, err := s.codec.Seal(state.Claims{
		Principal: binding.Principal, Audience: binding.Audience, Method: binding.Method,
		Target: binding.Target, ArgsDigest: binding.ArgsDigest, Round: next, Asked: asked, Payload: r.State,
	})
	if err != nil {
		return nil, s.internal("seal requestState", err)
	}
	// inputRequests is always present, {} for a load-shedding round: some
	// clients retry a state-only answer only when they see the map.
	body := struct {
		InputRequests map[string]inputRequestWire `json:"inputRequests"`
		RequestState  string                      `json:"requestState"`
	}{wire, token}
	return s.render(ResultInputRequired, &body, nil, nil)
}

// render encodes a result with its resultType, cache hint and _meta
// (the server's identity merged with the handler's own _meta).
func (s *Server) render(resultType string, v any, meta Object, hint *discover.Hint) (json.RawMessage, *Error) {
	body, err := json.Marshal(v)
	if err != nil {
		return nil, s.internal("render result", err)
	}
	out := make([]byte, 0, len(body)+len(s.infoMeta)+64)
	out = append(out, `{"resultType":"`...)
	out = append(out, resultType...)
	out = append(out, '"')
	if len(body) > 2 {
		out = append(out, ',')
		out = append(out, body[1:len(body)-1]...)
	}
	if hint != nil {
		out = append(out, `,"ttlMs":`...)
		out = strconv.AppendInt(out, hint.TTLMs, 10)
		out = append(out, `,"cacheScope":"`...)
		out = append(out, hint.CacheScope...)
		out = append(out, '"')
	}
	if _, ok := meta[MetaServerInfo]; ok {
		// The server's identity is the framework's; copy rather than
		// change the handler's map, which may be shared.
		cp := make(Object, len(meta))
		for k, v := range meta {
			if k != MetaServerInfo {
				cp[k] = v
			}
		}
		meta = cp
	}
	if len(meta) > 0 || s.infoMeta != nil {
		out = append(out, `,"_meta":{`...)
		out = append(out, s.infoMeta...)
		if len(meta) > 0 {
			mb, err := json.Marshal(meta)
			if err != nil {
				return nil, s.internal("render _meta", err)
			}
			if s.infoMeta != nil {
				out = append(out, ',')
			}
			out = append(out, mb[1:len(mb)-1]...)
		}
		out = append(out, '}')
	}
	return append(out, '}'), nil
}

func (s *Server) completion(ctx context.Context, c *call) (json.RawMessage, *Error) {
	var req CompleteRequest
	if json.Unmarshal(c.p.Ref, &req.Ref) != nil || json.Unmarshal(c.p.Argument, &req.Argument) != nil {
		return nil, ErrInvalidParams("completion/complete needs ref and argument objects", nil)
	}
	if !isAbsent(c.p.Context) && json.Unmarshal(c.p.Context, &req.Context) != nil {
		return nil, ErrInvalidParams("completion/complete context must be an object", nil)
	}
	switch req.Ref.Type {
	case "ref/prompt":
		if req.Ref.Name == "" {
			return nil, ErrInvalidParams("ref/prompt needs a name", nil)
		}
	case "ref/resource":
		if req.Ref.URI == "" {
			return nil, ErrInvalidParams("ref/resource needs a uri", nil)
		}
	default:
		return nil, ErrInvalidParams(`ref.type must be "ref/prompt" or "ref/resource"`, nil)
	}
	if req.Argument.Name == "" {
		return nil, ErrInvalidParams("argument.name is required", nil)
	}
	s.mu.RLock()
	h := s.complete
	s.mu.RUnlock()
	if h == nil {
		// Advertised by the description with no handler: nothing to offer.
		h = CompletionHandlerFunc(func(context.Context, *CompleteRequest) (*Completion, error) { return &Completion{}, nil })
	}
	comp, err := h.Complete(ctx, &req)
	if err != nil {
		if e, ok := AsError(err); ok {
			return nil, e
		}
		return nil, s.internal("completion handler", err)
	}
	if comp == nil {
		comp = &Completion{}
	}
	cp := *comp
	if cp.Values == nil {
		cp.Values = []string{}
	}
	if len(cp.Values) > 100 {
		cp.Values = cp.Values[:100]
		cp.HasMore = true
	}
	return s.render(ResultComplete, &struct {
		Completion Completion `json:"completion"`
	}{cp}, nil, nil)
}
