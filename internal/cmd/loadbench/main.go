// Command loadbench measures how much server CPU an mrtrkit endpoint
// spends per request over loopback HTTP, next to a bare net/http JSON-RPC
// handler, and compares the two against the framework's budget.
//
//	go run ./internal/cmd/loadbench [-n requests] [-c concurrency] [-duration d] [-runs r]
//
// Every scenario runs in a server process of its own (this program,
// started again with -serve) on an ephemeral 127.0.0.1 port. The load
// generator in this process sends one fixed request over keep-alive
// connections: a warm-up, then the measured phase. The server process
// reports its own CPU time (getrusage) and heap allocations
// (runtime.MemStats) over the measured phase through a control endpoint
// on a second port, so the client's CPU never counts as the server's.
// With -wrk, each server is also driven by wrk. See README.md.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/mrtrkit/mrtrkit/client"
	"github.com/mrtrkit/mrtrkit/mrtr"
)

type options struct {
	n, c, warmup, runs int
	duration           time.Duration
	scenarios          []scenario
	cpuprofile         string
	serverProcs        int
	maxOther           float64
	attempts           int
	wrk                bool
	wrkBin             string
	wrkDuration        time.Duration
	wrkThreads         int
	slices             int
}

func main() {
	var (
		o         options
		names     string
		serveName string
		serveProf string
	)
	flag.IntVar(&o.n, "n", 20000, "measured requests per scenario and run")
	flag.IntVar(&o.c, "c", 8, "concurrent workers, each with one keep-alive connection")
	flag.DurationVar(&o.duration, "duration", 30*time.Second, "upper bound on each warm-up and each measured phase")
	flag.IntVar(&o.warmup, "warmup", 2000, "warm-up requests before each measured phase")
	flag.IntVar(&o.runs, "runs", 3, "runs of every scenario; the summary reports medians")
	flag.StringVar(&names, "scenarios", "all", "comma-separated scenarios to run: "+scenarioNames())
	flag.StringVar(&o.cpuprofile, "cpuprofile", "", "directory for CPU profiles of each server's measured phase (one file per scenario and run)")
	flag.IntVar(&o.serverProcs, "server-procs", 0, "GOMAXPROCS of the server processes (0: Go's default)")
	flag.Float64Var(&o.maxOther, "max-other", 0.3, "measure a scenario again when other processes used more than this many cores during its measured phase (0: never)")
	flag.IntVar(&o.attempts, "attempts", 3, "with -max-other: attempts per scenario and run; the last one is kept")
	flag.BoolVar(&o.wrk, "wrk", false, "also drive every server with wrk, if it is on PATH")
	flag.DurationVar(&o.wrkDuration, "wrk-duration", 5*time.Second, "length of each wrk phase")
	flag.IntVar(&o.wrkThreads, "wrk-threads", 1, "wrk threads")
	flag.IntVar(&o.slices, "slices", 10, "split each run's measured requests into this many slices, taken in turn from every scenario's server (all started at once), so that noise on the machine falls on every scenario alike; 1: one phase per scenario, one after another")
	flag.StringVar(&serveName, "serve", "", "run as the server process of this scenario (used by loadbench itself)")
	flag.StringVar(&serveProf, "serve-cpuprofile", "", "with -serve: write a CPU profile of the first measured phase here")
	flag.Parse()

	if serveName != "" {
		if err := serve(serveName, serveProf); err != nil {
			fmt.Fprintln(os.Stderr, "loadbench server:", err)
			os.Exit(1)
		}
		return
	}
	if err := o.check(names); err != nil {
		fmt.Fprintln(os.Stderr, "loadbench:", err)
		flag.Usage()
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, &o, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "loadbench:", err)
		os.Exit(1)
	}
}

func scenarioNames() string {
	var s []string
	for _, sc := range scenarios {
		s = append(s, sc.name)
	}
	return strings.Join(s, ",")
}

