package stdio_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mrtrkit/mrtrkit/discover"
	"github.com/mrtrkit/mrtrkit/internal/testkit"
	"github.com/mrtrkit/mrtrkit/internal/wire"
	"github.com/mrtrkit/mrtrkit/mrtr"
	"github.com/mrtrkit/mrtrkit/transport/stdio"
)

// quiet discards the transport's and the server's logs.
var quiet = slog.New(slog.DiscardHandler)

// wait bounds every wait of a test for something the server should do.
const wait = 5 * time.Second

// fixture is a test server with the tools the tests call.
type fixture struct {
	srv *mrtr.Server
	// started receives the id of every "block" call once it runs, and
	// causes the context.Cause its context ended with.
	started chan string
	causes  chan error
	// release lets every "stuck" call return.
	release chan struct{}
}

func newFixture(tb testing.TB) *fixture {
	tb.Helper()
	f := &fixture{started: make(chan string, 64), causes: make(chan error, 64), release: make(chan struct{})}
	srv, err := mrtr.NewServer(discover.Description{
		Server: discover.Implementation{Name: "t", Version: "1"},
		Capabilities: discover.Capabilities{
			Logging:   &discover.Empty{},
			Tools:     &discover.ListChanged{ListChanged: true},
			Resources: &discover.ResourcesCapability{ListChanged: true, Subscribe: true},
		},
		LegacyVersions: []string{"2025-11-25", "2025-06-18"},
	}, mrtr.WithCodec(testkit.Codec(tb)), mrtr.WithLogger(quiet))
	require.NoError(tb, err)
	f.srv = srv
	tool := func(name string, h func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error)) {
		require.NoError(tb, srv.AddTool(mrtr.Tool{Name: name}, mrtr.HandlerFunc(h)))
	}
	args := func(req *mrtr.Request) (a struct {
		Text    string
		Steps   int
		SleepMs int
		Tag     string
	}) {
		_ = json.Unmarshal(req.Arguments, &a)
		return a
	}
	tool("echo", func(_ context.Context, req *mrtr.Request) (mrtr.Result, error) {
		return mrtr.TextResult(args(req).Text), nil
	})
	tool("whoami", func(_ context.Context, req *mrtr.Request) (mrtr.Result, error) {
		return mrtr.TextResult("principal=" + req.Principal), nil
	})
	// work reports progress and a log line, sleeping between steps.
	tool("work", func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
		a := args(req)
		total := float64(a.Steps)
		for i := 1; i <= a.Steps; i++ {
			if err := req.Progress(float64(i), &total, "step"); err != nil {
				return nil, err
			}
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(time.Duration(a.SleepMs) * time.Millisecond):
			}
		}
		if err := req.Log(mrtr.LevelInfo, "work", "finished "+a.Tag); err != nil {
			return nil, err
		}
		return mrtr.TextResult("done " + a.Tag), nil
	})
	// block runs until its context ends.
	tool("block", func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
		f.started <- args(req).Tag
		<-ctx.Done()
		f.causes <- context.Cause(ctx)
		return nil, ctx.Err()
	})
	// stubborn ignores its context and answers after a while.
	tool("stubborn", func(_ context.Context, req *mrtr.Request) (mrtr.Result, error) {
		f.started <- args(req).Tag
		time.Sleep(time.Duration(args(req).SleepMs) * time.Millisecond)
		return mrtr.TextResult("stubborn " + args(req).Tag), nil
	})
	// stuck ignores its context until the test releases it.
	tool("stuck", func(_ context.Context, req *mrtr.Request) (mrtr.Result, error) {
		f.started <- args(req).Tag
		<-f.release
		return mrtr.TextResult("stuck"), nil
	})
	// pretty returns raw structured content with line breaks in it.
	tool("pretty", func(context.Context, *mrtr.Request) (mrtr.Result, error) {
		return &mrtr.CallToolResult{
			Content:           []mrtr.Content{mrtr.Text("line one\nline two")},
			StructuredContent: json.RawMessage("{\n  \"a\": 1,\r\n  \"b\": [1,\n 2]\n}"),
		}, nil
	})
	// wizard asks for a name (elicitation), then for a model's words
	// (sampling), then answers with both.
	tool("wizard", func(_ context.Context, req *mrtr.Request) (mrtr.Result, error) {
		switch req.Round {
		case 0:
			return mrtr.Ask("name", &mrtr.ElicitRequest{
				Message:         "Name?",
				RequestedSchema: &mrtr.ElicitSchema{Type: "object", Properties: map[string]json.RawMessage{"name": json.RawMessage(`{"type":"string"}`)}},
			}), nil
		case 1:
			ans, ok := req.Responses.Elicitation("name")
			if !ok || !ans.Accepted() {
				return mrtr.ErrorResult("no name"), nil
			}
			ir := mrtr.Ask("words", &mrtr.SamplingRequest{Messages: []mrtr.SamplingMessage{mrtr.UserText("Say hi")}, MaxTokens: 10})
			ir.State = []byte(fmt.Sprint(ans.Content["name"]))
			return ir, nil
		default:
			ans, ok := req.Responses.Sampling("words")
			if !ok {
				return mrtr.ErrorResult("no words"), nil
			}
			return mrtr.TextResult(string(req.State) + ": " + ans.Text()), nil
		}
	})
	require.NoError(tb, srv.AddResource(mrtr.Resource{URI: "mem://a", Name: "a"}, mrtr.HandlerFunc(func(context.Context, *mrtr.Request) (mrtr.Result, error) {
		return &mrtr.ReadResourceResult{Contents: []mrtr.ResourceContents{mrtr.TextResource("mem://a", "text/plain", "A")}}, nil
	})))
	return f
}

