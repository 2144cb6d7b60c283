//go:build unix

package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"
)

// This file runs the well-behaved client in a process of its own (the
// default; -good-apart=false keeps it in this one). The hostile clients
// then share a Go runtime with nothing they are measured by, and this
// process can lower its own scheduling priority (-attack-nice) without
// lowering the measuring client's or the server's: on a machine where the
// load generator runs beside the server, that stands in for an attacker
// whose CPU is its own.

// goodChildFlag selects the child mode: only the well-behaved client,
// reporting each call on stdout as a line (see runGoodChild).
const goodChildFlag = "good-child"

// runGoodChild runs the well-behaved client against u until d passes,
// writing each call to out as
//
//	call <at ns> <total ns> <dialed 0|1> <connect ns> <wait ns> <outcome> <why, quoted>
func runGoodChild(o *options, out io.Writer) int {
	var mu sync.Mutex
	w := bufio.NewWriter(out)
	g := &goodCaller{outcomes: newCounter(), from: goodFrom(o.goodFrom, o.url), list: o.goodMethod == "tools/list"}
	g.each = func(at time.Duration, tr callTrace, outcome, why string) {
		dialed := 0
		if tr.dialed {
			dialed = 1
		}
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(w, "call %d %d %d %d %d %s %s\n", at, tr.total, dialed, tr.connect, tr.wait, outcome, strconv.Quote(why))
		_ = w.Flush()
	}
	if o.goodNice != 0 {
		if err := setPriority("self", o.goodNice); err != nil {
			fmt.Fprintln(os.Stderr, "hostile: setting the well-behaved client's priority:", err)
			return 1
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), o.duration)
	defer cancel()
	g.run(ctx, o.url, o.goodEvery)
	return 0
}

// startGoodChild starts this program in the child mode against u and
// feeds the calls it reports to g, their times counted from base. The
// returned function waits for the child to end (it ends by itself after
// d).
func startGoodChild(u string, o *options, d time.Duration, base time.Time, g *goodCaller) (func(), error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(self, "-"+goodChildFlag, "-url", u, "-duration", d.String(),
		"-good-every", o.goodEvery.String(), "-good-from", o.goodFrom, "-good-method", o.goodMethod,
		"-good-nice", strconv.Itoa(o.goodNice))
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	offset := time.Since(base)
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			parseGoodLine(sc.Text(), offset, g)
		}
	}()
	return func() {
		<-done
		_ = cmd.Wait()
	}, nil
}

// parseGoodLine records one line of runGoodChild's output in g, its time
// moved by offset.
func parseGoodLine(line string, offset time.Duration, g *goodCaller) {
	f := strings.SplitN(line, " ", 8)
	if len(f) != 8 || f[0] != "call" {
		return
	}
	var n [5]int64
	for i := range n {
		v, err := strconv.ParseInt(f[i+1], 10, 64)
		if err != nil {
			return
		}
		n[i] = v
	}
	why, err := strconv.Unquote(f[7])
	if err != nil {
		why = f[7]
	}
	g.record(offset+time.Duration(n[0]), callTrace{total: time.Duration(n[1]), dialed: n[2] == 1, connect: time.Duration(n[3]), wait: time.Duration(n[4])}, f[6], why)
}
