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

// The legacy scenarios check a server that also serves clients of the
// initialize era (MCP 2025-11-25) at the same endpoint: that those clients
// see nothing of 2026-07-28, that the server's own requests (legs) are
// numbered, delivered, cancelled and answered as that era expects, and
// that sessions are refused as it says. They run only when a raw
// initialize, without the _meta of 2026-07-28, is answered 200 with an
// Mcp-Session-Id; otherwise they are NotRun.

// notServed is the reason of every legacy scenario against a server that
// does not serve the initialize era.
const notServed = "server does not serve the initialize era"

var legacyScenarios = []Scenario{
	{
		ID:    "legacy.no-leak",
		Title: "a 2025-11-25 session sees nothing of 2026-07-28, after 1 to N rounds",
		Why: "A client of the initialize era does not know resultType, inputRequests, requestState, ttlMs, cacheScope, the " +
			"server's identity in _meta (io.modelcontextprotocol/serverInfo) or the error codes -32020, -32021 and -32022; " +
			"a bridge that lets them through breaks its parser or makes it retry what it should not. The suite opens a " +
			"session and reads initialize, tools/list, ping and a call of every legacy tool, answering every request the " +
			"server sends for up to the round cap (state-only rounds, which a legacy client never sees, included), then " +
			"calls a tool from a session that declared no capabilities. The calls ask for progress and the session sets a " +
			"log level, so that notifications flow too. No message it receives, leg, notification or result, may carry any of them.",
		run: legacyNoLeak,
	},
	{
		ID:    "legacy.empty-results",
		Title: "ping, logging/setLevel, resources/subscribe and unsubscribe answer exactly {}",
		Why: "These methods have empty results in the initialize era. A result that carries resultType or other members " +
			"shows a modern answer passed through untranslated; strict clients validate it against EmptyResult. Methods the " +
			"server does not advertise at initialize are skipped.",
		run: legacyEmptyResults,
	},
	{
		ID:    "legacy.leg-ids",
		Title: "the server's requests have ids ≥ 1, distinct within the session",
		Why: "A client matches its answers to the server's requests by id. Clients written against the 2025 SDKs treat id 0 " +
			"as absent, and an id used twice in one session sends an answer to the wrong question. The suite calls every " +
			"legacy tool on one session and checks every leg's id.",
		run: legacyLegIDs,
	},
	{
		ID:    "legacy.legs-on-post-stream",
		Title: "the server's requests arrive on the POST's own stream",
		Why: "A client may never open the session's GET stream, or may open it late: the requests a call needs must come on " +
			"the stream of the POST that carries the call, or the call hangs. The suite opens the GET stream too and fails " +
			"the server if a leg of the call comes there.",
		run: legacyLegsOnPost,
	},
	{
		ID:    "legacy.cancel",
		Title: "cancelling a call cancels its open request; the call gets no response",
		Why: "When the client sends notifications/cancelled for its request while the server waits for an answer, the server " +
			"must stop: tell the client, with notifications/cancelled on the call's stream, that its open request is no longer " +
			"wanted, and send no response to the cancelled request. The session must go on working.",
		run: legacyCancel,
	},
	{
		ID:    "legacy.late-answers",
		Title: "late, duplicate and unknown answers get 202; the session still works",
		Why: "A client's answer can arrive after the call ended, twice, after a cancellation, or for an id the server never " +
			"used. Each POST of a response must be accepted with 202: a 4xx makes some clients drop their whole session. " +
			"After all of them a ping must still succeed.",
		run: legacyLateAnswers,
	},
	{
		ID:    "legacy.answer-other-session",
		Title: "an answer posted on another session does not answer a session's request",
		Why: "The server's request ids count from 1 in every session, so another session (another tab, another user of a " +
			"shared gateway) can easily name an open request of this one. Answers must be routed within the session they " +
			"arrive on: an answer from elsewhere must change nothing, and the session's own answer must still complete the call.",
		run: legacyAnswerOtherSession,
	},
	{
		ID:    "legacy.session-unknown",
		Title: "an unknown or tampered session id gets 404 with a JSON-RPC error",
		Why: "404 tells a client of the initialize era to initialize again; any other answer leaves it stuck, and accepting a " +
			"session id the server did not issue (or one with a bit changed) lets a client pick sessions. The body must be a " +
			"JSON-RPC error, which clients parse. A control ping on the genuine session comes first.",
		run: legacySessionUnknown,
	},
	{
		ID:    "legacy.session-deleted",
		Title: "a session ended with DELETE gets 404",
		Why: "A client that ends its session with DELETE expects the id to be dead: a server that keeps serving it keeps " +
			"state and streams alive for nobody, and lets a leaked id be used after logout. A server that does not let " +
			"clients end sessions answers the DELETE 405, and the scenario is not run.",
		run: legacySessionDeleted,
	},
	{
		ID:    "legacy.session-required",
		Title: "a request without Mcp-Session-Id gets 400",
		Why: "A server that requires sessions answers a request without one (other than initialize) with 400. Serving it " +
			"without a session, or answering 404, which tells the client its session ended, is wrong.",
		run: legacySessionRequired,
	},
	{
		ID:    "legacy.error-status",
		Title: "JSON-RPC errors on a live session use HTTP 200",
		Why: "In the initialize era, an error status means a problem with the HTTP exchange or the session (404 ends it). A " +
			"JSON-RPC error for a request the session served (an unknown method, an unknown tool) must come with 200, or " +
			"clients take it for a transport failure and drop the session.",
		run: legacyErrorStatus,
	},
	{
		ID:    "legacy.session-principal",
		Title: "a session is bound to the principal that opened it",
		Why: "A session id travels in a header and leaks into logs; presented by another authenticated principal it must be " +
			"unknown (404), or one user can act in another's session and answer its questions. Needs two bearer tokens; not " +
			"run when the server does not authenticate (a made-up token is served).",
		run: legacySessionPrincipal,
	},
}

