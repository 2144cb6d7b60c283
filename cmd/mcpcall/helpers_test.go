package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mrtrkit/mrtrkit/discover"
	"github.com/mrtrkit/mrtrkit/internal/testkit"
	"github.com/mrtrkit/mrtrkit/mrtr"
	"github.com/mrtrkit/mrtrkit/transport/streamablehttp"
)

// cliResult is what one run of the CLI did.
type cliResult struct {
	code   int
	stdout string
	stderr string
}

// cli runs mcpcall with args, stdin and an environment (nil: empty).
type cli struct {
	stdin     string
	terminal  bool
	env       map[string]string
	transport http.RoundTripper // nil: http.DefaultTransport
}

func (c cli) run(t *testing.T, args ...string) cliResult {
	t.Helper()
	var out, errb bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	code := run(ctx, args, &env{
		stdin:     strings.NewReader(c.stdin),
		stdout:    &out,
		stderr:    &errb,
		getenv:    func(k string) string { return c.env[k] },
		terminal:  c.terminal,
		transport: c.transport,
	})
	return cliResult{code, out.String(), errb.String()}
}

func runCLI(t *testing.T, args ...string) cliResult {
	t.Helper()
	return cli{}.run(t, args...)
}

// seen is one HTTP request the test server received.
type seen struct {
	Header http.Header
	Body   []byte
	Method string // the JSON-RPC method
}

// meta decodes the request's params._meta.
func (s seen) meta(t *testing.T) map[string]json.RawMessage {
	t.Helper()
	var m struct {
		Params struct {
			Meta map[string]json.RawMessage `json:"_meta"`
		} `json:"params"`
	}
	require.NoError(t, json.Unmarshal(s.Body, &m))
	return m.Params.Meta
}

// recorder keeps every request a handler receives.
type recorder struct {
	mu   sync.Mutex
	reqs []seen
}

func (r *recorder) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		var m struct {
			Method string `json:"method"`
		}
		_ = json.Unmarshal(body, &m)
		r.mu.Lock()
		r.reqs = append(r.reqs, seen{Header: req.Header.Clone(), Body: body, Method: m.Method})
		r.mu.Unlock()
		req.Body = io.NopCloser(bytes.NewReader(body))
		h.ServeHTTP(w, req)
	})
}

// all returns the requests for method ("" for all).
func (r *recorder) all(method string) []seen {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []seen
	for _, s := range r.reqs {
		if method == "" || s.Method == method {
			out = append(out, s)
		}
	}
	return out
}

// testServer is an mrtr server with tools that exercise every kind of
// input round, served by streamablehttp on httptest.
type testServer struct {
	url string
	rec *recorder
}

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

