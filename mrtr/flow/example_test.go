package flow_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"

	"github.com/mrtrkit/mrtrkit/discover"
	"github.com/mrtrkit/mrtrkit/mrtr"
	"github.com/mrtrkit/mrtrkit/mrtr/flow"
	"github.com/mrtrkit/mrtrkit/mrtr/model"
	"github.com/mrtrkit/mrtrkit/mrtr/mrtrtest"
	"github.com/mrtrkit/mrtrkit/mrtr/typed"
	"github.com/mrtrkit/mrtrkit/state"
)

// PoemArgs are the tool's arguments.
type PoemArgs struct {
	Topic string `json:"topic" jsonschema:"what the poem is about" validate:"required"`
}

// Reader is the form the user fills in.
type Reader struct {
	Name string `json:"name" jsonschema:"who the poem is for" validate:"required"`
}

// PoemState is carried from round to round, sealed.
type PoemState struct {
	For  string `json:"for"`
	Poem string `json:"poem,omitempty"`
}

// Poem is the tool's output.
type Poem struct {
	For  string `json:"for"`
	Poem string `json:"poem"`
}

// poemFlow asks the user who the poem is for, then asks a model to write it.
func poemFlow(m model.Model) *flow.Flow[PoemArgs, PoemState, Poem] {
	type call = flow.Call[PoemArgs, PoemState]
	return flow.Must(flow.New(
		[]flow.Step[PoemArgs, PoemState]{
			flow.Form("reader", "Who is the poem for?", func(_ context.Context, c *call, a flow.FormAnswer[Reader]) error {
				if !a.Accepted() {
					return mrtr.InvalidParamsError("the poem needs a reader")
				}
				c.State.For = a.Value.Name
				return nil
			}),
			flow.Sample("poem", func(_ context.Context, c *call) (*mrtr.SamplingRequest, error) {
				return &mrtr.SamplingRequest{
					Messages:  []mrtr.SamplingMessage{mrtr.UserText("Write a two-line poem about " + c.In.Topic + " for " + c.State.For + ".")},
					MaxTokens: 100,
				}, nil
			}, func(_ context.Context, c *call, r *mrtr.SamplingResult) error {
				c.State.Poem = r.Text()
				return nil
			}),
		},
		func(_ context.Context, c *call) (Poem, error) {
			return Poem{For: c.State.For, Poem: c.State.Poem}, nil
		},
		flow.WithModel(m),
	))
}

// A two-step flow over two input_required rounds: an elicitation form,
// then a completion by the client's model. The client here answers both
// from Go functions.
func Example() {
	srv := exampleServer()
	if err := typed.AddTool(srv, mrtr.Tool{Name: "poem", Description: "Writes a poem."}, poemFlow(model.Client())); err != nil {
		log.Fatal(err)
	}
	c := mrtrtest.NewClient(srv,
		mrtrtest.OnElicitation(func(_ context.Context, r *mrtr.ElicitRequest) (*mrtr.ElicitResult, error) {
			schema, _ := json.Marshal(r.RequestedSchema)
			fmt.Println("form:", r.Message, string(schema))
			return &mrtr.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}}, nil
		}),
		mrtrtest.OnSampling(func(_ context.Context, r *mrtr.SamplingRequest) (*mrtr.SamplingResult, error) {
			fmt.Println("model:", r.Messages[0].Content[0].Text)
			return &mrtr.SamplingResult{Role: mrtr.RoleAssistant, Model: "client-model",
				Content: []mrtr.SamplingContent{{Type: "text", Text: "The sea breathes in, the sea breathes out."}}}, nil
		}))

	res, err := c.CallTool(context.Background(), "poem", map[string]any{"topic": "tides"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("rounds:", res.Rounds, res.Asked)
	fmt.Println(string(res.StructuredContent))
	// Output:
	// form: Who is the poem for? {"type":"object","properties":{"name":{"type":"string","description":"who the poem is for","minLength":1}},"required":["name"]}
	// model: Write a two-line poem about tides for Ada.
	// rounds: 2 [[reader] [poem]]
	// {"for":"Ada","poem":"The sea breathes in, the sea breathes out."}
}

// The same flow with a model the server calls itself: the sampling step
// completes inline, so only the user is asked, and the client needs no
// sampling capability.
func ExampleWithModel() {
	srv := exampleServer()
	writer := model.Func(func(_ context.Context, r *mrtr.SamplingRequest) (*mrtr.SamplingResult, error) {
		return &mrtr.SamplingResult{Role: mrtr.RoleAssistant, Model: "house-model",
			Content: []mrtr.SamplingContent{{Type: "text", Text: "Moon on the water."}}}, nil
	})
	if err := typed.AddTool(srv, mrtr.Tool{Name: "poem"}, poemFlow(writer)); err != nil {
		log.Fatal(err)
	}
	c := mrtrtest.NewClient(srv, mrtrtest.OnElicitation(func(context.Context, *mrtr.ElicitRequest) (*mrtr.ElicitResult, error) {
		return &mrtr.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}}, nil
	}))

	res, err := c.CallTool(context.Background(), "poem", map[string]any{"topic": "tides"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("rounds:", res.Rounds, res.Asked)
	fmt.Println(string(res.StructuredContent))
	// Output:
	// rounds: 1 [[reader]]
	// {"for":"Ada","poem":"Moon on the water."}
}

func exampleServer() *mrtr.Server {
	ring, err := state.GenerateKeyRing()
	if err != nil {
		log.Fatal(err)
	}
	codec, err := state.NewAEAD(ring)
	if err != nil {
		log.Fatal(err)
	}
	srv, err := mrtr.NewServer(discover.Description{Server: discover.Implementation{Name: "poems", Version: "1.0.0"}}, mrtr.WithCodec(codec))
	if err != nil {
		log.Fatal(err)
	}
	return srv
}
