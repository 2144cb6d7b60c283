package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/mrtrkit/mrtrkit/client"
	"github.com/mrtrkit/mrtrkit/conformance/suite"
)

// The server.* scenarios check, black-box, the bounds a deployment that
// serves 2025-11-25 clients puts on them: the bytes of a session's
// subscriptions, the fairness between anonymous peers, and (given the
// address of the Redis its replicas share) that messages published on
// that Redis by someone without the key ring are ignored.

// serverScenarios lists them, in the order they run after the hardening
// ones.
func serverScenarios() []hardeningScenario {
	return []hardeningScenario{
		{suite.Scenario{ID: "server.legacy-subscriptions", Title: "a 2025-11-25 session's subscribed URIs are bounded in bytes",
			Why: "Without a bound, one anonymous session subscribing to resources with megabyte URIs makes the server hold and re-send them on every change, hundreds of megabytes for a few requests."},
			(*hardener).legacySubscriptions},
		{suite.Scenario{ID: "server.peer-fairness", Title: "one anonymous 2025-11-25 client at its limits leaves another peer served",
			Why: "When anonymous bridged clients share one limiter bucket, one client holding its share of streams or calls refuses or silently ends everyone else's. " +
				"Needs -second-source (a second local address, such as 127.0.0.2 against a loopback server); NOT-RUN with -token."},
			(*hardener).peerFairness},
		{suite.Scenario{ID: "server.bus-spoofing", Title: "answers, cancellations and deletions published on the replicas' Redis without the keys are ignored",
			Why: "Whoever can PUBLISH on the Redis the replicas share could otherwise answer a user's pending elicitation (forging consent), cancel calls or end sessions. " +
				"Needs -redis (the deployment's Redis, redis://user:password@host:port); -audience names the events channel when the Redis user may not PSUBSCRIBE."},
			(*hardener).busSpoofing},
	}
}

// legacyCaps are the client capabilities the server.* sessions declare.
const legacyCaps = `{"elicitation":{"form":{}},"sampling":{},"roots":{}}`

// legacySession is a 2025-11-25 session of the server.* scenarios that
// judge each exchange (the HTTP status of an initialize or a stream, each
// message of a call), spoken through the raw layer.
type legacySession struct {
	h    *hardener
	hc   *http.Client // no overall timeout: streams
	sid  string
	caps json.RawMessage // the server's capabilities, from initialize
}

// httpClient returns a client whose connections leave from source ("" for
// the default).
func (h *hardener) httpClient(source string) *http.Client {
	tr := &http.Transport{MaxResponseHeaderBytes: 64 << 10, MaxIdleConnsPerHost: 64}
	if source != "" {
		d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(source)}, Timeout: h.cfg.timeout}
		tr.DialContext = d.DialContext
	}
	return &http.Client{Transport: tr}
}

// open sends a request of the session with method (POST with body, GET
// for the session stream, DELETE) and returns the answer, which the
// caller reads; end ends it.
func (s *legacySession) open(ctx context.Context, method string, body []byte) (resp *client.RawResponse, end func(), err error) {
	ctx, cancel := context.WithCancel(ctx)
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, s.h.cfg.url, rd)
	if err != nil {
		cancel()
		return nil, nil, err
	}
	version := ""
	if s.sid != "" {
		version = suite.LegacyVersion
	}
	req.Header = s.h.headers(version, "", "")
	if s.sid != "" {
		req.Header.Set("Mcp-Session-Id", s.sid)
	}
	if method == http.MethodGet {
		req.Header.Set("Accept", "text/event-stream")
	}
	resp, err = client.RawDo(s.hc, req)
	if err != nil {
		cancel()
		return nil, nil, err
	}
	return resp, func() { cancel(); _ = resp.Close() }, nil
}

