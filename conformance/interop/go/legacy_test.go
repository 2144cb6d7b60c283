package interop_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The go-sdk client pinned to MCP 2025-11-25: initialize, Mcp-Session-Id,
// and the server's questions sent as real server-to-client requests
// (elicitation/create, sampling/createMessage, roots/list) on the stream of
// the call they belong to. The fixture serves that era through package
// mrtr/legacy, on the same endpoint and with the same handlers as
// 2026-07-28 clients. Every test runs twice: with the go-sdk's standalone
// GET stream and with DisableStandaloneSSE.

const legacyVersion = "2025-11-25"

// lateMessage is the question of test_leg_timeout, which the tests answer
// too late or never.
const lateMessage = "Answer this after the leg timeout, or never"

// legacyHooks replace the go-sdk client's default answers.
type legacyHooks struct {
	elicit func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error)
	sample func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error)
}

// legacySession is a go-sdk client session at 2025-11-25 and its wire.
type legacySession struct {
	cs   *mcp.ClientSession
	wire *recorder
}

// eachStreamMode runs fn once with the standalone GET stream and once
// without it, in parallel (each on its own session).
func eachStreamMode(t *testing.T, fn func(t *testing.T, standalone bool)) {
	for _, standalone := range []bool{true, false} {
		name := "standalone-sse"
		if !standalone {
			name = "no-standalone-sse"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			fn(t, standalone)
		})
	}
}

// connectLegacy connects a go-sdk client pinned to 2025-11-25 with
// elicitation, sampling and roots to the fixture.
func connectLegacy(t *testing.T, standalone bool, hooks legacyHooks) *legacySession {
	t.Helper()
	return connectLegacyTo(t, fixtureURL, standalone, hooks)
}

// connectLegacyTo is connectLegacy to the server at endpoint.
func connectLegacyTo(t *testing.T, endpoint string, standalone bool, hooks legacyHooks) *legacySession {
	t.Helper()
	s := &legacySession{wire: newRecorder()}
	opts := &mcp.ClientOptions{
		Capabilities: &mcp.ClientCapabilities{RootsV2: &mcp.RootCapabilities{ListChanged: true}},
		ElicitationHandler: func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			if hooks.elicit != nil {
				return hooks.elicit(ctx, req)
			}
			return &mcp.ElicitResult{Action: "accept", Content: fillForm(req.Params.RequestedSchema)}, nil
		},
		CreateMessageHandler: func(ctx context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			if hooks.sample != nil {
				return hooks.sample(ctx, req)
			}
			return &mcp.CreateMessageResult{Role: "assistant", Content: &mcp.TextContent{Text: answerSampling}, Model: "interop-model", StopReason: "endTurn"}, nil
		},
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "mrtrkit-interop-go-legacy", Version: "1.0.0"}, opts)
	client.AddRoots(&mcp.Root{URI: answerRootURI, Name: answerRootName})
	transport := &mcp.StreamableClientTransport{
		Endpoint: endpoint,
		// No client timeout: the standalone stream lasts as long as the session.
		HTTPClient:           &http.Client{Transport: s.wire},
		DisableStandaloneSSE: !standalone,
		MaxRetries:           -1,
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, transport, &mcp.ClientSessionOptions{ProtocolVersion: legacyVersion})
	require.NoError(t, err, "Connect")
	s.cs = cs
	t.Cleanup(func() {
		cs.Close()
		if t.Failed() {
			dumpWire(t, s.wire.snapshot())
		}
	})
	return s
}

