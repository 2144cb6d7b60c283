package client_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mrtrkit/mrtrkit/client"
	"github.com/mrtrkit/mrtrkit/mrtr"
)

// A call answers its rounds with the client's functions, which learn
// each request's key, and shows every round to its RoundWatch.
func TestRoundWatchAndInputKeys(t *testing.T) {
	url := serveHTTP(t, kitServer(t))
	var mu sync.Mutex
	var keys []string
	key := func(ctx context.Context) {
		mu.Lock()
		keys = append(keys, client.InputKey(ctx))
		mu.Unlock()
	}
	c, err := client.Connect(ctxT(t), client.HTTP(url),
		client.OnElicitation(func(ctx context.Context, r *mrtr.ElicitRequest) (*mrtr.ElicitResult, error) {
			key(ctx)
			return answerName(ctx, r)
		}),
		client.OnSampling(func(ctx context.Context, r *mrtr.SamplingRequest) (*mrtr.SamplingResult, error) {
			key(ctx)
			return answerModel(ctx, r)
		}),
		client.OnRoots(func(ctx context.Context) (*mrtr.RootsResult, error) {
			key(ctx)
			return &mrtr.RootsResult{Roots: roots}, nil
		}))
	require.NoError(t, err)
	defer c.Close()

	var asked, answered, done []string
	w := &client.RoundWatch{
		Asked: func(r *client.Round) {
			require.Len(t, r.Requests, 1)
			assert.Empty(t, r.Answers)
			assert.NotEmpty(t, r.RequestState, "the kit seals a state in every round")
			asked = append(asked, fmt.Sprintf("%d:%s:%s", r.N, r.Requests[0].Key, r.Requests[0].Method))
			assert.JSONEq(t, `"`+r.Requests[0].Method+`"`, string(mustMember(t, r.Requests[0].Raw, "method")))
		},
		Answered: func(r *client.Round, i int) {
			answered = append(answered, r.Requests[i].Key+"="+string(r.Answers[i]))
		},
		Done: func(r *client.Round, err error) {
			assert.NoError(t, err)
			done = append(done, fmt.Sprint(r.N))
		},
	}
	res, err := c.CallTool(ctxT(t), "three", nil, client.WithRoundWatch(w))
	require.NoError(t, err)
	assert.JSONEq(t, `"complete"`, string(mustMember(t, res.Raw, "resultType")))
	assert.Contains(t, res.Text(), "Ada/gpt/file:///src")
	assert.Equal(t, 3, res.Rounds)
	assert.Equal(t, []string{"name", "model", "roots"}, keys)
	assert.Equal(t, []string{"1:name:elicitation/create", "2:model:sampling/createMessage", "3:roots:roots/list"}, asked)
	assert.Equal(t, []string{`name={"action":"accept","content":{"name":"Ada"}}`,
		`model={"role":"assistant","content":{"type":"text","text":"gpt"},"model":"m"}`,
		`roots={"roots":[{"uri":"file:///src"}]}`}, answered)
	assert.Equal(t, []string{"1", "2", "3"}, done)
	assert.Empty(t, client.InputKey(context.Background()))

	// Without a watch the functions learn the keys all the same.
	keys = nil
	_, err = c.CallTool(ctxT(t), "three", nil)
	require.NoError(t, err)
	assert.Equal(t, []string{"name", "model", "roots"}, keys)
}

func mustMember(t *testing.T, obj json.RawMessage, name string) json.RawMessage {
	t.Helper()
	var m map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(obj, &m))
	return m[name]
}

// A round that asks nothing is retried with the state alone after a
// pause.
func TestLoadSheddingRoundIsRetriedWithTheStateAlone(t *testing.T) {
	var mu sync.Mutex
	var at []time.Time
	rs := modernRaw(t, func(w http.ResponseWriter, s *seen) bool {
		if s.RPC.Method != "tools/call" {
			return false
		}
		mu.Lock()
		at = append(at, time.Now())
		n := len(at)
		mu.Unlock()
		if n == 1 {
			writeJSON(w, 200, s.RPC.ID, `"result":{"resultType":"input_required","requestState":"busy\/1"}`)
			return true
		}
		writeJSON(w, 200, s.RPC.ID, `"result":{"resultType":"complete","content":[{"type":"text","text":"served"}]}`)
		return true
	})
	c, err := client.Connect(ctxT(t), client.HTTP(rs.url))
	require.NoError(t, err)
	defer c.Close()
	var rounds []int
	res, err := c.CallTool(ctxT(t), "x", nil, client.WithRoundWatch(&client.RoundWatch{Asked: func(r *client.Round) {
		assert.Empty(t, r.Requests)
		rounds = append(rounds, r.N)
	}}))
	require.NoError(t, err)
	assert.Equal(t, "served", res.Text())
	assert.Equal(t, []int{1}, rounds)
	calls := rs.calls("tools/call")
	require.Len(t, calls, 2)
	assert.GreaterOrEqual(t, at[1].Sub(at[0]), client.LoadSheddingPause)
	assert.Contains(t, string(calls[1].Body), `"requestState":"busy\/1"`, "the state goes back byte for byte")
	assert.NotContains(t, string(calls[1].Body), "inputResponses", "nothing was asked, nothing is answered")
}

