package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mrtrkit/mrtrkit/client"
	"github.com/mrtrkit/mrtrkit/conformance/suite"
)

// The hardening scenarios check, black-box, how the server holds up
// against a caller that sends too much, too slowly, or reads too little.
// They run after the suite's scenarios and add their results to its
// report.

// Defaults of the hardening flags.
const (
	// defaultListenMax is how many listen streams hardening.listen-cap
	// opens at most.
	defaultListenMax = 300
	// defaultBodyWait is how long a server may wait for a stalled request
	// body; hardening.slow-body waits twice as long.
	defaultBodyWait = 2 * time.Second
	// defaultQuick is how soon a normal call must be answered while the
	// hardening scenarios hold other connections.
	defaultQuick = 2 * time.Second
	// defaultUnreadBytes is how much response hardening.unread-response
	// asks for and leaves unread.
	defaultUnreadBytes = 8 << 20
)

// Limits of the echo scenarios.
const (
	// echoSize is the size of the value sent to be echoed.
	echoSize = 1 << 20
	// echoMaxAnswer is the largest answer to it that passes.
	echoMaxAnswer = 8 << 10
	// echoRun bounds the runs of the value an answer may quote: one of
	// echoRun bytes or more fails, and so may one of half as many.
	echoRun = 4 << 10
	// echoHeaderSmall is the size of a header value that fits the default
	// header limits of most servers, so that it reaches the application.
	echoHeaderSmall = 32 << 10
)

// hardeningConfig is what the hardening scenarios need.
type hardeningConfig struct {
	url       string
	token     string
	timeout   time.Duration
	listenMax int
	bodyWait  time.Duration
	quick     time.Duration
	unread    int

	// The server.* scenarios.
	secondSource string             // a second local address, for server.peer-fairness
	redis        string             // the replicas' Redis, for server.bus-spoofing
	audience     string             // the deployment's audience, naming its events channel
	legacyTools  []suite.LegacyTool // tools that ask the client something
}

// hardeningScenario is one hardening check.
type hardeningScenario struct {
	suite.Scenario
	run func(h *hardener, ctx context.Context) suite.Result
}

// hardeningScenarios lists the hardening checks, then the server.* ones,
// in the order they run.
func hardeningScenarios() []hardeningScenario {
	return append([]hardeningScenario{
		{suite.Scenario{ID: "hardening.echo-method", Title: "a 1 MiB method name is answered briefly, without echoing it",
			Why: "A server that echoes what it is sent in full (in an error message, a log line) lets one request multiply into megabytes of output and carry forged text into logs and clients."},
			(*hardener).echoMethod},
		{suite.Scenario{ID: "hardening.echo-tool", Title: "a 1 MiB tool name is answered briefly, without echoing it",
			Why: "The tool name of an unknown tool is the value servers most often quote back; unbounded, it amplifies a request into a large answer."},
			(*hardener).echoTool},
		{suite.Scenario{ID: "hardening.echo-header", Title: "1 MiB and 32 KiB header values are answered briefly, without echoing them",
			Why: "Header values (Mcp-Name, Mcp-Method) are compared with the body and refused on a mismatch; the refusal must not quote them whole."},
			(*hardener).echoHeader},
		{suite.Scenario{ID: "hardening.listen-cap", Title: "many listen streams are capped (429/503), or the server keeps answering",
			Why: "Each listen stream holds a connection and memory for as long as the caller likes; without a cap one caller can exhaust the server. " +
				"INFO when no cap is hit within -listen-max streams and the server still answers quickly."},
			(*hardener).listenCap},
		{suite.Scenario{ID: "hardening.slow-body", Title: "a request whose body stalls is closed or answered in time, and does not block others",
			Why: "A caller that sends headers and part of a body, then nothing, holds a connection and a goroutine (slowloris). The server should give up " +
				"within a bound, and must go on serving others meanwhile. INFO when it waits longer than twice -body-wait but serves others."},
			(*hardener).slowBody},
		{suite.Scenario{ID: "hardening.unread-response", Title: "a client that does not read its responses does not block another call",
			Why: "A server that writes a response under a shared lock, or with no write deadline on a shared resource, lets one client that stops reading stall everyone."},
			(*hardener).unreadResponse},
	}, serverScenarios()...)
}

