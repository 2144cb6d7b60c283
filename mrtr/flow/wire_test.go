package flow_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mrtrkit/mrtrkit/internal/wire"
	"github.com/mrtrkit/mrtrkit/mrtr"
	"github.com/mrtrkit/mrtrkit/mrtr/model"
	"github.com/mrtrkit/mrtrkit/mrtr/typed"
	"github.com/mrtrkit/mrtrkit/transport/streamablehttp"
)

// TestSummarizeOverHTTP runs the three rounds of the sampling-mode flow
// through the Streamable HTTP transport.
func TestSummarizeOverHTTP(t *testing.T) {
	f, err := summarizeFlow(model.Client())
	require.NoError(t, err)
	srv, _ := newServer(t, nil)
	require.NoError(t, typed.AddTool(srv, summarizeTool, f))
	h, err := streamablehttp.New(srv)
	require.NoError(t, err)
	ts := httptest.NewServer(h)
	defer ts.Close()

	post := func(extra string) (int, toolResult) {
		t.Helper()
		body := `{"jsonrpc":"2.0","id":"r","method":"tools/call","params":{"name":"summarize_repo","arguments":{"path":"tide"}` + extra +
			`,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"sampling":{}}}}}`
		req, err := http.NewRequest(http.MethodPost, ts.URL+"/mcp", strings.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("MCP-Protocol-Version", "2026-07-28")
		req.Header.Set("Mcp-Method", wire.MethodToolsCall)
		req.Header.Set("Mcp-Name", streamablehttp.EncodeHeaderValue("summarize_repo"))
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		raw, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		var env struct {
			Result toolResult `json:"result"`
			Error  *mrtr.Error
		}
		require.NoError(t, json.Unmarshal(raw, &env), string(raw))
		require.Nil(t, env.Error, string(raw))
		return resp.StatusCode, env.Result
	}
	answer := func(key, text string) string {
		b, _ := json.Marshal(map[string]any{key: modelAnswer(text)})
		return string(b)
	}

	status, r := post("")
	assert.Equal(t, http.StatusOK, status)
	assert.Equal(t, []string{"pick_files"}, r.asked())
	status, r = post(`,"requestState":"` + r.RequestState + `","inputResponses":` + answer("pick_files", `["README.md"]`))
	assert.Equal(t, http.StatusOK, status)
	assert.Equal(t, []string{"summary"}, r.asked())
	status, r = post(`,"requestState":"` + r.RequestState + `","inputResponses":` + answer("summary", "Tides, predicted."))
	assert.Equal(t, http.StatusOK, status)
	assert.Equal(t, "complete", r.ResultType)
	assert.JSONEq(t, `{"files":["README.md"],"summary":"Tides, predicted."}`, string(r.StructuredContent))
}
