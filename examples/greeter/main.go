// Command greeter is the server of the README's section "A server in a
// few lines", line for line after the imports: greeter_test.go checks
// that the two stay the same, and that it greets as the README says.
package main

import (
	"context"
	"log"

	"github.com/mrtrkit/mrtrkit/mrtr"
	"github.com/mrtrkit/mrtrkit/mrtr/typed"
	"github.com/mrtrkit/mrtrkit/transport/streamablehttp"
)

type Name struct {
	Name string `json:"name" mcp:"title=Your name" validate:"required,max=100"`
}

var askName = typed.MustForm[Name]("name", "What is your name?")

func greet(ctx context.Context, req *mrtr.Request, _ struct{}) (*mrtr.CallToolResult, error) {
	name, action, err := askName.Ask(ctx, req) // the answer, or the question to return
	switch {
	case err != nil:
		return nil, err
	case action == mrtr.Declined:
		return mrtr.TextResult("Hello, whoever you are! (You chose not to give your name.)"), nil
	case action == mrtr.Cancelled:
		return mrtr.TextResult("Greeting cancelled."), nil
	}
	return mrtr.TextResult("Hello, " + name.Name + "!"), nil
}

func main() {
	srv, err := mrtr.New("greeter", "1.0.0")
	if err != nil {
		log.Fatal(err)
	}
	if err := typed.AddTool(srv, mrtr.Tool{Name: "greet", Description: "Greets the user by name"}, greet); err != nil {
		log.Fatal(err)
	}
	h, err := streamablehttp.New(srv)
	if err != nil {
		log.Fatal(err)
	}
	log.Fatal(streamablehttp.NewHTTPServer("127.0.0.1:8080", h).ListenAndServe())
}