// legacyReady probes, once, whether the server serves the initialize era.
// It returns nil when it does, and otherwise the NotRun result every
// legacy scenario reports.
func (r *runner) legacyReady(ctx context.Context) *Result {
	if !r.legacyProbed {
		r.legacyProbed = true
		s, ev, why := r.initialize(ctx, "detection: initialize "+LegacyVersion+" without the _meta of 2026-07-28", r.cfg.Token, r.cfg.Capabilities)
		r.legacyEv = ev
		if s == nil {
			r.legacyWhy = why
		}
	}
	if r.legacyWhy == "" {
		return nil
	}
	res := notRun(notServed+" ("+r.legacyWhy+")", r.legacyEv)
	res.inapplicable = true
	return &res
}

// open opens a session for a scenario, as the main principal with the
// configured capabilities. When none opens, the result says why the
// scenario is not run.
func (r *runner) open(ctx context.Context) (*lsession, *Result) {
	if nr := r.legacyReady(ctx); nr != nil {
		return nil, nr
	}
	s, ev, why := r.initialize(ctx, "initialize "+LegacyVersion, r.cfg.Token, r.cfg.Capabilities)
	if s == nil {
		res := fail("initialize failed although it succeeded at detection: "+why, ev)
		return nil, &res
	}
	return s, nil
}

