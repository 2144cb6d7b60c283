package mrtr_test

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mrtrkit/mrtrkit/discover"
	"github.com/mrtrkit/mrtrkit/mrtr"
)

// listNames returns the value of field in each item of a list result.
func listNames(res obj, key, field string) []string {
	var out []string
	items, _ := res[key].([]any)
	for _, it := range items {
		out = append(out, it.(map[string]any)[field].(string))
	}
	return out
}

// walkPages follows nextCursor from the first page and returns the pages.
func walkPages(t *testing.T, f *fixture, method, key, field string) [][]string {
	t.Helper()
	var pages [][]string
	p := obj{"_meta": meta(capsNone)}
	for i := 0; ; i++ {
		require.Less(t, i, 50, "pagination does not end")
		res := f.call(method, p).complete(t)
		assert.Contains(t, res, "ttlMs")
		assert.Contains(t, res, "cacheScope")
		pages = append(pages, listNames(res, key, field))
		next, ok := res["nextCursor"].(string)
		if !ok {
			return pages
		}
		require.NotEmpty(t, next)
		p = obj{"_meta": meta(capsNone), "cursor": next}
	}
}

func TestListsKeepRegistrationOrder(t *testing.T) {
	f := newFixture(t)
	names := []string{"zeta", "alpha", "mu", "beta"}
	for _, n := range names {
		f.addTool(n, noopTool)
		require.NoError(t, f.srv.AddPrompt(mrtr.Prompt{Name: "p-" + n}, mrtr.HandlerFunc(noopTool)))
		require.NoError(t, f.srv.AddResource(mrtr.Resource{URI: "file:///" + n, Name: n}, mrtr.HandlerFunc(noopTool)))
		require.NoError(t, f.srv.AddResourceTemplate(mrtr.ResourceTemplate{URITemplate: "file:///" + n + "/{x}", Name: n}, mrtr.HandlerFunc(noopTool)))
	}
	for i := 0; i < 3; i++ {
		assert.Equal(t, names, listNames(f.call("tools/list", obj{"_meta": meta(capsNone)}).complete(t), "tools", "name"))
	}
	assert.Equal(t, []string{"p-zeta", "p-alpha", "p-mu", "p-beta"}, listNames(f.call("prompts/list", obj{"_meta": meta(capsNone)}).complete(t), "prompts", "name"))
	assert.Equal(t, []string{"file:///zeta", "file:///alpha", "file:///mu", "file:///beta"}, listNames(f.call("resources/list", obj{"_meta": meta(capsNone)}).complete(t), "resources", "uri"))
	assert.Equal(t, []string{"file:///zeta/{x}", "file:///alpha/{x}", "file:///mu/{x}", "file:///beta/{x}"},
		listNames(f.call("resources/templates/list", obj{"_meta": meta(capsNone)}).complete(t), "resourceTemplates", "uriTemplate"))

	// Removing and re-adding moves an entry to the end.
	require.True(t, f.srv.RemoveTool("alpha"))
	f.addTool("alpha", noopTool)
	assert.Equal(t, []string{"zeta", "mu", "beta", "alpha"}, listNames(f.call("tools/list", obj{"_meta": meta(capsNone)}).complete(t), "tools", "name"))
}

func TestListRendersTools(t *testing.T) {
	f := newFixture(t)
	ro := true
	require.NoError(t, f.srv.AddTool(mrtr.Tool{
		Name:         "weather",
		Title:        "Weather",
		Description:  "Current weather",
		InputSchema:  json.RawMessage(`{ "type" : "object", "properties": {"city": {"type": "string"}} }`),
		OutputSchema: json.RawMessage(`{"type":"object"}`),
		Annotations:  &mrtr.ToolAnnotations{ReadOnlyHint: &ro},
	}, mrtr.HandlerFunc(noopTool)))
	f.addTool("bare", noopTool)
	res := f.call("tools/list", obj{"_meta": meta(capsNone)}).complete(t)
	assert.Equal(t, []any{
		obj{
			"name": "weather", "title": "Weather", "description": "Current weather",
			"inputSchema":  obj{"type": "object", "properties": obj{"city": obj{"type": "string"}}},
			"outputSchema": obj{"type": "object"},
			"annotations":  obj{"readOnlyHint": true},
		},
		obj{"name": "bare", "inputSchema": obj{"type": "object"}},
	}, res["tools"])
	assert.Equal(t, float64((5 * time.Minute).Milliseconds()), res["ttlMs"])
	assert.Equal(t, "public", res["cacheScope"])
	assert.NotContains(t, res, "nextCursor")
	assert.Contains(t, res, "_meta")
}

