package suite

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"iter"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/mrtrkit/mrtrkit/client"
)

// This file is the suite's client of the initialize era (MCP 2025-11-25):
// initialize opens a session whose id travels in Mcp-Session-Id, every
// later request carries it and MCP-Protocol-Version, and while a request
// runs the server may send requests of its own (legs) on the response
// stream, which the client answers with POSTed JSON-RPC responses.

// LegacyVersion is the revision of the initialize era the legacy scenarios
// speak.
const LegacyVersion = "2025-11-25"

// hdrSession carries the session id of the initialize era.
const hdrSession = "Mcp-Session-Id"

// legQuiet is how long the client waits, after a leg arrives, for more
// legs of the same round before it answers them all: the legs of one
// round are sent together, so a pause ends the round.
const legQuiet = 150 * time.Millisecond

// lmsg is one JSON-RPC message the legacy client received, as the
// client's raw layer reads it.
type lmsg = client.RawMessage

// idText renders a JSON-RPC id for a reason or a lookup: digits for an
// integer, a quoted string otherwise.
func idText(raw json.RawMessage) string {
	t := bytes.TrimSpace(raw)
	var n json.Number
	dec := json.NewDecoder(bytes.NewReader(t))
	dec.UseNumber()
	if len(t) > 0 && t[0] != '"' && dec.Decode(&n) == nil {
		return n.String()
	}
	var s string
	if json.Unmarshal(t, &s) == nil {
		return strconv.Quote(s)
	}
	return string(t)
}

// lstream is one HTTP exchange of the legacy client whose response is
// read as it comes: the messages of a JSON body, or of an event stream
// one event at a time.
type lstream struct {
	ev     Evidence
	header http.Header // of the response
	msgs   chan lmsg   // closed when the body ends
	stop   context.CancelFunc
	done   chan struct{} // closed when the reader has returned
	start  time.Time
	err    string // why reading ended early, once done is closed
	body   string // the start of a body without a JSON-RPC message, once done is closed
	ended  bool   // the body ended while until was reading it
}

// lopen sends an HTTP request and starts reading its response. The
// exchange is bounded by Config.Timeout; close it when done.
func (r *runner) lopen(ctx context.Context, label, method string, hdr http.Header, body []byte) *lstream {
	ctx, cancel := context.WithTimeout(ctx, r.cfg.Timeout)
	s := &lstream{ev: Evidence{Probe: label}, msgs: make(chan lmsg, 256), stop: cancel, done: make(chan struct{}), start: time.Now()}
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, r.cfg.URL, rd)
	if err != nil {
		s.ev.TransportError = err.Error()
		close(s.msgs)
		close(s.done)
		return s
	}
	req.Header = hdr
	resp, err := client.RawDo(r.client, req)
	if err != nil {
		s.ev.TransportError = describeTransportError(ctx, err)
		s.ev.ElapsedMS = time.Since(s.start).Milliseconds()
		close(s.msgs)
		close(s.done)
		return s
	}
	s.ev.HTTPStatus = resp.StatusCode
	s.header = resp.Header
	s.ev.ContentType = resp.ContentType
	go func() {
		defer close(s.done)
		defer close(s.msgs)
		defer resp.Close()
		got := 0
		for {
			m, err := resp.Next()
			if err != nil {
				if err != io.EOF {
					s.err = describeTransportError(ctx, err)
				}
				break
			}
			got++
			select {
			case s.msgs <- *m:
			case <-ctx.Done():
				return
			}
		}
		if got == 0 && resp.ContentType != "text/event-stream" && len(bytes.TrimSpace(resp.Seen())) > 0 {
			s.body = clip(string(resp.Seen()), 200)
		}
	}()
	return s
}

// next waits up to wait for the next message. ended reports that the
// body has ended (or the exchange timed out): nothing more will come.
func (s *lstream) next(wait time.Duration) (m lmsg, got, ended bool) {
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case m, ok := <-s.msgs:
		return m, ok, !ok
	case <-t.C:
		return lmsg{}, false, false
	}
}

