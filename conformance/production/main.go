// Command production is the test that wires every production piece of
// mrtrkit at once in the fixture server and runs the official MCP
// conformance suite and the interop clients against it, with a valid
// token. It is run by conformance/production/run.sh (make production).
//
// It starts, on loopback ports:
//
//   - a stand-in authorization server: an ES256 key made now and never
//     stored, its JWK set served at /jwks.json, and access tokens signed
//     with it (internal/fixture.TestIssuer);
//   - the fixture server given by -fixture (the OpenTelemetry module's
//     otelfixture) with -production: the otelmrtr interceptor, the audit
//     log and a call counter; bearer JWTs verified against the JWK set for
//     the audience of the endpoint's URL; RFC 9728 metadata; a tool hidden
//     from tokens without the admin scope; CORS for an allow-list of
//     origins; /livez and /readyz; requestState keys required (a random
//     ring made now).
//
// Then it checks, in one run: the health probes; the metadata document; a
// request without a token gets 401 with a resource_metadata challenge, a
// token for another audience or signed by another key gets 401; a token
// without the admin scope neither sees nor calls the hidden tool, which
// the suite's token sees; CORS preflights from allowed origins and a
// refused one; the official suite (conformance/run.sh with
// CONFORMANCE_URL, every check of that script), its CLI sending the
// suite's token (bearer.cjs: the CLI has no option for a header), and
// mrtrcheck sending two principals' tokens; the Go SDK, TypeScript SDK v2
// and v1 clients' HTTP interop tests, sending a token of their own
// (FIXTURE_TOKEN); then, after a graceful stop, that the call counter, the
// audit log, the spans and the metrics all saw the same requests.
package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/mrtrkit/mrtrkit/client"
	"github.com/mrtrkit/mrtrkit/internal/fixture"

	"github.com/mrtrkit/mrtrkit/internal/testkit/logbuf"
)

// legTimeout is the fixture's -leg-timeout, which the interop clients'
// timeout tests are told (FIXTURE_LEG_TIMEOUT).
const legTimeout = 2 * time.Second

// hc sends the harness's own requests.
var hc = &http.Client{Timeout: 30 * time.Second}

// harnessInfo is the clientInfo of the harness's own requests.
var harnessInfo = client.Implementation{Name: "production-harness", Version: "1"}

// allowedWebOrigin is an origin of the CORS allow-list besides the
// fixture's own (which the suite's DNS rebinding scenario sends).
const allowedWebOrigin = "https://app.example.test"

func main() {
	fixtureBin := flag.String("fixture", "", "the fixture server binary to run with -production (the OpenTelemetry module's otelfixture)")
	root := flag.String("root", ".", "the root of the mrtrkit repository")
	keep := flag.Bool("keep", false, "keep the work directory (server log, telemetry report)")
	serve := flag.Bool("serve", false, "set everything up, print the URLs, and serve until SIGINT or SIGTERM instead of running the checks (to debug by hand)")
	flag.Parse()
	if *fixtureBin == "" {
		fmt.Fprintln(os.Stderr, "production: -fixture is required")
		os.Exit(2)
	}
	h := &harness{start: time.Now(), root: *root, bin: *fixtureBin, serve: *serve}
	code := h.run(*keep)
	os.Exit(code)
}

type harness struct {
	start time.Time
	root  string
	bin   string
	work  string
	serve bool

	issuer   *fixture.TestIssuer
	origin   string // http://localhost:PORT, the fixture's origin
	resource string // origin + "/mcp": the endpoint, the resource, the aud

	suiteToken, otherToken, limitedToken, interopToken string

	server   *exec.Cmd
	process  atomic.Pointer[os.Process] // the fixture, for the interrupt handler
	exited   chan error
	serverLg *logbuf.Buffer

	failures []string
	summary  []string
}

func (h *harness) logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "[production] "+format+"\n", args...)
}

// check records a failure when ok is false, and a summary line either way.
func (h *harness) check(ok bool, format string, args ...any) {
	line := fmt.Sprintf(format, args...)
	if ok {
		h.summary = append(h.summary, "ok   "+line)
	} else {
		h.summary = append(h.summary, "FAIL "+line)
		h.failures = append(h.failures, line)
	}
	h.logf("%s: %s", map[bool]string{true: "ok", false: "FAIL"}[ok], line)
}

