package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mrtrkit/mrtrkit/internal/wire"
	"github.com/mrtrkit/mrtrkit/mrtr"
)

// The protocol versions the client speaks.
const (
	// LatestVersion is the stateless revision, spoken without a handshake.
	LatestVersion = "2026-07-28"
	// LegacyVersion is the newest revision of the initialize era.
	LegacyVersion = "2025-11-25"
)

// modernVersions and legacyVersions are the revisions the client speaks,
// best first.
var (
	modernVersions = []string{LatestVersion}
	legacyVersions = []string{LegacyVersion, "2025-06-18", "2025-03-26"}
)

// DefaultMaxRounds is how many input-required rounds one call answers
// before it fails with ErrTooManyRounds.
const DefaultMaxRounds = 10

// Implementation names a client or a server.
type Implementation struct {
	Name    string `json:"name"`            // the program's name
	Version string `json:"version"`         // its version
	Title   string `json:"title,omitempty"` // its display name
}

// Notification is a notification the server sent.
type Notification struct {
	// Method is the notification's method, such as
	// "notifications/tools/list_changed".
	Method string
	// Params are its params, verbatim.
	Params json.RawMessage
}

// Option configures a Client (Connect).
type Option interface{ apply(*config) }

type optionFunc func(*config)

func (f optionFunc) apply(c *config) { f(c) }

type config struct {
	info      Implementation
	version   string // "" = probe
	caps      *mrtr.ClientCapabilities
	maxRounds int
	logLevel  string
	sampling  mrtr.SamplingFunc
	elicit    mrtr.ElicitFunc
	roots     mrtr.RootsFunc
	onNote    func(Notification)
	probe     time.Duration // stdio: silence after which discover means "old server"
}

// WithClientInfo sets the clientInfo the client sends (default
// "mrtrkit-client" "dev").
func WithClientInfo(name, version string) Option {
	return optionFunc(func(c *config) { c.info = Implementation{Name: name, Version: version} })
}

// WithProtocolVersion pins the revision: LatestVersion speaks only
// 2026-07-28 (no initialize), a 2025 revision speaks only the initialize
// era. By default the client probes with server/discover and falls back to
// initialize.
func WithProtocolVersion(v string) Option { return optionFunc(func(c *config) { c.version = v }) }

// WithCapabilities sets the client capabilities the client declares. By
// default it declares what its functions answer: sampling with
// OnSampling, elicitation (form and url) with OnElicitation, roots with
// OnRoots.
func WithCapabilities(caps mrtr.ClientCapabilities) Option {
	return optionFunc(func(c *config) { c.caps = &caps })
}

// WithMaxRounds bounds the input-required rounds one call answers
// (default DefaultMaxRounds).
func WithMaxRounds(n int) Option { return optionFunc(func(c *config) { c.maxRounds = n }) }

// WithLogLevel asks the server for log notifications at level and above
// (the io.modelcontextprotocol/logLevel of every request; logging/setLevel
// in a 2025-11-25 session).
func WithLogLevel(level string) Option { return optionFunc(func(c *config) { c.logLevel = level }) }

// OnSampling answers the server's sampling/createMessage requests, in both
// eras. f is the mrtr.SamplingFunc that mrtrtest.OnSampling takes too.
func OnSampling(f mrtr.SamplingFunc) Option { return optionFunc(func(c *config) { c.sampling = f }) }

// OnElicitation answers the server's elicitation/create requests.
func OnElicitation(f mrtr.ElicitFunc) Option { return optionFunc(func(c *config) { c.elicit = f }) }

// OnRoots answers the server's roots/list requests.
func OnRoots(f mrtr.RootsFunc) Option { return optionFunc(func(c *config) { c.roots = f }) }

// WithRoots answers roots/list with roots.
func WithRoots(roots ...mrtr.Root) Option {
	return OnRoots(func(context.Context) (*mrtr.RootsResult, error) {
		return &mrtr.RootsResult{Roots: append([]mrtr.Root{}, roots...)}, nil
	})
}

// WithProbeTimeout bounds how long a stdio server may stay silent after
// the server/discover probe before the client takes it for a server of
// the initialize era and sends initialize (default DefaultProbeTimeout).
// A late answer to the probe is dropped. Over HTTP the probe is always
// answered or refused, so no bound applies.
func WithProbeTimeout(d time.Duration) Option { return optionFunc(func(c *config) { c.probe = d }) }

