package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLegacyClient drives the example as a client of MCP 2025-11-25 does:
// initialize, a session id on every later request, and the tool's two
// model rounds (pick_files, then summary) received as sampling/createMessage
// requests on the call's event stream and answered by POST. The
// TypeScript SDK v1 client does the same in conformance/interop/ts-v1.
func TestLegacyClient(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"README.md": "# tiny\n\nA tiny Go program that greets.\n",
		"go.mod":    "module example.com/tiny\n\ngo 1.26\n",
		"main.go":   "package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(\"hello\") }\n",
	}
	for name, text := range files {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644))
	}
	s := startServer(t, Config{Dir: dir}, nil)
	c := &legacyClient{t: t, url: s.url}

	// initialize opens a session of the initialize era.
	resp := c.post(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25",
		"capabilities":{"sampling":{}},"clientInfo":{"name":"legacy-test","version":"1.0.0"}}}`)
	var init struct {
		Result struct {
			ProtocolVersion string         `json:"protocolVersion"`
			Capabilities    map[string]any `json:"capabilities"`
			ServerInfo      struct {
				Name string `json:"name"`
			} `json:"serverInfo"`
			ResultType *string `json:"resultType"`
		} `json:"result"`
	}
	c.decode(resp, &init)
	c.sid = resp.Header.Get("Mcp-Session-Id")
	switch {
	case resp.StatusCode != http.StatusOK || c.sid == "":
		require.FailNow(t, fmt.Sprintf("initialize: HTTP %d, session id %q", resp.StatusCode, c.sid))
	case init.Result.ProtocolVersion != "2025-11-25" || init.Result.ServerInfo.Name != "summarize-repo" ||
		init.Result.Capabilities["tools"] == nil || init.Result.ResultType != nil:
		require.FailNow(t, fmt.Sprintf("initialize result: %+v", init.Result))
	}
	if resp := c.post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`); resp.StatusCode != http.StatusAccepted {
		require.FailNow(t, fmt.Sprintf("notifications/initialized: HTTP %d", resp.StatusCode))
	}

	// tools/call: the server asks on the call's stream, the client answers
	// by POST, and the result ends the stream.
	pick := []string{"README.md", "main.go"}
	const summary = "tiny is a Go program of one file, main.go, that prints a greeting."
	resp = c.post(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"summarize_repo","arguments":{"audience":"developer"}}}`)
	defer resp.Body.Close()
	require.Falsef(t, resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream"), "tools/call: HTTP %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	var asked []string
	var final json.RawMessage
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
	for final == nil && sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data:")
		if !ok {
			continue
		}
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				SystemPrompt string `json:"systemPrompt"`
				Messages     []struct {
					Content struct {
						Text string `json:"text"`
					} `json:"content"`
				} `json:"messages"`
			} `json:"params"`
			Result json.RawMessage `json:"result"`
		}
		require.NoErrorf(t, json.Unmarshal([]byte(strings.TrimSpace(data)), &m), "event %q", data)
		switch {
		case m.Method == "sampling/createMessage":
			var id int64
			require.Falsef(t, json.Unmarshal(m.ID, &id) != nil || id < 1, "sampling request id %s, want an integer >= 1", m.ID)
			text := m.Params.Messages[0].Content.Text
			answer := summary
			if strings.HasPrefix(m.Params.SystemPrompt, "You select files") {
				asked = append(asked, KeyPickFiles)
				b, _ := json.Marshal(pick)
				answer = string(b)
			} else {
				asked = append(asked, KeySummary)
				for _, f := range pick {
					assert.Containsf(t, text, "===== "+f+" =====\n"+files[f], "the summary question does not hold %s:\n%s", f, text)
				}
			}
			b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": map[string]any{
				"role": "assistant", "model": "canned-model", "stopReason": "endTurn",
				"content": map[string]any{"type": "text", "text": answer},
			}})
			if r := c.post(string(b)); r.StatusCode != http.StatusAccepted {
				require.FailNow(t, fmt.Sprintf("answer to %s: HTTP %d", m.ID, r.StatusCode))
			}
		case string(m.ID) == "2" && m.Result != nil:
			final = m.Result
		case m.Method == "":
			require.FailNow(t, fmt.Sprintf("unexpected message on the call's stream: %s", data))
		}
	}
	require.Falsef(t, final == nil, "the call's stream ended without a result (%v)", sc.Err())
	assert.Truef(t, slices.Equal(asked, []string{KeyPickFiles, KeySummary}), "asked %v", asked)
	var res struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
		StructuredContent Output `json:"structuredContent"`
		IsError           bool   `json:"isError"`
	}
	require.NoError(t, json.Unmarshal(final, &res))
	assert.Falsef(t, res.IsError || len(res.Content) != 1 || res.Content[0].Text != summary ||
		res.StructuredContent.Summary != summary || !slices.Equal(res.StructuredContent.Files, pick), "result %s", final)
	for _, m := range []string{`"resultType"`, `"requestState"`, `"ttlMs"`} {
		assert.Falsef(t, strings.Contains(string(final), m), "the result carries %s: %s", m, final)
	}
}

// legacyClient posts JSON-RPC messages the way a 2025-11-25 client does.
type legacyClient struct {
	t   *testing.T
	url string
	sid string
}

func (c *legacyClient) post(body string) *http.Response {
	c.t.Helper()
	req, err := http.NewRequest(http.MethodPost, c.url, strings.NewReader(body))
	require.NoError(c.t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if c.sid != "" {
		req.Header.Set("Mcp-Session-Id", c.sid)
		req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(c.t, err)
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		c.t.Cleanup(func() { resp.Body.Close() })
	}
	return resp
}

func (c *legacyClient) decode(resp *http.Response, v any) {
	c.t.Helper()
	defer resp.Body.Close()
	require.NoError(c.t, json.NewDecoder(resp.Body).Decode(v), "decode")
}