// checkLegacyWire checks what the exchanges show about a 2025-11-25
// session: after initialize, every request carries the session id and the
// negotiated version; every answer to a server request is accepted with
// 202; no body carries a member of the 2026-07-28 wire; every
// server-to-client request has an integer id of at least 1.
func checkLegacyWire(t *testing.T, s *legacySession, exs []*exchange) {
	t.Helper()
	sid := s.cs.ID()
	require.NotEqualValues(t, "", sid, "the session has no id")
	for _, ex := range exs {
		what := ex.HTTPMethod + " " + clip(ex.RawRequest)
		if ex.Method == "initialize" {
			continue
		}
		if got := ex.Header.Get("Mcp-Session-Id"); got != sid {
			assert.Fail(t, fmt.Sprintf("%s: Mcp-Session-Id %q, want %q", what, got, sid))
		}
		if got := ex.Header.Get("Mcp-Protocol-Version"); got != legacyVersion {
			assert.Fail(t, fmt.Sprintf("%s: MCP-Protocol-Version %q, want %s", what, got, legacyVersion))
		}
		assert.Falsef(t, ex.HTTPMethod == http.MethodPost && ex.Method == "" && ex.ID != nil && ex.Status != http.StatusAccepted, "%s: an answer to a server request got HTTP %d, want 202", what, ex.Status)
		for _, m := range []string{`"resultType"`, `"inputRequests"`, `"requestState"`, `"ttlMs"`, `"cacheScope"`, "io.modelcontextprotocol/serverInfo"} {
			assert.Falsef(t, strings.Contains(string(ex.RawResponse), m), "%s: the answer carries %s: %s", what, m, clip(ex.RawResponse))
		}
		for _, r := range serverRequests(ex) {
			var n int64
			assert.Falsef(t, json.Unmarshal(r.ID, &n) != nil || n < 1, "%s: the server request %s has id %s, want an integer >= 1", what, r.Method, r.ID)
		}
	}
}

// serverRequest is a server-to-client request seen on a response stream.
type serverRequest struct {
	ID     json.RawMessage
	Method string
}

// serverRequests returns the server-to-client requests in the response
// streams of exs, in order.
func serverRequests(exs ...*exchange) []serverRequest {
	var out []serverRequest
	for _, ex := range exs {
		for _, r := range ex.Replies {
			var m struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
			}
			if json.Unmarshal(r, &m) == nil && m.Method != "" && m.ID != nil {
				out = append(out, serverRequest{ID: m.ID, Method: m.Method})
			}
		}
	}
	return out
}

// methodsOf returns the methods of rs.
func methodsOf(rs []serverRequest) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.Method)
	}
	return out
}

// waitAnswer waits until the client has POSTed its answer to server
// request id, and returns that exchange.
func waitAnswer(t *testing.T, s *legacySession, id string, within time.Duration) *exchange {
	t.Helper()
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		for _, ex := range s.wire.snapshot() {
			if ex.HTTPMethod == http.MethodPost && ex.Method == "" && string(ex.ID) == id {
				return ex
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	require.FailNow(t, fmt.Sprintf("the client did not POST an answer to request %s within %s", id, within))
	return nil
}

func legacyCall(t *testing.T, s *legacySession, name string) *mcp.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := s.cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: map[string]any{}})
	require.NoErrorf(t, err, "CallTool(%s)", name)
	return res
}

func errorText(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	require.Truef(t, res.IsError, "want an isError result, got %s", contentJSON(res.Content))
	text, _ := joinText(res.Content)
	return text
}

