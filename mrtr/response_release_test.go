package mrtr_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mrtrkit/mrtrkit/mrtr"
)

// handleTool serves one tools/call of tool with the given text argument
// straight through Handle and returns the Response.
func handleTool(t *testing.T, srv *mrtr.Server, tool, text string) *mrtr.Response {
	t.Helper()
	msg, _, perr := mrtr.ParseMessage([]byte(request("tools/call", obj{"_meta": meta(capsNone), "name": tool, "arguments": obj{"text": text}})))
	require.Nil(t, perr)
	resp := srv.Handle(context.Background(), &mrtr.Inbound{Message: msg})
	require.NotNil(t, resp)
	require.Nil(t, resp.Error)
	return resp
}

func echoTool(_ context.Context, req *mrtr.Request) (mrtr.Result, error) {
	var args struct{ Text string }
	if err := json.Unmarshal(req.Arguments, &args); err != nil {
		return nil, err
	}
	return mrtr.TextResult(args.Text), nil
}

// Release hands a result's memory back once: Result is nil after it, a
// second Release does nothing, and the next call renders its own result.
func TestResponseRelease(t *testing.T) {
	f := newFixture(t)
	f.addTool("echo", echoTool)
	first := handleTool(t, f.srv, "echo", "a rather long first answer")
	kept := string(first.Result)
	require.Contains(t, kept, `"text":"a rather long first answer"`)
	first.Release()
	require.Nil(t, first.Result)
	first.Release()

	second := handleTool(t, f.srv, "echo", "short")
	require.Contains(t, string(second.Result), `"text":"short"`)
	require.NotContains(t, string(second.Result), "first answer")
	second.Release()
}

// An interceptor may keep the Response it was given: a result that went
// through interceptors is never handed back, and Release leaves it be.
func TestInterceptedResultIsNotReleased(t *testing.T) {
	var seen *mrtr.Response
	f := newFixture(t, mrtr.WithInterceptors(func(ctx context.Context, _ *mrtr.Call, next func(context.Context) *mrtr.Response) *mrtr.Response {
		seen = next(ctx)
		return seen
	}))
	f.addTool("echo", echoTool)
	resp := handleTool(t, f.srv, "echo", "kept by the interceptor")
	resp.Release()
	require.Contains(t, string(seen.Result), `"text":"kept by the interceptor"`)
}