// exchange posts body and reads every message of the answer.
func (s *legacySession) exchange(ctx context.Context, body []byte) ([]*client.RawMessage, suite.Evidence) {
	var ev suite.Evidence
	ctx, cancel := context.WithTimeout(ctx, s.h.cfg.timeout)
	defer cancel()
	resp, end, err := s.open(ctx, http.MethodPost, body)
	if err != nil {
		ev.TransportError = clip(err.Error(), 200)
		return nil, ev
	}
	defer end()
	ev.HTTPStatus = resp.StatusCode
	if s.sid == "" {
		s.sid = resp.Header.Get("Mcp-Session-Id")
	}
	var out []*client.RawMessage
	for {
		m, err := resp.Next()
		if err != nil {
			break
		}
		out = append(out, m)
	}
	if len(out) > 0 {
		ev.Body = clip(string(out[len(out)-1].Raw), 200)
	}
	return out, ev
}

// legacyInit opens a session; ev tells what happened. ok is false when the
// server did not open one.
func (h *hardener) legacyInit(ctx context.Context, hc *http.Client, label string) (s *legacySession, ev suite.Evidence, ok bool) {
	s = &legacySession{h: h, hc: hc}
	msgs, ev := s.exchange(ctx, client.RawRequestBody(h.id(), "initialize", client.RawObject(
		client.RawMember{Name: "protocolVersion", Value: client.RawString(suite.LegacyVersion)},
		client.RawMember{Name: "capabilities", Value: json.RawMessage(legacyCaps)},
		client.RawMember{Name: "clientInfo", Value: json.RawMessage(`{"name":"mrtrcheck","version":"1"}`)},
	)))
	ev.Probe = label
	if ev.HTTPStatus != http.StatusOK || len(msgs) != 1 || s.sid == "" {
		return s, ev, false
	}
	var r struct {
		Capabilities json.RawMessage `json:"capabilities"`
	}
	if json.Unmarshal(msgs[0].Result, &r) != nil || len(r.Capabilities) == 0 {
		return s, ev, false
	}
	s.caps = r.Capabilities
	s.exchange(ctx, client.RawRequestBody(0, "notifications/initialized", nil))
	return s, ev, true
}

// close deletes the session, best effort.
func (s *legacySession) close() {
	ctx, cancel := context.WithTimeout(context.Background(), s.h.cfg.timeout)
	defer cancel()
	if _, end, err := s.open(ctx, http.MethodDelete, nil); err == nil {
		end()
	}
}

// connectLegacy opens a session of 2025-11-25 with package client, for a
// scenario in which the client behaves as any client does.
func (h *hardener) connectLegacy(ctx context.Context, hc *http.Client) (*client.Client, error) {
	var opts []client.HTTPOption
	opts = append(opts, client.WithHTTPClient(hc))
	if h.cfg.token != "" {
		opts = append(opts, client.WithBearerToken(h.cfg.token))
	}
	ctx, cancel := context.WithTimeout(ctx, h.cfg.timeout)
	defer cancel()
	return client.Connect(ctx, client.HTTP(h.cfg.url, opts...),
		client.WithProtocolVersion(suite.LegacyVersion), client.WithClientInfo("mrtrcheck", "1"))
}

// called returns ev with what a call of package client returned: a
// result, or the HTTP status and the JSON-RPC error or the failure.
func called(ev suite.Evidence, err error) suite.Evidence {
	if err == nil {
		ev.Received = "a result"
		return ev
	}
	var ce *client.Error
	if errors.As(err, &ce) {
		ev.HTTPStatus = ce.HTTPStatus
	}
	var re *client.RPCError
	if errors.As(err, &re) {
		ev.Error = re
	} else {
		ev.TransportError = clip(err.Error(), 200)
	}
	return ev
}

// Bounds of server.legacy-subscriptions.
const (
	subsHugeURI  = 1 << 20 // one URI no server should keep
	subsURI      = 8000    // the size of the URIs subscribed to until refused
	subsMaxTotal = 1 << 20 // more accepted than this, together, fails
)