// hardener runs the hardening scenarios against one endpoint.
type hardener struct {
	cfg    hardeningConfig
	u      *url.URL
	client *http.Client
	nextID atomic.Int64 // request ids; the pipelining writer takes them too
}

func newHardener(cfg hardeningConfig) (*hardener, error) {
	u, err := url.Parse(cfg.url)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("-url must be an http or https URL: %s", cfg.url)
	}
	tr := &http.Transport{DisableKeepAlives: true, MaxResponseHeaderBytes: 64 << 10}
	return &hardener{cfg: cfg, u: u, client: &http.Client{Transport: tr, Timeout: cfg.timeout}}, nil
}

// runHardening runs the hardening scenarios that sel selects (all when
// nil) and appends their results to rep.
func runHardening(ctx context.Context, cfg hardeningConfig, sel func(string) bool, rep *suite.Report) error {
	h, err := newHardener(cfg)
	if err != nil {
		return err
	}
	defer h.client.CloseIdleConnections()
	for _, s := range hardeningScenarios() {
		if sel != nil && !sel(s.ID) {
			continue
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		res := s.run(h, ctx)
		if err := ctx.Err(); err != nil {
			return err
		}
		res.ID, res.Title = s.ID, s.Title
		rep.Results = append(rep.Results, res)
		if rep.Counts == nil {
			rep.Counts = map[suite.Status]int{}
		}
		rep.Counts[res.Status]++
	}
	return nil
}

func verdict(s suite.Status, reason string, ev ...suite.Evidence) suite.Result {
	return suite.Result{Status: s, Reason: reason, Evidence: ev}
}

func (h *hardener) id() int64 { return h.nextID.Add(1) }

// hardeningMeta is the _meta of every request the hardening scenarios
// send.
var hardeningMeta = client.RawMeta(suite.ProtocolVersion, json.RawMessage(`{}`), client.Implementation{Name: "mrtrcheck", Version: "1"})

// params renders the params of a request: members, then the _meta.
func params(members ...client.RawMember) json.RawMessage {
	return client.RawObject(append(members[:len(members):len(members)], client.RawMember{Name: "_meta", Value: hardeningMeta})...)
}

// body renders a request of method, with a fresh id, whose params are
// members and the _meta.
func (h *hardener) body(method string, members ...client.RawMember) []byte {
	return client.RawRequestBody(h.id(), method, params(members...))
}

// headers returns the headers of a request as a client of version sends
// them (Mcp-Method and Mcp-Name when given), with the bearer token.
func (h *hardener) headers(version, method, name string) http.Header {
	hd := client.RawHeader(version, method, name)
	if h.cfg.token != "" {
		hd.Set("Authorization", "Bearer "+h.cfg.token)
	}
	return hd
}

// modern returns the headers of a 2026-07-28 POST for method naming name.
func (h *hardener) modern(method, name string) http.Header {
	return h.headers(suite.ProtocolVersion, method, name)
}

// exchange POSTs body with hd through the raw layer and hands the answer
// to read; the evidence holds the status, the content type, what read
// adds and how long it all took.
func (h *hardener) exchange(ctx context.Context, hd http.Header, body []byte, label string, read func(*client.RawResponse, *suite.Evidence)) (ev suite.Evidence) {
	start := time.Now()
	ev.Probe = label
	defer func() { ev.ElapsedMS = time.Since(start).Milliseconds() }()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.cfg.url, bytes.NewReader(body))
	if err != nil {
		ev.TransportError = err.Error()
		return ev
	}
	req.Header = hd
	resp, err := client.RawDo(h.client, req)
	if err != nil {
		ev.TransportError = clip(err.Error(), 200)
		return ev
	}
	defer resp.Close()
	ev.HTTPStatus, ev.ContentType = resp.StatusCode, resp.ContentType
	read(resp, &ev)
	return ev
}

