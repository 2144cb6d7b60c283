package testkit

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mrtrkit/mrtrkit/mrtr"
	"github.com/mrtrkit/mrtrkit/mrtr/mrtrtest"
)

// Call sends one JSON-RPC request for method to srv, built and served by
// package mrtrtest as a client and a transport would, and returns the
// response's result or error. Its params carry a _meta declaring
// protocol version 2026-07-28 and the client capabilities caps (a JSON
// object); a "_meta" member of params replaces that one.
func Call(tb testing.TB, srv *mrtr.Server, caps, method string, params map[string]any) (json.RawMessage, *mrtr.Error) {
	tb.Helper()
	req := mrtrtest.NewRequest(method, params).WithCapabilities(caps)
	if m, ok := params["_meta"]; ok {
		body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
		require.NoError(tb, err)
		msg, _, perr := mrtr.ParseMessage(body)
		require.Nil(tb, perr, "params with _meta %v", m)
		resp := srv.Handle(context.Background(), &mrtr.Inbound{Message: msg})
		require.NotNil(tb, resp)
		return resp.Result, resp.Error
	}
	return mrtrtest.Send(context.Background(), srv, "", req)
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
