package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http/httptest"
	"os/exec"
	"time"

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

// A sampling policy answers a server's sampling requests: here the
// request carries an image, so only the model that reads images may
// answer, whatever the server's hint says.
func ExampleSamplingPolicy() {
	generate := func(ctx context.Context, req *mrtr.SamplingRequest, beat func(int)) (*mrtr.SamplingResult, error) {
		beat(3)
		return &mrtr.SamplingResult{Role: mrtr.RoleAssistant, Content: []mrtr.SamplingContent{{Type: "text", Text: "a cat"}}}, nil
	}
	policy := &client.SamplingPolicy{
		Server:   "photos",
		Decision: client.Allow,
		Models: []client.Model{
			{Name: "fast-text", Inputs: []string{"text"}, Generate: generate},
			{Name: "vision", Inputs: []string{"text", "image"}, Generate: generate},
		},
	}
	req := &mrtr.SamplingRequest{MaxTokens: 50,
		ModelPreferences: &mrtr.ModelPreferences{Hints: []mrtr.ModelHint{{Name: "fast"}}},
		Messages: []mrtr.SamplingMessage{{Role: mrtr.RoleUser, Content: []mrtr.SamplingContent{
			{Type: "text", Text: "What is this?"}, {Type: "image", Data: "iVBORw0KGgo=", MIMEType: "image/png"}}}}}
	res, err := policy.Func()(context.Background(), req)
	fmt.Println(res.Model, res.Text(), err)
	// Output: vision a cat <nil>
}

// Listen delivers a server's change notifications until the context
// ends; a broken stream is opened again.
func ExampleClient_Listen() {
	srv, _ := mrtr.NewServer(discover.Description{
		Server:       discover.Implementation{Name: "tools", Version: "1.0.0"},
		Capabilities: discover.Capabilities{Tools: &discover.ListChanged{ListChanged: true}},
	})
	h, _ := streamablehttp.New(srv)
	ts := httptest.NewServer(h)
	defer ts.Close()
	c, _ := client.Connect(context.Background(), client.HTTP(ts.URL+"/mcp"))
	defer c.Close()

	ctx, cancel := context.WithCancel(context.Background())
	_ = c.Listen(ctx, client.ListenFilter{ToolsListChanged: true}, func(n client.Notification) {
		fmt.Println(n.Method)
		switch n.Method {
		case "notifications/subscriptions/acknowledged":
			_ = srv.AddTool(mrtr.Tool{Name: "new"}, mrtr.HandlerFunc(func(context.Context, *mrtr.Request) (mrtr.Result, error) {
				return mrtr.TextResult("hi"), nil
			}))
		case "notifications/tools/list_changed":
			cancel()
		}
	})
	// Output:
	// notifications/subscriptions/acknowledged
	// notifications/tools/list_changed
}

// The OAuth authorizer runs the MCP authorization flow when the server
// answers 401; Browser sends the user to the authorization server and
// returns the URL it redirected back to.
func ExampleNewOAuth() {
	auth := client.NewOAuth(client.OAuthConfig{
		RedirectURL: "http://127.0.0.1:8765/callback",
		ClientName:  "my-agent",
		Browser: func(ctx context.Context, authURL string) (string, error) {
			// Open authURL in the user's browser and wait for the
			// redirect on the loopback listener (not shown).
			return "", fmt.Errorf("no browser in this example")
		},
	})
	_, err := client.Connect(context.Background(), client.HTTP("https://mcp.example.com/mcp", client.WithAuthorizer(auth)))
	_ = err
}

// janitor is a server with the Tasks extension whose tool delete runs as
// a task when the request declares the extension, and asks the user to
// confirm inside the task.
func janitor() *mrtr.Server {
	srv, _ := mrtr.NewServer(discover.Description{Server: discover.Implementation{Name: "janitor", Version: "1.0.0"}},
		mrtr.WithTasks(mrtr.TaskPollInterval(20*time.Millisecond)))
	_ = srv.AddTool(mrtr.Tool{Name: "delete"}, mrtr.HandlerFunc(func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
		var a struct{ File string }
		_ = json.Unmarshal(req.Arguments, &a)
		ans, err := mrtr.Elicit(ctx, req, "sure", &mrtr.ElicitRequest{Message: "Delete " + a.File + "?", RequestedSchema: &mrtr.ElicitSchema{
			Type: "object", Properties: map[string]json.RawMessage{"sure": json.RawMessage(`{"type":"boolean"}`)}}})
		if err != nil {
			return nil, err
		}
		if sure, _ := ans.Content["sure"].(bool); !ans.Accepted() || !sure {
			return mrtr.TextResult("kept " + a.File), nil
		}
		return mrtr.TextResult("deleted " + a.File), nil
	}), mrtr.TaskSupport(mrtr.TaskOptional))
	return srv
}

// confirm answers every elicitation with sure: true.
func confirm(ctx context.Context, r *mrtr.ElicitRequest) (*mrtr.ElicitResult, error) {
	return &mrtr.ElicitResult{Action: mrtr.Accepted, Content: map[string]any{"sure": true}}, nil
}

// CallTool with AsTask runs the call as a task and follows it to its
// result: it polls at the server's interval and answers the question the
// task asks with the OnElicitation function.
func ExampleAsTask() {
	h, _ := streamablehttp.New(janitor())
	ts := httptest.NewServer(h)
	defer ts.Close()
	ctx := context.Background()
	c, err := client.Connect(ctx, client.HTTP(ts.URL+"/mcp"), client.OnElicitation(confirm))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()

	res, err := c.CallTool(ctx, "delete", map[string]any{"file": "notes.txt"}, client.AsTask())
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Text(), res.Rounds)
	// Output: deleted notes.txt 1
}

// CreateTask hands back the task itself, whose id outlives the call:
// AwaitTask follows it to its result, CancelTask stops it.
func ExampleClient_CreateTask() {
	h, _ := streamablehttp.New(janitor())
	ts := httptest.NewServer(h)
	defer ts.Close()
	ctx := context.Background()
	c, err := client.Connect(ctx, client.HTTP(ts.URL+"/mcp"), client.OnElicitation(confirm))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()

	task, err := c.CreateTask(ctx, "delete", map[string]any{"file": "a.txt"})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(task.Status, task.PollInterval)
	res, err := c.AwaitTask(ctx, task)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Text())

	task, _ = c.CreateTask(ctx, "delete", map[string]any{"file": "b.txt"})
	_ = c.CancelTask(ctx, task.ID)
	_, err = c.AwaitTask(ctx, task)
	fmt.Println(errors.Is(err, client.ErrTaskCancelled))
	// Output:
	// working 20ms
	// deleted a.txt
	// true
}
