// Command server is the conformance fixture server of mrtrkit: one
// Streamable HTTP endpoint exposing every tool, prompt, resource, resource
// template and completion the official MCP conformance suite calls for the
// 2026-07-28 and 2025-11-25 revisions, plus the fixtures of the client
// interop tests (interop.go), built on mrtrkit alone. Clients of the
// initialize era (2025-11-25, 2025-06-18) are served on the same endpoint
// by package mrtr/legacy.
//
// It listens on -addr (default 127.0.0.1:3001) and serves MCP at -path
// (default /mcp). With -stdio it serves the same fixtures on standard input
// and output instead (package transport/stdio), as a client's subprocess:
// both eras (2026-07-28 message by message; 2025-11-25 when the first
// message is initialize), until stdin ends or SIGINT/SIGTERM, then it
// exits 0; -addr and -path are then unused. -leg-timeout bounds how long a
// 2025-11-25 client may take to answer one server-to-client request
// (default legacy.DefaultLegTimeout; the interop tests use 2s). Logs go to
// stderr, always: in -stdio mode nothing but MCP messages reaches stdout.
// requestState is sealed with the key ring in MRTRKIT_STATE_KEYS, or with a
// random key made at start-up when that variable is unset (the framework's
// default).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/mrtrkit/mrtrkit/discover"
	"github.com/mrtrkit/mrtrkit/mrtr"
	"github.com/mrtrkit/mrtrkit/mrtr/legacy"
	"github.com/mrtrkit/mrtrkit/transport/stdio"
	"github.com/mrtrkit/mrtrkit/transport/streamablehttp"
)