func (o *options) check(names string) error {
	switch {
	case o.n < 1:
		return errors.New("-n must be at least 1")
	case o.c < 1:
		return errors.New("-c must be at least 1")
	case o.warmup < 0:
		return errors.New("-warmup must not be negative")
	case o.runs < 1:
		return errors.New("-runs must be at least 1")
	case o.duration <= 0:
		return errors.New("-duration must be positive")
	case o.wrkDuration < time.Second:
		return errors.New("-wrk-duration must be at least 1s")
	case o.maxOther < 0:
		return errors.New("-max-other must not be negative")
	case o.attempts < 1:
		return errors.New("-attempts must be at least 1")
	case o.slices < 1:
		return errors.New("-slices must be at least 1")
	case o.slices > 1 && o.wrk:
		return errors.New("-wrk needs -slices 1")
	case o.slices > o.n:
		return errors.New("-slices must not exceed -n")
	}
	if names == "all" {
		o.scenarios = scenarios
	} else {
		for n := range strings.SplitSeq(names, ",") {
			sc, ok := scenarioByName(strings.TrimSpace(n))
			if !ok {
				return fmt.Errorf("unknown scenario %q (known: %s)", n, scenarioNames())
			}
			o.scenarios = append(o.scenarios, sc)
		}
	}
	if o.wrk {
		bin, err := exec.LookPath("wrk")
		if err != nil {
			return errors.New("-wrk: wrk is not on PATH (apt-get install wrk)")
		}
		o.wrkBin = bin
	}
	if o.cpuprofile != "" {
		if err := os.MkdirAll(o.cpuprofile, 0o755); err != nil {
			return err
		}
	}
	return nil
}

// measurement is one scenario in one run.
type measurement struct {
	load loadResult
	srv  serverStats
	// machine is the CPU time the whole machine spent during the load
	// phase (0 when unknown), to tell how much other processes used.
	machine time.Duration
	// wrk, wrkSrv and wrkMachine are set when wrk drove the server too.
	wrk        *wrkResult
	wrkSrv     serverStats
	wrkMachine time.Duration
}

func run(ctx context.Context, o *options, out io.Writer) error {
	fmt.Fprintf(out, "loadbench: %s %s/%s, %d CPUs, server GOMAXPROCS %s; %d runs of %d requests (warm-up %d) from %d workers, at most %v per phase\n",
		runtime.Version(), runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), procsLabel(o.serverProcs), o.runs, o.n, o.warmup, o.c, o.duration)
	dir, err := os.MkdirTemp("", "loadbench")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)

	results := map[string][]measurement{}
	for r := 1; r <= o.runs; r++ {
		if o.slices > 1 {
			ms, err := measureSliced(ctx, o, r)
			if err != nil {
				return fmt.Errorf("run %d: %w", r, err)
			}
			for i, sc := range o.scenarios {
				results[sc.name] = append(results[sc.name], ms[i])
				fmt.Fprintf(os.Stderr, "run %d/%d %-13s %s\n", r, o.runs, sc.name, describe(ms[i]))
			}
			continue
		}
		for _, sc := range o.scenarios {
			if err := ctx.Err(); err != nil {
				return err
			}
			m, err := measureQuietly(ctx, o, sc, r, dir)
			if err != nil {
				return fmt.Errorf("run %d, %s: %w", r, sc.name, err)
			}
			results[sc.name] = append(results[sc.name], m)
			fmt.Fprintf(os.Stderr, "run %d/%d %-13s %s\n", r, o.runs, sc.name, describe(m))
		}
	}
	report(out, o, results)
	return nil
}

func procsLabel(n int) string {
	if n > 0 {
		return strconv.Itoa(n)
	}
	if v := os.Getenv("GOMAXPROCS"); v != "" {
		return v
	}
	return "default"
}

// measureQuietly measures a scenario, and measures it again (up to
// o.attempts times in all) while other processes on the machine used more
// than o.maxOther cores during the measured phase. The last attempt is
// kept.
func measureQuietly(ctx context.Context, o *options, sc scenario, run int, dir string) (measurement, error) {
	for attempt := 1; ; attempt++ {
		m, err := measure(ctx, o, sc, run, dir)
		if err != nil {
			return m, err
		}
		other := goRow(m).other
		if o.maxOther == 0 || math.IsNaN(other) || other <= o.maxOther || attempt >= o.attempts {
			return m, nil
		}
		fmt.Fprintf(os.Stderr, "run %d/%d %-13s other processes used %.2f cores; measuring again\n", run, o.runs, sc.name, other)
		select {
		case <-ctx.Done():
			return m, ctx.Err()
		case <-time.After(2 * time.Second):
		}
	}
}