func TestLegacyConnect(t *testing.T) {
	eachStreamMode(t, func(t *testing.T, standalone bool) {
		s := connectLegacy(t, standalone, legacyHooks{})
		init := s.cs.InitializeResult()
		require.Falsef(t, init == nil || init.ProtocolVersion != legacyVersion, "negotiated %+v, want %s", init, legacyVersion)
		assert.Falsef(t, init.ServerInfo == nil || init.ServerInfo.Name != "mrtrkit-conformance-server", "serverInfo %+v", init.ServerInfo)
		if c := init.Capabilities; c == nil || c.Tools == nil || c.Prompts == nil || c.Resources == nil || !c.Resources.Subscribe || c.Logging == nil {
			assert.Fail(t, fmt.Sprintf("capabilities %+v", c))
		}
		// A call makes sure the standalone stream, if any, had time to open.
		if got := textOf(t, legacyCall(t, s, "test_simple_text")); got != "This is a simple text response for testing." {
			assert.Fail(t, fmt.Sprintf("test_simple_text: %q", got))
		}
		exs := s.wire.snapshot()
		var posts []*exchange
		for _, ex := range exs {
			if ex.HTTPMethod == http.MethodPost {
				posts = append(posts, ex)
			}
		}
		require.Falsef(t, len(posts) < 2 || posts[0].Method != "initialize" || posts[1].Method != "notifications/initialized", "the session does not start with initialize, notifications/initialized")
		if posts[0].Status != http.StatusOK || posts[1].Status != http.StatusAccepted {
			assert.Fail(t, fmt.Sprintf("initialize HTTP %d, notifications/initialized HTTP %d", posts[0].Status, posts[1].Status))
		}
		if posts[0].Header.Get("Mcp-Session-Id") != "" || s.cs.ID() == "" {
			assert.Fail(t, fmt.Sprintf("initialize is sent without a session id and answered with one: sent %q, got %q", posts[0].Header.Get("Mcp-Session-Id"), s.cs.ID()))
		}
		assert.False(t, slices.ContainsFunc(exs, func(ex *exchange) bool { return ex.Method == "server/discover" }), "a client pinned to 2025-11-25 sent server/discover")
		gets := 0
		for _, ex := range exs {
			if ex.HTTPMethod == http.MethodGet {
				gets++
				assert.Falsef(t, ex.Status != http.StatusOK || !strings.HasPrefix(ex.ContentType, "text/event-stream"), "standalone stream: HTTP %d %s", ex.Status, ex.ContentType)
			}
		}
		assert.Falsef(t, standalone && gets != 1 || !standalone && gets != 0, "GET streams opened: %d (standalone %v)", gets, standalone)
		checkLegacyWire(t, s, exs)
	})
}

func TestLegacyPingLoggingSubscribe(t *testing.T) {
	eachStreamMode(t, func(t *testing.T, standalone bool) {
		s := connectLegacy(t, standalone, legacyHooks{})
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		mark := s.wire.mark()
		require.NoError(t, s.cs.Ping(ctx, nil), "ping")
		require.NoError(t, s.cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "debug"}), "logging/setLevel")
		require.NoError(t, s.cs.Subscribe(ctx, &mcp.SubscribeParams{URI: "test://watched-resource"}), "resources/subscribe")
		require.NoError(t, s.cs.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: "test://watched-resource"}), "resources/unsubscribe")
		exs := s.wire.since(mark)
		var methods []string
		for _, ex := range exs {
			if ex.HTTPMethod != http.MethodPost {
				continue
			}
			methods = append(methods, ex.Method)
			var m struct {
				Result json.RawMessage `json:"result"`
			}
			assert.Falsef(t, len(ex.Replies) != 1 || json.Unmarshal(ex.Replies[0], &m) != nil || string(m.Result) != "{}", "%s: want exactly {} as the result, got %s", ex.Method, clip(ex.RawResponse))
		}
		if want := []string{"ping", "logging/setLevel", "resources/subscribe", "resources/unsubscribe"}; !slices.Equal(methods, want) {
			assert.Fail(t, fmt.Sprintf("methods %v, want %v", methods, want))
		}
		checkLegacyWire(t, s, exs)
	})
}

