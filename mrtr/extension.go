package mrtr

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"

	"github.com/mrtrkit/mrtrkit/internal/wire"
)

// MethodSpec describes a method a protocol extension adds (SEP-2133):
// what the validation ladder needs to know about it, and its handler.
// Such a method passes the same ladder as the core ones: version,
// _meta, the required extension, the Mcp-Method and Mcp-Name headers,
// interceptors, limits and the audit record.
type MethodSpec struct {
	// Extension is the identifier of the extension the method belongs
	// to, such as "io.modelcontextprotocol/tasks". A request that does
	// not declare it in its clientCapabilities.extensions is refused
	// with -32021 naming it, before its params are looked at. "" for a
	// custom method that needs no declaration.
	Extension string
	// Target names the params member that names the request's target,
	// such as "taskId": it must be a string when present, and on
	// Streamable HTTP the Mcp-Name header must mirror it. "" for none.
	Target string
	// Stream lets the handler send notifications related to the request
	// (MethodRequest.Notify); without it Notify does nothing.
	Stream bool
	// Kinds are the resultType values, besides "complete", that the
	// handler may answer with (MethodResult.Kind).
	Kinds []string
	// Handler serves the method.
	Handler MethodHandler
}

// MethodHandler serves one extension method. An error that is an *Error
// goes to the client as is (InvalidParamsError for bad params); any other
// becomes -32603 "Internal error" and is logged.
type MethodHandler interface {
	ServeMethod(ctx context.Context, req *MethodRequest) (*MethodResult, error)
}

// MethodHandlerFunc adapts a function to MethodHandler.
type MethodHandlerFunc func(ctx context.Context, req *MethodRequest) (*MethodResult, error)

// ServeMethod calls f.
func (f MethodHandlerFunc) ServeMethod(ctx context.Context, req *MethodRequest) (*MethodResult, error) {
	return f(ctx, req)
}

// MethodRequest is one request to an extension method, validated by the
// ladder.
type MethodRequest struct {
	// Method is the request's method.
	Method string
	// Params are the request's params as sent: a JSON object ({} when
	// absent), _meta included.
	Params json.RawMessage
	// Target is the value of the spec's Target member; "" when absent.
	Target string
	// Meta is this request's _meta.
	Meta *Meta
	// Principal is who the transport authenticated ("" when anonymous).
	Principal string
	// Token is what the transport learned of the caller's credentials.
	Token *TokenInfo

	emit func([]byte) error
}

// Notify sends a notification related to this request (on Streamable
// HTTP it turns the response into an event stream). It does nothing for
// a method whose spec does not allow streaming, or on a transport that
// cannot deliver notifications.
func (r *MethodRequest) Notify(method string, params any) error {
	if r.emit == nil {
		return nil
	}
	b, err := encodeNotification(method, params)
	if err != nil {
		return err
	}
	return r.emit(b)
}

// MethodResult is what an extension method answers: a JSON object Body
// (a struct, a map or a json.RawMessage object; nil for an empty
// acknowledgement), rendered with resultType Kind ("" means "complete")
// and the server's _meta.
type MethodResult struct {
	Kind string
	Body any
}

