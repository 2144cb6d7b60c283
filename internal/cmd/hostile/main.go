//go:build unix

package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// options are the command's flags.
type options struct {
	url        string
	serverPkg  string
	serverArgs string
	duration   time.Duration
	soak       bool

	listens    int
	listenConc int
	listenRate float64
	goodFrom   string
	goodApart  bool
	goodChild  bool
	attackNice int
	serverNice int
	goodNice   int
	progress   time.Duration
	slow       int
	slowLen    int
	slowEvery  time.Duration
	nonread    int
	pipeline   int
	big        int
	goodEvery  time.Duration
	goodMethod string
	sample     time.Duration
	warmup     time.Duration
	soakGood   int
	noDump     bool
	dumpFile   string

	hold       int
	holdMethod string
	holdConc   int
	holdRate   float64
	holdFrom   int
	holdAddrs  int
	holdAgain  time.Duration
}

func main() {
	var o options
	flag.StringVar(&o.url, "url", "", "MCP endpoint to target (default: build and start the fixture server as a child)")
	flag.StringVar(&o.serverPkg, "server", "./conformance/server", "package of the fixture server to build (relative to the working directory)")
	flag.StringVar(&o.serverArgs, "server-args", "", "extra flags for the fixture server, space-separated")
	flag.DurationVar(&o.duration, "duration", 0, "length of the run (default 1m, or 10m with -soak)")
	flag.BoolVar(&o.soak, "soak", false, "run steady mixed load and check for 5xx and lost answers")
	flag.IntVar(&o.listens, "listens", 20000, "subscriptions/listen attempts (with -soak: attempts over the whole run)")
	flag.IntVar(&o.listenConc, "listen-conc", 500, "concurrent listen workers")
	flag.Float64Var(&o.listenRate, "listen-rate", 0, "listen attempts per second of all workers together (0: as fast as they go)")
	flag.StringVar(&o.goodFrom, "good-from", "auto", "local IP address of the well-behaved client (auto: 127.0.0.2 when the target is 127.0.0.1, so that it is a peer of its own as a separate client would be; \"any\": the system's choice)")
	flag.DurationVar(&o.progress, "progress", 5*time.Second, "interval of the progress lines")
	flag.BoolVar(&o.goodApart, "good-apart", true, "run the well-behaved client in a process of its own")
	flag.IntVar(&o.attackNice, "attack-nice", 10, "with -good-apart, once the server and the well-behaved client are started, lower this process's (the hostile clients') scheduling priority to this nice value, as if the attack ran on a machine of its own (0: leave it)")
	flag.IntVar(&o.serverNice, "server-nice", 0, "set the fixture server's nice value once started (negative: ahead of every other process on the machine, as if it had the machine to itself; needs the privilege to raise priority)")
	flag.IntVar(&o.goodNice, "good-nice", 0, "with -good-apart, the well-behaved client's nice value (negative, with -server-nice: both ahead of other processes on a shared machine, as if client and server each had a machine of their own; needs the privilege to raise priority)")
	flag.BoolVar(&o.goodChild, goodChildFlag, false, "internal: run only the well-behaved client against -url and report each call on stdout")
	flag.IntVar(&o.slow, "slow", 200, "slow-body clients")
	flag.IntVar(&o.slowLen, "slow-len", 1024, "Content-Length the slow-body clients announce")
	flag.DurationVar(&o.slowEvery, "slow-every", 3*time.Second, "pause between two bytes of a slow body")
	flag.IntVar(&o.nonread, "nonread", 200, "clients that never read their answers")
	flag.IntVar(&o.pipeline, "pipeline", 16, "requests each non-reading client pipelines (their answers must outgrow the socket buffers, about 4 MiB on Linux loopback, to block the server)")
	flag.IntVar(&o.big, "big", 512<<10, "size in bytes of the text each non-reader's answer echoes")
	flag.DurationVar(&o.goodEvery, "good-every", 100*time.Millisecond, "interval of the well-behaved tools/call")
	flag.StringVar(&o.goodMethod, "good-method", "tools/call", "what the well-behaved client sends: tools/call (test_simple_text) or tools/list")
	flag.DurationVar(&o.sample, "sample", 0, "interval of RSS and descriptor samples (default 250ms, or 10s with -soak)")
	flag.DurationVar(&o.warmup, "warmup", time.Minute, "with -soak: samples before this are left out of first/last/max")
	flag.IntVar(&o.soakGood, "soak-workers", 4, "with -soak: well-behaved workers")
	flag.BoolVar(&o.noDump, "no-dump", false, "do not SIGQUIT the child at the end to count its goroutines")
	flag.StringVar(&o.dumpFile, "dump-file", "", "also write the child's goroutine stack dump to this file")
	flag.IntVar(&o.hold, "hold", 0, "connections to hold: each opens a connection, sends one -hold-method request and keeps the connection open whatever the answer, until the end (with -soak: reopens -hold-again after the server closes it)")
	flag.StringVar(&o.holdMethod, "hold-method", "listen", "request each held connection sends: listen (subscriptions/listen, refused past the listener caps) or tools/list (answered, then an idle keep-alive connection)")
	flag.IntVar(&o.holdConc, "hold-conc", 200, "workers opening the held connections")
	flag.Float64Var(&o.holdRate, "hold-rate", 0, "held connections opened per second (0: as fast as the workers go)")
	flag.IntVar(&o.holdFrom, "hold-from", 10, "held connections come from 127.0.0.<hold-from> onwards (loopback targets only), so that they do not run out of ephemeral ports and count as several peers")
	flag.IntVar(&o.holdAddrs, "hold-addrs", 64, "number of 127.0.0.x source addresses of the held connections (0: the system's choice)")
	flag.DurationVar(&o.holdAgain, "hold-again", 5*time.Second, "with -soak: pause before a holder whose connection the server closed opens a new one")
	flag.Parse()
	if o.duration <= 0 {
		o.duration = time.Minute
		if o.soak {
			o.duration = 10 * time.Minute
		}
	}
	if o.sample <= 0 {
		o.sample = 250 * time.Millisecond
		if o.soak {
			o.sample = 10 * time.Second
		}
	}
	if o.goodMethod != "tools/call" && o.goodMethod != "tools/list" {
		fmt.Fprintln(os.Stderr, "hostile: -good-method takes tools/call or tools/list")
		os.Exit(2)
	}
	if _, ok := holdMethods[o.holdMethod]; !ok {
		fmt.Fprintln(os.Stderr, "hostile: -hold-method takes listen or tools/list")
		os.Exit(2)
	}
	if o.hold < 0 || o.holdConc < 1 || o.holdRate < 0 || o.holdAgain <= 0 {
		fmt.Fprintln(os.Stderr, "hostile: -hold counts and intervals must be positive")
		os.Exit(2)
	}
	if o.listenConc < 1 || o.soakGood < 1 || o.pipeline < 1 || o.slowLen < 1 || o.slowEvery <= 0 || o.goodEvery <= 0 || o.progress <= 0 || o.listenRate < 0 {
		fmt.Fprintln(os.Stderr, "hostile: counts and intervals must be positive")
		os.Exit(2)
	}
	if o.goodFrom != "auto" && o.goodFrom != "any" && o.goodFrom != "" && net.ParseIP(o.goodFrom) == nil {
		fmt.Fprintln(os.Stderr, "hostile: -good-from takes auto, any or an IP address")
		os.Exit(2)
	}
	if o.goodChild {
		os.Exit(runGoodChild(&o, os.Stdout))
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	code, err := run(ctx, &o, os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "hostile:", err)
		os.Exit(1)
	}
	os.Exit(code)
}

