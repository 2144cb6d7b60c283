package mrtr

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"sync"
	"sync/atomic"

	"github.com/mrtrkit/mrtrkit/discover"
	"github.com/mrtrkit/mrtrkit/internal/wire"
	"github.com/mrtrkit/mrtrkit/state"
)

// Defaults of the Server's limits.
const (
	// defaultPageSize is how many items a list page holds.
	defaultPageSize = 100
	// defaultMaxRounds is how many input-required rounds one call may go
	// through.
	defaultMaxRounds = 10
)

// Server serves MCP 2026-07-28 requests: it validates every request, runs
// the handlers, gates what they embed on the client's declared
// capabilities, seals and verifies requestState, and renders results. It
// keeps nothing between rounds, so any replica holding the same keys can
// serve any round. A Server is safe for concurrent use.
type Server struct {
	desc      discover.Description
	versions  []string // desc.SupportedVersions(), once
	codec     state.Codec
	log       *slog.Logger
	audience  string
	maxRounds int
	pageSize  int
	infoMeta  []byte // `"io.modelcontextprotocol/serverInfo":{...}` or nil

	limits      limits
	intercept   []Interceptor
	requireKeys bool
	visible     Visibility
	// ephemeralKeys: the codec seals with the random key NewServer made.
	ephemeralKeys bool
	// ring is the key ring of the codec NewServer made (nil under
	// WithCodec): it keys the sealing of a shared bus.
	ring *state.KeyRing

	mu            sync.RWMutex
	tools         registry[*toolEntry]
	prompts       registry[*promptEntry]
	resources     registry[*resourceEntry]
	templates     registry[*templateEntry]
	complete      CompletionHandler
	extMethods    map[string]*method        // AddMethod
	extensions    map[string]map[string]any // advertised in capabilities.extensions
	tasks         *taskEngine               // WithTasks; nil without
	listenFilters []ListenFilter            // AddListenFilter
	hub           hub
	share         shareState
	caps          atomic.Pointer[discover.Capabilities] // capabilitiesLocked, cached
	discovered    atomic.Pointer[json.RawMessage]       // server/discover for anonymous callers, cached
}

// Option configures a Server.
type Option interface{ apply(*Server) }

type optionFunc func(*Server)

func (f optionFunc) apply(s *Server) { f(s) }

// WithCodec sets the requestState codec. Without it, the server reads a key
// ring from the MRTRKIT_STATE_KEYS environment variable and seals with
// AEAD; with no keys configured it makes a random key at start-up and logs
// a warning that replicas will not share it.
func WithCodec(c state.Codec) Option { return optionFunc(func(s *Server) { s.codec = c }) }

// WithLogger sets the logger for failures the client is not told about in
// detail. The default is slog.Default().
func WithLogger(l *slog.Logger) Option { return optionFunc(func(s *Server) { s.log = l }) }

// WithMaxRounds bounds how many input-required rounds one call may go
// through (default 10). The Server alone enforces it: a
// presented state past the bound is refused (-32602), and a handler
// asking for one round more ends the call with -32603.
func WithMaxRounds(n int) Option { return optionFunc(func(s *Server) { s.maxRounds = n }) }

// WithPageSize sets how many items a list page holds (default 100).
func WithPageSize(n int) Option { return optionFunc(func(s *Server) { s.pageSize = n }) }

// WithAudience sets the server identity bound into every requestState
// (default: the server's name from its description). Set it to the
// deployment's canonical URL, such as "https://mcp.example.com/mcp": two
// deployments that share a name and a key ring would otherwise accept
// each other's states. Replicas of one deployment share the audience.
func WithAudience(a string) Option { return optionFunc(func(s *Server) { s.audience = a }) }

// RequireKeys makes NewServer fail unless a key ring is configured (the
// MRTRKIT_STATE_KEYS environment variable, or WithCodec), instead of
// making a random key with a warning. Deployments of several replicas, and
// any server whose restarts must not break calls in flight, want it.
func RequireKeys() Option { return optionFunc(func(s *Server) { s.requireKeys = true }) }

