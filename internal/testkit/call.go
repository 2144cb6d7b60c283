package testkit

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mrtrkit/mrtrkit/mrtr"
)

// nextID numbers the requests Call sends.
var nextID atomic.Int64

// Call sends one JSON-RPC request for method to srv through
// mrtr.ParseMessage and Server.Handle, the way a client would, and returns
// the response's result or error. Its params carry a _meta declaring
// protocol version 2026-07-28 and the client capabilities caps (a JSON
// object); a "_meta" member of params replaces that one. Each request has
// a new id, counting from 1 within a test binary.
func Call(tb testing.TB, srv *mrtr.Server, caps, method string, params map[string]any) (json.RawMessage, *mrtr.Error) {
	tb.Helper()
	p := map[string]any{"_meta": map[string]any{
		"io.modelcontextprotocol/protocolVersion":    "2026-07-28",
		"io.modelcontextprotocol/clientCapabilities": json.RawMessage(caps),
	}}
	for k, v := range params {
		p[k] = v
	}
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": nextID.Add(1), "method": method, "params": p})
	require.NoError(tb, err)
	msg, _, perr := mrtr.ParseMessage(body)
	require.Nil(tb, perr)
	resp := srv.Handle(context.Background(), &mrtr.Inbound{Message: msg})
	require.NotNil(tb, resp)
	return resp.Result, resp.Error
}

// ToolResult is a tools/call result as a client reads it: complete, or
// input_required with its input requests and requestState.
type ToolResult struct {
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
