package suite

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/mrtrkit/mrtrkit/client"
)

// The legacy scenarios of what a client of the initialize era receives:
// no member, _meta key or error code of 2026-07-28 (legacy.no-leak), and
// the exact empty results of its era (legacy.empty-results).

// modernTrace follows tool over the 2026-07-28 wire for up to max rounds,
// as an ordinary client does (package client, answering what it asks as
// the suite answers the legs of the initialize era), and reports how many
// rounds asked and how many of them were state-only. ok is false when the
// modern call did not work.
func (r *runner) modernTrace(ctx context.Context, t LegacyTool, max int) (rounds, stateOnly int, complete, ok bool) {
	c, err := r.connect(ctx, client.WithMaxRounds(max))
	if err != nil {
		return 0, 0, false, false
	}
	defer c.Close()
	// Each exchange is bounded by Config.Timeout, as the suite's own are.
	cctx, cancel := context.WithTimeout(ctx, time.Duration(max+2)*r.cfg.Timeout)
	defer cancel()
	res, err := c.CallTool(cctx, t.Name, t.Args)
	var ce *client.Error
	switch {
	case err == nil:
		for _, keys := range res.Asked {
			if len(keys) == 0 {
				stateOnly++
			}
		}
		return res.Rounds, stateOnly, true, true
	case errors.Is(err, client.ErrTooManyRounds):
		return max + 1, 0, false, true
	case errors.As(err, &ce):
		return ce.Round, 0, false, ce.Round > 0
	}
	return 0, 0, false, false
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
	case m.IsRequest():
		return fmt.Sprintf("leg %s (%s) of %s", idText(m.ID), m.Method, of)
	case m.IsNotification():
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
			l.ev = append(l.ev, Evidence{Probe: "received: " + what, Body: clip(string(msg.Raw), 300)})
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
			ev = append(ev, Evidence{Probe: "received: result of " + p.method, Body: clip(string(c.final.Raw), 300)})
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
