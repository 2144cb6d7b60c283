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

// exampleMeta is the _meta member every 2026-07-28 request carries.
const exampleMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`

// newExampleServer returns a Server that seals requestState with a fresh
// key; a real server loads its keys from configuration (see package state).
func newExampleServer(caps discover.Capabilities) *mrtr.Server {
	ring, err := state.GenerateKeyRing()
	if err != nil {
		log.Fatal(err)
	}
	codec, err := state.NewAEAD(ring)
	if err != nil {
		log.Fatal(err)
	}
	srv, err := mrtr.NewServer(discover.Description{
		Server:         discover.Implementation{Name: "example", Version: "1.0.0"},
		Capabilities:   caps,
		OmitServerInfo: true,
	}, mrtr.WithCodec(codec))
	if err != nil {
		log.Fatal(err)
	}
	return srv
}

// A tool with an input schema. The handler decodes its arguments with
// encoding/json: they have passed the strict door, so they decode into
// exactly what was sent. A problem the model can fix is an ErrorResult; a
// number with no exact double form never reaches the handler.
func ExampleServer_AddTool() {
	srv := newExampleServer(discover.Capabilities{})

	err := srv.AddTool(mrtr.Tool{
		Name:        "divide",
		Description: "Divides a by b.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}},"required":["a","b"]}`),
	}, mrtr.HandlerFunc(func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
		var in struct{ A, B float64 }
		if err := json.Unmarshal(req.Arguments, &in); err != nil {
			return mrtr.ErrorResult("arguments: " + err.Error()), nil
		}
		if in.B == 0 {
			return mrtr.ErrorResult("b must not be zero"), nil
		}
		return mrtr.TextResult(fmt.Sprint(in.A / in.B)), nil
	}))
	if err != nil {
		log.Fatal(err)
	}

	client := mrtrtest.NewClient(srv)
	for _, args := range []string{`{"a":7,"b":2}`, `{"a":7,"b":0}`, `{"a":9007199254740993,"b":1}`} {
		res, err := client.CallTool(context.Background(), "divide", json.RawMessage(args))
		if err != nil {
			fmt.Println(err)
			continue
		}
		fmt.Printf("%s (isError %v)\n", res.Text(), res.IsError)
	}
	// Output:
	// 3.5 (isError false)
	// b must not be zero (isError true)
	// mcp error -32602: Invalid arguments: arguments.a is a number with no exact IEEE 754 double form; send it as a string
}

// The transport surface: a transport parses each message with
// ParseMessage, hands it to Handle with the principal it authenticated,
// and writes the Response back (none for a notification). It maps errors
// to its wire itself: Streamable HTTP answers an envelope error with 404
// for -32601 and 400 for the rest, everything else with 200.
func ExampleServer_Handle() {
	srv := newExampleServer(discover.Capabilities{})
	err := srv.AddTool(mrtr.Tool{Name: "echo"}, mrtr.HandlerFunc(func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
		return mrtr.TextResult(string(req.Arguments)), nil
	}))
	if err != nil {
		log.Fatal(err)
	}

	status := func(e *mrtr.Error) int {
		switch {
		case e == nil || !e.Envelope():
			return 200
		case e.Code == mrtr.CodeMethodNotFound:
			return 404
		}
		return 400
	}
	for _, body := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{` + exampleMeta + `,"name":"echo","arguments":{"text":"hi"}}}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{` + exampleMeta + `,"name":"nope"}}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/frobnicate","params":{` + exampleMeta + `}}`,
		`{"jsonrpc":"2.0","id":4,"method":"tools/list","params":{}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`,
		`[{"jsonrpc":"2.0","id":5,"method":"tools/list"}]`,
	} {
		var resp *mrtr.Response
		msg, id, perr := mrtr.ParseMessage([]byte(body))
		if perr != nil {
			resp = &mrtr.Response{ID: id, Error: perr}
		} else {
			resp = srv.Handle(context.Background(), &mrtr.Inbound{Message: msg, Principal: ""})
		}
		if resp == nil {
			fmt.Println("202 (notification, no response)")
			continue
		}
		out, err := resp.AppendJSON(nil)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(status(resp.Error), string(out))
	}
	// Output:
	// 200 {"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","content":[{"type":"text","text":"{\"text\":\"hi\"}"}]}}
	// 200 {"jsonrpc":"2.0","id":2,"error":{"code":-32602,"message":"Unknown tool: nope"}}
	// 404 {"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"Method not found: tools/frobnicate"}}
	// 400 {"jsonrpc":"2.0","id":4,"error":{"code":-32602,"message":"Invalid _meta: params._meta is required"}}
	// 202 (notification, no response)
	// 400 {"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid request: batches are not supported; send one message per request"}}
}