func (h *harness) run(keep bool) int {
	var err error
	if h.root, err = filepath.Abs(h.root); err == nil {
		h.work, err = os.MkdirTemp("", "mrtrkit-production-")
	}
	if err != nil {
		h.logf("FAIL: %v", err)
		return 1
	}
	defer func() {
		if keep {
			h.logf("work directory kept: %s", h.work)
		} else {
			_ = os.RemoveAll(h.work)
		}
	}()
	if !h.serve {
		// Interrupted (make's Ctrl-C, a CI timeout): stop the fixture
		// before going, so that it does not outlive the run.
		sig := make(chan os.Signal, 1)
		signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
		go func() {
			<-sig
			if p := h.process.Load(); p != nil {
				_ = p.Signal(syscall.SIGTERM)
				time.Sleep(500 * time.Millisecond)
				_ = p.Kill()
			}
			if !keep {
				_ = os.RemoveAll(h.work)
			}
			os.Exit(130)
		}()
	}
	if err := h.setUp(); err != nil {
		h.logf("FAIL: setting up: %v", err)
		if h.serverLg != nil {
			fmt.Fprint(os.Stderr, h.serverLg.String())
		}
		_ = h.stopServer()
		return 1
	}
	if h.serve {
		fmt.Printf("fixture (-production): %s\nserver log: %s\n", h.resource, filepath.Join(h.work, "server.log"))
		fmt.Printf("FIXTURE_TOKEN=%s\n", h.interopToken)
		fmt.Printf("MRTRKIT_SUITE_TOKEN=%s\n", h.suiteToken)
		sig := make(chan os.Signal, 1)
		signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
		<-sig
		return exitCode(h.stopServer())
	}
	h.checkWiring()
	h.runSuite()
	h.runInterop()
	h.checkAfter()

	fmt.Println()
	fmt.Printf("=== mrtrkit production run (fixture with -production at %s) ===\n", h.resource)
	for _, l := range h.summary {
		fmt.Println(l)
	}
	fmt.Printf("elapsed: %d s\n", int(time.Since(h.start).Seconds()))
	if len(h.failures) > 0 {
		fmt.Println()
		for _, f := range h.failures {
			fmt.Println("FAILED:", f)
		}
		if !keep {
			fmt.Fprintf(os.Stderr, "--- fixture server log (last 200 lines) ---\n%s\n", tail(h.serverLg.String(), 200))
		}
		return 1
	}
	fmt.Println("PASSED")
	return 0
}

// setUp starts the authorization server and the fixture.
func (h *harness) setUp() error {
	asLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	issuerURL := "http://" + asLn.Addr().String()
	if h.issuer, err = fixture.NewTestIssuer(issuerURL); err != nil {
		return err
	}
	go func() { _ = http.Serve(asLn, h.issuer) }()

	// The resource must be known before the fixture starts (it is a flag,
	// and the tokens name it), so the port is picked first; another process
	// may take it in between, hence the retries.
	for attempt := 1; ; attempt++ {
		err = h.startFixture(issuerURL)
		if err == nil || attempt == 3 {
			return err
		}
		h.logf("starting the fixture: %v; trying another port", err)
		_ = h.stopServer()
	}
}

