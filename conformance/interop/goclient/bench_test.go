package goclient

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/mrtrkit/mrtrkit/client"
	"github.com/mrtrkit/mrtrkit/discover"
	"github.com/mrtrkit/mrtrkit/mrtr"
	"github.com/mrtrkit/mrtrkit/state"
	"github.com/mrtrkit/mrtrkit/transport/streamablehttp"
)

// benchServer is an mrtrkit server with a plain tool and a one-round
// tool, served on loopback: both clients call the same server in one run.
func benchServer(b *testing.B) string {
	ring, err := state.GenerateKeyRing()
	require.NoError(b, err)
	codec, err := state.NewAEAD(ring)
	require.NoError(b, err)
	srv, err := mrtr.NewServer(discover.Description{Server: discover.Implementation{Name: "bench", Version: "1"}}, mrtr.WithCodec(codec))
	require.NoError(b, err)
	require.NoError(b, srv.AddTool(mrtr.Tool{Name: "echo"}, mrtr.HandlerFunc(func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
		return mrtr.TextResult("ok"), nil
	})))
	require.NoError(b, srv.AddTool(mrtr.Tool{Name: "ask"}, mrtr.HandlerFunc(func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
		if a, ok := req.Responses.Elicitation("name"); ok && a.Accepted() {
			return mrtr.TextResult("hello"), nil
		}
		return mrtr.Ask("name", &mrtr.ElicitRequest{Message: "name?", RequestedSchema: &mrtr.ElicitSchema{Type: "object",
			Properties: map[string]json.RawMessage{"name": json.RawMessage(`{"type":"string"}`)}}}), nil
	})))
	h, err := streamablehttp.New(srv)
	require.NoError(b, err)
	ts := httptest.NewServer(h)
	b.Cleanup(ts.Close)
	return ts.URL + "/mcp"
}

func benchClients(b *testing.B, tool string) {
	url := benchServer(b)
	ctx := context.Background()
	b.Run("mrtrkit", func(b *testing.B) {
		c, err := client.Connect(ctx, client.HTTP(url), client.OnElicitation(elicit))
		require.NoError(b, err)
		defer c.Close()
		b.ReportAllocs()
		b.ResetTimer()
		for b.Loop() {
			if _, err := c.CallTool(ctx, tool, map[string]any{}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("go-sdk", func(b *testing.B) {
		gc := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, &mcp.ClientOptions{
			ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "ada"}}, nil
			}})
		cs, err := gc.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url}, &mcp.ClientSessionOptions{ProtocolVersion: "2026-07-28"})
		require.NoError(b, err)
		defer cs.Close()
		b.ReportAllocs()
		b.ResetTimer()
		for b.Loop() {
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: map[string]any{}})
			if err != nil || res.IsError {
				b.Fatal(err, res)
			}
		}
	})
}

// BenchmarkToolsCall is one tools/call over loopback HTTP, per client.
func BenchmarkToolsCall(b *testing.B) { benchClients(b, "echo") }

// BenchmarkMRTRRound is a tools/call that takes one input-required round
// (two requests), per client.
func BenchmarkMRTRRound(b *testing.B) { benchClients(b, "ask") }
