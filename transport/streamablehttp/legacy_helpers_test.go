package streamablehttp

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mrtrkit/mrtrkit/discover"
	"github.com/mrtrkit/mrtrkit/internal/testkit"
	"github.com/mrtrkit/mrtrkit/internal/wire"
	"github.com/mrtrkit/mrtrkit/mrtr"
	"github.com/mrtrkit/mrtrkit/mrtr/legacy"
)

// The helpers of the tests that prove the initialize era on the wire
// (legacy_*_test.go): a server whose tools ask over several rounds, a
// client that keeps a session and answers the questions put on a POST's
// event stream, and checks that no modern member leaks to it.

// lgRounds is the round limit of the legacy fixture's server.
const lgRounds = 3

// lgSeen is one handler invocation.
type lgSeen struct {
	tool  string
	round int
	keys  []string
	state string
	who   string
}

// lgFixture is an endpoint serving both eras, with tools that take any
// number of rounds. The principal is the bearer token, when one is sent.
type lgFixture struct {
	url     string
	srv     *mrtr.Server
	eng     *legacy.Engine
	holding chan struct{} // the hold tool is running
	held    chan error    // the hold tool's context ended, with this cause

	mu   sync.Mutex
	seen []lgSeen
}

func (f *lgFixture) record(tool string, req *mrtr.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.seen = append(f.seen, lgSeen{tool, req.Round, req.Responses.Keys(), string(req.State), req.Principal})
}

func (f *lgFixture) of(tool string) []lgSeen {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []lgSeen
	for _, s := range f.seen {
		if s.tool == tool {
			out = append(out, s)
		}
	}
	return out
}

func lgForm(msg, field string) *mrtr.ElicitRequest {
	return &mrtr.ElicitRequest{Message: msg, RequestedSchema: &mrtr.ElicitSchema{Type: "object", Properties: map[string]json.RawMessage{field: json.RawMessage(`{"type":"string"}`)}}}
}

func lgText(s string) *mrtr.CallToolResult {
	return &mrtr.CallToolResult{Content: []mrtr.Content{mrtr.Text(s)}}
}