func newTestServer(t *testing.T, httpOpts ...streamablehttp.Option) *testServer {
	t.Helper()
	srv, err := mrtr.NewServer(discover.Description{
		Server:       discover.Implementation{Name: "mcpcall-test", Title: "Test server", Version: "1.2.3"},
		Capabilities: discover.Capabilities{Logging: &discover.Empty{}},
		Instructions: "Use greet to be greeted.",
	}, mrtr.WithCodec(testkit.Codec(t)), mrtr.WithLogger(quiet))
	require.NoError(t, err)
	tool := func(tl mrtr.Tool, h func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error)) {
		if tl.InputSchema == nil {
			tl.InputSchema = json.RawMessage(`{"type":"object"}`)
		}
		require.NoError(t, srv.AddTool(tl, mrtr.HandlerFunc(h)))
	}

	// greet asks for a name (elicitation) and the roots in round 1, for a
	// haiku (sampling) in round 2, and completes in round 3.
	type greetState struct {
		Name  string   `json:"name"`
		Roots []string `json:"roots"`
	}
	tool(mrtr.Tool{Name: "greet", Title: "Greeter", Description: "Greets you with a haiku."},
		func(_ context.Context, req *mrtr.Request) (mrtr.Result, error) {
			var st greetState
			if req.State != nil {
				if err := json.Unmarshal(req.State, &st); err != nil {
					return nil, err
				}
			}
			if ans, ok := req.Responses.Elicitation("name"); ok {
				if !ans.Accepted() {
					return mrtr.TextResult("no name, no greeting (" + string(ans.Action) + ")"), nil
				}
				st.Name = fmt.Sprint(ans.Content["name"])
			}
			if r, ok := req.Responses.Roots("roots"); ok {
				for _, root := range r.Roots {
					st.Roots = append(st.Roots, root.URI)
				}
			}
			if st.Name == "" {
				return &mrtr.InputRequired{Requests: map[string]mrtr.InputRequest{
					"name": &mrtr.ElicitRequest{Message: "What is your name?", RequestedSchema: &mrtr.ElicitSchema{
						Type:       "object",
						Properties: map[string]json.RawMessage{"name": json.RawMessage(`{"type":"string","title":"Name"}`)},
						Required:   []string{"name"},
					}},
					"roots": &mrtr.RootsRequest{},
				}}, nil
			}
			if h, ok := req.Responses.Sampling("haiku"); ok {
				return &mrtr.CallToolResult{
					Content:           []mrtr.Content{mrtr.Text("Hello, " + st.Name + "!\n" + h.Text())},
					StructuredContent: map[string]any{"name": st.Name, "haiku": h.Text(), "model": h.Model, "roots": st.Roots},
				}, nil
			}
			b, err := json.Marshal(st)
			if err != nil {
				return nil, err
			}
			return &mrtr.InputRequired{
				Requests: map[string]mrtr.InputRequest{"haiku": &mrtr.SamplingRequest{
					Messages:     []mrtr.SamplingMessage{mrtr.UserText("Write a haiku for " + st.Name)},
					SystemPrompt: "You are a poet.",
					MaxTokens:    60,
				}},
				State: b,
			}, nil
		})

	tool(mrtr.Tool{Name: "weather", Description: "Forecast for a region.", InputSchema: json.RawMessage(`{
		"type":"object",
		"properties":{
			"region":{"type":"string","x-mcp-header":"Region","description":"where"},
			"days":{"type":"integer","x-mcp-header":"Days"},
			"metric":{"type":"boolean","x-mcp-header":"Metric"},
			"city":{"type":"string"}},
		"required":["region"]}`)},
		func(_ context.Context, req *mrtr.Request) (mrtr.Result, error) {
			var a struct {
				Region string `json:"region"`
				Days   int    `json:"days"`
			}
			if err := json.Unmarshal(req.Arguments, &a); err != nil {
				return nil, err
			}
			return mrtr.TextResult(fmt.Sprintf("sunny in %s for %d days", a.Region, a.Days)), nil
		})

	tool(mrtr.Tool{Name: "boom"}, func(context.Context, *mrtr.Request) (mrtr.Result, error) {
		return mrtr.ErrorResult("the boom tool always fails"), nil
	})
	tool(mrtr.Tool{Name: "picky"}, func(context.Context, *mrtr.Request) (mrtr.Result, error) {
		return nil, mrtr.NewError(mrtr.CodeInvalidParams, "picky refuses", map[string]string{"why": "always"})
	})
	tool(mrtr.Tool{Name: "slow"}, func(_ context.Context, req *mrtr.Request) (mrtr.Result, error) {
		total := 2.0
		for i := 1; i <= 2; i++ {
			if err := req.Progress(float64(i), &total, fmt.Sprintf("step %d", i)); err != nil {
				return nil, err
			}
		}
		if err := req.Log(mrtr.LevelInfo, "slow", "halfway there"); err != nil {
			return nil, err
		}
		return mrtr.TextResult("done slowly"), nil
	})
	tool(mrtr.Tool{Name: "nag"}, func(_ context.Context, req *mrtr.Request) (mrtr.Result, error) {
		return mrtr.Ask(fmt.Sprintf("again%d", req.Round), &mrtr.ElicitRequest{Message: "Sure?", RequestedSchema: &mrtr.ElicitSchema{
			Type: "object", Properties: map[string]json.RawMessage{"sure": json.RawMessage(`{"type":"boolean"}`)},
		}}), nil
	})
	tool(mrtr.Tool{Name: "form", Description: "An elaborate form."}, func(_ context.Context, req *mrtr.Request) (mrtr.Result, error) {
		if ans, ok := req.Responses.Elicitation("profile"); ok {
			b, _ := json.Marshal(ans.Content)
			return mrtr.TextResult(string(ans.Action) + " " + string(b)), nil
		}
		return mrtr.Ask("profile", &mrtr.ElicitRequest{Message: "Your profile", RequestedSchema: &mrtr.ElicitSchema{
			Type: "object",
			Properties: map[string]json.RawMessage{
				"age":    json.RawMessage(`{"type":"integer","title":"Age","minimum":0,"maximum":150}`),
				"colour": json.RawMessage(`{"type":"string","oneOf":[{"const":"r","title":"Red"},{"const":"g","title":"Green"}]}`),
				"tags":   json.RawMessage(`{"type":"array","items":{"type":"string","enum":["a","b","c"]},"maxItems":2}`),
				"ok":     json.RawMessage(`{"type":"boolean","default":true}`),
				"email":  json.RawMessage(`{"type":"string","format":"email"}`),
			},
			Required: []string{"age", "colour"},
		}}), nil
	})

	tool(mrtr.Tool{Name: "open_url"}, func(_ context.Context, req *mrtr.Request) (mrtr.Result, error) {
		if ans, ok := req.Responses.Elicitation("link"); ok {
			return mrtr.TextResult("link " + string(ans.Action)), nil
		}
		return mrtr.Ask("link", &mrtr.ElicitRequest{Mode: "url", Message: "Sign in to continue", URL: "https://auth.example.com/start?x=1"}), nil
	})

	require.NoError(t, srv.AddPrompt(mrtr.Prompt{Name: "hello", Description: "Says hello.",
		Arguments: []mrtr.PromptArgument{{Name: "who", Required: true, Description: "whom to greet"}}},
		mrtr.HandlerFunc(func(_ context.Context, req *mrtr.Request) (mrtr.Result, error) {
			return &mrtr.GetPromptResult{Description: "a greeting", Messages: []mrtr.PromptMessage{
				{Role: mrtr.RoleUser, Content: mrtr.Text("Say hello to " + req.PromptArguments["who"])},
			}}, nil
		})))
	require.NoError(t, srv.AddPrompt(mrtr.Prompt{Name: "grüße"},
		mrtr.HandlerFunc(func(_ context.Context, req *mrtr.Request) (mrtr.Result, error) {
			return &mrtr.GetPromptResult{Messages: []mrtr.PromptMessage{{Role: mrtr.RoleUser, Content: mrtr.Text("Grüß Gott")}}}, nil
		})))
	require.NoError(t, srv.AddResource(mrtr.Resource{URI: "test://readme", Name: "readme", MIMEType: "text/plain"},
		mrtr.HandlerFunc(func(context.Context, *mrtr.Request) (mrtr.Result, error) {
			return &mrtr.ReadResourceResult{Contents: []mrtr.ResourceContents{mrtr.TextResource("test://readme", "text/plain", "Read me, please.")}}, nil
		})))
	require.NoError(t, srv.AddResourceTemplate(mrtr.ResourceTemplate{URITemplate: "test://items/{id}", Name: "item"},
		mrtr.HandlerFunc(func(_ context.Context, req *mrtr.Request) (mrtr.Result, error) {
			return &mrtr.ReadResourceResult{Contents: []mrtr.ResourceContents{mrtr.TextResource(req.URI, "text/plain", "item "+req.Vars["id"])}}, nil
		})))

	h, err := streamablehttp.New(srv, append([]streamablehttp.Option{streamablehttp.WithLogger(quiet)}, httpOpts...)...)
	require.NoError(t, err)
	rec := &recorder{}
	hs := httptest.NewServer(rec.wrap(h))
	t.Cleanup(hs.Close)
	return &testServer{url: hs.URL + "/mcp", rec: rec}
}