// msg is one line the server wrote, as a client reads it.
type msg struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int             `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	} `json:"error"`
	raw []byte
}

func (m msg) isResponse() bool { return m.Method == "" }

// id returns the message's id as its JSON text.
func (m msg) id() string { return string(m.ID) }

// text returns the text of a tool result's first content block.
func (m msg) text() string {
	var r struct {
		Content []struct{ Text string } `json:"content"`
	}
	_ = json.Unmarshal(m.Result, &r)
	if len(r.Content) == 0 {
		return ""
	}
	return r.Content[0].Text
}

// param decodes params member name.
func (m msg) param(name string) json.RawMessage {
	var p map[string]json.RawMessage
	_ = json.Unmarshal(m.Params, &p)
	return p[name]
}

// subscription returns the subscriptionId in params._meta.
func (m msg) subscription() string {
	var p struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	_ = json.Unmarshal(m.Params, &p)
	return string(p.Meta[wire.MetaSubscriptionID])
}

// pipe is a client on the other end of Serve: it writes lines to the
// server's input and reads what the server writes, checking that every
// line is exactly one JSON object.
type pipe struct {
	t      testing.TB
	in     *io.PipeWriter
	out    chan msg
	done   chan error
	cancel context.CancelFunc

	mu   sync.Mutex
	seen []msg // every message read, for checks at the end
}

// open starts Serve on a pair of in-memory pipes.
func open(t testing.TB, srv *mrtr.Server, opts ...stdio.Option) *pipe {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	p := &pipe{t: t, in: inW, out: make(chan msg, 1024), done: make(chan error, 1), cancel: cancel}
	opts = append([]stdio.Option{stdio.WithLogger(quiet)}, opts...)
	go func() {
		err := stdio.Serve(ctx, srv, inR, outW, opts...)
		_ = outW.Close()
		p.done <- err
	}()
	go p.readAll(outR)
	t.Cleanup(func() {
		cancel()
		_ = inW.Close()
		_ = inR.Close()
	})
	return p
}

func (p *pipe) readAll(r io.Reader) {
	defer close(p.out)
	br := bufio.NewReaderSize(r, 1<<20)
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			if line[len(line)-1] != '\n' {
				p.t.Errorf("the output ended inside a line: %q", line)
				return
			}
			var m msg
			body := line[:len(line)-1]
			if !json.Valid(body) || bytes.ContainsAny(body, "\r\n") || json.Unmarshal(body, &m) != nil {
				p.t.Errorf("the server wrote a line that is not one JSON object: %q", line)
				continue
			}
			m.raw = body
			p.mu.Lock()
			p.seen = append(p.seen, m)
			p.mu.Unlock()
			p.out <- m
		}
		if err != nil {
			return
		}
	}
}

// send writes lines to the server, each with its newline.
func (p *pipe) send(lines ...string) {
	p.t.Helper()
	for _, l := range lines {
		_, err := io.WriteString(p.in, l+"\n")
		require.NoError(p.t, err)
	}
}

// next returns the next message the server writes.
func (p *pipe) next() msg {
	p.t.Helper()
	select {
	case m, ok := <-p.out:
		require.True(p.t, ok, "the output ended")
		return m
	case <-time.After(wait):
		p.t.Fatal("timed out waiting for the server")
	}
	return msg{}
}

// until returns the first message that matches, skipping the others.
func (p *pipe) until(what string, match func(msg) bool) msg {
	p.t.Helper()
	deadline := time.After(wait)
	for {
		select {
		case m, ok := <-p.out:
			require.True(p.t, ok, "the output ended waiting for %s", what)
			if match(m) {
				return m
			}
		case <-deadline:
			p.t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// response returns the next response to id, skipping other messages.
func (p *pipe) response(id string) msg {
	p.t.Helper()
	return p.until("the response to "+id, func(m msg) bool { return m.isResponse() && m.id() == id })
}

// close ends the input and returns what Serve returned, once the output
// is drained.
func (p *pipe) close() error {
	p.t.Helper()
	require.NoError(p.t, p.in.Close())
	return p.wait()
}

// wait returns what Serve returned, once the output is drained.
func (p *pipe) wait() error {
	p.t.Helper()
	select {
	case err := <-p.done:
		for range p.out {
		}
		return err
	case <-time.After(wait):
		p.t.Fatal("Serve did not return")
	}
	return nil
}

// all returns every message read so far.
func (p *pipe) all() []msg {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]msg(nil), p.seen...)
}

// modernMeta is the _meta of a request of MCP 2026-07-28, with extra
// members (such as a progress token) when given.
func modernMeta(extra string) string {
	m := `"_meta":{"` + wire.MetaProtocolVersion + `":"2026-07-28","` + wire.MetaClientCapabilities + `":{}`
	if extra != "" {
		m += "," + extra
	}
	return m + "}"
}

// call is a tools/call of MCP 2026-07-28.
func call(id, tool, args string) string {
	return callMeta(id, tool, args, "")
}

func callMeta(id, tool, args, extraMeta string) string {
	return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"` + tool + `","arguments":` + args + `,` + modernMeta(extraMeta) + `}}`
}

