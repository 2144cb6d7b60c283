package mrtr_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log"
	"sort"

	"github.com/mrtrkit/mrtrkit/discover"
	"github.com/mrtrkit/mrtrkit/mrtr"
	"github.com/mrtrkit/mrtrkit/state"
)

// A server with one tool that asks for the user's name through elicitation
// and greets them on the retry.
func Example() {
	ring, err := state.NewKeyRing(state.Key{ID: "k1", Secret: bytes.Repeat([]byte{7}, 32)})
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
			return mrtr.ToolError("The user did not give a name."), nil
		}
		return &mrtr.CallToolResult{Content: []mrtr.Content{mrtr.Text(fmt.Sprintf("Hello, %s!", ans.Content["name"]))}}, nil
	})
	if err := srv.AddTool(mrtr.Tool{Name: "greet", Description: "Greets the user by name"}, greet); err != nil {
		log.Fatal(err)
	}

	// send serves one request body as a transport would and decodes the result.
	send := func(body string) map[string]json.RawMessage {
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
	const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}`

	// Round 1: the server asks for input.
	first := send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{` + meta + `,"name":"greet","arguments":{}}}`)
	var asks map[string]struct {
		Method string `json:"method"`
	}
	var requestState string
	_ = json.Unmarshal(first["inputRequests"], &asks)
	_ = json.Unmarshal(first["requestState"], &requestState)
	keys := make([]string, 0, len(asks))
	for k := range asks {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	fmt.Println("round 1:", string(first["resultType"]))
	for _, k := range keys {
		fmt.Printf("  %s -> %s\n", k, asks[k].Method)
	}

	// Round 2: the client retries with the answer and the requestState.
	stateJSON, _ := json.Marshal(requestState)
	second := send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{` + meta + `,"name":"greet","arguments":{},` +
		`"inputResponses":{"name":{"action":"accept","content":{"name":"Ada"}}},"requestState":` + string(stateJSON) + `}}`)
	var content []struct {
		Text string `json:"text"`
	}
	_ = json.Unmarshal(second["content"], &content)
	fmt.Println("round 2:", string(second["resultType"]))
	fmt.Println(" ", content[0].Text)

	// Output:
	// round 1: "input_required"
	//   name -> elicitation/create
	// round 2: "complete"
	//   Hello, Ada!
}
