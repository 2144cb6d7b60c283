package flow_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mrtrkit/mrtrkit/discover"
	"github.com/mrtrkit/mrtrkit/mrtr"
	"github.com/mrtrkit/mrtrkit/state"
)

// syncBuffer collects log output written from handlers.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func newCodec(t testing.TB) state.Codec {
	t.Helper()
	ring, err := state.GenerateKeyRing()
	require.NoError(t, err)
	codec, err := state.NewAEAD(ring)
	require.NoError(t, err)
	return codec
}

// newServer returns a Server sealing with codec (a fresh one when nil).
func newServer(t testing.TB, codec state.Codec) (*mrtr.Server, *syncBuffer) {
	t.Helper()
	if codec == nil {
		codec = newCodec(t)
	}
	logs := &syncBuffer{}
	srv, err := mrtr.NewServer(discover.Description{Server: discover.Implementation{Name: "flow-test", Version: "1.0.0"}},
		mrtr.WithCodec(codec), mrtr.WithLogger(slog.New(slog.NewTextHandler(logs, nil))))
	require.NoError(t, err)
	return srv, logs
}

var nextID atomic.Int64

// allCaps declares every client capability; noCaps none.
const (
	allCaps = `{"sampling":{},"elicitation":{"form":{},"url":{}},"roots":{}}`
	noCaps  = `{}`
)

// client drives a Server the way an MCP client does, one message at a time.
type client struct {
	t    testing.TB
	srv  *mrtr.Server
	caps string
}

func newClient(t testing.TB, srv *mrtr.Server) *client { return &client{t: t, srv: srv, caps: allCaps} }

func (c *client) call(method string, params map[string]any) (json.RawMessage, *mrtr.Error) {
	c.t.Helper()
	p := map[string]any{"_meta": map[string]any{
		"io.modelcontextprotocol/protocolVersion":    "2026-07-28",
		"io.modelcontextprotocol/clientCapabilities": json.RawMessage(c.caps),
	}}
	for k, v := range params {
		p[k] = v
	}
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": nextID.Add(1), "method": method, "params": p})
	require.NoError(c.t, err)
	msg, _, perr := mrtr.ParseMessage(body)
	require.Nil(c.t, perr)
	resp := c.srv.Handle(context.Background(), &mrtr.Inbound{Message: msg})
	require.NotNil(c.t, resp)
	return resp.Result, resp.Error
}

// toolResult is a tools/call result as the client reads it.
type toolResult struct {
	ResultType string `json:"resultType"`
	Content    []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
	StructuredContent json.RawMessage `json:"structuredContent"`
	IsError           bool            `json:"isError"`
	InputRequests     map[string]struct {
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	} `json:"inputRequests"`
	RequestState string `json:"requestState"`
}

// text is the first content block's text.
func (r toolResult) text() string {
	if len(r.Content) == 0 {
		return ""
	}
	return r.Content[0].Text
}

// sampling decodes the sampling request asked under key.
func (r toolResult) sampling(t testing.TB, key string) mrtr.SamplingRequest {
	t.Helper()
	ir, ok := r.InputRequests[key]
	require.True(t, ok, "no input request %q in %v", key, r.InputRequests)
	require.Equal(t, mrtr.MethodCreateMessage, ir.Method)
	var sr mrtr.SamplingRequest
	require.NoError(t, json.Unmarshal(ir.Params, &sr))
	return sr
}

// asked lists the keys asked.
func (r toolResult) asked() []string {
	var ks []string
	for k := range r.InputRequests {
		ks = append(ks, k)
	}
	return sortStrings(ks)
}

// tool calls a tool; responses and requestState are sent when not empty.
func (c *client) tool(name string, args any, responses map[string]any, requestState string) (toolResult, *mrtr.Error) {
	c.t.Helper()
	p := map[string]any{"name": name, "arguments": args}
	if responses != nil {
		p["inputResponses"] = responses
	}
	if requestState != "" {
		p["requestState"] = requestState
	}
	raw, e := c.call(mrtr.MethodToolsCall, p)
	var r toolResult
	if e == nil {
		require.NoError(c.t, json.Unmarshal(raw, &r), string(raw))
	}
	return r, e
}

// modelAnswer is a client's answer to a sampling request.
func modelAnswer(text string) map[string]any {
	return map[string]any{"role": "assistant", "content": map[string]any{"type": "text", "text": text}, "model": "test-model", "stopReason": "endTurn"}
}