// A resource with a fixed URI and a resource template, each read with
// resources/read. The values matched by the template's {id} reach the
// handler in Request.Vars.
func ExampleServer_AddResource() {
	srv := newExampleServer(discover.Capabilities{})

	readme := mrtr.HandlerFunc(func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
		return &mrtr.ReadResourceResult{Contents: []mrtr.ResourceContents{
			mrtr.TextResource(req.URI, "text/plain", "Notes are at notes://{id}."),
		}}, nil
	})
	err := srv.AddResource(mrtr.Resource{URI: "notes://readme", Name: "readme", MIMEType: "text/plain"}, readme)
	if err != nil {
		log.Fatal(err)
	}

	notes := map[string]string{"1": "Buy milk.", "2": "Call Ada."}
	note := mrtr.HandlerFunc(func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
		text, ok := notes[req.Vars["id"]]
		if !ok {
			return nil, mrtr.ResourceNotFoundError(req.URI)
		}
		return &mrtr.ReadResourceResult{Contents: []mrtr.ResourceContents{
			mrtr.TextResource(req.URI, "text/plain", text),
		}}, nil
	})
	err = srv.AddResourceTemplate(mrtr.ResourceTemplate{URITemplate: "notes://{id}", Name: "note", MIMEType: "text/plain"}, note)
	if err != nil {
		log.Fatal(err)
	}

	client := mrtrtest.NewClient(srv)
	read := func(uri string) {
		res, err := client.ReadResource(context.Background(), uri)
		if err != nil {
			fmt.Printf("%s: %v\n", uri, err)
			return
		}
		fmt.Printf("%s: %s\n", uri, *res.Contents[0].Text)
	}
	read("notes://readme")
	read("notes://2")
	read("notes://7")
	// Output:
	// notes://readme: Notes are at notes://{id}.
	// notes://2: Call Ada.
	// notes://7: mcp error -32602: Resource not found
}

// A prompt with a required and an optional argument. A prompts/get without
// a required argument is refused before the handler runs.
func ExampleServer_AddPrompt() {
	srv := newExampleServer(discover.Capabilities{})

	err := srv.AddPrompt(mrtr.Prompt{
		Name:        "review",
		Description: "Asks for a code review.",
		Arguments: []mrtr.PromptArgument{
			{Name: "language", Required: true},
			{Name: "focus", Description: "What to look at first."},
		},
	}, mrtr.HandlerFunc(func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
		text := "Review this " + req.PromptArguments["language"] + " code."
		if focus := req.PromptArguments["focus"]; focus != "" {
			text += " Look at " + focus + " first."
		}
		return &mrtr.GetPromptResult{
			Messages: []mrtr.PromptMessage{{Role: mrtr.RoleUser, Content: mrtr.Text(text)}},
		}, nil
	}))
	if err != nil {
		log.Fatal(err)
	}

	client := mrtrtest.NewClient(srv)
	get := func(arguments map[string]string) {
		res, err := client.GetPrompt(context.Background(), "review", arguments)
		if err != nil {
			fmt.Println(err)
			return
		}
		for _, m := range res.Messages {
			fmt.Printf("%s: %s\n", m.Role, m.Content.Text)
		}
	}
	get(map[string]string{"language": "Go", "focus": "error handling"})
	get(map[string]string{"focus": "naming"})
	// Output:
	// user: Review this Go code. Look at error handling first.
	// mcp error -32602: Missing required argument: language
}

// A subscriptions/listen stream: the acknowledgement, a tools list change
// the server announces with NotifyListChanged, and the final result when
// the server closes.
func ExampleServer_NotifyListChanged() {
	srv := newExampleServer(discover.Capabilities{Tools: &discover.ListChanged{ListChanged: true}})

	body := `{"jsonrpc":"2.0","id":7,"method":"subscriptions/listen","params":{` + exampleMeta + `,"notifications":{"toolsListChanged":true}}}`
	msg, _, perr := mrtr.ParseMessage([]byte(body))
	if perr != nil {
		log.Fatal(perr)
	}
	notes := make(chan []byte, 4)
	done := make(chan *mrtr.Response)
	go func() {
		// Emit is how a transport streams notifications (SSE on Streamable HTTP).
		done <- srv.Handle(context.Background(), &mrtr.Inbound{Message: msg, Emit: func(n []byte) error {
			notes <- n
			return nil
		}})
	}()

	fmt.Println(string(<-notes)) // the acknowledgement
	srv.NotifyListChanged(true, false, false)
	fmt.Println(string(<-notes))
	if err := srv.Close(); err != nil {
		log.Fatal(err)
	}
	final, err := json.Marshal(<-done)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(string(final))
	// Output:
	// {"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":7},"notifications":{"toolsListChanged":true}}}
	// {"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":7}}}
	// {"jsonrpc":"2.0","id":7,"result":{"resultType":"complete","_meta":{"io.modelcontextprotocol/subscriptionId":7}}}
}