// DefaultProbeTimeout is the default WithProbeTimeout.
const DefaultProbeTimeout = 10 * time.Second

// OnNotification receives the server's notifications that no other
// function takes: those of a call (log messages, say; its progress too,
// but for the progress WithProgress passes to its own function), and
// those of a 2025-11-25 session's GET stream. Those of a listen stream
// go to Listen's function.
func OnNotification(f func(Notification)) Option { return optionFunc(func(c *config) { c.onNote = f }) }

// Client is a connection to one MCP server. It is safe for concurrent
// use.
type Client struct {
	cfg    config
	conn   conn
	server string
	caps   json.RawMessage // the client capabilities as sent at 2026-07-28
	caps25 json.RawMessage // and in initialize
	capsT  json.RawMessage // caps with the Tasks extension declared (AsTask, tasks/*)

	nextID atomic.Int64

	mu         sync.Mutex
	version    string
	legacy     bool
	serverInfo Implementation
	serverCaps json.RawMessage
	instr      string
	tools      map[string][]paramHeader // x-mcp-header declarations by tool name
	closed     bool
}

// Transport is the way to a server: HTTP or Command.
type Transport interface {
	// dial opens the connection; it does not speak MCP yet.
	dial(ctx context.Context, c *Client) (conn, error)
	// String names the server in errors.
	String() string
}

// conn is an open transport.
type conn interface {
	// send sends one request and waits for its response; notifications
	// on its way go to out.onNote. On cancellation the transport tells the
	// server as its era requires.
	send(ctx context.Context, out *outbound) (*message, int, error)
	// notify sends one notification.
	notify(ctx context.Context, method string, body []byte) error
	// setVersion records the version the initialize era agreed on.
	setVersion(version string)
	// startSession begins the session of the initialize era (a stream for
	// the server's own requests, where the transport has one).
	startSession(ctx context.Context)
	// close ends the connection (and a session).
	close(ctx context.Context) error
}

// outbound is one request on its way.
type outbound struct {
	id      int64
	method  string
	name    string            // Mcp-Name (tools/call, prompts/get, resources/read)
	params  map[string]string // Mcp-Param-* (name after the prefix → encoded value)
	version string            // MCP-Protocol-Version
	legacy  bool
	body    []byte
	onNote  func(*message)
}

// Connect opens a connection to the server behind t and learns its era:
// server/discover first, initialize when the server does not speak
// 2026-07-28 (unless WithProtocolVersion pins one).
func Connect(ctx context.Context, t Transport, opts ...Option) (*Client, error) {
	c := newClient(t, opts)
	cn, err := t.dial(ctx, c)
	if err != nil {
		return nil, &Error{Server: c.server, Method: "connect", Err: err}
	}
	c.conn = cn
	if err := c.negotiate(ctx); err != nil {
		_ = cn.close(context.WithoutCancel(ctx))
		return nil, err
	}
	return c, nil
}

// newClient is a Client of t with opts applied, not yet connected.
func newClient(t Transport, opts []Option) *Client {
	c := &Client{cfg: config{info: Implementation{Name: "mrtrkit-client", Version: "dev"}, maxRounds: DefaultMaxRounds}, server: t.String(), tools: map[string][]paramHeader{}}
	for _, o := range opts {
		o.apply(&c.cfg)
	}
	c.caps, c.caps25 = c.capabilities()
	c.capsT = withTasksExtension(c.caps)
	return c
}

// capabilities renders what the client declares, at 2026-07-28 and in
// initialize.
func (c *Client) capabilities() (json.RawMessage, json.RawMessage) {
	if c.cfg.caps != nil {
		b := mustJSON(c.cfg.caps)
		return b, b
	}
	var m []member
	var m25 []member
	if c.cfg.elicit != nil {
		m = append(m, member{"elicitation", json.RawMessage(`{"form":{},"url":{}}`)})
		m25 = append(m25, member{"elicitation", json.RawMessage(`{"form":{},"url":{}}`)})
	}
	if c.cfg.roots != nil {
		m = append(m, member{"roots", json.RawMessage(`{}`)})
		m25 = append(m25, member{"roots", json.RawMessage(`{"listChanged":false}`)})
	}
	if c.cfg.sampling != nil {
		m = append(m, member{"sampling", json.RawMessage(`{}`)})
		m25 = append(m25, member{"sampling", json.RawMessage(`{}`)})
	}
	return objectOf(m), objectOf(m25)
}

// Version returns the protocol revision in use.
func (c *Client) Version() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.version
}

