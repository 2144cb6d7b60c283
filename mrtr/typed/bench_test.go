package typed_test

// In the timed loops each check is a plain if, and testify is called only
// when the check fails: require calls b.Helper, which walks the stack, and
// boxes its arguments on every call, which would count in ns/op and
// allocs/op.

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mrtrkit/mrtrkit/internal/testkit"
	"github.com/mrtrkit/mrtrkit/mrtr"
	"github.com/mrtrkit/mrtrkit/mrtr/typed"
	"github.com/stretchr/testify/require"
)

// The benchmark's tool: the shape of a typical one-shot tool, with
// validate tags on its input.
type benchIn struct {
	Audience string  `json:"audience" jsonschema:"the audience" validate:"min=2"`
	MaxWords int     `json:"max_words,omitempty" validate:"omitempty,gte=1,lte=50"`
	Tone     *string `json:"tone,omitempty" validate:"omitempty,oneof=warm formal"`
}

type benchOut struct {
	Greeting string `json:"greeting"`
	Words    int    `json:"words"`
}

func benchGreet(_ context.Context, _ *mrtr.Request, in benchIn) (benchOut, error) {
	g := "Hello, " + in.Audience + "!"
	return benchOut{Greeting: g, Words: len(strings.Fields(g))}, nil
}

// benchCall measures one tools/call through Server.Handle, parse included.
func benchCall(b *testing.B, srv *mrtr.Server) {
	body := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"greet","arguments":{"audience":"World","max_words":5},` +
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		msg, _, perr := mrtr.ParseMessage(body)
		if perr != nil {
			require.Nil(b, perr)
		}
		if resp := srv.Handle(ctx, &mrtr.Inbound{Message: msg}); resp.Error != nil {
			require.Nil(b, resp.Error, "%v", resp.Error)
		}
	}
}

// BenchmarkPlainHandler is the baseline: a hand-written mrtr.Handler doing
// the same work without schemas or checks.
func BenchmarkPlainHandler(b *testing.B) {
	srv := testkit.Server(b, testkit.Desc("bench", "1"), mrtr.WithCodec(testkit.Codec(b)))
	err := srv.AddTool(mrtr.Tool{Name: "greet"}, mrtr.HandlerFunc(func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
		var in benchIn
		if err := json.Unmarshal(req.Arguments, &in); err != nil {
			return mrtr.ErrorResult(err.Error()), nil
		}
		out, _ := benchGreet(ctx, req, in)
		b, _ := json.Marshal(out)
		return &mrtr.CallToolResult{Content: []mrtr.Content{mrtr.Text(string(b))}, StructuredContent: json.RawMessage(b)}, nil
	}))
	require.NoError(b, err)
	benchCall(b, srv)
}

// BenchmarkTypedTool is the same tool through typed.AddTool: argument
// checks in every layer, then the output rendered.
func BenchmarkTypedTool(b *testing.B) {
	srv := testkit.Server(b, testkit.Desc("bench", "1"), mrtr.WithCodec(testkit.Codec(b)))
	require.NoError(b, typed.AddTool(srv, mrtr.Tool{Name: "greet"}, benchGreet))
	benchCall(b, srv)
}