// legacyCall is a tools/call of the initialize era.
func legacyCall(id, tool, args string) string {
	return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"` + tool + `","arguments":` + args + `}}`
}

func cancelled(id string) string {
	return `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":` + id + `,"reason":"test"}}`
}

const initialize = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25",` +
	`"capabilities":{"elicitation":{},"sampling":{}},"clientInfo":{"name":"scripted","version":"1"}}}`

// noGoroutines fails unless every goroutine of the transport, the server
// and the legacy engine has ended.
func noGoroutines(t testing.TB) {
	t.Helper()
	var left []string
	for deadline := time.Now().Add(2 * time.Second); ; {
		left = left[:0]
		buf := make([]byte, 1<<20)
		buf = buf[:runtime.Stack(buf, true)]
		for _, g := range strings.Split(string(buf), "\n\n") {
			if strings.Contains(g, "mrtrkit/transport/stdio.") || strings.Contains(g, "mrtrkit/mrtr.") || strings.Contains(g, "mrtrkit/mrtr/legacy.") {
				left = append(left, g)
			}
		}
		if len(left) == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if len(left) > 0 {
		t.Fatalf("%d goroutines left after Serve returned:\n%s", len(left), strings.Join(left, "\n\n"))
	}
}

var errBroken = errors.New("broken output")

// brokenWriter fails every write.
type brokenWriter struct{}

func (brokenWriter) Write([]byte) (int, error) { return 0, errBroken }