// post sends body with hd and returns the evidence and the answer as
// bytes: at most limit of them, and whether there was more.
func (h *hardener) post(ctx context.Context, hd http.Header, body []byte, limit int64, label string) (ev suite.Evidence, answer []byte, more bool) {
	ev = h.exchange(ctx, hd, body, label, func(resp *client.RawResponse, ev *suite.Evidence) {
		var err error
		answer, err = io.ReadAll(io.LimitReader(resp.Body, limit+1))
		if int64(len(answer)) > limit {
			answer, more = answer[:limit], true
		}
		if err != nil && !more {
			ev.TransportError = clip(err.Error(), 200)
		}
		ev.Body = clip(string(answer), 200)
	})
	return ev, answer, more
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// echoValue is a value of n bytes that no server makes up: a marker and
// a counter, so that any run of it quoted back is recognisable.
func echoValue(n int) string {
	var b strings.Builder
	b.Grow(n + 16)
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, "mrtrcheck%07d.", i)
	}
	return b.String()[:n]
}

// echoes reports whether answer quotes one of the windows of echoRun/2
// bytes of value that start at multiples of echoRun/2: any run of
// echoRun bytes or more holds one, and a shorter run may.
func echoes(answer []byte, value string) bool {
	const half = echoRun / 2
	for i := 0; i+half <= len(value); i += half {
		if bytes.Contains(answer, []byte(value[i:i+half])) {
			return true
		}
	}
	return false
}

// judgeEcho passes when every answer is small and quotes no long run of
// the value.
func judgeEcho(value string, probes []echoProbe) suite.Result {
	var evs []suite.Evidence
	for _, p := range probes {
		evs = append(evs, p.ev)
	}
	answered := false
	for _, p := range probes {
		if p.ev.TransportError != "" && p.ev.HTTPStatus == 0 {
			continue // the server may close the connection on a huge request
		}
		answered = true
		switch {
		case p.more || len(p.answer) > echoMaxAnswer:
			return verdict(suite.Fail, fmt.Sprintf("%s: the answer is over %d bytes", p.ev.Probe, echoMaxAnswer), evs...)
		case echoes(p.answer, value):
			return verdict(suite.Fail, fmt.Sprintf("%s: the answer quotes a run of %d bytes or more of the value sent", p.ev.Probe, echoRun/2), evs...)
		}
	}
	if !answered {
		return verdict(suite.Pass, "the server closed the connection without answering", evs...)
	}
	return verdict(suite.Pass, fmt.Sprintf("every answer is under %d bytes and quotes no long run of the value", echoMaxAnswer), evs...)
}

// echoProbe is one exchange of an echo scenario.
type echoProbe struct {
	ev     suite.Evidence
	answer []byte
	more   bool
}

func (h *hardener) echoPost(ctx context.Context, hd http.Header, body []byte, label string) echoProbe {
	ev, answer, more := h.post(ctx, hd, body, echoMaxAnswer*4, label)
	return echoProbe{ev, answer, more}
}

func (h *hardener) echoMethod(ctx context.Context) suite.Result {
	v := echoValue(echoSize)
	return judgeEcho(v, []echoProbe{
		h.echoPost(ctx, h.modern("tools/list", ""), h.body(v), "POST with a 1 MiB method name, Mcp-Method tools/list"),
		h.echoPost(ctx, h.modern(v[:echoHeaderSmall], ""), h.body(v), "POST with a 1 MiB method name, Mcp-Method its first 32 KiB"),
	})
}