// A result of a resultType the request did not ask for is an error
// that names it; so is an input_required that asks nothing and carries
// no state.
func TestUnrecognisedResultType(t *testing.T) {
	results := map[string]string{
		"x": `{"resultType":"task","taskId":"t-1","status":"working"}`,
		"y": `{"resultType":"later"}`,
		"z": `{"resultType":"input_required"}`,
	}
	rs := modernRaw(t, func(w http.ResponseWriter, s *seen) bool {
		if s.RPC.Method != "tools/call" {
			return false
		}
		var p struct {
			Name string `json:"name"`
		}
		_ = json.Unmarshal(s.RPC.Params, &p)
		writeJSON(w, 200, s.RPC.ID, `"result":`+results[p.Name])
		return true
	})
	c, err := client.Connect(ctxT(t), client.HTTP(rs.url))
	require.NoError(t, err)
	defer c.Close()
	_, err = c.CallTool(ctxT(t), "x", nil)
	assert.ErrorContains(t, err, `unrecognised resultType "task": the request did not declare the Tasks extension`)
	_, err = c.CallTool(ctxT(t), "y", nil)
	assert.ErrorContains(t, err, `unrecognised resultType "later"`)
	_, err = c.CallTool(ctxT(t), "z", nil)
	assert.ErrorContains(t, err, "input_required with neither inputRequests nor requestState")
	assert.Len(t, rs.calls("tools/call"), 3, "none is retried")
}

// Past the round limit the watch sees the round that is not answered,
// and the call fails with ErrTooManyRounds.
func TestRoundLimitIsWatched(t *testing.T) {
	rs := modernRaw(t, func(w http.ResponseWriter, s *seen) bool {
		if s.RPC.Method != "tools/call" {
			return false
		}
		writeJSON(w, 200, s.RPC.ID, `"result":{"resultType":"input_required","inputRequests":{"r":{"method":"roots/list"}}}`)
		return true
	})
	c, err := client.Connect(ctxT(t), client.HTTP(rs.url), client.WithMaxRounds(1), client.WithRoots(roots...))
	require.NoError(t, err)
	defer c.Close()
	var asked []int
	var last error
	_, err = c.CallTool(ctxT(t), "x", nil, client.WithRoundWatch(&client.RoundWatch{
		Asked: func(r *client.Round) { asked = append(asked, r.N) },
		Done:  func(r *client.Round, err error) { last = err },
	}))
	require.ErrorIs(t, err, client.ErrTooManyRounds)
	assert.ErrorIs(t, last, client.ErrTooManyRounds)
	assert.Equal(t, []int{1, 2}, asked)
	assert.Len(t, rs.calls("tools/call"), 2)
}

// CallTool sends raw arguments verbatim, with Mcp-Name and the
// Mcp-Param-* headers of the tool's declarations.
func TestRawArgumentsVerbatimWithHeaders(t *testing.T) {
	rs := modernRaw(t, nil)
	c, err := client.Connect(ctxT(t), client.HTTP(rs.url))
	require.NoError(t, err)
	defer c.Close()
	_, err = c.ListTools(ctxT(t))
	require.NoError(t, err)
	_, err = c.CallTool(ctxT(t), "hdr", json.RawMessage(`{"region":"Zürich","count":3,"query":"<&> 1.50"}`))
	require.NoError(t, err)
	call := rs.calls("tools/call")[0]
	assert.Contains(t, string(call.Body), `"params":{"name":"hdr","arguments":{"region":"Zürich","count":3,"query":"<&> 1.50"},"_meta":`)
	assert.Equal(t, "hdr", call.Header.Get("Mcp-Name"))
	assert.Equal(t, client.EncodeHeaderValue("Zürich"), call.Header.Get("Mcp-Param-Region"))
	assert.Equal(t, "3", call.Header.Get("Mcp-Param-Count"))
}

// Discover shows what a server says of itself in one request, even when
// it lists no revision the client speaks (Connect would refuse it).
func TestDiscoverWhateverTheVersions(t *testing.T) {
	rs := newRawServer(t, func(w http.ResponseWriter, s *seen) {
		writeJSON(w, 200, s.RPC.ID, `"result":{"resultType":"complete","supportedVersions":["2025-11-25"],"capabilities":{}}`)
	})
	res, err := client.Discover(ctxT(t), client.HTTP(rs.url), client.WithClientInfo("probe", "9"))
	require.NoError(t, err)
	assert.JSONEq(t, `{"resultType":"complete","supportedVersions":["2025-11-25"],"capabilities":{}}`, string(res))
	seen := rs.calls("server/discover")
	require.Len(t, seen, 1)
	assert.Equal(t, "server/discover", seen[0].Header.Get("Mcp-Method"))
	assert.Equal(t, client.LatestVersion, seen[0].Header.Get("MCP-Protocol-Version"))
	assert.JSONEq(t, `{"name":"probe","version":"9"}`, string(meta(t, seen[0])["io.modelcontextprotocol/clientInfo"]))

	_, err = client.Connect(ctxT(t), client.HTTP(rs.url), client.WithProtocolVersion(client.LatestVersion))
	require.Error(t, err)
}

