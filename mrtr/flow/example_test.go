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
					return mrtr.ErrInvalidParams("the poem needs a reader", nil)
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
// then a completion by the client's model.
func Example() {
	srv := exampleServer()
	if err := flow.AddTool(srv, mrtr.Tool{Name: "poem", Description: "Writes a poem."}, poemFlow(model.Client())); err != nil {
		log.Fatal(err)
	}
	args := `"name":"poem","arguments":{"topic":"tides"}`

	r := roundTrip(srv, args)
	fmt.Println(r.ResultType, r.asked())
	fmt.Println(string(r.InputRequests["reader"].Params))

	r = roundTrip(srv, args+`,"requestState":"`+r.RequestState+`","inputResponses":{"reader":{"action":"accept","content":{"name":"Ada"}}}`)
	fmt.Println(r.ResultType, r.asked())
	fmt.Println(string(r.InputRequests["poem"].Params))

	r = roundTrip(srv, args+`,"requestState":"`+r.RequestState+`","inputResponses":{"poem":{"role":"assistant","content":{"type":"text","text":"The sea breathes in, the sea breathes out."},"model":"m"}}`)
	fmt.Println(r.ResultType, string(r.StructuredContent))
	// Output:
	// input_required [reader]
	// {"mode":"form","message":"Who is the poem for?","requestedSchema":{"type":"object","properties":{"name":{"type":"string","description":"who the poem is for"}},"required":["name"]}}
	// input_required [poem]
	// {"messages":[{"role":"user","content":{"type":"text","text":"Write a two-line poem about tides for Ada."}}],"maxTokens":100}
	// complete {"for":"Ada","poem":"The sea breathes in, the sea breathes out."}
}

// The same flow with a model the server calls itself: the sampling step
// completes inline, so only the user is asked.
func ExampleWithModel() {
	srv := exampleServer()
	writer := model.Func(func(_ context.Context, r *mrtr.SamplingRequest) (*mrtr.SamplingResult, error) {
		return &mrtr.SamplingResult{Role: mrtr.RoleAssistant, Model: "house-model",
			Content: []mrtr.SamplingContent{{Type: "text", Text: "Moon on the water."}}}, nil
	})
	if err := flow.AddTool(srv, mrtr.Tool{Name: "poem"}, poemFlow(writer)); err != nil {
		log.Fatal(err)
	}
	args := `"name":"poem","arguments":{"topic":"tides"}`

	r := roundTrip(srv, args)
	fmt.Println(r.ResultType, r.asked())
	r = roundTrip(srv, args+`,"requestState":"`+r.RequestState+`","inputResponses":{"reader":{"action":"accept","content":{"name":"Ada"}}}`)
	fmt.Println(r.ResultType, string(r.StructuredContent))
	// Output:
	// input_required [reader]
	// complete {"for":"Ada","poem":"Moon on the water."}
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

// roundTrip sends one tools/call with the given params members.
func roundTrip(srv *mrtr.Server, members string) toolResult {
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{` + members +
		`,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{},"sampling":{}}}}}`
	msg, _, perr := mrtr.ParseMessage([]byte(body))
	if perr != nil {
		log.Fatal(perr)
	}
	resp := srv.Handle(context.Background(), &mrtr.Inbound{Message: msg})
	if resp.Error != nil {
		log.Fatal(resp.Error)
	}
	var r toolResult
	if err := json.Unmarshal(resp.Result, &r); err != nil {
		log.Fatal(err)
	}
	return r
}