// until yields the messages of the stream as they come, until its body
// ends (then s.ended is set) or deadline passes.
func (s *lstream) until(deadline time.Time) iter.Seq[lmsg] {
	return func(yield func(lmsg) bool) {
		for time.Now().Before(deadline) {
			msg, got, ended := s.next(time.Until(deadline))
			if ended {
				s.ended = true
				return
			}
			if got && !yield(msg) {
				return
			}
		}
	}
}

// close ends the exchange and waits for its reader.
func (s *lstream) close() {
	s.stop()
	for range s.msgs {
	}
	<-s.done
	if s.body != "" && s.ev.Body == "" {
		s.ev.Body = s.body
	}
	if s.ev.ElapsedMS == 0 {
		s.ev.ElapsedMS = time.Since(s.start).Milliseconds()
	}
}

// lsession is a session of the initialize era, as one principal holds it.
type lsession struct {
	r       *runner
	token   string // the bearer token sent; "" for none
	id      string // Mcp-Session-Id
	version string // the negotiated protocol version
	result  json.RawMessage
	init    lcall // the initialize exchange
	bare    bool  // the client declared no capabilities: it refuses every leg
}

// header returns the headers of a POST on the session.
func (s *lsession) header() http.Header {
	return s.r.legacyHeader(s.token, s.id, s.version)
}

// legacyHeader returns the headers of a POST of the initialize era: no
// Mcp-Method, no Mcp-Name; the session id and the version when given.
func (r *runner) legacyHeader(token, sid, version string) http.Header {
	h := client.RawHeader(version, "", "")
	if sid != "" {
		h[hdrSession] = []string{sid}
	}
	return withToken(h, token)
}

// legacyRequest renders a JSON-RPC request of the initialize era: no
// _meta of 2026-07-28.
func legacyRequest(id int64, method string, params json.RawMessage) []byte {
	return client.RawRequestBody(id, method, params)
}

// legacyNotification renders a JSON-RPC notification.
func legacyNotification(method string, params json.RawMessage) []byte {
	return client.RawRequestBody(0, method, params)
}

// lcall is one request of the legacy client, driven to its end: every
// message received on its response, the legs among them, the response.
type lcall struct {
	Evidence
	header  http.Header
	msgs    []lmsg
	legs    []lmsg
	final   *lmsg
	rounds  int   // rounds of legs answered
	answers []int // HTTP status of each POSTed answer
	capped  bool  // the suite stopped following at the round cap
	ended   bool  // the response body ended
}

// result returns the result of the response, if it is one.
func (c *lcall) result() (json.RawMessage, bool) {
	if c.final == nil || c.final.Error != nil || c.final.Result == nil {
		return nil, false
	}
	return c.final.Result, true
}

// initialize opens a session with caps as the principal of token. It
// returns the session, or nil and why none was opened, and the evidence of
// the initialize exchange either way.
func (r *runner) initialize(ctx context.Context, label, token string, caps json.RawMessage) (*lsession, Evidence, string) {
	s := &lsession{r: r, token: token}
	params := object(
		m("protocolVersion", str(LegacyVersion)),
		m("capabilities", caps),
		m("clientInfo", json.RawMessage(`{"name":"mrtrcheck","version":"1"}`)),
	)
	c := s.request(ctx, label, "initialize", params, 0)
	s.init = c
	sid := ""
	if vs := c.header[hdrSession]; len(vs) == 1 {
		sid = vs[0]
	}
	res, ok := c.result()
	switch {
	case c.HTTPStatus == 0:
		return nil, c.Evidence, "no answer to initialize: " + c.String()
	case c.HTTPStatus != http.StatusOK:
		return nil, c.Evidence, "initialize was answered " + c.String()
	case !ok:
		return nil, c.Evidence, "initialize got no result: " + c.String()
	case sid == "":
		return nil, c.Evidence, "initialize was answered without an Mcp-Session-Id header"
	}
	var ir struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	_ = json.Unmarshal(res, &ir)
	if ir.ProtocolVersion == "" {
		return nil, c.Evidence, "the initialize result names no protocolVersion"
	}
	s.id, s.version, s.result = sid, ir.ProtocolVersion, res
	// notifications/initialized; its answer is not judged here.
	st := r.lopen(ctx, "notifications/initialized", http.MethodPost, s.header(), legacyNotification("notifications/initialized", nil))
	st.close()
	return s, c.Evidence, ""
}

