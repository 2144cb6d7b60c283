//go:build affinity

// Package affinity proves the multi-replica recipe of docs/deployment.md:
// two fixture servers sharing one key ring behind nginx, which hashes
// Mcp-Session-Id consistently across them. It needs the processes that
// run.sh starts and describes to it in AFFINITY_* variables, so it is
// built only with -tags affinity:
//
//	bash conformance/affinity/run.sh
//
// nginx adds X-Affinity-Upstream ($upstream_addr) to every response it
// proxies, which says which replica served each request; every count is
// checked against the replicas' own access logs (the fixture's -v lines),
// so that what nginx claims is also what the replicas saw.
package affinity

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mrtrkit/mrtrkit/mrtr/mrtrtest/stream"
)

const (
	legacyVersion  = "2025-11-25"
	modernVersion  = "2026-07-28"
	upstreamHeader = "X-Affinity-Upstream"

	// waitMessage bounds the wait for the next message of a response.
	waitMessage = 10 * time.Second
	// waitLog bounds the wait for a replica's log to show a request: the
	// fixture writes its access-log line after the response is sent.
	waitLog = 5 * time.Second

	// Sessions of TestBridgedCallsKeepAffinity: at least minSessions, and
	// more until each replica holds minPerReplica calls and one session
	// minted on a replica has run its call on the other, at most
	// maxSessions.
	minSessions   = 6
	minPerReplica = 2
	maxSessions   = 40
)

// replica is one fixture process.
type replica struct {
	name string // A or B
	addr string // host:port, as nginx's $upstream_addr names it
	url  string // its endpoint, to be called directly
	log  string // its stderr (the fixture runs with -v)
}

var (
	proxyURL string
	replicas [2]*replica

	statsMu sync.Mutex
	stats   = map[string]int{}
)

func count(key string, n int) {
	statsMu.Lock()
	stats[key] += n
	statsMu.Unlock()
}

func TestMain(m *testing.M) {
	proxyURL = os.Getenv("AFFINITY_PROXY_URL")
	for i, name := range []string{"A", "B"} {
		addr := os.Getenv("AFFINITY_REPLICA_" + name)
		logPath := os.Getenv("AFFINITY_LOG_" + name)
		if addr == "" || logPath == "" {
			proxyURL = ""
			break
		}
		replicas[i] = &replica{name: name, addr: addr, url: "http://" + addr + "/mcp", log: logPath}
	}
	if proxyURL == "" {
		fmt.Fprintln(os.Stderr, "affinity: AFFINITY_PROXY_URL, AFFINITY_REPLICA_{A,B} and AFFINITY_LOG_{A,B} are not set; run conformance/affinity/run.sh")
		os.Exit(2)
	}
	code := m.Run()
	if path := os.Getenv("AFFINITY_STATS"); path != "" {
		var b strings.Builder
		for _, k := range []string{"sessions", "home_A", "home_B", "minted_A", "minted_B", "served_elsewhere", "answers_via_proxy", "direct_lists", "misrouted_answers", "modern_rounds"} {
			fmt.Fprintf(&b, "%s=%d ", k, stats[k])
		}
		_ = os.WriteFile(path, []byte(strings.TrimSpace(b.String())+"\n"), 0o644)
	}
	os.Exit(code)
}

func byAddr(addr string) *replica {
	for _, r := range replicas {
		if r.addr == addr {
			return r
		}
	}
	return nil
}

func other(r *replica) *replica {
	if r == replicas[0] {
		return replicas[1]
	}
	return replicas[0]
}

// message is one JSON-RPC message, as much of it as the test reads.
type message struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   json.RawMessage `json:"error,omitempty"`
}

func (m message) isRequest() bool      { return m.Method != "" && len(m.ID) > 0 }
func (m message) isNotification() bool { return m.Method != "" && len(m.ID) == 0 }

