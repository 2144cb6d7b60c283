package typed_test

import (
	"context"
	"fmt"
	"log"

	"github.com/mrtrkit/mrtrkit/discover"
	"github.com/mrtrkit/mrtrkit/mrtr"
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

// A typed tool: schemas come from the types, arguments are checked before
// the function runs, and the output is sent as structured content.
func ExampleAddTool() {
	ring, err := state.GenerateKeyRing()
	if err != nil {
		log.Fatal(err)
	}
	codec, err := state.NewAEAD(ring)
	if err != nil {
		log.Fatal(err)
	}
	srv, err := mrtr.NewServer(discover.Description{
		Server: discover.Implementation{Name: "weather", Version: "1.0.0"}, OmitServerInfo: true,
	}, mrtr.WithCodec(codec))
	if err != nil {
		log.Fatal(err)
	}

	err = typed.AddTool(srv, mrtr.Tool{Name: "forecast", Description: "Forecasts the weather."},
		func(ctx context.Context, req *mrtr.Request, in WeatherIn) (WeatherOut, error) {
			return WeatherOut{City: in.City, Forecast: "sunny"}, nil
		})
	if err != nil {
		log.Fatal(err)
	}

	fmt.Println(send(srv, `{"name":"forecast","arguments":{"city":"Oslo"}}`))
	fmt.Println(send(srv, `{"name":"forecast","arguments":{"city":"Oslo","days":30}}`))
	fmt.Println(send(srv, `{"name":"forecast","arguments":{"city":5}}`))
	// Output:
	// {"resultType":"complete","content":[{"type":"text","text":"{\"city\":\"Oslo\",\"forecast\":\"sunny\"}"}],"structuredContent":{"city":"Oslo","forecast":"sunny"}}
	// {"resultType":"complete","content":[{"type":"text","text":"Invalid arguments:\n- days must be at most 7 (rule \"lte=7\")"}],"isError":true}
	// {"resultType":"complete","content":[{"type":"text","text":"Invalid arguments:\n- city must be a string"}],"isError":true}
}

// The schemas NewTool generates.
func ExampleNewTool() {
	tool, _, err := typed.NewTool(mrtr.Tool{Name: "forecast"}, typed.Func[WeatherIn, WeatherOut](
		func(ctx context.Context, req *mrtr.Request, in WeatherIn) (WeatherOut, error) {
			return WeatherOut{City: in.City, Forecast: "sunny"}, nil
		}))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(string(tool.InputSchema))
	fmt.Println(string(tool.OutputSchema))
	// Output:
	// {"type":"object","properties":{"city":{"type":"string","description":"the city to report on"},"days":{"type":"integer","description":"how many days ahead, 1 to 7"}},"required":["city"],"additionalProperties":false}
	// {"type":"object","properties":{"city":{"type":"string"},"forecast":{"type":"string"}},"required":["city","forecast"],"additionalProperties":false}
}

// send calls tools/call as a 2026-07-28 client would and returns the result
// or the error.
func send(srv *mrtr.Server, params string) string {
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":` + params[:len(params)-1] +
		`,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	msg, _, perr := mrtr.ParseMessage([]byte(body))
	if perr != nil {
		return perr.Error()
	}
	resp := srv.Handle(context.Background(), &mrtr.Inbound{Message: msg})
	if resp.Error != nil {
		return resp.Error.Error()
	}
	return string(resp.Result)
}
