package suite

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"
)

// The legacy scenarios of the server's own requests (legs): their ids,
// the stream they come on, their cancellation, and answers that come late
// or from another session.

func legacyLegIDs(ctx context.Context, r *runner) Result {
	s, nr := r.open(ctx)
	if nr != nil {
		return *nr
	}
	tools, list, notes := s.legacyTools(ctx)
	ev := []Evidence{list.Evidence}
	seen := map[string]string{} // id → the tool whose leg used it first
	var bad []string
	legs := 0
	for _, t := range tools {
		c := s.callTool(ctx, "tools/call "+t.Name+" on the session", t)
		ev = append(ev, c.Evidence)
		for _, leg := range c.legs {
			legs++
			key := idText(leg.ID)
			if why := badLegID(leg.ID); why != "" {
				bad = append(bad, fmt.Sprintf("leg %s (%s) of %s: %s", key, leg.Method, t.Name, why))
			}
			if first, dup := seen[key]; dup {
				bad = append(bad, fmt.Sprintf("id %s used again by a leg of %s (first used by %s)", key, t.Name, first))
			} else {
				seen[key] = t.Name
			}
		}
	}
	if len(bad) > 0 {
		return fail(strings.Join(bad, "; "), ev...)
	}
	if legs == 0 {
		return notRun("no legacy tool sent a request to the client"+noteList(notes), ev...)
	}
	ids := make([]string, 0, len(seen))
	for k := range seen {
		ids = append(ids, k)
	}
	sort.Slice(ids, func(i, j int) bool {
		a, ea := strconv.ParseInt(ids[i], 10, 64)
		b, eb := strconv.ParseInt(ids[j], 10, 64)
		if ea == nil && eb == nil {
			return a < b
		}
		return ids[i] < ids[j]
	})
	return pass(fmt.Sprintf("%d legs over %d calls, ids %s: all ≥ 1 and distinct%s", legs, len(tools), strings.Join(ids, ", "), noteList(notes)), ev...)
}

// badLegID says what is wrong with the id of a leg: an integer below 1,
// an empty string, or not an integer or a string at all.
func badLegID(raw json.RawMessage) string {
	t := strings.TrimSpace(string(raw))
	if strings.HasPrefix(t, `"`) {
		var s string
		if json.Unmarshal(raw, &s) != nil || s == "" {
			return "an empty or malformed string id"
		}
		return ""
	}
	n, err := strconv.ParseInt(t, 10, 64)
	switch {
	case err != nil:
		return "the id is not an integer or a string"
	case n < 1:
		return "the id is below 1"
	}
	return ""
}

// getStream is the session's GET stream, read in the background.
type getStream struct {
	st   *lstream
	msgs []lmsg
	done chan struct{}
}

// openGet opens the session's GET stream and keeps what arrives on it.
func (s *lsession) openGet(ctx context.Context) *getStream {
	h := s.header()
	h.Del("Content-Type")
	h.Set("Accept", "text/event-stream")
	g := &getStream{st: s.r.lopen(ctx, "GET the session's stream", http.MethodGet, h, nil), done: make(chan struct{})}
	go func() {
		defer close(g.done)
		for m := range g.st.msgs {
			g.msgs = append(g.msgs, m)
		}
	}()
	return g
}

// stop closes the GET stream and returns what arrived on it.
func (g *getStream) stop() ([]lmsg, Evidence) {
	g.st.stop()
	<-g.done
	g.st.close()
	return g.msgs, g.st.ev
}

func legacyLegsOnPost(ctx context.Context, r *runner) Result {
	s, nr := r.open(ctx)
	if nr != nil {
		return *nr
	}
	tool, ev, nr := s.firstTool(ctx)
	if nr != nil {
		return *nr
	}
	g := s.openGet(ctx)
	c := s.callTool(ctx, "tools/call "+tool.Name+" on the session, with the GET stream open", tool)
	// Legs sent to the GET stream would arrive while the call waits; give
	// a stream that is slower than the POST a moment.
	time.Sleep(legQuiet)
	gotOnGet, gev := g.stop()
	ev = append(ev, c.Evidence, gev)
	var onGet []string
	for _, msg := range gotOnGet {
		if msg.IsRequest() {
			onGet = append(onGet, fmt.Sprintf("%s %s", msg.Method, idText(msg.ID)))
		}
	}
	getNote := ""
	if gev.HTTPStatus != http.StatusOK {
		getNote = fmt.Sprintf(" (the GET stream was answered %s)", gev.String())
	}
	switch {
	case len(onGet) > 0:
		return fail(fmt.Sprintf("%d leg(s) came on the GET stream instead of the POST's: %s; on the POST: %d",
			len(onGet), strings.Join(onGet, ", "), len(c.legs)), ev...)
	case len(c.legs) > 0:
		return pass(fmt.Sprintf("%d leg(s) on the POST's stream, none on the GET stream%s", len(c.legs), getNote), ev...)
	case c.final != nil:
		return notRun(tool.Name+" completed without sending the client a request: "+c.String(), ev...)
	}
	return fail("no leg and no response on the POST's stream"+getNote+": "+c.String(), ev...)
}

