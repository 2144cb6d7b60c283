package mrtr_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mrtrkit/mrtrkit/discover"
	"github.com/mrtrkit/mrtrkit/internal/testkit"
	"github.com/mrtrkit/mrtrkit/internal/wire"
	"github.com/mrtrkit/mrtrkit/mrtr"
	"github.com/mrtrkit/mrtrkit/mrtr/mrtrtest"
)

func limitServer(t *testing.T, opts ...mrtr.Option) (*mrtr.Server, *testkit.LogBuffer) {
	t.Helper()
	desc := discover.Description{Server: discover.Implementation{Name: "limits", Version: "1"},
		Capabilities: discover.Capabilities{Tools: &discover.ListChanged{ListChanged: true}}}
	return testkit.LoggedServer(t, desc, testkit.Codec(t), slog.LevelDebug, opts...)
}

func callTool(srv *mrtr.Server, principal, name string, args any) (json.RawMessage, *mrtr.Error) {
	p := map[string]any{"name": name}
	if args != nil {
		p["arguments"] = args
	}
	return mrtrtest.Send(context.Background(), srv, principal, mrtrtest.NewRequest(wire.MethodToolsCall, p))
}

func TestHandlerPanicIsInternalError(t *testing.T) {
	srv, logs := limitServer(t)
	require.NoError(t, srv.AddTool(mrtr.Tool{Name: "boom"}, mrtr.HandlerFunc(func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
		panic("nil map write in handler")
	})))
	require.NoError(t, srv.AddTool(mrtr.Tool{Name: "fine"}, mrtr.HandlerFunc(func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
		return mrtr.TextResult("ok"), nil
	})))
	_, err := callTool(srv, "", "boom", nil)
	require.NotNil(t, err)
	assert.Equal(t, mrtr.CodeInternalError, err.Code)
	assert.Equal(t, "Internal error", err.Message, "nothing of the panic reaches the client")
	out := logs.String()
	assert.Contains(t, out, "a handler panicked")
	assert.Contains(t, out, "target=boom")
	assert.Contains(t, out, "nil map write in handler")
	assert.Contains(t, out, "limits_test.go", "the stack is logged")
	// The server carries on.
	res, err := callTool(srv, "", "fine", nil)
	require.Nil(t, err)
	assert.Contains(t, string(res), `"ok"`)
}

func TestHandlerTimeout(t *testing.T) {
	srv, _ := limitServer(t, mrtr.WithHandlerTimeout(50*time.Millisecond))
	sawCancel := make(chan error, 1)
	require.NoError(t, srv.AddTool(mrtr.Tool{Name: "slow"}, mrtr.HandlerFunc(func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
		<-ctx.Done()
		sawCancel <- ctx.Err()
		return nil, ctx.Err()
	})))
	var rec *mrtr.Call
	srv2, _ := limitServer(t, mrtr.WithHandlerTimeout(50*time.Millisecond), mrtr.WithInterceptors(func(ctx context.Context, c *mrtr.Call, next func(context.Context) *mrtr.Response) *mrtr.Response {
		rec = c
		return next(ctx)
	}))
	require.NoError(t, srv2.AddTool(mrtr.Tool{Name: "slow"}, mrtr.HandlerFunc(func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	})))
	_, err := callTool(srv, "", "slow", nil)
	require.NotNil(t, err)
	assert.Equal(t, mrtr.CodeInternalError, err.Code)
	assert.Contains(t, err.Message, "timed out")
	assert.ErrorIs(t, <-sawCancel, context.DeadlineExceeded, "the handler saw its context end")
	_, err = callTool(srv2, "", "slow", nil)
	require.NotNil(t, err)
	assert.Equal(t, "timeout", rec.Refusal)

	// A handler that polls Err instead of waiting on Done sees the
	// deadline too, and one that ignores its context is still reported.
	require.NoError(t, srv.AddTool(mrtr.Tool{Name: "poll"}, mrtr.HandlerFunc(func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
		for ctx.Err() == nil {
			time.Sleep(time.Millisecond)
		}
		return nil, ctx.Err()
	})))
	require.NoError(t, srv.AddTool(mrtr.Tool{Name: "deaf"}, mrtr.HandlerFunc(func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
		time.Sleep(80 * time.Millisecond)
		return mrtr.TextResult("late"), nil
	})))
	for _, tool := range []string{"poll", "deaf"} {
		_, err = callTool(srv, "", tool, nil)
		require.NotNil(t, err, tool)
		assert.Contains(t, err.Message, "timed out", tool)
	}
}