func (h *hardener) echoTool(ctx context.Context) suite.Result {
	v := echoValue(echoSize)
	call := func() []byte { return h.body("tools/call", toolCall(v)...) }
	return judgeEcho(v, []echoProbe{
		h.echoPost(ctx, h.modern("tools/call", "x"), call(), "tools/call of a 1 MiB tool name, Mcp-Name x"),
		h.echoPost(ctx, h.modern("tools/call", v[:echoHeaderSmall]), call(), "tools/call of a 1 MiB tool name, Mcp-Name its first 32 KiB"),
	})
}

// toolCall returns the params members of a tools/call of name without
// arguments.
func toolCall(name string) []client.RawMember {
	return []client.RawMember{{Name: "name", Value: client.RawString(name)}, {Name: "arguments", Value: json.RawMessage(`{}`)}}
}

func (h *hardener) echoHeader(ctx context.Context) suite.Result {
	v := echoValue(echoSize)
	var probes []echoProbe
	for _, size := range []int{echoSize, echoHeaderSmall} {
		label := fmt.Sprintf("tools/list with a %d KiB ", size>>10)
		probes = append(probes,
			h.echoPost(ctx, h.modern(v[:size], ""), h.body("tools/list"), label+"Mcp-Method"),
			h.echoPost(ctx, h.modern("tools/call", v[:size]), h.body("tools/call", toolCall("x")...), label+"Mcp-Name"),
		)
	}
	return judgeEcho(v, probes)
}

// quickList sends tools/list and reports whether the response to it came
// within the quick bound.
func (h *hardener) quickList(ctx context.Context, label string) (suite.Evidence, bool) {
	ctx, cancel := context.WithTimeout(ctx, h.cfg.quick)
	defer cancel()
	id, answered := h.id(), false
	ev := h.exchange(ctx, h.modern("tools/list", ""), client.RawRequestBody(id, "tools/list", params()), label, func(resp *client.RawResponse, ev *suite.Evidence) {
		m, err := resp.Await(id, nil)
		switch {
		case err != nil:
			ev.TransportError = clip(err.Error(), 200)
		case m == nil:
			ev.Body = clip(string(resp.Seen()), 200)
		default:
			ev.Error = m.Error
			answered = resp.StatusCode == http.StatusOK
		}
	})
	return ev, answered
}

// rawConn is one connection to the endpoint, spoken to by hand.
type rawConn struct {
	net.Conn
	r *bufio.Reader
}

// dial opens a connection to the endpoint's host.
func (h *hardener) dial(ctx context.Context) (*rawConn, error) {
	host := h.u.Host
	if h.u.Port() == "" {
		if h.u.Scheme == "https" {
			host = net.JoinHostPort(h.u.Hostname(), "443")
		} else {
			host = net.JoinHostPort(h.u.Hostname(), "80")
		}
	}
	d := &net.Dialer{Timeout: h.cfg.timeout}
	var c net.Conn
	var err error
	if h.u.Scheme == "https" {
		c, err = (&tls.Dialer{NetDialer: d, Config: &tls.Config{ServerName: h.u.Hostname()}}).DialContext(ctx, "tcp", host)
	} else {
		c, err = d.DialContext(ctx, "tcp", host)
	}
	if err != nil {
		return nil, err
	}
	return &rawConn{Conn: c, r: bufio.NewReader(c)}, nil
}

// head renders the request line and headers of a POST of length bytes.
func (h *hardener) head(hd http.Header, length int) []byte {
	var b bytes.Buffer
	path := h.u.RequestURI()
	fmt.Fprintf(&b, "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Length: %d\r\n", path, h.u.Host, length)
	_ = hd.Write(&b)
	b.WriteString("\r\n")
	return b.Bytes()
}

// readStatus reads the status line and headers of a response within d.
func (c *rawConn) readStatus(d time.Duration) (*http.Response, error) {
	_ = c.SetReadDeadline(time.Now().Add(d))
	defer func() { _ = c.SetReadDeadline(time.Time{}) }()
	return http.ReadResponse(c.r, nil)
}

