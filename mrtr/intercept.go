package mrtr

import (
	"context"
	"log/slog"
	"time"
)

// TokenInfo is what a transport's authenticator learned from the
// credentials of a request, such as an OAuth access token. It reaches
// handlers (Request.Token) and interceptors (Call.Token) beside the
// principal, which is its Subject.
type TokenInfo struct {
	// Subject identifies the caller; it is the request's principal.
	Subject string
	// Scopes are the scopes the credentials grant.
	Scopes []string
	// Audience lists who the credentials were issued for.
	Audience []string
	// Expiry is when the credentials expire; zero when unknown.
	Expiry time.Time
	// Extra holds other claims of the credentials, by name.
	Extra map[string]any
}

// HasScope reports whether the token grants scope.
func (t *TokenInfo) HasScope(scope string) bool {
	if t == nil {
		return false
	}
	for _, s := range t.Scopes {
		if s == scope {
			return true
		}
	}
	return false
}

// Call describes one request as the Server serves it, for interceptors.
// The Server fills it in as the request goes through the ladder; when the
// next function of an Interceptor returns, every field is final.
type Call struct {
	// Message is the request.
	Message *Message
	// Principal is who the transport authenticated ("" when anonymous).
	Principal string
	// Token is what the transport's authenticator learned; nil without one.
	Token *TokenInfo
	// Headers are the request headers the transport passed on, by
	// lower-cased name (see Inbound.Headers).
	Headers map[string]string
	// Target is the tool or prompt name or the resource URI, once read.
	Target string
	// StatePresented reports whether the request carried a requestState.
	StatePresented bool
	// Round is the round the verified state recorded: 0 on a first call or
	// when no state was accepted.
	Round int
	// ResultType is the resultType answered ("complete", "input_required");
	// "" when the answer is an error.
	ResultType string
	// Asked lists the keys an input_required answer asks.
	Asked []string
	// Error is the error answered; nil for a result.
	Error *Error
	// Refusal names the step of the Server that refused the request when
	// the Server, not the handler, decided the answer: RefusedAt's name
	// ("params", "version", "meta", "method", "target", "header",
	// "arguments", "state" (with StateReason), "answers", "capability",
	// "round_limit", "limit", "scope", "timeout" or "panic"), as logs and
	// metrics carry it. "" when the handler answered, including with an
	// error of its own.
	Refusal string
	// RefusedAt is the step that refused the request, StageNone when the
	// handler answered. Stages compare in ladder order. An entry hidden
	// from the caller (WithVisibility) is refused at StageTarget, as an
	// unknown one is.
	RefusedAt Stage
	// Resolved reports whether Target named a tool, prompt or resource
	// registered on the Server and visible to the caller. Only then is
	// Target a name the Server chose rather than whatever the client sent.
	Resolved bool
	// StateReason says why a presented requestState was refused
	// ("expired", "integrity", "principal_mismatch", ...), for logs and
	// metrics; never shown to the client.
	StateReason string
	// Start is when the Server began serving the request.
	Start time.Time
}

// An Interceptor wraps the serving of every request. It may look at the
// Call before and after next, change the context, or answer by itself
// without calling next (for a policy of its own). Interceptors run in the
// order given to WithInterceptors, the first outermost; they see every
// request the Server answers, refusals included. Notifications have no
// answer and pass them by.
type Interceptor func(ctx context.Context, call *Call, next func(context.Context) *Response) *Response

// WithInterceptors adds interceptors around the serving of every request.
func WithInterceptors(i ...Interceptor) Option {
	return optionFunc(func(s *Server) {
		for _, x := range i {
			if x != nil {
				s.intercept = append(s.intercept, x)
			}
		}
	})
}

// intercepted serves in through the interceptors.
func (s *Server) intercepted(ctx context.Context, in *Inbound, rec *Call) *Response {
	var run func(i int, ctx context.Context) *Response
	run = func(i int, ctx context.Context) *Response {
		if i == len(s.intercept) {
			// An interceptor may call next more than once: each run
			// gets a call and a response of its own.
			return s.respond(ctx, in, rec, new(call), new(Response))
		}
		return s.intercept[i](ctx, rec, func(ctx context.Context) *Response { return run(i+1, ctx) })
	}
	return run(0, ctx)
}

// AuditLog returns an Interceptor that writes one record to l for every
// multi-round request (tools/call, prompts/get, resources/read) and for
// every refusal: the method, the target, the principal's keyed digest
// (PrincipalDigest, a pseudonym), the round, the keys asked and, for a
// refusal, the step and reason. It never logs argument values, prompts or
// answers.
func AuditLog(l *slog.Logger) Interceptor {
	return func(ctx context.Context, c *Call, next func(context.Context) *Response) *Response {
		resp := next(ctx)
		mrtrMethod := c.Message.Method == MethodToolsCall || c.Message.Method == MethodPromptsGet || c.Message.Method == MethodResourcesRead
		if !mrtrMethod && c.Refusal == "" {
			return resp
		}
		attrs := []slog.Attr{
			slog.String("method", clip(c.Message.Method)),
			slog.String("target", clip(c.Target)),
			slog.String("principal", PrincipalDigest(c.Principal)),
			slog.Int("round", c.Round),
			slog.Bool("state", c.StatePresented),
			slog.Duration("elapsed", time.Since(c.Start)),
		}
		if len(c.Asked) > 0 {
			keys := make([]string, len(c.Asked))
			for i, k := range c.Asked {
				keys[i] = clip(k)
			}
			attrs = append(attrs, slog.Any("asked", keys))
		}
		switch {
		case c.Refusal != "":
			attrs = append(attrs, slog.String("refusal", c.Refusal))
			if c.StateReason != "" {
				attrs = append(attrs, slog.String("state_reason", c.StateReason))
			}
			if c.Error != nil {
				attrs = append(attrs, slog.Int("code", int(c.Error.Code)))
			}
			l.LogAttrs(ctx, slog.LevelWarn, "mrtr audit: refused", attrs...)
		case c.Error != nil:
			attrs = append(attrs, slog.Int("code", int(c.Error.Code)))
			l.LogAttrs(ctx, slog.LevelInfo, "mrtr audit: error", attrs...)
		default:
			attrs = append(attrs, slog.String("result", c.ResultType))
			l.LogAttrs(ctx, slog.LevelInfo, "mrtr audit: round", attrs...)
		}
		return resp
	}
}
