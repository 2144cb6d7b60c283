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

// This file proves the initialize era on the wire: sessions, the round
// bridge over each POST's event stream, the GET stream, the limits, and
// the classification of requests at one endpoint serving both eras.

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

func TestLegacySessionLifecycle(t *testing.T) {
	f := newLegacyFixture(t, nil, nil)
	c := f.client(t, "")
	res := c.initialize(`{"roots":{}}`, "2025-06-18")
	var init struct {
		ProtocolVersion string                     `json:"protocolVersion"`
		Capabilities    map[string]json.RawMessage `json:"capabilities"`
		ServerInfo      map[string]any             `json:"serverInfo"`
		Instructions    string                     `json:"instructions"`
	}
	require.NoError(t, json.Unmarshal(res, &init))
	assert.Equal(t, "2025-06-18", init.ProtocolVersion)
	assert.Equal(t, map[string]any{"name": "both-eras", "version": "2"}, init.ServerInfo)
	assert.Equal(t, "Both eras.", init.Instructions)
	assert.NotContains(t, init.Capabilities, "extensions")
	assert.Contains(t, init.Capabilities, "tools")

	// An unknown version gets the newest served.
	c2 := f.client(t, "")
	res = c2.initialize(`{}`, "2024-11-05")
	assert.Contains(t, string(res), `"protocolVersion":"2025-11-25"`)
	assert.NotEqual(t, c.sid, c2.sid)

	// Empty results are exactly {}.
	for i, m := range []string{
		`"method":"ping"`,
		`"method":"logging/setLevel","params":{"level":"info"}`,
		`"method":"resources/subscribe","params":{"uri":"file:///plain.txt"}`,
		`"method":"resources/unsubscribe","params":{"uri":"file:///plain.txt"}`,
	} {
		resp, body := c.post(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,%s}`, i+1, m))
		assert.Equal(t, http.StatusOK, resp.StatusCode)
		assert.Equal(t, "application/json", resp.Header.Get("Content-Type"))
		assert.Equal(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{}}`, i+1), string(body), m)
		assert.Empty(t, resp.Header.Values(hdrSessionID))
	}
	// Errors travel in-band, with 200.
	for _, m := range []string{`"method":"server/discover","params":{}`, `"method":"subscriptions/listen","params":{"notifications":{}}`, `"method":"nope"`} {
		resp, body := c.post(`{"jsonrpc":"2.0","id":"x",` + m + `}`)
		assert.Equal(t, http.StatusOK, resp.StatusCode, m)
		e := decodeRPC(t, body)
		require.NotNil(t, e.Error, m)
		assert.Equal(t, -32601, e.Error.Code, m)
		assert.Equal(t, `"x"`, string(e.ID))
	}
	resp, body := c.post(`{"jsonrpc":"2.0","id":9,"method":"tools/list"}`)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	lgNoModern(t, body)
	assert.Contains(t, string(body), `"name":"trio"`)
	resp, body = c.post(`{"jsonrpc":"2.0","id":10,"method":"resources/read","params":{"uri":"file:///nope"}}`)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, -32002, decodeRPC(t, body).Error.Code)

	// DELETE ends the session; then it is unknown, to every method.
	resp, body = c.do(http.MethodDelete, "")
	assert.Equal(t, http.StatusNoContent, resp.StatusCode, "%s", body)
	assert.Empty(t, body)
	resp, body = c.post(`{"jsonrpc":"2.0","id":11,"method":"ping"}`)
	assert.Equal(t, http.StatusNotFound, resp.StatusCode)
	e := decodeRPC(t, body)
	require.NotNil(t, e.Error)
	assert.Equal(t, `11`, string(e.ID))
	assert.Contains(t, e.Error.Message, "Session not found")
	resp, _ = c.post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	assert.Equal(t, http.StatusNotFound, resp.StatusCode)
	resp, _ = c.do(http.MethodDelete, "")
	assert.Equal(t, http.StatusNotFound, resp.StatusCode)
	resp, _ = c.do(http.MethodGet, "")
	assert.Equal(t, http.StatusNotFound, resp.StatusCode)
	resp, _ = c.post(lgCall(12, "echo", `{}`))
	assert.Equal(t, http.StatusNotFound, resp.StatusCode)
	// An answer is still accepted.
	c.answer(`{"jsonrpc":"2.0","id":1,"result":{}}`)

	// The other session is untouched.
	resp, body = c2.post(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	assert.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
}

