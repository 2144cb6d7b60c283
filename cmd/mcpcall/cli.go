package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/mrtrkit/mrtrkit/client"
	"github.com/mrtrkit/mrtrkit/internal/wire"
	"github.com/mrtrkit/mrtrkit/mrtr"
	"github.com/mrtrkit/mrtrkit/mrtr/model"
	"github.com/mrtrkit/mrtrkit/mrtr/model/openai"
)

// Version is mcpcall's version, sent in clientInfo and User-Agent.
const Version = "0.1.0"

// ProtocolVersion is the only protocol version mcpcall speaks.
const ProtocolVersion = "2026-07-28"

// Environment variables.
const (
	EnvURL         = "MCPCALL_URL"           // default for -url
	EnvToken       = "MCPCALL_TOKEN"         // bearer token, when -token is not given
	EnvModelAPIKey = "MCPCALL_MODEL_API_KEY" // API key of -model-url
)

// DefaultURL is the endpoint used without -url or MCPCALL_URL.
const DefaultURL = "http://127.0.0.1:8080/mcp"

// Exit codes.
const (
	exitOK       = 0 // complete result
	exitRPCError = 1 // JSON-RPC error, or a tool result with isError
	exitUsage    = 2 // bad command line or input files, transport failure
)

// env is what run needs from its process, so that tests can supply it.
type env struct {
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
	getenv func(string) string
	// terminal reports that stdin is a terminal, so that elicitations may
	// be answered by typing.
	terminal bool
	// transport carries the requests to the MCP server; nil means
	// http.DefaultTransport. Tests point it at loopback.
	transport http.RoundTripper
}

// safe returns a copy of e whose stdout and stderr escape every control
// and invisible format character written to them (newlines and tabs
// pass), as JSON escapes with -json so that its lines stay valid JSON.
func (e *env) safe(jsonOut bool) *env {
	c := *e
	fl := flavourText
	if jsonOut {
		fl = flavourJSON
	}
	c.stdout = safeWriter{e.stdout, fl}
	c.stderr = safeWriter{e.stderr, fl}
	return &c
}

// stringList is a repeatable flag.
type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, ",") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }

// options are the parsed flags.
type options struct {
	url             string
	jsonOut         bool
	token           string
	timeout         time.Duration
	maxRounds       int
	task            bool
	elicitAnswers   string
	samplingAnswers string
	modelURL        string
	model           string
	maxTokens       int
	maxModelCalls   int
	modelYes        bool
	roots           stringList
	logLevel        string
	capabilities    string
	args            string
	argsFile        string
	verbose         bool

	set map[string]bool // flags given on the command line
}

const usageText = `Usage: mcpcall [flags] COMMAND [ARGS]

Calls an MCP server that speaks protocol revision 2026-07-28 over Streamable HTTP.

Commands:
  discover                        server/discover: who the server is, what it offers
  tools list                      tools/list
  tools call NAME [--args JSON | --args-file FILE]
                                  tools/call, answering input_required rounds
  prompts list                    prompts/list
  prompts get NAME [--args JSON]  prompts/get (arguments: an object of strings)
  resources list                  resources/list
  resources templates             resources/templates/list
  resources read URI              resources/read
  tasks get ID                    tasks/get (Tasks extension): the task's status, result or questions
  tasks wait ID                   follows a task until it ends, answering its questions
  tasks cancel ID                 tasks/cancel
With --task, tools call declares the Tasks extension; a call the server runs as
a task is followed until it ends (its questions answered, cancelled on interrupt).

Flags may come before or after the command; -- ends them. A NAME, URI or ID that
begins with - is read as one where the command expects it.

Answers to a server's questions:
  elicitation   typed at the terminal, or from --elicit-answers FILE:
                {"KEY" or "*": ElicitResult | form content | "accept"|"decline"|"cancel"}
  sampling      from --sampling-answers FILE: {"KEY" or "*": CreateMessageResult | "text" | [...]}
                or [CreateMessageResult | "text", ...] used in order; and/or forwarded to
                --model-url (OpenAI-compatible chat completions; key in $` + EnvModelAPIKey + `)
                with --model NAME[,NAME…], asking before each completion (or --model-yes),
                within --max-tokens and --max-model-calls
  roots         from --root file:///PATH (repeatable; a plain path is turned into a file URI)
The client capabilities declared on each request are those the flags can answer.
A bearer token goes only over https, or plain http to localhost, 127.0.0.0/8 or ::1.

Exit status: 0 complete result, 1 JSON-RPC error or isError result, 2 usage or transport error.

Flags:
`

