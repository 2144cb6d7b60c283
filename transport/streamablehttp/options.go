package streamablehttp

import (
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/mrtrkit/mrtrkit/mrtr/legacy"
)

// Defaults of the Handler's settings.
const (
	// defaultPath is where the endpoint is served.
	defaultPath = "/mcp"
	// defaultMaxBodyBytes bounds the size of a request body: 4 MiB.
	defaultMaxBodyBytes int64 = 4 << 20
	// defaultKeepAlive is the interval of SSE keep-alive comments.
	defaultKeepAlive = 15 * time.Second
	// defaultReadTimeout bounds reading a request body (WithReadTimeout).
	defaultReadTimeout = 30 * time.Second
	// defaultWriteTimeout bounds each write of a response
	// (WithWriteTimeout).
	defaultWriteTimeout = 30 * time.Second
	// defaultMaxBytesInFlight bounds the bytes of large request bodies
	// and answers held at once (WithMaxBytesInFlight): 4 MiB.
	defaultMaxBytesInFlight int64 = 4 << 20
)

// Option configures a Handler.
type Option interface{ apply(*config) }

type optionFunc func(*config)

func (f optionFunc) apply(c *config) { f(c) }

type config struct {
	path      string
	maxBody   int64
	origins   []string
	hosts     []string
	auth      Authenticator
	log       *slog.Logger
	keepAlive time.Duration
	legacy    *legacy.Engine
	noLegacy  bool // WithoutLegacy

	forward          []string // canonical names of the forwarded headers
	resourceMetadata string

	readTimeout  time.Duration
	writeTimeout time.Duration
	maxInFlight  int64 // 0: no budget of bytes in flight
	cors         *CORS // nil: no CORS headers

	routes []route // served beside the endpoint
}

// route is a handler served beside the endpoint, at its own path.
type route struct {
	what string // what it serves, for New's errors
	path string
	h    http.Handler
}

func defaultConfig() config {
	return config{path: defaultPath, maxBody: defaultMaxBodyBytes, keepAlive: defaultKeepAlive,
		readTimeout: defaultReadTimeout, writeTimeout: defaultWriteTimeout, maxInFlight: defaultMaxBytesInFlight}
}

// WithPath sets the URL path of the endpoint (default "/mcp"). It must
// start with "/". The path is literal: it is compared with the request's
// path byte for byte, so "/t/{tenant}/mcp" is served at exactly that path
// (braces included) and not at "/t/acme/mcp". Requests for any other path
// get 404, unless an option serves something there (see Handler).
func WithPath(p string) Option { return optionFunc(func(c *config) { c.path = p }) }

// WithResourceMetadataHandler serves h at path beside the endpoint: the
// RFC 9728 protected resource metadata document, usually
// oauth.MetadataHandler at oauth.MetadataPath(resource), whose URL
// WithResourceMetadata and the authenticator's challenge name. Requests
// for path go to h as they are, without the endpoint's checks of Host,
// Origin and authentication: the document is public. The path is literal,
// as WithPath's is, and must differ from every other path the Handler
// serves, or New fails.
func WithResourceMetadataHandler(path string, h http.Handler) Option {
	return optionFunc(func(c *config) {
		c.routes = append(c.routes, route{what: "resource metadata", path: path, h: h})
	})
}

// WithLiveness serves Liveness() at path (such as "/livez") beside the
// endpoint, without the endpoint's checks, as WithResourceMetadataHandler
// serves its handler.
func WithLiveness(path string) Option {
	return optionFunc(func(c *config) {
		c.routes = append(c.routes, route{what: "liveness", path: path, h: Liveness()})
	})
}

// WithReadiness serves p (see Readiness) at path (such as "/readyz")
// beside the endpoint, without the endpoint's checks, as
// WithResourceMetadataHandler serves its handler. Keep p to call its
// Drain on shutdown.
func WithReadiness(path string, p *ReadinessProbe) Option {
	return optionFunc(func(c *config) {
		rt := route{what: "readiness", path: path}
		if p != nil {
			rt.h = p
		}
		c.routes = append(c.routes, rt)
	})
}