func (h *hardener) legacySubscriptions(ctx context.Context) suite.Result {
	hc := h.httpClient("")
	defer hc.CloseIdleConnections()
	c, err := h.connectLegacy(ctx, hc)
	ev := called(suite.Evidence{Probe: "initialize (2025-11-25)"}, err)
	if err != nil {
		return verdict(suite.NotRun, "the endpoint does not open 2025-11-25 sessions", ev)
	}
	defer c.Close()
	var caps struct {
		Resources *struct {
			Subscribe bool `json:"subscribe"`
		} `json:"resources"`
	}
	if json.Unmarshal(c.ServerCapabilities(), &caps) != nil || caps.Resources == nil || !caps.Resources.Subscribe {
		return verdict(suite.NotRun, "the server does not advertise resources.subscribe", ev)
	}
	// sub reports whether the server took a subscription to uri.
	sub := func(label, uri string) (bool, suite.Evidence) {
		ctx, cancel := context.WithTimeout(ctx, h.cfg.timeout)
		defer cancel()
		_, err := c.Call(ctx, "resources/subscribe", map[string]string{"uri": uri})
		return err == nil, called(suite.Evidence{Probe: label}, err)
	}
	uri := func(n, size int) string {
		u := "mrtrcheck://bounds/" + strconv.Itoa(n) + "/"
		return u + strings.Repeat("a", size-len(u))
	}
	took, hev := sub("resources/subscribe with a 1 MiB URI", uri(0, subsHugeURI))
	if took {
		return verdict(suite.Fail, "a 1 MiB URI was subscribed to", ev, hev)
	}
	total := 0
	for i := 1; ; i++ {
		took, sev := sub(fmt.Sprintf("resources/subscribe of URI %d (%d bytes each)", i, subsURI), uri(i, subsURI))
		if !took {
			return verdict(suite.Pass, fmt.Sprintf("the 1 MiB URI was refused, and %d URIs of %d bytes (%d bytes together) were taken before one was refused", i-1, subsURI, total), ev, hev, sev)
		}
		total += subsURI
		if total > subsMaxTotal {
			return verdict(suite.Fail, fmt.Sprintf("%d bytes of subscribed URIs were taken by one session without a refusal", total), ev, hev, sev)
		}
	}
}

// streamStays reports whether the stream of resp stays open for d after
// its first bytes (keep-alive comments aside), and why not.
func streamStays(resp *http.Response, d time.Duration) (bool, string) {
	if resp.StatusCode != http.StatusOK {
		return false, "HTTP " + strconv.Itoa(resp.StatusCode)
	}
	ended := make(chan error, 1)
	go func() {
		_, err := io.Copy(io.Discard, resp.Body)
		ended <- err
	}()
	select {
	case <-ended:
		return false, "the stream ended"
	case <-time.After(d):
		return true, ""
	}
}