func newLegacyServer(t testing.TB, f *lgFixture, opts ...mrtr.Option) *mrtr.Server {
	t.Helper()
	srv, err := mrtr.NewServer(discover.Description{
		Server:         discover.Implementation{Name: "both-eras", Version: "2"},
		LegacyVersions: []string{"2025-11-25", "2025-06-18"},
		Instructions:   "Both eras.",
		Capabilities: discover.Capabilities{
			Logging:    &discover.Empty{},
			Tools:      &discover.ListChanged{ListChanged: true},
			Prompts:    &discover.ListChanged{ListChanged: true},
			Resources:  &discover.ResourcesCapability{Subscribe: true, ListChanged: true},
			Extensions: map[string]map[string]any{"x.example/ext": {}},
		},
	}, append([]mrtr.Option{mrtr.WithCodec(testkit.Codec(t)), mrtr.WithLogger(quiet), mrtr.WithMaxRounds(lgRounds)}, opts...)...)
	require.NoError(t, err)

	tool := func(name string, h mrtr.HandlerFunc, opts ...mrtr.RegisterOption) {
		require.NoError(t, srv.AddTool(mrtr.Tool{Name: name, InputSchema: json.RawMessage(`{"type":"object"}`)}, mrtr.HandlerFunc(func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
			f.record(name, req)
			return h(ctx, req)
		}), opts...))
	}
	// trio: elicitation (a static ask, so that a retry carrying it again
	// would show), then sampling and roots together, then url elicitation.
	tool("trio", func(_ context.Context, req *mrtr.Request) (mrtr.Result, error) {
		switch req.Round {
		case 0:
			ir := mrtr.Ask("name", lgForm("Name?", "name"))
			ir.State = []byte("r0")
			return ir, nil
		case 1:
			e, ok := req.Responses.Elicitation("name")
			if !ok {
				return mrtr.ErrorResult("name unanswered"), nil
			}
			return &mrtr.InputRequired{Requests: map[string]mrtr.InputRequest{
				"draft": &mrtr.SamplingRequest{Messages: []mrtr.SamplingMessage{mrtr.UserText("write")}, MaxTokens: 9},
				"roots": &mrtr.RootsRequest{},
			}, State: fmt.Appendf(nil, "r1 %v", e.Content["name"])}, nil
		case 2:
			d, ok1 := req.Responses.Sampling("draft")
			r, ok2 := req.Responses.Roots("roots")
			if !ok1 || !ok2 {
				return mrtr.ErrorResult("round 2 unanswered"), nil
			}
			ir := mrtr.Ask("go", &mrtr.ElicitRequest{Mode: "url", Message: "Go?", URL: "https://example.com/go"})
			ir.State = append(append([]byte(nil), req.State...), " "+d.Text()+" "+r.Roots[0].URI...)
			return ir, nil
		default:
			g, ok := req.Responses.Elicitation("go")
			if !ok {
				return mrtr.ErrorResult("go unanswered"), nil
			}
			return lgText(string(req.State) + " " + string(g.Action)), nil
		}
	}, mrtr.StaticAsks(map[string]mrtr.InputRequest{"name": lgForm("Name?", "name")}))
	tool("deep", func(_ context.Context, req *mrtr.Request) (mrtr.Result, error) {
		var args struct {
			N         int   `json:"n"`
			StateOnly []int `json:"stateOnly"`
		}
		if err := json.Unmarshal(req.Arguments, &args); err != nil {
			return nil, err
		}
		if req.Round >= args.N {
			return lgText(fmt.Sprintf("rounds=%d", req.Round)), nil
		}
		ir := &mrtr.InputRequired{Requests: map[string]mrtr.InputRequest{}, State: fmt.Appendf(nil, "%d", req.Round)}
		if !slices.Contains(args.StateOnly, req.Round) {
			ir.Requests[fmt.Sprint("q", req.Round)] = lgForm("More?", "more")
		}
		return ir, nil
	})
	tool("sampler", func(_ context.Context, req *mrtr.Request) (mrtr.Result, error) {
		if s, ok := req.Responses.Sampling("s"); ok {
			return lgText("sampled " + s.Text()), nil
		}
		return mrtr.Ask("s", &mrtr.SamplingRequest{Messages: []mrtr.SamplingMessage{mrtr.UserText("hi")}, MaxTokens: 5}), nil
	})
	tool("url", func(_ context.Context, req *mrtr.Request) (mrtr.Result, error) {
		if e, ok := req.Responses.Elicitation("u"); ok {
			return lgText("url " + string(e.Action)), nil
		}
		return mrtr.Ask("u", &mrtr.ElicitRequest{Mode: "url", Message: "Sign in", URL: "https://example.com/sign-in"}), nil
	})
	tool("pair", func(_ context.Context, req *mrtr.Request) (mrtr.Result, error) {
		if req.Round > 0 {
			return lgText("pair " + strings.Join(req.Responses.Keys(), ",")), nil
		}
		return &mrtr.InputRequired{Requests: map[string]mrtr.InputRequest{"a": lgForm("A?", "a"), "b": lgForm("B?", "b")}}, nil
	})
	tool("hold", func(ctx context.Context, _ *mrtr.Request) (mrtr.Result, error) {
		f.holding <- struct{}{}
		select {
		case <-ctx.Done():
			f.held <- context.Cause(ctx)
			return nil, ctx.Err()
		case <-time.After(10 * time.Second):
			return lgText("never cancelled"), nil
		}
	})
	tool("echo", func(_ context.Context, req *mrtr.Request) (mrtr.Result, error) {
		return lgText("echo " + string(req.Arguments)), nil
	})
	require.NoError(t, srv.AddPrompt(mrtr.Prompt{Name: "pwiz"}, mrtr.HandlerFunc(func(_ context.Context, req *mrtr.Request) (mrtr.Result, error) {
		f.record("pwiz", req)
		if req.Round == 0 {
			return mrtr.Ask("topic", lgForm("Topic?", "topic")), nil
		}
		e, _ := req.Responses.Elicitation("topic")
		return &mrtr.GetPromptResult{Messages: []mrtr.PromptMessage{{Role: mrtr.RoleUser, Content: mrtr.Text(fmt.Sprint("about ", e.Content["topic"]))}}}, nil
	})))
	require.NoError(t, srv.AddResource(mrtr.Resource{URI: "file:///wiz.txt", Name: "wiz"}, mrtr.HandlerFunc(func(_ context.Context, req *mrtr.Request) (mrtr.Result, error) {
		f.record("wiz", req)
		if req.Round == 0 {
			return mrtr.Ask("r", &mrtr.RootsRequest{}), nil
		}
		r, _ := req.Responses.Roots("r")
		return &mrtr.ReadResourceResult{Contents: []mrtr.ResourceContents{mrtr.TextResource("file:///wiz.txt", "text/plain", "root "+r.Roots[0].URI)}}, nil
	})))
	require.NoError(t, srv.AddResource(mrtr.Resource{URI: "file:///plain.txt", Name: "plain"}, mrtr.HandlerFunc(func(context.Context, *mrtr.Request) (mrtr.Result, error) {
		return &mrtr.ReadResourceResult{Contents: []mrtr.ResourceContents{mrtr.TextResource("file:///plain.txt", "text/plain", "plain")}}, nil
	})))
	return srv
}