func newFlagSet(o *options, e *env) *flag.FlagSet {
	fs := flag.NewFlagSet("mcpcall", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	defURL := e.getenv(EnvURL)
	if defURL == "" {
		defURL = DefaultURL
	}
	fs.StringVar(&o.url, "url", defURL, "`URL` of the MCP endpoint; $"+EnvURL+" sets the default")
	fs.BoolVar(&o.jsonOut, "json", false, "print one JSON object per line (each round, then the result) instead of text")
	fs.StringVar(&o.token, "token", "", "bearer `token` for the server (default $"+EnvToken+"); never printed")
	fs.DurationVar(&o.timeout, "timeout", 2*time.Minute, "how long to wait for the server's next message (each event of a stream restarts it; 0: forever)")
	fs.BoolVar(&o.task, "task", false, "declare the Tasks extension on tools call, and follow a task the server creates")
	fs.IntVar(&o.maxRounds, "max-rounds", 10, "most input_required rounds answered in one call")
	fs.StringVar(&o.elicitAnswers, "elicit-answers", "", "JSON `file` answering elicitation requests by key (\"*\": any key)")
	fs.StringVar(&o.samplingAnswers, "sampling-answers", "", "JSON `file` answering sampling requests by key, or a list used in order")
	fs.StringVar(&o.modelURL, "model-url", "", "base `URL` of an OpenAI-compatible API that answers sampling requests (…/v1)")
	fs.StringVar(&o.model, "model", "", "model `names` for --model-url, comma-separated (required with it): the first is used, unless a model hint of the server names part of another one of them")
	fs.IntVar(&o.maxTokens, "max-tokens", DefaultMaxTokens, "most tokens one completion from --model-url may produce, whatever the server asks")
	fs.IntVar(&o.maxModelCalls, "max-model-calls", DefaultMaxModelCalls, "most completions one run asks of --model-url; the call stops when the server asks for more")
	fs.BoolVar(&o.modelYes, "model-yes", false, "send sampling requests to --model-url without asking each time (within --max-tokens and --max-model-calls); needed when stdin is not a terminal")
	fs.Var(&o.roots, "root", "a root to answer roots/list with: a file:// `URI` or a path (repeatable)")
	fs.StringVar(&o.logLevel, "log-level", "", "ask the server for log notifications at this `level` and above (debug, info, …)")
	fs.StringVar(&o.capabilities, "capabilities", "", "declare these client capabilities (`JSON`) instead of those the flags can answer")
	fs.StringVar(&o.args, "args", "", "arguments of tools call or prompts get: a `JSON` object")
	fs.StringVar(&o.argsFile, "args-file", "", "read the arguments from this `file` (- for stdin)")
	fs.BoolVar(&o.verbose, "v", false, "print every HTTP request and response on stderr (the token redacted)")
	return fs
}

func printUsage(w io.Writer, fs *flag.FlagSet) {
	fmt.Fprint(w, usageText)
	fs.SetOutput(w)
	fs.PrintDefaults()
	fs.SetOutput(io.Discard)
}

// usageError is a bad command line: the message, then the usage.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

// parseArgs parses flags that may sit anywhere among the command words.
// "--" ends the flags. An argument that begins with "-" but names no flag
// (and has no "=value") is the command's operand where the command
// expects one (tasks get ID, tools call NAME, …): task ids are random and
// one in 64 begins with "-", and an id the server printed is passed back
// as it is.
func parseArgs(fs *flag.FlagSet, args []string) ([]string, error) {
	var words, flags []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			return append(words, args[i+1:]...), fs.Parse(flags)
		case len(a) < 2 || a[0] != '-':
			words = append(words, a)
			continue
		}
		name, _, hasValue := strings.Cut(strings.TrimPrefix(a[1:], "-"), "=")
		f := fs.Lookup(name)
		if f == nil && !hasValue && name != "h" && name != "help" && operandNext(words) {
			words = append(words, a)
			continue
		}
		flags = append(flags, a)
		if f != nil && !hasValue && !isBoolFlag(f) && i+1 < len(args) {
			i++ // the flag's value, whatever it looks like
			flags = append(flags, args[i])
		}
	}
	return words, fs.Parse(flags)
}

// operandNext reports whether words are a command whose operand (a name,
// URI or task id) comes next.
func operandNext(words []string) bool {
	if len(words) != 2 {
		return false
	}
	c, err := parseCommand([]string{words[0], words[1], "x"})
	return err == nil && c.target == "x"
}

