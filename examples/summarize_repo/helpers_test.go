package main

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mrtrkit/mrtrkit/internal/testkit"
	"github.com/mrtrkit/mrtrkit/mrtr"
	"github.com/mrtrkit/mrtrkit/state"
	"github.com/mrtrkit/mrtrkit/transport/streamablehttp"
)

// testServer is the example served over real HTTP on a loopback port.
type testServer struct {
	t   *testing.T
	url string
	app *App
}

// testCodec seals requestState with a fixed test key and the given codec
// options (a clock, a TTL). The round limit is the Server's
// (mrtr.WithMaxRounds(maxModelRounds), set by NewApp), not the codec's.
func testCodec(t *testing.T, opts ...state.Option) state.Codec {
	t.Helper()
	ring := testkit.Ring(t, testkit.Key("test", 7))
	return testkit.AEAD(t, ring, opts...)
}

// headerPrincipal authenticates "Authorization: Bearer <name>" as <name>
// and a request without the header as anonymous.
func headerPrincipal(r *http.Request) (*mrtr.TokenInfo, error) {
	p := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
	if p == "" {
		return nil, nil
	}
	return &mrtr.TokenInfo{Subject: p}, nil
}

func quietLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }

// startServer serves cfg on httptest. A nil codec means a fresh test codec.
func startServer(t *testing.T, cfg Config, codec state.Codec) *testServer {
	t.Helper()
	return startSettings(t, Settings{Config: cfg}, codec)
}

// startSettings serves what a command line selects on httptest.
func startSettings(t *testing.T, s Settings, codec state.Codec) *testServer {
	t.Helper()
	cfg := &s.Config
	if codec == nil {
		codec = testCodec(t)
	}
	if cfg.Logger == nil {
		cfg.Logger = quietLogger()
	}
	if cfg.Limits.MaxFileSize == 0 {
		cfg.Limits.MaxFileSize = 2048 // testTree's big.txt is over it
	}
	app, err := newAppFromSettings(s, []mrtr.Option{mrtr.WithCodec(codec)},
		[]streamablehttp.Option{streamablehttp.WithAuthenticator(headerPrincipal)})
	require.NoError(t, err)
	hs := httptest.NewServer(app.Handler)
	t.Cleanup(func() {
		hs.Close()
		app.Close()
	})
	return &testServer{t: t, url: hs.URL + "/mcp", app: app}
}

// rpcReply is a decoded JSON-RPC response.
type rpcReply struct {
	Status int
	ID     json.RawMessage `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int             `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	} `json:"error"`
	raw []byte
}

// result decodes the result into v and fails the test on an error reply.
func (r *rpcReply) result(t *testing.T, v any) {
	t.Helper()
	require.Falsef(t, r.Error != nil || r.Result == nil, "want a result, got HTTP %d %s", r.Status, r.raw)
	if err := json.Unmarshal(r.Result, v); err != nil {
		require.FailNow(t, fmt.Sprintf("decode result: %v\n%s", err, r.raw))
	}
}

// wantError fails the test unless the reply is the error code with the
// HTTP status.
func (r *rpcReply) wantError(t *testing.T, code, status int) {
	t.Helper()
	require.Falsef(t, r.Error == nil || r.Error.Code != code || r.Status != status, "want error %d with HTTP %d, got HTTP %d %s", code, status, r.Status, r.raw)
}

