package suite

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
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

func noteList(notes []string) string {
	if len(notes) == 0 {
		return ""
	}
	return " (" + strings.Join(notes, "; ") + ")"
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
		case msg.IsRequest():
			c.legs = append(c.legs, msg)
			return st, id, &c.legs[len(c.legs)-1], nil
		case msg.Answers(id), msg.IsResponse() && !msg.HasID():
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

// describeLegacyResponse renders a response in a few words.
func describeLegacyResponse(m *lmsg) string {
	if m.Error != nil {
		return fmt.Sprintf("error %d %q", m.Error.Code, clip(m.Error.Message, 60))
	}
	return "result " + describeObject(m.Result)
}
