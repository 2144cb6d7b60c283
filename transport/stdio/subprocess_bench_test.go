//go:build linux

package stdio_test

// Each benchmark checks its calls' answers in the driver, which returns the
// first error, and the benchmark checks that error with testify once the
// timer is stopped. The drivers' goroutines send their errors back rather
// than call testify, which must run on the benchmark's goroutine.

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
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// BenchmarkSubprocessToolsCall measures tools/call of the conformance
// fixture (conformance/server, its test_simple_text tool) run as a separate
// process, as a client runs it: over its stdin and stdout with -stdio, and
// over loopback HTTP (Streamable HTTP, keep-alive connections) for
// comparison. The server is the same binary, with the same mrtr.Server and
// tool, in both; only the transport differs.
//
//	go test -run '^$' -bench SubprocessToolsCall -benchtime 20000x ./transport/stdio/
//
// inflight=1 sends each request after the previous answer is read; inflight=8
// keeps 8 in flight (on one pipe, or on 8 keep-alive connections). calls/s is
// the round-trip rate seen by the client, which runs on the same machine and
// competes for its CPUs; server-cpu-us/call is the fixture process's user and
// system CPU time over the measured calls (from /proc/PID/stat, in ticks of
// 10 ms: give it enough calls) divided by their number. other-cores is how
// many CPUs other processes of the machine kept busy meanwhile, on average
// (from /proc/stat): a figure measured while it is well above 0 is
// disturbed. Each run starts a
// fresh process and warms it up with 2000 calls first. The fixture runs with
// GOMAXPROCS=$MRTRKIT_BENCH_SERVER_PROCS when that is set (Go's default
// otherwise), like loadbench's -server-procs.
func BenchmarkSubprocessToolsCall(b *testing.B) {
	bin := fixtureBinary(b)
	for _, tr := range []string{"stdio", "http"} {
		for _, inflight := range []int{1, 8} {
			b.Run(tr+"/inflight="+strconv.Itoa(inflight), func(b *testing.B) {
				var d driver
				if tr == "stdio" {
					d = startStdioFixture(b, bin)
				} else {
					d = startHTTPFixture(b, bin, inflight)
				}
				require.NoError(b, d.calls(2000, inflight), "warm-up")
				cpu0, self0, busy0 := procCPU(b, d.pid()), cpuTime(), machineBusy(b)
				b.ResetTimer()
				start := time.Now()
				err := d.calls(b.N, inflight)
				elapsed := time.Since(start)
				b.StopTimer()
				require.NoError(b, err)
				cpu := procCPU(b, d.pid()) - cpu0
				other := machineBusy(b) - busy0 - cpu - (cpuTime() - self0)
				b.ReportMetric(float64(b.N)/elapsed.Seconds(), "calls/s")
				b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "server-cpu-us/call")
				b.ReportMetric(max(other.Seconds(), 0)/elapsed.Seconds(), "other-cores")
				b.ReportMetric(0, "ns/op") // the rate says it better
			})
		}
	}
}

// driver makes tools/call requests to a fixture process.
type driver interface {
	// calls makes n calls of test_simple_text, inflight at a time, and
	// checks every answer.
	calls(n, inflight int) error
	pid() int
}

var (
	fixtureOnce sync.Once
	fixturePath string
	fixtureErr  error
)

// fixtureBinary builds conformance/server once per test binary, into a
// directory removed by TestMain.
func fixtureBinary(b *testing.B) string {
	b.Helper()
	fixtureOnce.Do(func() {
		root, err := filepath.Abs(filepath.Join("..", ".."))
		if err != nil {
			fixtureErr = err
			return
		}
		dir, err := os.MkdirTemp("", "mrtrkit-stdio-bench-")
		if err != nil {
			fixtureErr = err
			return
		}
		cleanups = append(cleanups, func() { os.RemoveAll(dir) })
		fixturePath = filepath.Join(dir, "fixture")
		out, err := exec.Command("go", "build", "-C", root, "-o", fixturePath, "./conformance/server").CombinedOutput()
		if err != nil {
			fixtureErr = fmt.Errorf("go build ./conformance/server: %v\n%s", err, out)
		}
	})
	require.NoError(b, fixtureErr)
	return fixturePath
}

// procCPU returns the user and system CPU time of process pid, all its
// threads, from /proc/PID/stat (fields 14 and 15, in clock ticks of 1/100 s).
func procCPU(b *testing.B, pid int) time.Duration {
	b.Helper()
	raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	require.NoError(b, err)
	// The command name (field 2) is in parentheses and may hold spaces.
	i := bytes.LastIndexByte(raw, ')')
	f := bytes.Fields(raw[i+1:])
	// f[0] is field 3 (state); utime and stime are fields 14 and 15.
	utime, err1 := strconv.ParseInt(string(f[11]), 10, 64)
	stime, err2 := strconv.ParseInt(string(f[12]), 10, 64)
	require.NoError(b, err1, "/proc/%d/stat: %q", pid, raw)
	require.NoError(b, err2, "/proc/%d/stat: %q", pid, raw)
	return time.Duration(utime+stime) * 10 * time.Millisecond
}