// legacyTools lists the session's tools (following nextCursor) and
// returns the configured legacy tools it lists, and notes on those it
// does not. When tools/list fails, every configured tool is returned.
func (s *lsession) legacyTools(ctx context.Context) ([]LegacyTool, lcall, []string) {
	listed := map[string]bool{}
	var first lcall
	cursor := ""
	for page := 0; page < 50; page++ {
		params := json.RawMessage(`{}`)
		if cursor != "" {
			params = object(m("cursor", str(cursor)))
		}
		c := s.request(ctx, "tools/list on the session", "tools/list", params, 0)
		if page == 0 {
			first = c
		}
		res, ok := c.result()
		if !ok {
			break
		}
		var list struct {
			Tools []struct {
				Name string `json:"name"`
			} `json:"tools"`
			NextCursor string `json:"nextCursor"`
		}
		_ = json.Unmarshal(res, &list)
		for _, t := range list.Tools {
			listed[t.Name] = true
		}
		if list.NextCursor == "" || list.NextCursor == cursor {
			break
		}
		cursor = list.NextCursor
	}
	var tools []LegacyTool
	var notes []string
	for _, t := range s.r.cfg.LegacyTools {
		if len(listed) > 0 && !listed[t.Name] {
			notes = append(notes, t.Name+" is not listed, skipped")
			continue
		}
		tools = append(tools, t)
	}
	return tools, first, notes
}

// callTool calls t on the session, following up to the round cap. The
// call asks for progress, so that the server's progress notifications
// reach the client too.
func (s *lsession) callTool(ctx context.Context, label string, t LegacyTool) lcall {
	params := object(m("name", str(t.Name)), m("arguments", t.Args),
		m("_meta", object(m("progressToken", str("mrtrcheck-progress-"+strconv.FormatInt(s.r.nextID+1, 10))))))
	return s.request(ctx, label, "tools/call", params, s.r.cfg.LegacyRounds)
}

// modernTrace follows tool over the 2026-07-28 wire for up to max rounds,
// answering what it asks, and reports how many rounds asked and how many of
// them were state-only. ok is false when the modern call did not work.
func (r *runner) modernTrace(ctx context.Context, t LegacyTool, max int) (rounds, stateOnly int, complete, ok bool) {
	var answers, state json.RawMessage
	for rounds <= max {
		rep := r.call(ctx, callSpec{label: "2026-07-28 trace of " + t.Name, tool: t.Name, args: t.Args, answers: answers, state: state})
		switch {
		case rep.ResultType == "input_required":
		case rep.isResult():
			return rounds, stateOnly, true, true
		default:
			return rounds, stateOnly, false, rounds > 0
		}
		rounds++
		if len(rep.inputRequests) == 0 {
			stateOnly++
		}
		a, _, err := answerAll(rep.inputRequests, r.cfg.Answers)
		if err != nil || len(rep.requestState) == 0 {
			return rounds, stateOnly, false, true
		}
		answers = nil
		if len(a) > 0 {
			answers, _ = json.Marshal(a)
		}
		state = rep.requestState
	}
	return rounds, stateOnly, false, true
}

// Members, _meta keys and error codes of 2026-07-28 that a client of the
// initialize era must never receive.
var (
	modernMembers  = []string{"resultType", "inputRequests", "requestState", "ttlMs", "cacheScope"}
	modernMetaKeys = []string{"io.modelcontextprotocol/serverInfo", "io.modelcontextprotocol/subscriptionId"}
	modernCodes    = map[int]bool{-32020: true, -32021: true, -32022: true}
)