// 404 for a session this server does not know for the caller; 400 for a
// request without one, or an initialize with one; 400 for a version
// header that is not the session's.
func TestLegacySessionRefusals(t *testing.T) {
	f := newLegacyFixture(t, nil, nil)
	alice := f.client(t, "alice")
	alice.initialize(`{}`, "2025-06-18")
	sid := alice.sid

	ping := `{"jsonrpc":"2.0","id":5,"method":"ping"}`
	status := func(c *lgClient, body string, headers ...[2]string) (int, rpc) {
		t.Helper()
		resp, b := c.post(body, headers...)
		m := rpc{}
		if len(b) > 0 {
			m = decodeRPC(t, b)
			assert.Equal(t, "application/json", resp.Header.Get("Content-Type"))
		}
		return resp.StatusCode, m
	}
	code, _ := status(alice, ping)
	assert.Equal(t, http.StatusOK, code)

	bob := f.client(t, "bob")
	bob.sid = sid
	code, m := status(bob, ping)
	assert.Equal(t, http.StatusNotFound, code, "another principal's session")
	require.NotNil(t, m.Error)
	assert.Equal(t, `5`, string(m.ID))
	anon := f.client(t, "")
	anon.sid = sid
	code, _ = status(anon, ping)
	assert.Equal(t, http.StatusNotFound, code, "an anonymous caller")

	tampered := []byte(sid)
	tampered[len(tampered)/2] ^= 1
	for name, id := range map[string]string{"tampered": string(tampered), "unknown": "d2hhdGV2ZXI", "long": strings.Repeat("x", 5000)} {
		code, _ := status(alice, ping, [2]string{hdrSessionID, id})
		assert.Equal(t, http.StatusNotFound, code, name)
	}

	// Missing: 400, for requests and notifications alike.
	code, m = status(alice, ping, [2]string{hdrSessionID, ""})
	assert.Equal(t, http.StatusBadRequest, code)
	assert.Contains(t, m.Error.Message, "Mcp-Session-Id")
	code, _ = status(alice, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, [2]string{hdrSessionID, ""})
	assert.Equal(t, http.StatusBadRequest, code)

	// Two session headers: 400.
	req := alice.request(context.Background(), http.MethodPost, ping)
	req.Header.Add(hdrSessionID, sid)
	resp, err := alice.hc.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode)

	// initialize with a session id: 400, and no new session.
	code, m = status(alice, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{}}}`, [2]string{"MCP-Protocol-Version", ""})
	assert.Equal(t, http.StatusBadRequest, code)
	assert.Contains(t, m.Error.Message, "initialize")
	// initialize with bad params: in-band -32602, no session.
	fresh := f.client(t, "alice")
	resp, b := fresh.post(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, -32602, decodeRPC(t, b).Error.Code)
	assert.Empty(t, resp.Header.Values(hdrSessionID))

	// The version header: absent or the session's is fine, another legacy
	// version or an unknown one is not.
	code, _ = status(alice, ping, [2]string{"MCP-Protocol-Version", ""})
	assert.Equal(t, http.StatusOK, code)
	code, m = status(alice, ping, [2]string{"MCP-Protocol-Version", "2025-11-25"})
	assert.Equal(t, http.StatusBadRequest, code)
	assert.Contains(t, m.Error.Message, "session's version")
	code, m = status(alice, ping, [2]string{"MCP-Protocol-Version", "2024-11-05"})
	assert.Equal(t, http.StatusBadRequest, code)
	assert.Contains(t, m.Error.Message, "unsupported MCP-Protocol-Version")
	code, _ = status(alice, ping, [2]string{"MCP-Protocol-Version", "2024-11-05"}, [2]string{hdrSessionID, "unknown"})
	assert.Equal(t, http.StatusBadRequest, code, "an unknown version is refused before the session is looked up")

	// GET and DELETE follow the same rules.
	for _, method := range []string{http.MethodGet, http.MethodDelete} {
		resp, _ := bob.do(method, "")
		assert.Equal(t, http.StatusNotFound, resp.StatusCode, method)
		resp, _ = alice.do(method, "", [2]string{hdrSessionID, ""})
		assert.Equal(t, http.StatusBadRequest, resp.StatusCode, method)
	}
	resp, _ = alice.do(http.MethodGet, "", [2]string{"Accept", "application/json"})
	assert.Equal(t, http.StatusNotAcceptable, resp.StatusCode)

	// bob's DELETE did not end alice's session.
	code, _ = status(alice, ping)
	assert.Equal(t, http.StatusOK, code)
}

// BUG (see mrtr/legacy TestSessionExpiresAtItsLifetime): a session outlives
// WithSessionLifetime by the session codec's 30 s clock skew, so this
// session, with a lifetime of 1 s, is still served 2.5 s after initialize.
func TestLegacySessionExpires(t *testing.T) {
	t.Parallel()
	f := newLegacyFixture(t, nil, []legacy.Option{legacy.WithSessionLifetime(time.Second)})
	c := f.client(t, "")
	c.initialize(`{}`, "2025-11-25")
	resp, _ := c.post(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	deadline := time.Now().Add(2500 * time.Millisecond)
	for time.Now().Before(deadline) {
		resp, _ = c.post(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)
		if resp.StatusCode == http.StatusNotFound {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Errorf("a session with a lifetime of 1s still answers %d after 2.5s", resp.StatusCode)
}

// A three-round tools/call over HTTP: every question comes on the POST's
// own event stream as a real request, the client answers each with a POST,
// and the final response carries nothing of the modern wire.
func TestLegacyRoundsOverTheStream(t *testing.T) {
	f := newLegacyFixture(t, nil, nil)
	c := f.client(t, "carol")
	c.initialize(`{"sampling":{},"elicitation":{"form":{},"url":{}},"roots":{}}`, "2025-11-25")

	o := c.exchange(lgCall("t1", "trio", `{}`), lgStandard)
	assert.Equal(t, http.StatusOK, o.status)
	assert.Equal(t, "text/event-stream", o.contentType)
	assert.Equal(t, `"t1"`, string(o.final.ID))
	r := o.tool(t)
	assert.False(t, r.IsError)
	assert.Equal(t, "r1 v-name drafted file:///home/u accept", r.Content[0].Text)
	assert.Equal(t, []int64{1, 2, 3, 4}, o.legIDs(t))
	var methods []string
	for _, q := range o.requests {
		methods = append(methods, q.Method)
	}
	assert.Equal(t, []string{wire.MethodElicit, wire.MethodCreateMessage, wire.MethodListRoots, wire.MethodElicit}, methods)
	assert.Contains(t, string(o.requests[3].Params), `"elicitationId":"`)
	assert.Empty(t, o.notes)

	// Each retry carried exactly that round's answers ("name" is a static
	// ask: carried again, it would show on a later round).
	seen := f.of("trio")
	require.Len(t, seen, 4)
	for i, want := range [][]string{{}, {"name"}, {"draft", "roots"}, {"go"}} {
		assert.ElementsMatch(t, want, seen[i].keys, "round %d", i)
		assert.Equal(t, i, seen[i].round)
		assert.Equal(t, "carol", seen[i].who)
	}

	// prompts/get and resources/read go through rounds the same way, and
	// the session's count goes on.
	o = c.exchange(`{"jsonrpc":"2.0","id":2,"method":"prompts/get","params":{"name":"pwiz"}}`, lgStandard)
	require.Nil(t, o.final.Error)
	assert.JSONEq(t, `{"messages":[{"role":"user","content":{"type":"text","text":"about v-topic"}}]}`, string(o.final.Result))
	assert.Equal(t, []int64{5}, o.legIDs(t))
	o = c.exchange(`{"jsonrpc":"2.0","id":3,"method":"resources/read","params":{"uri":"file:///wiz.txt"}}`, lgStandard)
	require.Nil(t, o.final.Error)
	assert.JSONEq(t, `{"contents":[{"uri":"file:///wiz.txt","mimeType":"text/plain","text":"root file:///home/u"}]}`, string(o.final.Result))
	assert.Equal(t, []int64{6}, o.legIDs(t))

	// A call that asks nothing is answered with plain JSON.
	o = c.exchange(lgCall(4, "echo", `{"a":1}`), nil)
	assert.Equal(t, "application/json", o.contentType)
	assert.Equal(t, `echo {"a":1}`, o.tool(t).Content[0].Text)
}

