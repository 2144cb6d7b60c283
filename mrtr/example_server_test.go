package mrtr_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"

	"github.com/mrtrkit/mrtrkit/discover"
	"github.com/mrtrkit/mrtrkit/mrtr"
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
			return nil, mrtr.ErrResourceNotFound(req.URI)
		}
		return &mrtr.ReadResourceResult{Contents: []mrtr.ResourceContents{
			mrtr.TextResource(req.URI, "text/plain", text),
		}}, nil
	})
	err = srv.AddResourceTemplate(mrtr.ResourceTemplate{URITemplate: "notes://{id}", Name: "note", MIMEType: "text/plain"}, note)
	if err != nil {
		log.Fatal(err)
	}

	// read serves one resources/read as a transport would.
	read := func(uri string) {
		body := `{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{` + exampleMeta + `,"uri":"` + uri + `"}}`
		msg, _, perr := mrtr.ParseMessage([]byte(body))
		if perr != nil {
			log.Fatal(perr)
		}
		resp := srv.Handle(context.Background(), &mrtr.Inbound{Message: msg})
		if resp.Error != nil {
			fmt.Printf("%s: %v\n", uri, resp.Error)
			return
		}
		var result struct {
			Contents []struct {
				Text string `json:"text"`
			} `json:"contents"`
		}
		if err := json.Unmarshal(resp.Result, &result); err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%s: %s\n", uri, result.Contents[0].Text)
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

	// get serves one prompts/get as a transport would.
	get := func(arguments string) {
		body := `{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{` + exampleMeta + `,"name":"review","arguments":` + arguments + `}}`
		msg, _, perr := mrtr.ParseMessage([]byte(body))
		if perr != nil {
			log.Fatal(perr)
		}
		resp := srv.Handle(context.Background(), &mrtr.Inbound{Message: msg})
		if resp.Error != nil {
			fmt.Println(resp.Error)
			return
		}
		fmt.Println(string(resp.Result))
	}
	get(`{"language":"Go","focus":"error handling"}`)
	get(`{"focus":"naming"}`)
	// Output:
	// {"resultType":"complete","messages":[{"role":"user","content":{"type":"text","text":"Review this Go code. Look at error handling first."}}]}
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
