package streamablehttp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/mrtrkit/mrtrkit/discover"
	"github.com/mrtrkit/mrtrkit/mrtr"
	"github.com/mrtrkit/mrtrkit/state"
	"github.com/mrtrkit/mrtrkit/transport/streamablehttp"
)

// A minimal server with one tool, called once over HTTP.
func ExampleNew() {
	// Every replica must seal requestState with the same keys; a real
	// server loads them from configuration (see package state).
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
		Description: "Greets someone by name.",
		InputSchema: []byte(`{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`),
	}, mrtr.HandlerFunc(func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
		var args struct{ Name string }
		if err := json.Unmarshal(req.Arguments, &args); err != nil {
			return mrtr.ErrorResult("name must be a string"), nil
		}
		return &mrtr.CallToolResult{Content: []mrtr.Content{mrtr.Text("Hello, " + args.Name + "!")}}, nil
	}))
	if err != nil {
		log.Fatal(err)
	}

	h, err := streamablehttp.New(srv)
	if err != nil {
		log.Fatal(err)
	}
	ts := httptest.NewServer(h) // in production: streamablehttp.NewHTTPServer(addr, h).ListenAndServe()
	defer ts.Close()

	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"greet","arguments":{"name":"Ada"},` +
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	req, _ := http.NewRequest(http.MethodPost, ts.URL+"/mcp", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "tools/call")
	req.Header.Set("Mcp-Name", streamablehttp.EncodeHeaderValue("greet"))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		log.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	fmt.Println(resp.StatusCode, resp.Header.Get("Content-Type"))
	fmt.Println(string(out))
	// Output:
	// 200 application/json
	// {"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","content":[{"type":"text","text":"Hello, Ada!"}],"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"greeter","version":"1.0.0"}}}}
}

// Header values that are not plain ASCII travel base64-encoded.
func ExampleEncodeHeaderValue() {
	fmt.Println(streamablehttp.EncodeHeaderValue("us-west"))
	fmt.Println(streamablehttp.EncodeHeaderValue("Zürich"))
	v, err := streamablehttp.DecodeHeaderValue("=?base64?WsO8cmljaA==?=")
	fmt.Println(v, err)
	// Output:
	// us-west
	// =?base64?WsO8cmljaA==?=
	// Zürich <nil>
}
