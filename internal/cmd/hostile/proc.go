//go:build unix

package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// raiseFileLimit raises the soft RLIMIT_NOFILE of this process to its hard
// limit (children inherit it) and returns the limit now in force.
func raiseFileLimit() uint64 {
	var rl syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl) != nil {
		return 0
	}
	if rl.Cur < rl.Max {
		rl.Cur = rl.Max
		_ = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &rl)
		_ = syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl)
	}
	return rl.Cur
}

// procRSS returns the resident set size of process pid in bytes, from
// VmRSS in /proc/<pid>/status.
func procRSS(pid int) (int64, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, false
	}
	for line := range bytes.SplitSeq(b, []byte("\n")) {
		if rest, ok := bytes.CutPrefix(line, []byte("VmRSS:")); ok {
			f := bytes.Fields(rest)
			if len(f) < 1 {
				return 0, false
			}
			kb, err := strconv.ParseInt(string(f[0]), 10, 64)
			return kb << 10, err == nil
		}
	}
	return 0, false
}

// procFDs returns how many file descriptors process pid has open.
func procFDs(pid int) (int, bool) {
	ents, err := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/fd")
	if err != nil {
		return 0, false
	}
	return len(ents), true
}

// child is the fixture server running as a child process.
type child struct {
	cmd   *exec.Cmd
	url   string
	errs  *tailBuffer
	done  chan struct{}
	debug string // the URL of its goroutine count, when it serves one
	// debugConns is the URL of its connection cap's counts, when it
	// serves them.
	debugConns string
}

// connStats returns the counts of the child's connection cap as it
// reports them (one line), or "" when it serves none.
func (c *child) connStats() string {
	if c.debugConns == "" {
		return ""
	}
	hc := http.Client{Timeout: 2 * time.Second}
	resp, err := hc.Get(c.debugConns)
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1024))
	if err != nil || resp.StatusCode != http.StatusOK {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// goroutines returns the child's goroutine count, or -1 when it serves
// none or did not answer.
func (c *child) goroutines() int {
	if c.debug == "" {
		return -1
	}
	hc := http.Client{Timeout: 2 * time.Second}
	resp, err := hc.Get(c.debug)
	if err != nil {
		return -1
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 64))
	if err != nil {
		return -1
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return -1
	}
	return n
}

// tailBuffer keeps the last max bytes written to it, for a child's stderr.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if over := len(t.b) - t.max; over > 0 {
		t.b = append(t.b[:0], t.b[over:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) Bytes() []byte {
	t.mu.Lock()
	defer t.mu.Unlock()
	return bytes.Clone(t.b)
}

// buildServer builds the fixture server (package pkg, relative to the
// working directory) into dir and returns the binary's path.
func buildServer(ctx context.Context, pkg, dir string) (string, error) {
	bin := filepath.Join(dir, "fixture-server")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, pkg)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("go build %s: %w", pkg, err)
	}
	return bin, nil
}

// freeAddr returns a 127.0.0.1 address with a port that was free a moment
// ago.
func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// startChild starts bin with -addr and waits until it accepts
// connections. Its stderr is kept (the tail) for the goroutine dump.
func startChild(bin string, extra []string) (*child, error) {
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	args := append([]string{"-addr", addr}, extra...)
	cmd := exec.Command(bin, args...)
	errs := &tailBuffer{max: 64 << 20}
	cmd.Stderr = errs
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	c := &child{cmd: cmd, url: "http://" + addr + "/mcp", errs: errs, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(c.done) }()
	for range 100 {
		conn, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			conn.Close()
			return c, nil
		}
		select {
		case <-c.done:
			return nil, fmt.Errorf("fixture server exited at start: %s", errs.Bytes())
		case <-time.After(100 * time.Millisecond):
		}
	}
	c.stop()
	return nil, errors.New("fixture server did not listen within 10s")
}

// stop ends the child with SIGTERM, then SIGKILL after 5 s.
func (c *child) stop() {
	_ = c.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-c.done:
	case <-time.After(5 * time.Second):
		_ = c.cmd.Process.Kill()
		<-c.done
	}
}

// goroutineDump is what a SIGQUIT stack dump says about goroutines.
type goroutineDump struct {
	total int
	// byCreator counts goroutines by the function that created them
	// ("created by" line), or by their top frame for those without one.
	byCreator map[string]int
	// byState counts goroutines by their wait state ("IO wait", "select").
	byState map[string]int
}

var goroutineHeader = regexp.MustCompile(`^goroutine \d+ (?:gp=\S+ m=\S+ (?:mp=\S+ )?)?\[([^\],]+)`)

