//go:build unix

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mrtrkit/mrtrkit/client"
)

// counter counts occurrences by label, safely from many goroutines, and
// keeps the first example error of each label.
type counter struct {
	mu    sync.Mutex
	n     map[string]int
	first map[string]string
}

func newCounter() *counter { return &counter{n: map[string]int{}, first: map[string]string{}} }

func (c *counter) add(label, example string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n[label]++
	if _, ok := c.first[label]; !ok && example != "" {
		c.first[label] = example
	}
}

func (c *counter) get(label string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[label]
}

func (c *counter) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	keys := make([]string, 0, len(c.n))
	for k := range c.n {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s=%d", k, c.n[k]))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, " ")
}

func (c *counter) examples() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for k, v := range c.first {
		out = append(out, fmt.Sprintf("%s: %.300s", k, v))
	}
	slices.Sort(out)
	return out
}

// newHTTPClient returns a keep-alive client for conns connections to one
// host, with a bound on the wait for response headers.
func newHTTPClient(conns int, header time.Duration) *http.Client {
	return newHTTPClientFrom(conns, header, nil)
}

// newHTTPClientFrom is newHTTPClient with connections made from the local
// address from (nil: any).
func newHTTPClientFrom(conns int, header time.Duration, from net.Addr) *http.Client {
	return &http.Client{Transport: &http.Transport{
		DialContext:           (&net.Dialer{Timeout: 5 * time.Second, LocalAddr: from}).DialContext,
		MaxIdleConns:          conns,
		MaxIdleConnsPerHost:   conns,
		IdleConnTimeout:       time.Minute,
		ResponseHeaderTimeout: header,
		DisableCompression:    true,
	}}
}

// result of one well-behaved request.
type outcome int

const (
	ok        outcome = iota
	status5xx         // the server answered 5xx
	lost              // no JSON-RPC answer: transport error, timeout, undecodable body
	wrong             // an answer, but not the expected one (4xx, JSON-RPC error, unexpected content)
)

// dialGood connects a well-behaved client (package client) to u through
// hc, speaking 2026-07-28.
func dialGood(ctx context.Context, hc *http.Client, u string, opts ...client.Option) (*client.Client, error) {
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	opts = append([]client.Option{client.WithProtocolVersion(client.LatestVersion), client.WithClientInfo(clientInfo.Name, clientInfo.Version)}, opts...)
	return client.Connect(cctx, client.HTTP(u, client.WithHTTPClient(hc)), opts...)
}

// classify turns a well-behaved request's result into an outcome: a 5xx,
// a JSON-RPC error (wrong), no JSON-RPC answer at all (lost: transport
// error, timeout, undecodable body, an error status without a JSON-RPC
// error), or a result, which is wrong unless it holds want.
func classify(raw json.RawMessage, err error, want string) (outcome, string) {
	var ce *client.Error
	switch {
	case errors.As(err, &ce) && ce.HTTPStatus >= 500:
		return status5xx, err.Error()
	case client.CodeOf(err) != 0:
		return wrong, err.Error()
	case err != nil:
		return lost, err.Error()
	case !bytes.Contains(raw, []byte(want)):
		return wrong, string(raw)
	}
	return ok, ""
}

// callSimple calls test_simple_text, whose result holds a text block.
func callSimple(ctx context.Context, c *client.Client, limit time.Duration) (outcome, string) {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	res, err := c.CallTool(ctx, "test_simple_text", json.RawMessage(`{}`))
	var raw json.RawMessage
	if res != nil {
		raw = res.Raw
	}
	return classify(raw, err, `"text"`)
}

// goodCaller calls tools/call test_simple_text (or, with list set,
// tools/list) every interval until ctx ends, and records each call's latency and outcome, and for the slowest
// call where its time went.
type goodCaller struct {
	mu       sync.Mutex
	start    time.Time
	at       []time.Duration // when each call was sent, since start
	latency  []time.Duration
	outcomes *counter
	from     net.Addr // the client's local address; nil: any
	list     bool     // call tools/list instead of tools/call
	worst    callTrace
	dials    int // calls that had to open a connection
	// each, when set, is told of every call too (the -good-child mode).
	each func(at time.Duration, tr callTrace, outcome, why string)
}

