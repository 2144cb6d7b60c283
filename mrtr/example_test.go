package mrtr_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"

	"github.com/mrtrkit/mrtrkit/discover"
	"github.com/mrtrkit/mrtrkit/mrtr"
	"github.com/mrtrkit/mrtrkit/mrtr/mrtrtest"
	"github.com/mrtrkit/mrtrkit/state"
)

// A tool that asks the user for their name and greets them on the retry,
// tested in process with mrtrtest: the client answers the elicitation
// round, and the call goes through the server's real pipeline (sealed
// requestState, capability gate, strict door).
func Example() {
	// A real server loads its requestState keys from configuration (see
	// package state); without WithCodec it makes a random key and warns.
	ring, err := state.GenerateKeyRing()
	if err != nil {
		log.Fatal(err)
	}
	codec, err := state.NewAEAD(ring)
	if err != nil {
		log.Fatal(err)
	}
	srv, err := mrtr.NewServer(discover.Description{Server: discover.Implementation{Name: "greeter", Version: "1.0.0"}}, mrtr.WithCodec(codec))
	if err != nil {
		log.Fatal(err)
	}

	greet := mrtr.HandlerFunc(func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
		ans, ok := req.Responses.Elicitation("name")
		if !ok {
			return mrtr.Ask("name", &mrtr.ElicitRequest{
				Message: "What is your name?",
				RequestedSchema: &mrtr.ElicitSchema{
					Type:       "object",
					Properties: map[string]json.RawMessage{"name": json.RawMessage(`{"type":"string"}`)},
					Required:   []string{"name"},
				},
			}), nil
		}
		if !ans.Accepted() {
			return mrtr.ErrorResult("The user did not give a name."), nil
		}
		return mrtr.TextResult(fmt.Sprintf("Hello, %v!", ans.Content["name"])), nil
	})
	if err := srv.AddTool(mrtr.Tool{Name: "greet", Description: "Greets the user by name"}, greet); err != nil {
		log.Fatal(err)
	}

	client := mrtrtest.NewClient(srv, mrtrtest.OnElicitation(func(ctx context.Context, r *mrtr.ElicitRequest) (*mrtr.ElicitResult, error) {
		fmt.Println("asked:", r.Message)
		return &mrtr.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}}, nil
	}))
	res, err := client.CallTool(context.Background(), "greet", nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Text())
	fmt.Println("rounds:", res.Rounds, res.Asked)

	// Output:
	// asked: What is your name?
	// Hello, Ada!
	// rounds: 1 [[name]]
}