// isBoolFlag reports whether f takes no value (-task, -json).
func isBoolFlag(f *flag.Flag) bool {
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// command is one parsed command line.
type command struct {
	method string // the MCP method
	target string // tool or prompt name, resource URI, task id
	wait   bool   // tasks wait: follow the task until it ends
}

func parseCommand(words []string) (command, error) {
	need := func(n int, form string) error {
		if len(words) < n {
			return &usageError{"missing argument: mcpcall " + form}
		}
		if len(words) > n {
			return &usageError{fmt.Sprintf("unexpected argument %q after mcpcall %s", words[n], form)}
		}
		return nil
	}
	if len(words) == 0 {
		return command{}, &usageError{"no command given"}
	}
	if len(words) > 3 && strings.HasPrefix(words[2], "-") && operandNext(words[:2]) {
		// Taken for the operand by parseArgs, but more follows: a flag
		// misspelt, most likely. What follows is not echoed (a value).
		return command{}, &usageError{fmt.Sprintf("flag provided but not defined: %s (an operand that begins with - goes after --)", words[2])}
	}
	switch words[0] {
	case "discover":
		return command{method: wire.MethodDiscover}, need(1, "discover")
	case "tools":
		if len(words) > 1 {
			switch words[1] {
			case "list":
				return command{method: wire.MethodToolsList}, need(2, "tools list")
			case "call":
				err := need(3, "tools call NAME")
				return command{method: wire.MethodToolsCall, target: at(words, 2)}, err
			}
		}
		return command{}, &usageError{unknownSub(words, "tools", "list, call")}
	case "prompts":
		if len(words) > 1 {
			switch words[1] {
			case "list":
				return command{method: wire.MethodPromptsList}, need(2, "prompts list")
			case "get":
				err := need(3, "prompts get NAME")
				return command{method: wire.MethodPromptsGet, target: at(words, 2)}, err
			}
		}
		return command{}, &usageError{unknownSub(words, "prompts", "list, get")}
	case "resources":
		if len(words) > 1 {
			switch words[1] {
			case "list":
				return command{method: wire.MethodResourcesList}, need(2, "resources list")
			case "templates":
				return command{method: wire.MethodTemplatesList}, need(2, "resources templates")
			case "read":
				err := need(3, "resources read URI")
				return command{method: wire.MethodResourcesRead, target: at(words, 2)}, err
			}
		}
		return command{}, &usageError{unknownSub(words, "resources", "list, templates, read")}
	case "tasks":
		if len(words) > 1 {
			form := "tasks " + words[1] + " ID"
			switch words[1] {
			case "get", "wait":
				return command{method: mrtr.MethodTasksGet, target: at(words, 2), wait: words[1] == "wait"}, need(3, form)
			case "cancel":
				return command{method: mrtr.MethodTasksCancel, target: at(words, 2)}, need(3, form)
			}
		}
		return command{}, &usageError{unknownSub(words, "tasks", "get, wait, cancel")}
	}
	return command{}, &usageError{fmt.Sprintf("unknown command %q", words[0])}
}

func at(words []string, i int) string {
	if i < len(words) {
		return words[i]
	}
	return ""
}

func unknownSub(words []string, cmd, subs string) string {
	if len(words) < 2 {
		return fmt.Sprintf("mcpcall %s needs a subcommand: %s", cmd, subs)
	}
	return fmt.Sprintf("unknown subcommand %q of %s (want %s)", words[1], cmd, subs)
}

// run is the whole program; it returns the exit status.
func run(ctx context.Context, args []string, e *env) int {
	var o options
	fs := newFlagSet(&o, e)
	words, err := parseArgs(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		printUsage(e.stdout, fs)
		return exitOK
	}
	if err != nil {
		fmt.Fprintf(e.stderr, "mcpcall: %v\n\n", err)
		printUsage(e.stderr, fs)
		return exitUsage
	}
	o.set = map[string]bool{}
	fs.Visit(func(f *flag.Flag) { o.set[f.Name] = true })
	e = e.safe(o.jsonOut)
	cmd, err := parseCommand(words)
	if err != nil {
		fmt.Fprintf(e.stderr, "mcpcall: %v\n\n", err)
		printUsage(e.stderr, fs)
		return exitUsage
	}
	s, err := setup(&o, cmd, e)
	if err != nil {
		var ue *usageError
		fmt.Fprintf(e.stderr, "mcpcall: %v\n", err)
		if errors.As(err, &ue) {
			fmt.Fprintln(e.stderr, "Run mcpcall -h for usage.")
		}
		return exitUsage
	}
	return s.execute(ctx, cmd)
}

// session is one run's configured client, answerers and printer.
type session struct {
	opts    *options
	env     *env
	tr      client.Transport // the way to the server
	watch   *watchTransport  // under tr: -timeout and -v
	copts   []client.Option  // the client's options
	answers *answerer
	out     *printer
	args    json.RawMessage // tools call / prompts get arguments; nil when none
	c       *client.Client  // once connected

	round   *client.Round     // the round being answered
	sources map[string]string // where each answer of the round came from, by key
}

// setup checks the flags against the command and builds the session.
func setup(o *options, cmd command, e *env) (*session, error) {
	takesArgs := cmd.method == wire.MethodToolsCall || cmd.method == wire.MethodPromptsGet
	if (o.set["args"] || o.set["args-file"]) && !takesArgs {
		return nil, &usageError{"--args and --args-file apply only to tools call and prompts get"}
	}
	if o.set["args"] && o.set["args-file"] {
		return nil, &usageError{"give --args or --args-file, not both"}
	}
	if o.maxRounds < 0 {
		return nil, &usageError{"--max-rounds must not be negative"}
	}
	if o.timeout < 0 {
		return nil, &usageError{"--timeout must not be negative"}
	}
	u, err := url.Parse(o.url)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, &usageError{fmt.Sprintf("-url %q is not an absolute http or https URL", o.url)}
	}
	if u.User != nil {
		return nil, &usageError{"-url must not hold credentials; use -token or $" + EnvToken}
	}
	if o.logLevel != "" && !mrtr.LogLevel(o.logLevel).Valid() {
		return nil, &usageError{fmt.Sprintf("--log-level %q is not one of debug, info, notice, warning, error, critical, alert, emergency", o.logLevel)}
	}
	s := &session{opts: o, env: e, out: &printer{json: o.jsonOut, w: e.stdout, errw: e.stderr}, sources: map[string]string{}}

	if takesArgs {
		var raw []byte
		var what string
		switch {
		case o.set["args"]:
			raw, what = []byte(o.args), "--args"
		case o.set["args-file"]:
			what = "--args-file " + o.argsFile
			if o.argsFile == "-" {
				raw, err = io.ReadAll(e.stdin)
				e.terminal = false // stdin is spent
			} else {
				raw, err = os.ReadFile(o.argsFile)
			}
			if err != nil {
				return nil, fmt.Errorf("%s: %v", what, err)
			}
		}
		if raw != nil {
			obj, err := parseJSONObject(raw, what)
			if err != nil {
				return nil, err
			}
			if cmd.method == wire.MethodPromptsGet {
				if err := checkPromptArgs(obj, what); err != nil {
					return nil, err
				}
			}
			s.args = obj
		}
	}

	token := o.token
	if !o.set["token"] {
		token = e.getenv(EnvToken)
	}
	if token != "" {
		if err := tokenURLAllowed(u); err != nil {
			return nil, err
		}
	}

	a, err := newAnswerer(o, e)
	if err != nil {
		return nil, err
	}
	s.answers = a

	s.copts = []client.Option{client.WithClientInfo("mcpcall", Version), client.WithProtocolVersion(client.LatestVersion), client.WithMaxRounds(o.maxRounds)}
	if o.logLevel != "" {
		s.copts = append(s.copts, client.WithLogLevel(o.logLevel))
	}
	s.copts = append(s.copts, s.answerOptions()...)
	if o.capabilities != "" {
		caps, err := s.capabilities(o.capabilities)
		if err != nil {
			return nil, err
		}
		s.copts = append(s.copts, client.WithCapabilities(caps))
	}
	s.copts = append(s.copts, client.OnNotification(func(n client.Notification) { s.out.notification(n.Method, n.Params) }))

	s.watch = &watchTransport{next: e.transport, timeout: o.timeout, verbose: o.verbose, stderr: e.stderr}
	if s.watch.next == nil {
		s.watch.next = http.DefaultTransport
	}
	hopts := []client.HTTPOption{
		client.WithHTTPClient(&http.Client{
			Transport: s.watch,
			// A redirect is reported, not followed: the body and the
			// token would go to a place the user did not name.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		}),
		client.WithHeader("User-Agent", "mcpcall/"+Version),
	}
	if token != "" {
		hopts = append(hopts, client.WithBearerToken(token))
	}
	s.tr = client.HTTP(o.url, hopts...)
	return s, nil
}

// newAnswerer loads the answer files and the model client.
func newAnswerer(o *options, e *env) (*answerer, error) {
	a := &answerer{terminal: e.terminal, in: newLineReader(e.stdin), prompt: e.stderr}
	if o.elicitAnswers != "" {
		m, err := loadElicitAnswers(o.elicitAnswers)
		if err != nil {
			return nil, err
		}
		a.elicit = m
		a.elicitSrc = "--elicit-answers"
	}
	if o.samplingAnswers != "" {
		sa, err := loadSamplingAnswers(o.samplingAnswers)
		if err != nil {
			return nil, err
		}
		a.sampling = sa
	}
	if o.modelURL != "" {
		models := parseModels(o.model)
		switch {
		case len(models) == 0:
			return nil, &usageError{"--model-url needs --model NAME: the server does not choose the model on your account"}
		case o.maxTokens < 1:
			return nil, &usageError{"--max-tokens must be at least 1"}
		case o.maxModelCalls < 1:
			return nil, &usageError{"--max-model-calls must be at least 1"}
		case !e.terminal && !o.modelYes:
			return nil, &usageError{"--model-url: stdin is not a terminal, so mcpcall cannot ask you before each model completion; give --model-yes to allow them (at most --max-model-calls per run, --max-tokens each)"}
		}
		key := e.getenv(EnvModelAPIKey)
		u, err := url.Parse(o.modelURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, &usageError{fmt.Sprintf("--model-url %q is not an absolute http or https URL", o.modelURL)}
		}
		if u.User != nil {
			return nil, &usageError{"--model-url must not hold credentials; put the key in $" + EnvModelAPIKey}
		}
		if key != "" && u.Scheme == "http" && !loopbackHost(u.Hostname()) {
			return nil, &usageError{fmt.Sprintf("$%s is set: --model-url must be https unless its host is loopback, so that the key is not sent in clear", EnvModelAPIKey)}
		}
		g := &modelGate{
			endpoint:  u.Redacted(),
			models:    models,
			clients:   map[string]model.Model{},
			maxTokens: o.maxTokens,
			maxCalls:  o.maxModelCalls,
			ask:       !o.modelYes,
			in:        a.in,
			prompt:    e.stderr,
		}
		if su, err := url.Parse(o.url); err == nil {
			g.server = su.Host
		}
		for _, name := range models {
			m, err := openai.New(openai.Config{BaseURL: o.modelURL, APIKey: key, Model: name})
			if err != nil {
				return nil, err
			}
			g.clients[name] = m
		}
		newModelGate(g, o.timeout)
		a.model = g
	} else if o.model != "" {
		return nil, &usageError{"--model needs --model-url"}
	} else if o.set["max-tokens"] || o.set["max-model-calls"] || o.set["model-yes"] {
		return nil, &usageError{"--max-tokens, --max-model-calls and --model-yes apply only with --model-url"}
	}
	for _, r := range o.roots {
		uri, err := rootURI(r)
		if err != nil {
			return nil, err
		}
		a.roots = append(a.roots, mrtr.Root{URI: uri})
	}
	return a, nil
}

// tokenURLAllowed says whether a bearer token may be sent to u: over
// https, or over plain http only to this machine (localhost, 127.0.0.0/8,
// ::1), where nobody on the network can read it. There is no way round
// it: a token sent in clear can be replayed by whoever sees it.
func tokenURLAllowed(u *url.URL) error {
	if strings.EqualFold(u.Scheme, "https") || loopbackHost(u.Hostname()) {
		return nil
	}
	return fmt.Errorf("a bearer token (-token or $%s) is given, and -url %s is plain http to a host that is not this machine: the token would cross the network in clear. Use an https URL (or http on localhost, 127.0.0.1 or [::1]), or unset the token", EnvToken, termLine(u.Redacted()))
}

// rootURI turns a --root value into a file:// URI.
func rootURI(v string) (string, error) {
	if strings.HasPrefix(v, "file://") {
		u, err := url.Parse(v)
		if err != nil || u.Path == "" {
			return "", &usageError{fmt.Sprintf("--root %q is not a valid file:// URI", v)}
		}
		return v, nil
	}
	if strings.Contains(v, "://") {
		return "", &usageError{fmt.Sprintf("--root %q: roots are file:// URIs or paths", v)}
	}
	abs, err := filepath.Abs(v)
	if err != nil {
		return "", fmt.Errorf("--root %q: %v", v, err)
	}
	return (&url.URL{Scheme: "file", Path: filepath.ToSlash(abs)}).String(), nil
}