func TestLegacyThreeRounds(t *testing.T) {
	eachStreamMode(t, func(t *testing.T, standalone bool) {
		s := connectLegacy(t, standalone, legacyHooks{})
		mark := s.wire.mark()
		got := textOf(t, legacyCall(t, s, "test_three_rounds"))
		want := fmt.Sprintf("Three rounds completed: elicitation=%s; sampling=%s; roots=%s", answerName, answerSampling, answerRootURI)
		assert.Falsef(t, got != want, "result %q, want %q", got, want)
		exs := s.wire.since(mark)
		// One real request per round, in order, with distinct ids.
		reqs := serverRequests(exs...)
		if m, want := methodsOf(reqs), []string{"elicitation/create", "sampling/createMessage", "roots/list"}; !slices.Equal(m, want) {
			assert.Fail(t, fmt.Sprintf("server requests %v, want %v", m, want))
		}
		var ids []string
		for _, r := range reqs {
			ids = append(ids, string(r.ID))
		}
		assert.Falsef(t, len(ids) != 3 || ids[0] == ids[1] || ids[1] == ids[2] || ids[0] == ids[2], "server request ids %v: want three distinct ids", ids)
		// The three answers were POSTed and accepted.
		for _, id := range ids {
			if ex := waitAnswer(t, s, id, 5*time.Second); ex.Status != http.StatusAccepted {
				assert.Fail(t, fmt.Sprintf("answer to request %s: HTTP %d, want 202", id, ex.Status))
			}
		}
		checkLegacyWire(t, s, exs)
	})
}

func TestLegacyPromptAndResource(t *testing.T) {
	eachStreamMode(t, func(t *testing.T, standalone bool) {
		s := connectLegacy(t, standalone, legacyHooks{})
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		p, err := s.cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "test_input_required_result_prompt"})
		require.NoError(t, err, "prompts/get")
		require.NotEqualValuesf(t, 0, len(p.Messages), "prompts/get: no messages")
		if tc, ok := p.Messages[0].Content.(*mcp.TextContent); !ok || tc.Text != "Context: interop context" {
			assert.Fail(t, fmt.Sprintf("prompts/get: first message %+v", p.Messages[0].Content))
		}
		r, err := s.cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "test://input-required-resource"})
		require.NoError(t, err, "resources/read")
		assert.Falsef(t, len(r.Contents) != 1 || r.Contents[0].Text != "Client roots: "+answerRootURI, "resources/read: %+v", r.Contents)
		if m, want := methodsOf(serverRequests(s.wire.snapshot()...)), []string{"elicitation/create", "roots/list"}; !slices.Equal(m, want) {
			assert.Fail(t, fmt.Sprintf("server requests %v, want %v", m, want))
		}
		checkLegacyWire(t, s, s.wire.snapshot())
	})
}

func TestLegacyRefusedLeg(t *testing.T) {
	eachStreamMode(t, func(t *testing.T, standalone bool) {
		s := connectLegacy(t, standalone, legacyHooks{
			sample: func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
				return nil, errors.New("the user declined to sample")
			},
		})
		text := errorText(t, legacyCall(t, s, "test_three_rounds"))
		assert.Falsef(t, !strings.Contains(text, `refused the sampling/createMessage request "sampling"`) || !strings.Contains(text, "the user declined to sample"), "isError text %q does not name the refused request and the reason", text)
		// The session goes on.
		if got := textOf(t, legacyCall(t, s, "test_simple_text")); got == "" {
			assert.Fail(t, "a later call returned no text")
		}
		checkLegacyWire(t, s, s.wire.snapshot())
	})
}

