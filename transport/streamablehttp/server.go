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
	// kept.
	defaultIdleTimeout = 120 * time.Second
	// defaultMaxHeaderBytes bounds the size of a request's headers: 64
	// KiB, room for long bearer tokens and Mcp-Param-* headers.
	defaultMaxHeaderBytes = 64 << 10
)

// NewHTTPServer returns an http.Server listening on addr and serving h
// (a Handler, or a mux holding one), with the connection limits an MCP
// endpoint wants: ReadHeaderTimeout (10s), so that a
// client cannot hold a connection by trickling its headers; IdleTimeout
// (120s); and MaxHeaderBytes (64 KiB).
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
// Start it with ListenAndServe (or ListenAndServeTLS), and on shutdown
// call the mrtr.Server's Close before Shutdown, as Handler says.
func NewHTTPServer(addr string, h http.Handler) *http.Server {
	return &http.Server{
		Addr:              addr,
		Handler:           h,
		ReadHeaderTimeout: defaultReadHeaderTimeout,
		IdleTimeout:       defaultIdleTimeout,
		MaxHeaderBytes:    defaultMaxHeaderBytes,
	}
}