// WithMaxBodyBytes bounds the request body (default 4 MiB). A body of exactly n bytes is read; a longer one is answered with
// 413 Content Too Large and a JSON-RPC -32600 error without an id.
func WithMaxBodyBytes(n int64) Option { return optionFunc(func(c *config) { c.maxBody = n }) }

// WithAllowedOrigins lists the browser origins allowed to call the
// endpoint, each exactly as a browser sends it, such as
// "http://localhost:3000" or "https://app.example.com" (compared without
// regard to case). "*" allows every origin. A request whose Origin header
// is not listed is answered with 403 Forbidden; a request without Origin
// (any non-browser client) is not affected.
//
// Without this option only http and https origins on loopback names
// (localhost, 127.0.0.1, [::1], any port) are allowed. A server reachable
// from other machines must list the origins of its browser clients here,
// and its own names with WithAllowedHosts.
func WithAllowedOrigins(origins ...string) Option {
	return optionFunc(func(c *config) { c.origins = append(c.origins, origins...) })
}

// WithAllowedHosts lists the values the Host header may take: a host name
// or IP literal alone allows it on any port, "host:port" on that port only
// ("[::1]:8080" for IPv6). Names compare without regard to case. "*"
// allows every host, for a server behind a proxy that has already checked
// it. Any other Host is answered with 403 Forbidden, which defeats DNS
// rebinding attacks against a local server.
//
// Without this option only loopback names are allowed: localhost,
// 127.0.0.1 and [::1], on any port. That is the right default for a local
// server and the wrong one for a server listening on a public interface,
// which must list the names clients use to reach it.
func WithAllowedHosts(hosts ...string) Option {
	return optionFunc(func(c *config) { c.hosts = append(c.hosts, hosts...) })
}

// WithAuthenticator sets who may call the endpoint (default: everyone,
// anonymously). See Authenticator and BearerAuthenticator.
func WithAuthenticator(a Authenticator) Option { return optionFunc(func(c *config) { c.auth = a }) }

// WithLogger sets the logger for refused requests (at debug level) and
// for failures to write a response, and of the Engine New makes for the
// initialize era (default: the Server's, mrtr.Server.Logger).
func WithLogger(l *slog.Logger) Option { return optionFunc(func(c *config) { c.log = l }) }

// WithKeepAlive sets the interval of the ": keep-alive" SSE comments sent
// while a streamed request runs, so that proxies do not close an idle
// stream (default 15s; 0 disables them). The timer runs
// only once a response has switched to SSE.
func WithKeepAlive(d time.Duration) Option { return optionFunc(func(c *config) { c.keepAlive = d }) }

// WithLegacy serves clients of the initialize era (MCP 2025-11-25 and
// 2025-06-18) at the same endpoint through e, which must serve the same
// mrtr.Server. Requests are told apart as the package documentation
// says; the endpoint then answers GET (the session's stream) and DELETE
// (the end of a session) as well as POST.
//
// Without it, New makes the Engine itself (legacy.New, with the Handler's
// logger) whenever the server's description lists LegacyVersions, as
// mrtr.New's does; give one of your own to set its options, for example
// legacy.WithKeyRing when the Server's keys do not come from the
// MRTRKIT_STATE_KEYS environment variable, or to reload its SessionCodec.
func WithLegacy(e *legacy.Engine) Option { return optionFunc(func(c *config) { c.legacy = e }) }

// WithoutLegacy serves MCP 2026-07-28 only: no Engine is made, a client
// of the initialize era gets -32022 naming the versions served, and GET
// and DELETE get 405. The server's description must then list no
// LegacyVersions (server/discover would advertise versions the endpoint
// refuses), or New fails: build the Server with mrtr.NewServer and a
// description without them.
func WithoutLegacy() Option { return optionFunc(func(c *config) { c.noLegacy = true }) }