// dumpGoroutines sends the child SIGQUIT, waits for it to exit and
// parses the stack dump the Go runtime writes to stderr. The child is gone
// afterwards.
func (c *child) dumpGoroutines() (goroutineDump, error) {
	d := goroutineDump{byCreator: map[string]int{}, byState: map[string]int{}}
	_ = c.cmd.Process.Signal(syscall.SIGQUIT)
	select {
	case <-c.done:
	case <-time.After(20 * time.Second):
		_ = c.cmd.Process.Kill()
		<-c.done
		return d, errors.New("the fixture server did not exit on SIGQUIT")
	}
	sc := bufio.NewScanner(bytes.NewReader(c.errs.Bytes()))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	in, top := false, ""
	finish := func() {
		if in {
			d.byCreator[top]++
		}
	}
	for sc.Scan() {
		line := sc.Text()
		if m := goroutineHeader.FindStringSubmatch(line); m != nil {
			finish()
			in, top = true, ""
			d.total++
			d.byState[strings.TrimSpace(m[1])]++
			continue
		}
		if !in {
			continue
		}
		if rest, ok := strings.CutPrefix(line, "created by "); ok {
			if i := strings.Index(rest, " in goroutine"); i >= 0 {
				rest = rest[:i]
			}
			top = "created by " + rest
			continue
		}
		if top == "" && line != "" && !strings.HasPrefix(line, "\t") {
			if i := strings.LastIndex(line, "("); i > 0 {
				line = line[:i]
			}
			top = "running " + line
		}
	}
	finish()
	if d.total == 0 {
		return d, errors.New("no goroutine dump in the fixture server's stderr")
	}
	return d, nil
}

// topN returns the n largest entries of m, formatted "count name".
func topN(m map[string]int, n int) []string {
	type kv struct {
		k string
		v int
	}
	var all []kv
	for k, v := range m {
		all = append(all, kv{k, v})
	}
	sort.Slice(all, func(i, j int) bool { return all[i].v > all[j].v || all[i].v == all[j].v && all[i].k < all[j].k })
	var out []string
	for i := 0; i < len(all) && i < n; i++ {
		out = append(out, fmt.Sprintf("%6d  %s", all[i].v, all[i].k))
	}
	return out
}

// mib formats a byte count in MiB.
func mib(b int64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }

// cpuSnapshot is the CPU time used so far by the server, by this process
// and by the whole machine (busy: all but idle and I/O wait, every core
// counted), when it was taken.
type cpuSnapshot struct {
	server, self, busy time.Duration
	at                 time.Time
}

func takeCPU(pid int) cpuSnapshot {
	return cpuSnapshot{server: procCPU(strconv.Itoa(pid)), self: procCPU("self"), busy: machineBusy(), at: time.Now()}
}

// cpuShare says how busy the cores were between two snapshots, as
// percentages of one core: the server, this load generator, and everything
// else on the machine (other processes, and kernel work not charged to a
// process, such as loopback packets handled in softirq context).
func cpuShare(a, b cpuSnapshot) string {
	wall := b.at.Sub(a.at)
	if wall <= 0 {
		return "cpu unknown"
	}
	pct := func(d time.Duration) float64 { return 100 * float64(d) / float64(wall) }
	srv, gen := b.server-a.server, b.self-a.self
	other := b.busy - a.busy - srv - gen
	if a.busy == 0 || b.busy == 0 {
		return fmt.Sprintf("cpu server %.0f%% generator %.0f%%", pct(srv), pct(gen))
	}
	return fmt.Sprintf("cpu server %.0f%% generator %.0f%% other %.0f%% (of %d00%%)", pct(srv), pct(gen), pct(max(other, 0)), runtime.NumCPU())
}

// machineBusy returns the CPU time all cores have spent busy since boot,
// from the first line of /proc/stat, or 0 when unknown.
func machineBusy() time.Duration {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0
	}
	line, _, _ := bytes.Cut(b, []byte("\n"))
	f := bytes.Fields(line)
	if len(f) < 5 || string(f[0]) != "cpu" {
		return 0
	}
	var busy int64
	for i, v := range f[1:] {
		n, err := strconv.ParseInt(string(v), 10, 64)
		if err != nil {
			return 0
		}
		// Fields 4 and 5 are idle and iowait; guest time (9 and 10) is
		// counted in user time already.
		if i == 3 || i == 4 || i >= 8 {
			continue
		}
		busy += n
	}
	return time.Duration(busy) * 10 * time.Millisecond
}

// listenOverflows returns the machine's count of connections dropped
// because a listen queue was full (ListenDrops in /proc/net/netstat,
// which includes ListenOverflows), or -1 when unknown.
func listenOverflows() int64 {
	b, err := os.ReadFile("/proc/net/netstat")
	if err != nil {
		return -1
	}
	lines := bytes.Split(b, []byte("\n"))
	for i := 0; i+1 < len(lines); i++ {
		names, values := bytes.Fields(lines[i]), bytes.Fields(lines[i+1])
		if len(names) == 0 || string(names[0]) != "TcpExt:" || len(values) != len(names) {
			continue
		}
		for j, n := range names {
			if string(n) == "ListenDrops" {
				v, err := strconv.ParseInt(string(values[j]), 10, 64)
				if err != nil {
					return -1
				}
				return v
			}
		}
	}
	return -1
}

// procCPU returns the user plus system CPU time of a process, from
// /proc/<pid>/stat (in clock ticks of 1/100 s), or 0 when unknown.
func procCPU(pid string) time.Duration {
	b, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return 0
	}
	// The command name may hold spaces; the fields after it are fixed.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0
	}
	f := bytes.Fields(b[i+1:])
	// f[0] is the state (field 3); utime and stime are fields 14 and 15.
	if len(f) < 13 {
		return 0
	}
	u, err1 := strconv.ParseInt(string(f[11]), 10, 64)
	s, err2 := strconv.ParseInt(string(f[12]), 10, 64)
	if err1 != nil || err2 != nil {
		return 0
	}
	return time.Duration(u+s) * 10 * time.Millisecond
}