func TestLegacyLegTimeoutAndLateAnswer(t *testing.T) {
	eachStreamMode(t, func(t *testing.T, standalone bool) {
		cancelled := make(chan error, 1)
		answered := make(chan struct{})
		s := connectLegacy(t, standalone, legacyHooks{
			elicit: func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				if req.Params.Message != lateMessage {
					return &mcp.ElicitResult{Action: "accept", Content: fillForm(req.Params.RequestedSchema)}, nil
				}
				defer close(answered)
				start := time.Now()
				// The server cancels the request when its leg timeout
				// passes (notifications/cancelled), which cancels ctx.
				select {
				case <-ctx.Done():
					cancelled <- context.Cause(ctx)
				case <-time.After(legTimeout + time.Second):
					cancelled <- nil
				}
				// Then the answer comes anyway, too late.
				time.Sleep(time.Until(start.Add(legTimeout + 500*time.Millisecond)))
				return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"answer": "too late"}}, nil
			},
		})
		start := time.Now()
		text := errorText(t, legacyCall(t, s, "test_leg_timeout"))
		if took := time.Since(start); took < legTimeout-50*time.Millisecond {
			assert.Fail(t, fmt.Sprintf("the call ended after %s, before the leg timeout %s", took, legTimeout))
		}
		assert.Containsf(t, text, `did not answer the elicitation/create request "late" within`, "isError text %q does not name the request that timed out", text)
		if err := <-cancelled; err == nil {
			assert.Fail(t, "the leg handler's context was not cancelled after the leg timed out")
		}
		var legID string
		for _, ex := range s.wire.snapshot() {
			if ex.Method == "tools/call" {
				if rs := serverRequests(ex); len(rs) == 1 {
					legID = string(rs[0].ID)
				}
			}
		}
		require.NotEqualValues(t, "", legID, "no server request on the call's stream")
		<-answered
		late := waitAnswer(t, s, legID, 5*time.Second)
		assert.Falsef(t, late.Status != http.StatusAccepted, "the late answer got HTTP %d, want 202", late.Status)
		// A later call on the same session succeeds.
		if got := textOf(t, legacyCall(t, s, "test_three_rounds")); !strings.HasPrefix(got, "Three rounds completed") {
			assert.Fail(t, fmt.Sprintf("a later call: %q", got))
		}
		checkLegacyWire(t, s, s.wire.snapshot())
	})
}

func TestLegacyCancelMidLeg(t *testing.T) {
	eachStreamMode(t, func(t *testing.T, standalone bool) {
		callCtx, cancelCall := context.WithCancel(context.Background())
		defer cancelCall()
		handlerDone := make(chan struct{})
		s := connectLegacy(t, standalone, legacyHooks{
			elicit: func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				if req.Params.Message != lateMessage {
					return &mcp.ElicitResult{Action: "accept", Content: fillForm(req.Params.RequestedSchema)}, nil
				}
				defer close(handlerDone)
				// The user gives up on the tool call while this question is
				// open; the question then ends with an error, which the
				// go-sdk sends as its (late) answer.
				cancelCall()
				// The server sends notifications/cancelled for this request
				// on the call's stream, but the go-sdk stops reading that
				// stream when the call's context ends, so whether the
				// cancellation reaches this handler is a race.
				select {
				case <-ctx.Done():
					t.Logf("the server's notifications/cancelled reached the leg handler: %v", context.Cause(ctx))
				case <-time.After(300 * time.Millisecond):
					t.Logf("the server's notifications/cancelled did not reach the leg handler (the go-sdk had left the call's stream)")
				}
				return nil, errors.New("the user went away")
			},
		})
		_, err := s.cs.CallTool(callCtx, &mcp.CallToolParams{Name: "test_leg_timeout", Arguments: map[string]any{}})
		require.ErrorIsf(t, err, context.Canceled, "CallTool: %v, want context.Canceled", err)
		select {
		case <-handlerDone:
		case <-time.After(10 * time.Second):
			require.FailNow(t, "the leg handler did not return")
		}
		var legID string
		deadline := time.Now().Add(5 * time.Second)
		for legID == "" && time.Now().Before(deadline) {
			for _, ex := range s.wire.snapshot() {
				if ex.Method == "tools/call" {
					if rs := serverRequests(ex); len(rs) == 1 {
						legID = string(rs[0].ID)
					}
				}
			}
			time.Sleep(20 * time.Millisecond)
		}
		require.NotEqualValues(t, "", legID, "no server request on the call's stream")
		late := waitAnswer(t, s, legID, 5*time.Second)
		assert.Falsef(t, late.Status != http.StatusAccepted || !strings.Contains(string(late.RawRequest), `"error"`), "the late error answer: HTTP %d %s, want 202", late.Status, clip(late.RawRequest))
		// The session keeps working.
		if got := textOf(t, legacyCall(t, s, "test_three_rounds")); !strings.HasPrefix(got, "Three rounds completed") {
			assert.Fail(t, fmt.Sprintf("a later call: %q", got))
		}
		checkLegacyWire(t, s, s.wire.snapshot())
	})
}
