package main

import (
	"errors"
	"log/slog"
	"net/http"

	"github.com/mrtrkit/mrtrkit/discover"
	"github.com/mrtrkit/mrtrkit/mrtr"
	"github.com/mrtrkit/mrtrkit/mrtr/model"
	"github.com/mrtrkit/mrtrkit/mrtr/model/openai"
	"github.com/mrtrkit/mrtrkit/mrtr/typed"
	"github.com/mrtrkit/mrtrkit/transport/streamablehttp"
)

// Version is the example server's version in server/discover.
const Version = "0.1.0"

// Config is what the server summarises and how.
type Config struct {
	// Dir is the directory to summarise.
	Dir string
	// Critique adds a third model round that improves the summary.
	Critique bool
	// Limits bound listing and reading; zero fields take defaults.
	Limits Limits
	// IncludeHidden lists and reads hidden files and directories and files
	// named like credentials, which are otherwise withheld from the model
	// (see IncludeHidden).
	IncludeHidden bool
	// Model answers the tool's questions. Nil means model.Client(): the
	// client's model, asked through sampling in input_required rounds. A
	// model the server calls itself answers inline, and a call completes
	// in one round.
	Model model.Model
	// Logger receives the server's logs; nil means slog.Default().
	Logger *slog.Logger
}

// App is the example server: the MCP server with its one tool behind the
// Streamable HTTP handler.
type App struct {
	// Handler serves MCP at /mcp.
	Handler http.Handler
	// Server is the MCP server behind Handler.
	Server *mrtr.Server
	repo   *Repo
}

// NewApp builds the server. The mrtr and streamablehttp options come last
// so that callers (tests) can replace the codec, the logger or the
// authenticator.
func NewApp(cfg Config, serverOpts []mrtr.Option, httpOpts []streamablehttp.Option) (*App, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	var ropts []RepoOption
	if cfg.IncludeHidden {
		ropts = append(ropts, IncludeHidden())
	}
	repo, err := OpenRepo(cfg.Dir, cfg.Limits, ropts...)
	if err != nil {
		return nil, err
	}
	instructions := "Call summarize_repo with an audience to get a summary of the repository this server was started on. " +
		"The call asks the client's model for help over up to three rounds, so declare the sampling capability."
	if cfg.Model != nil {
		instructions = "Call summarize_repo with an audience to get a summary of the repository this server was started on."
	}
	desc := discover.Description{
		Server:       discover.Implementation{Name: "summarize-repo", Title: "Repository summariser (mrtrkit example)", Version: Version},
		Instructions: instructions,
		// Clients of the initialize era (2025-11-25, 2025-06-18) are served
		// too, on the same endpoint, by the same tool: the bridge that
		// streamablehttp.New builds turns each input_required round into
		// sampling requests sent to the client on its session.
		LegacyVersions: []string{"2025-11-25", "2025-06-18"},
	}
	opts := append([]mrtr.Option{mrtr.WithLogger(cfg.Logger), mrtr.WithMaxRounds(maxModelRounds)}, serverOpts...)
	srv, err := mrtr.NewServer(desc, opts...)
	if err != nil {
		repo.Close()
		return nil, err
	}
	m := cfg.Model
	if m == nil {
		m = model.Client()
	}
	s := &summarizer{repo: repo, critique: cfg.Critique, model: m}
	if err := typed.AddTool(srv, toolDefinition(), s.summarize); err != nil {
		repo.Close()
		return nil, err
	}
	// The endpoint serves the legacy versions the description lists, and
	// logs through the Server's logger.
	h, err := streamablehttp.New(srv, httpOpts...)
	if err != nil {
		repo.Close()
		return nil, err
	}
	return &App{Handler: h, Server: srv, repo: repo}, nil
}

// Close releases the summarised directory.
func (a *App) Close() error {
	if a == nil || a.repo == nil {
		return errors.New("summarize_repo: app not open")
	}
	return a.repo.Close()
}

// newAppFromSettings builds the App the command line asks for: in
// direct-model mode the tool's questions go to the chat-completions API at
// s.ModelURL, and with s.RequireKeys the server fails to start unless a
// requestState key ring is configured.
func newAppFromSettings(s Settings, serverOpts []mrtr.Option, httpOpts []streamablehttp.Option) (*App, error) {
	if s.RequireKeys {
		serverOpts = append([]mrtr.Option{mrtr.RequireKeys()}, serverOpts...)
	}
	if s.DirectModel() {
		c, err := openai.New(openai.Config{BaseURL: s.ModelURL, APIKey: s.APIKey, Model: s.Model})
		if err != nil {
			return nil, err
		}
		s.Config.Model = c
	}
	return NewApp(s.Config, serverOpts, httpOpts)
}
