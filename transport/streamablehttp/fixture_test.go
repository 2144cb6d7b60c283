package streamablehttp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mrtrkit/mrtrkit/discover"
	"github.com/mrtrkit/mrtrkit/internal/testkit"
	"github.com/mrtrkit/mrtrkit/mrtr"
)

// quiet discards log output in tests.
var quiet = slog.New(slog.DiscardHandler)

// fixture is a test server: an mrtr.Server with a few tools, prompts and
// resources, served by a Handler on a loopback httptest server.
type fixture struct {
	url string
	srv *mrtr.Server
	// observed receives a value when the "wait" tool sees its context end,
	// and the error a Progress call returned after that.
	observed chan error
	// requests receives the Request of every "keep" call, so that a test
	// can use it after the call has been answered.
	requests chan *mrtr.Request
	// release lets the "hold" tool return.
	release chan struct{}
}

// newTestServer builds the mrtr.Server every transport test uses.
func newTestServer(tb testing.TB, f *fixture) *mrtr.Server {
	tb.Helper()
	srv, err := mrtr.NewServer(discover.Description{
		Server:       discover.Implementation{Name: "t", Version: "1"},
		Capabilities: discover.Capabilities{Logging: &discover.Empty{}},
	}, mrtr.WithCodec(testkit.Codec(tb)), mrtr.WithLogger(quiet))
	require.NoError(tb, err)

	text := func(s string) *mrtr.CallToolResult {
		return &mrtr.CallToolResult{Content: []mrtr.Content{mrtr.Text(s)}}
	}
	tool := func(name, schema string, h func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error)) {
		require.NoError(tb, srv.AddTool(mrtr.Tool{Name: name, InputSchema: json.RawMessage(schema)}, mrtr.HandlerFunc(h)))
	}

	tool("echo", `{"type":"object","properties":{"text":{"type":"string"}}}`, func(_ context.Context, req *mrtr.Request) (mrtr.Result, error) {
		var args struct{ Text string }
		if err := json.Unmarshal(req.Arguments, &args); err != nil {
			return mrtr.ErrorResult("arguments: " + err.Error()), nil
		}
		return text(args.Text), nil
	})
	tool("whoami", `{"type":"object"}`, func(_ context.Context, req *mrtr.Request) (mrtr.Result, error) {
		return text("principal=" + req.Principal), nil
	})
	tool("regional", `{"type":"object","properties":{
		"region":{"type":"string","x-mcp-header":"Region"},
		"limit":{"type":"integer","x-mcp-header":"Limit"},
		"q":{"type":"string"}}}`, func(context.Context, *mrtr.Request) (mrtr.Result, error) {
		return text("ok"), nil
	})
	tool("sampler", `{"type":"object"}`, func(context.Context, *mrtr.Request) (mrtr.Result, error) {
		return mrtr.Ask("draft", &mrtr.SamplingRequest{Messages: []mrtr.SamplingMessage{mrtr.UserText("write")}, MaxTokens: 50}), nil
	})
	tool("confirm", `{"type":"object","properties":{"item":{"type":"string"}}}`, func(_ context.Context, req *mrtr.Request) (mrtr.Result, error) {
		if ans, ok := req.Responses.Elicitation("ok"); ok {
			return text("confirmed=" + string(ans.Action)), nil
		}
		return mrtr.Ask("ok", &mrtr.ElicitRequest{
			Message:         "Proceed?",
			RequestedSchema: &mrtr.ElicitSchema{Type: "object", Properties: map[string]json.RawMessage{"sure": json.RawMessage(`{"type":"boolean"}`)}},
		}), nil
	})
	tool("progress", `{"type":"object","properties":{"steps":{"type":"integer"},"fail":{"type":"boolean"},"sleepMs":{"type":"integer"}}}`, func(_ context.Context, req *mrtr.Request) (mrtr.Result, error) {
		var args struct {
			Steps   int
			Fail    bool
			SleepMs int
		}
		if err := json.Unmarshal(req.Arguments, &args); err != nil {
			return nil, err
		}
		total := float64(args.Steps)
		for i := 1; i <= args.Steps; i++ {
			if err := req.Progress(float64(i), &total, ""); err != nil {
				return nil, err
			}
		}
		if err := req.Log(mrtr.LevelInfo, "progress", "working"); err != nil {
			return nil, err
		}
		time.Sleep(time.Duration(args.SleepMs) * time.Millisecond)
		if args.Fail {
			return nil, errors.New("the work failed")
		}
		return text("done"), nil
	})
	tool("fanout", `{"type":"object","properties":{"n":{"type":"integer"}}}`, func(_ context.Context, req *mrtr.Request) (mrtr.Result, error) {
		var args struct{ N int }
		if err := json.Unmarshal(req.Arguments, &args); err != nil {
			return nil, err
		}
		var wg sync.WaitGroup
		errs := make(chan error, args.N)
		for i := range args.N {
			wg.Go(func() { errs <- req.Progress(float64(i), nil, "step") })
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				return nil, err
			}
		}
		return text("fanned"), nil
	})
	tool("wait", `{"type":"object"}`, func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
		if err := req.Progress(0, nil, "started"); err != nil {
			return nil, err
		}
		select {
		case <-ctx.Done():
			f.observed <- req.Progress(1, nil, "after disconnect")
			return nil, ctx.Err()
		case <-time.After(10 * time.Second):
			f.observed <- errors.New("the context was not cancelled")
			return text("timeout"), nil
		}
	})
	tool("hold", `{"type":"object"}`, func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
		if err := req.Progress(0, nil, "holding"); err != nil {
			return nil, err
		}
		select {
		case <-f.release:
			return text("released"), nil
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(10 * time.Second):
			return nil, errors.New("never released")
		}
	})
	tool("keep", `{"type":"object","properties":{"emit":{"type":"boolean"}}}`, func(_ context.Context, req *mrtr.Request) (mrtr.Result, error) {
		var args struct{ Emit bool }
		if err := json.Unmarshal(req.Arguments, &args); err != nil {
			return nil, err
		}
		if args.Emit {
			if err := req.Progress(0, nil, "streaming"); err != nil {
				return nil, err
			}
		}
		f.requests <- req
		return text("kept"), nil
	})

	prompt := func(name string) {
		require.NoError(tb, srv.AddPrompt(mrtr.Prompt{Name: name}, mrtr.HandlerFunc(func(context.Context, *mrtr.Request) (mrtr.Result, error) {
			return &mrtr.GetPromptResult{Messages: []mrtr.PromptMessage{{Role: mrtr.RoleUser, Content: mrtr.Text("hello")}}}, nil
		})))
	}
	prompt("greet")
	prompt("grüße")

	resource := func(uri string) {
		require.NoError(tb, srv.AddResource(mrtr.Resource{URI: uri, Name: "a"}, mrtr.HandlerFunc(func(context.Context, *mrtr.Request) (mrtr.Result, error) {
			return &mrtr.ReadResourceResult{Contents: []mrtr.ResourceContents{mrtr.TextResource(uri, "text/plain", "A")}}, nil
		})))
	}
	resource("file:///a.txt")
	resource("file:///ü.txt")
	return srv
}