func TestInFlightPerPrincipal(t *testing.T) {
	srv, _ := limitServer(t, mrtr.WithMaxInFlight(2))
	release := make(chan struct{})
	entered := make(chan struct{}, 4)
	require.NoError(t, srv.AddTool(mrtr.Tool{Name: "hold"}, mrtr.HandlerFunc(func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
		entered <- struct{}{}
		<-release
		return mrtr.TextResult("done"), nil
	})))
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := callTool(srv, "alice", "hold", nil)
			assert.Nil(t, err)
		}()
	}
	<-entered
	<-entered
	_, err := callTool(srv, "alice", "hold", nil)
	require.NotNil(t, err, "alice's third request is refused")
	assert.Equal(t, mrtr.CallerLimit, err.Limit())
	assert.True(t, err.Envelope())
	assert.Contains(t, err.Message, "Too many requests in flight")

	// Another principal has a share of its own.
	done := make(chan *mrtr.Error, 1)
	go func() { _, err := callTool(srv, "bob", "hold", nil); done <- err }()
	<-entered
	close(release)
	assert.Nil(t, <-done)
	wg.Wait()
	// Once alice's requests end, she may call again.
	_, err = callTool(srv, "alice", "hold", nil)
	assert.Nil(t, err)
}

// listenOn opens a subscriptions/listen of principal and returns its
// first notification and a function that ends it.
func listenOn(t *testing.T, srv *mrtr.Server, principal string) (*mrtr.Error, func() *mrtr.Response) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	in := mrtrtest.NewRequest(wire.MethodSubscriptionsListen, map[string]any{"notifications": map[string]any{"toolsListChanged": true}}).Inbound(principal)
	first := make(chan []byte, 1)
	in.Emit = func(n []byte) error {
		select {
		case first <- append([]byte(nil), n...):
		default:
		}
		return nil
	}
	respc := make(chan *mrtr.Response, 1)
	go func() { respc <- srv.Handle(ctx, in) }()
	select {
	case <-first:
		return nil, func() *mrtr.Response { cancel(); return <-respc }
	case resp := <-respc:
		cancel()
		return resp.Error, func() *mrtr.Response { return resp }
	}
}

func TestListenerCaps(t *testing.T) {
	srv, _ := limitServer(t, mrtr.WithMaxListeners(3, 2))
	require.NoError(t, srv.AddTool(mrtr.Tool{Name: "t"}, mrtr.HandlerFunc(func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
		return mrtr.TextResult("ok"), nil
	})))
	var ends []func() *mrtr.Response
	for _, p := range []string{"alice", "alice"} {
		err, end := listenOn(t, srv, p)
		require.Nil(t, err)
		ends = append(ends, end)
	}
	err, _ := listenOn(t, srv, "alice")
	require.NotNil(t, err)
	assert.Equal(t, mrtr.CallerLimit, err.Limit(), "alice has her two streams")
	err, end := listenOn(t, srv, "bob")
	require.Nil(t, err)
	ends = append(ends, end)
	err, _ = listenOn(t, srv, "carol")
	require.NotNil(t, err)
	assert.Equal(t, mrtr.ServerLimit, err.Limit(), "the server has its three streams")

	// Streams do not count against the principal's requests in flight.
	_, cerr := callTool(srv, "alice", "t", nil)
	assert.Nil(t, cerr)
	for _, end := range ends {
		end()
	}
	err, end = listenOn(t, srv, "carol")
	require.Nil(t, err, "a closed stream frees its place")
	end()
}

