package streamablehttp

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mrtrkit/mrtrkit/discover"
	"github.com/mrtrkit/mrtrkit/internal/testkit"
	"github.com/mrtrkit/mrtrkit/mrtr"
)

// subscriptions/listen over HTTP: the acknowledgement opens the stream,
// only the asked-for notifications follow, each tagged with the listen id,
// and a server that closes ends the stream with the listen request's result.
func TestListenStreamOverHTTP(t *testing.T) {
	srv, err := mrtr.NewServer(discover.Description{
		Server: discover.Implementation{Name: "t", Version: "1"},
		Capabilities: discover.Capabilities{
			Tools:   &discover.ListChanged{ListChanged: true},
			Prompts: &discover.ListChanged{ListChanged: true},
		},
	}, mrtr.WithCodec(testkit.Codec(t)), mrtr.WithLogger(quiet))
	require.NoError(t, err)
	noop := mrtr.HandlerFunc(func(context.Context, *mrtr.Request) (mrtr.Result, error) { return &mrtr.CallToolResult{}, nil })
	require.NoError(t, srv.AddTool(mrtr.Tool{Name: "a"}, noop))
	h, err := New(srv, WithLogger(quiet))
	require.NoError(t, err)
	ts := httptest.NewServer(h)
	defer ts.Close()

	body := `{"jsonrpc":"2.0","id":"listen-1","method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true},` +
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	req, err := http.NewRequest(http.MethodPost, ts.URL+defaultPath, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "subscriptions/listen")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))

	events := make(chan rpc, 8)
	go func() {
		defer close(events)
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				var m rpc
				if json.Unmarshal([]byte(data), &m) == nil {
					events <- m
				}
			}
		}
	}()
	next := func() rpc {
		t.Helper()
		select {
		case m, ok := <-events:
			require.True(t, ok, "the stream ended early")
			return m
		case <-time.After(5 * time.Second):
			t.Fatal("no event within 5s")
		}
		return rpc{}
	}

	ack := next()
	assert.Equal(t, "notifications/subscriptions/acknowledged", ack.Method)
	assert.JSONEq(t, `{"_meta":{"io.modelcontextprotocol/subscriptionId":"listen-1"},"notifications":{"toolsListChanged":true}}`, string(ack.Params))

	// A prompt change was not asked for; the tool change was.
	require.NoError(t, srv.AddPrompt(mrtr.Prompt{Name: "p", Description: "d"}, mrtr.HandlerFunc(func(context.Context, *mrtr.Request) (mrtr.Result, error) {
		return &mrtr.GetPromptResult{}, nil
	})))
	require.NoError(t, srv.AddTool(mrtr.Tool{Name: "b"}, noop))
	changed := next()
	assert.Equal(t, "notifications/tools/list_changed", changed.Method)
	assert.JSONEq(t, `{"_meta":{"io.modelcontextprotocol/subscriptionId":"listen-1"}}`, string(changed.Params))

	require.NoError(t, srv.Close())
	final := next()
	assert.Equal(t, `"listen-1"`, string(final.ID))
	var result map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(final.Result, &result))
	assert.JSONEq(t, `"complete"`, string(result["resultType"]))
	var meta map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(result["_meta"], &meta))
	assert.JSONEq(t, `"listen-1"`, string(meta["io.modelcontextprotocol/subscriptionId"]))
	_, more := <-events
	assert.False(t, more, "the final result ends the stream")
}
