package streamablehttp

import (
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// defaultCORSMaxAge is how long a browser may keep a preflight answer
// when CORS.MaxAge is not set.
const defaultCORSMaxAge = 10 * time.Minute

// CORS configures Cross-Origin Resource Sharing, which lets scripts in web
// pages of other origins call the endpoint; see WithCORS. The origins
// granted are exactly those WithAllowedOrigins allows (by default, http
// and https origins on loopback names); no other list exists to get out
// of step with it.
type CORS struct {
	// MaxAge is how long a browser may reuse a preflight answer (default
	// 10 minutes; browsers cap it, Chromium at two hours). A tool
	// registered later with a new Mcp-Param-* header does not wait for
	// it: a browser sends a new preflight for a header its cached answer
	// does not list.
	MaxAge time.Duration
	// AllowCredentials answers Access-Control-Allow-Credentials: true, so
	// that pages may send cookies or TLS client certificates with
	// credentials: "include". Only for a server that authenticates by
	// them; a bearer token in Authorization needs no credentials mode.
	// New refuses it together with "*" in WithAllowedOrigins.
	AllowCredentials bool
	// AllowHeaders lists request headers pages may send beyond those of
	// the protocol, for example headers named in WithForwardedHeaders.
	AllowHeaders []string
	// ExposeHeaders lists response headers scripts may read beyond
	// Mcp-Session-Id, WWW-Authenticate and Allow.
	ExposeHeaders []string
}

// WithCORS answers browsers' cross-origin requests from the origins
// WithAllowedOrigins allows (by default, loopback origins only).
//
// A preflight (OPTIONS with Origin and Access-Control-Request-Method)
// from an allowed origin is answered 204 No Content, before
// authentication (browsers send no credentials with it), with
// Access-Control-Allow-Origin naming that origin, Vary: Origin, the
// methods the endpoint serves in Access-Control-Allow-Methods (POST, and
// GET and DELETE when the initialize era is served), Access-Control-Max-Age, and in
// Access-Control-Allow-Headers the request headers of the protocol:
// Content-Type, Accept, Authorization, MCP-Protocol-Version, Mcp-Method,
// Mcp-Name, Mcp-Session-Id, Last-Event-ID, every Mcp-Param-* header the
// tools registered at that moment declare (mrtr.Server.ParamHeaders),
// and CORS.AllowHeaders. Every other answer to an allowed origin carries
// Access-Control-Allow-Origin, Vary: Origin and
// Access-Control-Expose-Headers (Mcp-Session-Id, WWW-Authenticate, Allow
// and CORS.ExposeHeaders), errors included, so that a page can read why
// it was refused. A request, preflight or not, from an origin that is not
// allowed is refused with 403 Forbidden and no CORS headers, as it is
// without this option; so is a request whose Host is not allowed.
//
// Without WithCORS no CORS header is sent and OPTIONS is answered 405:
// browsers then refuse every cross-origin call that needs a preflight,
// which is every MCP request.
func WithCORS(c CORS) Option {
	return optionFunc(func(cfg *config) { cfg.cors = &c })
}

// protocolRequestHeaders are the request headers a client of either era
// may send, in the order of the preflight answer.
var protocolRequestHeaders = []string{
	"Content-Type", "Accept", "Authorization", "MCP-Protocol-Version",
	"Mcp-Method", "Mcp-Name", hdrSessionID, "Last-Event-ID",
}

// corsPolicy is a validated CORS configuration with its constant header
// values built once.
type corsPolicy struct {
	credentials bool
	allowBase   string   // the fixed part of Access-Control-Allow-Headers
	methods     []string // Access-Control-Allow-Methods
	maxAge      []string // Access-Control-Max-Age
	expose      []string // Access-Control-Expose-Headers
}

var (
	hvTrue      = []string{"true"}
	hvVary      = []string{"Origin"}
	hvVaryPre   = []string{"Origin, Access-Control-Request-Method, Access-Control-Request-Headers"}
	errCORSCred = errors.New(`streamablehttp: CORS credentials cannot be allowed for every origin ("*" in WithAllowedOrigins)`)
)

func newCORSPolicy(c *CORS, g *guard, allow string) (*corsPolicy, error) {
	if c == nil {
		return nil, nil
	}
	if c.AllowCredentials && g.anyOrigin {
		return nil, errCORSCred
	}
	maxAge := c.MaxAge
	if maxAge == 0 {
		maxAge = defaultCORSMaxAge
	}
	if maxAge < 0 {
		return nil, errors.New("streamablehttp: CORS max age must not be negative")
	}
	allowHeaders := append([]string(nil), protocolRequestHeaders...)
	for _, n := range c.AllowHeaders {
		if n = strings.TrimSpace(n); n != "" {
			allowHeaders = append(allowHeaders, http.CanonicalHeaderKey(n))
		}
	}
	expose := []string{hdrSessionID, "WWW-Authenticate", "Allow"}
	for _, n := range c.ExposeHeaders {
		if n = strings.TrimSpace(n); n != "" {
			expose = append(expose, http.CanonicalHeaderKey(n))
		}
	}
	return &corsPolicy{
		credentials: c.AllowCredentials,
		allowBase:   strings.Join(allowHeaders, ", "),
		methods:     []string{allow},
		maxAge:      []string{strconv.Itoa(int(maxAge / time.Second))},
		expose:      []string{strings.Join(expose, ", ")},
	}, nil
}

// isPreflight reports whether r is a CORS preflight request.
func isPreflight(r *http.Request) bool {
	return r.Method == http.MethodOptions && len(r.Header["Origin"]) == 1 && len(r.Header["Access-Control-Request-Method"]) > 0
}

// preflight answers a preflight from an allowed origin. The Mcp-Param-*
// headers are read from the server at each preflight, as tools may come
// and go.
func (h *Handler) preflight(w http.ResponseWriter, r *http.Request) {
	p := h.cors
	hd := w.Header()
	hd["Access-Control-Allow-Origin"] = r.Header["Origin"]
	hd["Vary"] = hvVaryPre
	hd["Access-Control-Allow-Methods"] = p.methods
	allow := p.allowBase
	if params := h.srv.ParamHeaders(); len(params) > 0 {
		allow += ", " + strings.Join(params, ", ")
	}
	hd["Access-Control-Allow-Headers"] = []string{allow}
	hd["Access-Control-Max-Age"] = p.maxAge
	if p.credentials {
		hd["Access-Control-Allow-Credentials"] = hvTrue
	}
	w.WriteHeader(statusPreflight)
}

// grant adds the CORS headers of an actual (not preflight) response to
// a request that passed the Origin check.
func (h *Handler) grant(w http.ResponseWriter, r *http.Request) {
	hd := w.Header()
	hd["Vary"] = hvVary
	origin := r.Header["Origin"]
	if len(origin) != 1 {
		return // not a cross-origin browser request
	}
	hd["Access-Control-Allow-Origin"] = origin
	hd["Access-Control-Expose-Headers"] = h.cors.expose
	if h.cors.credentials {
		hd["Access-Control-Allow-Credentials"] = hvTrue
	}
}