func TestListenLifetime(t *testing.T) {
	srv, _ := limitServer(t, mrtr.WithListenLifetime(30*time.Millisecond))
	require.NoError(t, srv.AddTool(mrtr.Tool{Name: "t"}, mrtr.HandlerFunc(func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
		return mrtr.TextResult("ok"), nil
	})))
	in := mrtrtest.NewRequest(wire.MethodSubscriptionsListen, map[string]any{"notifications": map[string]any{"toolsListChanged": true}}).Inbound("")
	in.Emit = func([]byte) error { return nil }
	start := time.Now()
	resp := srv.Handle(context.Background(), in)
	require.Nil(t, resp.Error)
	assert.GreaterOrEqual(t, time.Since(start), 30*time.Millisecond)
	assert.Contains(t, string(resp.Result), wire.MetaSubscriptionID, "the stream ends with its final result")
}

func TestRequireKeys(t *testing.T) {
	t.Setenv("MRTRKIT_STATE_KEYS", "")
	_, err := mrtr.NewServer(discover.Description{Server: discover.Implementation{Name: "k", Version: "1"}}, mrtr.RequireKeys())
	require.Error(t, err)
	assert.Contains(t, err.Error(), "MRTRKIT_STATE_KEYS")
	_, err = mrtr.NewServer(discover.Description{Server: discover.Implementation{Name: "k", Version: "1"}}, mrtr.RequireKeys(), mrtr.WithCodec(testkit.Codec(t)))
	assert.NoError(t, err, "a codec given is a key ring configured")
	t.Setenv("MRTRKIT_STATE_KEYS", "k1:"+strings.Repeat("A", 43)+"=")
	_, err = mrtr.NewServer(discover.Description{Server: discover.Implementation{Name: "k", Version: "1"}}, mrtr.RequireKeys())
	assert.NoError(t, err)
}

// TestInterceptorsSeeEveryRefusal pins the step each refusal is recorded
// under, and that interceptors run outermost first.
func TestInterceptorsSeeEveryRefusal(t *testing.T) {
	var order []string
	var last *mrtr.Call
	srv, _ := limitServer(t, mrtr.WithInterceptors(
		func(ctx context.Context, c *mrtr.Call, next func(context.Context) *mrtr.Response) *mrtr.Response {
			order = append(order, "outer in")
			r := next(ctx)
			order = append(order, "outer out")
			last = c
			return r
		},
		func(ctx context.Context, c *mrtr.Call, next func(context.Context) *mrtr.Response) *mrtr.Response {
			order = append(order, "inner")
			return next(ctx)
		}))
	require.NoError(t, srv.AddTool(mrtr.Tool{Name: "ask"}, mrtr.HandlerFunc(func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
		if _, ok := req.Responses.Elicitation("k"); ok {
			return mrtr.TextResult("done"), nil
		}
		return mrtr.Ask("k", &mrtr.ElicitRequest{Message: "?", RequestedSchema: &mrtr.ElicitSchema{Type: "object", Properties: map[string]json.RawMessage{}}}), nil
	})))
	send := func(r *mrtrtest.Request) { mrtrtest.Send(context.Background(), srv, "alice", r) }

	send(mrtrtest.NewRequest(wire.MethodToolsCall, map[string]any{"name": "ask"}).WithCapabilities(`{"elicitation":{}}`))
	assert.Equal(t, []string{"outer in", "inner", "outer out"}, order)
	assert.Equal(t, wire.ResultInputRequired, last.ResultType)
	assert.Equal(t, []string{"k"}, last.Asked)
	assert.Equal(t, "ask", last.Target)
	assert.Equal(t, "alice", last.Principal)
	assert.Empty(t, last.Refusal)

	assert.Equal(t, mrtr.StageNone, last.RefusedAt)
	assert.True(t, last.Resolved)

	for _, tc := range []struct {
		req      *mrtrtest.Request
		stage    mrtr.Stage
		refusal  string
		resolved bool
	}{
		{mrtrtest.NewRequest(wire.MethodToolsCall, map[string]any{"name": "ask"}).WithMeta(wire.MetaProtocolVersion, "1999-01-01"), mrtr.StageVersion, "version", false},
		{mrtrtest.NewRequest(wire.MethodToolsCall, map[string]any{"name": "ask"}).WithMeta(wire.MetaClientCapabilities, nil), mrtr.StageMeta, "meta", false},
		{mrtrtest.NewRequest("ping", nil), mrtr.StageMethod, "method", false},
		{mrtrtest.NewRequest(wire.MethodToolsCall, map[string]any{"name": "nope"}), mrtr.StageTarget, "target", false},
		{mrtrtest.NewRequest(wire.MethodToolsCall, map[string]any{"name": "ask", "arguments": json.RawMessage(`{"a":1,"A":2}`)}), mrtr.StageArguments, "arguments", true},
		{mrtrtest.NewRequest(wire.MethodToolsCall, map[string]any{"name": "ask", "requestState": 7}), mrtr.StageState, "state", true},
		{mrtrtest.NewRequest(wire.MethodToolsCall, map[string]any{"name": "ask"}), mrtr.StageCapability, "capability", true},
		{mrtrtest.NewRequest(wire.MethodToolsList, map[string]any{"cursor": "???"}), mrtr.StageMethodParams, "params", false},
	} {
		send(tc.req)
		assert.Equal(t, tc.refusal, last.Refusal, "%s", tc.req.Body())
		assert.Equal(t, tc.stage, last.RefusedAt, "%s", tc.req.Body())
		assert.Equal(t, tc.resolved, last.Resolved, "%s", tc.req.Body())
		assert.NotNil(t, last.Error, "%s", tc.req.Body())
	}
}

