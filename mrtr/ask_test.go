package mrtr_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mrtrkit/mrtrkit/mrtr"
	"github.com/mrtrkit/mrtrkit/mrtr/mrtrtest"
)

// nameForm is a one-field form question.
func whoForm(msg string) *mrtr.ElicitRequest {
	return &mrtr.ElicitRequest{Message: msg, RequestedSchema: &mrtr.ElicitSchema{Type: "object",
		Properties: map[string]json.RawMessage{"name": json.RawMessage(`{"type":"string"}`)}, Required: []string{"name"}}}
}

// threeRounds asks a form, then the model, then the roots, each question
// depending on the one before, and counts its runs.
func threeRounds(runs *atomic.Int32) mrtr.HandlerFunc {
	return func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
		runs.Add(1)
		who, err := mrtr.Elicit(ctx, req, "who", whoForm("Who are you?"))
		if err != nil {
			return nil, err
		}
		if !who.Accepted() {
			return mrtr.TextResult("declined"), nil
		}
		name := who.Content["name"].(string)
		poem, err := mrtr.Sample(ctx, req, "poem", &mrtr.SamplingRequest{Messages: []mrtr.SamplingMessage{mrtr.UserText("A poem for " + name)}, MaxTokens: 50})
		if err != nil {
			return nil, err
		}
		roots, err := mrtr.ListRoots(ctx, req, "roots")
		if err != nil {
			return nil, err
		}
		return mrtr.TextResult(fmt.Sprintf("%s: %s (%d roots)", name, poem.Text(), len(roots.Roots))), nil
	}
}

func answeringClient(srv *mrtr.Server, opts ...mrtrtest.Option) *mrtrtest.Client {
	base := []mrtrtest.Option{
		mrtrtest.OnElicitation(func(_ context.Context, q *mrtr.ElicitRequest) (*mrtr.ElicitResult, error) {
			return &mrtr.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}}, nil
		}),
		mrtrtest.OnSampling(func(_ context.Context, q *mrtr.SamplingRequest) (*mrtr.SamplingResult, error) {
			return &mrtr.SamplingResult{Role: mrtr.RoleAssistant, Model: "m", Content: []mrtr.SamplingContent{{Type: "text", Text: "roses"}}}, nil
		}),
		mrtrtest.WithRoots(mrtr.Root{URI: "file:///a"}, mrtr.Root{URI: "file:///b"}),
	}
	return mrtrtest.NewClient(srv, append(base, opts...)...)
}

func TestStraightLineThreeRounds(t *testing.T) {
	f := newFixture(t)
	var runs atomic.Int32
	f.addTool("three", threeRounds(&runs))
	res, err := answeringClient(f.srv).CallTool(context.Background(), "three", nil)
	require.NoError(t, err)
	require.Equal(t, "Ada: roses (2 roots)", res.Text())
	require.Equal(t, 3, res.Rounds)
	require.Equal(t, [][]string{{"who"}, {"poem"}, {"roots"}}, res.Asked)
	require.EqualValues(t, 4, runs.Load())
}

// An unknown tool or prompt names the nearest ones the caller sees, and
// never one hidden from it.
func TestUnknownNamesSuggestNearest(t *testing.T) {
	f := newFixture(t, mrtr.WithVisibility(func(principal string, _ *mrtr.TokenInfo, kind, name string) bool {
		return name != "admin_add"
	}))
	for _, n := range []string{"add", "adder", "admin_add", "greet"} {
		f.addTool(n, func(context.Context, *mrtr.Request) (mrtr.Result, error) { return mrtr.TextResult("ok"), nil })
	}
	_, err := mrtrtest.NewClient(f.srv).CallTool(context.Background(), "ad", nil)
	var me *mrtr.Error
	require.ErrorAs(t, err, &me)
	require.Equal(t, `Unknown tool: ad (did you mean add?)`, me.Message)
	_, err = mrtrtest.NewClient(f.srv).CallTool(context.Background(), "admin_ad", nil)
	require.ErrorAs(t, err, &me)
	require.NotContains(t, me.Message, "admin_add", "a hidden tool is never suggested")
}
