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
	"net/url"
	"time"

	"github.com/mrtrkit/mrtrkit/state"
	"github.com/mrtrkit/mrtrkit/transport/stdio"
	"github.com/mrtrkit/mrtrkit/transport/streamablehttp"
)

// EnvAPIKey names the environment variable holding the API key of the
// direct-model mode. The key is never a flag, so that it does not show in
// the process list, and it is never logged.
const EnvAPIKey = "SUMMARIZE_MODEL_API_KEY"

// DefaultAddr is where the server listens unless -addr says otherwise.
const DefaultAddr = "127.0.0.1:8080"

// Settings are the parsed command line and environment.
type Settings struct {
	Addr string
	// Stdio serves MCP on standard input and output instead of HTTP: the
	// server is then a subprocess of its one client (a desktop or editor
	// host), and Addr is unused.
	Stdio  bool
	Config Config
	// ModelURL and Model select the direct-model mode: the base URL of an
	// OpenAI-compatible API (the part before /chat/completions) and the
	// model name. Both empty: the client's model is used through sampling.
	ModelURL string
	Model    string
	// APIKey comes from EnvAPIKey.
	APIKey string
	// RequireKeys refuses to start unless a requestState key ring is
	// configured in the MRTRKIT_STATE_KEYS environment variable
	// (mrtr.RequireKeys), instead of sealing with a random key made at
	// start-up.
	RequireKeys bool
}

// DirectModel reports whether the direct-model mode is selected.
func (s Settings) DirectModel() bool { return s.ModelURL != "" }

// parseFlags reads the command line. getenv supplies the environment.
func parseFlags(args []string, getenv func(string) string, out io.Writer) (Settings, error) {
	var s Settings
	fs := flag.NewFlagSet("summarize_repo", flag.ContinueOnError)
	fs.SetOutput(out)
	fs.Usage = func() {
		fmt.Fprintf(out, "Usage: summarize_repo [flags]\n\n"+
			"Serves the MCP tool summarize_repo over Streamable HTTP at http://ADDR/mcp,\n"+
			"or with -stdio on standard input and output, as a subprocess of an MCP host.\n"+
			"Logs go to standard error.\n\n")
		fs.PrintDefaults()
		fmt.Fprintf(out, "\nEnvironment:\n  %s\n    \tAPI key sent as a bearer token in direct-model mode (optional)\n", EnvAPIKey)
		fmt.Fprintf(out, "  %s\n    \trequestState key ring (see package state); required with -require-keys\n", state.EnvKeys)
	}
	fs.StringVar(&s.Addr, "addr", DefaultAddr, "`host:port` to listen on")
	fs.BoolVar(&s.Stdio, "stdio", false, "serve MCP on stdin and stdout (newline-delimited JSON-RPC) instead of HTTP, "+
		"for a host that starts the server as a subprocess")
	fs.StringVar(&s.Config.Dir, "dir", ".", "`directory` to summarise")
	fs.BoolVar(&s.Config.Critique, "critique", false, "add a third model round that critiques and improves the summary")
	fs.StringVar(&s.ModelURL, "model-url", "", "base `URL` of an OpenAI-compatible chat-completions API; "+
		"when set, the server calls that model itself and the tool completes in one round")
	fs.StringVar(&s.Model, "model", "", "model `name` for -model-url")
	fs.BoolVar(&s.Config.IncludeHidden, "include-hidden", false, "also list and read hidden files and directories "+
		"(names starting with \".\") and files named like credentials (id_rsa, *.pem, *.key, credentials*, ...), "+
		"which are otherwise withheld from the model")
	fs.BoolVar(&s.RequireKeys, "require-keys", false, "refuse to start unless "+state.EnvKeys+" holds the requestState keys, "+
		"instead of using a random key made at start-up")
	if err := fs.Parse(args); err != nil {
		return Settings{}, err
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return Settings{}, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if s.Stdio {
		addrSet := false
		fs.Visit(func(f *flag.Flag) { addrSet = addrSet || f.Name == "addr" })
		if addrSet {
			return Settings{}, errors.New("-addr and -stdio exclude each other: a stdio server listens on no address")
		}
	}
	switch {
	case s.ModelURL == "" && s.Model != "":
		return Settings{}, errors.New("-model needs -model-url")
	case s.ModelURL != "" && s.Model == "":
		return Settings{}, errors.New("-model-url needs -model")
	case s.ModelURL != "":
		u, err := url.Parse(s.ModelURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
			return Settings{}, errors.New("-model-url must be an http or https URL without credentials")
		}
		s.APIKey = getenv(EnvAPIKey)
		if s.APIKey != "" && u.Scheme == "http" && !isLoopback(u.Hostname()) {
			return Settings{}, fmt.Errorf("%s is set: -model-url must be https unless its host is loopback, so that the key is not sent in clear", EnvAPIKey)
		}
	}
	return s, nil
}

// run serves on ln until ctx is done, then shuts down gracefully.
func run(ctx context.Context, s Settings, ln net.Listener, log *slog.Logger) error {
	s.Config.Logger = log
	app, err := newAppFromSettings(s, nil, nil)
	if err != nil {
		return err
	}
	defer app.Close()
	hs := streamablehttp.NewHTTPServer(ln.Addr().String(), app.Handler)
	hs.ErrorLog = slog.NewLogLogger(log.Handler(), slog.LevelWarn)
	mode := "client sampling"
	if s.DirectModel() {
		mode = "direct model " + s.Model
	}
	log.Info("summarize_repo serving", "url", "http://"+ln.Addr().String()+"/mcp",
		"dir", app.repo.Dir(), "critique", s.Config.Critique, "model", mode)
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := hs.Shutdown(shutdown); err != nil {
		return err
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// runStdio serves on in and out (the process's stdin and stdout) until in
// ends or ctx is done. Both eras are served, as over HTTP: 2026-07-28
// message by message, and a session of the initialize era (2025-11-25)
// when the first message is initialize. Nothing but MCP messages is
// written to out; the logs go to log.
func runStdio(ctx context.Context, s Settings, in io.Reader, out io.Writer, log *slog.Logger) error {
	s.Config.Logger = log
	app, err := newAppFromSettings(s, nil, nil)
	if err != nil {
		return err
	}
	defer app.Close()
	mode := "client sampling"
	if s.DirectModel() {
		mode = "direct model " + s.Model
	}
	log.Info("summarize_repo serving on stdio", "dir", app.repo.Dir(), "critique", s.Config.Critique, "model", mode)
	if err := stdio.Serve(ctx, app.Server, in, out, stdio.WithLogger(log)); err != nil {
		return err
	}
	if ctx.Err() == nil {
		log.Info("summarize_repo: stdin ended; exiting")
	}
	return nil
}

// isLoopback reports whether host (a URL's host name, without a port)
// is localhost or a loopback address.
func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