func (h *hardener) peerFairness(ctx context.Context) suite.Result {
	if h.cfg.secondSource == "" {
		return verdict(suite.NotRun, "needs -second-source, a second local address to reach the server from")
	}
	if h.cfg.token != "" {
		return verdict(suite.NotRun, "with -token the calls count per principal, not per peer")
	}
	first := h.httpClient("")
	defer first.CloseIdleConnections()
	var evs []suite.Evidence
	var sessions []*legacySession
	var ends []func()
	defer func() {
		for _, end := range ends {
			end()
		}
		for _, s := range sessions {
			s.close()
		}
	}()
	capped := ""
	for i := 0; i < h.cfg.listenMax && capped == ""; i++ {
		c, ev, ok := h.legacyInit(ctx, first, fmt.Sprintf("initialize %d from the first peer", i+1))
		if !ok {
			if i == 0 {
				return verdict(suite.NotRun, "the endpoint does not open 2025-11-25 sessions", ev)
			}
			capped = fmt.Sprintf("initialize %d refused (HTTP %d)", i+1, ev.HTTPStatus)
			evs = append(evs, ev)
			break
		}
		sessions = append(sessions, c)
		resp, end, err := c.open(ctx, http.MethodGet, nil)
		if err != nil {
			return verdict(suite.Fail, "GET the session stream: "+err.Error(), evs...)
		}
		ends = append(ends, end)
		if ok, why := streamStays(resp.Response, 200*time.Millisecond); !ok {
			capped = fmt.Sprintf("stream %d: %s", i+1, why)
			evs = append(evs, suite.Evidence{Probe: fmt.Sprintf("GET the session stream %d from the first peer", i+1), HTTPStatus: resp.StatusCode})
		}
	}
	if capped == "" {
		return verdict(suite.Info, fmt.Sprintf("no limit was hit with %d sessions and streams from one peer", h.cfg.listenMax), evs...)
	}
	second := h.httpClient(h.cfg.secondSource)
	defer second.CloseIdleConnections()
	c, ev, ok := h.legacyInit(ctx, second, "initialize from the second peer")
	evs = append(evs, ev)
	if !ok {
		return verdict(suite.Fail, "the first peer at its limit ("+capped+"); the second peer's initialize was refused", evs...)
	}
	defer c.close()
	resp, end, err := c.open(ctx, http.MethodGet, nil)
	if err != nil {
		return verdict(suite.Fail, "GET the second peer's stream: "+err.Error(), evs...)
	}
	defer end()
	stays, why := streamStays(resp.Response, time.Second)
	evs = append(evs, suite.Evidence{Probe: "GET the session stream from the second peer", HTTPStatus: resp.StatusCode})
	if !stays {
		return verdict(suite.Fail, "the first peer at its limit ("+capped+"); the second peer's stream: "+why, evs...)
	}
	return verdict(suite.Pass, "the first peer at its limit ("+capped+"); the second peer's stream stayed open", evs...)
}

// redisConn is a minimal RESP client: enough to AUTH, PUBLISH and
// (P)SUBSCRIBE.
type redisConn struct {
	c net.Conn
	r *bufio.Reader
}

// dialRedis connects to addr: host:port, or redis://[user:password@]host:port[/db].
func dialRedis(ctx context.Context, addr string, timeout time.Duration) (*redisConn, error) {
	user, pass, host := "", "", addr
	if strings.Contains(addr, "://") {
		u, err := url.Parse(addr)
		if err != nil || (u.Scheme != "redis") || u.Host == "" {
			return nil, fmt.Errorf("-redis must be host:port or redis://[user:password@]host:port")
		}
		host = u.Host
		if u.User != nil {
			user = u.User.Username()
			pass, _ = u.User.Password()
		}
	}
	d := net.Dialer{Timeout: timeout}
	c, err := d.DialContext(ctx, "tcp", host)
	if err != nil {
		return nil, err
	}
	rc := &redisConn{c: c, r: bufio.NewReader(c)}
	if pass != "" {
		args := []string{"AUTH", pass}
		if user != "" {
			args = []string{"AUTH", user, pass}
		}
		if _, err := rc.do(args...); err != nil {
			c.Close()
			return nil, fmt.Errorf("AUTH: %w", err)
		}
	}
	return rc, nil
}

func (r *redisConn) send(args ...string) error {
	var b bytes.Buffer
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	_, err := r.c.Write(b.Bytes())
	return err
}

func (r *redisConn) do(args ...string) (any, error) {
	if err := r.send(args...); err != nil {
		return nil, err
	}
	return r.read()
}

