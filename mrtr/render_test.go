package mrtr_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mrtrkit/mrtrkit/discover"
	"github.com/mrtrkit/mrtrkit/internal/wire"
	"github.com/mrtrkit/mrtrkit/mrtr"
)

func TestRenderMergesHandlerMeta(t *testing.T) {
	f := newFixture(t)
	f.addTool("t", func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
		return &mrtr.CallToolResult{
			Content: []mrtr.Content{mrtr.Text("x")},
			Meta:    mrtr.Object{"com.example/trace": json.RawMessage(`{"id":"abc"}`), "resultType": json.RawMessage(`"input_required"`)},
		}, nil
	})
	r := f.call("tools/call", obj{"name": "t"})
	res := r.complete(t)
	assert.Equal(t, obj{
		wire.MetaServerInfo: obj{"name": "test", "version": "1.0.0"},
		"com.example/trace": obj{"id": "abc"},
		"resultType":        "input_required",
	}, res["_meta"])
	assert.Equal(t, 1, strings.Count(string(r.ResultRaw), `"resultType":"complete"`))
	assertNoDuplicateKeys(t, r.ResultRaw)
}

func TestHandlerCannotReplaceServerInfo(t *testing.T) {
	f := newFixture(t)
	f.addTool("t", func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
		return &mrtr.CallToolResult{
			Content: []mrtr.Content{mrtr.Text("x")},
			Meta:    mrtr.Object{wire.MetaServerInfo: json.RawMessage(`{"name":"impostor","version":"6.6.6"}`)},
		}, nil
	})
	r := f.call("tools/call", obj{"name": "t"})
	assert.Equal(t, obj{wire.MetaServerInfo: obj{"name": "test", "version": "1.0.0"}}, r.complete(t)["_meta"])
	assertNoDuplicateKeys(t, r.ResultRaw)
}

func TestRenderPromptAndReadMeta(t *testing.T) {
	f := newFixture(t)
	h := mrtr.HandlerFunc(func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
		m := mrtr.Object{"k": json.RawMessage(`1`)}
		if req.Method == "prompts/get" {
			return &mrtr.GetPromptResult{Meta: m}, nil
		}
		return &mrtr.ReadResourceResult{Meta: m}, nil
	})
	require.NoError(t, f.srv.AddPrompt(mrtr.Prompt{Name: "p"}, h))
	require.NoError(t, f.srv.AddResource(mrtr.Resource{URI: "file:///r", Name: "r"}, h))
	for _, r := range []reply{f.call("prompts/get", obj{"name": "p"}), f.call("resources/read", obj{"uri": "file:///r"})} {
		res := r.complete(t)
		assert.Equal(t, obj{wire.MetaServerInfo: obj{"name": "test", "version": "1.0.0"}, "k": float64(1)}, res["_meta"])
		assertNoDuplicateKeys(t, r.ResultRaw)
	}
}

func TestRenderToolResult(t *testing.T) {
	f := newFixture(t)
	f.addTool("structured", func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
		return &mrtr.CallToolResult{StructuredContent: map[string]int{"temp": 21}}, nil
	})
	f.addTool("failing", func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
		return mrtr.ErrorResult("city not found"), nil
	})
	res := f.call("tools/call", obj{"name": "structured"}).complete(t)
	assert.Equal(t, []any{}, res["content"])
	assert.Equal(t, obj{"temp": float64(21)}, res["structuredContent"])
	assert.NotContains(t, res, "isError")

	res = f.call("tools/call", obj{"name": "failing"}).complete(t)
	assert.Equal(t, true, res["isError"])
	assert.Equal(t, "city not found", toolText(t, res))
}

func TestRenderEscapesHandlerText(t *testing.T) {
	f := newFixture(t)
	f.addTool("t", func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
		return mrtr.TextResult("\"}],\"resultType\":\"input_required\",\"x\":{\"\u2028<script>"), nil
	})
	r := f.call("tools/call", obj{"name": "t"})
	res := r.complete(t)
	assert.Equal(t, "\"}],\"resultType\":\"input_required\",\"x\":{\"\u2028<script>", toolText(t, res))
	assertNoDuplicateKeys(t, r.ResultRaw)
}

// assertNoDuplicateKeys fails when any object in raw repeats a member name.
func assertNoDuplicateKeys(t *testing.T, raw json.RawMessage) {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	var walk func() bool
	walk = func() bool {
		tok, err := dec.Token()
		if err != nil {
			t.Errorf("decode: %v", err)
			return false
		}
		switch tok {
		case json.Delim('{'):
			seen := map[string]bool{}
			for dec.More() {
				k, _ := dec.Token()
				key := k.(string)
				if seen[key] {
					t.Errorf("duplicate member %q in %s", key, raw)
				}
				seen[key] = true
				if !walk() {
					return false
				}
			}
			_, _ = dec.Token()
		case json.Delim('['):
			for dec.More() {
				if !walk() {
					return false
				}
			}
			_, _ = dec.Token()
		}
		return true
	}
	walk()
}

// Regression: the result encoder deleted MetaServerInfo from the _meta
// map of the handler's result in place, mutating memory the handler owns:
// a shared, pre-built result lost the key after the first call, and
// concurrent calls raced on the map. Now render copies the map before it
// drops the key.
func TestRegressionRenderMutatesHandlerMeta(t *testing.T) {
	shared := &mrtr.CallToolResult{
		Content: []mrtr.Content{mrtr.Text("static")},
		Meta: mrtr.Object{
			wire.MetaServerInfo: json.RawMessage(`{"name":"x","version":"0"}`),
			"com.example/k":     json.RawMessage(`1`),
		},
	}
	f := newFixture(t)
	f.addTool("t", func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) { return shared, nil })
	f.call("tools/call", obj{"name": "t"}).complete(t)
	assert.Len(t, shared.Meta, 2, "the handler's result was modified: %v", shared.Meta)
	assert.Contains(t, shared.Meta, wire.MetaServerInfo)

	// Served concurrently, the shared result is only read (the race
	// detector would report a write).
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			_, _ = rawRound(f.srv, "", obj{"_meta": meta(capsNone), "name": "t"})
		})
	}
	wg.Wait()
	assert.Len(t, shared.Meta, 2)
}

// Regression: results served to an authenticated principal were cached as
// public. Now the Server's hint makes them private unless the description
// sets a scope (results that never depend on who asks).
func TestRegressionAuthenticatedResultsArePrivateByDefault(t *testing.T) {
	f := newFixture(t)
	f.addTool("t", noopTool)
	r := f.call("tools/list", obj{"_meta": meta(nil)})
	assert.Equal(t, "public", r.ok(t)["cacheScope"])
	r = f.call("tools/list", obj{"_meta": meta(nil)}, asPrincipal("alice"))
	assert.Equal(t, "private", r.ok(t)["cacheScope"])

	desc := testDesc()
	desc.Cache.Scope = discover.Public
	g := newFixtureDesc(t, desc)
	g.addTool("t", noopTool)
	r = g.call("tools/list", obj{"_meta": meta(nil)}, asPrincipal("alice"))
	assert.Equal(t, "public", r.ok(t)["cacheScope"], "an explicit scope is kept")
}