// exchange is one HTTP request and its response, read message by message.
type exchange struct {
	what     string
	status   int
	header   http.Header
	upstream *replica // the replica nginx says served it; nil when sent directly
	msgs     chan message
	errc     chan error
	body     io.Closer
}

var client = &http.Client{Timeout: 60 * time.Second}

// send POSTs body to url with hdr and the headers every POST needs. When
// the request went through nginx, the replica that served it must be
// named by nginx, and be exactly one of the two.
func send(t *testing.T, what, url string, hdr map[string]string, body any) *exchange {
	t.Helper()
	b, err := json.Marshal(body)
	require.NoErrorf(t, err, "%s: encoding the body", what)
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(b))
	require.NoErrorf(t, err, "%s", what)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := client.Do(req)
	require.NoErrorf(t, err, "%s: POST %s", what, url)
	x := &exchange{what: what, status: resp.StatusCode, header: resp.Header, msgs: make(chan message, 16), errc: make(chan error, 1), body: resp.Body}
	t.Cleanup(func() { resp.Body.Close() })
	if url == proxyURL {
		up := resp.Header.Get(upstreamHeader)
		x.upstream = byAddr(up)
		if x.upstream == nil {
			require.FailNow(t, fmt.Sprintf("%s: through nginx, %s is %q, not exactly one of the replicas %s and %s (status %d)", what, upstreamHeader, up, replicas[0].addr, replicas[1].addr, resp.StatusCode))
		}
	}
	go x.read(resp)
	return x
}

// read delivers the messages of the response: its JSON body, or each
// event of its SSE stream.
func (x *exchange) read(resp *http.Response) {
	defer close(x.msgs)
	err := stream.Each(resp, func(raw []byte) error {
		var m message
		if err := json.Unmarshal(raw, &m); err != nil {
			return fmt.Errorf("%q is not a JSON-RPC message: %v", raw, err)
		}
		x.msgs <- m
		return nil
	})
	if err != nil {
		x.errc <- err
	}
}

// next returns the next message of the response.
func (x *exchange) next(t *testing.T) message {
	t.Helper()
	select {
	case m, ok := <-x.msgs:
		if ok {
			return m
		}
		select {
		case err := <-x.errc:
			require.FailNow(t, fmt.Sprintf("%s: reading the response: %v", x.what, err))
		default:
		}
		require.FailNow(t, fmt.Sprintf("%s: the response ended without the expected message", x.what))
	case <-time.After(waitMessage):
		require.FailNow(t, fmt.Sprintf("%s: no message within %s", x.what, waitMessage))
	}
	return message{}
}

// wantStatus checks the status of an exchange.
func (x *exchange) wantStatus(t *testing.T, want int) {
	t.Helper()
	if x.status != want {
		var body string
		select {
		case m, ok := <-x.msgs:
			if ok {
				b, _ := json.Marshal(m)
				body = string(b)
			}
		case <-time.After(time.Second):
		}
		require.FailNow(t, fmt.Sprintf("%s: status %d, want %d (body %s)", x.what, x.status, want, body))
	}
}

// session is a 2025-11-25 session.
type session struct {
	id     string
	minter *replica // where initialize ran
}

func (s session) headers() map[string]string {
	return map[string]string{"Mcp-Session-Id": s.id, "MCP-Protocol-Version": legacyVersion}
}