// Legacy reports whether the client speaks the initialize era to this
// server.
func (c *Client) Legacy() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.legacy
}

// ServerInfo returns the server's name and version as it gave them.
func (c *Client) ServerInfo() Implementation {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.serverInfo
}

// ServerCapabilities returns the server's capabilities, verbatim.
func (c *Client) ServerCapabilities() json.RawMessage {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.serverCaps
}

// Instructions returns the server's instructions for the model.
func (c *Client) Instructions() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.instr
}

// Close ends the connection: a 2025-11-25 session is ended (DELETE over
// HTTP), a subprocess is shut down.
func (c *Client) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	c.mu.Unlock()
	return c.conn.close(context.Background())
}

// newID returns the next request id: 1, 2, ... never 0.
func (c *Client) newID() int64 { return c.nextID.Add(1) }

// negotiate learns the server's era.
func (c *Client) negotiate(ctx context.Context) error {
	switch {
	case c.cfg.version == "":
		pctx := ctx
		if _, ok := c.conn.(*stdioConn); ok {
			// Over stdio an old server may ignore a method it does not
			// know: silence means the initialize era.
			probe := c.cfg.probe
			if probe <= 0 {
				probe = DefaultProbeTimeout
			}
			var cancel context.CancelFunc
			pctx, cancel = context.WithTimeout(ctx, probe)
			defer cancel()
		}
		err := c.discover(pctx)
		if err != nil && ctx.Err() == nil && pctx.Err() != nil {
			err = &notModern{fmt.Errorf("no answer to server/discover: %w", pctx.Err())}
		}
		if err == nil {
			return nil
		}
		var ne *notModern
		if !errors.As(err, &ne) {
			return err
		}
		return c.initialize(ctx, LegacyVersion)
	case slices.Contains(modernVersions, c.cfg.version):
		err := c.discover(ctx)
		var ne *notModern
		if errors.As(err, &ne) {
			return &Error{Server: c.server, Method: wire.MethodDiscover, Err: fmt.Errorf("the server does not speak %s: %w", c.cfg.version, ne.err)}
		}
		return err
	case slices.Contains(legacyVersions, c.cfg.version):
		return c.initialize(ctx, c.cfg.version)
	}
	return &Error{Server: c.server, Method: "connect", Err: fmt.Errorf("protocol version %q is not one this client speaks", c.cfg.version)}
}

// notModern says that the server answered server/discover as a server of
// the initialize era would.
type notModern struct{ err error }

func (e *notModern) Error() string { return e.err.Error() }

