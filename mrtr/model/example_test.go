package model_test

import (
	"context"
	"fmt"
	"log"

	"github.com/mrtrkit/mrtrkit/discover"
	"github.com/mrtrkit/mrtrkit/mrtr"
	"github.com/mrtrkit/mrtrkit/mrtr/model"
	"github.com/mrtrkit/mrtrkit/mrtr/mrtrtest"
	"github.com/mrtrkit/mrtrkit/state"
)

// One plain handler, two models. With model.Client() the first call asks
// the client's model through sampling and the retry reads its answer; with
// a model the server calls itself (here a model.Func) the call completes
// at once. An mrtrtest client plays the MCP client.
func ExampleComplete() {
	// tideHaiku is written once, whatever model serves it.
	tideHaiku := func(m model.Model) mrtr.Handler {
		return mrtr.HandlerFunc(func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
			sr := &mrtr.SamplingRequest{
				Messages:  []mrtr.SamplingMessage{mrtr.UserText("Write a haiku about tides.")},
				MaxTokens: 60,
			}
			res, ask, err := model.Complete(ctx, m, req, "haiku", sr)
			if err != nil {
				return nil, err
			}
			if ask != nil {
				return ask, nil // input_required: the client's model answers on the retry
			}
			return &mrtr.CallToolResult{Content: []mrtr.Content{mrtr.Text(res.Text() + " (" + res.Model + ")")}}, nil
		})
	}

	// newServer serves the handler with model m.
	newServer := func(m model.Model) *mrtr.Server {
		ring, err := state.GenerateKeyRing()
		if err != nil {
			log.Fatal(err)
		}
		codec, err := state.NewAEAD(ring)
		if err != nil {
			log.Fatal(err)
		}
		srv, err := mrtr.NewServer(discover.Description{
			Server: discover.Implementation{Name: "poet", Version: "1.0.0"}, OmitServerInfo: true,
		}, mrtr.WithCodec(codec))
		if err != nil {
			log.Fatal(err)
		}
		if err := srv.AddTool(mrtr.Tool{Name: "haiku"}, tideHaiku(m)); err != nil {
			log.Fatal(err)
		}
		return srv
	}

	// The client's model: the first round asks for the completion, which
	// the client's model answers; the retry reads it.
	c := mrtrtest.NewClient(newServer(model.Client()), mrtrtest.OnSampling(
		func(ctx context.Context, r *mrtr.SamplingRequest) (*mrtr.SamplingResult, error) {
			return &mrtr.SamplingResult{
				Role:    mrtr.RoleAssistant,
				Content: []mrtr.SamplingContent{{Type: "text", Text: "The sea breathes in, out."}},
				Model:   "client-llm",
			}, nil
		}))
	res, err := c.CallTool(context.Background(), "haiku", nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("client model:", res.Rounds, "round,", res.Text())

	// A model the server calls itself answers in the same round, and the
	// client needs no sampling capability.
	local := model.Func(func(ctx context.Context, r *mrtr.SamplingRequest) (*mrtr.SamplingResult, error) {
		return &mrtr.SamplingResult{
			Role:    mrtr.RoleAssistant,
			Content: []mrtr.SamplingContent{{Type: "text", Text: "Moon pulls, water follows."}},
			Model:   "local-llm",
		}, nil
	})
	res, err = mrtrtest.NewClient(newServer(local)).CallTool(context.Background(), "haiku", nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("server model:", res.Rounds, "rounds,", res.Text())
	// Output:
	// client model: 1 round, The sea breathes in, out. (client-llm)
	// server model: 0 rounds, Moon pulls, water follows. (local-llm)
}
