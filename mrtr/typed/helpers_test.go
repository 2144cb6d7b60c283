package typed_test

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mrtrkit/mrtrkit/internal/testkit"
	"github.com/mrtrkit/mrtrkit/internal/wire"
	"github.com/mrtrkit/mrtrkit/mrtr"
)

// newServer returns a Server sealing with a fresh AEAD key, and its log.
func newServer(t testing.TB) (*mrtr.Server, *testkit.LogBuffer) {
	t.Helper()
	return testkit.LoggedServer(t, testkit.Desc("typed-test", "1.0.0"), nil, slog.LevelInfo)
}

// allCaps declares every client capability.
const allCaps = `{"sampling":{},"elicitation":{"form":{},"url":{}},"roots":{}}`

// call sends one request through ParseMessage and Server.Handle.
func call(t testing.TB, srv *mrtr.Server, method string, params map[string]any) (json.RawMessage, *mrtr.Error) {
	t.Helper()
	return testkit.Call(t, srv, allCaps, method, params)
}

// toolResult is a tools/call result as the client reads it.
type toolResult = testkit.ToolResult

// callTool calls a tool and decodes a successful result.
func callTool(t testing.TB, srv *mrtr.Server, name string, args any, extra map[string]any) (toolResult, *mrtr.Error) {
	t.Helper()
	p := map[string]any{"name": name, "arguments": args}
	for k, v := range extra {
		p[k] = v
	}
	raw, e := call(t, srv, wire.MethodToolsCall, p)
	var r toolResult
	if e == nil {
		require.NoError(t, json.Unmarshal(raw, &r), string(raw))
	}
	return r, e
}

// listedTool returns a tool as tools/list renders it.
func listedTool(t testing.TB, srv *mrtr.Server, name string) map[string]any {
	t.Helper()
	raw, e := call(t, srv, wire.MethodToolsList, nil)
	require.Nil(t, e)
	var res struct {
		Tools []map[string]any `json:"tools"`
	}
	require.NoError(t, json.Unmarshal(raw, &res))
	for _, tl := range res.Tools {
		if tl["name"] == name {
			return tl
		}
	}
	panic(fmt.Sprintf("tool %q not listed", name))
}