// run starts or targets the server, runs the chosen mode and returns the
// exit status.
func run(ctx context.Context, o *options, out io.Writer) (int, error) {
	limit := raiseFileLimit()
	var srv *child
	u := o.url
	if u == "" {
		dir, err := os.MkdirTemp("", "hostile")
		if err != nil {
			return 1, err
		}
		defer os.RemoveAll(dir)
		bin, err := buildServer(ctx, o.serverPkg, dir)
		if err != nil {
			return 1, err
		}
		args := strings.Fields(o.serverArgs)
		// The soak samples the server's goroutine count, and both modes
		// read its connection cap's counts at the end (the fixture's
		// -debug-addr).
		debug, err := freeAddr()
		if err != nil {
			return 1, err
		}
		args = append(args, "-debug-addr", debug)
		srv, err = startChild(bin, args)
		if err != nil {
			return 1, err
		}
		defer func() {
			select {
			case <-srv.done:
			default:
				srv.stop()
			}
		}()
		u = srv.url
		srv.debug = "http://" + debug + "/goroutines"
		srv.debugConns = "http://" + debug + "/conns"
		if o.serverNice != 0 {
			if err := setPriority(strconv.Itoa(srv.cmd.Process.Pid), o.serverNice); err != nil {
				return 1, fmt.Errorf("setting the server's priority: %w", err)
			}
		}
	}
	fmt.Fprintf(out, "hostile: target %s, RLIMIT_NOFILE %d, duration %v\n", u, limit, o.duration)
	if srv != nil && o.serverNice != 0 {
		fmt.Fprintf(out, "hostile: the server runs at nice %d\n", o.serverNice)
	}
	if o.goodApart && o.goodNice != 0 {
		fmt.Fprintf(out, "hostile: the well-behaved client runs at nice %d\n", o.goodNice)
	}
	if err := probe(ctx, u); err != nil {
		return 1, err
	}
	if o.soak {
		return soak(ctx, o, u, srv, out)
	}
	return hostile(ctx, o, u, srv, out), nil
}

