package mrtr_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mrtrkit/mrtrkit/discover"
	"github.com/mrtrkit/mrtrkit/internal/testkit"
	"github.com/mrtrkit/mrtrkit/mrtr"
	"github.com/mrtrkit/mrtrkit/state"
)

func healthDesc() discover.Description {
	return discover.Description{Server: discover.Implementation{Name: "h", Version: "1"}}
}

// A server on the random start-up key is not ready; one with keys is,
// until it is closed.
func TestReady(t *testing.T) {
	t.Setenv(state.EnvKeys, "")
	srv, err := mrtr.NewServer(healthDesc(), mrtr.WithLogger(slog.New(slog.DiscardHandler)))
	require.NoError(t, err)
	assert.ErrorIs(t, srv.Ready(), mrtr.ErrEphemeralKeys)

	srv, err = mrtr.NewServer(healthDesc(), mrtr.WithCodec(testkit.Codec(t)))
	require.NoError(t, err)
	assert.NoError(t, srv.Ready())
	require.NoError(t, srv.Close())
	assert.ErrorIs(t, srv.Ready(), mrtr.ErrClosed)

	t.Setenv(state.EnvKeys, "k1:"+"MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=")
	srv, err = mrtr.NewServer(healthDesc())
	require.NoError(t, err)
	assert.NoError(t, srv.Ready(), "keys from the environment count")
}

// ParamHeaders follows the registry and names each header once.
func TestParamHeadersFollowTheRegistry(t *testing.T) {
	srv, err := mrtr.NewServer(healthDesc(), mrtr.WithCodec(testkit.Codec(t)))
	require.NoError(t, err)
	assert.Nil(t, srv.ParamHeaders())
	noop := mrtr.HandlerFunc(func(context.Context, *mrtr.Request) (mrtr.Result, error) { return mrtr.TextResult(""), nil })
	add := func(name, schema string) {
		require.NoError(t, srv.AddTool(mrtr.Tool{Name: name, InputSchema: json.RawMessage(schema)}, noop))
	}
	add("a", `{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"},"n":{"type":"integer","x-mcp-header":"Limit"}}}`)
	add("b", `{"type":"object","properties":{"r":{"type":"string","x-mcp-header":"region"},"t":{"type":"boolean","x-mcp-header":"Dry-Run"}}}`)
	add("c", `{"type":"object"}`)
	assert.Equal(t, []string{"Mcp-Param-Dry-Run", "Mcp-Param-Limit", "Mcp-Param-Region"}, srv.ParamHeaders())
	require.True(t, srv.RemoveTool("a"))
	assert.Equal(t, []string{"Mcp-Param-Dry-Run", "Mcp-Param-region"}, srv.ParamHeaders())
}