func legacyCancel(ctx context.Context, r *runner) Result {
	s, nr := r.open(ctx)
	if nr != nil {
		return *nr
	}
	tool, ev, nr := s.firstTool(ctx)
	if nr != nil {
		return *nr
	}
	c := lcall{}
	st, id, _, nr := s.startCall(ctx, "tools/call "+tool.Name+", read until its first leg", tool, &c)
	if nr != nil {
		nr.Evidence = append(ev, nr.Evidence...)
		return *nr
	}
	cev := s.cancel(ctx, id, "mrtrcheck: the user cancelled")
	// Read the rest of the call's stream: notifications/cancelled for
	// every open leg, and no response.
	wait := r.cfg.Timeout
	if wait > 5*time.Second {
		wait = 5 * time.Second
	}
	s.drain(st, &c, wait)
	st.close()
	cs := st.ev
	cs.Probe += "; then, after the cancellation, to its end"
	for i := range c.msgs {
		if c.msgs[i].Answers(id) {
			c.final = &c.msgs[i]
		}
	}
	cs.Received = c.summary()
	ping := s.ping(ctx, "ping on the session after the cancellation")
	ev = append(ev, cs, cev, ping.Evidence)

	cancelled := map[string]bool{}
	for _, msg := range c.msgs {
		if msg.IsNotification() && msg.Method == "notifications/cancelled" {
			var p struct {
				RequestID json.RawMessage `json:"requestId"`
			}
			if json.Unmarshal(msg.Params, &p) == nil && len(p.RequestID) > 0 {
				cancelled[idText(p.RequestID)] = true
			}
		}
	}
	var bad []string
	if cev.HTTPStatus != http.StatusAccepted {
		bad = append(bad, "the cancellation was answered "+cev.String()+", not 202")
	}
	if c.final != nil {
		bad = append(bad, "the cancelled request got a response: "+describeLegacyResponse(c.final))
	}
	var missing []string
	for _, l := range c.legs {
		if !cancelled[idText(l.ID)] {
			missing = append(missing, idText(l.ID))
		}
	}
	if len(missing) > 0 {
		bad = append(bad, "no notifications/cancelled on the call's stream for its open leg(s) "+strings.Join(missing, ", "))
	}
	if _, ok := ping.result(); !ok {
		bad = append(bad, "the session no longer answers ping: "+ping.String())
	}
	if len(bad) > 0 {
		return fail(strings.Join(bad, "; "), ev...)
	}
	end := "the stream ended"
	if !c.ended {
		end = "the stream stayed open, without a response"
	}
	ids := make([]string, len(c.legs))
	for i, l := range c.legs {
		ids[i] = idText(l.ID)
	}
	return pass(fmt.Sprintf("cancellation accepted (202); notifications/cancelled for leg(s) %s on the call's stream; no response; %s; ping still answered",
		strings.Join(ids, ", "), end), ev...)
}