// WithForwardedHeaders passes the named request headers on to handlers
// (mrtr.Request.Header) and interceptors (mrtr.Call.Headers), for
// example a tenant header set by a gateway in front of the server. Only
// headers named here are passed; the names match regardless of case.
// Values pass as they are; a repeated header passes its first value.
func WithForwardedHeaders(names ...string) Option {
	return optionFunc(func(c *config) {
		for _, n := range names {
			if n = strings.TrimSpace(n); n != "" {
				c.forward = append(c.forward, http.CanonicalHeaderKey(n))
			}
		}
	})
}

// WithResourceMetadata names the RFC 9728 protected resource metadata
// document of the server (its URL), which the WWW-Authenticate challenge
// of a 403 for insufficient scope carries as resource_metadata, so that a
// client can find where to get a token with more scope. The Handler
// serves the document itself with WithResourceMetadataHandler.
func WithResourceMetadata(url string) Option {
	return optionFunc(func(c *config) { c.resourceMetadata = url })
}

// WithReadTimeout bounds how long reading the body of a POST may take,
// from the moment the Handler starts reading it (default
// 30s; 0 removes the bound). A client that sends its
// headers and then trickles the body, or stops, is answered with 408
// Request Timeout and a JSON-RPC -32600 error, and its connection is
// closed. The bound is lifted once the body is read, so it never cuts a
// stream that a request then opens.
func WithReadTimeout(d time.Duration) Option {
	return optionFunc(func(c *config) { c.readTimeout = d })
}

// WithWriteTimeout bounds each write of a response (default
// 30s; 0 removes the bound): a plain JSON answer
// must reach the connection within it, and so must every event and
// keep-alive comment of an event stream, each on its own. A client that
// stops reading therefore cannot hold a handler, while an event stream
// that stays open for hours is never cut as long as each write gets
// through. The bound is lifted after each write, so an idle stream is
// not affected.
func WithWriteTimeout(d time.Duration) Option {
	return optionFunc(func(c *config) { c.writeTimeout = d })
}

// WithMaxBytesInFlight bounds the bytes of large messages the Handler
// holds at once, across all its requests (default 4 MiB, the default body
// limit; 0 removes the bound). A message is large when it is longer than
// 64 KiB; smaller ones are never counted and never wait, so an ordinary
// call is not held up by large ones.
//
// The bound also keeps ordinary calls fast under a flood of large ones:
// parsing, checking and encoding a large message is CPU work, and every
// large request handled at once is one more goroutine an ordinary call
// queues behind. With 200 clients sending 512 KiB requests and never
// reading the answers, a 32 MiB budget let about 64 of them run at once
// and ordinary calls waited up to half a second on two cores; at 4 MiB
// they waited at most 40 ms. Raise it for servers whose clients send many
// large messages at once, on machines with the cores to match.
//
// A request whose body is large takes its share once the first 64 KiB of
// the body are in (the length its Content-Length declares, or the body
// limit, WithMaxBodyBytes, when it declares none), so that a client holds
// nothing of the budget before it has sent that much, and holds it while
// the request is handled. A large JSON answer takes its own length before
// it is written, the body's share going back, and holds it until it is
// written or the write timeout cuts the connection. A request whose
// answer becomes an event stream gives its share back when the stream
// begins; events are not counted. A message longer than n bytes goes when
// nothing else is in flight.
//
// A body waits for room within its read timeout (WithReadTimeout), an
// answer at most the write timeout (WithWriteTimeout); past that the
// request is answered with 503 Service Unavailable, Retry-After: 1 and a
// JSON-RPC -32603 error, "Server busy" (an answer that found no room is
// replaced by that error, with the request's id).
//
// The bound is what keeps clients that send large requests and then stop
// reading their answers from holding the server's memory: each holds its
// answer until the write timeout, and with the bound, memory held by such
// clients stops at about n, and later large requests wait or are refused
// instead. Size n for the large messages the server is expected to serve
// at once; the process needs memory for n bytes and for the copies
// handlers make of what they are given (the Go runtime's GOMEMLIMIT can
// then be set somewhat above twice n plus the server's own needs).
func WithMaxBytesInFlight(n int64) Option {
	return optionFunc(func(c *config) { c.maxInFlight = n })
}
