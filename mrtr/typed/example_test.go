package typed_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"

	"github.com/mrtrkit/mrtrkit/discover"
	"github.com/mrtrkit/mrtrkit/mrtr"
	"github.com/mrtrkit/mrtrkit/mrtr/mrtrtest"
	"github.com/mrtrkit/mrtrkit/mrtr/typed"
	"github.com/mrtrkit/mrtrkit/state"
)

type WeatherIn struct {
	City string `json:"city" jsonschema:"the city to report on" validate:"min=2"`
	Days int    `json:"days,omitempty" jsonschema:"how many days ahead, 1 to 7" validate:"omitempty,gte=1,lte=7"`
}

type WeatherOut struct {
	City     string `json:"city"`
	Forecast string `json:"forecast"`
}

func forecast(ctx context.Context, req *mrtr.Request, in WeatherIn) (WeatherOut, error) {
	return WeatherOut{City: in.City, Forecast: "sunny"}, nil
}

// A typed tool: schemas come from the types, arguments are checked before
// the function runs, and the output is sent as structured content.
func ExampleAddTool() {
	srv := exampleServer("weather")
	err := typed.AddTool(srv, mrtr.Tool{Name: "forecast", Description: "Forecasts the weather."}, forecast)
	if err != nil {
		log.Fatal(err)
	}

	c := mrtrtest.NewClient(srv)
	for _, args := range []string{`{"city":"Oslo"}`, `{"city":"Oslo","days":30}`, `{"city":5}`} {
		res, err := c.CallTool(context.Background(), "forecast", json.RawMessage(args))
		if err != nil {
			log.Fatal(err)
		}
		if res.IsError {
			fmt.Printf("isError: %q\n", res.Text())
			continue
		}
		fmt.Println("structuredContent:", string(res.StructuredContent))
	}
	// Output:
	// structuredContent: {"city":"Oslo","forecast":"sunny"}
	// isError: "Invalid arguments:\n- days must be at most 7 (rule \"lte=7\")"
	// isError: "Invalid arguments:\n- city must be a string"
}

// The schemas NewTool generates: the input schema carries the rules of
// the validate tags (city's min=2 as minLength; days, which omitempty lets
// be 0, as 0 or 1 to 7), the output schema only the shape of the type.
func ExampleNewTool() {
	tool, _, err := typed.NewTool(mrtr.Tool{Name: "forecast"}, forecast)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(string(tool.InputSchema))
	fmt.Println(string(tool.OutputSchema))
	// Output:
	// {"type":"object","properties":{"city":{"type":"string","description":"the city to report on","minLength":2},"days":{"type":"integer","description":"how many days ahead, 1 to 7","anyOf":[{"const":0},{"minimum":1,"maximum":7}]}},"required":["city"],"additionalProperties":false}
	// {"type":"object","properties":{"city":{"type":"string"},"forecast":{"type":"string"}},"required":["city","forecast"],"additionalProperties":false}
}