// callTrace is where one call's time went: opening a connection (zero
// when one was reused), and from the request written to the first byte
// of the answer.
type callTrace struct {
	total, connect, wait time.Duration
	dialed               bool
}

func (t callTrace) String() string {
	if t.total == 0 {
		return "none"
	}
	s := fmt.Sprintf("%v: ", t.total.Round(10*time.Microsecond))
	if t.dialed {
		s += fmt.Sprintf("connect %v, ", t.connect.Round(10*time.Microsecond))
	} else {
		s += "connection reused, "
	}
	return s + fmt.Sprintf("request written to first answer byte %v", t.wait.Round(10*time.Microsecond))
}

func (g *goodCaller) run(ctx context.Context, u string, interval time.Duration) {
	hc := newHTTPClientFrom(1, 10*time.Second, g.from)
	defer hc.CloseIdleConnections()
	var c *client.Client
	defer func() {
		if c != nil {
			_ = c.Close()
		}
	}()
	// The client connects (server/discover) before the first tick, so
	// that the calls measured are calls; a failed connection is tried
	// again, and counted, at each tick until one succeeds.
	c, _ = dialGood(ctx, hc, u)
	g.start = time.Now()
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		var tr callTrace
		var connStart, wrote time.Time
		tctx := httptrace.WithClientTrace(context.Background(), &httptrace.ClientTrace{
			ConnectStart: func(string, string) { connStart = time.Now() },
			ConnectDone: func(string, string, error) {
				tr.dialed, tr.connect = true, time.Since(connStart)
			},
			WroteRequest:         func(httptrace.WroteRequestInfo) { wrote = time.Now() },
			GotFirstResponseByte: func() { tr.wait = time.Since(wrote) },
		})
		t0 := time.Now()
		var o outcome
		var why string
		switch {
		case c == nil:
			var err error
			if c, err = dialGood(tctx, hc, u); err != nil {
				o, why = classify(nil, err, "")
			} else {
				o, why = g.call(tctx, c)
			}
		default:
			o, why = g.call(tctx, c)
		}
		tr.total = time.Since(t0)
		label := []string{"ok", "5xx", "lost", "wrong"}[o]
		g.record(t0.Sub(g.start), tr, label, why)
		if g.each != nil {
			g.each(t0.Sub(g.start), tr, label, why)
		}
	}
}

