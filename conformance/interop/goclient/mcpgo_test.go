package goclient

import (
	"context"
	"net/http/httptest"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mrtrkit/mrtrkit/client"
)

// mcpGoServer is an mcp-go v1.2.1 server with a tool that asks for a name
// and a model's answer (written in its multi round-trip style, which
// mcp-go bridges to real requests for clients of 2025-11-25).
func mcpGoServer(t *testing.T) string {
	srv := server.NewMCPServer("mcp-go", "1.2.1", server.WithToolCapabilities(true), server.WithElicitation())
	srv.AddTool(mcp.NewTool("ask"), func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		who := server.ElicitationResponse(req.Params.InputResponses, "who")
		model := server.SamplingResponse(req.Params.InputResponses, "model")
		if who != nil && model != nil {
			content, _ := who.Content.(map[string]any)
			name, _ := content["name"].(string)
			return mcp.NewToolResultText("hello " + name + " from " + model.Model), nil
		}
		return server.NewInputRequestBuilder("step=1").
			Elicit("who", mcp.ElicitationParams{Mode: mcp.ElicitationModeForm, Message: "Your name?",
				RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}}}).
			Sample("model", mcp.CreateMessageParams{MaxTokens: 10, Messages: []mcp.SamplingMessage{{Role: mcp.RoleUser, Content: mcp.NewTextContent("hi")}}}).
			ToolResult(), nil
	})
	ts := httptest.NewServer(server.NewStreamableHTTPServer(srv))
	t.Cleanup(ts.Close)
	return ts.URL + "/mcp"
}

func TestMCPGoServerBothEras(t *testing.T) {
	url := mcpGoServer(t)
	for _, version := range []string{"", client.LegacyVersion} {
		t.Run("version="+version, func(t *testing.T) {
			opts := append([]client.Option{}, answers...)
			if version != "" {
				opts = append(opts, client.WithProtocolVersion(version))
			}
			c, err := client.Connect(ctxT(t), client.HTTP(url), opts...)
			require.NoError(t, err)
			defer c.Close()
			t.Logf("era: legacy=%v version=%s", c.Legacy(), c.Version())
			res, err := c.CallTool(ctxT(t), "ask", map[string]any{})
			require.NoError(t, err)
			assert.Equal(t, "hello ada from m", res.Text())
		})
	}
}
