package client_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os/exec"

	"github.com/mrtrkit/mrtrkit/client"
	"github.com/mrtrkit/mrtrkit/discover"
	"github.com/mrtrkit/mrtrkit/mrtr"
	"github.com/mrtrkit/mrtrkit/transport/streamablehttp"
)

// greeter is a server that asks for the user's name before it greets.
func greeter() *mrtr.Server {
	srv, _ := mrtr.NewServer(discover.Description{Server: discover.Implementation{Name: "greeter", Version: "1.0.0"}})
	_ = srv.AddTool(mrtr.Tool{Name: "greet"}, mrtr.HandlerFunc(func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
		if a, ok := req.Responses.Elicitation("name"); ok && a.Accepted() {
			return mrtr.TextResult("Hello, " + a.Content["name"].(string) + "!"), nil
		}
		return mrtr.Ask("name", &mrtr.ElicitRequest{Message: "Your name?", RequestedSchema: &mrtr.ElicitSchema{
			Type: "object", Properties: map[string]json.RawMessage{"name": json.RawMessage(`{"type":"string"}`)}}}), nil
	}))
	return srv
}

// askName answers elicitations; the same function serves
// mrtrtest.OnElicitation in tests.
func askName(ctx context.Context, r *mrtr.ElicitRequest) (*mrtr.ElicitResult, error) {
	return &mrtr.ElicitResult{Action: mrtr.Accepted, Content: map[string]any{"name": "Ada"}}, nil
}

// Connect to a server over Streamable HTTP and call a tool that asks a
// question first: the client answers the round and retries by itself.
func ExampleConnect() {
	h, _ := streamablehttp.New(greeter())
	ts := httptest.NewServer(h)
	defer ts.Close()

	ctx := context.Background()
	c, err := client.Connect(ctx, client.HTTP(ts.URL+"/mcp"), client.OnElicitation(askName))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	res, err := c.CallTool(ctx, "greet", nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(c.Version(), res.Text(), res.Rounds)
	// Output: 2026-07-28 Hello, Ada! 1
}

// Launch a server as a subprocess and speak to it over stdio; Close shuts
// it down.
func ExampleCommand() {
	ctx := context.Background()
	c, err := client.Connect(ctx, client.Command(exec.Command("my-mcp-server", "--stdio")))
	if err != nil {
		// The error names the command, the exit code or signal, and the
		// end of the server's stderr.
		fmt.Println("launch failed")
		return
	}
	defer c.Close()
	tools, _ := c.ListTools(ctx)
	fmt.Println(len(tools))
	// Output: launch failed
}

// Errors name the server, the method, the round and what the server
// said; CodeOf gives the JSON-RPC code.
func ExampleCodeOf() {
	h, _ := streamablehttp.New(greeter())
	ts := httptest.NewServer(h)
	defer ts.Close()
	ctx := context.Background()
	c, _ := client.Connect(ctx, client.HTTP(ts.URL+"/mcp"))
	defer c.Close()
	_, err := c.CallTool(ctx, "missing", nil)
	fmt.Println(client.CodeOf(err))
	// Output: -32602
}