// Call names the target of the methods that have one in Mcp-Name (a
// task's id for tasks/*) and sends the params in their order, verbatim.
func TestCallNamesTheTarget(t *testing.T) {
	rs := modernRaw(t, nil)
	c, err := client.Connect(ctxT(t), client.HTTP(rs.url))
	require.NoError(t, err)
	defer c.Close()
	_, err = c.Call(ctxT(t), "tasks/get", json.RawMessage(`{"taskId":"tâsk-1","z":1,"a":"<&>"}`))
	require.NoError(t, err)
	_, err = c.Call(ctxT(t), "resources/read", map[string]string{"uri": "test://r"})
	require.NoError(t, err)
	_, err = c.Call(ctxT(t), "ping", nil)
	require.NoError(t, err)
	got := rs.calls("tasks/get")
	require.Len(t, got, 1)
	assert.Equal(t, client.EncodeHeaderValue("tâsk-1"), got[0].Header.Get("Mcp-Name"))
	assert.Equal(t, "tasks/get", got[0].Header.Get("Mcp-Method"))
	assert.Contains(t, string(got[0].Body), `"params":{"taskId":"tâsk-1","z":1,"a":"<&>","_meta":`)
	assert.Equal(t, "test://r", rs.calls("resources/read")[0].Header.Get("Mcp-Name"))
	assert.Empty(t, rs.calls("ping")[0].Header.Values("Mcp-Name"))
}

// A server of 2026-07-28 sends no requests: one on a response stream is
// ignored, the user's function is not run and nothing is posted back.
func TestModernStreamRequestIsIgnored(t *testing.T) {
	rs := modernRaw(t, func(w http.ResponseWriter, s *seen) bool {
		if s.RPC.Method != "tools/call" {
			return false
		}
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "data: {\"jsonrpc\":\"2.0\",\"id\":\"srv-1\",\"method\":\"sampling/createMessage\",\"params\":{\"messages\":[],\"maxTokens\":1}}\n\n")
		fmt.Fprintf(w, "data: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"resultType\":\"complete\",\"content\":[]}}\n\n", s.RPC.ID)
		return true
	})
	sampled := false
	c, err := client.Connect(ctxT(t), client.HTTP(rs.url), client.OnSampling(func(context.Context, *mrtr.SamplingRequest) (*mrtr.SamplingResult, error) {
		sampled = true
		return nil, fmt.Errorf("not asked")
	}))
	require.NoError(t, err)
	_, err = c.CallTool(ctxT(t), "x", nil)
	require.NoError(t, err)
	time.Sleep(100 * time.Millisecond) // time enough for an answer to be posted
	assert.Empty(t, rs.calls(""), "no answer is posted")
	require.NoError(t, c.Close())
	assert.False(t, sampled)
}

// Host names are case-insensitive: LocalHost is loopback, and a token
// may go there over plain http.
func TestTokenToLoopbackWhateverTheCase(t *testing.T) {
	rs := modernRaw(t, nil)
	url := strings.Replace(rs.url, "127.0.0.1", "LocalHost", 1)
	c, err := client.Connect(ctxT(t), client.HTTP(url, client.WithBearerToken("secret")))
	require.NoError(t, err)
	defer c.Close()
	assert.Equal(t, "Bearer secret", rs.calls("server/discover")[0].Header.Get("Authorization"))
}

// With WithProgress the call's progress goes to the progress function
// and its other notifications (a log message, progress under another
// token) to OnNotification; none is lost.
func TestProgressKeepsTheOtherNotifications(t *testing.T) {
	rs := modernRaw(t, func(w http.ResponseWriter, s *seen) bool {
		if s.RPC.Method != "tools/call" {
			return false
		}
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":\"p\",\"progress\":1,\"total\":2}}\n\n")
		fmt.Fprint(w, "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"data\":\"halfway\"}}\n\n")
		fmt.Fprint(w, "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":\"other\",\"progress\":5}}\n\n")
		fmt.Fprintf(w, "data: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"resultType\":\"complete\",\"content\":[]}}\n\n", s.RPC.ID)
		return true
	})
	var mu sync.Mutex
	var notes []string
	c, err := client.Connect(ctxT(t), client.HTTP(rs.url), client.OnNotification(func(n client.Notification) {
		mu.Lock()
		notes = append(notes, n.Method+" "+string(n.Params))
		mu.Unlock()
	}))
	require.NoError(t, err)
	defer c.Close()
	var progress []client.Progress
	_, err = c.CallTool(ctxT(t), "x", nil, client.WithProgress("p", func(p client.Progress) { progress = append(progress, p) }))
	require.NoError(t, err)
	require.Len(t, progress, 1)
	assert.Equal(t, 1.0, progress[0].Progress)
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, []string{
		`notifications/message {"level":"info","data":"halfway"}`,
		`notifications/progress {"progressToken":"other","progress":5}`,
	}, notes)
}
