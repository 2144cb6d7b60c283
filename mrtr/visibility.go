package mrtr

import "strings"

// Kinds of the entries a Visibility decides on.
const (
	KindTool             = "tool"
	KindPrompt           = "prompt"
	KindResource         = "resource"
	KindResourceTemplate = "resourceTemplate"
)

// A Visibility decides whether a caller (the principal the transport
// authenticated, with its token when there is one) may see and use one
// entry: a tool, prompt, resource or resource template (kind), named by
// its name, URI or URI template. It must be fast and must not block: it
// runs for every entry of every list.
type Visibility func(principal string, token *TokenInfo, kind, name string) bool

// WithVisibility shows each caller only the entries v lets it see. Lists
// leave the others out; a call, get or read of one is answered as if it
// did not exist; server/discover advertises only the kinds of entry the
// caller sees; and since lists then depend on who asks, list and read
// results are marked private to the caller (cacheScope "private"), unless
// the description sets a scope. Completions and listen subscriptions of
// hidden entries are not honoured. Without it every caller sees every
// entry.
func WithVisibility(v Visibility) Option { return optionFunc(func(s *Server) { s.visible = v }) }

// sees reports whether the caller of c may see the entry.
func (s *Server) sees(in *Inbound, kind, name string) bool {
	return s.visible == nil || s.visible(in.Principal, in.Token, kind, name)
}

// Header returns the value of a request header that the transport passed
// on (streamablehttp.WithForwardedHeaders), "" when absent. Names match
// regardless of case.
func (r *Request) Header(name string) string {
	return r.headers[strings.ToLower(name)]
}