// request sends a request on the session and drives it to its response,
// answering the legs the server sends meanwhile, one round at a time, for
// up to follow rounds; at the next round it cancels the request instead.
func (s *lsession) request(ctx context.Context, label, method string, params json.RawMessage, follow int) lcall {
	id := s.r.id()
	st := s.r.lopen(ctx, label, http.MethodPost, s.header(), legacyRequest(id, method, params))
	c := lcall{}
	s.follow(ctx, st, id, follow, &c)
	return c
}

// follow reads st, the response to request id, to its end, as request
// describes, adding what it sees to c.
func (s *lsession) follow(ctx context.Context, st *lstream, id int64, follow int, c *lcall) {
	defer func() {
		st.close()
		ev := st.ev
		if c.final == nil && ev.TransportError == "" && st.err != "" {
			ev.TransportError = st.err
		}
		if c.final != nil && c.final.Error != nil {
			ev.Error = c.final.Error
		}
		ev.Received = c.summary()
		c.Evidence = ev
		c.header = st.header
	}()
	var pending []lmsg
	deadline := time.Now().Add(s.r.cfg.Timeout)
	for {
		wait := time.Until(deadline)
		if len(pending) > 0 && wait > legQuiet {
			wait = legQuiet
		}
		if wait <= 0 {
			if c.final == nil && st.ev.TransportError == "" {
				st.ev.TransportError = "timed out"
			}
			return
		}
		msg, got, ended := st.next(wait)
		switch {
		case ended:
			c.ended = true
			return
		case !got && len(pending) > 0:
			// The round is complete: answer it, or stop at the cap.
			if c.rounds >= follow {
				c.capped = true
				s.cancel(ctx, id, "mrtrcheck: round cap reached")
				s.drain(st, c, 2*time.Second)
				return
			}
			c.rounds++
			for _, leg := range pending {
				c.answers = append(c.answers, s.answer(ctx, leg))
			}
			pending = nil
			continue
		case !got:
			continue
		}
		c.msgs = append(c.msgs, msg)
		switch {
		case msg.Answers(id), msg.IsResponse() && !msg.HasID():
			c.final = &c.msgs[len(c.msgs)-1]
			return
		case msg.IsRequest():
			c.legs = append(c.legs, msg)
			pending = append(pending, msg)
		}
	}
}

// drain reads what is left of st for up to d, keeping it in c.
func (s *lsession) drain(st *lstream, c *lcall, d time.Duration) {
	for msg := range st.until(time.Now().Add(d)) {
		c.msgs = append(c.msgs, msg)
		if msg.IsRequest() {
			c.legs = append(c.legs, msg)
		}
	}
	if st.ended {
		c.ended = true
	}
}

// answer answers a leg as a client that declared what it was asked for
// would (a filled form, a model reply, a root), or with -32601 for a
// method it does not know or a session that declared nothing, and returns
// the HTTP status of the POST.
func (s *lsession) answer(ctx context.Context, leg lmsg) int {
	body := legAnswer(leg, s.bare)
	st := s.r.lopen(ctx, "answer to "+leg.Method+" "+idText(leg.ID), http.MethodPost, s.header(), body)
	st.close()
	return st.ev.HTTPStatus
}