// call makes one well-behaved request: tools/call test_simple_text, or
// tools/list.
func (g *goodCaller) call(ctx context.Context, c *client.Client) (outcome, string) {
	if !g.list {
		return callSimple(ctx, c, 10*time.Second)
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	raw, err := c.Call(ctx, "tools/list", nil)
	return classify(raw, err, `"tools"`)
}

// record adds one call, sent at since the caller started.
func (g *goodCaller) record(at time.Duration, tr callTrace, outcome, why string) {
	g.mu.Lock()
	g.at = append(g.at, at)
	g.latency = append(g.latency, tr.total)
	if tr.total > g.worst.total {
		g.worst = tr
	}
	if tr.dialed {
		g.dials++
	}
	g.mu.Unlock()
	g.outcomes.add(outcome, why)
}

// percentiles returns p50, p99 and max of the latencies of the calls sent
// from from to to (since the caller started).
func (g *goodCaller) percentiles(from, to time.Duration) (n int, p50, p99, maxd time.Duration) {
	g.mu.Lock()
	var l []time.Duration
	for i, at := range g.at {
		if at >= from && at < to {
			l = append(l, g.latency[i])
		}
	}
	g.mu.Unlock()
	if len(l) == 0 {
		return 0, 0, 0, 0
	}
	slices.Sort(l)
	rank := func(p float64) time.Duration {
		i := int(p/100*float64(len(l))+0.999999) - 1
		return l[max(0, min(i, len(l)-1))]
	}
	return len(l), rank(50), rank(99), l[len(l)-1]
}

// listenFlood sends subscriptions/listen attempts and counts the answers:
// "200" for streams the server accepted (held open until ctx ends, or
// closed after hold when hold > 0), the HTTP status of refusals, and
// "error" for transport failures.
type listenFlood struct {
	// rate, when positive, caps the attempts per second of all the
	// workers together (the pace of an attacker's own link and CPU); 0
	// sends as fast as the workers go.
	rate     float64
	statuses *counter
	held     atomic.Int64 // streams open now
	maxHeld  atomic.Int64
	sent     atomic.Int64
}

// run makes n attempts from conc workers, each pausing pause between its
// attempts, until ctx ends. attempted, when not nil, is called once every
// attempt has been answered (or ctx ended); run itself returns once the
// streams it holds are closed too.
func (f *listenFlood) run(ctx context.Context, u string, n, conc int, pause, hold time.Duration, attempted func()) {
	c := newHTTPClient(conc, 10*time.Second)
	defer c.CloseIdleConnections()
	var workers, streams sync.WaitGroup
	var next atomic.Int64
	// With a rate, each attempt waits for its slot: attempt i goes at
	// i/rate seconds after the start, or at once when that time is past.
	start := time.Now()
	for w := range conc {
		workers.Go(func() {
			for ctx.Err() == nil {
				i := next.Add(1)
				if i > int64(n) {
					break
				}
				if f.rate > 0 {
					at := start.Add(time.Duration(float64(i-1) / f.rate * float64(time.Second)))
					if d := time.Until(at); d > 0 {
						select {
						case <-ctx.Done():
							return
						case <-time.After(d):
						}
					}
				}
				f.attempt(ctx, c, u, int64(w)+1, hold, &streams) // ids from 1: id 0 would render a notification
				if pause > 0 {
					select {
					case <-ctx.Done():
					case <-time.After(pause):
					}
				}
			}
		})
	}
	workers.Wait()
	if attempted != nil {
		attempted()
	}
	streams.Wait()
}

func (f *listenFlood) attempt(ctx context.Context, c *http.Client, u string, id int64, hold time.Duration, wg *sync.WaitGroup) {
	f.sent.Add(1)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(requestBody(id, "subscriptions/listen", "{}", listenParams...)))
	if err != nil {
		return
	}
	req.Header = client.RawHeader(client.LatestVersion, "subscriptions/listen", "")
	resp, err := c.Do(req)
	if err != nil {
		if ctx.Err() == nil {
			f.statuses.add("error", err.Error())
		}
		return
	}
	label := fmt.Sprint(resp.StatusCode)
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		resp.Body.Close()
		f.statuses.add(label, string(b))
		return
	}
	f.statuses.add(label, "")
	held := f.held.Add(1)
	for {
		m := f.maxHeld.Load()
		if held <= m || f.maxHeld.CompareAndSwap(m, held) {
			break
		}
	}
	// The stream is read (and so kept open) by a goroutine of its own, so
	// that the worker can go on; it ends with ctx, or after hold.
	wg.Go(func() {
		defer f.held.Add(-1)
		defer resp.Body.Close()
		if hold > 0 {
			t := time.AfterFunc(hold, func() { resp.Body.Close() })
			defer t.Stop()
		}
		_, _ = io.Copy(io.Discard, resp.Body)
	})
}

// slowClients send request headers with a Content-Length, then one body
// byte every interval, and record what the server does about it.
type slowClients struct {
	events *counter // "answered <status>", "cut after <bucket>", "open at end", "dial error"
	open   atomic.Int64
}

// run keeps n slow clients going until ctx ends; with again set, a client
// the server cut reconnects after a second.
func (s *slowClients) run(ctx context.Context, u string, n, length int, interval time.Duration, again bool) {
	pu, _ := url.Parse(u)
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			for ctx.Err() == nil {
				s.one(ctx, pu, length, interval)
				if !again {
					return
				}
				select {
				case <-ctx.Done():
				case <-time.After(time.Second):
				}
			}
		})
	}
	wg.Wait()
}