// bearerIsPrincipal takes the bearer token, if any, for the principal;
// without one the request is anonymous.
func bearerIsPrincipal(r *http.Request) (*mrtr.TokenInfo, error) {
	p := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
	if p == "" {
		return nil, nil
	}
	return &mrtr.TokenInfo{Subject: p}, nil
}

// newLegacyFixture serves both eras at one endpoint.
func newLegacyFixture(t testing.TB, srvOpts []mrtr.Option, engOpts []legacy.Option, opts ...Option) *lgFixture {
	t.Helper()
	f := &lgFixture{holding: make(chan struct{}, 8), held: make(chan error, 8)}
	f.srv = newLegacyServer(t, f, srvOpts...)
	eng, err := legacy.New(f.srv, append([]legacy.Option{legacy.WithKeyRing(testkit.Ring(t)), legacy.WithLogger(quiet)}, engOpts...)...)
	require.NoError(t, err)
	f.eng = eng
	h, err := New(f.srv, append([]Option{WithLogger(quiet), WithLegacy(eng), WithAuthenticator(bearerIsPrincipal)}, opts...)...)
	require.NoError(t, err)
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	f.url = ts.URL + defaultPath
	return f
}

// lgClient is a client of the initialize era.
type lgClient struct {
	t       testing.TB
	f       *lgFixture
	hc      *http.Client
	user    string // bearer token (the principal); "" for none
	sid     string // Mcp-Session-Id, once initialized
	version string // MCP-Protocol-Version sent after initialize; "" for none
}

func (f *lgFixture) client(t testing.TB, user string) *lgClient {
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	return &lgClient{t: t, f: f, hc: &http.Client{Transport: tr}, user: user}
}

// request builds a POST of body with the headers of the era.
func (c *lgClient) request(ctx context.Context, method, body string, headers ...[2]string) *http.Request {
	c.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.f.url, rd)
	require.NoError(c.t, err)
	if method == http.MethodPost {
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
	} else if method == http.MethodGet {
		req.Header.Set("Accept", "text/event-stream")
	}
	if c.sid != "" {
		req.Header.Set(hdrSessionID, c.sid)
	}
	if c.version != "" {
		req.Header.Set("MCP-Protocol-Version", c.version)
	}
	if c.user != "" {
		req.Header.Set("Authorization", "Bearer "+c.user)
	}
	for _, h := range headers {
		if h[1] == "" {
			req.Header.Del(h[0])
			continue
		}
		req.Header.Set(h[0], h[1])
	}
	return req
}