// legAnswer renders the client's response to a leg: an answer made up
// from the request, or, when refuse is set or the suite cannot answer it,
// the error -32601.
func legAnswer(leg lmsg, refuse bool) []byte {
	params := leg.Params
	if len(params) == 0 {
		params = json.RawMessage(`{}`)
	}
	res, err := answerOne(object(m("method", str(leg.Method)), m("params", params)))
	if err != nil || refuse {
		return client.RawResponseBody(leg.ID, nil, &client.RPCError{Code: -32601, Message: "Method not found"})
	}
	return client.RawResponseBody(leg.ID, res, nil)
}

// post sends one message on the session and returns the exchange, read
// to its end (a response to a request id is not looked for: use request).
func (s *lsession) post(ctx context.Context, label string, body []byte) lcall {
	st := s.r.lopen(ctx, label, http.MethodPost, s.header(), body)
	c := lcall{}
	s.drain(st, &c, s.r.cfg.Timeout)
	st.close()
	c.Evidence = st.ev
	c.Evidence.Received = c.summary()
	c.header = st.header
	return c
}

// cancel sends notifications/cancelled for request id and returns the
// HTTP status it got.
func (s *lsession) cancel(ctx context.Context, id int64, reason string) Evidence {
	body := legacyNotification("notifications/cancelled", object(
		m("requestId", json.RawMessage(strconv.FormatInt(id, 10))),
		m("reason", str(reason)),
	))
	c := s.post(ctx, fmt.Sprintf("notifications/cancelled for request %d", id), body)
	return c.Evidence
}

// ping sends ping on the session.
func (s *lsession) ping(ctx context.Context, label string) lcall {
	return s.request(ctx, label, "ping", nil, 0)
}

// summary describes in one line what came back: the legs and notifications
// and the response.
func (c *lcall) summary() string {
	var parts []string
	if len(c.legs) > 0 {
		var ids, methods []string
		for _, l := range c.legs {
			ids = append(ids, idText(l.ID))
			methods = append(methods, l.Method)
		}
		p := fmt.Sprintf("%d leg(s) (id %s: %s)", len(c.legs), strings.Join(ids, ", "), strings.Join(methods, ", "))
		if c.rounds > 0 {
			p += fmt.Sprintf(" in %d round(s)", c.rounds)
		}
		if len(c.answers) > 0 {
			p += ", answers got HTTP " + joinInts(c.answers)
		}
		if c.capped {
			p += ", the suite stopped at the round cap"
		}
		parts = append(parts, p)
	}
	var notes []string
	for _, n := range c.msgs {
		if n.IsNotification() {
			notes = append(notes, n.Method)
		}
	}
	if len(notes) > 0 {
		parts = append(parts, "notifications "+strings.Join(notes, ", "))
	}
	if c.final != nil && c.final.Error == nil {
		parts = append(parts, "result "+describeObject(c.final.Result))
	}
	return strings.Join(parts, "; ")
}

// describeObject names the members of a JSON object: {} or {a, b}.
func describeObject(raw json.RawMessage) string {
	names := memberNames(raw)
	if names == nil {
		return clip(string(raw), 40)
	}
	return "{" + strings.Join(names, ", ") + "}"
}

// memberNames returns the member names of a JSON object, sorted; nil when
// raw is not an object.
func memberNames(raw json.RawMessage) []string {
	var obj map[string]json.RawMessage
	if json.Unmarshal(raw, &obj) != nil || obj == nil {
		return nil
	}
	names := make([]string, 0, len(obj))
	for k := range obj {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}

func joinInts(v []int) string {
	seen := map[int]int{}
	var order []int
	for _, x := range v {
		if seen[x] == 0 {
			order = append(order, x)
		}
		seen[x]++
	}
	parts := make([]string, len(order))
	for i, x := range order {
		parts[i] = strconv.Itoa(x)
		if seen[x] > 1 {
			parts[i] += fmt.Sprintf(" ×%d", seen[x])
		}
	}
	return strings.Join(parts, ", ")
}

// randomSessionID returns a session id no server issued: 48 random bytes
// in base64url.
func randomSessionID() string {
	b := make([]byte, 48)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}