// New returns a Server named name at version, configured by opts:
// NewServer with the smallest description, which serves MCP 2026-07-28
// and, through the transports' bridge, 2025-11-25 and 2025-06-18.
func New(name, version string, opts ...Option) (*Server, error) {
	return NewServer(discover.Description{
		Server:         discover.Implementation{Name: name, Version: version},
		LegacyVersions: []string{"2025-11-25", "2025-06-18"},
	}, opts...)
}

// NewServer returns a Server described by desc.
func NewServer(desc discover.Description, opts ...Option) (*Server, error) {
	if err := desc.Validate(); err != nil {
		return nil, fmt.Errorf("mrtr: %w", err)
	}
	s := &Server{desc: desc, versions: desc.SupportedVersions(), maxRounds: defaultMaxRounds, pageSize: defaultPageSize, limits: defaultLimits()}
	for _, o := range opts {
		o.apply(s)
	}
	if s.log == nil {
		s.log = slog.Default()
	}
	if s.audience == "" {
		s.audience = desc.Server.Name
	}
	if s.maxRounds < 1 {
		return nil, errors.New("mrtr: max rounds must be at least 1")
	}
	if s.pageSize < 1 {
		return nil, errors.New("mrtr: page size must be at least 1")
	}
	if s.maxRounds > state.MaxRound {
		return nil, errors.New("mrtr: max rounds is beyond what a requestState can carry")
	}
	if s.codec == nil {
		c, ring, ephemeral, err := defaultCodec(s.log, s.requireKeys)
		if err != nil {
			return nil, err
		}
		s.codec, s.ring, s.ephemeralKeys = c, ring, ephemeral
	}
	if meta := desc.ServerInfoMeta(); meta != nil {
		b, err := json.Marshal(meta[wire.MetaServerInfo])
		if err != nil {
			return nil, fmt.Errorf("mrtr: server info: %w", err)
		}
		s.infoMeta = append([]byte(`"`+wire.MetaServerInfo+`":`), b...)
	}
	if err := s.startTasks(); err != nil {
		return nil, err
	}
	if err := s.startShare(); err != nil {
		return nil, fmt.Errorf("mrtr: shared bus: %w", err)
	}
	s.changed(0)
	return s, nil
}

// warnKeysOnce makes the warning about missing keys once per process,
// however many Servers it builds.
var warnKeysOnce sync.Once

func defaultCodec(log *slog.Logger, require bool) (state.Codec, *state.KeyRing, bool, error) {
	ring, ok, err := state.KeyRingFromEnv()
	if err != nil {
		return nil, nil, false, fmt.Errorf("mrtr: %s: %w", state.EnvKeys, err)
	}
	if !ok && require {
		return nil, nil, false, fmt.Errorf("mrtr: no requestState keys configured: set %s (see package state) or give WithCodec", state.EnvKeys)
	}
	if !ok {
		ring, err = state.GenerateKeyRing()
		if err != nil {
			return nil, nil, false, fmt.Errorf("mrtr: %w", err)
		}
		warnKeysOnce.Do(func() {
			log.Warn("no requestState keys configured: using a random key made at start-up; replicas will not share it and restarts invalidate open calls",
				"env", state.EnvKeys)
		})
	}
	c, err := state.NewAEAD(ring)
	return c, ring, !ok, err
}

// errNotATool refuses TaskSupport outside tools/call.
var errNotATool = errors.New("TaskSupport: only tools may run as tasks")