// startFixture mints the tokens for a free port's resource and starts the
// fixture there.
func (h *harness) startFixture(issuerURL string) error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	_, port, _ := net.SplitHostPort(addr)
	// localhost: the Host the suite's DNS rebinding scenario treats as
	// local, and the Origin it sends.
	h.origin = "http://localhost:" + port
	h.resource = h.origin + "/mcp"

	mint := func(sub string, scopes ...string) string {
		if err != nil {
			return ""
		}
		var tok string
		tok, err = h.issuer.Token(sub, h.resource, scopes, time.Hour)
		return tok
	}
	h.suiteToken = mint("conformance-suite", fixture.DefaultAdminScope)
	h.otherToken = mint("conformance-other-principal", fixture.DefaultAdminScope)
	h.limitedToken = mint("limited-client")
	h.interopToken = mint("interop-clients")
	if err != nil {
		return err
	}

	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return err
	}
	h.serverLg = &logbuf.Buffer{}
	h.server = exec.Command(h.bin,
		"-production",
		"-addr", addr,
		"-path", "/mcp",
		"-resource", h.resource,
		"-issuer", issuerURL,
		"-jwks-url", issuerURL+"/jwks.json",
		"-allowed-origins", h.origin+","+allowedWebOrigin,
		"-leg-timeout", legTimeout.String(),
		"-telemetry-report", filepath.Join(h.work, "telemetry.json"),
	)
	h.server.Env = append(os.Environ(), "MRTRKIT_STATE_KEYS=k1:"+base64.StdEncoding.EncodeToString(key))
	logFile, err := os.Create(filepath.Join(h.work, "server.log"))
	if err != nil {
		return err
	}
	h.server.Stderr = io.MultiWriter(h.serverLg, logFile)
	h.server.Stdout = h.server.Stderr
	if err := h.server.Start(); err != nil {
		return err
	}
	h.process.Store(h.server.Process)
	h.exited = make(chan error, 1)
	go func() { h.exited <- h.server.Wait(); _ = logFile.Close() }()

	listening := regexp.MustCompile(`msg="` + fixture.ListeningMessage + `" url=http://` + regexp.QuoteMeta(addr) + `/mcp`)
	deadline := time.Now().Add(30 * time.Second)
	for !listening.MatchString(h.serverLg.String()) {
		select {
		case err := <-h.exited:
			h.exited <- err
			return fmt.Errorf("the fixture exited during start-up (%v):\n%s", err, h.serverLg.String())
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return errors.New("the fixture did not announce its URL within 30 s")
		}
	}
	h.logf("fixture (-production) at %s; issuer at %s", h.resource, issuerURL)
	return nil
}

// checkWiring checks the production pieces one by one, before the suites.
func (h *harness) checkWiring() {
	for _, p := range []string{fixture.LivenessPath, fixture.ReadinessPath} {
		code, _, _ := h.get(h.origin + p)
		h.check(code == http.StatusOK, "%s answers %d (want 200)", p, code)
	}

	metaURL := h.origin + "/.well-known/oauth-protected-resource/mcp"
	code, body, _ := h.get(metaURL)
	var meta struct {
		Resource             string   `json:"resource"`
		AuthorizationServers []string `json:"authorization_servers"`
	}
	_ = json.Unmarshal(body, &meta)
	h.check(code == http.StatusOK && meta.Resource == h.resource && slices.Equal(meta.AuthorizationServers, []string{h.issuer.URL}),
		"RFC 9728 metadata at %s: %d, resource %q, authorization_servers %v", metaURL, code, meta.Resource, meta.AuthorizationServers)

	resp, _ := h.rpc(h.resource, "", "tools/list", nil)
	challenge := resp.Header.Get("WWW-Authenticate")
	h.check(resp.StatusCode == http.StatusUnauthorized && strings.HasPrefix(challenge, "Bearer ") &&
		strings.Contains(challenge, `resource_metadata="`+metaURL+`"`),
		"no token: %d, WWW-Authenticate %q (want 401 naming %s)", resp.StatusCode, challenge, metaURL)

	wrongAud, err := h.issuer.Token("conformance-suite", "https://other.example.test/mcp", []string{fixture.DefaultAdminScope}, time.Hour)
	if err == nil {
		resp, _ = h.rpc(h.resource, wrongAud, "tools/list", nil)
		h.check(resp.StatusCode == http.StatusUnauthorized, "a token issued for another resource: %d (want 401)", resp.StatusCode)
	}
	if other, err := fixture.NewTestIssuer(h.issuer.URL); err == nil {
		forged, _ := other.Token("conformance-suite", h.resource, []string{fixture.DefaultAdminScope}, time.Hour)
		resp, _ = h.rpc(h.resource, forged, "tools/list", nil)
		h.check(resp.StatusCode == http.StatusUnauthorized, "a token signed by a key the issuer does not publish: %d (want 401)", resp.StatusCode)
	}

	_, msg := h.rpc(h.resource, h.limitedToken, "tools/list", nil)
	names := toolNames(msg)
	h.check(len(names) > 0 && !slices.Contains(names, fixture.AdminTool),
		"a token without %s lists %d tools, %s not among them", fixture.DefaultAdminScope, len(names), fixture.AdminTool)
	_, msg = h.rpc(h.resource, h.limitedToken, "tools/call", map[string]any{"name": fixture.AdminTool, "arguments": map[string]any{}})
	h.check(msg["error"] != nil, "a token without %s cannot call %s (error %v)", fixture.DefaultAdminScope, fixture.AdminTool, msg["error"])
	_, msg = h.rpc(h.resource, h.suiteToken, "tools/list", nil)
	names = toolNames(msg)
	h.check(slices.Contains(names, fixture.AdminTool), "the suite's token lists %s among %d tools", fixture.AdminTool, len(names))

	for _, c := range []struct {
		origin string
		want   int
	}{{h.origin, http.StatusNoContent}, {allowedWebOrigin, http.StatusNoContent}, {"https://evil.example.test", http.StatusForbidden}} {
		req, _ := http.NewRequest(http.MethodOptions, h.resource, nil)
		req.Header.Set("Origin", c.origin)
		req.Header.Set("Access-Control-Request-Method", "POST")
		req.Header.Set("Access-Control-Request-Headers", "authorization, content-type, mcp-protocol-version")
		resp, err := hc.Do(req)
		if err != nil {
			h.check(false, "CORS preflight from %s: %v", c.origin, err)
			continue
		}
		resp.Body.Close()
		acao := resp.Header.Get("Access-Control-Allow-Origin")
		ok := resp.StatusCode == c.want
		if c.want == http.StatusNoContent {
			ok = ok && acao == c.origin && strings.Contains(resp.Header.Get("Access-Control-Allow-Headers"), "Authorization")
		} else {
			ok = ok && acao == ""
		}
		h.check(ok, "CORS preflight from %s: %d, Access-Control-Allow-Origin %q (want %d)", c.origin, resp.StatusCode, acao, c.want)
	}
}

