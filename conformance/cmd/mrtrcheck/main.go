package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"regexp"
	"strings"
	"syscall"
	"time"

	"github.com/mrtrkit/mrtrkit/conformance/suite"
)

// Exit codes.
const (
	exitOK    = 0 // every scenario passed, was not run, or is informational
	exitFail  = 1 // a scenario failed, or the run was interrupted
	exitUsage = 2 // the command line is wrong
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run is the whole command: it parses args, runs the suite and writes the
// report to stdout, and returns the exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("mrtrcheck", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: mrtrcheck -url URL [flags]\n\n"+
			"Checks an MCP 2026-07-28 server over Streamable HTTP for the requestState, envelope, header and\n"+
			"DNS-rebinding properties listed by -list, and, when the same endpoint also serves 2025-11-25 clients\n"+
			"(initialize and sessions), the legacy.* properties of that era; then the hardening.* properties\n"+
			"(bounded echoes, listen caps, stalled bodies, unread answers) and the server.* ones (2025-11-25\n"+
			"subscription bounds, per-peer fairness with -second-source, bus spoofing with -redis). It calls the tools it is given many\n"+
			"times: point it at a test deployment, or at tools without side effects.\n\n"+
			"Without -tool the defaults fit mrtrkit's conformance fixture server (go run ./conformance/server).\n\n"+
			"Exit status: 0 when no scenario fails (NOT-RUN and INFO do not fail, unless -strict), 1 when one does, 2 on usage errors.\n\nFlags:\n")
		fs.PrintDefaults()
	}
	var (
		url        = fs.String("url", "", "MCP endpoint, e.g. http://127.0.0.1:3001/mcp (required)")
		tool       = fs.String("tool", "", "tool whose first call answers input_required with a requestState (default "+suite.DefaultTool+" with the fixture defaults)")
		argsJSON   = fs.String("args", "", "the tool's arguments, a JSON object (default {} with -tool, else "+suite.DefaultArgs+")")
		altJSON    = fs.String("alt-args", "", "other arguments the tool accepts, for the replay with other arguments (default: derived from -args)")
		otherTool  = fs.String("other-tool", "", "a second tool for the cross-tool replay (default "+suite.DefaultOtherTool+" without -tool; with -tool, the replay is not run unless this is given)")
		otherJSON  = fs.String("other-args", "", "arguments for -other-tool (default: -args)")
		token      = fs.String("token", "", "bearer token of a principal, sent on every request")
		otherToken = fs.String("other-token", "", "bearer token of a second principal, for the cross-principal replay and legacy.session-principal")
		answers    = fs.String("answers", "", `answers to send, a JSON object by input key of exact answer objects, e.g. {"pick_files":{"role":"assistant","content":{"type":"text","text":"[\"README.md\"]"},"model":"m"}}; other keys get made-up answers`)
		strict     = fs.Bool("strict", false, "count NOT-RUN of the state.*, replay.* and answers.* scenarios as failures (exit 1)")
		caps       = fs.String("caps", "", "client capabilities to declare, a JSON object (default "+suite.DefaultCapabilities+")")
		timeout    = fs.Duration("timeout", suite.DefaultTimeout, "limit for one HTTP exchange")
		slowAfter  = fs.Duration("slow-after", suite.DefaultSlowAfter, "how long the refusal of a huge requestState may take")
		runRE      = fs.String("run", "", "run only the scenarios whose id matches this regular expression (the baseline runs when one needs it)")
		asJSON     = fs.Bool("json", false, "print the report as JSON")
		verbose    = fs.Bool("v", false, "print every exchange of every scenario, not only of failed ones")
		list       = fs.Bool("list", false, "list the scenarios and exit")
		legRounds  = fs.Int("legacy-rounds", suite.DefaultLegacyRounds, "rounds of server-to-client requests the legacy scenarios follow in one call before cancelling it")
		listenMax  = fs.Int("listen-max", defaultListenMax, "most subscriptions/listen streams hardening.listen-cap opens before it reports INFO (no cap hit)")
		bodyWait   = fs.Duration("body-wait", defaultBodyWait, "how long the server may wait for a stalled request body; hardening.slow-body waits twice this")
		quick      = fs.Duration("quick", defaultQuick, "how soon a normal call must be answered while the hardening scenarios hold other connections")
		unread     = fs.Int("unread-bytes", defaultUnreadBytes, "how many bytes of answers hardening.unread-response leaves unread on one connection")
		second     = fs.String("second-source", "", "a second local IP address to reach the server from, for server.peer-fairness (127.0.0.2 against a loopback server)")
		redisAddr  = fs.String("redis", "", "the Redis the replicas share (host:port or redis://user:password@host:port), for server.bus-spoofing")
		audience   = fs.String("audience", "", "the deployment's audience (canonical URL), naming its events channel on -redis when the Redis user may not PSUBSCRIBE")
	)
	var legacyTools []suite.LegacyTool
	fs.Func("legacy-tool", "a tool the legacy (2025-11-25) scenarios call, as NAME or NAME=ARGS with ARGS a JSON object; repeat for several, "+
		"one asking several rounds among them (default: "+defaultLegacyTools()+" without -tool; with -tool, that tool and -args)",
		func(v string) error {
			name, args, hasArgs := strings.Cut(v, "=")
			if name == "" {
				return errors.New("a tool name is required")
			}
			t := suite.LegacyTool{Name: name}
			if hasArgs {
				if !json.Valid([]byte(args)) {
					return fmt.Errorf("the arguments of %s are not valid JSON: %s", name, args)
				}
				t.Args = json.RawMessage(args)
			}
			legacyTools = append(legacyTools, t)
			return nil
		})
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitUsage
	}
	if fs.NArg() > 0 {
		return usage(stderr, fmt.Errorf("unexpected argument %q", fs.Arg(0)))
	}
	if *list {
		return listScenarios(stdout, *asJSON)
	}
	if *url == "" {
		return usage(stderr, errors.New("-url is required"))
	}
	cfg := suite.Config{
		URL:        *url,
		Tool:       *tool,
		OtherTool:  *otherTool,
		Token:      *token,
		OtherToken: *otherToken,
		Timeout:    *timeout,
		SlowAfter:  *slowAfter,
		Strict:     *strict,

		LegacyTools:  legacyTools,
		LegacyRounds: *legRounds,
	}
	if *answers != "" {
		if err := json.Unmarshal([]byte(*answers), &cfg.Answers); err != nil || cfg.Answers == nil {
			return usage(stderr, fmt.Errorf("-answers must be a JSON object of answer objects by input key: %s", *answers))
		}
	}
	for _, j := range []struct {
		flag string
		val  string
		dst  *json.RawMessage
	}{
		{"-args", *argsJSON, &cfg.Args},
		{"-alt-args", *altJSON, &cfg.AltArgs},
		{"-other-args", *otherJSON, &cfg.OtherArgs},
		{"-caps", *caps, &cfg.Capabilities},
	} {
		if j.val == "" {
			continue
		}
		if !json.Valid([]byte(j.val)) {
			return usage(stderr, fmt.Errorf("%s is not valid JSON: %s", j.flag, j.val))
		}
		*j.dst = json.RawMessage(j.val)
	}
	if *runRE != "" {
		re, err := regexp.Compile(*runRE)
		if err != nil {
			return usage(stderr, fmt.Errorf("-run: %w", err))
		}
		cfg.Select = re.MatchString
	}
	if *timeout <= 0 || *slowAfter <= 0 {
		return usage(stderr, errors.New("-timeout and -slow-after must be positive"))
	}
	if *legRounds < 1 {
		return usage(stderr, errors.New("-legacy-rounds must be at least 1"))
	}
	if *second != "" && net.ParseIP(*second) == nil {
		return usage(stderr, fmt.Errorf("-second-source must be an IP address: %s", *second))
	}
	if *listenMax < 1 || *listenMax > 10000 || *bodyWait <= 0 || *quick <= 0 || *unread < 1 {
		return usage(stderr, errors.New("-listen-max must be 1 to 10000, and -body-wait, -quick and -unread-bytes positive"))
	}

	rep, err := suite.Run(ctx, cfg)
	var cerr *suite.ConfigError
	if errors.As(err, &cerr) {
		return usage(stderr, cerr.Err)
	}
	if err == nil && rep != nil {
		hcfg := hardeningConfig{url: *url, token: *token, timeout: *timeout, listenMax: *listenMax, bodyWait: *bodyWait, quick: *quick, unread: *unread,
			secondSource: *second, redis: *redisAddr, audience: *audience, legacyTools: legacyTools}
		if herr := runHardening(ctx, hcfg, cfg.Select, rep); herr != nil {
			if ctx.Err() == nil {
				return usage(stderr, herr)
			}
			err = herr
		}
		rep.ElapsedMS = time.Since(rep.Started).Milliseconds()
	}
	if rep != nil {
		if *asJSON {
			enc := json.NewEncoder(stdout)
			enc.SetIndent("", "  ")
			if werr := enc.Encode(rep); werr != nil {
				fmt.Fprintln(stderr, "mrtrcheck:", werr)
				return exitFail
			}
		} else if werr := rep.WriteText(stdout, *verbose); werr != nil {
			fmt.Fprintln(stderr, "mrtrcheck:", werr)
			return exitFail
		}
	}
	if err != nil {
		fmt.Fprintln(stderr, "mrtrcheck: run stopped:", err)
		return exitFail
	}
	if rep.Failed() {
		return exitFail
	}
	return exitOK
}

// defaultLegacyTools names the fixture's legacy tools, for the help.
func defaultLegacyTools() string {
	var names []string
	for _, t := range suite.DefaultLegacyTools() {
		names = append(names, t.Name)
	}
	return strings.Join(names, ", ")
}

func usage(stderr io.Writer, err error) int {
	fmt.Fprintf(stderr, "mrtrcheck: %v\nRun mrtrcheck -h for help.\n", err)
	return exitUsage
}

// listScenarios prints every scenario with what it protects against:
// the suite's, then the hardening ones.
func listScenarios(w io.Writer, asJSON bool) int {
	all := suite.Scenarios()
	for _, s := range hardeningScenarios() {
		all = append(all, s.Scenario)
	}
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		if err := enc.Encode(all); err != nil {
			return exitFail
		}
		return exitOK
	}
	for _, s := range all {
		kind := ""
		if s.Informational {
			kind = " (informational)"
		}
		fmt.Fprintf(w, "%s%s\n  %s\n  %s\n\n", s.ID, kind, s.Title, s.Why)
	}
	return exitOK
}