var toolNameRE = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,128}$`)

// AddTool registers a tool. The input schema must be a JSON object with
// root type "object" (an empty schema means {"type":"object"}); its
// x-mcp-header declarations are validated here.
func (s *Server) AddTool(t Tool, h Handler, opts ...RegisterOption) error {
	if !toolNameRE.MatchString(t.Name) {
		return fmt.Errorf("mrtr: tool name %q must be 1 to 128 characters of A-Z a-z 0-9 _ . -", t.Name)
	}
	if h == nil {
		return fmt.Errorf("mrtr: tool %q: nil handler", t.Name)
	}
	if isAbsent(t.InputSchema) {
		t.InputSchema = json.RawMessage(`{"type":"object"}`)
	}
	var root struct {
		Type json.RawMessage `json:"type"`
	}
	if t.InputSchema[0] != '{' || json.Unmarshal(t.InputSchema, &root) != nil || string(root.Type) != `"object"` {
		return fmt.Errorf("mrtr: tool %q: inputSchema must be a JSON object with \"type\":\"object\"", t.Name)
	}
	if !isAbsent(t.OutputSchema) && !json.Valid(t.OutputSchema) {
		return fmt.Errorf("mrtr: tool %q: outputSchema is not valid JSON", t.Name)
	}
	headers, err := paramHeaders(t.InputSchema)
	if err != nil {
		return fmt.Errorf("mrtr: tool %q: %w", t.Name, err)
	}
	wire, err := json.Marshal(t)
	if err != nil {
		return fmt.Errorf("mrtr: tool %q: %w", t.Name, err)
	}
	c, err := regOptions(opts)
	if err != nil {
		return fmt.Errorf("mrtr: tool %q: %w", t.Name, err)
	}
	te := &toolEntry{entry: c.entry(wire, h), tool: t, headers: headers}
	if !isAbsent(t.OutputSchema) && !c.skipOutput {
		if te.out, err = compileOutput(t.OutputSchema); err != nil {
			return fmt.Errorf("mrtr: tool %q: %w", t.Name, err)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.tools.add(t.Name, te) {
		return fmt.Errorf("mrtr: tool %q is already registered", t.Name)
	}
	s.changed(changeTools)
	return nil
}

// RemoveTool unregisters a tool and reports whether it was there.
func (s *Server) RemoveTool(name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.tools.remove(name) {
		return false
	}
	s.changed(changeTools)
	return true
}

// AddPrompt registers a prompt.
func (s *Server) AddPrompt(p Prompt, h Handler, opts ...RegisterOption) error {
	if p.Name == "" || h == nil {
		return errors.New("mrtr: a prompt needs a name and a handler")
	}
	wire, err := json.Marshal(p)
	if err != nil {
		return fmt.Errorf("mrtr: prompt %q: %w", p.Name, err)
	}
	c, err := regOptions(opts)
	if err == nil && c.task.mode != TaskForbidden {
		err = errNotATool
	}
	if err != nil {
		return fmt.Errorf("mrtr: prompt %q: %w", p.Name, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.prompts.add(p.Name, &promptEntry{entry: c.entry(wire, h), prompt: p}) {
		return fmt.Errorf("mrtr: prompt %q is already registered", p.Name)
	}
	s.changed(changePrompts)
	return nil
}

// RemovePrompt unregisters a prompt and reports whether it was there.
func (s *Server) RemovePrompt(name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.prompts.remove(name) {
		return false
	}
	s.changed(changePrompts)
	return true
}

// AddResource registers a resource with a fixed URI.
func (s *Server) AddResource(r Resource, h Handler, opts ...RegisterOption) error {
	if r.URI == "" || r.Name == "" || h == nil {
		return errors.New("mrtr: a resource needs a uri, a name and a handler")
	}
	wire, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("mrtr: resource %q: %w", r.URI, err)
	}
	c, err := regOptions(opts)
	if err == nil && c.task.mode != TaskForbidden {
		err = errNotATool
	}
	if err != nil {
		return fmt.Errorf("mrtr: resource %q: %w", r.URI, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.resources.add(r.URI, &resourceEntry{entry: c.entry(wire, h), resource: r}) {
		return fmt.Errorf("mrtr: resource %q is already registered", r.URI)
	}
	s.changed(changeResources)
	return nil
}

// AddResourceTemplate registers a resource template: an RFC 6570 URI
// template, such as "db://{schema}/{table}" or "file:///{+path}". A read
// of a URI that no resource has goes to the first template, in
// registration order, that matches it; the values its variables take,
// decoded, reach the handler in Request.Vars (a list or an associative
// array from an explode modifier joined with commas).
func (s *Server) AddResourceTemplate(t ResourceTemplate, h Handler, opts ...RegisterOption) error {
	if t.URITemplate == "" || t.Name == "" || h == nil {
		return errors.New("mrtr: a resource template needs a uriTemplate, a name and a handler")
	}
	tmpl, err := compileTemplate(t.URITemplate)
	if err != nil {
		return fmt.Errorf("mrtr: resource template %q: %w", t.URITemplate, err)
	}
	wire, err := json.Marshal(t)
	if err != nil {
		return fmt.Errorf("mrtr: resource template %q: %w", t.URITemplate, err)
	}
	c, err := regOptions(opts)
	if err == nil && c.task.mode != TaskForbidden {
		err = errNotATool
	}
	if err != nil {
		return fmt.Errorf("mrtr: resource template %q: %w", t.URITemplate, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.templates.add(t.URITemplate, &templateEntry{entry: c.entry(wire, h), template: t, tmpl: tmpl}) {
		return fmt.Errorf("mrtr: resource template %q is already registered", t.URITemplate)
	}
	s.changed(changeResources)
	return nil
}

// RemoveResource unregisters a resource and reports whether it was there.
func (s *Server) RemoveResource(uri string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.resources.remove(uri) {
		return false
	}
	s.changed(changeResources)
	return true
}

// RemoveResourceTemplate unregisters a resource template, named by its
// uriTemplate, and reports whether it was there.
func (s *Server) RemoveResourceTemplate(uriTemplate string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.templates.remove(uriTemplate) {
		return false
	}
	s.changed(changeResources)
	return true
}

// SetCompletionHandler sets the handler of completion/complete; the server
// then advertises the completions capability.
func (s *Server) SetCompletionHandler(h CompletionHandler) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.complete = h
	s.changed(0)
}

// changed records a registry change: the advertised capabilities are
// recomputed (they are read on every request) and listeners told. The
// caller holds s.mu.
func (s *Server) changed(bits uint8) {
	caps := s.capabilitiesLocked()
	s.caps.Store(&caps)
	if b, err := s.renderDiscover(caps, ""); err == nil {
		s.discovered.Store(&b)
	}
	if bits != 0 {
		s.post(bits, "")
	}
}

// advertised returns the capabilities as last computed; callers must not
// modify them.
func (s *Server) advertised() *discover.Capabilities { return s.caps.Load() }

// Capabilities returns what the server advertises: its description's
// capabilities together with those its registries imply.
func (s *Server) Capabilities() discover.Capabilities {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.capabilitiesLocked()
}

func (s *Server) capabilitiesLocked() discover.Capabilities {
	c := s.desc.Capabilities
	var implied discover.Capabilities
	if len(s.tools.names) > 0 {
		implied.Tools = &discover.ListChanged{}
	}
	if len(s.prompts.names) > 0 {
		implied.Prompts = &discover.ListChanged{}
	}
	if len(s.resources.names) > 0 || len(s.templates.names) > 0 {
		implied.Resources = &discover.ResourcesCapability{}
	}
	if s.complete != nil || s.hasCompleters() {
		implied.Completions = &discover.Empty{}
	}
	if len(s.extensions) > 0 {
		implied.Extensions = s.extensions
	}
	return c.Merge(implied)
}

// MaxRounds returns how many input-required rounds one call may go through.
func (s *Server) MaxRounds() int { return s.maxRounds }

// Description returns the server's description.
func (s *Server) Description() discover.Description { return s.desc }

// Audience returns the identity bound into every requestState this Server
// seals (WithAudience; the server's name by default).
func (s *Server) Audience() string { return s.audience }

// hasCompleters reports whether a prompt or resource registered
// completers. The caller holds s.mu.
func (s *Server) hasCompleters() bool {
	for _, p := range s.prompts.byKey {
		if len(p.completes) > 0 {
			return true
		}
	}
	for _, t := range s.templates.byKey {
		if len(t.completes) > 0 {
			return true
		}
	}
	for _, r := range s.resources.byKey {
		if len(r.completes) > 0 {
			return true
		}
	}
	return false
}