// runSuite runs conformance/run.sh against the fixture. The suite's CLI
// cannot send a header, so bearer.cjs, preloaded into its Node process,
// makes it send the suite's token; mrtrcheck is given two principals'
// tokens.
func (h *harness) runSuite() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	counts := filepath.Join(h.work, "suite-token-counts")
	nodeOptions := strings.TrimSpace(os.Getenv("NODE_OPTIONS") + " --require " + filepath.Join(h.root, "conformance", "production", "bearer.cjs"))
	cmd := exec.CommandContext(ctx, "bash", filepath.Join(h.root, "conformance", "run.sh"))
	cmd.Dir = h.root
	cmd.Env = append(os.Environ(),
		"CONFORMANCE_URL="+h.resource,
		"CONFORMANCE_TOKEN="+h.suiteToken,
		"CONFORMANCE_OTHER_TOKEN="+h.otherToken,
		"NODE_OPTIONS="+nodeOptions,
		"MRTRKIT_SUITE_TOKEN="+h.suiteToken,
		"MRTRKIT_SUITE_ORIGIN="+h.origin,
		"MRTRKIT_SUITE_TOKEN_LOG="+counts)
	out := &logbuf.Buffer{}
	cmd.Stdout = io.MultiWriter(os.Stdout, out)
	cmd.Stderr = os.Stderr
	start := time.Now()
	err := cmd.Run()
	lines := grepLines(out.String(), regexp.MustCompile(`required scenarios passed|MRTR \(|Passed: |scenarios: .*PASS`))
	h.check(err == nil, "official conformance suite, its CLI sending the suite's token, and mrtrcheck with two principals' tokens (%s): %v\n       %s",
		time.Since(start).Round(time.Second), errOr(err, "PASSED"), strings.Join(lines, "\n       "))

	// How many requests the CLI processes sent the token with.
	runs, sent := 0, 0
	if b, err := os.ReadFile(counts); err == nil {
		for _, f := range strings.Fields(string(b)) {
			if n, err := strconv.Atoi(f); err == nil {
				runs++
				sent += n
			}
		}
	}
	h.check(runs >= 6 && sent > 100, "the suite's CLI sent the token itself: %d requests over %d runs", sent, runs)
}