// do sends a request and reads the whole response.
func (c *lgClient) do(method, body string, headers ...[2]string) (*http.Response, []byte) {
	c.t.Helper()
	resp, err := c.hc.Do(c.request(context.Background(), method, body, headers...))
	require.NoError(c.t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(c.t, err)
	return resp, b
}

func (c *lgClient) post(body string, headers ...[2]string) (*http.Response, []byte) {
	c.t.Helper()
	return c.do(http.MethodPost, body, headers...)
}

// initialize opens a session declaring caps and asking for version.
func (c *lgClient) initialize(caps, version string) json.RawMessage {
	c.t.Helper()
	resp, body := c.post(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"` + version + `","capabilities":` + caps + `,"clientInfo":{"name":"old-client","version":"1"}}}`)
	require.Equal(c.t, http.StatusOK, resp.StatusCode, "%s", body)
	assert.Equal(c.t, "application/json", resp.Header.Get("Content-Type"))
	sid := resp.Header.Values(hdrSessionID)
	require.Len(c.t, sid, 1, "one Mcp-Session-Id")
	for i := 0; i < len(sid[0]); i++ {
		require.True(c.t, sid[0][i] >= 0x21 && sid[0][i] <= 0x7e, "Mcp-Session-Id byte %d is %#x", i, sid[0][i])
	}
	c.sid = sid[0]
	m := decodeRPC(c.t, body)
	require.Nil(c.t, m.Error)
	lgNoModern(c.t, body)
	var r struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	require.NoError(c.t, json.Unmarshal(m.Result, &r))
	c.version = r.ProtocolVersion
	resp, body = c.post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	require.Equal(c.t, http.StatusAccepted, resp.StatusCode, "%s", body)
	require.Empty(c.t, body)
	return m.Result
}

// lgEvent is one thing read from an event stream.
type lgEvent struct {
	data    string // the data of an event, or the whole body of a JSON response
	comment string // a comment line
	problem string // a line that has no place in the stream, such as an id field
}

// lgStream reads a response as events as they come.
type lgStream struct {
	t      testing.TB
	resp   *http.Response
	events chan lgEvent // closed at the end of the body
	cancel context.CancelFunc
}

// open sends a request and starts reading its response as a stream.
func (c *lgClient) open(method, body string, headers ...[2]string) *lgStream {
	c.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	resp, err := c.hc.Do(c.request(ctx, method, body, headers...))
	require.NoError(c.t, err)
	s := &lgStream{t: c.t, resp: resp, events: make(chan lgEvent, 256), cancel: cancel}
	c.t.Cleanup(cancel)
	go s.pump()
	return s
}

func (s *lgStream) pump() {
	defer close(s.events)
	defer s.resp.Body.Close()
	if !strings.HasPrefix(s.resp.Header.Get("Content-Type"), "text/event-stream") {
		b, _ := io.ReadAll(s.resp.Body)
		if len(b) > 0 {
			s.events <- lgEvent{data: string(b)}
		}
		return
	}
	r := bufio.NewReader(s.resp.Body)
	var data []string
	event := ""
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			if line != "" {
				s.events <- lgEvent{problem: "unterminated line " + line}
			}
			return
		}
		line = strings.TrimSuffix(line, "\n")
		switch {
		case line == "":
			if len(data) > 0 {
				if event != "message" {
					s.events <- lgEvent{problem: "event type " + event}
				}
				s.events <- lgEvent{data: strings.Join(data, "\n")}
			}
			data, event = nil, ""
		case strings.HasPrefix(line, ":"):
			s.events <- lgEvent{comment: line}
		case strings.HasPrefix(line, "event: "):
			event = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			data = append(data, strings.TrimPrefix(line, "data: "))
		default:
			s.events <- lgEvent{problem: line} // "id:" among others
		}
	}
}

// next returns the next event, comments included; ok is false at the end
// of the stream.
func (s *lgStream) next(d time.Duration) (lgEvent, bool) {
	s.t.Helper()
	select {
	case e, ok := <-s.events:
		if ok && e.problem != "" {
			s.t.Errorf("the stream carries %q", e.problem)
		}
		return e, ok
	case <-time.After(d):
		s.t.Fatalf("the stream carried nothing for %v", d)
		return lgEvent{}, false
	}
}

// msg returns the next message, skipping comments; ok is false at the end.
func (s *lgStream) msg(d time.Duration) (rpc, []byte, bool) {
	s.t.Helper()
	for {
		e, ok := s.next(d)
		if !ok {
			return rpc{}, nil, false
		}
		if e.comment != "" {
			continue
		}
		lgNoModern(s.t, []byte(e.data))
		return decodeRPC(s.t, []byte(e.data)), []byte(e.data), true
	}
}

// end asserts that the stream ends without another message.
func (s *lgStream) end(d time.Duration) {
	s.t.Helper()
	for {
		e, ok := s.next(d)
		if !ok {
			return
		}
		if e.comment == "" {
			s.t.Errorf("the stream carries %s after its end", e.data)
		}
	}
}

// lgOutcome is a request served with the client answering.
type lgOutcome struct {
	status      int
	contentType string
	final       rpc
	finalRaw    []byte
	requests    []rpc    // the server's requests, in order
	notes       []rpc    // the notifications, in order
	raw         [][]byte // every message, in order
}

// lgAnswer decides the client's answer to one request of the server: the
// whole JSON-RPC response to POST, or "" to leave it unanswered.
type lgAnswer func(m rpc) string

func lgResult(id json.RawMessage, result string) string {
	return `{"jsonrpc":"2.0","id":` + string(id) + `,"result":` + result + `}`
}

// lgStandard answers every request acceptably.
func lgStandard(m rpc) string {
	switch m.Method {
	case wire.MethodElicit:
		if strings.Contains(string(m.Params), `"mode":"url"`) {
			return lgResult(m.ID, `{"action":"accept"}`)
		}
		var p struct {
			RequestedSchema struct {
				Properties map[string]json.RawMessage `json:"properties"`
			} `json:"requestedSchema"`
		}
		_ = json.Unmarshal(m.Params, &p)
		content := map[string]string{}
		for k := range p.RequestedSchema.Properties {
			content[k] = "v-" + k
		}
		b, _ := json.Marshal(map[string]any{"action": "accept", "content": content})
		return lgResult(m.ID, string(b))
	case wire.MethodCreateMessage:
		return lgResult(m.ID, `{"role":"assistant","content":{"type":"text","text":"drafted"},"model":"m"}`)
	case wire.MethodListRoots:
		return lgResult(m.ID, `{"roots":[{"uri":"file:///home/u"}]}`)
	}
	return `{"jsonrpc":"2.0","id":` + string(m.ID) + `,"error":{"code":-32601,"message":"Method not found"}}`
}

// answer POSTs one response, which is always accepted with 202 and no body.
func (c *lgClient) answer(body string, headers ...[2]string) {
	c.t.Helper()
	resp, b := c.post(body, headers...)
	assert.Equal(c.t, http.StatusAccepted, resp.StatusCode, "answer %s: %s", body, b)
	assert.Empty(c.t, b)
}

// exchange serves one request, answering the server's requests with ans
// as they arrive on the request's stream.
func (c *lgClient) exchange(body string, ans lgAnswer) lgOutcome {
	c.t.Helper()
	s := c.open(http.MethodPost, body)
	out := lgOutcome{status: s.resp.StatusCode, contentType: s.resp.Header.Get("Content-Type")}
	assert.Empty(c.t, s.resp.Header.Values(hdrSessionID), "only initialize sets Mcp-Session-Id")
	for {
		m, raw, ok := s.msg(10 * time.Second)
		if !ok {
			c.t.Fatalf("%s: the stream ended without a response", body)
		}
		out.raw = append(out.raw, raw)
		switch {
		case m.Method != "" && len(m.ID) > 0:
			out.requests = append(out.requests, m)
			if ans != nil {
				if a := ans(m); a != "" {
					c.answer(a)
				}
			}
		case m.Method != "":
			out.notes = append(out.notes, m)
		default:
			out.final, out.finalRaw = m, raw
			s.end(5 * time.Second)
			return out
		}
	}
}

func (o lgOutcome) legIDs(t testing.TB) []int64 {
	t.Helper()
	ids := make([]int64, 0, len(o.requests))
	for _, r := range o.requests {
		var n int64
		require.NoError(t, json.Unmarshal(r.ID, &n), "leg id %s", r.ID)
		ids = append(ids, n)
	}
	return ids
}

func (o lgOutcome) notesOf(method string) []rpc {
	var out []rpc
	for _, n := range o.notes {
		if n.Method == method {
			out = append(out, n)
		}
	}
	return out
}

// lgTool decodes a tools/call result.
type lgTool struct {
	Content []struct {
		Text string `json:"text"`
	} `json:"content"`
	IsError bool `json:"isError"`
}

func (o lgOutcome) tool(t testing.TB) lgTool {
	t.Helper()
	require.Nil(t, o.final.Error, "%s", o.finalRaw)
	var r lgTool
	require.NoError(t, json.Unmarshal(o.final.Result, &r))
	require.NotEmpty(t, r.Content, "%s", o.finalRaw)
	return r
}

func lgCall(id any, tool, args string) string {
	b, _ := json.Marshal(id)
	return `{"jsonrpc":"2.0","id":` + string(b) + `,"method":"tools/call","params":{"name":"` + tool + `","arguments":` + args + `}}`
}

// lgModern are the members and _meta keys of the modern wire.
var lgModern = []string{"resultType", "inputRequests", "requestState", "ttlMs", "cacheScope", wire.MetaServerInfo, wire.MetaSubscriptionID, "extensions"}

// lgNoModern fails when the message b holds a member of the modern wire
// at any depth, or an error code of 2026-07-28.
func lgNoModern(t testing.TB, b []byte) {
	t.Helper()
	v, err := decodeJSONNumbers(b)
	require.NoError(t, err, "%s", b)
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				assert.NotContains(t, lgModern, k, "%s", b)
				walk(e)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(v)
	m := decodeRPC(t, b)
	if m.Error != nil {
		assert.NotContains(t, []int{-32020, -32021, -32022}, m.Error.Code, "%s", b)
	}
}

// lgNoLeftovers waits until no goroutine runs the legacy engine or the
// legacy era of the transport, failing with their stacks when some stay.
func lgNoLeftovers(t testing.TB) {
	t.Helper()
	var dump string
	for range 300 {
		buf := make([]byte, 1<<20)
		buf = buf[:runtime.Stack(buf, true)]
		dump = ""
		for _, g := range strings.Split(string(buf), "\n\n") {
			if (strings.Contains(g, "mrtrkit/mrtr/legacy.") || strings.Contains(g, "streamablehttp.(*legacyEra)") ||
				strings.Contains(g, "streamablehttp.newLegacyServer")) && !strings.Contains(g, "streamablehttp.TestLegacy") {
				dump += g + "\n\n"
			}
		}
		if dump == "" {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("goroutines left behind:\n%s", dump)
}

// lgAwait repeats poke until the stream carries a message, and returns it.
func lgAwait(t *testing.T, s *lgStream, poke func(i int)) string {
	t.Helper()
	for i := 0; i < 200; i++ {
		poke(i)
		select {
		case e, ok := <-s.events:
			require.True(t, ok, "the stream ended")
			require.Empty(t, e.problem)
			if e.comment != "" {
				continue
			}
			lgNoModern(t, []byte(e.data))
			return e.data
		case <-time.After(10 * time.Millisecond):
		}
	}
	t.Fatal("the stream carried nothing")
	return ""
}

// lgUntilEnd drains the stream until it ends.
func lgUntilEnd(t *testing.T, s *lgStream) {
	t.Helper()
	timeout := time.After(3 * time.Second)
	for {
		select {
		case _, ok := <-s.events:
			if !ok {
				return
			}
		case <-timeout:
			t.Fatal("the stream did not end")
		}
	}
}
