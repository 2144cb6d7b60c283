package typed_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/mrtrkit/mrtrkit/mrtr"
	"github.com/mrtrkit/mrtrkit/mrtr/typed"
)

// benchCall measures one tools/call through Server.Handle, parse included.
func benchCall(b *testing.B, srv *mrtr.Server) {
	body := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"greet","arguments":{"audience":"World","max_words":5},` +
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		msg, _, perr := mrtr.ParseMessage(body)
		if perr != nil {
			b.Fatal(perr)
		}
		if resp := srv.Handle(ctx, &mrtr.Inbound{Message: msg}); resp.Error != nil {
			b.Fatal(resp.Error)
		}
	}
}

// BenchmarkPlainHandler is the baseline: a hand-written mrtr.Handler doing
// the same work without schemas or checks.
func BenchmarkPlainHandler(b *testing.B) {
	srv, _ := newServer(b)
	err := srv.AddTool(mrtr.Tool{Name: "greet"}, mrtr.HandlerFunc(func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
		var in GreetIn
		if err := req.BindArguments(&in); err != nil {
			return mrtr.ToolError(err.Error()), nil
		}
		out, _ := greet(ctx, req, in)
		b, _ := json.Marshal(out)
		return &mrtr.CallToolResult{Content: []mrtr.Content{mrtr.Text(string(b))}, StructuredContent: json.RawMessage(b)}, nil
	}))
	if err != nil {
		b.Fatal(err)
	}
	benchCall(b, srv)
}

// BenchmarkTypedTool adds argument checks in all layers and output
// validation.
func BenchmarkTypedTool(b *testing.B) {
	srv, _ := newServer(b)
	if err := typed.AddTool(srv, mrtr.Tool{Name: "greet"}, greet); err != nil {
		b.Fatal(err)
	}
	benchCall(b, srv)
}