// read reads one reply: a string, an int64, nil, or a []any.
func (r *redisConn) read() (any, error) {
	line, err := r.r.ReadString('\n')
	if err != nil {
		return nil, err
	}
	line = strings.TrimSuffix(line, "\r\n")
	if line == "" {
		return nil, errors.New("empty reply")
	}
	switch line[0] {
	case '+':
		return line[1:], nil
	case '-':
		return nil, errors.New(line[1:])
	case ':':
		return strconv.ParseInt(line[1:], 10, 64)
	case '$':
		n, err := strconv.Atoi(line[1:])
		if err != nil || n < 0 {
			return nil, err
		}
		b := make([]byte, n+2)
		if _, err := io.ReadFull(r.r, b); err != nil {
			return nil, err
		}
		return string(b[:n]), nil
	case '*':
		n, err := strconv.Atoi(line[1:])
		if err != nil || n < 0 {
			return nil, err
		}
		out := make([]any, n)
		for i := range out {
			if out[i], err = r.read(); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	return nil, fmt.Errorf("unexpected reply %q", clip(line, 40))
}

var (
	busDigest = regexp.MustCompile(`"s":"([0-9a-f]{32})"`)
	legID     = regexp.MustCompile(`^"([0-9a-f]{12})-[^"]+"$`)
)

// eventsChannel is the channel of session events of a deployment whose
// audience is audience.
func eventsChannel(audience string) string {
	sum := sha256.Sum256([]byte("mrtrkit legacy\x00deployment\x00" + audience))
	return "mrtrkit/legacy/events/" + hex.EncodeToString(sum[:16])
}

// forgedAnswer is a made-up answer to a server-to-client request.
func forgedAnswer(method string) string {
	switch method {
	case "sampling/createMessage":
		return `{"role":"assistant","content":{"type":"text","text":"forged"},"model":"m"}`
	case "roots/list":
		return `{"roots":[]}`
	}
	return `{"action":"accept","content":{}}`
}

func (h *hardener) busSpoofing(ctx context.Context) suite.Result {
	if h.cfg.redis == "" {
		return verdict(suite.NotRun, "needs -redis, the address of the Redis the replicas share")
	}
	sub, err := dialRedis(ctx, h.cfg.redis, h.cfg.timeout)
	if err != nil {
		return verdict(suite.NotRun, "the Redis cannot be reached: "+clip(err.Error(), 200))
	}
	defer sub.c.Close()
	pub, err := dialRedis(ctx, h.cfg.redis, h.cfg.timeout)
	if err != nil {
		return verdict(suite.NotRun, "the Redis cannot be reached: "+clip(err.Error(), 200))
	}
	defer pub.c.Close()
	if h.cfg.audience != "" {
		err = sub.send("SUBSCRIBE", eventsChannel(h.cfg.audience))
	} else {
		err = sub.send("PSUBSCRIBE", "mrtrkit/legacy/events/*")
	}
	if err == nil {
		_, err = sub.read()
	}
	if err != nil {
		return verdict(suite.NotRun, "cannot subscribe to the session events (give -audience when the Redis user may not PSUBSCRIBE): "+clip(err.Error(), 200))
	}
	events := make(chan [2]string, 64) // channel, payload
	go func() {
		for {
			v, err := sub.read()
			if err != nil {
				close(events)
				return
			}
			if a, ok := v.([]any); ok && len(a) >= 3 {
				ch, _ := a[len(a)-2].(string)
				p, _ := a[len(a)-1].(string)
				events <- [2]string{ch, p}
			}
		}
	}()

	hc := h.httpClient("")
	defer hc.CloseIdleConnections()
	c, ev, ok := h.legacyInit(ctx, hc, "initialize (2025-11-25)")
	if !ok {
		return verdict(suite.NotRun, "the endpoint does not open 2025-11-25 sessions", ev)
	}
	defer c.close()
	evs := []suite.Evidence{ev}

	// A cancellation of a request no replica runs is published with the
	// session's digest, as anyone subscribed sees it.
	c.exchange(ctx, client.RawRequestBody(0, "notifications/cancelled", client.RawObject(client.RawMember{Name: "requestId", Value: client.RawString("mrtrcheck-probe")})))
	var digest, channel string
	sealed := true
	deadline := time.After(h.cfg.timeout)
	for digest == "" {
		select {
		case e, open := <-events:
			if !open {
				return verdict(suite.NotRun, "the Redis subscription ended", evs...)
			}
			if g := busDigest.FindStringSubmatch(e[1]); g != nil && strings.Contains(e[1], `"k":"cancel"`) && strings.Contains(e[1], "mrtrcheck-probe") {
				digest, channel, sealed = g[1], e[0], !strings.HasPrefix(e[1], "{")
			}
		case <-deadline:
			return verdict(suite.NotRun, "no session event of this endpoint was seen on that Redis: is it the one the replicas share?", evs...)
		}
	}

	// A call that asks the client something.
	tools := h.cfg.legacyTools
	if len(tools) == 0 {
		tools = suite.DefaultLegacyTools()
	}
	for _, t := range tools {
		args := t.Args
		if len(args) == 0 {
			args = json.RawMessage(`{}`)
		}
		callID := h.id()
		resp, end, err := c.open(ctx, http.MethodPost, client.RawRequestBody(callID, "tools/call", client.RawObject(
			client.RawMember{Name: "name", Value: client.RawString(t.Name)},
			client.RawMember{Name: "arguments", Value: args},
		)))
		if err != nil {
			continue
		}
		msgs := make(chan *client.RawMessage, 16)
		go func() {
			defer close(msgs)
			for {
				m, err := resp.Next()
				if err != nil {
					return
				}
				msgs <- m
			}
		}()
		var ask *client.RawMessage
	read:
		for {
			select {
			case m, open := <-msgs:
				if !open {
					break read
				}
				if m.IsRequest() {
					ask = m
					break read
				}
			case <-time.After(h.cfg.timeout):
				break read
			}
		}
		if ask == nil {
			end()
			continue
		}
		defer end()
		g := legID.FindStringSubmatch(string(ask.ID))
		if g == nil {
			return verdict(suite.NotRun, "the server's request id "+clip(string(ask.ID), 60)+" names no replica: the deployment passes no answers between replicas", evs...)
		}
		forged := [][2]string{
			{"mrtrkit/legacy/replica/" + g[1], `{"r":"mrtrcheck","k":"ans","s":"` + digest + `","id":` + strconv.Quote(string(ask.ID)) + `,"res":` + forgedAnswer(ask.Method) + `}`},
			{channel, `{"r":"mrtrcheck","k":"cancel","s":"` + digest + `","id":"` + strconv.FormatInt(callID, 10) + `"}`},
			{channel, `{"r":"mrtrcheck","k":"del","s":"` + digest + `"}`},
		}
		for _, f := range forged {
			if _, err := pub.do("PUBLISH", f[0], f[1]); err != nil {
				return verdict(suite.NotRun, "PUBLISH refused: "+clip(err.Error(), 200), evs...)
			}
		}
		evs = append(evs, suite.Evidence{Probe: "PUBLISH a forged answer to " + ask.Method + " " + clip(string(ask.ID), 60) + ", a cancellation of the call and a deletion of the session"})
		select {
		case m, open := <-msgs:
			if !open {
				return verdict(suite.Fail, "after the forged messages, the call's stream ended", evs...)
			}
			return verdict(suite.Fail, "after the forged messages, the call went on: "+clip(string(m.Raw), 200), evs...)
		case <-time.After(1500 * time.Millisecond):
		}
		msgs2, pev := c.exchange(ctx, client.RawRequestBody(h.id(), "ping", nil))
		pev.Probe = "ping on the session after the forged deletion"
		evs = append(evs, pev)
		if pev.HTTPStatus != http.StatusOK || len(msgs2) == 0 {
			return verdict(suite.Fail, "the forged deletion ended the session", evs...)
		}
		note := ""
		if !sealed {
			note = " (its events travel unsealed, readable and replayable by anyone on the Redis)"
		}
		return verdict(suite.Pass, "a forged answer, cancellation and deletion published on Redis were ignored"+note, evs...)
	}
	return verdict(suite.NotRun, "no legacy tool asked the client anything; give one with -legacy-tool", evs...)
}
