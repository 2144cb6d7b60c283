package main

import (
	"context"
	"errors"
	"flag"
	"log"

	"github.com/mrtrkit/mrtrkit/mrtr"
	"github.com/mrtrkit/mrtrkit/mrtr/typed"
	"github.com/mrtrkit/mrtrkit/transport/stdio"
	"github.com/mrtrkit/mrtrkit/transport/streamablehttp"
)

// SumIn is what sum adds up. The tool's inputSchema is generated from it,
// and arguments that do not fit it are refused before sum runs.
type SumIn struct {
	A float64 `json:"a" jsonschema:"the first number"`
	B float64 `json:"b" jsonschema:"the second number"`
}

// SumOut is sum's answer: the result's structuredContent (and its text).
type SumOut struct {
	Total float64 `json:"total"`
}

// sum is a typed tool: the types of its arguments and result are inferred.
func sum(ctx context.Context, req *mrtr.Request, in SumIn) (SumOut, error) {
	return SumOut{Total: in.A + in.B}, nil
}

// Name is the form greet asks the user to fill in.
type Name struct {
	Name string `json:"name" mcp:"title=Your name" validate:"required,max=100"`
}

var askName = typed.MustForm[Name]("name", "What is your name?")

// greet asks the user's name. Until the client brings the answer, Ask
// returns an error that greet returns as is: the client is asked, and greet
// runs again from the top with the answer.
func greet(ctx context.Context, req *mrtr.Request, _ struct{}) (*mrtr.CallToolResult, error) {
	name, action, err := askName.Ask(ctx, req)
	if err != nil {
		return nil, err
	}
	if action != mrtr.Accepted { // mrtr.Declined or mrtr.Cancelled: values, not errors
		return mrtr.TextResult("Hello, whoever you are!"), nil
	}
	return mrtr.TextResult("Hello, " + name.Name + "!"), nil
}

// haiku asks the client's model for a haiku, in the same straight-line way.
func haiku(ctx context.Context, req *mrtr.Request, _ struct{}) (*mrtr.CallToolResult, error) {
	res, err := mrtr.Sample(ctx, req, "haiku", &mrtr.SamplingRequest{
		Messages: []mrtr.SamplingMessage{mrtr.UserText("Write a haiku about autumn.")}, MaxTokens: 100})
	if err != nil {
		return nil, err
	}
	return mrtr.TextResult(res.Text()), nil
}

// about serves the resource: a plain mrtr.Handler returns the whole result.
func about(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
	text := mrtr.TextResource(req.URI, "text/plain", "The tour of mrtrkit: three tools, this resource and a prompt.")
	return &mrtr.ReadResourceResult{Contents: []mrtr.ResourceContents{text}}, nil
}

// review serves the prompt; its argument is required, so it is there.
func review(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
	text := mrtr.Text("Please review this Go code:\n\n" + req.PromptArguments["code"])
	return &mrtr.GetPromptResult{Messages: []mrtr.PromptMessage{{Role: mrtr.RoleUser, Content: text}}}, nil
}

// register adds the tools, the resource and the prompt to srv.
func register(srv *mrtr.Server) error {
	return errors.Join(
		typed.AddTool(srv, mrtr.Tool{Name: "sum", Description: "Adds two numbers"}, sum),
		typed.AddTool(srv, mrtr.Tool{Name: "greet", Description: "Greets the user by name"}, greet),
		typed.AddTool(srv, mrtr.Tool{Name: "haiku", Description: "Writes a haiku about autumn"}, haiku),
		srv.AddResource(mrtr.Resource{URI: "tour://about", Name: "about", MIMEType: "text/plain"}, mrtr.HandlerFunc(about)),
		srv.AddPrompt(mrtr.Prompt{Name: "review", Description: "Asks for a review of some Go code",
			Arguments: []mrtr.PromptArgument{{Name: "code", Required: true}}}, mrtr.HandlerFunc(review)))
}

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "serve HTTP on this address")
	onStdio := flag.Bool("stdio", false, "serve on stdin and stdout instead of HTTP")
	flag.Parse()
	srv, err := mrtr.New("tour", "1.0.0") // MCP 2026-07-28, and 2025-11-25 and 2025-06-18 through the bridge
	if err != nil {
		log.Fatal(err)
	}
	h, err := streamablehttp.New(srv)
	if err = errors.Join(err, register(srv)); err != nil {
		log.Fatal(err)
	}
	if !*onStdio {
		log.Fatal(streamablehttp.NewHTTPServer(*addr, h).ListenAndServe())
	}
	if err := stdio.ServeStdio(context.Background(), srv); err != nil { // nil once stdin ends
		log.Fatal(err)
	}
}