// leaksOf returns what of 2026-07-28 message m carries: members of its
// result or params, keys of their _meta, its error code.
func leaksOf(m lmsg) []string {
	var out []string
	if m.Error != nil && modernCodes[m.Error.Code] {
		out = append(out, fmt.Sprintf("error code %d", m.Error.Code))
	}
	body := m.Result
	if m.Method != "" {
		body = m.Params
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(body, &obj) != nil {
		return out
	}
	for _, k := range modernMembers {
		if _, ok := obj[k]; ok {
			out = append(out, k)
		}
	}
	if meta, ok := obj["_meta"]; ok {
		var mm map[string]json.RawMessage
		if json.Unmarshal(meta, &mm) == nil {
			for _, k := range modernMetaKeys {
				if _, ok := mm[k]; ok {
					out = append(out, "_meta "+k)
				}
			}
		}
	}
	return out
}

// describeMsg names a received message for a reason.
func describeMsg(m lmsg, of string) string {
	switch {
	case m.isRequest():
		return fmt.Sprintf("leg %s (%s) of %s", idText(m.ID), m.Method, of)
	case m.isNotification():
		return fmt.Sprintf("notification %s during %s", m.Method, of)
	case m.Error != nil:
		return "error answering " + of
	}
	return "result of " + of
}

// leakCheck collects the leaks of every message of the exchanges it is
// given.
type leakCheck struct {
	messages int
	found    []string
	ev       []Evidence
}

func (l *leakCheck) add(of string, c lcall) {
	l.ev = append(l.ev, c.Evidence)
	for _, msg := range c.msgs {
		l.messages++
		if ls := leaksOf(msg); len(ls) > 0 {
			what := describeMsg(msg, of)
			l.found = append(l.found, what+": "+strings.Join(ls, ", "))
			l.ev = append(l.ev, Evidence{Probe: "received: " + what, Body: clip(string(msg.raw), 300)})
		}
	}
}

func legacyNoLeak(ctx context.Context, r *runner) Result {
	s, nr := r.open(ctx)
	if nr != nil {
		return *nr
	}
	lc := &leakCheck{}
	initMsgs := s.init
	lc.add("initialize", initMsgs)
	tools, list, notes := s.legacyTools(ctx)
	lc.add("tools/list", list)
	lc.add("ping", s.ping(ctx, "ping on the session"))
	if caps := s.capabilities(); len(caps.Logging) > 0 && string(caps.Logging) != "null" {
		// Log messages of the calls reach the client too.
		lc.add("logging/setLevel", s.request(ctx, "logging/setLevel debug on the session", "logging/setLevel", json.RawMessage(`{"level":"debug"}`), 0))
	}

	covered := map[int]bool{}
	var followed []string
	maxRounds := 0
	for _, t := range tools {
		c := s.callTool(ctx, "tools/call "+t.Name+" on the session, answering every leg", t)
		lc.add("tools/call "+t.Name, c)
		desc := fmt.Sprintf("%s %d round(s) of legs", t.Name, c.rounds)
		rounds := c.rounds
		if mr, so, complete, ok := r.modernTrace(ctx, t, r.cfg.LegacyRounds); ok {
			if mr > rounds {
				rounds = mr
			}
			switch {
			case !complete && mr > r.cfg.LegacyRounds:
				desc += fmt.Sprintf(" (more than %d on the 2026-07-28 wire)", r.cfg.LegacyRounds)
			case so > 0 || mr != c.rounds:
				desc += fmt.Sprintf(" (%d on the 2026-07-28 wire, %d state-only)", mr, so)
			}
		}
		if c.capped {
			desc += ", stopped at the cap"
			rounds = r.cfg.LegacyRounds
		}
		if rounds > r.cfg.LegacyRounds {
			rounds = r.cfg.LegacyRounds
		}
		for n := 1; n <= rounds; n++ {
			covered[n] = true
		}
		if rounds > maxRounds {
			maxRounds = rounds
		}
		if _, ok := c.result(); !ok && !c.capped {
			desc += ", no result: " + c.String()
		}
		followed = append(followed, desc)
	}
	// A session that declared nothing: the server must not answer with
	// -32021 (missing capability), which that era does not know.
	if len(tools) > 0 {
		bare, _, why := r.initialize(ctx, "initialize "+LegacyVersion+" declaring no capabilities", r.cfg.Token, json.RawMessage(`{}`))
		if bare != nil {
			bare.bare = true
			c := bare.callTool(ctx, "tools/call "+tools[0].Name+" from the session that declared no capabilities", tools[0])
			lc.add("tools/call "+tools[0].Name+" without capabilities", c)
			if len(c.legs) > 0 {
				notes = append(notes, fmt.Sprintf("the session that declared no capabilities was sent %d request(s) (%s), which it refused",
					len(c.legs), c.legs[0].Method))
			}
		} else {
			notes = append(notes, "a session without capabilities could not be opened: "+why)
		}
	}
	if len(lc.found) > 0 {
		return fail("a 2026-07-28 member, _meta key or error code reached the legacy client: "+strings.Join(lc.found, "; "), lc.ev...)
	}
	if len(tools) == 0 {
		return notRun("no legacy tool to call: "+strings.Join(notes, "; ")+" (set -legacy-tool)", lc.ev...)
	}
	var cov []string
	for n := 1; n <= r.cfg.LegacyRounds; n++ {
		if covered[n] {
			cov = append(cov, strconv.Itoa(n))
		}
	}
	reason := fmt.Sprintf("no 2026-07-28 member, _meta key or error code in %d messages; %s; rounds covered: %s of 1..%d",
		lc.messages, strings.Join(followed, "; "), strings.Join(cov, ", "), r.cfg.LegacyRounds)
	if maxRounds < r.cfg.LegacyRounds {
		reason += fmt.Sprintf(" (no configured tool asks %d rounds: add one with -legacy-tool)", maxRounds+1)
	}
	if len(notes) > 0 {
		reason += "; " + strings.Join(notes, "; ")
	}
	return pass(reason, lc.ev...)
}

// capabilities are the server capabilities of an initialize result that
// the legacy scenarios look at.
type capabilities struct {
	Logging   json.RawMessage `json:"logging"`
	Resources *struct {
		Subscribe bool `json:"subscribe"`
	} `json:"resources"`
}

func (s *lsession) capabilities() capabilities {
	var ir struct {
		Capabilities capabilities `json:"capabilities"`
	}
	_ = json.Unmarshal(s.result, &ir)
	return ir.Capabilities
}

// isEmptyObject reports whether raw is a JSON object with no members.
func isEmptyObject(raw json.RawMessage) bool {
	names := memberNames(raw)
	return names != nil && len(names) == 0
}

func legacyEmptyResults(ctx context.Context, r *runner) Result {
	s, nr := r.open(ctx)
	if nr != nil {
		return *nr
	}
	caps := s.capabilities()
	type probe struct {
		method string
		params json.RawMessage
	}
	probes := []probe{{"ping", nil}}
	var skipped []string
	if len(caps.Logging) > 0 && string(caps.Logging) != "null" {
		probes = append(probes, probe{"logging/setLevel", json.RawMessage(`{"level":"warning"}`)})
	} else {
		skipped = append(skipped, "logging/setLevel (logging not advertised)")
	}
	if caps.Resources != nil && caps.Resources.Subscribe {
		uri := s.firstResource(ctx)
		p := object(m("uri", str(uri)))
		probes = append(probes, probe{"resources/subscribe", p}, probe{"resources/unsubscribe", p})
	} else {
		skipped = append(skipped, "resources/subscribe and unsubscribe (subscribe not advertised)")
	}
	var ev []Evidence
	var bad, good []string
	for _, p := range probes {
		c := s.request(ctx, p.method+" on the session", p.method, p.params, 0)
		ev = append(ev, c.Evidence)
		res, ok := c.result()
		switch {
		case !ok:
			bad = append(bad, p.method+" got no result: "+c.String())
		case !isEmptyObject(res):
			bad = append(bad, fmt.Sprintf("%s answered %s, not {}", p.method, clip(string(res), 120)))
			ev = append(ev, Evidence{Probe: "received: result of " + p.method, Body: clip(string(c.final.raw), 300)})
		default:
			good = append(good, p.method)
		}
	}
	note := ""
	if len(skipped) > 0 {
		note = "; skipped " + strings.Join(skipped, ", ")
	}
	if len(bad) > 0 {
		return fail(strings.Join(bad, "; ")+note, ev...)
	}
	return pass("exactly {}: "+strings.Join(good, ", ")+note, ev...)
}

// firstResource returns the URI of the first resource the session lists,
// or a made-up one.
func (s *lsession) firstResource(ctx context.Context) string {
	c := s.request(ctx, "resources/list on the session", "resources/list", json.RawMessage(`{}`), 0)
	if res, ok := c.result(); ok {
		var list struct {
			Resources []struct {
				URI string `json:"uri"`
			} `json:"resources"`
		}
		if json.Unmarshal(res, &list) == nil && len(list.Resources) > 0 && list.Resources[0].URI != "" {
			return list.Resources[0].URI
		}
	}
	return "mrtrcheck://subscription-probe"
}

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

func noteList(notes []string) string {
	if len(notes) == 0 {
		return ""
	}
	return " (" + strings.Join(notes, "; ") + ")"
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

// firstTool returns the first legacy tool the session lists.
func (s *lsession) firstTool(ctx context.Context) (LegacyTool, []Evidence, *Result) {
	tools, list, notes := s.legacyTools(ctx)
	if len(tools) == 0 {
		res := notRun("no legacy tool to call"+noteList(notes)+" (set -legacy-tool)", list.Evidence)
		return LegacyTool{}, nil, &res
	}
	return tools[0], []Evidence{list.Evidence}, nil
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
		if msg.isRequest() {
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

// startCall sends a tools/call of tool and reads its stream until the
// first leg. It returns the open stream, the call's id and the leg, or a
// result saying why the scenario cannot go on.
func (s *lsession) startCall(ctx context.Context, label string, tool LegacyTool, c *lcall) (*lstream, int64, *lmsg, *Result) {
	id := s.r.id()
	params := object(m("name", str(tool.Name)), m("arguments", tool.Args))
	st := s.r.lopen(ctx, label, http.MethodPost, s.header(), legacyRequest(id, "tools/call", params))
	deadline := time.Now().Add(s.r.cfg.Timeout)
	for msg := range st.until(deadline) {
		c.msgs = append(c.msgs, msg)
		switch {
		case msg.isRequest():
			c.legs = append(c.legs, msg)
			return st, id, &c.legs[len(c.legs)-1], nil
		case msg.answers(id), msg.isResponse() && idAbsent(msg.ID):
			c.final = &c.msgs[len(c.msgs)-1]
			st.close()
			ev := st.ev
			ev.Received = c.summary()
			res := notRun(tool.Name+" answered without sending the client a request: "+ev.String(), ev)
			return nil, 0, nil, &res
		}
	}
	st.close()
	ev := st.ev
	ev.Received = c.summary()
	if ev.TransportError == "" {
		ev.TransportError = st.err
	}
	res := notRun("no leg came on the call's stream, so there is nothing to cancel or answer late (see legacy.legs-on-post-stream): "+ev.String(), ev)
	return nil, 0, nil, &res
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
		if c.msgs[i].answers(id) {
			c.final = &c.msgs[i]
		}
	}
	cs.Received = c.summary()
	ping := s.ping(ctx, "ping on the session after the cancellation")
	ev = append(ev, cs, cev, ping.Evidence)

	cancelled := map[string]bool{}
	for _, msg := range c.msgs {
		if msg.isNotification() && msg.Method == "notifications/cancelled" {
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

// describeLegacyResponse renders a response in a few words.
func describeLegacyResponse(m *lmsg) string {
	if m.Error != nil {
		return fmt.Sprintf("error %d %q", m.Error.Code, clip(m.Error.Message, 60))
	}
	return "result " + describeObject(m.Result)
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
		if msg.isRequest() {
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
		case msg.answers(id):
			c.final = &c.msgs[len(c.msgs)-1]
			moved = "the call completed: " + describeLegacyResponse(c.final)
		case msg.isRequest():
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