func legacyLateAnswers(ctx context.Context, r *runner) Result {
	s, nr := r.open(ctx)
	if nr != nil {
		return *nr
	}
	tool, ev, nr := s.firstTool(ctx)
	if nr != nil {
		return *nr
	}
	var bad, good []string
	send := func(what string, body []byte) {
		c := s.post(ctx, what, body)
		ev = append(ev, c.Evidence)
		if c.HTTPStatus == http.StatusAccepted {
			good = append(good, what)
		} else {
			bad = append(bad, what+" was answered "+c.String()+", not 202")
		}
	}
	send("an answer to id 987654321, which the server never used", object(m("jsonrpc", str("2.0")), m("id", json.RawMessage(`987654321`)), m("result", json.RawMessage(`{}`))))
	send("an error answer to id 987654322, which the server never used", object(m("jsonrpc", str("2.0")), m("id", json.RawMessage(`987654322`)),
		m("error", object(m("code", json.RawMessage(`-32601`)), m("message", str("Method not found"))))))

	// A call whose first leg is answered twice, and once more after the
	// call ended.
	c := lcall{}
	st, id, leg, nr := s.startCall(ctx, "tools/call "+tool.Name+": its first leg answered twice, the rest once, to its end", tool, &c)
	if nr != nil {
		return notRun(nr.Reason, append(ev, nr.Evidence...)...)
	}
	first := *leg
	body := legAnswer(first, false)
	c.answers = append(c.answers, s.answer(ctx, first))
	send("the same answer to leg "+idText(first.ID)+" again (a duplicate), while the call runs", body)
	// Answer the rest of the call's legs as they come, to its end.
	s.follow(ctx, st, id, r.cfg.LegacyRounds, &c)
	ev = append(ev, c.Evidence)
	if _, ok := c.result(); !ok {
		return notRun("the call whose leg was answered twice did not complete, so its leg cannot be answered late: "+c.String(), ev...)
	}
	send("the answer to leg "+idText(first.ID)+" once more, after the call ended", body)

	// A call cancelled while its leg is open, answered afterwards.
	d := lcall{}
	st2, id2, leg2, nr := s.startCall(ctx, "tools/call "+tool.Name+", read until its first leg, then cancelled", tool, &d)
	if nr == nil {
		cev := s.cancel(ctx, id2, "mrtrcheck: cancelled before answering")
		s.drain(st2, &d, 2*time.Second)
		st2.close()
		dev := st2.ev
		dev.Received = d.summary()
		ev = append(ev, dev, cev)
		send("the answer to leg "+idText(leg2.ID)+" after its call was cancelled", legAnswer(*leg2, false))
	} else {
		ev = append(ev, nr.Evidence...)
	}
	ping := s.ping(ctx, "ping on the session after the late answers")
	ev = append(ev, ping.Evidence)
	if _, ok := ping.result(); !ok {
		bad = append(bad, "the session no longer answers ping: "+ping.String())
	}
	if len(bad) > 0 {
		return fail(strings.Join(bad, "; "), ev...)
	}
	return pass(fmt.Sprintf("202 for all %d: %s; ping still answered", len(good), strings.Join(good, "; ")), ev...)
}

func legacyAnswerOtherSession(ctx context.Context, r *runner) Result {
	s, nr := r.open(ctx)
	if nr != nil {
		return *nr
	}
	tool, ev, nr := s.firstTool(ctx)
	if nr != nil {
		return *nr
	}
	other, oev, why := r.initialize(ctx, "initialize a second session", r.cfg.Token, r.cfg.Capabilities)
	ev = append(ev, oev)
	if other == nil {
		return notRun("a second session cannot be opened: "+why, ev...)
	}
	c := lcall{}
	st, id, _, nr := s.startCall(ctx, "tools/call "+tool.Name+" on the first session", tool, &c)
	if nr != nil {
		return notRun(nr.Reason, append(ev, nr.Evidence...)...)
	}
	// The rest of the first round.
	for {
		msg, got, ended := st.next(legQuiet)
		if !got || ended {
			break
		}
		c.msgs = append(c.msgs, msg)
		if msg.IsRequest() {
			c.legs = append(c.legs, msg)
		}
	}
	round := append([]lmsg(nil), c.legs...)
	var ids []string
	for _, leg := range round {
		ids = append(ids, idText(leg.ID))
		pc := other.post(ctx, "the answer to leg "+idText(leg.ID)+" of the first session, posted on the second session", legAnswer(leg, false))
		ev = append(ev, pc.Evidence)
	}
	// Nothing may move on the first session's call: no response, no new
	// round.
	moved := ""
	deadline := time.Now().Add(4 * legQuiet)
	for msg := range st.until(deadline) {
		c.msgs = append(c.msgs, msg)
		switch {
		case msg.Answers(id):
			c.final = &c.msgs[len(c.msgs)-1]
			moved = "the call completed: " + describeLegacyResponse(c.final)
		case msg.IsRequest():
			c.legs = append(c.legs, msg)
			moved = "the call went on to its next request, " + msg.Method + " " + idText(msg.ID)
		}
		if moved != "" {
			break
		}
	}
	if moved != "" {
		st.close()
		cev := st.ev
		cev.Received = c.summary()
		ev = append(ev, cev)
		return fail(fmt.Sprintf("the second session's answers to leg(s) %s were taken for the first session's: %s", strings.Join(ids, ", "), moved), ev...)
	}
	// The first session's own answers still complete the call.
	for _, leg := range round {
		c.answers = append(c.answers, s.answer(ctx, leg))
	}
	s.follow(ctx, st, id, r.cfg.LegacyRounds, &c)
	c.Probe = "tools/call " + tool.Name + " on the first session, answered by the second, then by itself"
	ev = append(ev, c.Evidence)
	if _, ok := c.result(); !ok {
		return fail("after the second session's answers were ignored, the first session's own answers did not complete the call: "+c.String(), ev...)
	}
	return pass(fmt.Sprintf("the second session's answers to leg(s) %s changed nothing; the first session's own answers completed the call", strings.Join(ids, ", ")), ev...)
}
