package mrtrtest_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mrtrkit/mrtrkit/discover"
	"github.com/mrtrkit/mrtrkit/internal/wire"
	"github.com/mrtrkit/mrtrkit/mrtr"
	"github.com/mrtrkit/mrtrkit/mrtr/mrtrtest"
)

func TestClientAnswersEveryRound(t *testing.T) {
	srv := mrtrtest.NewServer(t, "kit")
	require.NoError(t, srv.AddTool(mrtr.Tool{Name: "three"}, mrtrtest.ThreeRounds(" ok")))
	c := mrtrtest.NewClient(srv,
		mrtrtest.OnElicitation(func(ctx context.Context, r *mrtr.ElicitRequest) (*mrtr.ElicitResult, error) {
			return &mrtr.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}}, nil
		}),
		mrtrtest.OnSampling(func(ctx context.Context, r *mrtr.SamplingRequest) (*mrtr.SamplingResult, error) {
			return &mrtr.SamplingResult{Role: mrtr.RoleAssistant, Model: "m", Content: []mrtr.SamplingContent{{Type: "text", Text: "gpt"}}}, nil
		}),
		mrtrtest.WithRoots(mrtr.Root{URI: "file:///src"}))
	res, err := c.CallTool(context.Background(), "three", nil)
	require.NoError(t, err)
	assert.Equal(t, "Ada|gpt|file:///src ok", res.Text())
	assert.Equal(t, 3, res.Rounds)
	assert.Equal(t, [][]string{{"name"}, {"draft"}, {"where"}}, res.Asked)
}

func TestClientDeclaresWhatItCanAnswer(t *testing.T) {
	srv := mrtrtest.NewServer(t, "kit")
	require.NoError(t, srv.AddTool(mrtr.Tool{Name: "three"}, mrtrtest.ThreeRounds(" ok")))
	// Without a sampling function the client does not declare sampling,
	// so the server refuses the question it cannot ask.
	c := mrtrtest.NewClient(srv, mrtrtest.OnElicitation(func(ctx context.Context, r *mrtr.ElicitRequest) (*mrtr.ElicitResult, error) {
		return &mrtr.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}}, nil
	}))
	_, err := c.CallTool(context.Background(), "three", nil)
	assert.Equal(t, mrtr.CodeMissingCapability, mrtr.CodeOf(err))

	// Declaring a capability it has no function for ends the call with
	// ErrUnanswered.
	c = mrtrtest.NewClient(srv, mrtrtest.WithCapabilities(mrtr.ClientCapabilities{Elicitation: &mrtr.ElicitCapability{}}))
	_, err = c.CallTool(context.Background(), "three", nil)
	assert.True(t, errors.Is(err, mrtrtest.ErrUnanswered), "%v", err)
}

func TestClientStopsAtItsRoundLimit(t *testing.T) {
	srv := mrtrtest.NewServer(t, "kit")
	require.NoError(t, srv.AddTool(mrtr.Tool{Name: "forever"}, mrtr.HandlerFunc(func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
		return mrtr.Ask("again", &mrtr.RootsRequest{}), nil
	})))
	c := mrtrtest.NewClient(srv, mrtrtest.WithRoots(mrtr.Root{URI: "file:///x"}), mrtrtest.WithMaxRounds(2))
	_, err := c.CallTool(context.Background(), "forever", nil)
	assert.ErrorIs(t, err, mrtrtest.ErrTooManyRounds)
}

func TestRequestBuilder(t *testing.T) {
	srv := mrtrtest.NewServer(t, "kit")
	require.NoError(t, srv.AddTool(mrtr.Tool{Name: "who"}, mrtr.HandlerFunc(func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
		return mrtr.TextResult(req.Principal + " " + string(req.Meta.LogLevel)), nil
	})))
	res, rerr := mrtrtest.Send(context.Background(), srv, "alice",
		mrtrtest.NewRequest(wire.MethodToolsCall, map[string]any{"name": "who"}).WithMeta(wire.MetaLogLevel, "info"))
	require.Nil(t, rerr)
	assert.Contains(t, string(res), `"text":"alice "`, "the server advertises no logging, so the level is dropped")

	_, rerr = mrtrtest.Send(context.Background(), srv, "", mrtrtest.NewRequest(wire.MethodToolsCall, map[string]any{"name": "who"}).WithMeta(wire.MetaProtocolVersion, nil))
	require.NotNil(t, rerr)
	assert.True(t, rerr.Envelope(), "a request without its version claim is refused as a whole")

	res, rerr = mrtrtest.Send(context.Background(), srv, "", mrtrtest.NewRequest("notifications/cancelled", nil).WithID(nil))
	assert.Nil(t, res)
	assert.Nil(t, rerr)
}

func ExampleClient() {
	srv, _ := mrtr.NewServer(discover.Description{Server: discover.Implementation{Name: "greeter", Version: "1.0.0"}})
	_ = srv.AddTool(mrtr.Tool{Name: "greet"}, mrtr.HandlerFunc(func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
		if a, ok := req.Responses.Elicitation("name"); ok && a.Accepted() {
			return mrtr.TextResult("Hello, " + a.Content["name"].(string) + "!"), nil
		}
		return mrtr.Ask("name", &mrtr.ElicitRequest{Message: "Your name?", RequestedSchema: &mrtr.ElicitSchema{
			Type: "object", Properties: map[string]json.RawMessage{"name": json.RawMessage(`{"type":"string"}`)}}}), nil
	}))
	c := mrtrtest.NewClient(srv, mrtrtest.OnElicitation(func(ctx context.Context, r *mrtr.ElicitRequest) (*mrtr.ElicitResult, error) {
		return &mrtr.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}}, nil
	}))
	res, err := c.CallTool(context.Background(), "greet", nil)
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Text(), res.Rounds)
	// Output: Hello, Ada! 1
}