// discover probes the server with server/discover.
func (c *Client) discover(ctx context.Context) error {
	c.mu.Lock()
	c.version = LatestVersion
	if c.cfg.version != "" {
		c.version = c.cfg.version
	}
	c.mu.Unlock()
	res, err := c.call(ctx, wire.MethodDiscover, "", nil, nil, nil, 0)
	if err != nil {
		var e *Error
		if errors.As(err, &e) {
			code := CodeOf(err)
			switch {
			case code == CodeUnsupportedVersion:
				// Retried once already by call; the server does not speak
				// a modern revision we speak.
				return &notModern{err}
			case code == CodeMethodNotFound, code == -32000, code == CodeInvalidParams && e.HTTPStatus >= 400,
				code == 0 && (e.HTTPStatus == 400 || e.HTTPStatus == 404 || e.HTTPStatus == 405 || e.HTTPStatus == 406):
				return &notModern{err}
			case code != 0 && e.HTTPStatus == 0:
				// stdio: any error other than a recognised modern one means
				// the server is of the initialize era.
				if code != CodeHeaderMismatch && code != CodeMissingCapability {
					return &notModern{err}
				}
			}
		}
		return err
	}
	var d struct {
		SupportedVersions []string                   `json:"supportedVersions"`
		Capabilities      json.RawMessage            `json:"capabilities"`
		Instructions      string                     `json:"instructions"`
		ServerInfo        *Implementation            `json:"serverInfo"`
		Meta              map[string]json.RawMessage `json:"_meta"`
	}
	if err := json.Unmarshal(res, &d); err != nil {
		return &Error{Server: c.server, Method: wire.MethodDiscover, Err: fmt.Errorf("the discover result does not decode: %w", err)}
	}
	if len(d.SupportedVersions) == 0 {
		return &notModern{errors.New("server/discover answered without supportedVersions")}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !slices.Contains(d.SupportedVersions, c.version) {
		best := ""
		for _, v := range modernVersions {
			if slices.Contains(d.SupportedVersions, v) {
				best = v
				break
			}
		}
		if best == "" {
			return &notModern{fmt.Errorf("the server supports %v, none of them a stateless revision this client speaks", d.SupportedVersions)}
		}
		c.version = best
	}
	c.serverCaps = d.Capabilities
	c.instr = d.Instructions
	if d.ServerInfo != nil {
		c.serverInfo = *d.ServerInfo
	}
	if raw, ok := d.Meta[wire.MetaServerInfo]; ok {
		_ = json.Unmarshal(raw, &c.serverInfo)
	}
	return nil
}

// initialize opens a session of the initialize era.
func (c *Client) initialize(ctx context.Context, version string) error {
	c.mu.Lock()
	c.version = version
	c.legacy = true
	c.mu.Unlock()
	params := []member{
		{"protocolVersion", mustJSON(version)},
		{"capabilities", c.caps25},
		{"clientInfo", mustJSON(c.cfg.info)},
	}
	res, err := c.call(ctx, "initialize", "", params, nil, nil, 0)
	if err != nil {
		return err
	}
	var r struct {
		ProtocolVersion string          `json:"protocolVersion"`
		Capabilities    json.RawMessage `json:"capabilities"`
		ServerInfo      Implementation  `json:"serverInfo"`
		Instructions    string          `json:"instructions"`
	}
	if err := json.Unmarshal(res, &r); err != nil {
		return &Error{Server: c.server, Method: "initialize", Err: fmt.Errorf("the initialize result does not decode: %w", err)}
	}
	if !slices.Contains(legacyVersions, r.ProtocolVersion) {
		return &Error{Server: c.server, Method: "initialize", Err: fmt.Errorf("the server chose protocol version %q, which this client does not speak", r.ProtocolVersion)}
	}
	c.mu.Lock()
	c.version = r.ProtocolVersion
	c.serverCaps = r.Capabilities
	c.serverInfo = r.ServerInfo
	c.instr = r.Instructions
	c.mu.Unlock()
	c.conn.setVersion(r.ProtocolVersion)
	if err := c.conn.notify(ctx, "notifications/initialized", requestBody(0, "notifications/initialized", nil)); err != nil {
		return &Error{Server: c.server, Method: "notifications/initialized", Err: err}
	}
	c.conn.startSession(ctx)
	if c.cfg.logLevel != "" && json.Valid(r.Capabilities) && hasMember(r.Capabilities, "logging") {
		_, _ = c.call(ctx, "logging/setLevel", "", []member{{"level", mustJSON(c.cfg.logLevel)}}, nil, nil, 0)
	}
	return nil
}

func hasMember(obj json.RawMessage, name string) bool {
	var m map[string]json.RawMessage
	if json.Unmarshal(obj, &m) != nil {
		return false
	}
	_, ok := m[name]
	return ok
}

// callOpts are the per-call options.
type callOpts struct {
	progressToken json.RawMessage // nil: none
	onProgress    func(Progress)
	meta          []member
	onNote        func(*message) // every notification of the call (Listen)
	task          bool           // declare the Tasks extension (AsTask)
	watch         *RoundWatch    // WithRoundWatch
}

// roundWatch returns the call's RoundWatch, an empty one when it has
// none.
func (co *callOpts) roundWatch() *RoundWatch {
	if co == nil || co.watch == nil {
		return &RoundWatch{}
	}
	return co.watch
}

// CallOption configures one call (CallTool, GetPrompt, ReadResource,
// Call, CreateTask, AwaitTask).
type CallOption interface{ applyCall(*callOpts) }

type callOptionFunc func(*callOpts)

func (f callOptionFunc) applyCall(o *callOpts) { f(o) }

// Progress is one notifications/progress of a call.
type Progress struct {
	// Progress is how far the call is; it grows.
	Progress float64 `json:"progress"`
	// Total is the whole, when the server knows it.
	Total *float64 `json:"total,omitempty"`
	// Message describes the step.
	Message string `json:"message,omitempty"`
}

// WithProgress asks the server for progress notifications of the call,
// under token (a string or an integer; 0 is a token like any other), and
// passes each to fn. The call's other notifications go to
// OnNotification.
func WithProgress(token any, fn func(Progress)) CallOption {
	return callOptionFunc(func(o *callOpts) {
		o.progressToken = mustJSON(token)
		o.onProgress = fn
	})
}

// WithMeta adds a member to the call's _meta.
func WithMeta(key string, value any) CallOption {
	return callOptionFunc(func(o *callOpts) { o.meta = append(o.meta, member{key, mustJSON(value)}) })
}

// meta renders params._meta of a request.
func (c *Client) meta(version string, legacy bool, co *callOpts) []byte {
	var m []member
	if !legacy {
		caps := c.caps
		if co != nil && co.task {
			caps = c.capsT
		}
		m = append(m,
			member{wire.MetaProtocolVersion, mustJSON(version)},
			member{wire.MetaClientCapabilities, caps},
			member{wire.MetaClientInfo, mustJSON(c.cfg.info)})
		if c.cfg.logLevel != "" {
			m = append(m, member{wire.MetaLogLevel, mustJSON(c.cfg.logLevel)})
		}
	}
	if co != nil {
		if co.progressToken != nil {
			m = append(m, member{wire.MetaProgressToken, co.progressToken})
		}
		m = append(m, co.meta...)
	}
	if len(m) == 0 {
		return nil
	}
	return objectOf(m)
}

// call sends one request and returns its result: method with params (no
// _meta), the target name for Mcp-Name, the Mcp-Param-* headers, in round
// round of its call. A -32022 naming a version the client speaks is
// retried once with that version.
func (c *Client) call(ctx context.Context, method, name string, params []member, hdrs map[string]string, co *callOpts, round int) (json.RawMessage, error) {
	retried := false
	for {
		c.mu.Lock()
		version, legacy, closed := c.version, c.legacy, c.closed
		c.mu.Unlock()
		if closed {
			return nil, &Error{Server: c.server, Method: method, Name: name, Round: round, Err: ErrClosed}
		}
		p := append([]member(nil), params...)
		if meta := c.meta(version, legacy, co); meta != nil {
			p = append(p, member{"_meta", meta})
		}
		var pb []byte
		if len(p) > 0 || !legacy {
			pb = objectOf(p)
		}
		id := c.newID()
		body := requestBody(id, method, pb)
		out := &outbound{id: id, method: method, name: name, params: hdrs, version: version, legacy: legacy, body: body}
		switch {
		case co != nil && co.onNote != nil:
			out.onNote = co.onNote
		case co != nil && co.onProgress != nil:
			out.onNote = c.progressFilter(co)
		}
		m, status, err := c.conn.send(ctx, out)
		if err != nil {
			if ctx.Err() != nil && !errors.Is(err, ctx.Err()) {
				err = fmt.Errorf("%w (%v)", ctx.Err(), err)
			}
			return nil, &Error{Server: c.server, Method: method, Name: name, Round: round, HTTPStatus: status, Err: err}
		}
		if m.Error != nil {
			if m.Error.Code == CodeUnsupportedVersion && !legacy && !retried {
				if v := c.pickVersion(m.Error.Data); v != "" {
					retried = true
					c.mu.Lock()
					c.version = v
					c.mu.Unlock()
					continue
				}
			}
			return nil, &Error{Server: c.server, Method: method, Name: name, Round: round, HTTPStatus: status, Err: m.Error}
		}
		return m.Result, nil
	}
}

// pickVersion returns the best modern version the client speaks among
// the data.supported of a -32022.
func (c *Client) pickVersion(data json.RawMessage) string {
	var d struct {
		Supported []string `json:"supported"`
	}
	if json.Unmarshal(data, &d) != nil {
		return ""
	}
	for _, v := range modernVersions {
		if slices.Contains(d.Supported, v) {
			if c.cfg.version != "" && c.cfg.version != v {
				continue
			}
			return v
		}
	}
	return ""
}

// progressFilter passes the call's progress notifications to its
// function, and its other notifications (log messages, say) to
// OnNotification, where they go without WithProgress.
func (c *Client) progressFilter(co *callOpts) func(*message) {
	return func(m *message) {
		if m.Method == "notifications/progress" {
			var p struct {
				Token json.RawMessage `json:"progressToken"`
				Progress
			}
			if json.Unmarshal(m.Params, &p) == nil && string(p.Token) == string(co.progressToken) {
				co.onProgress(p.Progress)
				return
			}
		}
		c.notifyUser(m)
	}
}

// notifyUser passes a notification that no other function takes to
// OnNotification.
func (c *Client) notifyUser(m *message) {
	if c.cfg.onNote != nil {
		c.cfg.onNote(Notification{Method: m.Method, Params: m.Params})
	}
}
