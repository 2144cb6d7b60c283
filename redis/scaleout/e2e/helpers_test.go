//go:build scaleout

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mrtrkit/mrtrkit/mrtr/mrtrtest/stream"
)

const (
	modernVersion = "2026-07-28"
	legacyVersion = "2025-11-25"
	// waitMessage bounds the wait for the next message of a response.
	waitMessage = 15 * time.Second
)

// replica is one replica process.
type replica struct {
	name string
	url  string
	pid  int
	log  string
}

var (
	proxyURL string
	keyFile  string
	reps     []*replica
	byName   = map[string]*replica{}
)

func TestMain(m *testing.M) {
	proxyURL = os.Getenv("SCALEOUT_PROXY_URL")
	keyFile = os.Getenv("SCALEOUT_KEY_FILE")
	logDir := os.Getenv("SCALEOUT_LOG_DIR")
	pids := map[string]int{}
	for _, kv := range strings.Split(os.Getenv("SCALEOUT_PIDS"), ",") {
		if k, v, ok := strings.Cut(kv, "="); ok {
			pids[k], _ = strconv.Atoi(v)
		}
	}
	for _, kv := range strings.Split(os.Getenv("SCALEOUT_REPLICAS"), ",") {
		if k, v, ok := strings.Cut(kv, "="); ok && pids[k] > 0 {
			r := &replica{name: k, url: "http://" + v + "/mcp", pid: pids[k], log: filepath.Join(logDir, "replica-"+k+".log")}
			reps = append(reps, r)
			byName[k] = r
		}
	}
	if proxyURL == "" || keyFile == "" || logDir == "" || len(reps) != 3 {
		fmt.Fprintln(os.Stderr, "scaleout: SCALEOUT_PROXY_URL, SCALEOUT_REPLICAS, SCALEOUT_PIDS, SCALEOUT_KEY_FILE and SCALEOUT_LOG_DIR must describe three replicas; run redis/scaleout/run.sh")
		os.Exit(2)
	}
	os.Exit(m.Run())
}