// For every number of rounds up to the server's limit, state-only rounds
// included, nothing of the modern wire reaches the client; past the limit
// the call is stopped with an isError result. And the modern era, at the
// same endpoint, never issues a session.
func TestLegacyNoLeakAtAnyRound(t *testing.T) {
	f := newLegacyFixture(t, nil, nil)
	c := f.client(t, "")
	c.initialize(`{"elicitation":{}}`, "2025-11-25")
	next := int64(0)
	for n := 1; n <= lgRounds; n++ {
		for _, stateOnly := range []string{`[]`, fmt.Sprintf(`[%d]`, n-1)} {
			args := fmt.Sprintf(`{"n":%d,"stateOnly":%s}`, n, stateOnly)
			o := c.exchange(lgCall(n, "deep", args), lgStandard)
			assert.Equal(t, fmt.Sprintf("rounds=%d", n), o.tool(t).Content[0].Text, args)
			for _, raw := range o.raw {
				lgNoModern(t, raw)
				assert.NotContains(t, string(raw), "input_required")
			}
			want := n
			if stateOnly != `[]` {
				want--
			}
			require.Len(t, o.requests, want, args)
			for _, id := range o.legIDs(t) {
				next++
				assert.Equal(t, next, id, "leg ids count from 1 per session")
			}
		}
	}
	o := c.exchange(lgCall("over", "deep", fmt.Sprintf(`{"n":%d}`, lgRounds+1)), lgStandard)
	r := o.tool(t)
	assert.True(t, r.IsError)
	assert.Contains(t, r.Content[0].Text, fmt.Sprintf("more than %d rounds", lgRounds))
	lgNoModern(t, o.finalRaw)

	// A modern request, even one carrying a legacy session id, is served
	// by the modern era: a modern result, no Mcp-Session-Id.
	modern := toolCall(1, "echo", `{}`, [2]string{hdrSessionID, c.sid})
	req, err := modern.request(context.Background(), strings.TrimSuffix(f.url, defaultPath))
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
	assert.Contains(t, string(body), `"resultType":"complete"`)
	assert.Empty(t, resp.Header.Values(hdrSessionID))
}

