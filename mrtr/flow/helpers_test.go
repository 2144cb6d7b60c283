package flow_test

import (
	"encoding/json"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mrtrkit/mrtrkit/internal/testkit"
	"github.com/mrtrkit/mrtrkit/internal/wire"
	"github.com/mrtrkit/mrtrkit/mrtr"
	"github.com/mrtrkit/mrtrkit/state"
)

// newServer returns a Server sealing with codec (a fresh one when nil),
// and its log.
func newServer(t testing.TB, codec state.Codec) (*mrtr.Server, *testkit.LogBuffer) {
	t.Helper()
	return testkit.LoggedServer(t, testkit.Desc("flow-test", "1.0.0"), codec, slog.LevelInfo)
}

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
	return testkit.Call(c.t, c.srv, c.caps, method, params)
}

// toolResult is a tools/call result as the client reads it.
type toolResult struct{ testkit.ToolResult }

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
	require.Equal(t, wire.MethodCreateMessage, ir.Method)
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
	raw, e := c.call(wire.MethodToolsCall, p)
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