// measure starts the scenario's server process, prepares and checks the
// request, warms up, and measures.
func measure(ctx context.Context, o *options, sc scenario, run int, dir string) (m measurement, err error) {
	a, err := arm(ctx, o, sc, run)
	if err != nil {
		return m, err
	}
	defer func() {
		if cerr := a.close(); cerr != nil && err == nil {
			err = cerr
		}
	}()
	if err := a.phase(ctx, &m, o.n, o.duration); err != nil {
		return m, err
	}
	if m.load.requests == 0 {
		return m, errors.New("no request was answered")
	}
	if o.wrk {
		a.client.CloseIdleConnections()
		if err := a.srv.control("/start", nil); err != nil {
			return m, err
		}
		busy0, ok0 := machineBusy()
		w, err := runWrk(ctx, o.wrkBin, a.t, o.c, o.wrkThreads, o.wrkDuration, dir)
		if err != nil {
			return m, err
		}
		busy1, ok1 := machineBusy()
		if ok0 && ok1 {
			m.wrkMachine = busy1 - busy0
		}
		if err := a.srv.control("/stop", &m.wrkSrv); err != nil {
			return m, err
		}
		if w.failures > 0 || w.requests == 0 {
			return m, fmt.Errorf("wrk: %d failures in %d requests", w.failures, w.requests)
		}
		m.wrk = &w
	}
	return m, nil
}

// armed is one scenario's server, prepared and warmed up.
type armed struct {
	sc      scenario
	srv     *server
	client  *http.Client
	workers int
	t       target
}

// arm starts the scenario's server process, prepares and checks the
// request, and warms the server up.
func arm(ctx context.Context, o *options, sc scenario, run int) (*armed, error) {
	profile := ""
	if o.cpuprofile != "" {
		profile = filepath.Join(o.cpuprofile, fmt.Sprintf("%s-run%d.pprof", sc.name, run))
	}
	srv, err := startServer(sc.name, profile, o.serverProcs)
	if err != nil {
		return nil, err
	}
	a := &armed{sc: sc, srv: srv, client: newClient(o.c), workers: o.c}
	if a.t, err = prepare(ctx, a.client, srv.url, sc); err != nil {
		a.close()
		return nil, err
	}
	if o.warmup > 0 {
		w := drive(ctx, a.client, a.t, o.warmup, o.c, o.duration)
		if w.failures > 0 {
			a.close()
			return nil, fmt.Errorf("warm-up: %d of %d requests failed, the first: %v", w.failures, w.requests, w.firstErr)
		}
	}
	return a, nil
}

// close stops the server process.
func (a *armed) close() error {
	a.client.CloseIdleConnections()
	return a.srv.stop()
}

// phase measures n requests (at most limit long) between a /start and a
// /stop of the server, and adds what it saw to m. Any failed request is
// an error.
func (a *armed) phase(ctx context.Context, m *measurement, n int, limit time.Duration) error {
	if err := a.srv.control("/start", nil); err != nil {
		return err
	}
	busy0, ok0 := machineBusy()
	l := drive(ctx, a.client, a.t, n, a.workers, limit)
	busy1, ok1 := machineBusy()
	var st serverStats
	if err := a.srv.control("/stop", &st); err != nil {
		return err
	}
	if l.failures > 0 {
		return fmt.Errorf("%d of %d requests failed, the first: %v", l.failures, l.requests, l.firstErr)
	}
	m.load.add(l)
	m.srv.add(st)
	if ok0 && ok1 {
		m.machine += busy1 - busy0
	}
	return nil
}

// prepare builds the scenario's request. For a retry round it first
// calls the tool as an ordinary client does (firstRound) and takes the
// requestState of its first round. It then sends the measured request
// once, as the load phases will, and checks the answer.
func prepare(ctx context.Context, hc *http.Client, url string, sc scenario) (target, error) {
	t := target{url: url, header: callHeader(sc.tool), want: []byte(sc.want), body: callBody(sc.tool, sc.caps, "", "")}
	if sc.retry {
		state, err := firstRound(ctx, hc, url, sc.tool)
		if err != nil {
			return t, fmt.Errorf("first round: %w", err)
		}
		t.body = callBody(sc.tool, sc.caps, state, nameAnswer)
	}
	status, body, err := post(ctx, hc, t.url, t.header, t.body)
	if err != nil {
		return t, err
	}
	if status != http.StatusOK || !strings.Contains(string(body), sc.want) {
		return t, fmt.Errorf("probe: status %d, want a body with %s: %.300s", status, sc.want, body)
	}
	return t, nil
}

