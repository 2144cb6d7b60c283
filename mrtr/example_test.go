package mrtr_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"

	"github.com/mrtrkit/mrtrkit/mrtr"
	"github.com/mrtrkit/mrtrkit/mrtr/mrtrtest"
	"github.com/mrtrkit/mrtrkit/state"
)

// A tool that asks the user for their name in straight-line code, tested
// in process with mrtrtest: the first run ends at the ask, the client
// answers the elicitation round, and the tool runs again from the top with
// the answer, through the server's real pipeline (sealed requestState,
// capability gate, strict door).
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
	srv, err := mrtr.New("greeter", "1.0.0", mrtr.WithCodec(codec))
	if err != nil {
		log.Fatal(err)
	}

	question := &mrtr.ElicitRequest{
		Message: "What is your name?",
		RequestedSchema: &mrtr.ElicitSchema{
			Type:       "object",
			Properties: map[string]json.RawMessage{"name": json.RawMessage(`{"type":"string"}`)},
			Required:   []string{"name"},
		},
	}
	greet := mrtr.HandlerFunc(func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
		ans, err := mrtr.Elicit(ctx, req, "name", question)
		if err != nil {
			return nil, err // no answer yet: the client is asked
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
		return &mrtr.ElicitResult{Action: mrtr.Accepted, Content: map[string]any{"name": "Ada"}}, nil
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

// The low-level layer beneath the asks: a handler that returns an
// *InputRequired itself and reads the answer in Request.Responses on the
// retry, carrying whatever it needs in its own State.
func ExampleInputRequired() {
	srv, _ := mrtr.New("greeter", "1.0.0")
	srv.AddTool(mrtr.Tool{Name: "greet"}, mrtr.HandlerFunc(func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
		ans, ok := req.Responses.Elicitation("name")
		if !ok {
			ir := mrtr.Ask("name", &mrtr.ElicitRequest{Message: "What is your name?", RequestedSchema: &mrtr.ElicitSchema{
				Type: "object", Properties: map[string]json.RawMessage{"name": json.RawMessage(`{"type":"string"}`)}}})
			ir.State = []byte("asked at round 0") // sealed; back in req.State on the retry
			return ir, nil
		}
		return mrtr.TextResult(fmt.Sprintf("Hello, %v! (%s)", ans.Content["name"], req.State)), nil
	}))
	client := mrtrtest.NewClient(srv, mrtrtest.OnElicitation(func(ctx context.Context, r *mrtr.ElicitRequest) (*mrtr.ElicitResult, error) {
		return &mrtr.ElicitResult{Action: mrtr.Accepted, Content: map[string]any{"name": "Ada"}}, nil
	}))
	res, _ := client.CallTool(context.Background(), "greet", nil)
	fmt.Println(res.Text())
	// Output: Hello, Ada! (asked at round 0)
}