func TestListCachePolicy(t *testing.T) {
	desc := testDesc()
	desc.Cache = discover.CachePolicy{List: 42 * time.Second, Scope: discover.Private}
	f := newFixtureDesc(t, desc)
	f.addTool("t", noopTool)
	res := f.call("tools/list", obj{"_meta": meta(capsNone)}).complete(t)
	assert.Equal(t, float64(42000), res["ttlMs"])
	assert.Equal(t, "private", res["cacheScope"])
}

func TestPagination(t *testing.T) {
	f := newFixture(t, mrtr.WithPageSize(2))
	for i := 1; i <= 5; i++ {
		f.addTool(fmt.Sprint("t", i), noopTool)
		require.NoError(t, f.srv.AddPrompt(mrtr.Prompt{Name: fmt.Sprint("p", i)}, mrtr.HandlerFunc(noopTool)))
		require.NoError(t, f.srv.AddResource(mrtr.Resource{URI: fmt.Sprint("file:///r", i), Name: "r"}, mrtr.HandlerFunc(noopTool)))
		require.NoError(t, f.srv.AddResourceTemplate(mrtr.ResourceTemplate{URITemplate: fmt.Sprintf("file:///d%d/{x}", i), Name: "d"}, mrtr.HandlerFunc(noopTool)))
	}
	assert.Equal(t, [][]string{{"t1", "t2"}, {"t3", "t4"}, {"t5"}}, walkPages(t, f, "tools/list", "tools", "name"))
	assert.Equal(t, [][]string{{"p1", "p2"}, {"p3", "p4"}, {"p5"}}, walkPages(t, f, "prompts/list", "prompts", "name"))
	assert.Equal(t, [][]string{{"file:///r1", "file:///r2"}, {"file:///r3", "file:///r4"}, {"file:///r5"}}, walkPages(t, f, "resources/list", "resources", "uri"))
	assert.Equal(t, [][]string{{"file:///d1/{x}", "file:///d2/{x}"}, {"file:///d3/{x}", "file:///d4/{x}"}, {"file:///d5/{x}"}},
		walkPages(t, f, "resources/templates/list", "resourceTemplates", "uriTemplate"))

	// An exact multiple of the page size has no empty last page.
	require.True(t, f.srv.RemoveTool("t5"))
	assert.Equal(t, [][]string{{"t1", "t2"}, {"t3", "t4"}}, walkPages(t, f, "tools/list", "tools", "name"))

	// Empty cursor and null cursor are the first page.
	for _, c := range []any{"", nil} {
		res := f.call("tools/list", obj{"_meta": meta(capsNone), "cursor": c}).complete(t)
		assert.Equal(t, []string{"t1", "t2"}, listNames(res, "tools", "name"))
	}
}

func TestBadCursor(t *testing.T) {
	f := newFixture(t, mrtr.WithPageSize(2))
	for i := 1; i <= 3; i++ {
		f.addTool(fmt.Sprint("t", i), noopTool)
	}
	first := f.call("tools/list", obj{"_meta": meta(capsNone)}).complete(t)
	next := first["nextCursor"].(string)

	tests := []struct {
		name   string
		cursor any
	}{
		{"garbage", "%%%not-a-cursor%%%"},
		{"base64 of an unknown name", base64.RawURLEncoding.EncodeToString([]byte("n:nope"))},
		{"base64 without the prefix", base64.RawURLEncoding.EncodeToString([]byte("t3"))},
		{"padded base64", base64.URLEncoding.EncodeToString([]byte("n:t3"))},
		{"standard alphabet", base64.RawStdEncoding.EncodeToString([]byte("n:t3?>"))},
		{"number", 2},
		{"object", obj{"n": "t3"}},
		{"cursor with a trailing character", next + "A"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := f.call("tools/list", obj{"_meta": meta(capsNone), "cursor": tt.cursor})
			e := r.fail(t, mrtr.CodeInvalidParams)
			assert.Equal(t, "Invalid cursor", e.Message)
			assert.False(t, r.Envelope)
		})
	}

	// A cursor naming a removed item is refused; the list starts over.
	require.True(t, f.srv.RemoveTool("t3"))
	f.call("tools/list", obj{"_meta": meta(capsNone), "cursor": next}).fail(t, mrtr.CodeInvalidParams)
}

