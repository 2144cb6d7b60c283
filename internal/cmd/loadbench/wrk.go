package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// wrkResult is what wrk reported of one phase.
type wrkResult struct {
	requests int
	failures int // connect, read, write and timeout errors and non-2xx answers
	elapsed  time.Duration
	p50, p99 time.Duration
	// client is the CPU time wrk spent.
	client time.Duration
}

// wrkScript returns a wrk Lua script that POSTs t and prints one
// "LOADBENCH key=value ..." line when done.
func wrkScript(t target) string {
	var b strings.Builder
	b.WriteString("wrk.method = \"POST\"\n")
	b.WriteString("wrk.body = " + luaString(string(t.body)) + "\n")
	keys := make([]string, 0, len(t.header))
	for k := range t.header {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		b.WriteString("wrk.headers[" + luaString(k) + "] = " + luaString(t.header.Get(k)) + "\n")
	}
	b.WriteString(`function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format("LOADBENCH requests=%d duration_us=%d failures=%d p50_us=%d p99_us=%d\n",
    summary.requests, summary.duration, e.connect + e.read + e.write + e.status + e.timeout,
    latency:percentile(50), latency:percentile(99)))
end
`)
	return b.String()
}

// luaString quotes s as a Lua string literal: quotes and backslashes are
// escaped, and every byte outside printable ASCII is written as \ddd.
func luaString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c < 0x20 || c >= 0x7f:
			fmt.Fprintf(&b, "\\%03d", c)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// runWrk drives t with wrk for d, with c connections on threads threads.
func runWrk(ctx context.Context, bin string, t target, c, threads int, d time.Duration, dir string) (wrkResult, error) {
	script := filepath.Join(dir, "loadbench.lua")
	if err := os.WriteFile(script, []byte(wrkScript(t)), 0o600); err != nil {
		return wrkResult{}, err
	}
	secs := max(1, int(d.Round(time.Second)/time.Second))
	ctx, cancel := context.WithTimeout(ctx, time.Duration(secs)*time.Second+30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin,
		"-t", strconv.Itoa(max(1, min(threads, c))), "-c", strconv.Itoa(c),
		"-d", strconv.Itoa(secs)+"s", "--timeout", "10s", "-s", script, t.url)
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		return wrkResult{}, fmt.Errorf("wrk: %v: %s", err, bytes.TrimSpace(stderr.Bytes()))
	}
	// wrk reports a broken script on stderr and still exits 0.
	sc := bufio.NewScanner(bytes.NewReader(out.Bytes()))
	for sc.Scan() {
		line, ok := strings.CutPrefix(sc.Text(), "LOADBENCH ")
		if !ok {
			continue
		}
		kv := map[string]int64{}
		for f := range strings.FieldsSeq(line) {
			k, v, _ := strings.Cut(f, "=")
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return wrkResult{}, fmt.Errorf("wrk: cannot read %q", f)
			}
			kv[k] = n
		}
		return wrkResult{
			client:   cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime(),
			requests: int(kv["requests"]),
			failures: int(kv["failures"]),
			elapsed:  time.Duration(kv["duration_us"]) * time.Microsecond,
			p50:      time.Duration(kv["p50_us"]) * time.Microsecond,
			p99:      time.Duration(kv["p99_us"]) * time.Microsecond,
		}, nil
	}
	return wrkResult{}, fmt.Errorf("wrk printed no summary: %s %s", bytes.TrimSpace(out.Bytes()), bytes.TrimSpace(stderr.Bytes()))
}