func (h *hardener) listenCap(ctx context.Context) suite.Result {
	var (
		conns []*rawConn
		evs   []suite.Evidence
	)
	defer func() {
		for _, c := range conns {
			_ = c.Close()
		}
	}()
	ev, ok := h.quickList(ctx, "tools/list before any listen stream")
	evs = append(evs, ev)
	if !ok {
		return verdict(suite.NotRun, "the server does not answer tools/list quickly to begin with", evs...)
	}
	filter := client.RawMember{Name: "notifications", Value: json.RawMessage(`{"toolsListChanged":true}`)}
	// How long to wait for a stream's headers: a server may hold them
	// until the first event, and then holds them for every stream, so
	// after the first silent one the wait is short.
	wait, silent := min(h.cfg.quick, time.Second), false
	for i := 1; i <= h.cfg.listenMax; i++ {
		if ctx.Err() != nil {
			return verdict(suite.NotRun, "interrupted", evs...)
		}
		c, err := h.dial(ctx)
		if err != nil {
			evs = append(evs, suite.Evidence{Probe: fmt.Sprintf("listen stream %d", i), TransportError: clip(err.Error(), 200)})
			return verdict(suite.Info, fmt.Sprintf("the server refused connection %d (%v); no cap was seen at the HTTP layer", i, err), evs...)
		}
		conns = append(conns, c)
		body := h.body("subscriptions/listen", filter)
		start := time.Now()
		_ = c.SetWriteDeadline(time.Now().Add(h.cfg.timeout))
		_, werr := c.Write(append(h.head(h.modern("subscriptions/listen", ""), len(body)), body...))
		resp, err := c.readStatus(wait)
		probe := fmt.Sprintf("listen stream %d", i)
		switch {
		case werr != nil:
			evs = append(evs, suite.Evidence{Probe: probe, TransportError: clip(werr.Error(), 200)})
			return verdict(suite.Info, fmt.Sprintf("writing listen stream %d failed: the server closes connections past some bound", i), evs...)
		case err != nil && !isTimeout(err):
			evs = append(evs, suite.Evidence{Probe: probe, TransportError: clip(err.Error(), 200)})
			return verdict(suite.Info, fmt.Sprintf("listen stream %d was closed without an answer: the server closes connections past some bound", i), evs...)
		case err != nil:
			// No headers yet. The stream counts as open; whether the
			// server still serves others is checked now.
			if !silent {
				silent, wait = true, 50*time.Millisecond
				ev, ok := h.quickList(ctx, fmt.Sprintf("tools/list with %d listen streams open, the last not answered in %s", i, min(h.cfg.quick, time.Second)))
				if !ok {
					evs = append(evs, ev)
					return verdict(suite.Fail, fmt.Sprintf("listen stream %d got no answer, and tools/list is not answered within %s", i, h.cfg.quick), evs...)
				}
			}
			continue
		}
		ev := suite.Evidence{Probe: probe, HTTPStatus: resp.StatusCode, ContentType: resp.Header.Get("Content-Type"), ElapsedMS: time.Since(start).Milliseconds()}
		switch resp.StatusCode {
		case http.StatusTooManyRequests, http.StatusServiceUnavailable:
			evs = append(evs, ev)
			ev, ok := h.quickList(ctx, "tools/list with the streams open")
			evs = append(evs, ev)
			if !ok {
				return verdict(suite.Fail, fmt.Sprintf("listen stream %d was refused with %d, but tools/list is not answered within %s", i, resp.StatusCode, h.cfg.quick), evs...)
			}
			return verdict(suite.Pass, fmt.Sprintf("listen stream %d was refused with HTTP %d; tools/list still answered", i, resp.StatusCode), evs...)
		case http.StatusOK:
			if !strings.HasPrefix(ev.ContentType, "text/event-stream") {
				evs = append(evs, ev)
				if i == 1 {
					return verdict(suite.NotRun, "the server does not hold subscriptions/listen streams (the answer is not an event stream)", evs...)
				}
				return verdict(suite.Info, fmt.Sprintf("listen stream %d was answered at once, not held: %s", i, ev.ContentType), evs...)
			}
		default:
			evs = append(evs, ev)
			if i == 1 {
				return verdict(suite.NotRun, fmt.Sprintf("the server refuses subscriptions/listen (HTTP %d)", resp.StatusCode), evs...)
			}
			return verdict(suite.Info, fmt.Sprintf("listen stream %d was refused with HTTP %d, not 429 or 503", i, resp.StatusCode), evs...)
		}
		if i%50 == 0 {
			ev, ok := h.quickList(ctx, fmt.Sprintf("tools/list with %d listen streams open", i))
			if !ok {
				evs = append(evs, ev)
				return verdict(suite.Fail, fmt.Sprintf("with %d listen streams open and none refused, tools/list is not answered within %s", i, h.cfg.quick), evs...)
			}
		}
	}
	ev, ok = h.quickList(ctx, fmt.Sprintf("tools/list with %d listen streams open", len(conns)))
	evs = append(evs, ev)
	if !ok {
		return verdict(suite.Fail, fmt.Sprintf("with %d listen streams open and none refused, tools/list is not answered within %s", len(conns), h.cfg.quick), evs...)
	}
	return verdict(suite.Info, fmt.Sprintf("no cap was hit within %d listen streams (-listen-max); tools/list still answered in %d ms", len(conns), ev.ElapsedMS), evs...)
}