// probe checks that the target answers a tools/call.
func probe(ctx context.Context, u string) error {
	hc := newHTTPClient(1, 10*time.Second)
	defer hc.CloseIdleConnections()
	c, err := dialGood(ctx, hc, u)
	if err != nil {
		return fmt.Errorf("probe: connecting failed: %w", err)
	}
	defer c.Close()
	if o, why := callSimple(ctx, c, 10*time.Second); o != ok {
		return errors.New("probe tools/call test_simple_text failed: " + why)
	}
	return nil
}

// sampler records the child's RSS and descriptor count at an interval.
type sampler struct {
	mu      sync.Mutex
	at      []time.Duration
	rss     []int64
	fds     []int
	maxRSS  int64
	maxFDs  int
	started time.Time
}

func (s *sampler) run(ctx context.Context, pid int, every time.Duration, each func(at time.Duration, rss int64, fds int)) {
	s.started = time.Now()
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		rss, okR := procRSS(pid)
		fds, _ := procFDs(pid)
		if okR {
			at := time.Since(s.started).Round(time.Second)
			s.mu.Lock()
			s.at = append(s.at, at)
			s.rss = append(s.rss, rss)
			s.fds = append(s.fds, fds)
			s.maxRSS = max(s.maxRSS, rss)
			s.maxFDs = max(s.maxFDs, fds)
			s.mu.Unlock()
			if each != nil {
				each(at, rss, fds)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// hostile runs the hostile mix with the well-behaved caller, then reports.
func hostile(ctx context.Context, o *options, u string, srv *child, out io.Writer) int {
	// runCtx bounds the well-behaved caller and the samples; the hostile
	// clients stay until the end figures are taken.
	runCtx, cancel := context.WithTimeout(ctx, o.duration)
	defer cancel()
	hostileCtx, stopHostile := context.WithCancel(ctx)
	defer stopHostile()
	good := &goodCaller{outcomes: newCounter(), from: goodFrom(o.goodFrom, u), list: o.goodMethod == "tools/list"}
	flood := &listenFlood{statuses: newCounter(), rate: o.listenRate}
	slow := &slowClients{events: newCounter()}
	nr := &nonReaders{events: newCounter()}
	hold := newHolders()
	var holdFrom []net.IP
	if o.hold > 0 {
		var err error
		if holdFrom, err = holdSources(u, o.holdFrom, o.holdAddrs); err != nil {
			fmt.Fprintln(out, "hostile:", err)
			return 1
		}
	}
	samp := &sampler{}
	var wg sync.WaitGroup
	var floodEnd atomic.Int64 // when the listen attempts were all answered, since start
	var holdEnd atomic.Int64  // when the held connections were all opened, since start
	start := time.Now()
	var cpu0 cpuSnapshot
	var cpuFlood atomic.Pointer[cpuSnapshot] // taken when the listen attempts were all answered
	pid := os.Getpid()                       // the server's, when it is a child
	if srv != nil {
		pid = srv.cmd.Process.Pid
	}
	cpu0 = takeCPU(pid)
	drops0 := listenOverflows()
	goodDone := make(chan struct{})
	if o.goodApart {
		wait, err := startGoodChild(u, o, o.duration, start, good)
		if err != nil {
			fmt.Fprintln(out, "hostile: starting the well-behaved client:", err)
			return 1
		}
		wg.Go(func() {
			defer close(goodDone)
			wait()
		})
		if o.attackNice > 0 {
			if err := lowerPriority(o.attackNice); err != nil {
				fmt.Fprintln(out, "hostile: lowering the priority of the hostile clients:", err)
			}
		}
	} else {
		wg.Go(func() {
			defer close(goodDone)
			good.run(runCtx, u, o.goodEvery)
		})
	}
	wg.Go(func() {
		flood.run(hostileCtx, u, o.listens, o.listenConc, 0, 0, func() {
			if runCtx.Err() == nil {
				snap := takeCPU(pid)
				cpuFlood.Store(&snap)
				floodEnd.Store(int64(time.Since(start)))
			}
		})
	})
	wg.Go(func() { slow.run(hostileCtx, u, o.slow, o.slowLen, o.slowEvery, false) })
	wg.Go(func() { nr.run(hostileCtx, u, o.nonread, o.pipeline, o.big, 0) })
	if o.hold > 0 {
		wg.Go(func() {
			hold.run(hostileCtx, u, o.holdMethod, o.hold, o.holdConc, o.holdRate, holdFrom, 0, func() {
				if runCtx.Err() == nil {
					holdEnd.Store(int64(time.Since(start)))
				}
			})
		})
	}
	if srv != nil {
		wg.Go(func() { samp.run(runCtx, srv.cmd.Process.Pid, o.sample, nil) })
	}
	// A progress line every o.progress, with the CPU each party used
	// since the line before.
	wg.Go(func() {
		t := time.NewTicker(o.progress)
		defer t.Stop()
		last := cpu0
		for {
			select {
			case <-runCtx.Done():
				return
			case <-t.C:
			}
			n, p50, p99, mx := good.percentiles(0, time.Hour)
			line := fmt.Sprintf("  %5.1fs good=%d p50=%v p99=%v max=%v listens sent=%d held=%d slow open=%d nonread open=%d written=%d",
				time.Since(start).Seconds(), n, p50, p99, mx, flood.sent.Load(), flood.held.Load(), slow.open.Load(), nr.open.Load(), nr.written.Load())
			if o.hold > 0 {
				line += fmt.Sprintf(" hold opened=%d open=%d streams=%d closed-by-server=%d", hold.opened.Load(), hold.open.Load(), hold.streams.Load(), hold.closedBy.Load())
			}
			if srv != nil {
				rss, _ := procRSS(srv.cmd.Process.Pid)
				fds, _ := procFDs(srv.cmd.Process.Pid)
				line += fmt.Sprintf(" rss=%s fds=%d", mib(rss), fds)
				now := takeCPU(pid)
				line += "; " + cpuShare(last, now)
				last = now
			}
			fmt.Fprintln(out, line)
		}
	})
	<-runCtx.Done()
	// The well-behaved call in flight finishes before the server is
	// dumped.
	<-goodDone
	elapsed := time.Since(start)
	// Counts at the end of the load, before the hostile clients hang up.
	heldAtEnd := flood.held.Load()
	slowOpen, nrOpen := slow.open.Load(), nr.open.Load()
	floodSeen, slowSeen, nrSeen := flood.statuses.String(), slow.events.String(), nr.events.String()
	holdOpen, holdStreams, holdClosed, holdEnds := hold.open.Load(), hold.streams.Load(), hold.closedBy.Load(), hold.ends.String()
	connStats := ""
	if srv != nil {
		connStats = srv.connStats()
	}
	var dump goroutineDump
	var dumpErr error
	cpu1 := takeCPU(pid)
	drops1 := listenOverflows()
	if srv != nil {
		if rss, ok := procRSS(srv.cmd.Process.Pid); ok {
			samp.mu.Lock()
			samp.maxRSS = max(samp.maxRSS, rss)
			samp.mu.Unlock()
		}
		if fds, ok := procFDs(srv.cmd.Process.Pid); ok {
			samp.mu.Lock()
			samp.maxFDs = max(samp.maxFDs, fds)
			samp.mu.Unlock()
		}
		if !o.noDump {
			dump, dumpErr = srv.dumpGoroutines()
			if o.dumpFile != "" {
				if err := os.WriteFile(o.dumpFile, srv.errs.Bytes(), 0o644); err != nil {
					fmt.Fprintln(out, "writing the goroutine dump:", err)
				}
			}
		}
	}
	stopHostile()
	wg.Wait()

	fe := time.Duration(floodEnd.Load())
	if fe > 0 && flood.sent.Load() > 0 {
		for _, ph := range []struct {
			name     string
			from, to time.Duration
		}{{"while the listen attempts ran", 0, fe}, {"after them", fe, time.Hour}} {
			n, p50, p99, mx := good.percentiles(ph.from, ph.to)
			fmt.Fprintf(out, "\nwell-behaved tools/call %s: %d calls, p50 %v, p99 %v, max %v",
				ph.name, n, p50.Round(10*time.Microsecond), p99.Round(10*time.Microsecond), mx.Round(10*time.Microsecond))
		}
		fmt.Fprintln(out)
	}
	n, p50, p99, mx := good.percentiles(0, time.Hour)
	where := "in this process"
	if o.goodApart {
		where = "in a process of its own"
		if o.attackNice > 0 {
			where += fmt.Sprintf(", the hostile clients at nice %d", o.attackNice)
		}
	}
	fmt.Fprintf(out, "\nwell-behaved %s every %v from %s, %s: %d calls, p50 %v, p99 %v, max %v; outcomes: %s\n",
		o.goodMethod, o.goodEvery, addrName(good.from), where, n, p50.Round(10*time.Microsecond), p99.Round(10*time.Microsecond), mx.Round(10*time.Microsecond), good.outcomes)
	good.mu.Lock()
	fmt.Fprintf(out, "  slowest call %v; calls that opened a connection: %d\n", good.worst, good.dials)
	good.mu.Unlock()
	for _, e := range good.outcomes.examples() {
		fmt.Fprintln(out, "  first", e)
	}
	floodTime := "still running at the end"
	if fe > 0 {
		floodTime = "all answered in " + fe.Round(100*time.Millisecond).String()
	}
	pace := "unpaced"
	if o.listenRate > 0 {
		pace = fmt.Sprintf("paced at %.0f/s", o.listenRate)
	}
	fmt.Fprintf(out, "listen attempts: %d sent from %d workers, %s (%s); answers by status: %s; streams held open at the end %d (max %d)\n",
		flood.sent.Load(), o.listenConc, pace, floodTime, floodSeen, heldAtEnd, flood.maxHeld.Load())
	for _, e := range flood.statuses.examples() {
		fmt.Fprintln(out, "  first", e)
	}
	fmt.Fprintf(out, "slow-body clients: %d (Content-Length %d, a byte every %v); open at the end %d; events: %s\n",
		o.slow, o.slowLen, o.slowEvery, slowOpen, slowSeen)
	fmt.Fprintf(out, "non-reading clients: %d (%d pipelined calls, ~%d KiB answers each); open at the end %d; requests written in full %d; events: %s\n",
		o.nonread, o.pipeline, o.big>>10, nrOpen, nr.written.Load(), nrSeen)
	if o.hold > 0 {
		holdTime := "still opening at the end"
		if he := time.Duration(holdEnd.Load()); he > 0 {
			holdTime = "all opened and answered in " + he.Round(100*time.Millisecond).String()
		}
		fmt.Fprintf(out, "held connections: %d to open (one %s each, then held) from %d workers over %d source addresses, %s; opened %d (max open at once %d); answers: %s\n",
			o.hold, o.holdMethod, o.holdConc, len(holdFrom), holdTime, hold.opened.Load(), hold.maxOpen.Load(), hold.answers)
		fmt.Fprintf(out, "  at the end: still open %d (of them accepted streams %d); closed by the server %d; how they ended: %s\n",
			holdOpen, holdStreams, holdClosed, holdEnds)
		for _, e := range hold.answers.examples() {
			fmt.Fprintln(out, "  first", e)
		}
	}
	if connStats != "" {
		fmt.Fprintln(out, "server connection cap at the end:", connStats)
	}
	if srv != nil {
		fmt.Fprintf(out, "server RSS max %s over %d samples; open descriptors max %d\n", mib(samp.maxRSS), len(samp.rss), samp.maxFDs)
		fmt.Fprintf(out, "CPU over the %v run: server %v, this load generator %v, machine busy %v (of %d cores x %v)\n",
			elapsed.Round(100*time.Millisecond), (cpu1.server - cpu0.server).Round(10*time.Millisecond),
			(cpu1.self - cpu0.self).Round(10*time.Millisecond), (cpu1.busy - cpu0.busy).Round(10*time.Millisecond),
			runtime.NumCPU(), elapsed.Round(100*time.Millisecond))
		if cf := cpuFlood.Load(); cf != nil {
			fmt.Fprintf(out, "  while the listen attempts ran: %s; after them: %s\n", cpuShare(cpu0, *cf), cpuShare(*cf, cpu1))
		}
		switch {
		case o.noDump:
		case dumpErr != nil:
			fmt.Fprintln(out, "goroutines: unknown:", dumpErr)
		default:
			fmt.Fprintf(out, "server goroutines at the end: %d\n  by state:\n", dump.total)
			for _, l := range topN(dump.byState, 6) {
				fmt.Fprintln(out, "   ", l)
			}
			fmt.Fprintln(out, "  by creator:")
			for _, l := range topN(dump.byCreator, 8) {
				fmt.Fprintln(out, "   ", l)
			}
		}
	} else {
		fmt.Fprintln(out, "server RSS and goroutines: unknown (-url target)")
	}
	if drops0 >= 0 && drops1 >= 0 {
		fmt.Fprintf(out, "connections dropped by full listen queues on this machine during the run (ListenDrops): %d\n", drops1-drops0)
	}
	verdict := "met"
	if p99 > 100*time.Millisecond || (srv != nil && samp.maxRSS > 300<<20) || good.outcomes.get("ok") != n {
		verdict = "MISSED"
	}
	fmt.Fprintf(out, "target ("+o.goodMethod+" p99 within 100ms, no failed call, RSS under 300 MiB): %s\n", verdict)
	return 0
}

// goodFrom resolves the -good-from flag for the target u: nil for the
// system's choice.
func goodFrom(flagValue, u string) net.Addr {
	switch flagValue {
	case "", "any":
		return nil
	case "auto":
		pu, err := url.Parse(u)
		if err != nil || pu.Hostname() != "127.0.0.1" {
			return nil
		}
		flagValue = "127.0.0.2"
	}
	ip := net.ParseIP(flagValue)
	if ip == nil {
		return nil
	}
	return &net.TCPAddr{IP: ip}
}

// addrName names a client's local address for the report.
func addrName(a net.Addr) string {
	if a == nil {
		return "the system's address"
	}
	return a.(*net.TCPAddr).IP.String()
}
