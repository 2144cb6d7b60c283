package typed_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/stretchr/testify/require"

	"github.com/mrtrkit/mrtrkit/internal/wire"
	"github.com/mrtrkit/mrtrkit/mrtr"
	"github.com/mrtrkit/mrtrkit/mrtr/typed"
)

// A typed tool whose output holds a nil map and bytes answers with
// structured content that its published output schema admits.
func TestTypedOutputWithMapsAndBytes(t *testing.T) {
	srv, _ := newServer(t)
	type out struct {
		Tags  map[string]string `json:"tags"`
		Bytes []byte            `json:"bytes"`
	}
	require.NoError(t, typed.AddTool(srv, mrtr.Tool{Name: "raw"}, func(_ context.Context, _ *mrtr.Request, in struct {
		Full bool `json:"full"`
	}) (out, error) {
		if in.Full {
			return out{Tags: map[string]string{"a": "b"}, Bytes: []byte("hi")}, nil
		}
		return out{}, nil
	}))
	sb, err := json.Marshal(listedTool(t, srv, "raw")["outputSchema"])
	require.NoError(t, err)
	var schema jsonschema.Schema
	require.NoError(t, json.Unmarshal(sb, &schema))
	resolved, err := schema.Resolve(nil)
	require.NoError(t, err)
	for _, full := range []bool{false, true} {
		raw, e := call(t, srv, wire.MethodToolsCall, map[string]any{"name": "raw", "arguments": map[string]any{"full": full}})
		require.Nil(t, e)
		var r struct {
			IsError           bool            `json:"isError"`
			StructuredContent json.RawMessage `json:"structuredContent"`
		}
		require.NoError(t, json.Unmarshal(raw, &r), string(raw))
		require.False(t, r.IsError, "%s", raw)
		var doc any
		require.NoError(t, json.Unmarshal(r.StructuredContent, &doc))
		require.NoError(t, resolved.Validate(doc), "%s", r.StructuredContent)
	}
}

// A []byte argument is a base64 string, as encoding/json reads it: the
// published input schema says so, and such an argument reaches the
// handler decoded.
func TestTypedBytesArgument(t *testing.T) {
	srv, _ := newServer(t)
	require.NoError(t, typed.AddTool(srv, mrtr.Tool{Name: "size"}, func(_ context.Context, _ *mrtr.Request, in struct {
		Data []byte `json:"data"`
	}) (struct {
		Len int `json:"len"`
	}, error) {
		return struct {
			Len int `json:"len"`
		}{len(in.Data)}, nil
	}))
	props := listedTool(t, srv, "size")["inputSchema"].(map[string]any)["properties"].(map[string]any)
	require.Equal(t, map[string]any{"type": []any{"null", "string"}, "contentEncoding": "base64"}, props["data"])

	raw, e := call(t, srv, wire.MethodToolsCall, map[string]any{"name": "size", "arguments": map[string]any{"data": "aGVsbG8="}})
	require.Nil(t, e)
	require.JSONEq(t, `{"len":5}`, string(structured(t, raw)))

	raw, e = call(t, srv, wire.MethodToolsCall, map[string]any{"name": "size", "arguments": map[string]any{"data": []int{104, 105}}})
	require.Nil(t, e)
	require.Contains(t, string(raw), `"isError":true`, "an array is not how bytes travel")
}

// structured returns the structuredContent of a tools/call result.
func structured(t *testing.T, raw json.RawMessage) json.RawMessage {
	t.Helper()
	var r struct {
		StructuredContent json.RawMessage `json:"structuredContent"`
	}
	require.NoError(t, json.Unmarshal(raw, &r), string(raw))
	return r.StructuredContent
}
