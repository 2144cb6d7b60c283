package suite

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// The legacy scenarios of sessions: unknown, deleted, missing and
// borrowed session ids, and the HTTP status of JSON-RPC errors on a live
// session.

// sessionControl pings the genuine session: unless it is answered, a 404
// for a bad session id would prove nothing.
func (s *lsession) sessionControl(ctx context.Context) (Evidence, *Result) {
	c := s.ping(ctx, "control: ping on the genuine session")
	if _, ok := c.result(); ok && c.HTTPStatus == http.StatusOK {
		return c.Evidence, nil
	}
	res := notRun("the genuine session does not answer ping either, so a refusal would prove nothing: "+c.String(), c.Evidence)
	return c.Evidence, &res
}

// pingAs pings with the given session id and token.
func (r *runner) pingAs(ctx context.Context, label, token, sid, version string) reply {
	id := r.id()
	return r.send(ctx, probe{label: label, body: legacyRequest(id, "ping", nil), header: r.legacyHeader(token, sid, version), id: id})
}

// expect404 judges a request with a session id the server must not know:
// 404 with a JSON-RPC error body.
func expect404(rep reply) string {
	switch {
	case rep.HTTPStatus != http.StatusNotFound:
		return fmt.Sprintf("answered %s, not 404", legacyString(rep))
	case !rep.isRPCError():
		return "answered 404 without a JSON-RPC error body" + bodyNote(rep)
	}
	return ""
}

func bodyNote(rep reply) string {
	if rep.Body != "" {
		return " (body " + strconv.Quote(clip(rep.Body, 60)) + ")"
	}
	return ""
}

// legacyString renders a reply of the initialize era: a result is
// "result {members}", not a result type.
func legacyString(rep reply) string {
	e := legacyEvidence(rep)
	s := e.String()
	if rep.Body != "" && !rep.isRPCError() && !rep.isResult() {
		s += bodyNote(rep)
	}
	return s
}

// legacyEvidence adapts the evidence of a reply to the initialize era,
// where results have no resultType.
func legacyEvidence(rep reply) Evidence {
	e := rep.Evidence
	if e.ResultType != "" {
		e.ResultType, e.InputKeys = "", nil
		e.Received = "result " + describeObject(rep.result)
	}
	return e
}

func legacySessionUnknown(ctx context.Context, r *runner) Result {
	s, nr := r.open(ctx)
	if nr != nil {
		return *nr
	}
	ctl, nr := s.sessionControl(ctx)
	if nr != nil {
		return *nr
	}
	ev := []Evidence{ctl}
	var bad []string
	madeUp := r.pingAs(ctx, "ping with a made-up Mcp-Session-Id", s.token, randomSessionID(), s.version)
	ev = append(ev, legacyEvidence(madeUp))
	if why := expect404(madeUp); why != "" {
		bad = append(bad, "a made-up session id: "+why)
	}
	tampered, desc, ok := flipBit(s.id, flipMiddle)
	if ok {
		rep := r.pingAs(ctx, "ping with the session id, "+desc, s.token, tampered, s.version)
		ev = append(ev, legacyEvidence(rep))
		if why := expect404(rep); why != "" {
			bad = append(bad, "a tampered session id: "+why)
		}
	}
	if len(bad) > 0 {
		return fail(strings.Join(bad, "; "), ev...)
	}
	what := "a made-up session id"
	if ok {
		what += " and a tampered one"
	}
	return pass(what+": 404 with a JSON-RPC error", ev...)
}

func legacySessionDeleted(ctx context.Context, r *runner) Result {
	s, nr := r.open(ctx)
	if nr != nil {
		return *nr
	}
	ctl, nr := s.sessionControl(ctx)
	if nr != nil {
		return *nr
	}
	h := s.header()
	h.Del("Content-Type")
	del := r.send(ctx, probe{label: "DELETE the session", method: http.MethodDelete, header: h})
	ev := []Evidence{ctl, legacyEvidence(del)}
	switch {
	case del.HTTPStatus == http.StatusMethodNotAllowed:
		res := notRun("the server does not let clients end sessions (DELETE answered 405), as it may", ev...)
		res.inapplicable = true
		return res
	case del.HTTPStatus < 200 || del.HTTPStatus >= 300:
		return fail("DELETE of a live session was answered "+legacyString(del)+", not 2xx", ev...)
	}
	after := r.pingAs(ctx, "ping with the deleted session's id", s.token, s.id, s.version)
	ev = append(ev, legacyEvidence(after))
	if why := expect404(after); why != "" {
		return fail("after DELETE, the session id was "+why, ev...)
	}
	return pass(fmt.Sprintf("DELETE answered %d; then 404 with a JSON-RPC error", del.HTTPStatus), ev...)
}

func legacySessionRequired(ctx context.Context, r *runner) Result {
	s, nr := r.open(ctx)
	if nr != nil {
		return *nr
	}
	ctl, nr := s.sessionControl(ctx)
	if nr != nil {
		return *nr
	}
	rep := r.pingAs(ctx, "ping without Mcp-Session-Id", s.token, "", s.version)
	ev := []Evidence{ctl, legacyEvidence(rep)}
	switch {
	case rep.HTTPStatus == http.StatusBadRequest && rep.isRPCError():
		return pass("400 with a JSON-RPC error", ev...)
	case rep.HTTPStatus == http.StatusBadRequest:
		return pass("400 (without a JSON-RPC error body"+bodyNote(rep)+")", ev...)
	case rep.isResult():
		return fail("served without a session: "+legacyString(rep), ev...)
	}
	return fail("answered "+legacyString(rep)+", not 400", ev...)
}

