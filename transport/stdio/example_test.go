package stdio_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"log/slog"
	"slices"
	"strings"

	"github.com/mrtrkit/mrtrkit/discover"
	"github.com/mrtrkit/mrtrkit/mrtr"
	"github.com/mrtrkit/mrtrkit/state"
	"github.com/mrtrkit/mrtrkit/transport/stdio"
)

// A server with one tool, fed three lines (a call, a line that is not
// JSON, a call of an unknown tool) as a client would write them to its
// stdin. A program serves its real stdin and stdout with ServeStdio.
func ExampleServe() {
	// Every process must seal requestState with the same keys as the
	// others serving the same clients; a real server loads them from
	// configuration (see package state).
	ring, err := state.NewKeyRing(state.Key{ID: "k1", Secret: []byte("an example secret of 32+ bytes!!")})
	if err != nil {
		log.Fatal(err)
	}
	codec, err := state.NewAEAD(ring)
	if err != nil {
		log.Fatal(err)
	}
	srv, err := mrtr.NewServer(discover.Description{
		Server: discover.Implementation{Name: "greeter", Version: "1.0.0"},
	}, mrtr.WithCodec(codec))
	if err != nil {
		log.Fatal(err)
	}
	err = srv.AddTool(mrtr.Tool{
		Name:        "greet",
		InputSchema: []byte(`{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`),
	}, mrtr.HandlerFunc(func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
		var args struct{ Name string }
		if err := json.Unmarshal(req.Arguments, &args); err != nil {
			return mrtr.ErrorResult("name must be a string"), nil
		}
		return mrtr.TextResult("Hello, " + args.Name + "!"), nil
	}))
	if err != nil {
		log.Fatal(err)
	}

	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	in := strings.NewReader(
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"greet","arguments":{"name":"Ada"},` + meta + "}}\n" +
			"not json\n" +
			`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"nope",` + meta + "}}\n")
	var out strings.Builder
	// The input's end (EOF) ends Serve, once every request is answered.
	err = stdio.Serve(context.Background(), srv, in, &out, stdio.WithLogger(slog.New(slog.DiscardHandler)))
	fmt.Println("Serve:", err)

	// Requests run concurrently, so their answers come in the order they
	// finish; sorted here for a stable output.
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	slices.Sort(lines)
	for _, l := range lines {
		fmt.Println(l)
	}
	// Output:
	// Serve: <nil>
	// {"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","content":[{"type":"text","text":"Hello, Ada!"}],"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"greeter","version":"1.0.0"}}}}
	// {"jsonrpc":"2.0","id":2,"error":{"code":-32602,"message":"Unknown tool: nope"}}
	// {"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error: body is not valid JSON"}}
}