// TestStagesInLadderOrder pins the names the stages carry in logs and
// metrics, and which of them come after the version steps.
func TestStagesInLadderOrder(t *testing.T) {
	var names []string
	var accepted []bool
	for s := mrtr.StageNone; s <= mrtr.StagePanic; s++ {
		names = append(names, s.String())
		accepted = append(accepted, s.VersionAccepted())
	}
	assert.Equal(t, []string{"", "limit", "params", "header", "version", "meta", "method", "target", "scope", "header",
		"params", "limit", "arguments", "state", "answers", "limit", "capability", "round_limit", "timeout", "panic"}, names)
	assert.Equal(t, []bool{true, false, false, false, false, false, true, true, true, true,
		true, true, true, true, true, true, true, true, true, true}, accepted)
	assert.Empty(t, (mrtr.StagePanic + 1).String())
}

func TestAuditLog(t *testing.T) {
	var buf bytes.Buffer
	audit := slog.New(slog.NewTextHandler(&buf, nil))
	srv, _ := limitServer(t, mrtr.WithInterceptors(mrtr.AuditLog(audit)))
	require.NoError(t, srv.AddTool(mrtr.Tool{Name: "ask"}, mrtr.HandlerFunc(func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
		if a, ok := req.Responses.Elicitation("secret_question"); ok && a.Accepted() {
			return mrtr.TextResult("done"), nil
		}
		return mrtr.Ask("secret_question", &mrtr.ElicitRequest{Message: "What is the password hint?", RequestedSchema: &mrtr.ElicitSchema{
			Type: "object", Properties: map[string]json.RawMessage{"hint": json.RawMessage(`{"type":"string"}`)}}}), nil
	})))
	c := mrtrtest.NewClient(srv, mrtrtest.WithPrincipal("alice@example.com"), mrtrtest.OnElicitation(func(ctx context.Context, r *mrtr.ElicitRequest) (*mrtr.ElicitResult, error) {
		return &mrtr.ElicitResult{Action: "accept", Content: map[string]any{"hint": "the-answer-value"}}, nil
	}))
	_, err := c.CallTool(context.Background(), "ask", map[string]any{"account": "argument-value"})
	require.NoError(t, err)
	mrtrtest.Send(context.Background(), srv, "", mrtrtest.NewRequest(wire.MethodToolsCall, map[string]any{"name": "ask", "requestState": "forged"}))
	out := buf.String()
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Len(t, lines, 3, out)
	assert.Contains(t, lines[0], "round=0")
	assert.Contains(t, lines[0], "asked=[secret_question]")
	assert.Contains(t, lines[1], "round=1")
	assert.Contains(t, lines[1], "result=complete")
	assert.Contains(t, lines[2], "refusal=state")
	assert.Contains(t, lines[2], "state_reason=malformed")
	assert.Contains(t, lines[0], "principal="+mrtr.PrincipalDigest("alice@example.com"))
	for _, secret := range []string{"argument-value", "the-answer-value", "password hint", "alice@example.com"} {
		assert.NotContains(t, out, secret, "the audit log never holds values")
	}
}
