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
	"github.com/mrtrkit/mrtrkit/state"
)

func newServer(t *testing.T) *mrtr.Server {
	t.Helper()
	ring, err := state.GenerateKeyRing()
	require.NoError(t, err)
	codec, err := state.NewAEAD(ring)
	require.NoError(t, err)
	srv, err := mrtr.NewServer(discover.Description{Server: discover.Implementation{Name: "kit", Version: "1"}}, mrtr.WithCodec(codec))
	require.NoError(t, err)
	return srv
}

// threeRounds asks for a name, then a model's answer, then the roots, and
// reports all three.
func threeRounds(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
	var st struct{ Name, Model string }
	if req.State != nil {
		if err := json.Unmarshal(req.State, &st); err != nil {
			return nil, err
		}
	}
	seal := func(key string, r mrtr.InputRequest) (mrtr.Result, error) {
		b, _ := json.Marshal(st)
		return &mrtr.InputRequired{Requests: map[string]mrtr.InputRequest{key: r}, State: b}, nil
	}
	switch {
	case st.Name == "":
		if a, ok := req.Responses.Elicitation("name"); ok && a.Accepted() {
			st.Name, _ = a.Content["name"].(string)
			return seal("model", &mrtr.SamplingRequest{Messages: []mrtr.SamplingMessage{mrtr.UserText("hi")}, MaxTokens: 5})
		}
		return seal("name", &mrtr.ElicitRequest{Message: "Name?", RequestedSchema: &mrtr.ElicitSchema{Type: "object", Properties: map[string]json.RawMessage{"name": json.RawMessage(`{"type":"string"}`)}}})
	case st.Model == "":
		if a, ok := req.Responses.Sampling("model"); ok {
			st.Model = a.Text()
			return seal("roots", &mrtr.RootsRequest{})
		}
		return seal("model", &mrtr.SamplingRequest{Messages: []mrtr.SamplingMessage{mrtr.UserText("hi")}, MaxTokens: 5})
	}
	r, ok := req.Responses.Roots("roots")
	if !ok {
		return seal("roots", &mrtr.RootsRequest{})
	}
	return mrtr.TextResult(st.Name + "/" + st.Model + "/" + r.Roots[0].URI), nil
}

func TestClientAnswersEveryRound(t *testing.T) {
	srv := newServer(t)
	require.NoError(t, srv.AddTool(mrtr.Tool{Name: "three"}, mrtr.HandlerFunc(threeRounds)))
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
	assert.Equal(t, "Ada/gpt/file:///src", res.Text())
	assert.Equal(t, 3, res.Rounds)
	assert.Equal(t, [][]string{{"name"}, {"model"}, {"roots"}}, res.Asked)
}

func TestClientDeclaresWhatItCanAnswer(t *testing.T) {
	srv := newServer(t)
	require.NoError(t, srv.AddTool(mrtr.Tool{Name: "three"}, mrtr.HandlerFunc(threeRounds)))
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
	srv := newServer(t)
	require.NoError(t, srv.AddTool(mrtr.Tool{Name: "forever"}, mrtr.HandlerFunc(func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
		return mrtr.Ask("again", &mrtr.RootsRequest{}), nil
	})))
	c := mrtrtest.NewClient(srv, mrtrtest.WithRoots(mrtr.Root{URI: "file:///x"}), mrtrtest.WithMaxRounds(2))
	_, err := c.CallTool(context.Background(), "forever", nil)
	assert.ErrorIs(t, err, mrtrtest.ErrTooManyRounds)
}

func TestRequestBuilder(t *testing.T) {
	srv := newServer(t)
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
