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
	err := typed.AddTool(srv, mrtr.Tool{Name: "forecast", Description: "Forecasts the weather."}, typed.Func(forecast))
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

// The schemas NewTool generates.
func ExampleNewTool() {
	tool, _, err := typed.NewTool(mrtr.Tool{Name: "forecast"}, typed.Func(forecast))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(string(tool.InputSchema))
	fmt.Println(string(tool.OutputSchema))
	// Output:
	// {"type":"object","properties":{"city":{"type":"string","description":"the city to report on"},"days":{"type":"integer","description":"how many days ahead, 1 to 7"}},"required":["city"],"additionalProperties":false}
	// {"type":"object","properties":{"city":{"type":"string"},"forecast":{"type":"string"}},"required":["city","forecast"],"additionalProperties":false}
}

// A Handler of two rounds: it asks the user for the city when the
// arguments leave it out, and completes with the forecast on the retry.
// The client here answers the question from a Go function.
func ExampleNeedInput() {
	type In struct {
		City string `json:"city,omitempty"`
	}
	h := typed.HandlerFunc[In, WeatherOut](func(ctx context.Context, req *mrtr.Request, in In) (typed.Outcome[WeatherOut], error) {
		if in.City != "" {
			return typed.Done(WeatherOut{City: in.City, Forecast: "sunny"}), nil
		}
		if ans, ok := req.Responses.Elicitation("city"); ok && ans.Accepted() {
			var form struct {
				City string `json:"city"`
			}
			if err := json.Unmarshal(ans.ContentJSON(), &form); err != nil {
				return typed.Outcome[WeatherOut]{}, err
			}
			return typed.Done(WeatherOut{City: form.City, Forecast: "sunny"}), nil
		}
		return typed.NeedInput[WeatherOut](mrtr.Ask("city", &mrtr.ElicitRequest{
			Message: "Which city?",
			RequestedSchema: &mrtr.ElicitSchema{Type: "object", Required: []string{"city"},
				Properties: map[string]json.RawMessage{"city": json.RawMessage(`{"type":"string"}`)}},
		})), nil
	})
	srv := exampleServer("weather")
	if err := typed.AddTool(srv, mrtr.Tool{Name: "forecast"}, h); err != nil {
		log.Fatal(err)
	}

	c := mrtrtest.NewClient(srv, mrtrtest.OnElicitation(func(ctx context.Context, r *mrtr.ElicitRequest) (*mrtr.ElicitResult, error) {
		fmt.Println("asked:", r.Message)
		return &mrtr.ElicitResult{Action: "accept", Content: map[string]any{"city": "Bergen"}}, nil
	}))
	res, err := c.CallTool(context.Background(), "forecast", nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("rounds:", res.Rounds)
	fmt.Println("structuredContent:", string(res.StructuredContent))
	// Output:
	// asked: Which city?
	// rounds: 1
	// structuredContent: {"city":"Bergen","forecast":"sunny"}
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