// A question that times out, one the client refuses, a late answer, a
// duplicate one, and answers nobody can place: each POSTed answer gets
// 202, and the call ends as the era expects.
func TestLegacyLegFailures(t *testing.T) {
	f := newLegacyFixture(t, nil, []legacy.Option{legacy.WithLegTimeout(150 * time.Millisecond)})
	c := f.client(t, "dave")
	c.initialize(`{"sampling":{},"elicitation":{}}`, "2025-11-25")

	// Timeout: b is answered, a is not.
	var late []rpc
	o := c.exchange(lgCall(1, "pair", `{}`), func(m rpc) string {
		if strings.Contains(string(m.Params), `"B?"`) {
			return lgStandard(m)
		}
		late = append(late, m)
		return ""
	})
	r := o.tool(t)
	assert.True(t, r.IsError)
	assert.Equal(t, `The client did not answer the elicitation/create request "a" within 150ms`, r.Content[0].Text)
	cancelled := o.notesOf("notifications/cancelled")
	require.Len(t, cancelled, 1)
	assert.JSONEq(t, `{"requestId":1,"reason":"timed out"}`, string(cancelled[0].Params))

	// The late answer: 202, and nothing else happens.
	require.Len(t, late, 1)
	c.answer(lgStandard(late[0]))
	assert.Len(t, f.of("pair"), 1, "no retry")

	// Refused: the other question is withdrawn.
	o = c.exchange(lgCall(2, "pair", `{}`), func(m rpc) string {
		if strings.Contains(string(m.Params), `"A?"`) {
			return `{"jsonrpc":"2.0","id":` + string(m.ID) + `,"error":{"code":-1,"message":"User declined to answer"}}`
		}
		return ""
	})
	r = o.tool(t)
	assert.True(t, r.IsError)
	assert.Equal(t, `The client refused the elicitation/create request "a": "User declined to answer"`, r.Content[0].Text)
	assert.Equal(t, []int64{3, 4}, o.legIDs(t))
	require.Len(t, o.notesOf("notifications/cancelled"), 1)
	assert.JSONEq(t, `{"requestId":4,"reason":"another request of the round failed"}`, string(o.notesOf("notifications/cancelled")[0].Params))

	// Duplicates and strays: all 202; the call completes once.
	stranger := f.client(t, "eve")
	o = c.exchange(lgCall(3, "sampler", `{}`), func(m rpc) string {
		a := lgStandard(m)
		stranger.sid = c.sid
		stranger.answer(a)                                 // another principal: dropped
		c.answer(a, [2]string{hdrSessionID, "unknown"})    // an unknown session
		c.answer(a, [2]string{hdrSessionID, ""})           // no session
		c.answer(a, [2]string{"MCP-Protocol-Version", ""}) // the right one
		return a                                           // and again
	})
	assert.Equal(t, "sampled drafted", o.tool(t).Content[0].Text)
	assert.Len(t, f.of("sampler"), 2)

	// Malformed answers are the transport's business: 400 with -32600.
	resp, body := c.post(`{"jsonrpc":"2.0","id":1,"result":7}`)
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode, "%s", body)

	// The session is still fine.
	o = c.exchange(lgCall(4, "sampler", `{}`), lgStandard)
	assert.Equal(t, "sampled drafted", o.tool(t).Content[0].Text)
	assert.Equal(t, []int64{6}, o.legIDs(t))
	lgNoLeftovers(t)
}

// notifications/cancelled for the outer request cancels the call: its
// open questions are withdrawn on its stream, which then ends without a
// response. A client that goes away cancels the call too.
func TestLegacyCancellation(t *testing.T) {
	f := newLegacyFixture(t, nil, nil)
	c := f.client(t, "")
	c.initialize(`{"elicitation":{},"sampling":{}}`, "2025-11-25")

	s := c.open(http.MethodPost, lgCall("outer", "pair", `{}`))
	for _, want := range []string{`1`, `2`} {
		m, _, ok := s.msg(5 * time.Second)
		require.True(t, ok)
		assert.Equal(t, want, string(m.ID))
	}
	resp, body := c.post(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"outer","reason":"changed my mind"}}`)
	assert.Equal(t, http.StatusAccepted, resp.StatusCode)
	assert.Empty(t, body)
	var withdrawn []string
	for {
		m, raw, ok := s.msg(5 * time.Second)
		if !ok {
			break
		}
		require.Equal(t, "notifications/cancelled", m.Method, "after cancellation the stream carries %s", raw)
		var p struct {
			RequestID json.RawMessage `json:"requestId"`
		}
		require.NoError(t, json.Unmarshal(m.Params, &p))
		withdrawn = append(withdrawn, string(p.RequestID))
	}
	assert.ElementsMatch(t, []string{"1", "2"}, withdrawn)
	assert.Len(t, f.of("pair"), 1, "no retry")
	c.answer(lgResult(json.RawMessage(`1`), `{"action":"decline"}`))

	// Cancelling a call that is running (not waiting for answers): its
	// context ends, and it gets no response.
	held := make(chan *http.Response, 1)
	go func() {
		resp, err := c.hc.Do(c.request(context.Background(), http.MethodPost, lgCall(7, "hold", `{}`)))
		if err == nil {
			held <- resp
		}
	}()
	<-f.holding
	resp, _ = c.post(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}`)
	assert.Equal(t, http.StatusAccepted, resp.StatusCode)
	assert.ErrorContains(t, <-f.held, "cancelled by the client")
	select {
	case resp := <-held:
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		assert.Equal(t, http.StatusOK, resp.StatusCode)
		assert.Empty(t, body, "a cancelled request gets no response")
	case <-time.After(5 * time.Second):
		t.Fatal("the cancelled request did not end")
	}

	// The client goes away while a question is open.
	s = c.open(http.MethodPost, lgCall(8, "sampler", `{}`))
	m, _, ok := s.msg(5 * time.Second)
	require.True(t, ok)
	require.Equal(t, wire.MethodCreateMessage, m.Method)
	s.cancel()
	lgNoLeftovers(t)
	c.answer(lgStandard(m)) // late: 202
	assert.Len(t, f.of("sampler"), 1, "no retry")

	// The client goes away while the handler runs: its context ends.
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		resp, err := c.hc.Do(c.request(ctx, http.MethodPost, lgCall(9, "hold", `{}`)))
		if err == nil {
			resp.Body.Close()
		}
	}()
	<-f.holding
	cancel()
	assert.ErrorIs(t, <-f.held, context.Canceled)
	lgNoLeftovers(t)

	// The session serves on.
	o := c.exchange(lgCall(10, "sampler", `{}`), lgStandard)
	assert.Equal(t, "sampled drafted", o.tool(t).Content[0].Text)

	// DELETE while a call waits for answers: its questions are withdrawn
	// and it gets no response.
	s = c.open(http.MethodPost, lgCall(11, "pair", `{}`))
	for range 2 {
		_, _, ok := s.msg(5 * time.Second)
		require.True(t, ok)
	}
	resp, _ = c.do(http.MethodDelete, "")
	require.Equal(t, http.StatusNoContent, resp.StatusCode)
	withdrawn = nil
	for {
		m, raw, ok := s.msg(5 * time.Second)
		if !ok {
			break
		}
		require.Equal(t, "notifications/cancelled", m.Method, "after DELETE the stream carries %s", raw)
		withdrawn = append(withdrawn, string(m.Params))
	}
	assert.Len(t, withdrawn, 2)
	lgNoLeftovers(t)
}

// A request is the modern era's when it claims a version in _meta, or
// when it names a modern version in its header; the initialize era's
// otherwise. Without WithLegacy the endpoint answers POST only.
func TestLegacyClassification(t *testing.T) {
	f := newLegacyFixture(t, nil, nil)
	c := f.client(t, "")
	c.initialize(`{}`, "2025-11-25")
	base := strings.TrimSuffix(f.url, defaultPath)
	send := func(cl call) (*http.Response, []byte) {
		t.Helper()
		req, err := cl.request(context.Background(), base)
		require.NoError(t, err)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, b
	}

	// A _meta claim is modern, whatever else: even with a session id and a
	// legacy version header (the server then refuses the mismatch).
	resp, body := send(toolCall(1, "echo", `{}`).withHeader(hdrSessionID, c.sid))
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Contains(t, string(body), `"resultType":"complete"`)
	resp, body = send(toolCall(1, "echo", `{}`).withHeader(hdrSessionID, c.sid).withHeader("MCP-Protocol-Version", "2025-11-25"))
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode, "%s", body)
	assert.Equal(t, -32020, decodeRPC(t, body).Error.Code, "a modern request with a mismatched header")

	// No claim under a modern header: modern, refused for its missing _meta.
	noClaim := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{}}}`
	resp, body = send(toolCall(2, "echo", `{}`).withBody(noClaim).withHeader(hdrSessionID, c.sid))
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode, "%s", body)
	assert.Equal(t, -32602, decodeRPC(t, body).Error.Code)
	assert.Empty(t, resp.Header.Values(hdrSessionID))

	// No claim, no header: the initialize era's.
	resp, body = c.post(noClaim, [2]string{"MCP-Protocol-Version", ""})
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "echo {}", lgOutcome{final: decodeRPC(t, body), finalRaw: body}.tool(t).Content[0].Text)
	resp, body = c.post(noClaim, [2]string{"MCP-Protocol-Version", ""}, [2]string{hdrSessionID, ""})
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
	assert.Contains(t, string(body), "Mcp-Session-Id header is required")
	// No claim under an unknown version: 400.
	resp, body = c.post(noClaim, [2]string{"MCP-Protocol-Version", "1999-01-01"})
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
	assert.Contains(t, string(body), "unsupported MCP-Protocol-Version")

	// Without WithLegacy: GET and DELETE are not allowed, initialize is
	// told the versions served, a POSTed response is refused.
	plain := newFixture(t)
	for _, m := range []string{http.MethodGet, http.MethodDelete} {
		resp, _ := plain.do(t, call{method: m, headers: [][2]string{{"Accept", "text/event-stream"}, {hdrSessionID, c.sid}}})
		assert.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode, m)
		assert.Equal(t, "POST", resp.Header.Get("Allow"))
	}
	jsonHeaders := [][2]string{{"Content-Type", "application/json"}, {"Accept", "application/json, text/event-stream"}}
	resp, body = plain.do(t, call{headers: jsonHeaders, body: `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{}}}`})
	assert.Equal(t, -32022, decodeRPC(t, body).Error.Code, "%s", body)
	assert.Empty(t, resp.Header.Values(hdrSessionID))
	resp, _ = plain.do(t, call{headers: jsonHeaders, body: `{"jsonrpc":"2.0","id":1,"result":{}}`})
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode)

	// With it, every method is allowed.
	resp, _ = c.do(http.MethodPut, "")
	assert.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode)
	assert.Equal(t, "GET, POST, DELETE", resp.Header.Get("Allow"))
}

// The GET stream opens at once, carries list changes and the updates of
// subscribed resources in the era's shape, and gives way to a newer one.
func TestLegacyGetStream(t *testing.T) {
	f := newLegacyFixture(t, nil, nil)
	c := f.client(t, "")
	c.initialize(`{}`, "2025-11-25")

	s := c.open(http.MethodGet, "")
	assert.Equal(t, http.StatusOK, s.resp.StatusCode)
	assert.Equal(t, "text/event-stream", s.resp.Header.Get("Content-Type"))
	assert.Empty(t, s.resp.Header.Values(hdrSessionID))
	e, ok := s.next(2 * time.Second)
	require.True(t, ok)
	assert.NotEmpty(t, e.comment, "the stream opens with a comment, before any event")

	// A list change.
	got := lgAwait(t, s, func(i int) {
		require.NoError(t, f.srv.AddTool(mrtr.Tool{Name: fmt.Sprint("added", i), InputSchema: json.RawMessage(`{"type":"object"}`)}, mrtr.HandlerFunc(func(context.Context, *mrtr.Request) (mrtr.Result, error) {
			return lgText("x"), nil
		})))
	})
	assert.Equal(t, `{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`, got)

	// A subscribed resource's update.
	resp, body := c.post(`{"jsonrpc":"2.0","id":1,"method":"resources/subscribe","params":{"uri":"file:///plain.txt"}}`)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, `{"jsonrpc":"2.0","id":1,"result":{}}`, string(body))
	got = lgAwait(t, s, func(int) { f.srv.NotifyResourceUpdated("file:///plain.txt") })
	assert.Equal(t, `{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"file:///plain.txt"}}`, got)

	// A second GET replaces the first, which ends.
	s2 := c.open(http.MethodGet, "")
	e, ok = s2.next(2 * time.Second)
	require.True(t, ok)
	assert.NotEmpty(t, e.comment)
	lgUntilEnd(t, s)
	got = lgAwait(t, s2, func(int) { f.srv.NotifyResourceUpdated("file:///plain.txt") })
	assert.Contains(t, got, "notifications/resources/updated")

	// DELETE ends the stream.
	resp, _ = c.do(http.MethodDelete, "")
	assert.Equal(t, http.StatusNoContent, resp.StatusCode)
	lgUntilEnd(t, s2)
	lgNoLeftovers(t)
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

func TestLegacyMaxCalls(t *testing.T) {
	f := newLegacyFixture(t, nil, []legacy.Option{legacy.WithMaxCalls(1)})
	c := f.client(t, "")
	c.initialize(`{"sampling":{}}`, "2025-11-25")
	done := make(chan []byte, 1)
	go func() {
		resp, err := c.hc.Do(c.request(context.Background(), http.MethodPost, lgCall(1, "hold", `{}`)))
		if err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			done <- b
		}
	}()
	<-f.holding
	resp, body := c.post(lgCall(2, "sampler", `{}`))
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	m := decodeRPC(t, body)
	require.NotNil(t, m.Error, "%s", body)
	assert.Equal(t, -32603, m.Error.Code)
	assert.Equal(t, "Too many calls in flight on this session (at most 1); retry when one ends", m.Error.Message)
	assert.Equal(t, `2`, string(m.ID))

	// Another session has room of its own.
	other := f.client(t, "")
	other.initialize(`{"sampling":{}}`, "2025-11-25")
	assert.Equal(t, "sampled drafted", other.exchange(lgCall(1, "sampler", `{}`), lgStandard).tool(t).Content[0].Text)

	c.post(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`)
	<-f.held
	assert.Empty(t, <-done)
	assert.Equal(t, "sampled drafted", c.exchange(lgCall(3, "sampler", `{}`), lgStandard).tool(t).Content[0].Text)
}