// newFixture serves the test server with the given options.
func newFixture(t testing.TB, opts ...Option) *fixture {
	t.Helper()
	f := &fixture{observed: make(chan error, 1), requests: make(chan *mrtr.Request, 1), release: make(chan struct{})}
	f.srv = newTestServer(t, f)
	h, err := New(f.srv, append([]Option{WithLogger(quiet)}, opts...)...)
	require.NoError(t, err)
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	f.url = ts.URL
	return f
}

// metaJSON is a valid params._meta declaring no client capabilities.
const metaJSON = `{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`

// call is one request to send.
type call struct {
	method  string // HTTP method; POST when empty
	path    string // "/mcp" when empty
	host    string // Host header; the server's address when empty
	headers [][2]string
	body    string
}

// toolCall returns the standard call of a tool with valid headers.
func toolCall(id any, tool, args string, extra ...[2]string) call {
	idJSON, _ := json.Marshal(id)
	body := `{"jsonrpc":"2.0","id":` + string(idJSON) + `,"method":"tools/call","params":{"name":"` + tool + `","arguments":` + args + `,"_meta":` + metaJSON + `}}`
	return call{
		headers: append([][2]string{
			{"Content-Type", "application/json"},
			{"Accept", "application/json, text/event-stream"},
			{"MCP-Protocol-Version", "2026-07-28"},
			{"Mcp-Method", "tools/call"},
			{"Mcp-Name", tool},
		}, extra...),
		body: body,
	}
}