// writeFile writes a file in a fresh temporary directory.
func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(p, []byte(content), 0o600))
	return p
}

// jsonLines decodes every line of out as a JSON object.
func jsonLines(t *testing.T, out string) []map[string]json.RawMessage {
	t.Helper()
	var lines []map[string]json.RawMessage
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var m map[string]json.RawMessage
		require.NoError(t, json.Unmarshal([]byte(l), &m), "line %q", l)
		lines = append(lines, m)
	}
	return lines
}

func str(t *testing.T, raw json.RawMessage) string {
	t.Helper()
	var s string
	require.NoError(t, json.Unmarshal(raw, &s))
	return s
}

// fakeServer is a hand-written MCP endpoint for what mrtr would never
// send. It answers server/discover as a server of 2026-07-28 (what the
// client's Connect asks first), tools/list with no tools, and every other
// request with respond(id, n, body), n counting those requests from 1;
// respond writes the whole answer.
func fakeServer(t *testing.T, respond func(w http.ResponseWriter, id int64, n int, body []byte)) *httptest.Server {
	t.Helper()
	var mu sync.Mutex
	n := 0
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var req struct {
			ID     int64  `json:"id"`
			Method string `json:"method"`
		}
		_ = json.Unmarshal(body, &req)
		if req.Method == "server/discover" {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%d,"result":{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{"tools":{}},"ttlMs":0,"cacheScope":"public"}}`, req.ID)
			return
		}
		if req.Method == "tools/list" {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%d,"result":{"resultType":"complete","tools":[],"ttlMs":0,"cacheScope":"public"}}`, req.ID)
			return
		}
		mu.Lock()
		n++
		k := n
		mu.Unlock()
		respond(w, req.ID, k, body)
	}))
	t.Cleanup(s.Close)
	return s
}
