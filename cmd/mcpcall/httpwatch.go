package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// watchTransport is the http.RoundTripper under mcpcall's client: it
// bounds the server's silence (-timeout: each byte of a response, such
// as a stream's next event or keep-alive, starts the wait again, so a
// long call that reports progress is not cut off) and, with -v, prints
// every exchange on stderr, the token redacted. It reads no JSON-RPC:
// the client does.
type watchTransport struct {
	next    http.RoundTripper
	timeout time.Duration
	verbose bool
	stderr  io.Writer

	timedOut atomic.Bool // the last exchange ended for -timeout
}

func (t *watchTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if t.verbose {
		t.dumpRequest(req)
	}
	ctx, cancel := context.WithCancel(req.Context())
	var timer *time.Timer
	if t.timeout > 0 {
		timer = time.AfterFunc(t.timeout, func() { t.timedOut.Store(true); cancel() })
	}
	stop := func() {
		if timer != nil {
			timer.Stop()
		}
		cancel()
	}
	resp, err := t.next.RoundTrip(req.WithContext(ctx))
	if err != nil {
		stop()
		return nil, err
	}
	if t.verbose {
		t.dumpResponse(resp)
	}
	resp.Body = &watchedBody{rc: resp.Body, timer: timer, timeout: t.timeout, stop: stop, dump: t.verbose, w: t.stderr}
	return resp, nil
}

// expired reports, once, that an exchange ended because the server was
// silent for longer than -timeout.
func (t *watchTransport) expired() bool { return t.timedOut.Swap(false) }

// watchedBody restarts the silence timer on every read and dumps what it
// reads, line by line, with -v.
type watchedBody struct {
	rc      io.ReadCloser
	timer   *time.Timer
	timeout time.Duration
	stop    func()
	dump    bool
	w       io.Writer

	mu   sync.Mutex
	line bytes.Buffer
}

func (b *watchedBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	if n > 0 && b.timer != nil {
		b.timer.Reset(b.timeout)
	}
	if b.dump && n > 0 {
		b.mu.Lock()
		b.line.Write(p[:n])
		for {
			i := bytes.IndexByte(b.line.Bytes(), '\n')
			if i < 0 {
				break
			}
			if l := strings.TrimRight(string(b.line.Next(i+1)), "\r\n"); l != "" {
				fmt.Fprintf(b.w, "< %s\n", l)
			}
		}
		b.mu.Unlock()
	}
	return n, err
}

func (b *watchedBody) Close() error {
	if b.dump {
		b.mu.Lock()
		if l := strings.TrimSpace(b.line.String()); l != "" {
			fmt.Fprintf(b.w, "< %s\n", l)
		}
		b.line.Reset()
		b.mu.Unlock()
	}
	b.stop()
	return b.rc.Close()
}

func (t *watchTransport) dumpRequest(req *http.Request) {
	fmt.Fprintf(t.stderr, "> %s %s\n", req.Method, req.URL)
	dumpHeader(t.stderr, ">", req.Header)
	if req.GetBody != nil {
		if rc, err := req.GetBody(); err == nil {
			body, _ := io.ReadAll(rc)
			rc.Close()
			if len(body) > 0 {
				fmt.Fprintf(t.stderr, "> %s\n", body)
			}
		}
	}
	fmt.Fprintln(t.stderr)
}

func (t *watchTransport) dumpResponse(resp *http.Response) {
	fmt.Fprintf(t.stderr, "< HTTP %s\n", resp.Status)
	dumpHeader(t.stderr, "<", resp.Header)
}

// dumpHeader prints a header sorted by name, Authorization redacted.
// What it writes goes through the run's escaping writer (env.safe).
func dumpHeader(w io.Writer, dir string, h http.Header) {
	names := make([]string, 0, len(h))
	for k := range h {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		for _, v := range h[k] {
			if strings.EqualFold(k, "Authorization") {
				v = "[redacted]"
			}
			fmt.Fprintf(w, "%s %s: %s\n", dir, termLine(k), termLine(v))
		}
	}
}