// message is one JSON-RPC message.
type message struct {
	ID     json.RawMessage `json:"id,omitempty"`
	Method string          `json:"method,omitempty"`
	Params json.RawMessage `json:"params,omitempty"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  *rpcError       `json:"error,omitempty"`
}

type rpcError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

func (m message) isRequest() bool { return m.Method != "" && len(m.ID) > 0 }

// exchange is one HTTP request and its response, read message by message.
type exchange struct {
	what    string
	status  int
	header  http.Header
	replica string // X-Replica of the response
	msgs    chan message
	errc    chan error
	cancel  context.CancelFunc
}

var client = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16}}

// post POSTs body to url with the headers every POST needs and hdr.
func post(t testing.TB, what, url string, hdr map[string]string, body any) *exchange {
	t.Helper()
	x, err := tryPost(what, url, hdr, body)
	require.NoErrorf(t, err, "%s", what)
	t.Cleanup(x.cancel)
	return x
}

// tryPost is post returning its error; the caller cancels the exchange.
func tryPost(what, url string, hdr map[string]string, body any) (*exchange, error) {
	b, err := json.Marshal(body)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(b))
	if err != nil {
		cancel()
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := client.Do(req)
	if err != nil {
		cancel()
		return nil, fmt.Errorf("POST %s: %w", url, err)
	}
	x := &exchange{what: what, status: resp.StatusCode, header: resp.Header, replica: resp.Header.Get("X-Replica"),
		msgs: make(chan message, 64), errc: make(chan error, 1), cancel: cancel}
	go x.read(resp)
	return x, nil
}

// read delivers the messages of the response: its JSON body or each event
// of its stream. errc gets the read error that ended it, if any.
func (x *exchange) read(resp *http.Response) {
	defer resp.Body.Close()
	defer close(x.msgs)
	err := stream.Each(resp, func(raw []byte) error {
		var m message
		if err := json.Unmarshal(raw, &m); err != nil {
			return fmt.Errorf("body %q: %v", raw, err)
		}
		x.msgs <- m
		return nil
	})
	if err != nil {
		x.errc <- err
	}
}

// next returns the next message of the response.
func (x *exchange) next(t testing.TB) message {
	t.Helper()
	m, err := x.tryNext(waitMessage)
	require.NoErrorf(t, err, "%s", x.what)
	return m
}

func (x *exchange) tryNext(within time.Duration) (message, error) {
	select {
	case m, ok := <-x.msgs:
		if ok {
			return m, nil
		}
		select {
		case err := <-x.errc:
			return message{}, fmt.Errorf("the response broke off: %w", err)
		default:
		}
		return message{}, io.EOF
	case <-time.After(within):
		return message{}, fmt.Errorf("no message within %s", within)
	}
}

// ended waits for the end of the response and returns the messages that
// came before it and how it ended (nil for a clean end).
func (x *exchange) ended(t testing.TB) ([]message, error) {
	t.Helper()
	var got []message
	for {
		select {
		case m, ok := <-x.msgs:
			if !ok {
				select {
				case err := <-x.errc:
					return got, err
				default:
					return got, nil
				}
			}
			got = append(got, m)
		case <-time.After(waitMessage):
			require.FailNow(t, fmt.Sprintf("%s: the response did not end within %s", x.what, waitMessage))
		}
	}
}

// modernHeaders are the headers of a 2026-07-28 request.
func modernHeaders(method, name string) map[string]string {
	h := map[string]string{"MCP-Protocol-Version": modernVersion, "Mcp-Method": method}
	if name != "" {
		h["Mcp-Name"] = name
	}
	return h
}

// meta is a 2026-07-28 _meta declaring elicitation and sampling.
func meta() map[string]any {
	return map[string]any{
		"io.modelcontextprotocol/protocolVersion":    modernVersion,
		"io.modelcontextprotocol/clientCapabilities": map[string]any{"elicitation": map[string]any{"form": map[string]any{}}, "sampling": map[string]any{}},
	}
}

// toolResult is a 2026-07-28 tools/call result.
type toolResult struct {
	ResultType    string `json:"resultType"`
	InputRequests map[string]struct {
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	} `json:"inputRequests"`
	RequestState string `json:"requestState"`
	Content      []struct {
		Text string `json:"text"`
	} `json:"content"`
	IsError bool `json:"isError"`
}

func (r toolResult) text() string {
	var s []string
	for _, c := range r.Content {
		s = append(s, c.Text)
	}
	return strings.Join(s, "\n")
}

// round is one 2026-07-28 tools/call request.
type round struct {
	tool      string
	args      any
	state     string
	responses map[string]any
	progress  bool
}

func (r round) body(id int) map[string]any {
	m := meta()
	if r.progress {
		m["progressToken"] = id
	}
	args := r.args
	if args == nil {
		args = map[string]any{}
	}
	p := map[string]any{"name": r.tool, "arguments": args, "_meta": m}
	if r.state != "" {
		p["requestState"] = r.state
	}
	if r.responses != nil {
		p["inputResponses"] = r.responses
	}
	return map[string]any{"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": p}
}

// send sends the round to url and returns its exchange.
func (r round) send(t testing.TB, url string, id int) *exchange {
	t.Helper()
	return post(t, fmt.Sprintf("tools/call %s to %s", r.tool, url), url, modernHeaders("tools/call", r.tool), r.body(id))
}

// trySend is send returning its error.
func (r round) trySend(url string, id int) (*exchange, error) {
	return tryPost(fmt.Sprintf("tools/call %s", r.tool), url, modernHeaders("tools/call", r.tool), r.body(id))
}

// call sends the round and returns its result (or JSON-RPC error) and the
// replica that served it.
func (r round) call(t testing.TB, url string, id int) (toolResult, *rpcError, string) {
	t.Helper()
	x := r.send(t, url, id)
	if x.status != http.StatusOK {
		m, _ := x.tryNext(time.Second)
		if m.Error != nil {
			return toolResult{}, m.Error, x.replica
		}
		require.FailNow(t, fmt.Sprintf("%s: HTTP %d", x.what, x.status))
	}
	for {
		m := x.next(t)
		if m.Method != "" {
			continue // progress
		}
		if m.Error != nil {
			return toolResult{}, m.Error, x.replica
		}
		var res toolResult
		require.NoErrorf(t, json.Unmarshal(m.Result, &res), "%s: result %s", x.what, m.Result)
		return res, nil, x.replica
	}
}

// answer is the client's answer to one input request of the test tools.
func answer(t testing.TB, key, tag string) any {
	a := answerQuiet(key, tag)
	assert.Falsef(t, a == nil, "unexpected input request %q", key)
	return a
}

// relayWant is the final text of relay for tag, served by served.
func relayWant(tag string, served []string) string {
	return fmt.Sprintf("name=%s; sample=hello %s; colour=teal-%s; served=%s", tag, tag, tag, strings.Join(served, ","))
}

// relayCall is a relay call in progress.
type relayCall struct {
	tag    string
	next   round
	served []string // X-Replica of each round so far
	done   string   // the final text, once complete
}

func newRelay(tag string) *relayCall { return &relayCall{tag: tag, next: round{tool: "relay"}} }

// step runs the call's next round at url. Each question must name the
// replica that asked it, which must be the one that served the request.
func (c *relayCall) step(t testing.TB, url string) {
	t.Helper()
	res, rerr, rep := c.next.call(t, url, 10+len(c.served))
	if rerr != nil {
		require.FailNow(t, fmt.Sprintf("relay %s round %d on %s: error %d %s", c.tag, len(c.served), rep, rerr.Code, rerr.Message))
	}
	require.NotEqualValuesf(t, "", rep, "relay %s round %d: no X-Replica", c.tag, len(c.served))
	c.served = append(c.served, rep)
	switch res.ResultType {
	case "complete":
		c.done = res.text()
		if want := relayWant(c.tag, c.served); c.done != want || len(c.served) != 4 {
			require.FailNow(t, fmt.Sprintf("relay %s: complete after %d rounds with %q; want %q after 4", c.tag, len(c.served), c.done, want))
		}
	case "input_required":
		require.Falsef(t, len(res.InputRequests) != 1 || res.RequestState == "", "relay %s round %d: %+v", c.tag, len(c.served)-1, res)
		resp := map[string]any{}
		for k, ir := range res.InputRequests {
			require.Containsf(t, string(ir.Params), "(replica "+rep+")", "relay %s round %d: served by %s, but its question says %s", c.tag, len(c.served)-1, rep, ir.Params)
			resp[k] = answer(t, k, c.tag)
		}
		c.next = round{tool: "relay", state: res.RequestState, responses: resp}
	default:
		require.FailNow(t, fmt.Sprintf("relay %s round %d: resultType %q", c.tag, len(c.served)-1, res.ResultType))
	}
}

// relay runs a whole relay call at url and returns the replicas of its
// four requests.
func relay(t testing.TB, url, tag string) []string {
	t.Helper()
	c := newRelay(tag)
	for c.done == "" {
		require.NotEqualValuesf(t, 4, len(c.served), "relay %s: not complete after 4 rounds", tag)
		c.step(t, url)
	}
	return c.served
}

// confirmState makes the first round of tool (confirm or confirm_once)
// at url and returns the state and the replica that served it.
func confirmState(t testing.TB, url, tool string, args any) (string, string) {
	t.Helper()
	res, rerr, rep := round{tool: tool, args: args}.call(t, url, 1)
	require.Falsef(t, rerr != nil || res.ResultType != "input_required" || res.RequestState == "", "%s first round on %s: %+v, %+v", tool, rep, res, rerr)
	return res.RequestState, rep
}

// confirmRound is the second round of tool with state.
func confirmRound(tool, state string, args any) round {
	return round{tool: tool, args: args, state: state, responses: map[string]any{"ok": map[string]any{"action": "accept", "content": map[string]any{"yes": true}}}}
}

// listener is a subscriptions/listen stream on one replica.
type listener struct {
	rep *replica
	x   *exchange
}

// listen opens a subscriptions/listen stream for tool-list changes on r
// and reads its acknowledgement.
func listen(t testing.TB, r *replica) *listener {
	t.Helper()
	x := post(t, "subscriptions/listen on "+r.name, r.url, modernHeaders("subscriptions/listen", ""), map[string]any{
		"jsonrpc": "2.0", "id": "listen-" + r.name, "method": "subscriptions/listen",
		"params": map[string]any{"notifications": map[string]any{"toolsListChanged": true}, "_meta": meta()},
	})
	require.Falsef(t, x.status != http.StatusOK, "%s: HTTP %d", x.what, x.status)
	if ack := x.next(t); ack.Method != "notifications/subscriptions/acknowledged" {
		require.FailNow(t, fmt.Sprintf("%s: first message %+v, want the acknowledgement", x.what, ack))
	}
	return &listener{rep: r, x: x}
}

// expectListChanged waits for notifications/tools/list_changed.
func (l *listener) expectListChanged(t testing.TB) {
	t.Helper()
	m, err := l.x.tryNext(waitMessage)
	require.NoErrorf(t, err, "listener on %s: %v; want notifications/tools/list_changed", l.rep.name, err)
	require.EqualValuesf(t, "notifications/tools/list_changed", m.Method, "listener on %s: got %+v, want notifications/tools/list_changed", l.rep.name, m)
}

// pending reports whether a message is waiting, without waiting.
func (l *listener) pending() (message, bool) {
	select {
	case m, ok := <-l.x.msgs:
		return m, ok
	default:
		return message{}, false
	}
}

// whoami asks r (directly) for its name and key ids.
func whoami(t testing.TB, url string) string {
	t.Helper()
	res, rerr, _ := round{tool: "whoami"}.call(t, url, 3)
	require.Nilf(t, rerr, "whoami at %s: %+v", url, rerr)
	return res.text()
}

// writeKeys replaces the key ring file atomically (as a mounted secret
// volume swaps its files) and sends SIGHUP to every replica, then waits
// until each one reports the ids wanted.
func writeKeys(t testing.TB, lines []string, ids string) {
	t.Helper()
	tmp := keyFile + ".new"
	require.NoError(t, os.WriteFile(tmp, []byte(strings.Join(lines, "\n")+"\n"), 0o600))
	require.NoError(t, os.Rename(tmp, keyFile))
	for _, r := range reps {
		if !alive(r) {
			continue
		}
		require.NoErrorf(t, syscall.Kill(r.pid, syscall.SIGHUP), "SIGHUP to replica %s", r.name)
	}
	for _, r := range reps {
		if !alive(r) {
			continue
		}
		want := "replica=" + r.name + " keys=" + ids
		deadline := time.Now().Add(10 * time.Second)
		for got := whoami(t, r.url); got != want; got = whoami(t, r.url) {
			require.Falsef(t, time.Now().After(deadline), "replica %s reports %q after SIGHUP; want %q", r.name, got, want)
			time.Sleep(20 * time.Millisecond)
		}
	}
}

func alive(r *replica) bool { return syscall.Kill(r.pid, 0) == nil }

// readKeys returns the lines of the key ring file.
func readKeys(t testing.TB) []string {
	t.Helper()
	b, err := os.ReadFile(keyFile)
	require.NoError(t, err)
	return strings.Fields(string(b))
}

// logHas waits until r's log holds a line containing every one of parts
// after the first skip bytes, and returns the log's length.
func logHas(t testing.TB, r *replica, skip int, parts ...string) {
	t.Helper()
	deadline := time.Now().Add(waitMessage)
	for {
		b, err := os.ReadFile(r.log)
		require.NoError(t, err)
		if skip <= len(b) {
			for _, line := range strings.Split(string(b[skip:]), "\n") {
				all := true
				for _, p := range parts {
					all = all && strings.Contains(line, p)
				}
				if all {
					return
				}
			}
		}
		require.Falsef(t, time.Now().After(deadline), "replica %s did not log %q within %s", r.name, parts, waitMessage)
		time.Sleep(20 * time.Millisecond)
	}
}

// logSize is the length of r's log now.
func logSize(t testing.TB, r *replica) int {
	t.Helper()
	fi, err := os.Stat(r.log)
	require.NoError(t, err)
	return int(fi.Size())
}

func distinct(names []string) map[string]bool {
	m := map[string]bool{}
	for _, n := range names {
		m[n] = true
	}
	return m
}

// legacyStream opens the GET stream of a new 2025-11-25 session on r.
func legacyStream(t *testing.T, r *replica) *listener {
	t.Helper()
	sid := legacyInit(t, r.url, http.StatusAccepted)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, r.url, nil)
	require.NoError(t, err)
	req.Header.Set("Accept", "text/event-stream")
	for k, v := range legacyHeaders(sid) {
		req.Header.Set(k, v)
	}
	resp, err := client.Do(req)
	require.NoErrorf(t, err, "GET the session stream on %s", r.name)
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		require.FailNow(t, fmt.Sprintf("GET the session stream on %s: HTTP %d", r.name, resp.StatusCode))
	}
	x := &exchange{what: "2025-11-25 GET stream on " + r.name, status: resp.StatusCode, header: resp.Header,
		replica: resp.Header.Get("X-Replica"), msgs: make(chan message, 64), errc: make(chan error, 1), cancel: cancel}
	go x.read(resp)
	return &listener{rep: r, x: x}
}
