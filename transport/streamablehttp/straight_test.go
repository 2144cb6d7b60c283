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
	"github.com/mrtrkit/mrtrkit/mrtr/typed"
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

// straightSrv serves tools over HTTP for the wire tests below, on a
// server with a small requestState cap.
func straightSrv(t *testing.T, tools map[string]mrtr.HandlerFunc, opts ...mrtr.Option) string {
	t.Helper()
	srv := mrtrtest.NewServer(t, "straight", opts...)
	for name, h := range tools {
		require.NoError(t, srv.AddTool(mrtr.Tool{Name: name, InputSchema: json.RawMessage(`{"type":"object"}`)}, h))
	}
	h, err := New(srv, WithLogger(quiet))
	require.NoError(t, err)
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	return ts.URL + defaultPath
}

// callTool posts a 2026-07-28 tools/call of name and returns the
// decoded response: result or error.
func callTool(t *testing.T, url, name, extra string) (result map[string]json.RawMessage, rpcErr *struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data"`
}) {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"` + name + `","arguments":{}` + extra +
		`,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{},"sampling":{},"roots":{}}}}}`
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "tools/call")
	req.Header.Set("Mcp-Name", name)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	var env struct {
		Result map[string]json.RawMessage `json:"result"`
		Error  *struct {
			Code    int             `json:"code"`
			Message string          `json:"message"`
			Data    json.RawMessage `json:"data"`
		} `json:"error"`
	}
	require.NoError(t, json.Unmarshal(raw, &env), "%s", raw)
	return env.Result, env.Error
}

func stateOf(t *testing.T, res map[string]json.RawMessage) string {
	t.Helper()
	var st string
	require.NoError(t, json.Unmarshal(res["requestState"], &st))
	require.NotEmpty(t, st)
	return st
}

func retry(st, answers string) string {
	return `,"requestState":"` + st + `","inputResponses":` + answers
}

// On the wire: a retry that no longer fits the handler's path is refused
// with the requestState error; a changed byte of the state (the memo in
// it included) is refused before the handler runs; a state that would
// outgrow the cap ends the call with a reason; an invalid form answer is
// asked again with what was wrong; a server-side model answers inline.
func TestStraightLineOnTheWire(t *testing.T) {
	var forked atomic.Bool
	var memoRuns, modelCalls atomic.Int32
	type Name struct {
		Name string `json:"name" validate:"required,max=5"`
	}
	askName := typed.MustForm[Name]("name", "Name?")
	url := straightSrv(t, map[string]mrtr.HandlerFunc{
		"fork": func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
			key := "a"
			if forked.Load() {
				key = "b"
			}
			if _, err := mrtr.Elicit(ctx, req, key, lgForm("Name?", "name")); err != nil {
				return nil, err
			}
			_, err := mrtr.ListRoots(ctx, req, "roots")
			return mrtr.TextResult("done"), err
		},
		"memo": func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
			secret, err := mrtr.Memo(ctx, req, "secret", func(context.Context) (string, error) {
				memoRuns.Add(1)
				return "s3cr3t-value", nil
			})
			if err != nil {
				return nil, err
			}
			if _, err := mrtr.ListRoots(ctx, req, "roots"); err != nil {
				return nil, err
			}
			return mrtr.TextResult("memo " + secret), nil
		},
		"big": func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
			if _, err := mrtr.Memo(ctx, req, "blob", func(context.Context) (string, error) { return strings.Repeat("x", 40000), nil }); err != nil {
				return nil, err
			}
			_, err := mrtr.ListRoots(ctx, req, "roots")
			return mrtr.TextResult("big"), err
		},
		"form": mrtr.HandlerFunc(func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
			n, _, err := askName.Ask(ctx, req)
			if err != nil {
				return nil, err
			}
			return mrtr.TextResult("Hi " + n.Name), nil
		}),
		"inline": func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
			a, err := mrtr.Sample(ctx, req, "plan", &mrtr.SamplingRequest{Messages: []mrtr.SamplingMessage{mrtr.UserText("plan")}, MaxTokens: 9},
				mrtr.AnswerWith(func(context.Context, *mrtr.SamplingRequest) (*mrtr.SamplingResult, error) {
					modelCalls.Add(1)
					return &mrtr.SamplingResult{Role: mrtr.RoleAssistant, Model: "server", Content: []mrtr.SamplingContent{{Type: "text", Text: "planned"}}}, nil
				}))
			if err != nil {
				return nil, err
			}
			if _, err := mrtr.ListRoots(ctx, req, "roots"); err != nil {
				return nil, err
			}
			return mrtr.TextResult(a.Text()), nil
		},
	})
	roots := `{"roots":{"roots":[{"uri":"file:///r"}]}}`

	t.Run("divergence", func(t *testing.T) {
		res, _ := callTool(t, url, "fork", "")
		res, _ = callTool(t, url, "fork", retry(stateOf(t, res), `{"a":{"action":"accept","content":{"name":"Ada"}}}`))
		st := stateOf(t, res)
		forked.Store(true)
		_, e := callTool(t, url, "fork", retry(st, roots))
		require.NotNil(t, e)
		assert.Equal(t, -32602, e.Code)
		assert.Contains(t, e.Message, "the tool's questions changed since this call began")
		assert.JSONEq(t, `{"reason":"invalid_request_state"}`, string(e.Data))
	})

	t.Run("sealed memo", func(t *testing.T) {
		res, _ := callTool(t, url, "memo", "")
		st := stateOf(t, res)
		assert.NotContains(t, st, "s3cr3t", "the memo is encrypted")
		b := []byte(st)
		b[len(b)/2] ^= 0x02
		if b[len(b)/2] == '-' || b[len(b)/2] == '_' {
			b[len(b)/2] = 'A'
		}
		before := memoRuns.Load()
		_, e := callTool(t, url, "memo", retry(string(b), roots))
		require.NotNil(t, e)
		assert.Equal(t, -32602, e.Code)
		assert.Equal(t, before, memoRuns.Load(), "the handler never ran")
		res, e = callTool(t, url, "memo", retry(st, roots))
		require.Nil(t, e)
		assert.Contains(t, string(res["content"]), "memo s3cr3t-value")
		assert.EqualValues(t, 1, memoRuns.Load(), "computed on the first run only")
	})

	t.Run("too large", func(t *testing.T) {
		_, e := callTool(t, url, "big", "")
		require.NotNil(t, e)
		assert.Equal(t, -32603, e.Code)
		assert.JSONEq(t, `{"reason":"state_too_large"}`, string(e.Data))
	})

	t.Run("re-ask", func(t *testing.T) {
		res, _ := callTool(t, url, "form", "")
		res, e := callTool(t, url, "form", retry(stateOf(t, res), `{"name":{"action":"accept","content":{"name":"Adalovelace"}}}`))
		require.Nil(t, e)
		assert.Contains(t, string(res["inputRequests"]), "Your last answer could not be used: name must be at most 5 characters long")
		res, e = callTool(t, url, "form", retry(stateOf(t, res), `{"name":{"action":"accept","content":{"name":"Ada"}}}`))
		require.Nil(t, e)
		assert.Contains(t, string(res["content"]), "Hi Ada")
	})

	t.Run("inline model", func(t *testing.T) {
		res, _ := callTool(t, url, "inline", "")
		assert.NotContains(t, string(res["inputRequests"]), "plan", "the server's model answered; only the roots are asked")
		res, e := callTool(t, url, "inline", retry(stateOf(t, res), roots))
		require.Nil(t, e)
		assert.Contains(t, string(res["content"]), "planned")
		assert.EqualValues(t, 1, modelCalls.Load(), "not called again on the retry")
	})
}