func TestRegistrationErrors(t *testing.T) {
	f := newFixture(t)
	h := mrtr.HandlerFunc(noopTool)
	for _, tt := range []struct {
		name string
		tool mrtr.Tool
		h    mrtr.Handler
	}{
		{"empty name", mrtr.Tool{Name: ""}, h},
		{"space in name", mrtr.Tool{Name: "a b"}, h},
		{"slash in name", mrtr.Tool{Name: "a/b"}, h},
		{"name too long", mrtr.Tool{Name: string(make([]byte, 129))}, h},
		{"nil handler", mrtr.Tool{Name: "x"}, nil},
		{"array schema", mrtr.Tool{Name: "x", InputSchema: json.RawMessage(`[]`)}, h},
		{"string root type", mrtr.Tool{Name: "x", InputSchema: json.RawMessage(`{"type":"string"}`)}, h},
		{"schema without type", mrtr.Tool{Name: "x", InputSchema: json.RawMessage(`{"properties":{}}`)}, h},
		{"bad output schema", mrtr.Tool{Name: "x", OutputSchema: json.RawMessage(`{`)}, h},
	} {
		t.Run(tt.name, func(t *testing.T) {
			assert.Error(t, f.srv.AddTool(tt.tool, tt.h))
		})
	}
	long := make([]byte, 128)
	for i := range long {
		long[i] = 'a'
	}
	require.NoError(t, f.srv.AddTool(mrtr.Tool{Name: string(long)}, h))
	require.NoError(t, f.srv.AddTool(mrtr.Tool{Name: "A-z_0.9"}, h))
	assert.Error(t, f.srv.AddTool(mrtr.Tool{Name: "A-z_0.9"}, h), "duplicate")

	assert.Error(t, f.srv.AddPrompt(mrtr.Prompt{}, h))
	assert.Error(t, f.srv.AddPrompt(mrtr.Prompt{Name: "p"}, nil))
	require.NoError(t, f.srv.AddPrompt(mrtr.Prompt{Name: "p"}, h))
	assert.Error(t, f.srv.AddPrompt(mrtr.Prompt{Name: "p"}, h))

	assert.Error(t, f.srv.AddResource(mrtr.Resource{Name: "r"}, h))
	assert.Error(t, f.srv.AddResource(mrtr.Resource{URI: "file:///r"}, h))
	require.NoError(t, f.srv.AddResource(mrtr.Resource{URI: "file:///r", Name: "r"}, h))
	assert.Error(t, f.srv.AddResource(mrtr.Resource{URI: "file:///r", Name: "r2"}, h))

	for _, tmpl := range []string{"file:///{x", "file:///x}", "file:///{}", "file:///{a b}"} {
		assert.Error(t, f.srv.AddResourceTemplate(mrtr.ResourceTemplate{URITemplate: tmpl, Name: "t"}, h), tmpl)
	}
	assert.Error(t, f.srv.AddResourceTemplate(mrtr.ResourceTemplate{URITemplate: "file:///{x}"}, h))
	require.NoError(t, f.srv.AddResourceTemplate(mrtr.ResourceTemplate{URITemplate: "file:///{x}", Name: "t"}, h))
	assert.Error(t, f.srv.AddResourceTemplate(mrtr.ResourceTemplate{URITemplate: "file:///{x}", Name: "t"}, h))
}

// The list handlers must not be able to observe a half-registered entry.
func TestListWhileRegistering(t *testing.T) {
	f := newFixture(t, mrtr.WithPageSize(3))
	f.addTool("seed", noopTool)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 100 {
			name := fmt.Sprint("t", i)
			_ = f.srv.AddTool(mrtr.Tool{Name: name}, mrtr.HandlerFunc(noopTool))
			if i%2 == 0 {
				f.srv.RemoveTool(name)
			}
		}
	}()
	for i := 0; i < 100; i++ {
		r := f.call("tools/list", obj{"_meta": meta(capsNone)})
		r.complete(t)
	}
	<-done
}