// firstRound calls tool through the client package, answering its first
// question with the name nameAnswer gives, and returns the requestState
// of that first round: the state the measured retry carries. The
// client answers one round at most; a tool that asks again (survey)
// stops there.
func firstRound(ctx context.Context, hc *http.Client, url, tool string) (string, error) {
	c, err := client.Connect(ctx, client.HTTP(url, client.WithHTTPClient(hc)),
		client.WithClientInfo("loadbench", "1.0.0"), client.WithMaxRounds(1),
		client.OnElicitation(func(context.Context, *mrtr.ElicitRequest) (*mrtr.ElicitResult, error) {
			return &mrtr.ElicitResult{Action: mrtr.Accepted, Content: map[string]any{"name": "Ada"}}, nil
		}))
	if err != nil {
		return "", err
	}
	defer c.Close()
	var state json.RawMessage
	_, err = c.CallTool(ctx, tool, map[string]string{"text": "hello"},
		client.WithRoundWatch(&client.RoundWatch{Asked: func(r *client.Round) {
			if r.N == 1 {
				state = r.RequestState
			}
		}}))
	if err != nil && !errors.Is(err, client.ErrTooManyRounds) {
		return "", err
	}
	var s string
	if json.Unmarshal(state, &s) != nil || s == "" {
		return "", fmt.Errorf("the tool's first round carries no requestState (%s)", state)
	}
	return s, nil
}

// post sends one pre-encoded request, as the load phases do.
func post(ctx context.Context, client *http.Client, url string, header http.Header, body []byte) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(string(body)))
	if err != nil {
		return 0, nil, err
	}
	req.Header = header.Clone()
	resp, err := client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}

// server is a running server process.
type server struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	url   string // the measured endpoint
	ctrl  string // the control endpoint's base URL
}

// startServer starts this program again as the scenario's server process
// and waits for it to report its addresses.
func startServer(name, profile string, procs int) (*server, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	args := []string{"-serve", name}
	if profile != "" {
		args = append(args, "-serve-cpuprofile", profile)
	}
	cmd := exec.Command(exe, args...)
	cmd.Stderr = os.Stderr
	if procs > 0 {
		cmd.Env = append(os.Environ(), "GOMAXPROCS="+strconv.Itoa(procs))
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &server{cmd: cmd, stdin: stdin}
	type ready struct {
		line string
		err  error
	}
	rc := make(chan ready, 1)
	go func() {
		line, err := bufio.NewReader(stdout).ReadString('\n')
		rc <- ready{line, err}
	}()
	var r ready
	select {
	case r = <-rc:
	case <-time.After(15 * time.Second):
		r.err = errors.New("the server process did not start in 15s")
	}
	var addr, ctrl string
	if r.err == nil {
		if _, err := fmt.Sscanf(r.line, "ready %s %s", &addr, &ctrl); err != nil {
			r.err = fmt.Errorf("the server process said %q", r.line)
		}
	}
	if r.err != nil {
		_ = s.stop()
		return nil, r.err
	}
	s.url = "http://" + addr + "/mcp"
	s.ctrl = "http://" + ctrl
	return s, nil
}

// control calls the control endpoint and decodes its answer into v when v
// is not nil.
func (s *server) control(path string, v any) error {
	c := &http.Client{Timeout: 10 * time.Second}
	resp, err := c.Post(s.ctrl+path, "application/json", nil)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("control %s: status %d: %s", path, resp.StatusCode, strings.TrimSpace(string(body)))
	}
	if v != nil {
		return json.Unmarshal(body, v)
	}
	return nil
}

// stop closes the server's stdin, which ends it, and waits for it; a
// server that does not end within 10s is killed.
func (s *server) stop() error {
	_ = s.stdin.Close()
	done := make(chan error, 1)
	go func() { done <- s.cmd.Wait() }()
	select {
	case err := <-done:
		return err
	case <-time.After(10 * time.Second):
		_ = s.cmd.Process.Kill()
		<-done
		return errors.New("the server process did not stop in 10s and was killed")
	}
}

// row is the per-request figures of one measurement.
type row struct {
	rps        float64
	cpuUs      float64 // server CPU (user+sys) per request, µs
	userUs     float64
	sysUs      float64
	cores      float64 // server CPU time / wall time
	clientUs   float64 // client CPU (this process, or wrk) per request, µs
	other      float64 // CPU used by other processes / wall time; NaN when unknown
	p50, p99   float64 // client-observed latency, µs
	allocs     float64 // server heap allocations per request
	allocBytes float64 // server heap bytes allocated per request
	requests   float64
	gcsPerKReq float64
}