var (
	methodNameRE = regexp.MustCompile(`^[A-Za-z0-9_./-]{1,128}$`)
	// extensionIDRE is an extension identifier: a reverse-DNS prefix, a
	// slash and a name, as _meta keys are formed.
	extensionIDRE = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?/[A-Za-z0-9_.-]{1,128}$`)
)

// AddMethod registers an extension method. It may not replace a core
// method of MCP 2026-07-28 nor one registered before. Registering a
// method with an Extension advertises the extension in server/discover
// (capabilities.extensions), with no settings unless AddExtension gave
// some.
func (s *Server) AddMethod(name string, spec MethodSpec) error {
	if !methodNameRE.MatchString(name) {
		return fmt.Errorf("mrtr: method name %q must be 1 to 128 characters of A-Z a-z 0-9 _ . / -", name)
	}
	if methods[name] != nil || name == "initialize" || name == "ping" {
		return fmt.Errorf("mrtr: method %q is a core method", name)
	}
	if spec.Handler == nil {
		return fmt.Errorf("mrtr: method %q: nil handler", name)
	}
	if spec.Extension != "" && !extensionIDRE.MatchString(spec.Extension) {
		return fmt.Errorf("mrtr: method %q: extension id %q is not of the form prefix/name", name, spec.Extension)
	}
	if spec.Target == "_meta" {
		return fmt.Errorf("mrtr: method %q: _meta cannot be the target", name)
	}
	kinds := make(map[string]bool, len(spec.Kinds))
	for _, k := range spec.Kinds {
		if k == "" || k == wire.ResultInputRequired {
			return fmt.Errorf("mrtr: method %q: result kind %q is reserved", name, k)
		}
		kinds[k] = true
	}
	m := &method{target: spec.Target, extension: spec.Extension}
	h, stream := spec.Handler, spec.Stream
	m.serve = func(s *Server, ctx context.Context, c *call) (json.RawMessage, *Error) {
		return s.serveExtension(ctx, c, h, stream, kinds)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.extMethods[name]; ok {
		return fmt.Errorf("mrtr: method %q is already registered", name)
	}
	if s.extMethods == nil {
		s.extMethods = make(map[string]*method)
	}
	s.extMethods[name] = m
	if spec.Extension != "" {
		if s.extensions == nil {
			s.extensions = make(map[string]map[string]any)
		}
		if _, ok := s.extensions[spec.Extension]; !ok {
			s.extensions[spec.Extension] = map[string]any{}
		}
	}
	s.changed(0)
	return nil
}

// AddExtension advertises an extension in server/discover
// (capabilities.extensions[id]) with its settings (nil for none, shown
// as {}). Methods registered with AddMethod advertise theirs by
// themselves; use this for an extension that adds no method of its own,
// or to give settings.
func (s *Server) AddExtension(id string, settings map[string]any) error {
	if !extensionIDRE.MatchString(id) {
		return fmt.Errorf("mrtr: extension id %q is not of the form prefix/name", id)
	}
	if settings == nil {
		settings = map[string]any{}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.extensions == nil {
		s.extensions = make(map[string]map[string]any)
	}
	s.extensions[id] = settings
	s.changed(0)
	return nil
}

// extMethod returns the extension method registered under name, or nil.
func (s *Server) extMethod(name string) *method {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.extMethods[name]
}

// Declares reports whether the client declared the extension id on this
// request (clientCapabilities.extensions).
func (m *Meta) Declares(id string) bool {
	if m == nil {
		return false
	}
	_, ok := m.ClientCapabilities.Extensions[id]
	return ok
}

// missingExtension is the -32021 for a request that did not declare the
// extension id it needs.
func missingExtension(id string) *Error {
	return missingCapability(ClientCapabilities{Extensions: map[string]Object{id: {}}})
}

// readMember returns the raw value of the params member name.
func (c *call) readMember(name string) json.RawMessage {
	var out json.RawMessage
	if len(c.in.Message.Params) == 0 || c.in.Message.Params[0] != '{' {
		return nil
	}
	_ = wire.EachMember(c.in.Message.Params, func(n string, v json.RawMessage) error {
		if n == name {
			out = v
		}
		return nil
	})
	return out
}

// serveExtension runs an extension method's handler and renders what it
// answers.
func (s *Server) serveExtension(ctx context.Context, c *call, h MethodHandler, stream bool, kinds map[string]bool) (json.RawMessage, *Error) {
	params := c.in.Message.Params
	if isAbsent(params) {
		params = emptyObject
	} else if params[0] != '{' {
		return nil, InvalidParamsError(c.method + " params must be an object")
	}
	req := &MethodRequest{Method: c.method, Params: params, Target: c.target, Meta: c.meta, Principal: c.in.Principal, Token: c.in.Token}
	if stream {
		req.emit = c.in.Emit
	}
	c.stage = StageNone
	res, err := h.ServeMethod(ctx, req)
	if err != nil {
		var e *Error
		if errors.As(err, &e) {
			return nil, e
		}
		return nil, s.internal("extension method failed", err, c)
	}
	kind, body := wire.ResultComplete, any(emptyObject)
	if res != nil {
		if res.Kind != "" && res.Kind != wire.ResultComplete {
			if !kinds[res.Kind] {
				return nil, s.internal("extension method answered with a result kind it did not declare", fmt.Errorf("kind %q", res.Kind), c)
			}
			kind = res.Kind
		}
		if res.Body != nil {
			body = res.Body
		}
	}
	c.rec.ResultType = kind
	return s.render(kind, body, nil, nil)
}