// withMeta returns c with the _meta of its body replaced.
func (c call) withMeta(meta string) call {
	c.body = strings.Replace(c.body, `"_meta":`+metaJSON, `"_meta":`+meta, 1)
	return c
}

// withHeader returns c with the header spelt name set to value: its first
// line replaced, or a line added.
func (c call) withHeader(name, value string) call {
	headers := append([][2]string(nil), c.headers...)
	for i := range headers {
		if headers[i][0] == name {
			headers[i][1] = value
			c.headers = headers
			return c
		}
	}
	c.headers = append(headers, [2]string{name, value})
	return c
}

// withBody returns c with its body replaced.
func (c call) withBody(body string) call {
	c.body = body
	return c
}

// request builds the HTTP request. Header names are sent exactly as given.
func (c call) request(ctx context.Context, base string) (*http.Request, error) {
	method := c.method
	if method == "" {
		method = http.MethodPost
	}
	path := c.path
	if path == "" {
		path = "/mcp"
	}
	var body io.Reader
	if c.body != "" {
		body = strings.NewReader(c.body)
	}
	req, err := http.NewRequestWithContext(ctx, method, base+path, body)
	if err != nil {
		return nil, err
	}
	for _, h := range c.headers {
		req.Header[h[0]] = append(req.Header[h[0]], h[1])
	}
	if c.host != "" {
		req.Host = c.host
	}
	return req, nil
}

// do sends c and returns the response with its whole body.
func (f *fixture) do(t testing.TB, c call) (*http.Response, []byte) {
	t.Helper()
	req, err := c.request(context.Background(), f.url)
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp, b
}

// sseEvent is one event of a text/event-stream body.
type sseEventRecord struct {
	event string
	data  string
}

// readSSE parses an event stream, returning its events and how many
// comment lines it held.
func readSSE(t testing.TB, body []byte) (events []sseEventRecord, comments int) {
	t.Helper()
	sc := bufio.NewScanner(bytes.NewReader(body))
	var cur sseEventRecord
	var data []string
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if cur.event != "" || len(data) > 0 {
				cur.data = strings.Join(data, "\n")
				events = append(events, cur)
			}
			cur, data = sseEventRecord{}, nil
		case strings.HasPrefix(line, ":"):
			comments++
		case strings.HasPrefix(line, "event: "):
			cur.event = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			data = append(data, strings.TrimPrefix(line, "data: "))
		case strings.HasPrefix(line, "id:"):
			t.Fatalf("the stream carries an event id: %q", line)
		default:
			t.Fatalf("unexpected line in the event stream: %q", line)
		}
	}
	require.NoError(t, sc.Err())
	require.True(t, cur.event == "" && len(data) == 0, "the stream ends inside an event")
	return events, comments
}

// rpc is a decoded JSON-RPC message as the tests inspect it.
type rpc struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int             `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	} `json:"error"`
}

func decodeRPC(t testing.TB, b []byte) rpc {
	t.Helper()
	var m rpc
	require.NoError(t, json.Unmarshal(b, &m), "body: %s", b)
	return m
}
