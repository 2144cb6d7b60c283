package streamablehttp

import (
	"net/http"
	"time"
)

// Settings of the http.Server NewHTTPServer returns.
const (
	// defaultReadHeaderTimeout bounds reading a request's headers.
	defaultReadHeaderTimeout = 10 * time.Second
	// defaultIdleTimeout is how long an idle keep-alive connection is
	// kept (less when the connection cap needs room: see ConnLimit).
	defaultIdleTimeout = 60 * time.Second
	// defaultMaxHeaderBytes bounds the size of a request's headers: 64
	// KiB, room for long bearer tokens and Mcp-Param-* headers.
	defaultMaxHeaderBytes = 64 << 10
)

// ServerOption configures NewHTTPServer.
type ServerOption interface{ applyServer(*serverConfig) }

type serverOptionFunc func(*serverConfig)

func (f serverOptionFunc) applyServer(c *serverConfig) { f(c) }

// serverConfig is what ServerOptions set.
type serverConfig struct {
	limit *ConnLimit
}

// WithConnLimit sets the connection cap of NewHTTPServer's server to l
// (by default a new NewConnLimit(DefaultMaxConns)), for example
// NewConnLimit(20000) on a machine with the memory for it, or a
// ConnLimit shared by several servers or read for its Stats. nil turns
// the cap off, and with it the closing of connections whose requests are
// refused for load.
func WithConnLimit(l *ConnLimit) ServerOption {
	return serverOptionFunc(func(c *serverConfig) { c.limit = l })
}

// NewHTTPServer returns an http.Server listening on addr and serving h
// (a Handler, or a mux holding one), with the connection limits an MCP
// endpoint wants: ReadHeaderTimeout (10s), so that a client cannot hold a
// connection by trickling its headers; IdleTimeout (60s); MaxHeaderBytes
// (64 KiB); and a cap on concurrent connections (a ConnLimit of
// DefaultMaxConns, or as WithConnLimit says). At the cap, the connections
// idle longest are closed to make room for new ones, and when none is
// idle a new connection's request is refused with 503 and the connection
// closed; answers refused for load (429, 503) close their HTTP/1
// connection. So clients that hold many connections open, or keep them
// after a refusal, cost the server a bounded amount of memory. The cap
// works through the server's ConnContext, ConnState and Handler: replace
// none of them afterwards (setting them before, on a server of your own,
// and calling ConnLimit.Apply keeps both).
//
// ReadTimeout and WriteTimeout are deliberately left at zero. They bound
// a whole request, headers to last byte, so they would cut the event
// streams that stay open for as long as a client listens
// (subscriptions/listen, and the GET stream of the initialize era).
// The Handler bounds reading each body and each write itself instead
// (WithReadTimeout, WithWriteTimeout), which stops slow or stalled
// clients without limiting how long a healthy stream lives. Handlers
// mounted beside it get no such bounds; give them their own
// (http.TimeoutHandler) if they need them.
//
// Start it with ListenAndServe (or ListenAndServeTLS, or Serve), and on
// shutdown call the mrtr.Server's Close before Shutdown, as Handler says.
func NewHTTPServer(addr string, h http.Handler, opts ...ServerOption) *http.Server {
	c := serverConfig{limit: NewConnLimit(DefaultMaxConns)}
	for _, o := range opts {
		if o != nil {
			o.applyServer(&c)
		}
	}
	hs := &http.Server{
		Addr:              addr,
		Handler:           h,
		ReadHeaderTimeout: defaultReadHeaderTimeout,
		IdleTimeout:       defaultIdleTimeout,
		MaxHeaderBytes:    defaultMaxHeaderBytes,
	}
	if c.limit != nil {
		c.limit.Apply(hs)
	}
	return hs
}
