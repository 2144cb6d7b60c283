// Command greeter is the server of the README's section "A server in a
// few lines", line for line after the imports: greeter_test.go checks
// that the two stay the same, and that it greets as the README says.
package main

import (
	"context"
	"log"

	"github.com/mrtrkit/mrtrkit/discover"
	"github.com/mrtrkit/mrtrkit/mrtr"
	"github.com/mrtrkit/mrtrkit/mrtr/typed"
	"github.com/mrtrkit/mrtrkit/transport/streamablehttp"
)

type Name struct {
	Name string `json:"name" mcp:"title=Your name" validate:"required,max=100"`
}

var askName = typed.MustForm[Name]("What is your name?")

func greet(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
	name, action, err := askName.Read(req, "name")
	switch {
	case err != nil && req.Round < 3:
		return askName.Reask("name", err), nil // the same form, saying what was wrong
	case err != nil:
		return nil, err // -32602, naming each problem
	case action == typed.Accepted:
		return mrtr.TextResult("Hello, " + name.Name + "!"), nil
	case action == typed.Declined:
		return mrtr.TextResult("Hello, whoever you are! (You chose not to give your name.)"), nil
	case action == typed.Cancelled:
		return mrtr.TextResult("Greeting cancelled."), nil
	}
	return askName.Ask("name"), nil // first call, or no answer yet
}

func main() {
	srv, err := mrtr.NewServer(discover.Description{
		Server: discover.Implementation{Name: "greeter", Version: "1.0.0"},
	})
	if err != nil {
		log.Fatal(err)
	}
	if err := srv.AddTool(mrtr.Tool{Name: "greet", Description: "Greets the user by name"}, mrtr.HandlerFunc(greet)); err != nil {
		log.Fatal(err)
	}
	h, err := streamablehttp.New(srv)
	if err != nil {
		log.Fatal(err)
	}
	log.Fatal(streamablehttp.NewHTTPServer("127.0.0.1:8080", h).ListenAndServe())
}