func rowOf(requests int, elapsed time.Duration, st serverStats, client, machine time.Duration) row {
	n := float64(requests)
	r := row{
		requests:   n,
		rps:        n / elapsed.Seconds(),
		cpuUs:      float64(st.UserNs+st.SysNs) / 1e3 / n,
		userUs:     float64(st.UserNs) / 1e3 / n,
		sysUs:      float64(st.SysNs) / 1e3 / n,
		allocs:     float64(st.Mallocs) / n,
		allocBytes: float64(st.AllocBytes) / n,
		gcsPerKReq: float64(st.GCs) * 1000 / n,
	}
	if st.WallNs > 0 {
		r.cores = float64(st.UserNs+st.SysNs) / float64(st.WallNs)
	}
	r.clientUs = float64(client.Nanoseconds()) / 1e3 / n
	r.other = math.NaN()
	if machine > 0 {
		other := machine - client - time.Duration(st.UserNs+st.SysNs)
		r.other = other.Seconds() / elapsed.Seconds()
	}
	return r
}

func goRow(m measurement) row {
	r := rowOf(m.load.requests, m.load.elapsed, m.srv, m.load.client, m.machine)
	r.p50 = float64(m.load.percentile(50).Nanoseconds()) / 1e3
	r.p99 = float64(m.load.percentile(99).Nanoseconds()) / 1e3
	return r
}

func wrkRow(m measurement) row {
	r := rowOf(m.wrk.requests, m.wrk.elapsed, m.wrkSrv, m.wrk.client, m.wrkMachine)
	r.p50 = float64(m.wrk.p50.Nanoseconds()) / 1e3
	r.p99 = float64(m.wrk.p99.Nanoseconds()) / 1e3
	return r
}

func describe(m measurement) string {
	g := goRow(m)
	s := fmt.Sprintf("%6.0f req/s  server %5.1f µs/req (user %.1f sys %.1f, %.2f cores)  client %5.1f µs/req  other %s cores  p50 %s p99 %s  %.1f allocs %.0f B/req",
		g.rps, g.cpuUs, g.userUs, g.sysUs, g.cores, g.clientUs, fmtCores(g.other), fmtUs(g.p50), fmtUs(g.p99), g.allocs, g.allocBytes)
	if m.wrk != nil {
		w := wrkRow(m)
		s += fmt.Sprintf("  | wrk %6.0f req/s server %5.1f µs/req client %5.1f µs/req other %s cores p50 %s p99 %s",
			w.rps, w.cpuUs, w.clientUs, fmtCores(w.other), fmtUs(w.p50), fmtUs(w.p99))
	}
	return s
}

func fmtCores(c float64) string {
	if math.IsNaN(c) {
		return "?"
	}
	return fmt.Sprintf("%.2f", c)
}

func fmtUs(us float64) string {
	if us >= 1000 {
		return fmt.Sprintf("%.2fms", us/1000)
	}
	return fmt.Sprintf("%.0fµs", us)
}