// initialize opens a 2025-11-25 session at url, declaring every capability
// the bridged fixtures ask with, and sends notifications/initialized
// there too. It returns the session and the replica that served the
// notification (nil when url is a replica).
func initialize(t *testing.T, url string) (session, *replica) {
	t.Helper()
	x := send(t, "initialize", url, nil, map[string]any{
		"jsonrpc": "2.0", "id": 1, "method": "initialize",
		"params": map[string]any{
			"protocolVersion": legacyVersion,
			"capabilities":    map[string]any{"elicitation": map[string]any{"form": map[string]any{}}, "sampling": map[string]any{}, "roots": map[string]any{}},
			"clientInfo":      map[string]any{"name": "mrtrkit-affinity-test", "version": "1"},
		},
	})
	x.wantStatus(t, http.StatusOK)
	m := x.next(t)
	var res struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	if err := json.Unmarshal(m.Result, &res); err != nil || res.ProtocolVersion != legacyVersion {
		require.FailNow(t, fmt.Sprintf("initialize: result %s, error %s: want protocolVersion %s", m.Result, m.Error, legacyVersion))
	}
	s := session{id: x.header.Get("Mcp-Session-Id"), minter: x.upstream}
	require.NotEqualValuesf(t, "", s.id, "initialize: no Mcp-Session-Id in the response")
	if s.minter == nil {
		s.minter = byURL(url)
	}
	n := send(t, "notifications/initialized", url, s.headers(), map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"})
	n.wantStatus(t, http.StatusAccepted)
	return s, n.upstream
}

func byURL(url string) *replica {
	for _, r := range replicas {
		if r.url == url {
			return r
		}
	}
	return nil
}

// leg is one server-to-client request of a bridged call and where its
// answer went.
type leg struct {
	method   string
	id       string
	upstream *replica // nil when the answer was sent directly
}

// bridged runs a tools/call of a 2025-11-25 session at url: it answers
// every server-to-client request with answer, POSTing each answer to url
// as well, and returns the final response, the replica that served the
// call (nil when url is a replica) and the legs.
func bridged(t *testing.T, url string, s session, id int, tool string, args map[string]any, answer func(message) any) (message, *replica, []leg) {
	t.Helper()
	what := "tools/call " + tool
	x := send(t, what, url, s.headers(), map[string]any{
		"jsonrpc": "2.0", "id": id, "method": "tools/call",
		"params": map[string]any{"name": tool, "arguments": args},
	})
	x.wantStatus(t, http.StatusOK)
	var legs []leg
	for {
		m := x.next(t)
		switch {
		case m.isRequest():
			a := send(t, "answer to "+m.Method+" "+string(m.ID), url, s.headers(),
				map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": answer(m)})
			a.wantStatus(t, http.StatusAccepted)
			if a.upstream != x.upstream {
				// Accepted, and dropped where no call waits for it: the
				// call would wait for the leg timeout.
				require.FailNow(t, fmt.Sprintf("%s: the answer to %s %s went to replica %s, but the call runs on %s", what, m.Method, m.ID, a.upstream.name, x.upstream.name))
			}
			legs = append(legs, leg{method: m.Method, id: string(m.ID), upstream: a.upstream})
		case m.isNotification():
			// progress or log: nothing to do
		case string(m.ID) == strconv.Itoa(id):
			return m, x.upstream, legs
		default:
			require.FailNow(t, fmt.Sprintf("%s: unexpected message %+v", what, m))
		}
	}
}

// answerer answers the fixtures' questions with values made from tag.
func answerer(t *testing.T, tag, colour string) func(message) any {
	return func(m message) any {
		switch m.Method {
		case "elicitation/create":
			var p struct {
				RequestedSchema struct {
					Properties map[string]json.RawMessage `json:"properties"`
				} `json:"requestedSchema"`
			}
			assert.NoErrorf(t, json.Unmarshal(m.Params, &p), "elicitation/create params %s", m.Params)
			content := map[string]any{}
			for k := range p.RequestedSchema.Properties {
				switch k {
				case "color":
					content[k] = colour
				case "email":
					content[k] = tag + "@example.com"
				default:
					content[k] = tag
				}
			}
			return map[string]any{"action": "accept", "content": content}
		case "sampling/createMessage":
			return map[string]any{"role": "assistant", "content": map[string]any{"type": "text", "text": "greetings from " + tag}, "model": "affinity", "stopReason": "endTurn"}
		case "roots/list":
			return map[string]any{"roots": []any{map[string]any{"uri": "file:///affinity/" + tag, "name": tag}}}
		}
		assert.Fail(t, fmt.Sprintf("unexpected server-to-client request %s", m.Method))
		return map[string]any{}
	}
}

// toolText returns the text of a successful tools/call result.
func toolText(t *testing.T, m message) string {
	t.Helper()
	var res struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
		IsError    bool   `json:"isError"`
		ResultType string `json:"resultType"`
	}
	require.Falsef(t, len(m.Error) > 0 || json.Unmarshal(m.Result, &res) != nil || res.IsError || len(res.Content) == 0, "tools/call did not succeed: result %s, error %s", m.Result, m.Error)
	return res.Content[0].Text
}

// logLines counts the access-log lines of a replica (msg=http, one per
// HTTP request) and the answers it dropped for want of a waiting call.
func logLines(t *testing.T, r *replica) (requests int, dropped []string) {
	t.Helper()
	b, err := os.ReadFile(r.log)
	require.NoErrorf(t, err, "reading the log of replica %s", r.name)
	for _, line := range strings.Split(string(b), "\n") {
		if strings.Contains(line, " msg=http ") {
			requests++
		}
		if strings.Contains(line, "dropped an answer nobody waits for") {
			dropped = append(dropped, line)
		}
	}
	return requests, dropped
}

type counts [2]int

func snapshot(t *testing.T) counts {
	t.Helper()
	a, _ := logLines(t, replicas[0])
	b, _ := logLines(t, replicas[1])
	return counts{a, b}
}

// expectLogged waits until the replicas' logs show exactly want requests
// each since before, and fails if they show anything else.
func expectLogged(t *testing.T, what string, before counts, want map[*replica]int) {
	t.Helper()
	w := counts{want[replicas[0]], want[replicas[1]]}
	deadline := time.Now().Add(waitLog)
	for {
		now := snapshot(t)
		got := counts{now[0] - before[0], now[1] - before[1]}
		if got == w {
			return
		}
		if got[0] > w[0] || got[1] > w[1] || time.Now().After(deadline) {
			require.FailNow(t, fmt.Sprintf("%s: the replicas' access logs show %d request(s) on A and %d on B; nginx's %s says %d and %d", what, got[0], got[1], upstreamHeader, w[0], w[1]))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestBridgedCallsKeepAffinity opens sessions through nginx and runs a
// bridged call on each, answering every server-to-client request through
// nginx: affinity must send each answer to the replica running the call,
// and the call must complete. initialize carries no session id, so
// nginx places it by round robin, and the session then lives on the
// replica its id hashes to: sessions are opened until both replicas have
// run calls and one session has run on a replica that did not mint it.
func TestBridgedCallsKeepAffinity(t *testing.T) {
	home := map[*replica]int{}
	elsewhere := 0
	more := func(i int) bool {
		return i < minSessions || home[replicas[0]] < minPerReplica || home[replicas[1]] < minPerReplica || elsewhere == 0
	}
	for i := 0; i < maxSessions && more(i); i++ {
		before := snapshot(t)
		want := map[*replica]int{}
		tag := fmt.Sprintf("user%02d", i)
		colour := []string{"teal", "amber", "violet"}[i%3]

		s, notified := initialize(t, proxyURL)
		want[s.minter]++
		want[notified]++

		tool := "test_input_required_result_multi_round"
		if i%2 == 1 {
			tool = "test_input_required_result_multiple_inputs"
		}
		final, holder, legs := bridged(t, proxyURL, s, 2, tool, map[string]any{}, answerer(t, tag, colour))
		want[holder]++
		text := toolText(t, final)
		switch tool {
		case "test_input_required_result_multi_round":
			if exp := tag + "'s favourite colour is " + colour + "."; text != exp || len(legs) != 2 {
				require.FailNow(t, fmt.Sprintf("session %d: %s answered %q after %d legs; want %q after 2", i, tool, text, len(legs), exp))
			}
		default:
			for _, part := range []string{"user_name=" + tag, "greeting=greetings from " + tag, "client_roots=file:///affinity/" + tag} {
				require.Falsef(t, !strings.Contains(text, part) || len(legs) != 3, "session %d: %s answered %q after %d legs; want %q in it after 3", i, tool, text, len(legs), part)
			}
		}
		require.Falsef(t, notified != holder, "session %d: notifications/initialized went to replica %s, tools/call to %s: requests with one Mcp-Session-Id must all reach one replica", i, notified.name, holder.name)
		for _, l := range legs {
			require.Falsef(t, l.upstream != holder, "session %d: the answer to %s %s went to replica %s, but the call runs on %s", i, l.method, l.id, l.upstream.name, holder.name)
			want[l.upstream]++
		}
		expectLogged(t, fmt.Sprintf("session %d", i), before, want)

		home[holder]++
		count("sessions", 1)
		count("home_"+holder.name, 1)
		count("minted_"+s.minter.name, 1)
		count("answers_via_proxy", len(legs))
		if s.minter != holder {
			elsewhere++
			count("served_elsewhere", 1)
		}
		t.Logf("session %d: minted on %s, %s ran on %s with %d answers through nginx", i, s.minter.name, tool, holder.name, len(legs))
	}
	for _, r := range replicas {
		if home[r] < minPerReplica {
			require.FailNow(t, fmt.Sprintf("replica %s ran %d bridged calls of %d sessions; nginx's hash should spread sessions over both", r.name, home[r], home[replicas[0]]+home[replicas[1]]))
		}
	}
	if elsewhere == 0 {
		require.FailNow(t, fmt.Sprintf("no session of %d ran its call on a replica other than the one that minted it", home[replicas[0]]+home[replicas[1]]))
	}
}

// TestAnyReplicaServesOrdinaryRequests opens a session on each replica
// directly and lists the tools on the other one: the session id is sealed
// with the shared key ring, so it opens anywhere.
func TestAnyReplicaServesOrdinaryRequests(t *testing.T) {
	for _, minter := range replicas {
		before := snapshot(t)
		s, _ := initialize(t, minter.url)
		o := other(minter)
		x := send(t, "tools/list on replica "+o.name+" for a session of "+minter.name, o.url, s.headers(),
			map[string]any{"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
		x.wantStatus(t, http.StatusOK)
		m := x.next(t)
		var res struct {
			Tools []struct {
				Name string `json:"name"`
			} `json:"tools"`
			ResultType *string `json:"resultType"`
		}
		if err := json.Unmarshal(m.Result, &res); err != nil || len(res.Tools) == 0 {
			require.FailNow(t, fmt.Sprintf("tools/list on replica %s: result %s, error %s", o.name, m.Result, m.Error))
		}
		if res.ResultType != nil {
			require.FailNow(t, fmt.Sprintf("tools/list for a 2025-11-25 session carries resultType %q", *res.ResultType))
		}
		found := false
		for _, tool := range res.Tools {
			found = found || tool.Name == "test_input_required_result_multi_round"
		}
		require.Truef(t, found, "tools/list on replica %s does not list test_input_required_result_multi_round", o.name)
		expectLogged(t, "session of "+minter.name+" served by "+o.name, before, map[*replica]int{minter: 2, o: 1})
		count("direct_lists", 1)
	}
}

// TestMisroutedAnswerIsAccepted sends answers to the replica that does
// not hold the call: each is accepted with 202 (a 4xx makes some clients
// drop the session) and dropped, and the call still completes with the
// answer that reached its replica.
func TestMisroutedAnswerIsAccepted(t *testing.T) {
	s, _ := initialize(t, proxyURL)
	x := send(t, "tools/call test_elicitation", proxyURL, s.headers(), map[string]any{
		"jsonrpc": "2.0", "id": 7, "method": "tools/call",
		"params": map[string]any{"name": "test_elicitation", "arguments": map[string]any{"message": "Who are you?"}},
	})
	x.wantStatus(t, http.StatusOK)
	holder := x.upstream
	wrong := other(holder)
	req := x.next(t)
	require.Falsef(t, !req.isRequest() || req.Method != "elicitation/create", "tools/call test_elicitation: first message %+v, want an elicitation/create request", req)
	_, droppedBefore := logLines(t, wrong)

	answer := func(who string) map[string]any {
		return map[string]any{"action": "accept", "content": map[string]any{"username": who, "email": who + "@example.com"}}
	}
	for _, c := range []struct {
		what string
		sid  string
		id   any
	}{
		{"the real leg's answer", s.id, req.ID},
		{"an answer to a made-up id", s.id, 987654321},
		{"an answer to a made-up string id", s.id, "no-such-leg"},
		{"an answer under an unknown session id", "not-a-session-id", req.ID},
	} {
		hdr := s.headers()
		hdr["Mcp-Session-Id"] = c.sid
		a := send(t, c.what+" sent to replica "+wrong.name, wrong.url, hdr,
			map[string]any{"jsonrpc": "2.0", "id": c.id, "result": answer("wrong")})
		a.wantStatus(t, http.StatusAccepted)
		count("misrouted_answers", 1)
	}
	// An error response is an answer too.
	e := send(t, "an error answer sent to replica "+wrong.name, wrong.url, s.headers(),
		map[string]any{"jsonrpc": "2.0", "id": req.ID, "error": map[string]any{"code": -1, "message": "declined"}})
	e.wantStatus(t, http.StatusAccepted)
	count("misrouted_answers", 1)

	// The replica without the call logs the real leg's answers as dropped.
	// Leg ids are integers; the fixture logs them quoted twice (slog text of
	// a quoted value).
	if _, err := strconv.Atoi(string(req.ID)); err != nil {
		require.FailNow(t, fmt.Sprintf("leg id %s is not an integer", req.ID))
	}
	want := `id="\"` + string(req.ID) + `\""`
	deadline := time.Now().Add(waitLog)
	for {
		_, dropped := logLines(t, wrong)
		n := 0
		for _, line := range dropped[len(droppedBefore):] {
			if strings.Contains(line, want) {
				n++
			}
		}
		if n >= 2 {
			break
		}
		if time.Now().After(deadline) {
			require.FailNow(t, fmt.Sprintf("replica %s did not log the misrouted answers to leg %s as dropped (looked for %s); its new drop lines: %q", wrong.name, req.ID, want, dropped[len(droppedBefore):]))
		}
		time.Sleep(20 * time.Millisecond)
	}

	// The call is still waiting: the right answer, through nginx, reaches
	// its replica and completes it.
	a := send(t, "the answer through nginx", proxyURL, s.headers(), map[string]any{"jsonrpc": "2.0", "id": req.ID, "result": answer("right")})
	a.wantStatus(t, http.StatusAccepted)
	require.Falsef(t, a.upstream != holder, "the answer through nginx went to replica %s, the call runs on %s", a.upstream.name, holder.name)
	final := x.next(t)
	require.EqualValuesf(t, "7", string(final.ID), "tools/call test_elicitation: got %+v, want its response", final)
	text := toolText(t, final)
	require.Falsef(t, !strings.Contains(text, `"username":"right"`) || strings.Contains(text, "wrong"), "tools/call test_elicitation answered %q; want the answer sent through nginx (username right) and none of the misrouted ones", text)
}

// TestModernThroughProxy runs a 2026-07-28 multi-round call through
// nginx: no session, every round a plain request that any replica serves.
func TestModernThroughProxy(t *testing.T) {
	const tool = "test_input_required_result_multi_round"
	hdr := map[string]string{"MCP-Protocol-Version": modernVersion, "Mcp-Method": "tools/call", "Mcp-Name": tool}
	answers := map[string]any{
		"step1": map[string]any{"action": "accept", "content": map[string]any{"name": "Modern"}},
		"step2": map[string]any{"action": "accept", "content": map[string]any{"color": "indigo"}},
	}
	var inputResponses map[string]any
	var state string
	for round := 0; round < 4; round++ {
		params := map[string]any{
			"name": tool, "arguments": map[string]any{},
			"_meta": map[string]any{
				"io.modelcontextprotocol/protocolVersion":    modernVersion,
				"io.modelcontextprotocol/clientCapabilities": map[string]any{"elicitation": map[string]any{"form": map[string]any{}}},
			},
		}
		if inputResponses != nil {
			params["inputResponses"] = inputResponses
		}
		if state != "" {
			params["requestState"] = state
		}
		x := send(t, fmt.Sprintf("2026-07-28 tools/call round %d", round), proxyURL, hdr,
			map[string]any{"jsonrpc": "2.0", "id": 100 + round, "method": "tools/call", "params": params})
		x.wantStatus(t, http.StatusOK)
		if sid := x.header.Get("Mcp-Session-Id"); sid != "" {
			require.FailNow(t, fmt.Sprintf("a 2026-07-28 response carries Mcp-Session-Id %q", sid))
		}
		m := x.next(t)
		var res struct {
			ResultType    string                     `json:"resultType"`
			InputRequests map[string]json.RawMessage `json:"inputRequests"`
			RequestState  string                     `json:"requestState"`
			Content       []struct {
				Text string `json:"text"`
			} `json:"content"`
		}
		if err := json.Unmarshal(m.Result, &res); err != nil || len(m.Error) > 0 {
			require.FailNow(t, fmt.Sprintf("round %d: result %s, error %s", round, m.Result, m.Error))
		}
		count("modern_rounds", 1)
		t.Logf("2026-07-28 round %d: served by replica %s, resultType %s", round, x.upstream.name, res.ResultType)
		switch res.ResultType {
		case "complete":
			require.Falsef(t, len(res.Content) == 0 || res.Content[0].Text != "Modern's favourite colour is indigo." || round != 2, "round %d: complete with %s; want \"Modern's favourite colour is indigo.\" at round 2", round, m.Result)
			return
		case "input_required":
			inputResponses = map[string]any{}
			for k := range res.InputRequests {
				a, ok := answers[k]
				require.Truef(t, ok, "round %d: asked for %q", round, k)
				inputResponses[k] = a
			}
			state = res.RequestState
		default:
			require.FailNow(t, fmt.Sprintf("round %d: resultType %q in %s", round, res.ResultType, m.Result))
		}
	}
	require.FailNow(t, "the 2026-07-28 call did not complete within 4 rounds")
}

// TestSessionStreamThroughProxy opens a session's GET stream through
// nginx: it must reach the replica that serves the session's other
// requests and open at once (the replica's first comment is not held in
// a buffer).
func TestSessionStreamThroughProxy(t *testing.T) {
	s, holder := initialize(t, proxyURL)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, proxyURL, nil)
	require.NoError(t, err)
	req.Header.Set("Accept", "text/event-stream")
	for k, v := range s.headers() {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err, "GET the session's stream through nginx")
	defer resp.Body.Close()
	require.Falsef(t, resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream"), "GET the session's stream through nginx: status %d, Content-Type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	if up := byAddr(resp.Header.Get(upstreamHeader)); up != holder {
		require.FailNow(t, fmt.Sprintf("the session's stream went to %q, its requests to replica %s", resp.Header.Get(upstreamHeader), holder.name))
	}
	first := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(resp.Body).ReadString('\n')
		first <- line
	}()
	select {
	case line := <-first:
		require.EqualValuesf(t, ": stream open", strings.TrimSpace(line), "the session's stream began with %q, want the comment \": stream open\"", line)
	case <-time.After(waitMessage):
		require.FailNow(t, fmt.Sprintf("the session's stream sent nothing through nginx within %s", waitMessage))
	}
}