// serverEnv is the fixture's environment: this process's, with GOMAXPROCS
// from MRTRKIT_BENCH_SERVER_PROCS when that is set.
func serverEnv() []string {
	env := os.Environ()
	if p := os.Getenv("MRTRKIT_BENCH_SERVER_PROCS"); p != "" {
		env = append(env, "GOMAXPROCS="+p)
	}
	return env
}

// machineBusy returns the CPU time all processes of the machine have spent
// running, from the "cpu" line of /proc/stat (user, nice, system, irq and
// softirq), as internal/cmd/loadbench reads it.
func machineBusy(b *testing.B) time.Duration {
	b.Helper()
	raw, err := os.ReadFile("/proc/stat")
	require.NoError(b, err)
	line, _, _ := bytes.Cut(raw, []byte("\n"))
	f := bytes.Fields(line)
	var ticks int64
	for _, i := range []int{1, 2, 3, 6, 7} {
		n, err := strconv.ParseInt(string(f[i]), 10, 64)
		require.NoError(b, err, "/proc/stat: %q", line)
		ticks += n
	}
	return time.Duration(ticks) * 10 * time.Millisecond
}

const benchMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`

func benchRequest(buf []byte, id int) []byte {
	buf = append(buf[:0], `{"jsonrpc":"2.0","id":`...)
	buf = strconv.AppendInt(buf, int64(id), 10)
	return append(buf, `,"method":"tools/call","params":{"name":"test_simple_text","arguments":{},`+benchMeta+`}}`...)
}

var benchAnswer = []byte("This is a simple text response for testing.")

// stdioFixture is the fixture with -stdio.
type stdioFixture struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Reader
	ids int
}

func startStdioFixture(b *testing.B, bin string) *stdioFixture {
	b.Helper()
	cmd := exec.Command(bin, "-stdio")
	cmd.Env = serverEnv()
	in, err := cmd.StdinPipe()
	require.NoError(b, err)
	out, err := cmd.StdoutPipe()
	require.NoError(b, err)
	require.NoError(b, cmd.Start())
	b.Cleanup(func() {
		_ = in.Close()
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			assert.NoError(b, err, "the fixture's exit")
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			assert.Fail(b, "the fixture did not exit when its stdin closed")
		}
	})
	return &stdioFixture{cmd: cmd, in: in, out: bufio.NewReaderSize(out, 64<<10)}
}

func (f *stdioFixture) pid() int { return f.cmd.Process.Pid }

func (f *stdioFixture) calls(n, inflight int) error {
	sem := make(chan struct{}, inflight)
	werr := make(chan error, 1)
	first := f.ids
	f.ids += n
	go func() {
		w := bufio.NewWriterSize(f.in, 64<<10)
		line := make([]byte, 0, 512)
		for i := range n {
			sem <- struct{}{}
			line = append(benchRequest(line, first+i), '\n')
			if _, err := w.Write(line); err != nil {
				werr <- err
				return
			}
			// Flush when nothing more can be sent before an answer comes.
			if len(sem) == cap(sem) || i == n-1 {
				if err := w.Flush(); err != nil {
					werr <- err
					return
				}
			}
		}
		werr <- nil
	}()
	for range n {
		line, err := f.out.ReadSlice('\n')
		if err != nil {
			return err
		}
		if !bytes.Contains(line, benchAnswer) {
			return fmt.Errorf("unexpected answer %s", line)
		}
		<-sem
	}
	return <-werr
}

// httpFixture is the fixture listening on loopback.
type httpFixture struct {
	cmd    *exec.Cmd
	url    string
	client *http.Client
	ids    int
}

func startHTTPFixture(b *testing.B, bin string, conns int) *httpFixture {
	b.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(b, err)
	addr := l.Addr().String()
	l.Close()
	cmd := exec.Command(bin, "-addr", addr, "-path", "/mcp")
	cmd.Env = serverEnv()
	require.NoError(b, cmd.Start())
	b.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, 100*time.Millisecond)
		if err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			require.FailNowf(b, "the fixture did not listen", "on %s within 10s", addr)
		}
		time.Sleep(20 * time.Millisecond)
	}
	tr := &http.Transport{MaxIdleConnsPerHost: conns, MaxConnsPerHost: conns, DisableCompression: true}
	b.Cleanup(tr.CloseIdleConnections)
	return &httpFixture{cmd: cmd, url: "http://" + addr + "/mcp", client: &http.Client{Transport: tr, Timeout: 30 * time.Second}}
}

func (f *httpFixture) pid() int { return f.cmd.Process.Pid }

func (f *httpFixture) calls(n, inflight int) error {
	first := f.ids
	f.ids += n
	next := make(chan int, n)
	for i := range n {
		next <- first + i
	}
	close(next)
	errs := make(chan error, inflight)
	for range inflight {
		go func() {
			var body []byte
			for id := range next {
				body = benchRequest(body, id)
				if err := f.call(body); err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	var firstErr error
	for range inflight {
		if err := <-errs; err != nil && firstErr == nil {
			firstErr = err
		}
	}
	return firstErr
}

func (f *httpFixture) call(body []byte) error {
	req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, f.url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "tools/call")
	req.Header.Set("Mcp-Name", "test_simple_text")
	resp, err := f.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	got, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK || !bytes.Contains(got, benchAnswer) {
		return errors.New("unexpected answer: HTTP " + resp.Status + " " + string(got))
	}
	return nil
}