// serverName and serverVersion identify the fixture server in
// server/discover and in the _meta of every result.
const (
	serverName    = "mrtrkit-conformance-server"
	serverVersion = "0.1.0"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:3001", "address to listen on (host:port)")
	path := flag.String("path", "/mcp", "HTTP path of the MCP endpoint")
	verbose := flag.Bool("v", false, "log every request at debug level")
	legTimeout := flag.Duration("leg-timeout", legacy.DefaultLegTimeout,
		"how long a 2025-11-25 session's client may take to answer one server-to-client request (elicitation, sampling, roots)")
	useStdio := flag.Bool("stdio", false, "serve MCP on stdin and stdout (newline-delimited JSON-RPC) instead of HTTP; -addr and -path are unused")
	flag.Parse()
	if *legTimeout <= 0 {
		fmt.Fprintln(os.Stderr, "-leg-timeout must be positive")
		os.Exit(2)
	}

	level := slog.LevelInfo
	if *verbose {
		level = slog.LevelDebug
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	slog.SetDefault(log)

	if *useStdio {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		if err := runStdio(ctx, os.Stdin, os.Stdout, *legTimeout, log); err != nil {
			log.Error("conformance server failed", "err", err)
			stop()
			os.Exit(1)
		}
		return
	}
	if err := run(*addr, *path, *legTimeout, log); err != nil {
		log.Error("conformance server failed", "err", err)
		os.Exit(1)
	}
}

// run builds the fixture server, serves it until SIGINT or SIGTERM, then
// shuts down gracefully.
func run(addr, path string, legTimeout time.Duration, log *slog.Logger) error {
	srv, err := newFixtureServer(log)
	if err != nil {
		return err
	}
	eng, err := legacy.New(srv, legacy.WithLogger(log), legacy.WithLegTimeout(legTimeout))
	if err != nil {
		return fmt.Errorf("legacy: %w", err)
	}
	h, err := streamablehttp.New(srv, streamablehttp.WithPath(path), streamablehttp.WithLegacy(eng))
	if err != nil {
		return fmt.Errorf("transport: %w", err)
	}

	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	hs := streamablehttp.NewHTTPServer(ln.Addr().String(), accessLog(log, h))
	log.Info("conformance server listening", "url", "http://"+ln.Addr().String()+path)

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()

	select {
	case err := <-errc:
		if errors.Is(err, http.ErrServerClosed) {
			return nil
		}
		return err
	case <-ctx.Done():
	}
	log.Info("shutting down")
	// End open subscriptions/listen streams with their final result, then
	// let in-flight requests finish.
	_ = srv.Close()
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	if err := hs.Shutdown(shutdownCtx); err != nil {
		_ = hs.Close()
	}
	return nil
}

// runStdio serves the fixtures on in and out (the process's stdin and
// stdout) until in ends or ctx is cancelled, with the initialize era served
// through a legacy engine that has the given leg timeout. On a signal the
// Server is closed first, so that open subscriptions/listen streams get
// their final result, and then the transport stops. It returns nil on a
// normal end (the client closed stdin, or a signal), so that the process
// exits 0.
func runStdio(ctx context.Context, in io.Reader, out io.Writer, legTimeout time.Duration, log *slog.Logger) error {
	srv, err := newFixtureServer(log)
	if err != nil {
		return err
	}
	eng, err := legacy.New(srv, legacy.WithLogger(log), legacy.WithLegTimeout(legTimeout))
	if err != nil {
		return fmt.Errorf("legacy: %w", err)
	}
	serveCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	stopped := make(chan struct{})
	defer close(stopped)
	go func() {
		select {
		case <-ctx.Done():
			log.Info("shutting down")
			_ = srv.Close()
			cancel()
		case <-stopped:
		}
	}()
	log.Info("conformance server serving on stdio", "legacy_leg_timeout", legTimeout)
	err = stdio.Serve(serveCtx, srv, in, out, stdio.WithLogger(log), stdio.WithLegacy(eng))
	_ = srv.Close()
	if err == nil && ctx.Err() == nil {
		log.Info("stdin ended; exiting")
	}
	return err
}

// newFixtureServer builds the mrtr.Server with every fixture registered.
func newFixtureServer(log *slog.Logger) (*mrtr.Server, error) {
	desc := discover.Description{
		Server: discover.Implementation{
			Name:    serverName,
			Version: serverVersion,
			Title:   "mrtrkit conformance fixtures",
		},
		Capabilities: discover.Capabilities{
			Logging:     &discover.Empty{},
			Completions: &discover.Empty{},
			Tools:       &discover.ListChanged{ListChanged: true},
			Prompts:     &discover.ListChanged{ListChanged: true},
			Resources:   &discover.ResourcesCapability{ListChanged: true, Subscribe: true},
		},
		// Clients of the initialize era are served too, through the same
		// handlers (package mrtr/legacy).
		LegacyVersions: []string{"2025-11-25", "2025-06-18"},
		Instructions:   "Fixture server for the MCP conformance suite. Every tool, prompt and resource here exists to be called by a named scenario.",
	}
	srv, err := mrtr.NewServer(desc, mrtr.WithLogger(log))
	if err != nil {
		return nil, err
	}
	f := &fixtures{srv: srv}
	for _, register := range []func() error{
		f.registerTools,
		f.registerMRTRTools,
		f.registerPrompts,
		f.registerResources,
		// Last, so that the official suite's resources[0] stays
		// test://static-text.
		f.registerInteropFixtures,
	} {
		if err := register(); err != nil {
			return nil, err
		}
	}
	srv.SetCompletionHandler(mrtr.CompletionHandlerFunc(complete))
	return srv, nil
}

// fixtures holds what the fixture handlers share: the server itself, which
// the list-change triggers mutate.
type fixtures struct {
	srv *mrtr.Server
	// toggleMu serialises the list-change triggers, so that two concurrent
	// calls cannot both see a transient item absent and race to add it.
	toggleMu sync.Mutex
}

// accessLog logs one line per HTTP request: method, path, the Mcp-Method
// and Mcp-Name headers, status and duration.
func accessLog(log *slog.Logger, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec := &statusRecorder{ResponseWriter: w}
		next.ServeHTTP(rec, r)
		status := rec.status
		if status == 0 {
			status = http.StatusOK
		}
		log.Debug("http",
			"method", r.Method,
			"path", r.URL.Path,
			"mcp_method", r.Header.Get("Mcp-Method"),
			"mcp_name", r.Header.Get("Mcp-Name"),
			"status", status,
			"dur", time.Since(start).Round(time.Microsecond),
		)
	})
}

// statusRecorder remembers the status written. It forwards Flush, and
// Unwrap lets http.ResponseController reach the underlying writer, so
// streamed (SSE) responses keep working through it.
type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (s *statusRecorder) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusRecorder) Write(b []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	return s.ResponseWriter.Write(b)
}

func (s *statusRecorder) Flush() {
	if f, ok := s.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (s *statusRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }
