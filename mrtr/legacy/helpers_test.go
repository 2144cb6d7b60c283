package legacy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
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
	"github.com/mrtrkit/mrtrkit/state"
)

// quiet discards log output in tests.
var quiet = slog.New(slog.DiscardHandler)

// Client capabilities a test session declares at initialize.
const (
	capsAll  = `{"sampling":{},"elicitation":{"form":{},"url":{}},"roots":{"listChanged":true}}`
	capsNone = `{}`
)

// seen is what a handler saw on one invocation.
type seen struct {
	tool  string
	round int
	keys  []string
	state string
	at    time.Time
	meta  *mrtr.Meta
	who   string
}

// book records every handler invocation of a test server.
type book struct {
	mu   sync.Mutex
	all  []seen
	ctxs chan error    // the "hold" tool reports its context's end here
	in   chan struct{} // the "hold" tool signals it is running
}

func (b *book) add(tool string, req *mrtr.Request) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.all = append(b.all, seen{tool: tool, round: req.Round, keys: req.Responses.Keys(), state: string(req.State), at: time.Now(), meta: req.Meta, who: req.Principal})
}

// of returns the invocations of tool, in order.
func (b *book) of(tool string) []seen {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []seen
	for _, s := range b.all {
		if s.tool == tool {
			out = append(out, s)
		}
	}
	return out
}

func formAsk(msg, field string) *mrtr.ElicitRequest {
	return &mrtr.ElicitRequest{Message: msg, RequestedSchema: &mrtr.ElicitSchema{Type: "object", Properties: map[string]json.RawMessage{field: json.RawMessage(`{"type":"string"}`)}}}
}

func sampleAsk(text string) *mrtr.SamplingRequest {
	return &mrtr.SamplingRequest{Messages: []mrtr.SamplingMessage{mrtr.UserText(text)}, MaxTokens: 20}
}

func textResult(s string) *mrtr.CallToolResult {
	return &mrtr.CallToolResult{Content: []mrtr.Content{mrtr.Text(s)}}
}

// newTestServer builds the server the engine tests serve: tools, prompts
// and resources that take any number of rounds, serving both eras.
func newTestServer(t testing.TB, b *book, opts ...mrtr.Option) *mrtr.Server {
	t.Helper()
	desc := discover.Description{
		Server:         discover.Implementation{Name: "legacy-test", Version: "1.0.0"},
		LegacyVersions: []string{"2025-06-18", "2025-11-25"},
		Instructions:   "Test server.",
		Capabilities: discover.Capabilities{
			Logging:    &discover.Empty{},
			Tools:      &discover.ListChanged{ListChanged: true},
			Prompts:    &discover.ListChanged{ListChanged: true},
			Resources:  &discover.ResourcesCapability{Subscribe: true, ListChanged: true},
			Extensions: map[string]map[string]any{"x.example/ext": nil},
		},
	}
	all := append([]mrtr.Option{mrtr.WithCodec(testkit.Codec(t)), mrtr.WithLogger(quiet), mrtr.WithMaxRounds(4)}, opts...)
	srv, err := mrtr.NewServer(desc, all...)
	require.NoError(t, err)
	addTestHandlers(t, srv, b)
	return srv
}

func addTestHandlers(t testing.TB, srv *mrtr.Server, b *book) {
	tool := func(name string, h mrtr.HandlerFunc, opts ...mrtr.RegisterOption) {
		require.NoError(t, srv.AddTool(mrtr.Tool{Name: name, InputSchema: json.RawMessage(`{"type":"object"}`)}, mrtr.HandlerFunc(func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
			b.add(name, req)
			return h(ctx, req)
		}), opts...))
	}

	// trio asks three rounds mixing elicitation, sampling and roots. Its
	// first question is a static ask, whose answer the server would
	// accept on any later round too: that proves each retry carries that
	// round's answers only.
	tool("trio", func(_ context.Context, req *mrtr.Request) (mrtr.Result, error) {
		switch req.Round {
		case 0:
			ir := mrtr.Ask("early", formAsk("Your name?", "name"))
			ir.State = []byte("s0")
			return ir, nil
		case 1:
			ans, ok := req.Responses.Elicitation("early")
			if !ok || !ans.Accepted() {
				return mrtr.ErrorResult("early unanswered"), nil
			}
			ir := &mrtr.InputRequired{Requests: map[string]mrtr.InputRequest{"draft": sampleAsk("write"), "where": &mrtr.RootsRequest{}}}
			ir.State = fmt.Appendf(nil, "s1:%v", ans.Content["name"])
			return ir, nil
		case 2:
			d, ok1 := req.Responses.Sampling("draft")
			w, ok2 := req.Responses.Roots("where")
			if !ok1 || !ok2 || len(w.Roots) == 0 {
				return mrtr.ErrorResult("round 2 unanswered"), nil
			}
			ir := mrtr.Ask("confirm", &mrtr.ElicitRequest{Mode: "url", Message: "Confirm", URL: "https://example.com/confirm"})
			ir.State = append(append(req.State, '|'), d.Text()+"|"+w.Roots[0].URI...)
			return ir, nil
		default:
			c, ok := req.Responses.Elicitation("confirm")
			if !ok {
				return mrtr.ErrorResult("confirm unanswered"), nil
			}
			r := textResult(string(req.State) + "|" + string(c.Action))
			r.Meta = mrtr.Object{"x.example/trace": json.RawMessage(`"t1"`)}
			return r, nil
		}
	}, mrtr.StaticAsks(map[string]mrtr.InputRequest{"early": formAsk("Your name?", "name")}))

	// deep asks n rounds, state-only on the rounds listed in stateOnly,
	// a roots question on the others.
	tool("deep", func(_ context.Context, req *mrtr.Request) (mrtr.Result, error) {
		var args struct {
			N         int   `json:"n"`
			StateOnly []int `json:"stateOnly"`
			Fail      bool  `json:"fail"`
		}
		if err := json.Unmarshal(req.Arguments, &args); err != nil {
			return nil, err
		}
		if req.Round > 0 && string(req.State) != fmt.Sprintf("round-%d", req.Round-1) {
			return mrtr.ErrorResult("state " + string(req.State)), nil
		}
		if req.Round >= args.N {
			if args.Fail {
				return nil, errors.New("the work failed")
			}
			return textResult(fmt.Sprintf("rounds=%d", req.Round)), nil
		}
		ir := &mrtr.InputRequired{Requests: map[string]mrtr.InputRequest{}, State: fmt.Appendf(nil, "round-%d", req.Round)}
		if !slices.Contains(args.StateOnly, req.Round) {
			ir.Requests[fmt.Sprintf("q%d", req.Round)] = &mrtr.RootsRequest{}
		}
		return ir, nil
	})

	tool("sampler", func(_ context.Context, req *mrtr.Request) (mrtr.Result, error) {
		if s, ok := req.Responses.Sampling("s"); ok {
			return textResult("sampled " + s.Text()), nil
		}
		return mrtr.Ask("s", sampleAsk("hi")), nil
	})
	tool("url", func(_ context.Context, req *mrtr.Request) (mrtr.Result, error) {
		if e, ok := req.Responses.Elicitation("u"); ok {
			return textResult("url " + string(e.Action)), nil
		}
		return mrtr.Ask("u", &mrtr.ElicitRequest{Mode: "url", Message: "Open this", URL: "https://example.com/auth"}), nil
	})
	// pair asks two questions in one round.
	tool("pair", func(_ context.Context, req *mrtr.Request) (mrtr.Result, error) {
		if req.Round > 0 {
			return textResult("pair " + strings.Join(req.Responses.Keys(), ",")), nil
		}
		return &mrtr.InputRequired{Requests: map[string]mrtr.InputRequest{"a": formAsk("A?", "a"), "b": formAsk("B?", "b")}}, nil
	})
	// hold runs until its context ends (or 10 s pass).
	tool("hold", func(ctx context.Context, _ *mrtr.Request) (mrtr.Result, error) {
		if b.in != nil {
			b.in <- struct{}{}
		}
		select {
		case <-ctx.Done():
			if b.ctxs != nil {
				b.ctxs <- context.Cause(ctx)
			}
			return nil, ctx.Err()
		case <-time.After(10 * time.Second):
			return textResult("never cancelled"), nil
		}
	})
	// report says what the request's _meta carried, after logging and
	// reporting progress.
	tool("report", func(_ context.Context, req *mrtr.Request) (mrtr.Result, error) {
		if err := req.Progress(1, nil, "half"); err != nil {
			return nil, err
		}
		if err := req.Log(mrtr.LevelWarning, "report", "careful"); err != nil {
			return nil, err
		}
		if err := req.Log(mrtr.LevelDebug, "report", "noise"); err != nil {
			return nil, err
		}
		extra := make([]string, 0, len(req.Meta.Extra))
		for k, v := range req.Meta.Extra {
			extra = append(extra, k+"="+string(v))
		}
		slices.Sort(extra)
		client := ""
		if req.Meta.ClientInfo != nil {
			client = req.Meta.ClientInfo.Name
		}
		caps, _ := json.Marshal(req.Meta.ClientCapabilities)
		return textResult(fmt.Sprintf("version=%s client=%s level=%s progress=%s caps=%s extra=%s",
			req.Meta.ProtocolVersion, client, req.Meta.LogLevel, req.Meta.ProgressToken, caps, strings.Join(extra, ";"))), nil
	})
	tool("fail", func(context.Context, *mrtr.Request) (mrtr.Result, error) {
		return nil, errors.New("boom")
	})

	require.NoError(t, srv.AddPrompt(mrtr.Prompt{Name: "pwiz"}, mrtr.HandlerFunc(func(_ context.Context, req *mrtr.Request) (mrtr.Result, error) {
		b.add("pwiz", req)
		if req.Round == 0 {
			return mrtr.Ask("topic", formAsk("Topic?", "topic")), nil
		}
		e, _ := req.Responses.Elicitation("topic")
		return &mrtr.GetPromptResult{Messages: []mrtr.PromptMessage{{Role: mrtr.RoleUser, Content: mrtr.Text(fmt.Sprint("about ", e.Content["topic"]))}}}, nil
	})))
	require.NoError(t, srv.AddPrompt(mrtr.Prompt{Name: "psample"}, mrtr.HandlerFunc(func(_ context.Context, req *mrtr.Request) (mrtr.Result, error) {
		if req.Round == 0 {
			return mrtr.Ask("s", sampleAsk("x")), nil
		}
		return &mrtr.GetPromptResult{Messages: []mrtr.PromptMessage{{Role: mrtr.RoleUser, Content: mrtr.Text("ok")}}}, nil
	})))
	require.NoError(t, srv.AddResource(mrtr.Resource{URI: "file:///wiz.txt", Name: "wiz"}, mrtr.HandlerFunc(func(_ context.Context, req *mrtr.Request) (mrtr.Result, error) {
		b.add("wiz", req)
		if req.Round == 0 {
			return mrtr.Ask("r", &mrtr.RootsRequest{}), nil
		}
		r, _ := req.Responses.Roots("r")
		return &mrtr.ReadResourceResult{Contents: []mrtr.ResourceContents{mrtr.TextResource("file:///wiz.txt", "text/plain", "root "+r.Roots[0].URI)}}, nil
	})))
	require.NoError(t, srv.AddResource(mrtr.Resource{URI: "file:///plain.txt", Name: "plain"}, mrtr.HandlerFunc(func(context.Context, *mrtr.Request) (mrtr.Result, error) {
		return &mrtr.ReadResourceResult{Contents: []mrtr.ResourceContents{mrtr.TextResource("file:///plain.txt", "text/plain", "plain")}}, nil
	})))
}