// A typed function of two rounds, in straight-line code: it asks the user
// for the city when the arguments leave it out. The first run ends with
// the question (Ask's error, returned); the client answers, and the
// function runs again from the top, where Ask returns the answer.
func ExampleForm_Ask() {
	type In struct {
		City string `json:"city,omitempty"`
	}
	type CityForm struct {
		City string `json:"city" mcp:"title=City" validate:"min=2"`
	}
	askCity := typed.MustForm[CityForm]("city", "Which city?")
	h := func(ctx context.Context, req *mrtr.Request, in In) (WeatherOut, error) {
		if in.City != "" {
			return WeatherOut{City: in.City, Forecast: "sunny"}, nil
		}
		form, action, err := askCity.Ask(ctx, req)
		if err != nil {
			return WeatherOut{}, err
		}
		if action != mrtr.Accepted {
			return WeatherOut{}, typed.Errorf("no city, no forecast")
		}
		return WeatherOut{City: form.City, Forecast: "sunny"}, nil
	}
	srv := exampleServer("weather")
	if err := typed.AddTool(srv, mrtr.Tool{Name: "forecast"}, h); err != nil {
		log.Fatal(err)
	}

	c := mrtrtest.NewClient(srv, mrtrtest.OnElicitation(func(ctx context.Context, r *mrtr.ElicitRequest) (*mrtr.ElicitResult, error) {
		schema, _ := json.Marshal(r.RequestedSchema)
		fmt.Println("asked:", r.Message, string(schema))
		return &mrtr.ElicitResult{Action: "accept", Content: map[string]any{"city": "Bergen"}}, nil
	}))
	res, err := c.CallTool(context.Background(), "forecast", nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("rounds:", res.Rounds)
	fmt.Println("structuredContent:", string(res.StructuredContent))
	// Output:
	// asked: Which city? {"type":"object","properties":{"city":{"type":"string","title":"City","minLength":2}},"required":["city"]}
	// rounds: 1
	// structuredContent: {"city":"Bergen","forecast":"sunny"}
}

// A form asked in straight-line code: the answer is decoded and checked,
// a bad answer is asked again saying what was wrong, and a declined form
// is a value, not an error: the call ends with a result that says so.
func ExampleForm() {
	type Signup struct {
		Email string `json:"email" mcp:"title=Email address" validate:"email"`
		Plan  string `json:"plan" mcp:"title=Plan,default=free,titles=free:Free|pro:Pro, billed monthly" validate:"oneof=free pro"`
	}
	signup := typed.MustForm[Signup]("signup", "Please sign up")
	srv := exampleServer("signup")
	typed.AddTool(srv, mrtr.Tool{Name: "signup"}, func(ctx context.Context, req *mrtr.Request, _ struct{}) (*mrtr.CallToolResult, error) {
		s, action, err := signup.Ask(ctx, req)
		switch {
		case err != nil:
			return nil, err
		case action == mrtr.Declined:
			return mrtr.TextResult("Not signed up: you declined."), nil
		case action == mrtr.Cancelled:
			return mrtr.TextResult("Sign-up cancelled."), nil
		}
		return mrtr.TextResult("Signed up " + s.Email + " for " + s.Plan + "."), nil
	})

	answers := []map[string]any{{"email": "ada", "plan": "gold"}, {"email": "ada@example.com", "plan": "pro"}}
	c := mrtrtest.NewClient(srv, mrtrtest.OnElicitation(func(ctx context.Context, r *mrtr.ElicitRequest) (*mrtr.ElicitResult, error) {
		fmt.Printf("asked: %q\n", r.Message)
		a := answers[0]
		answers = answers[1:]
		return &mrtr.ElicitResult{Action: "accept", Content: a}, nil
	}))
	res, err := c.CallTool(context.Background(), "signup", nil)
	if err != nil {
		log.Fatal(err)
	}
	schema, _ := json.Marshal(signup.Schema())
	fmt.Println(string(schema))
	fmt.Println(res.Text())
	// Output:
	// asked: "Please sign up"
	// asked: "Please sign up\n\nYour last answer could not be used: Plan must be one of: free, pro; Email address must be a valid email."
	// {"type":"object","properties":{"email":{"type":"string","title":"Email address","format":"email"},"plan":{"type":"string","title":"Plan","oneOf":[{"const":"free","title":"Free"},{"const":"pro","title":"Pro, billed monthly"}],"default":"free"}},"required":["email","plan"]}
	// Signed up ada@example.com for pro.
}

// A form asked with a message built from the call's arguments: the copy
// WithMessage returns shares the form's schema, and the form keeps its
// own message.
func ExampleForm_WithMessage() {
	type In struct {
		Team string `json:"team"`
	}
	type Invitee struct {
		Email string `json:"email" mcp:"title=Email address" validate:"email"`
	}
	invite := typed.MustForm[Invitee]("invitee", "Whom should we invite?")
	h := func(ctx context.Context, req *mrtr.Request, in In) (*mrtr.CallToolResult, error) {
		who, action, err := invite.WithMessage("Whom should we invite to "+in.Team+"?").Ask(ctx, req)
		switch {
		case err != nil:
			return nil, err
		case action != mrtr.Accepted:
			return mrtr.TextResult("Nobody invited."), nil
		}
		return mrtr.TextResult("Invited " + who.Email + " to " + in.Team + "."), nil
	}
	srv := exampleServer("invite")
	if err := typed.AddTool(srv, mrtr.Tool{Name: "invite"}, h); err != nil {
		log.Fatal(err)
	}

	c := mrtrtest.NewClient(srv, mrtrtest.OnElicitation(func(ctx context.Context, r *mrtr.ElicitRequest) (*mrtr.ElicitResult, error) {
		fmt.Printf("asked: %q\n", r.Message)
		return &mrtr.ElicitResult{Action: "accept", Content: map[string]any{"email": "ada@example.com"}}, nil
	}))
	res, err := c.CallTool(context.Background(), "invite", map[string]any{"team": "blue"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Text())
	fmt.Println("the form's own message:", invite.Message())
	// Output:
	// asked: "Whom should we invite to blue?"
	// Invited ada@example.com to blue.
	// the form's own message: Whom should we invite?
}

// exampleServer returns a Server that seals requestState with a fresh key.
func exampleServer(name string) *mrtr.Server {
	ring, err := state.GenerateKeyRing()
	if err != nil {
		log.Fatal(err)
	}
	codec, err := state.NewAEAD(ring)
	if err != nil {
		log.Fatal(err)
	}
	srv, err := mrtr.NewServer(discover.Description{
		Server: discover.Implementation{Name: name, Version: "1.0.0"}, OmitServerInfo: true,
	}, mrtr.WithCodec(codec))
	if err != nil {
		log.Fatal(err)
	}
	return srv
}