// isTimeout reports whether err is a deadline passing.
func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// stalledStreams is how many stalled bodies hardening.slow-body holds.
const stalledStreams = 4

func (h *hardener) slowBody(ctx context.Context) suite.Result {
	var evs []suite.Evidence
	ev, ok := h.quickList(ctx, "tools/list before any stalled body")
	evs = append(evs, ev)
	if !ok {
		return verdict(suite.NotRun, "the server does not answer tools/list quickly to begin with", evs...)
	}
	body := h.body("tools/list")
	bound := 2 * h.cfg.bodyWait
	start := time.Now()
	var (
		wg     sync.WaitGroup
		mu     sync.Mutex
		ended  []time.Duration // when each stalled request was closed or answered
		conns  []*rawConn
		opened int
	)
	for i := 0; i < stalledStreams; i++ {
		c, err := h.dial(ctx)
		if err != nil {
			evs = append(evs, suite.Evidence{Probe: "stalled body", TransportError: clip(err.Error(), 200)})
			break
		}
		conns = append(conns, c)
		// Headers announcing the whole body, and half of it.
		_ = c.SetWriteDeadline(time.Now().Add(h.cfg.timeout))
		if _, err := c.Write(append(h.head(h.modern("tools/list", ""), len(body)), body[:len(body)/2]...)); err != nil {
			continue
		}
		opened++
		wg.Add(1)
		go func(c *rawConn) {
			defer wg.Done()
			_ = c.SetReadDeadline(time.Now().Add(bound))
			if _, err := c.r.ReadByte(); isTimeout(err) { // else an answer, or the connection closed
				return
			}
			mu.Lock()
			ended = append(ended, time.Since(start))
			mu.Unlock()
		}(c)
	}
	defer func() {
		for _, c := range conns {
			_ = c.Close()
		}
	}()
	if opened == 0 {
		return verdict(suite.NotRun, "no stalled request could be sent", evs...)
	}
	// Others are served meanwhile.
	time.Sleep(min(h.cfg.bodyWait/4, 200*time.Millisecond))
	ev, ok = h.quickList(ctx, fmt.Sprintf("tools/list with %d stalled bodies", opened))
	evs = append(evs, ev)
	if !ok {
		wg.Wait()
		return verdict(suite.Fail, fmt.Sprintf("with %d request bodies stalled, tools/list is not answered within %s", opened, h.cfg.quick), evs...)
	}
	wg.Wait()
	evs = append(evs, suite.Evidence{Probe: fmt.Sprintf("%d requests: headers and half the body, then nothing for %s", opened, bound),
		Received: fmt.Sprintf("%d closed or answered", len(ended)), ElapsedMS: time.Since(start).Milliseconds()})
	if len(ended) < opened {
		return verdict(suite.Info, fmt.Sprintf("the server still waited for %d of %d stalled bodies after %s (twice -body-wait); it served others meanwhile",
			opened-len(ended), opened, bound), evs...)
	}
	longest := time.Duration(0)
	for _, d := range ended {
		longest = max(longest, d)
	}
	return verdict(suite.Pass, fmt.Sprintf("every stalled request was closed or answered, the last after %d ms; others were served meanwhile", longest.Milliseconds()), evs...)
}