// runInterop runs the HTTP interop tests of the three clients against the
// fixture, one after the other (they share the server). The clients send
// a token of their own (FIXTURE_TOKEN, which their tests read), without
// the admin scope.
func (h *harness) runInterop() {
	interop := filepath.Join(h.root, "conformance", "interop")
	env := append(os.Environ(), "FIXTURE_URL="+strings.Replace(h.resource, "localhost", "127.0.0.1", 1),
		"FIXTURE_LEG_TIMEOUT="+legTimeout.String(), "FIXTURE_TOKEN="+h.interopToken)
	steps := []struct {
		name string
		dir  string
		npm  bool
		args []string
	}{
		{"go-sdk client, 2026-07-28 and 2025-11-25", "go", false, []string{"go", "test", "-count=1", "-timeout", "300s", "-skip", "^TestStdio", "-v", "./..."}},
		{"typescript-sdk v2 client, 2026-07-28", "ts-v2", true, []string{"node", "--test", "test/interop.test.mjs"}},
		{"typescript-sdk v1 client, 2025-11-25", "ts-v1", true, []string{"node", "--test", "test/legacy.test.mjs"}},
	}
	for _, s := range steps {
		dir := filepath.Join(interop, s.dir)
		if s.npm {
			if _, err := os.Stat(filepath.Join(dir, "node_modules")); err != nil {
				if err := h.command(dir, env, nil, "npm", "ci", "--no-audit", "--no-fund"); err != nil {
					h.check(false, "npm ci in %s: %v", s.dir, err)
					continue
				}
			}
		}
		start := time.Now()
		out := &logbuf.Buffer{}
		err := h.command(dir, env, out, s.args...)
		counts := grepLines(out.String(), regexp.MustCompile(`^(ok|FAIL|--- FAIL|# (tests|pass|fail|skipped) )`))
		if n := strings.Count(out.String(), "--- PASS: "); n > 0 {
			counts = append(counts, fmt.Sprintf("%d PASS, %d SKIP (go test -v, subtests included)", n, strings.Count(out.String(), "--- SKIP: ")))
		}
		h.check(err == nil, "interop: %s with its own token (%s): %v  [%s]",
			s.name, time.Since(start).Round(time.Second), errOr(err, "passed"), strings.Join(counts, "; "))
	}
}

// command runs args in dir, its output copied to out (when not nil) and
// to stdout.
func (h *harness) command(dir string, env []string, out io.Writer, args ...string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	cmd.Dir = dir
	cmd.Env = env
	w := io.Writer(os.Stdout)
	if out != nil {
		w = io.MultiWriter(os.Stdout, out)
	}
	cmd.Stdout, cmd.Stderr = w, w
	return cmd.Run()
}

// checkAfter reads the counter through the hidden tool, stops the fixture
// gracefully, and checks that the counter, the audit log, the spans and
// the metrics saw the same traffic.
func (h *harness) checkAfter() {
	_, msg := h.rpc(h.resource, h.suiteToken, "tools/call", map[string]any{"name": fixture.AdminTool, "arguments": map[string]any{}})
	var live fixture.CallCounts
	text := firstText(msg)
	err := json.Unmarshal([]byte(text), &live)
	h.check(err == nil && live.Methods["tools/call"] > 100 && live.Principals >= 4 && live.Refusals["target"] >= 1,
		"%s (suite's token): %d requests, %d tools/call, %d principals, refusals %v",
		fixture.AdminTool, live.Total, live.Methods["tools/call"], live.Principals, live.Refusals)

	exitErr := h.stopServer()
	h.check(exitErr == nil, "the fixture stopped on SIGTERM and exited 0 (%v)", exitErr)

	logs := h.serverLg.String()
	var final fixture.CallCounts
	m := regexp.MustCompile(`msg="` + fixture.CallCountsMessage + `" counts="((?:[^"\\]|\\.)*)"`).FindStringSubmatch(logs)
	if m != nil {
		if s, err := strconv.Unquote(`"` + m[1] + `"`); err == nil {
			err = json.Unmarshal([]byte(s), &final)
		}
	}
	h.check(m != nil && final.Total > live.Total, "the call counter's final counts were logged: %d requests", final.Total)

	audit := strings.Count(logs, `msg="mrtr audit: round"`)
	refused := strings.Count(logs, `msg="mrtr audit: refused"`)
	h.check(audit > 100 && refused > 0, "audit log: %d rounds, %d refusals", audit, refused)

	var rep struct {
		Spans struct {
			Total  int64            `json:"total"`
			ByName map[string]int64 `json:"by_name"`
			Events map[string]int64 `json:"events"`
			Errors int64            `json:"errors"`
		} `json:"spans"`
		Metrics map[string]struct {
			Sum   int64 `json:"sum"`
			Count int64 `json:"count"`
		} `json:"metrics"`
	}
	b, err := os.ReadFile(filepath.Join(h.work, "telemetry.json"))
	if err == nil {
		err = json.Unmarshal(b, &rep)
	}
	h.check(err == nil, "telemetry report written (%v)", errOr(err, "ok"))
	if err != nil {
		return
	}
	// A tools/call span is named "tools/call <tool>".
	var toolSpans int64
	for name, n := range rep.Spans.ByName {
		if name == "tools/call" || strings.HasPrefix(name, "tools/call ") {
			toolSpans += n
		}
	}
	h.check(rep.Spans.Total == final.Total && toolSpans == final.Methods["tools/call"],
		"OpenTelemetry: %d spans (%d tools/call) for the counter's %d requests (%d tools/call)",
		rep.Spans.Total, toolSpans, final.Total, final.Methods["tools/call"])
	h.check(rep.Spans.Events["mrtr.input_required"] > 0 && rep.Spans.Events["mrtr.refusal"] > 0 && rep.Spans.Errors > 0,
		"OpenTelemetry span events: %d input_required, %d refusal; %d error spans",
		rep.Spans.Events["mrtr.input_required"], rep.Spans.Events["mrtr.refusal"], rep.Spans.Errors)
	reqs, dur := rep.Metrics["mrtr.server.requests"], rep.Metrics["mcp.server.operation.duration"]
	h.check(reqs.Sum == final.Total && dur.Count == final.Total && rep.Metrics["mrtr.server.refusals"].Sum > 0,
		"OpenTelemetry metrics: mrtr.server.requests %d, mcp.server.operation.duration count %d, mrtr.server.refusals %d (want %d, %d, > 0)",
		reqs.Sum, dur.Count, rep.Metrics["mrtr.server.refusals"].Sum, final.Total, final.Total)
}

