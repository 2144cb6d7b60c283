package typed_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
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

// newServer returns a Server sealing with a fresh AEAD key, and its log.
func newServer(t testing.TB) (*mrtr.Server, *syncBuffer) {
	t.Helper()
	ring, err := state.GenerateKeyRing()
	require.NoError(t, err)
	codec, err := state.NewAEAD(ring)
	require.NoError(t, err)
	logs := &syncBuffer{}
	srv, err := mrtr.NewServer(discover.Description{Server: discover.Implementation{Name: "typed-test", Version: "1.0.0"}},
		mrtr.WithCodec(codec), mrtr.WithLogger(slog.New(slog.NewTextHandler(logs, nil))))
	require.NoError(t, err)
	return srv, logs
}

var nextID atomic.Int64

// allCaps declares every client capability.
const allCaps = `{"sampling":{},"elicitation":{"form":{},"url":{}},"roots":{}}`

// call sends one request through ParseMessage and Server.Handle.
func call(t testing.TB, srv *mrtr.Server, method string, params map[string]any) (json.RawMessage, *mrtr.Error) {
	t.Helper()
	p := map[string]any{"_meta": map[string]any{
		"io.modelcontextprotocol/protocolVersion":    "2026-07-28",
		"io.modelcontextprotocol/clientCapabilities": json.RawMessage(allCaps),
	}}
	for k, v := range params {
		p[k] = v
	}
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": nextID.Add(1), "method": method, "params": p})
	require.NoError(t, err)
	msg, _, perr := mrtr.ParseMessage(body)
	require.Nil(t, perr)
	resp := srv.Handle(context.Background(), &mrtr.Inbound{Message: msg})
	require.NotNil(t, resp)
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

// callTool calls a tool and decodes a successful result.
func callTool(t testing.TB, srv *mrtr.Server, name string, args any, extra map[string]any) (toolResult, *mrtr.Error) {
	t.Helper()
	p := map[string]any{"name": name, "arguments": args}
	for k, v := range extra {
		p[k] = v
	}
	raw, e := call(t, srv, mrtr.MethodToolsCall, p)
	var r toolResult
	if e == nil {
		require.NoError(t, json.Unmarshal(raw, &r), string(raw))
	}
	return r, e
}

// listedTool returns a tool as tools/list renders it.
func listedTool(t testing.TB, srv *mrtr.Server, name string) map[string]any {
	t.Helper()
	raw, e := call(t, srv, mrtr.MethodToolsList, nil)
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