func (h *hardener) unreadResponse(ctx context.Context) suite.Result {
	var evs []suite.Evidence
	ev, answer, _ := h.post(ctx, h.modern("tools/list", ""), h.body("tools/list"), 1<<20, "tools/list, to size the answer")
	evs = append(evs, ev)
	if ev.HTTPStatus != http.StatusOK || len(answer) == 0 {
		return verdict(suite.NotRun, "the server does not answer tools/list", evs...)
	}
	// Enough pipelined requests on one connection that their answers
	// fill every buffer between the server and a client that reads none.
	n := min(h.cfg.unread/len(answer)+1, 200000)
	c, err := h.dial(ctx)
	if err != nil {
		evs = append(evs, suite.Evidence{Probe: "unread connection", TransportError: clip(err.Error(), 200)})
		return verdict(suite.NotRun, "cannot connect", evs...)
	}
	if tc, ok := c.Conn.(*net.TCPConn); ok {
		_ = tc.SetReadBuffer(4 << 10)
	}
	defer c.Close()
	start := time.Now()
	var sent atomic.Int64
	writeDone := make(chan struct{})
	go func() {
		defer close(writeDone)
		var batch bytes.Buffer
		_ = c.SetWriteDeadline(time.Now().Add(h.cfg.quick + h.cfg.bodyWait))
		for int(sent.Load()) < n {
			batch.Reset()
			k := 0
			for ; k < 64 && int(sent.Load())+k < n; k++ {
				body := h.body("tools/list")
				batch.Write(h.head(h.modern("tools/list", ""), len(body)))
				batch.Write(body)
			}
			if _, err := c.Write(batch.Bytes()); err != nil {
				return
			}
			sent.Add(int64(k))
		}
	}()
	// Let the server write into the unread connection until it stops
	// reading requests (its writes are blocked), all are sent, or the
	// bound passes; then call.
	stallAfter := min(h.cfg.quick/4, 300*time.Millisecond)
	last, lastChange := int64(-1), time.Now()
	for wait := time.Now().Add(h.cfg.quick + h.cfg.bodyWait/2); time.Now().Before(wait); {
		select {
		case <-writeDone:
		case <-time.After(20 * time.Millisecond):
		}
		if v := sent.Load(); v != last {
			last, lastChange = v, time.Now()
		}
		if time.Since(lastChange) > stallAfter {
			break
		}
		if int(last) >= n {
			// All sent: give the server time to answer them.
			time.Sleep(stallAfter)
			break
		}
	}
	ev, ok := h.quickList(ctx, "tools/list while another connection reads none of its answers")
	evs = append(evs, ev)
	_ = c.Close()
	<-writeDone
	evs = append(evs, suite.Evidence{Probe: fmt.Sprintf("%d tools/list requests pipelined on one connection, answers (up to ~%d KiB) not read",
		sent.Load(), int(sent.Load())*len(answer)>>10), ElapsedMS: time.Since(start).Milliseconds()})
	if !ok {
		return verdict(suite.Fail, fmt.Sprintf("tools/list is not answered within %s while another client does not read its answers", h.cfg.quick), evs...)
	}
	return verdict(suite.Pass, fmt.Sprintf("tools/list answered in %d ms while another client read none of its answers", ev.ElapsedMS), evs...)
}