// stopServer sends SIGTERM to the fixture and waits for it.
func (h *harness) stopServer() error {
	if h.server == nil || h.server.Process == nil {
		return nil
	}
	_ = h.server.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-h.exited:
		h.server = nil
		return err
	case <-time.After(15 * time.Second):
		_ = h.server.Process.Kill()
		<-h.exited
		h.server = nil
		return errors.New("the fixture did not exit within 15 s of SIGTERM")
	}
}

func (h *harness) get(u string) (int, []byte, error) {
	resp, err := hc.Get(u)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}

// rpc sends one 2026-07-28 request to endpoint with token ("" for none)
// and returns the response and the JSON-RPC message that answers it (an
// empty map when none does).
func (h *harness) rpc(endpoint, token, method string, params map[string]any) (*http.Response, map[string]any) {
	if params == nil {
		params = map[string]any{}
	}
	params["_meta"] = client.RawMeta(client.LatestVersion, json.RawMessage(`{}`), harnessInfo)
	p, _ := json.Marshal(params)
	req, _ := http.NewRequest(http.MethodPost, endpoint, bytes.NewReader(client.RawRequestBody(1, method, p)))
	name, _ := params["name"].(string)
	req.Header = client.RawHeader(client.LatestVersion, method, name)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	out := map[string]any{}
	resp, err := client.RawDo(hc, req)
	if err != nil {
		return &http.Response{StatusCode: 0, Header: http.Header{}}, out
	}
	defer resp.Close()
	if m, _ := resp.Await(1, nil); m != nil {
		_ = json.Unmarshal(m.Raw, &out)
	}
	return resp.Response, out
}

func toolNames(msg map[string]any) []string {
	r, _ := msg["result"].(map[string]any)
	tools, _ := r["tools"].([]any)
	var names []string
	for _, t := range tools {
		if m, ok := t.(map[string]any); ok {
			if n, ok := m["name"].(string); ok {
				names = append(names, n)
			}
		}
	}
	return names
}

func firstText(msg map[string]any) string {
	r, _ := msg["result"].(map[string]any)
	content, _ := r["content"].([]any)
	if len(content) == 0 {
		return ""
	}
	c, _ := content[0].(map[string]any)
	s, _ := c["text"].(string)
	return s
}

// grepLines returns the distinct lines of s that re matches, in order.
func grepLines(s string, re *regexp.Regexp) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimRight(l, "\r"); re.MatchString(l) && !slices.Contains(out, l) {
			out = append(out, l)
		}
	}
	return out
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

func exitCode(err error) int {
	if err != nil {
		return 1
	}
	return 0
}

func errOr(err error, ok string) string {
	if err != nil {
		return err.Error()
	}
	return ok
}
