package streamablehttp

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mrtrkit/mrtrkit/internal/testkit"
	"github.com/mrtrkit/mrtrkit/mrtr"
	"github.com/mrtrkit/mrtrkit/mrtr/legacy"
	"github.com/mrtrkit/mrtrkit/mrtr/mrtrtest"
)

// straightTool asks three dependent questions in straight-line code: a
// form, then a completion that uses the name, then the roots. It counts
// its runs.
func straightTool(runs *atomic.Int32) mrtr.HandlerFunc {
	return func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
		runs.Add(1)
		who, err := mrtr.Elicit(ctx, req, "name", lgForm("Name?", "name"))
		if err != nil {
			return nil, err
		}
		name, _ := who.Content["name"].(string)
		draft, err := mrtr.Sample(ctx, req, "draft", &mrtr.SamplingRequest{Messages: []mrtr.SamplingMessage{mrtr.UserText("write for " + name)}, MaxTokens: 9})
		if err != nil {
			return nil, err
		}
		roots, err := mrtr.ListRoots(ctx, req, "where")
		if err != nil {
			return nil, err
		}
		return mrtr.TextResult(name + " " + draft.Text() + " " + roots.Roots[0].URI), nil
	}
}

// straightEndpoint serves the straight-line tool at one endpoint for both
// eras.
func straightEndpoint(t *testing.T) (*lgFixture, *atomic.Int32) {
	t.Helper()
	var runs atomic.Int32
	srv := mrtrtest.NewServer(t, "straight")
	require.NoError(t, srv.AddTool(mrtr.Tool{Name: "straight", InputSchema: json.RawMessage(`{"type":"object"}`)}, straightTool(&runs)))
	eng, err := legacy.New(srv, legacy.WithKeyRing(testkit.Ring(t)), legacy.WithLogger(quiet))
	require.NoError(t, err)
	h, err := New(srv, WithLogger(quiet), WithLegacy(eng))
	require.NoError(t, err)
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	return &lgFixture{url: ts.URL + defaultPath, srv: srv, eng: eng}, &runs
}

// postModernCall posts a 2026-07-28 tools/call and decodes its result.
func postModernCall(t *testing.T, url, params string) (map[string]json.RawMessage, []byte) {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{` + params +
		`,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{},"sampling":{},"roots":{}}}}}`
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "tools/call")
	req.Header.Set("Mcp-Name", "straight")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", raw)
	var env struct {
		Result map[string]json.RawMessage `json:"result"`
	}
	require.NoError(t, json.Unmarshal(raw, &env), "%s", raw)
	require.NotNil(t, env.Result, "%s", raw)
	return env.Result, raw
}

// The same straight-line handler serves a 2026-07-28 client, round after
// round over HTTP, and a 2025-11-25 client through the bridge, whose
// rounds become requests on the call's stream; one run per round in both.
func TestStraightLineThreeRoundsOverHTTPBothEras(t *testing.T) {
	f, runs := straightEndpoint(t)
	answers := map[string]string{
		"name":  `{"action":"accept","content":{"name":"v-name"}}`,
		"draft": `{"role":"assistant","content":{"type":"text","text":"drafted"},"model":"m"}`,
		"where": `{"roots":[{"uri":"file:///home/u"}]}`,
	}
	params := `"name":"straight","arguments":{}`
	var asked []string
	for round := 0; ; round++ {
		require.Less(t, round, 4, "too many rounds")
		res, raw := postModernCall(t, f.url, params)
		var rt string
		require.NoError(t, json.Unmarshal(res["resultType"], &rt))
		if rt == "complete" {
			assert.Contains(t, string(raw), `"text":"v-name drafted file:///home/u"`)
			break
		}
		require.Equal(t, "input_required", rt, "%s", raw)
		var reqs map[string]json.RawMessage
		require.NoError(t, json.Unmarshal(res["inputRequests"], &reqs))
		require.Len(t, reqs, 1)
		var st string
		require.NoError(t, json.Unmarshal(res["requestState"], &st))
		for k := range reqs {
			asked = append(asked, k)
			params = `"name":"straight","arguments":{},"requestState":"` + st + `","inputResponses":{"` + k + `":` + answers[k] + `}`
		}
	}
	assert.Equal(t, []string{"name", "draft", "where"}, asked)
	assert.EqualValues(t, 4, runs.Load())

	runs.Store(0)
	c := f.client(t, "")
	c.initialize(`{"sampling":{},"elicitation":{"form":{},"url":{}},"roots":{}}`, "2025-11-25")
	o := c.exchange(lgCall("s1", "straight", `{}`), lgStandard)
	assert.Equal(t, "v-name drafted file:///home/u", o.tool(t).Content[0].Text)
	assert.Equal(t, []int64{1, 2, 3}, o.legIDs(t), "one server-to-client request per question")
	assert.EqualValues(t, 4, runs.Load(), "the bridge re-runs the handler once per round, as a modern client does")
}
