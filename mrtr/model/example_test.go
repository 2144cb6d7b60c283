package model_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"

	"github.com/mrtrkit/mrtrkit/discover"
	"github.com/mrtrkit/mrtrkit/mrtr"
	"github.com/mrtrkit/mrtrkit/mrtr/model"
	"github.com/mrtrkit/mrtrkit/state"
)

// One plain handler, two models. With model.Client() the first call asks
// the client's model through sampling and the retry reads its answer; with
// a model the server calls itself (here a model.Func) the call completes
// at once.
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

	// newCaller serves the handler with model m and returns a function
	// that sends one tools/call as a transport would.
	newCaller := func(m model.Model) func(extra string) map[string]json.RawMessage {
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
		return func(extra string) map[string]json.RawMessage {
			body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"haiku",` + extra +
				`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"sampling":{}}}}}`
			msg, _, perr := mrtr.ParseMessage([]byte(body))
			if perr != nil {
				log.Fatal(perr)
			}
			resp := srv.Handle(context.Background(), &mrtr.Inbound{Message: msg})
			if resp.Error != nil {
				log.Fatal(resp.Error)
			}
			var result map[string]json.RawMessage
			if err := json.Unmarshal(resp.Result, &result); err != nil {
				log.Fatal(err)
			}
			return result
		}
	}

	// The client's model: the first round asks for the completion.
	call := newCaller(model.Client())
	first := call("")
	var asks map[string]struct {
		Method string `json:"method"`
	}
	if err := json.Unmarshal(first["inputRequests"], &asks); err != nil {
		log.Fatal(err)
	}
	fmt.Println("client model:", string(first["resultType"]), "haiku ->", asks["haiku"].Method)

	// The retry carries the client's answer and the requestState.
	answer := `{"haiku":{"role":"assistant","content":{"type":"text","text":"The sea breathes in, out."},"model":"client-llm"}}`
	second := call(`"inputResponses":` + answer + `,"requestState":` + string(first["requestState"]) + `,`)
	fmt.Println("client model:", string(second["resultType"]), string(second["content"]))

	// A model the server calls itself answers in the same round.
	local := model.Func(func(ctx context.Context, r *mrtr.SamplingRequest) (*mrtr.SamplingResult, error) {
		return &mrtr.SamplingResult{
			Role:    mrtr.RoleAssistant,
			Content: []mrtr.SamplingContent{{Type: "text", Text: "Moon pulls, water follows."}},
			Model:   "local-llm",
		}, nil
	})
	only := newCaller(local)("")
	fmt.Println("server model:", string(only["resultType"]), string(only["content"]))
	// Output:
	// client model: "input_required" haiku -> sampling/createMessage
	// client model: "complete" [{"type":"text","text":"The sea breathes in, out. (client-llm)"}]
	// server model: "complete" [{"type":"text","text":"Moon pulls, water follows. (local-llm)"}]
}