// median returns the median of the values that are not NaN, or NaN.
func median(values []float64) float64 {
	var v []float64
	for _, x := range values {
		if !math.IsNaN(x) {
			v = append(v, x)
		}
	}
	if len(v) == 0 {
		return math.NaN()
	}
	slices.Sort(v)
	if len(v)%2 == 1 {
		return v[len(v)/2]
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2
}

// medianRow takes the median of every figure independently.
func medianRow(rows []row) row {
	pick := func(f func(row) float64) float64 {
		v := make([]float64, len(rows))
		for i, r := range rows {
			v[i] = f(r)
		}
		return median(v)
	}
	return row{
		rps:        pick(func(r row) float64 { return r.rps }),
		cpuUs:      pick(func(r row) float64 { return r.cpuUs }),
		userUs:     pick(func(r row) float64 { return r.userUs }),
		sysUs:      pick(func(r row) float64 { return r.sysUs }),
		cores:      pick(func(r row) float64 { return r.cores }),
		other:      pick(func(r row) float64 { return r.other }),
		clientUs:   pick(func(r row) float64 { return r.clientUs }),
		p50:        pick(func(r row) float64 { return r.p50 }),
		p99:        pick(func(r row) float64 { return r.p99 }),
		allocs:     pick(func(r row) float64 { return r.allocs }),
		allocBytes: pick(func(r row) float64 { return r.allocBytes }),
		gcsPerKReq: pick(func(r row) float64 { return r.gcsPerKReq }),
	}
}

// report prints the medians of every scenario, with the ratio of its
// server CPU per request to the bare handler's and the budget verdict, as
// Markdown tables.
func report(out io.Writer, o *options, results map[string][]measurement) {
	table := func(title string, rowFn func(measurement) row) {
		med := map[string]row{}
		for _, sc := range o.scenarios {
			var rows []row
			for _, m := range results[sc.name] {
				rows = append(rows, rowFn(m))
			}
			med[sc.name] = medianRow(rows)
		}
		bare := results["bare"]
		cells := [][]string{{"scenario", "req/s", "server CPU µs/req", "user", "sys", "ratio to bare", "ratio range", "Δ bare µs", "budget", "verdict", "p50", "p99", "allocs/req", "B/req", "server cores", "client CPU µs/req", "other cores"}}
		for _, sc := range o.scenarios {
			r := med[sc.name]
			ratio, spread, delta, budget, verdict := "-", "-", "-", "-", "-"
			// Each run's scenario is compared with the same run's bare
			// handler, measured moments before, so that slow drifts of the
			// machine cancel out; the median of those ratios is the verdict.
			var ratios, deltas []float64
			for i, m := range results[sc.name] {
				if i < len(bare) {
					b, x := rowFn(bare[i]).cpuUs, rowFn(m).cpuUs
					ratios = append(ratios, x/b)
					deltas = append(deltas, x-b)
				}
			}
			if len(ratios) > 0 {
				x := median(ratios)
				ratio = fmt.Sprintf("%.2f×", x)
				spread = fmt.Sprintf("%.2f–%.2f", slices.Min(ratios), slices.Max(ratios))
				delta = fmt.Sprintf("%+.1f", median(deltas))
				if sc.budget > 0 {
					budget = fmt.Sprintf("%.1f×", sc.budget)
					verdict = "within"
					if x > sc.budget {
						verdict = "OVER"
					}
				}
			}
			cells = append(cells, []string{sc.name, fmt.Sprintf("%.0f", r.rps), fmt.Sprintf("%.1f", r.cpuUs), fmt.Sprintf("%.1f", r.userUs), fmt.Sprintf("%.1f", r.sysUs),
				ratio, spread, delta, budget, verdict, fmtUs(r.p50), fmtUs(r.p99), fmt.Sprintf("%.1f", r.allocs), fmt.Sprintf("%.0f", r.allocBytes),
				fmt.Sprintf("%.2f", r.cores), fmt.Sprintf("%.1f", r.clientUs), fmtCores(r.other)})
		}
		fmt.Fprintf(out, "\n%s (medians of %d runs)\n\n", title, o.runs)
		writeMarkdown(out, cells)
	}
	table("Go load generator", goRow)
	if o.wrk {
		table(fmt.Sprintf("wrk, %v per phase, %d thread(s), %d connections", o.wrkDuration, o.wrkThreads, o.c), wrkRow)
	}
	fmt.Fprintln(out)
	for _, sc := range o.scenarios {
		fmt.Fprintf(out, "  %-13s %s\n", sc.name, sc.what)
	}
}

// writeMarkdown prints cells as a Markdown table whose first row is the
// header; the first column is left-aligned, the others right-aligned.
func writeMarkdown(out io.Writer, cells [][]string) {
	width := make([]int, len(cells[0]))
	for _, r := range cells {
		for i, c := range r {
			width[i] = max(width[i], utf8.RuneCountInString(c))
		}
	}
	pad := func(s string, w int, left bool) string {
		fill := strings.Repeat(" ", w-utf8.RuneCountInString(s))
		if left {
			return s + fill
		}
		return fill + s
	}
	for ri, r := range cells {
		var b strings.Builder
		for i, c := range r {
			b.WriteString("| " + pad(c, width[i], i == 0) + " ")
		}
		fmt.Fprintln(out, b.String()+"|")
		if ri == 0 {
			b.Reset()
			for i, w := range width {
				if i == 0 {
					b.WriteString("|:" + strings.Repeat("-", w+1))
				} else {
					b.WriteString("|" + strings.Repeat("-", w+1) + ":")
				}
			}
			fmt.Fprintln(out, b.String()+"|")
		}
	}
}