func legacyErrorStatus(ctx context.Context, r *runner) Result {
	s, nr := r.open(ctx)
	if nr != nil {
		return *nr
	}
	type errProbe struct {
		what, method string
		params       json.RawMessage
	}
	probes := []errProbe{
		{"an unknown method", "mrtrcheck/no-such-method", json.RawMessage(`{}`)},
		{"tools/call of an unknown tool", "tools/call", json.RawMessage(`{"name":"mrtrcheck_no_such_tool","arguments":{}}`)},
		{"prompts/get of an unknown prompt", "prompts/get", json.RawMessage(`{"name":"mrtrcheck_no_such_prompt"}`)},
		{"resources/read of an unknown resource", "resources/read", json.RawMessage(`{"uri":"mrtrcheck://no-such-resource"}`)},
	}
	var ev []Evidence
	var bad, good, results []string
	for _, p := range probes {
		c := s.request(ctx, p.what+" on the session", p.method, p.params, 0)
		ev = append(ev, c.Evidence)
		switch {
		case c.final != nil && c.final.Error != nil && c.HTTPStatus == http.StatusOK:
			good = append(good, fmt.Sprintf("%s (%d)", p.what, c.final.Error.Code))
		case c.final != nil && c.final.Error != nil:
			bad = append(bad, fmt.Sprintf("%s: error %d with HTTP %d", p.what, c.final.Error.Code, c.HTTPStatus))
		case c.final != nil:
			results = append(results, p.what)
		default:
			if c.HTTPStatus >= 400 {
				bad = append(bad, fmt.Sprintf("%s: HTTP %d without a JSON-RPC response", p.what, c.HTTPStatus))
			}
		}
	}
	note := ""
	if len(results) > 0 {
		note = "; answered with a result: " + strings.Join(results, ", ")
	}
	switch {
	case len(bad) > 0:
		return fail("a JSON-RPC error on a live session came with an error status: "+strings.Join(bad, "; ")+note, ev...)
	case len(good) == 0:
		return notRun("no probe got a JSON-RPC error"+note, ev...)
	}
	return pass("HTTP 200 for every JSON-RPC error: "+strings.Join(good, ", ")+note, ev...)
}

func legacySessionPrincipal(ctx context.Context, r *runner) Result {
	if nr := r.legacyReady(ctx); nr != nil {
		return *nr
	}
	if r.cfg.Token == "" || r.cfg.OtherToken == "" {
		res := notRun("needs two principals: set a token and another token")
		return res
	}
	// A server that serves a made-up token authenticates nobody: its
	// sessions have no principal to be bound to.
	bogus, _, _ := r.initialize(ctx, "initialize with a made-up bearer token", "mrtrcheck-not-a-token-"+randomHex(8), r.cfg.Capabilities)
	if bogus != nil {
		res := notRun("the server does not authenticate: a made-up bearer token opened a session", bogus.init.Evidence)
		res.inapplicable = true
		return res
	}
	a, nr := r.open(ctx)
	if nr != nil {
		return *nr
	}
	b, bev, why := r.initialize(ctx, "initialize as the other principal", r.cfg.OtherToken, r.cfg.Capabilities)
	if b == nil {
		return notRun("the other principal cannot open a session: "+why, bev)
	}
	ctlA := r.pingAs(ctx, "control: ping on the first principal's session, as the first principal", a.token, a.id, a.version)
	ctlB := r.pingAs(ctx, "control: ping on the other principal's session, as the other principal", b.token, b.id, b.version)
	ev := []Evidence{a.init.Evidence, b.init.Evidence, legacyEvidence(ctlA), legacyEvidence(ctlB)}
	if !ctlA.isResult() || !ctlB.isResult() {
		return notRun("a principal's own session does not answer ping, so a refusal would prove nothing", ev...)
	}
	var bad, notes []string
	for _, x := range []struct {
		what         string
		token        string
		sess         *lsession
		wantNotFound bool
	}{
		{"the first principal's session presented by the other principal", b.token, a, true},
		{"the other principal's session presented by the first principal", a.token, b, true},
	} {
		rep := r.pingAs(ctx, "ping on "+x.what, x.token, x.sess.id, x.sess.version)
		ev = append(ev, legacyEvidence(rep))
		switch s := rep.HTTPStatus; {
		case s == http.StatusNotFound:
		case s >= 400 && s < 500:
			notes = append(notes, fmt.Sprintf("%s: refused with %d (404 expected)", x.what, s))
		default:
			bad = append(bad, x.what+": "+legacyString(rep))
		}
	}
	if len(bad) > 0 {
		return fail("a session served another principal: "+strings.Join(bad, "; "), ev...)
	}
	reason := "each principal's session is unknown (404) to the other"
	if len(notes) > 0 {
		reason = "each principal's session is refused to the other: " + strings.Join(notes, "; ")
	}
	return pass(reason, ev...)
}
