package stdio

import (
	"log/slog"
	"time"

	"github.com/mrtrkit/mrtrkit/mrtr/legacy"
)

// Defaults of Serve's settings.
const (
	// DefaultMaxLineBytes bounds one incoming line (one message): 4 MiB,
	// the request body limit of the Streamable HTTP transport.
	DefaultMaxLineBytes = 4 << 20
	// DefaultShutdownTimeout bounds how long Serve waits, once input ends
	// or its context is cancelled, for the requests in flight to finish.
	DefaultShutdownTimeout = 5 * time.Second
)

// Option configures Serve.
type Option interface{ apply(*config) }

type optionFunc func(*config)

func (f optionFunc) apply(c *config) { f(c) }

type config struct {
	log       *slog.Logger
	principal string
	maxLine   int
	grace     time.Duration
	engine    *legacy.Engine
	noLegacy  bool
}

func defaultConfig() config {
	return config{maxLine: DefaultMaxLineBytes, grace: DefaultShutdownTimeout}
}

// WithLogger sets the logger for what the transport has to say (malformed
// input, failed writes, dropped messages), and of the Engine Serve makes
// for the initialize era. The default is the Server's logger
// (mrtr.Server.Logger), itself slog.Default() unless mrtr.WithLogger
// says otherwise, which writes to os.Stderr unless the program changed
// it. Whichever it is, it must not write to the output Serve is given:
// nothing but MCP messages may go there.
func WithLogger(l *slog.Logger) Option { return optionFunc(func(c *config) { c.log = l }) }

// WithPrincipal sets who every message is served for (default: "",
// anonymous). stdio has no authentication of its own: the process that
// starts the server is its only client, and whatever identifies the user
// (an environment variable, a credentials file) is read by the program
// that calls Serve and given here. The principal is bound into every
// requestState and every session of the initialize era, exactly as an
// authenticated principal is over HTTP.
func WithPrincipal(p string) Option { return optionFunc(func(c *config) { c.principal = p }) }

// WithMaxLineBytes bounds one incoming line, that is one message, not
// counting its line ending (default DefaultMaxLineBytes, 4 MiB). A longer
// line is answered with a -32600 error with "id":null and skipped up to its
// newline, without being held in memory whole; the next line is served as
// usual.
func WithMaxLineBytes(n int) Option { return optionFunc(func(c *config) { c.maxLine = n }) }

// WithShutdownTimeout bounds how long Serve waits for the requests in
// flight once the input ends or its context is cancelled (default
// DefaultShutdownTimeout). Those requests are cancelled first; what they
// answer within the timeout is written, anything later is dropped.
func WithShutdownTimeout(d time.Duration) Option {
	return optionFunc(func(c *config) { c.grace = d })
}

// WithLegacy serves clients of the initialize era (MCP 2025-11-25 and
// 2025-06-18) through e, which must serve the same mrtr.Server. Without
// it, Serve makes an Engine of its own (legacy.New, with the logger of
// WithLogger) the first time a client sends initialize, provided the
// server's description lists LegacyVersions.
func WithLegacy(e *legacy.Engine) Option { return optionFunc(func(c *config) { c.engine = e }) }

// WithoutLegacy serves MCP 2026-07-28 only, even when the server's
// description lists LegacyVersions: initialize is then answered by the
// Server itself, with -32022 naming the versions it speaks.
func WithoutLegacy() Option { return optionFunc(func(c *config) { c.noLegacy = true }) }
