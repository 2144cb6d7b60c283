// Command production is a complete production main for an mrtrkit
// server, the one docs/deployment.md describes: copy it and replace the
// tool. It serves MCP 2026-07-28 and, through the bridge, 2025-11-25 and
// 2025-06-18 clients at one endpoint, with
//
//   - requestState keys required: from the key file MRTRKIT_STATE_KEYS_FILE
//     names (reloaded on SIGHUP and every 30 s), else from
//     MRTRKIT_STATE_KEYS; it refuses to start without keys;
//   - OAuth bearer tokens verified when OAUTH_ISSUER is set (with
//     OAUTH_JWKS_URL, the issuer's JWK set), and the RFC 9728 metadata
//     document at its well-known path;
//   - CORS for the browser origins MCP_ALLOWED_ORIGINS lists (comma
//     separated);
//   - /livez and /readyz probes;
//   - the http.Server of streamablehttp.NewHTTPServer, whose timeouts
//     suit event streams;
//   - a graceful shutdown on SIGTERM or SIGINT: readiness fails at once,
//     and after MCP_DRAIN_DELAY (default 5s, time for the balancer to
//     notice) streams end and requests in flight finish.
//
// MCP_PUBLIC_URL is the endpoint's URL as clients reach it (default
// http://localhost:8080/mcp): the audience requestState is bound to, the
// OAuth resource, the only Host allowed, and the path served. MCP_ADDR
// is the address to listen on (default 127.0.0.1:8080; ":8080" in a
// container). It logs JSON to stderr.
package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/mrtrkit/mrtrkit/mrtr"
	"github.com/mrtrkit/mrtrkit/mrtr/legacy"
	"github.com/mrtrkit/mrtrkit/mrtr/typed"
	"github.com/mrtrkit/mrtrkit/oauth"
	"github.com/mrtrkit/mrtrkit/state"
	"github.com/mrtrkit/mrtrkit/transport/streamablehttp"
)

// Terms is the input of the add tool.
type Terms struct {
	A float64 `json:"a" mcp:"title=First term"`
	B float64 `json:"b" mcp:"title=Second term"`
}

// Sum is its output.
type Sum struct {
	Sum float64 `json:"sum"`
}

func add(_ context.Context, _ *mrtr.Request, in Terms) (Sum, error) {
	return Sum{Sum: in.A + in.B}, nil
}

func main() {
	log := slog.New(slog.NewJSONHandler(os.Stderr, nil))
	if err := run(log); err != nil {
		log.Error("exiting", "err", err)
		os.Exit(1)
	}
}

func run(log *slog.Logger) error {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	public := env("MCP_PUBLIC_URL", "http://localhost:8080/mcp")
	u, err := url.Parse(public)
	if err != nil || u.Host == "" || u.Path == "" {
		return fmt.Errorf("MCP_PUBLIC_URL %q must be an absolute URL with a path", public)
	}
	drain, err := time.ParseDuration(env("MCP_DRAIN_DELAY", "5s"))
	if err != nil {
		return fmt.Errorf("MCP_DRAIN_DELAY: %w", err)
	}

	// The Server: keys required, states bound to this deployment's URL.
	opts := []mrtr.Option{mrtr.RequireKeys(), mrtr.WithAudience(public), mrtr.WithLogger(log)}
	keyFile := os.Getenv("MRTRKIT_STATE_KEYS_FILE")
	var ring *state.KeyRing
	var codec *state.RingCodec
	if keyFile != "" {
		if ring, err = state.LoadKeyRingFile(keyFile); err != nil {
			return err
		}
		if codec, err = state.NewAEAD(ring); err != nil {
			return err
		}
		opts = append(opts, mrtr.WithCodec(codec))
	}
	srv, err := mrtr.New("production-example", "1.0.0", opts...)
	if err != nil {
		return err
	}
	if err := typed.AddTool(srv, mrtr.Tool{Name: "add", Description: "Adds two numbers"}, add); err != nil {
		return err
	}

	// The endpoint. The bridge for 2025 clients is made by
	// streamablehttp.New, reading MRTRKIT_STATE_KEYS as the Server does;
	// with a key file it is made here, so that it seals session ids with
	// the same ring and follows its reloads.
	ready := streamablehttp.Readiness(srv)
	hopts := []streamablehttp.Option{streamablehttp.WithPath(u.Path), streamablehttp.WithAllowedHosts(u.Host),
		streamablehttp.WithLiveness("/livez"), streamablehttp.WithReadiness("/readyz", ready)}
	if keyFile != "" {
		eng, err := legacy.New(srv, legacy.WithKeyRing(ring))
		if err != nil {
			return err
		}
		hopts = append(hopts, streamablehttp.WithLegacy(eng))
		go state.NewKeyRingFile(keyFile, log, codec, eng.SessionCodec()).Watch(ctx, 30*time.Second)
	}
	if issuer := os.Getenv("OAUTH_ISSUER"); issuer != "" {
		verifier, err := oauth.NewVerifier(oauth.Config{Issuer: issuer, Audience: public, JWKSURL: os.Getenv("OAUTH_JWKS_URL")})
		if err != nil {
			return err
		}
		metaURL, err := oauth.MetadataURL(public)
		if err != nil {
			return err
		}
		metaPath, _ := oauth.MetadataPath(public)
		hopts = append(hopts,
			streamablehttp.WithResourceMetadataHandler(metaPath, oauth.MetadataHandler(oauth.Metadata{Resource: public, AuthorizationServers: []string{issuer}})),
			streamablehttp.WithAuthenticator(streamablehttp.BearerAuthenticator(verifier.Verify, oauth.Challenge(metaURL))),
			streamablehttp.WithResourceMetadata(metaURL))
	}
	if origins := os.Getenv("MCP_ALLOWED_ORIGINS"); origins != "" {
		hopts = append(hopts, streamablehttp.WithAllowedOrigins(strings.Split(origins, ",")...),
			streamablehttp.WithCORS(streamablehttp.CORS{}))
	}
	endpoint, err := streamablehttp.New(srv, hopts...)
	if err != nil {
		return err
	}

	// Serve until SIGTERM.
	hs := streamablehttp.NewHTTPServer(env("MCP_ADDR", "127.0.0.1:8080"), endpoint)
	ln, err := net.Listen("tcp", hs.Addr)
	if err != nil {
		return err
	}
	log.Info("serving", "addr", ln.Addr().String(), "url", public)
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}

	// Shut down: fail readiness, give the balancer time to notice, end
	// the streams (Close), then let the requests in flight finish.
	log.Info("shutting down", "drain", drain)
	ready.Drain()
	time.Sleep(drain)
	_ = srv.Close()
	done, cancel := context.WithTimeout(context.Background(), 25*time.Second)
	defer cancel()
	err = hs.Shutdown(done)
	if eng := endpoint.Legacy(); eng != nil {
		_ = eng.Close()
	}
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}

// env returns the environment variable name, or def when it is unset or
// empty.
func env(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}