func (s *slowClients) one(ctx context.Context, pu *url.URL, length int, interval time.Duration) {
	conn, err := (&net.Dialer{Timeout: 5 * time.Second}).DialContext(ctx, "tcp", pu.Host)
	if err != nil {
		if ctx.Err() == nil {
			s.events.add("dial error", err.Error())
		}
		return
	}
	defer conn.Close()
	s.open.Add(1)
	defer s.open.Add(-1)
	start := time.Now()
	head := rawRequest(pu.Host, pu.Path, "tools/call", "test_simple_text", nil, length)
	if _, err := conn.Write(head); err != nil {
		s.events.add("cut at headers", err.Error())
		return
	}
	// The server's answer, if any, ends the client.
	answered := make(chan string, 1)
	go func() {
		b := make([]byte, 512)
		n, err := conn.Read(b)
		if n > 0 {
			line, _, _ := strings.Cut(string(b[:n]), "\r\n")
			answered <- "answered " + strings.TrimPrefix(line, "HTTP/1.1 ")
			return
		}
		answered <- "cut (read: " + errKind(err) + ")"
	}()
	t := time.NewTicker(interval)
	defer t.Stop()
	for sent := 0; sent < length; {
		select {
		case <-ctx.Done():
			s.events.add("open at end", "")
			return
		case what := <-answered:
			s.events.add(what+" after "+bucket(time.Since(start)), "")
			return
		case <-t.C:
		}
		_ = conn.SetWriteDeadline(time.Now().Add(5 * time.Second))
		if _, err := conn.Write([]byte{' '}); err != nil {
			s.events.add("cut (write: "+errKind(err)+") after "+bucket(time.Since(start)), "")
			return
		}
		sent++
	}
	s.events.add("body complete", "")
}

// errKind names an I/O error briefly.
func errKind(err error) string {
	switch {
	case err == nil:
		return "none"
	case err == io.EOF:
		return "EOF"
	case strings.Contains(err.Error(), "reset"):
		return "reset"
	case strings.Contains(err.Error(), "broken pipe"):
		return "broken pipe"
	case strings.Contains(err.Error(), "timeout"):
		return "timeout"
	}
	return "other"
}

// bucket rounds d to a coarse label, so that counts group.
func bucket(d time.Duration) string {
	switch {
	case d < time.Second:
		return "<1s"
	case d < 10*time.Second:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	default:
		return fmt.Sprintf("%ds", int(d.Seconds())/10*10)
	}
}

// nonReaders pipeline requests with large answers and never read.
type nonReaders struct {
	events  *counter
	written atomic.Int64 // requests written in full
	open    atomic.Int64
}

// run keeps n non-readers until ctx ends; each writes pipeline requests
// whose answers are about big bytes. With cycle > 0 a client hangs up
// after cycle and connects again.
func (r *nonReaders) run(ctx context.Context, u string, n, pipeline, big int, cycle time.Duration) {
	pu, _ := url.Parse(u)
	args := `{"name":` + string(client.RawString(strings.Repeat("x", big))) + `,"email":"a@example.com"}`
	body := requestBody(7, "tools/call", "{}", callParams("json_schema_2020_12_tool", args)...)
	req := rawRequest(pu.Host, pu.Path, "tools/call", "json_schema_2020_12_tool", body, len(body))
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			for ctx.Err() == nil {
				r.one(ctx, pu.Host, req, pipeline, cycle)
				if cycle <= 0 {
					return
				}
			}
		})
	}
	wg.Wait()
}

func (r *nonReaders) one(ctx context.Context, host string, req []byte, pipeline int, cycle time.Duration) {
	conn, err := (&net.Dialer{Timeout: 5 * time.Second}).DialContext(ctx, "tcp", host)
	if err != nil {
		if ctx.Err() == nil {
			r.events.add("dial error", err.Error())
		}
		return
	}
	defer conn.Close()
	if tc, ok := conn.(*net.TCPConn); ok {
		_ = tc.SetReadBuffer(4096)
	}
	r.open.Add(1)
	defer r.open.Add(-1)
	start := time.Now()
	stop := ctx
	if cycle > 0 {
		var cancel context.CancelFunc
		stop, cancel = context.WithTimeout(ctx, cycle)
		defer cancel()
	}
	// Writes block once the server stops reading; closing the connection
	// when stop ends unblocks them.
	go func() {
		<-stop.Done()
		conn.Close()
	}()
	for range pipeline {
		if _, err := conn.Write(req); err != nil {
			if stop.Err() == nil {
				r.events.add("cut (write: "+errKind(err)+") after "+bucket(time.Since(start)), "")
			}
			return
		}
		r.written.Add(1)
	}
	// Whether the server hangs up is seen from the socket's TCP state once
	// a second, which leaves the unread answers where they are.
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-stop.Done():
			return
		case <-t.C:
		}
		if gone := peerClosed(conn); gone != "" {
			r.events.add("cut ("+gone+") after "+bucket(time.Since(start)), "")
			return
		}
	}
}