// When every session the process may keep is busy, initialize is refused
// with 503; an idle one is forgotten to make room.
func TestLegacyMaxSessions(t *testing.T) {
	f := newLegacyFixture(t, nil, []legacy.Option{legacy.WithMaxSessions(2)})
	a, b := f.client(t, ""), f.client(t, "")
	a.initialize(`{}`, "2025-11-25")
	b.initialize(`{}`, "2025-11-25")
	sa := a.open(http.MethodGet, "")
	sb := b.open(http.MethodGet, "")
	for _, s := range []*lgStream{sa, sb} {
		_, ok := s.next(2 * time.Second)
		require.True(t, ok)
		// The opening comment goes out before the session's listener is
		// in place (see TestEvictionWhileARequestHoldsTheSession in
		// mrtr/legacy): wait until the stream carries a notification.
		lgAwait(t, s, func(int) { f.srv.NotifyListChanged(true, false, false) })
	}

	c := f.client(t, "")
	resp, body := c.post(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{}}}`)
	assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
	assert.Empty(t, resp.Header.Values(hdrSessionID))
	m := decodeRPC(t, body)
	require.NotNil(t, m.Error)
	assert.Equal(t, `0`, string(m.ID))
	assert.Contains(t, m.Error.Message, "Too many sessions")

	// a's stream closes: a is idle, and makes room.
	sa.cancel()
	require.Eventually(t, func() bool {
		resp, _ := c.post(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{}}}`)
		return resp.StatusCode == http.StatusOK
	}, 3*time.Second, 20*time.Millisecond)
	assert.Equal(t, 2, f.eng.Sessions())

	// b, busy, was kept; a was forgotten but not ended: it answers again
	// once there is room, and now there is not.
	resp, _ = b.post(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	resp, _ = a.post(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	assert.Equal(t, http.StatusOK, resp.StatusCode, "the newest idle session made room for a")
	sb.cancel()
	lgNoLeftovers(t)
}

// A question the session's client did not declare at initialize is not
// asked: tools/call gets an isError result; url-mode questions carry an
// elicitationId.
func TestLegacyCapabilityGate(t *testing.T) {
	f := newLegacyFixture(t, nil, nil)
	c := f.client(t, "")
	c.initialize(`{"elicitation":{}}`, "2025-06-18")
	o := c.exchange(lgCall(1, "sampler", `{}`), lgStandard)
	assert.Equal(t, "application/json", o.contentType)
	r := o.tool(t)
	assert.True(t, r.IsError)
	assert.Contains(t, r.Content[0].Text, "did not declare it at initialize")
	assert.Empty(t, o.requests)

	o = c.exchange(`{"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":"file:///wiz.txt"}}`, lgStandard)
	require.NotNil(t, o.final.Error, "%s", o.finalRaw)
	assert.Equal(t, -32603, o.final.Error.Code)

	u := f.client(t, "")
	u.initialize(`{"elicitation":{"url":{}}}`, "2025-11-25")
	o = u.exchange(lgCall(1, "url", `{}`), lgStandard)
	assert.Equal(t, "url accept", o.tool(t).Content[0].Text)
	require.Len(t, o.requests, 1)
	var p map[string]string
	require.NoError(t, json.Unmarshal(o.requests[0].Params, &p))
	assert.Regexp(t, `^[0-9a-f]{24}$`, p["elicitationId"])
	assert.Equal(t, "url", p["mode"])
	assert.Equal(t, "https://example.com/sign-in", p["url"])
	assert.Equal(t, "Sign in", p["message"])
}

// BUG (see mrtr/legacy TestCallTimeoutAnswers): a call that runs past
// WithCallTimeout gets no response; its stream just ends.
func TestLegacyCallTimeout(t *testing.T) {
	f := newLegacyFixture(t, nil, []legacy.Option{legacy.WithCallTimeout(200 * time.Millisecond)})
	c := f.client(t, "")
	c.initialize(`{"sampling":{}}`, "2025-11-25")
	s := c.open(http.MethodPost, lgCall(1, "sampler", `{}`))
	m, _, ok := s.msg(5 * time.Second)
	require.True(t, ok)
	require.Equal(t, wire.MethodCreateMessage, m.Method)
	var final []byte
	for {
		m, raw, ok := s.msg(5 * time.Second)
		if !ok {
			break
		}
		if m.Method == "" {
			final = raw
		}
	}
	assert.NotEmpty(t, final, "the call's stream ended without a response")
}

// BUG: the initialize era requires a 400 for a request whose
// MCP-Protocol-Version is invalid or unsupported ("If the server receives
// a request with an invalid or unsupported MCP-Protocol-Version, it MUST
// respond with 400 Bad Request"). POST checks the header; GET and DELETE
// (era_2025.go, legacyEra.stream and legacyEra.delete) do not look at it:
// a GET opens the session's stream, and a DELETE ends the session, under
// any version.
func TestLegacyVersionHeaderOnGetAndDelete(t *testing.T) {
	f := newLegacyFixture(t, nil, nil)
	c := f.client(t, "")
	c.initialize(`{}`, "2025-06-18")
	for _, v := range []string{"1999-01-01", "2025-11-25", "2026-07-28"} {
		s := c.open(http.MethodGet, "", [2]string{"MCP-Protocol-Version", v})
		assert.Equal(t, http.StatusBadRequest, s.resp.StatusCode, "GET under MCP-Protocol-Version %s", v)
		s.cancel()
		resp, _ := c.do(http.MethodDelete, "", [2]string{"MCP-Protocol-Version", v})
		assert.Equal(t, http.StatusBadRequest, resp.StatusCode, "DELETE under MCP-Protocol-Version %s", v)
		if resp.StatusCode == http.StatusNoContent {
			c.sid, c.version = "", "" // deleted: start again
			c.initialize(`{}`, "2025-06-18")
		}
	}
}

// BUG (see mrtr/legacy TestClientInfoNeverSpoilsTheSessionID): a client
// whose clientInfo holds characters encoding/json escapes gets a session
// id the endpoint never accepts again: 404 on every request.
func TestLegacyClientInfoKeepsTheSessionUsable(t *testing.T) {
	f := newLegacyFixture(t, nil, nil)
	c := f.client(t, "")
	resp, body := c.post(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"` + strings.Repeat("<", 900) + `","version":"1"}}}`)
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
	c.sid = resp.Header.Get(hdrSessionID)
	require.NotEmpty(t, c.sid)
	resp, body = c.post(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	assert.Equal(t, http.StatusOK, resp.StatusCode, "a fresh session (id of %d characters) answers %s", len(c.sid), body)
}