// newEngine serves srv with a fixed key ring and quiet logs.
func newEngine(t testing.TB, srv *mrtr.Server, opts ...Option) *Engine {
	t.Helper()
	e, err := New(srv, append([]Option{WithKeyRing(testkit.Ring(t)), WithLogger(quiet)}, opts...)...)
	require.NoError(t, err)
	return e
}

// env is one engine over one test server.
type env struct {
	t   testing.TB
	srv *mrtr.Server
	e   *Engine
	b   *book
}

func newEnv(t testing.TB, srvOpts []mrtr.Option, opts ...Option) *env {
	t.Helper()
	b := &book{}
	srv := newTestServer(t, b, srvOpts...)
	return &env{t: t, srv: srv, e: newEngine(t, srv, opts...), b: b}
}

// parse parses one JSON-RPC message, failing the test when it does not.
func parse(t testing.TB, s string) *mrtr.Message {
	t.Helper()
	m, _, perr := mrtr.ParseMessage([]byte(s))
	require.Nil(t, perr, "%s", s)
	return m
}

// open initializes a session for principal with the client capabilities
// caps.
func (v *env) open(principal, caps string) *Session {
	v.t.Helper()
	return v.openVersion(principal, caps, "2025-11-25")
}

func (v *env) openVersion(principal, caps, version string) *Session {
	v.t.Helper()
	s, resp, err := v.e.Initialize(caller(principal), parse(v.t, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"`+version+`","capabilities":`+caps+`,"clientInfo":{"name":"test-client","version":"1"}}}`))
	require.NoError(v.t, err)
	require.NotNil(v.t, resp)
	require.Nil(v.t, resp.Error)
	require.NotNil(v.t, s)
	// The test plays a host whose initialize request is over: the session
	// lives on in its id, and its extras may go once idle.
	s.Release()
	return s
}

// pipe is a Sender that records what it is given.
type pipe struct {
	ch     chan json.RawMessage
	failAt int // Send fails from this message on (1-based); 0 never
	mu     sync.Mutex
	n      int
}

func newPipe() *pipe { return &pipe{ch: make(chan json.RawMessage, 1024)} }

func (p *pipe) Send(b []byte) error {
	p.mu.Lock()
	p.n++
	n := p.n
	p.mu.Unlock()
	if p.failAt > 0 && n >= p.failAt {
		return errors.New("the client has gone")
	}
	p.ch <- append(json.RawMessage(nil), b...)
	return nil
}

// wireMsg is a decoded message the client receives.
type wireMsg struct {
	raw    json.RawMessage
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

func (m wireMsg) isRequest() bool { return m.Method != "" && len(m.ID) > 0 }

func decodeWire(t testing.TB, raw json.RawMessage) wireMsg {
	t.Helper()
	var m wireMsg
	require.NoError(t, json.Unmarshal(raw, &m), "%s", raw)
	m.raw = raw
	return m
}

// reply is how a test client answers one server-to-client request:
// Result or Error (raw JSON), or nothing when both are empty.
type reply struct {
	Result string
	Error  string
}

// answerer decides the reply to one request of the server.
type answerer func(m wireMsg) reply

// standard answers every kind of request acceptably.
func standard(m wireMsg) reply {
	switch m.Method {
	case wire.MethodElicit:
		var p struct {
			Mode string `json:"mode"`
		}
		_ = json.Unmarshal(m.Params, &p)
		if p.Mode == "url" {
			return reply{Result: `{"action":"accept"}`}
		}
		var f struct {
			RequestedSchema struct {
				Properties map[string]json.RawMessage `json:"properties"`
			} `json:"requestedSchema"`
		}
		_ = json.Unmarshal(m.Params, &f)
		content := map[string]string{}
		for k := range f.RequestedSchema.Properties {
			content[k] = "v-" + k
		}
		b, _ := json.Marshal(map[string]any{"action": "accept", "content": content})
		return reply{Result: string(b)}
	case wire.MethodCreateMessage:
		return reply{Result: `{"role":"assistant","content":{"type":"text","text":"drafted"},"model":"m1"}`}
	case wire.MethodListRoots:
		return reply{Result: `{"roots":[{"uri":"file:///home/u","name":"home"}]}`}
	}
	return reply{Error: `{"code":-32601,"message":"Method not found"}`}
}

// exchange is the outcome of one request served with a client answering.
type exchange struct {
	resp    *mrtr.Response
	traffic []wireMsg // what the client received, in order
}

func (x exchange) requests() []wireMsg {
	var out []wireMsg
	for _, m := range x.traffic {
		if m.isRequest() {
			out = append(out, m)
		}
	}
	return out
}

func (x exchange) notifications(method string) []wireMsg {
	var out []wireMsg
	for _, m := range x.traffic {
		if m.Method == method && len(m.ID) == 0 {
			out = append(out, m)
		}
	}
	return out
}

// answer delivers the client's response to the server's request id, the
// way a host does: through a Session looked up afresh for the message.
func (v *env) answer(s *Session, id json.RawMessage, r reply) {
	v.t.Helper()
	body := `{"jsonrpc":"2.0","id":` + string(id)
	if r.Error != "" {
		body += `,"error":` + r.Error + `}`
	} else {
		body += `,"result":` + r.Result + `}`
	}
	s2, err := v.e.Session(s.ID(), caller(s.principal))
	if err != nil {
		return // as a host does: the answer is accepted and dropped
	}
	defer s2.Release()
	assert.Nil(v.t, s2.Handle(context.Background(), parse(v.t, body), nil), "a response gets no response")
}

// run serves the request body on session s while a client answers every
// request the server sends with ans, and returns the response with the
// traffic the client saw.
func (v *env) run(s *Session, body string, ans answerer) exchange {
	v.t.Helper()
	return v.runCtx(context.Background(), s, body, ans, nil)
}

func (v *env) runCtx(ctx context.Context, s *Session, body string, ans answerer, onMsg func(wireMsg)) exchange {
	v.t.Helper()
	out := newPipe()
	msg := parse(v.t, body)
	done := make(chan *mrtr.Response, 1)
	go func() { done <- s.Handle(ctx, msg, out) }()
	var x exchange
	take := func(raw json.RawMessage) {
		m := decodeWire(v.t, raw)
		x.traffic = append(x.traffic, m)
		if onMsg != nil {
			onMsg(m)
		}
		if m.isRequest() && ans != nil {
			if r := ans(m); r.Result != "" || r.Error != "" {
				v.answer(s, m.ID, r)
			}
		}
	}
	timeout := time.After(15 * time.Second)
	for {
		select {
		case raw := <-out.ch:
			take(raw)
		case resp := <-done:
			for {
				select {
				case raw := <-out.ch:
					take(raw)
					continue
				default:
				}
				break
			}
			x.resp = resp
			return x
		case <-timeout:
			v.t.Fatalf("the request %s got no response", body)
			return x
		}
	}
}

// toolCall is the body of a legacy tools/call.
func toolCall(id any, name, args string) string {
	idJSON, _ := json.Marshal(id)
	return `{"jsonrpc":"2.0","id":` + string(idJSON) + `,"method":"tools/call","params":{"name":"` + name + `","arguments":` + args + `}}`
}

// modernKeys are the members and _meta keys a client of the initialize era
// must never see.
var modernKeys = []string{"resultType", "inputRequests", "requestState", "ttlMs", "cacheScope",
	wire.MetaServerInfo, wire.MetaSubscriptionID}

// assertNoModern fails when raw holds, at any depth, a member of the
// modern wire.
func assertNoModern(t testing.TB, raw json.RawMessage) {
	t.Helper()
	var v any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	require.NoError(t, dec.Decode(&v), "%s", raw)
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				assert.NotContains(t, modernKeys, k, "%s has the modern member %q: %s", path, k, raw)
				walk(path+"."+k, e)
			}
		case []any:
			for i, e := range x {
				walk(fmt.Sprintf("%s[%d]", path, i), e)
			}
		}
	}
	walk("$", v)
}

// assertLegacyResponse checks a response for the initialize era: no
// modern member and no code of 2026-07-28.
func assertLegacyResponse(t testing.TB, resp *mrtr.Response) {
	t.Helper()
	require.NotNil(t, resp)
	b, err := resp.MarshalJSON()
	require.NoError(t, err)
	assertNoModern(t, b)
	if resp.Error != nil {
		assert.NotContains(t, []mrtr.Code{mrtr.CodeHeaderMismatch, mrtr.CodeMissingCapability, mrtr.CodeUnsupportedVersion}, resp.Error.Code, "a 2026-07-28 error code: %s", b)
	}
}

// toolText decodes a tools/call result.
type toolText struct {
	Content []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
	IsError bool            `json:"isError"`
	Meta    json.RawMessage `json:"_meta"`
}

func decodeTool(t testing.TB, resp *mrtr.Response) toolText {
	t.Helper()
	require.NotNil(t, resp)
	require.Nil(t, resp.Error, "%+v", resp.Error)
	var r toolText
	require.NoError(t, json.Unmarshal(resp.Result, &r), "%s", resp.Result)
	require.NotEmpty(t, r.Content, "%s", resp.Result)
	return r
}

// legIDs returns the ids of the server's requests as integers.
func legIDs(t testing.TB, reqs []wireMsg) []int64 {
	t.Helper()
	ids := make([]int64, 0, len(reqs))
	for _, r := range reqs {
		var n int64
		require.NoError(t, json.Unmarshal(r.ID, &n), "leg id %s is not an integer", r.ID)
		ids = append(ids, n)
	}
	return ids
}

// noLeftovers waits until no goroutine runs code of this package (other
// than the test's own), failing with the stacks when some remain.
func noLeftovers(t testing.TB) {
	t.Helper()
	var dump string
	for range 200 {
		buf := make([]byte, 1<<20)
		buf = buf[:runtime.Stack(buf, true)]
		dump = ""
		for _, g := range strings.Split(string(buf), "\n\n") {
			if strings.Contains(g, "mrtrkit/mrtr/legacy.(*") || strings.Contains(g, "mrtrkit/mrtr/legacy.addTestHandlers") {
				if !strings.Contains(g, "legacy.Test") {
					dump += g + "\n\n"
				}
			}
		}
		if dump == "" {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("goroutines left behind:\n%s", dump)
}

// codecAt returns the session codec New makes, on a clock of the test's.
func codecAt(t testing.TB, e *Engine, now func() time.Time) *state.RingCodec {
	t.Helper()
	c, err := state.NewAEAD(testkit.Ring(t), state.WithPurpose("session"), state.WithTTL(e.lifetime), state.WithClockSkew(e.skew), state.WithClock(now))
	require.NoError(t, err)
	return c
}

// caller is the token an authenticator would have made for principal;
// nil for an anonymous request.
func caller(principal string) *mrtr.TokenInfo {
	if principal == "" {
		return nil
	}
	return &mrtr.TokenInfo{Subject: principal}
}