// post sends one JSON-RPC message with the headers the protocol requires.
// principal "" sends no Authorization header.
func (s *testServer) post(method, name, principal, body string) *rpcReply {
	s.t.Helper()
	req, err := http.NewRequest(http.MethodPost, s.url, strings.NewReader(body))
	require.NoError(s.t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", method)
	if name != "" {
		req.Header.Set("Mcp-Name", name)
	}
	if principal != "" {
		req.Header.Set("Authorization", "Bearer "+principal)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(s.t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(s.t, err)
	r := &rpcReply{Status: resp.StatusCode, raw: b}
	if len(b) > 0 {
		require.NoErrorf(s.t, json.Unmarshal(b, r), "HTTP %d: body is not a JSON-RPC response: %s", resp.StatusCode, b)
	}
	return r
}

// meta is the _meta of a request; sampling declares the capability.
func meta(sampling bool) map[string]any {
	caps := map[string]any{}
	if sampling {
		caps["sampling"] = map[string]any{}
	}
	return map[string]any{
		"io.modelcontextprotocol/protocolVersion":    "2026-07-28",
		"io.modelcontextprotocol/clientCapabilities": caps,
	}
}

// toolCall is one tools/call of summarize_repo.
type toolCall struct {
	Args      map[string]any // nil: {"audience":"developer"}
	State     string
	Answers   map[string]any // key -> CreateMessageResult
	Principal string
	NoSample  bool // leave the sampling capability out
}

var callID int

// call sends a tools/call and returns the reply.
func (s *testServer) call(c toolCall) *rpcReply {
	s.t.Helper()
	args := c.Args
	if args == nil {
		args = map[string]any{"audience": "developer"}
	}
	params := map[string]any{"name": ToolName, "arguments": args, "_meta": meta(!c.NoSample)}
	if c.State != "" {
		params["requestState"] = c.State
	}
	if c.Answers != nil {
		params["inputResponses"] = c.Answers
	}
	callID++
	b, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": callID, "method": "tools/call", "params": params})
	require.NoError(s.t, err)
	return s.post("tools/call", ToolName, c.Principal, string(b))
}

// answer is a model's reply as a client puts it in inputResponses.
func answer(text string) map[string]any {
	return map[string]any{
		"role":       "assistant",
		"content":    map[string]any{"type": "text", "text": text},
		"model":      "test-model",
		"stopReason": "endTurn",
	}
}

// inputRequired is an input_required result with sampling requests.
type inputRequired struct {
	ResultType    string `json:"resultType"`
	InputRequests map[string]struct {
		Method string               `json:"method"`
		Params mrtr.SamplingRequest `json:"params"`
	} `json:"inputRequests"`
	RequestState string `json:"requestState"`
}

// asked checks that the reply asks exactly key and returns the prompt
// text, the request and the state.
func (r *rpcReply) asked(t *testing.T, key string) (string, mrtr.SamplingRequest, string) {
	t.Helper()
	var ir inputRequired
	r.result(t, &ir)
	require.Falsef(t, ir.ResultType != "input_required" || len(ir.InputRequests) != 1 || ir.RequestState == "", "want input_required asking %s, got %s", key, r.raw)
	req, ok := ir.InputRequests[key]
	require.Falsef(t, !ok || req.Method != "sampling/createMessage", "want a sampling request keyed %s, got %s", key, r.raw)
	require.Falsef(t, len(req.Params.Messages) != 1 || len(req.Params.Messages[0].Content) != 1, "want one message with one block, got %s", r.raw)
	return req.Params.Messages[0].Content[0].Text, req.Params, ir.RequestState
}

// completeResult is a complete tools/call result.
type completeResult struct {
	ResultType string `json:"resultType"`
	Content    []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
	StructuredContent *Output `json:"structuredContent"`
	IsError           bool    `json:"isError"`
}

func (r *rpcReply) complete(t *testing.T) completeResult {
	t.Helper()
	var c completeResult
	r.result(t, &c)
	require.EqualValuesf(t, "complete", c.ResultType, "want a complete result, got %s", r.raw)
	return c
}

// wantToolError fails the test unless the reply is an isError result
// whose text mentions substr.
func (r *rpcReply) wantToolError(t *testing.T, substr string) {
	t.Helper()
	c := r.complete(t)
	require.Falsef(t, !c.IsError || len(c.Content) != 1 || !strings.Contains(c.Content[0].Text, substr), "want an isError result mentioning %q, got %s", substr, r.raw)
}

// unavailable skips a test whose setup the platform cannot provide (a
// FIFO, a symlink, a file name), except in CI, where these tests guard the
// path-safety rules and must run: there it fails.
func unavailable(t *testing.T, format string, args ...any) {
	t.Helper()
	if os.Getenv("CI") != "" {
		require.FailNow(t, fmt.Sprintf(format, args...))
	}
	t.Skipf(format, args...)
}
