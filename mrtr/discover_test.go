package mrtr_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mrtrkit/mrtrkit/discover"
	"github.com/mrtrkit/mrtrkit/internal/wire"
	"github.com/mrtrkit/mrtrkit/mrtr"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

func noopTool(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
	return mrtr.TextResult("ok"), nil
}

func TestDiscoverEmptyServer(t *testing.T) {
	f := newFixture(t)
	res := f.call("server/discover", obj{"_meta": meta(capsNone)}).complete(t)
	assert.Equal(t, []any{version}, res["supportedVersions"])
	assert.Equal(t, obj{}, res["capabilities"])
	assert.Equal(t, float64(time.Hour.Milliseconds()), res["ttlMs"])
	assert.Equal(t, "public", res["cacheScope"])
	assert.Equal(t, obj{wire.MetaServerInfo: obj{"name": "test", "version": "1.0.0"}}, res["_meta"])
	assert.NotContains(t, res, "instructions")
}

func TestDiscoverCapabilitiesFollowRegistries(t *testing.T) {
	f := newFixture(t)
	caps := func() obj {
		return f.call("server/discover", obj{"_meta": meta(capsNone)}).complete(t)["capabilities"].(map[string]any)
	}
	assert.Empty(t, caps())

	f.addTool("t", noopTool)
	assert.Equal(t, obj{"tools": obj{}}, caps())

	require.NoError(t, f.srv.AddPrompt(mrtr.Prompt{Name: "p"}, mrtr.HandlerFunc(noopTool)))
	assert.Equal(t, obj{"tools": obj{}, "prompts": obj{}}, caps())

	require.NoError(t, f.srv.AddResourceTemplate(mrtr.ResourceTemplate{URITemplate: "file:///{x}", Name: "x"}, mrtr.HandlerFunc(noopTool)))
	assert.Equal(t, obj{"tools": obj{}, "prompts": obj{}, "resources": obj{}}, caps())

	f.srv.SetCompletionHandler(mrtr.CompletionHandlerFunc(func(ctx context.Context, req *mrtr.CompleteRequest) (*mrtr.Completion, error) {
		return nil, nil
	}))
	assert.Equal(t, obj{"tools": obj{}, "prompts": obj{}, "resources": obj{}, "completions": obj{}}, caps())

	assert.True(t, f.srv.RemoveTool("t"))
	assert.False(t, f.srv.RemoveTool("t"))
	assert.True(t, f.srv.RemovePrompt("p"))
	assert.False(t, f.srv.RemovePrompt("p"))
	f.srv.SetCompletionHandler(nil)
	assert.Equal(t, obj{"resources": obj{}}, caps())
	assert.Equal(t, discover.Capabilities{Resources: &discover.ResourcesCapability{}}, f.srv.Capabilities())
}

func TestDiscoverMergesDescription(t *testing.T) {
	desc := testDesc()
	desc.Instructions = "Use the tools."
	desc.Capabilities = discover.Capabilities{
		Logging: &discover.Empty{},
		Tools:   &discover.ListChanged{ListChanged: true},
	}
	desc.Cache = discover.CachePolicy{Discover: 90 * time.Second, Scope: discover.Private}
	f := newFixtureDesc(t, desc)
	f.addTool("t", noopTool)
	res := f.call("server/discover", obj{"_meta": meta(capsNone)}).complete(t)
	assert.Equal(t, obj{"logging": obj{}, "tools": obj{"listChanged": true}}, res["capabilities"])
	assert.Equal(t, "Use the tools.", res["instructions"])
	assert.Equal(t, float64(90000), res["ttlMs"])
	assert.Equal(t, "private", res["cacheScope"])
}

func TestDiscoverOmitServerInfo(t *testing.T) {
	desc := testDesc()
	desc.OmitServerInfo = true
	f := newFixtureDesc(t, desc)
	f.addTool("t", noopTool)
	assert.NotContains(t, f.call("server/discover", obj{"_meta": meta(capsNone)}).complete(t), "_meta")
	assert.NotContains(t, f.call("tools/list", obj{"_meta": meta(capsNone)}).complete(t), "_meta")
	assert.NotContains(t, f.call("tools/call", obj{"name": "t"}).complete(t), "_meta")
}

// TestDiscoverGolden compares the server/discover result, byte for byte
// up to indentation, with testdata/discover.golden.json (go test -run
// TestDiscoverGolden -update rewrites it). mrtr renders server/discover
// itself, like every other result: resultType first, then the body, the
// cache hint and _meta. The description and the registries both feed the
// capabilities.
func TestDiscoverGolden(t *testing.T) {
	desc := testDesc()
	desc.Server.Title = "Test Server"
	desc.Instructions = "Ask for the weather."
	desc.LegacyVersions = []string{"2025-11-25"}
	desc.Capabilities.Logging = &discover.Empty{}
	desc.Capabilities.Tools = &discover.ListChanged{ListChanged: true}
	desc.Capabilities.Resources = &discover.ResourcesCapability{Subscribe: true}
	desc.Capabilities.Extensions = map[string]map[string]any{"io.example/ext": nil}
	desc.Cache.Discover = 90 * time.Second
	f := newFixtureDesc(t, desc)
	f.addTool("weather", noopTool)
	require.NoError(t, f.srv.AddPrompt(mrtr.Prompt{Name: "forecast"}, mrtr.HandlerFunc(noopTool)))
	require.NoError(t, f.srv.AddResource(mrtr.Resource{URI: "file:///readme", Name: "readme"}, mrtr.HandlerFunc(noopTool)))
	f.srv.SetCompletionHandler(mrtr.CompletionHandlerFunc(func(context.Context, *mrtr.CompleteRequest) (*mrtr.Completion, error) {
		return nil, nil
	}))
	r := f.call("server/discover", obj{"_meta": meta(capsNone)})
	r.complete(t)
	assertNoDuplicateKeys(t, r.ResultRaw)
	var indented bytes.Buffer
	require.NoError(t, json.Indent(&indented, r.ResultRaw, "", "  "))
	got := append(indented.Bytes(), '\n')
	path := filepath.Join("testdata", "discover.golden.json")
	if *update {
		require.NoError(t, os.WriteFile(path, got, 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, string(want), string(got))

	// An authenticated caller gets the same answer, private.
	r = f.call("server/discover", obj{"_meta": meta(capsNone)}, asPrincipal("alice"))
	res := r.complete(t)
	assert.Equal(t, "private", res["cacheScope"])
	var golden obj
	require.NoError(t, json.Unmarshal(want, &golden))
	golden["cacheScope"] = "private"
	assert.Equal(t, golden, res)
}

func TestCapabilityGatedMethods(t *testing.T) {
	f := newFixture(t)
	m := obj{"_meta": meta(capsNone)}
	for _, method := range []string{"tools/list", "tools/call", "prompts/list", "prompts/get", "resources/list", "resources/read", "resources/templates/list", "completion/complete"} {
		t.Run(method, func(t *testing.T) {
			r := f.call(method, m)
			e := r.fail(t, mrtr.CodeMethodNotFound)
			assert.True(t, r.Envelope)
			assert.Equal(t, "Method not found: "+method, e.Message)
		})
	}
	// server/discover needs nothing.
	f.call("server/discover", m).complete(t)

	// A tool enables tools/* only.
	f.addTool("t", noopTool)
	f.call("tools/list", m).complete(t)
	f.call("prompts/list", m).fail(t, mrtr.CodeMethodNotFound)
	f.call("resources/list", m).fail(t, mrtr.CodeMethodNotFound)

	// A template alone enables every resources method.
	require.NoError(t, f.srv.AddResourceTemplate(mrtr.ResourceTemplate{URITemplate: "db://{table}", Name: "table"}, mrtr.HandlerFunc(noopTool)))
	list := f.call("resources/list", m).complete(t)
	assert.Equal(t, []any{}, list["resources"])
	f.call("resources/templates/list", m).complete(t)

	// Tools declared in the description without registrations list nothing.
	desc := testDesc()
	desc.Capabilities.Tools = &discover.ListChanged{}
	g := newFixtureDesc(t, desc)
	assert.Equal(t, []any{}, g.call("tools/list", m).complete(t)["tools"])
	g.call("tools/call", obj{"name": "x"}).fail(t, mrtr.CodeInvalidParams)
}

func TestCompletion(t *testing.T) {
	f := newFixture(t)
	var got *mrtr.CompleteRequest
	f.srv.SetCompletionHandler(mrtr.CompletionHandlerFunc(func(ctx context.Context, req *mrtr.CompleteRequest) (*mrtr.Completion, error) {
		got = req
		switch req.Argument.Value {
		case "many":
			vals := make([]string, 150)
			for i := range vals {
				vals[i] = "v" + strconv.Itoa(i)
			}
			return &mrtr.Completion{Values: vals}, nil
		case "none":
			return nil, nil
		case "fail":
			return nil, mrtr.InvalidParamsError("no such argument")
		case "boom":
			return nil, assert.AnError
		}
		total := 2
		return &mrtr.Completion{Values: []string{"paris", "prague"}, Total: &total}, nil
	}))
	base := func(value string) obj {
		return obj{
			"_meta":    meta(capsNone),
			"ref":      obj{"type": "ref/prompt", "name": "trip"},
			"argument": obj{"name": "city", "value": value},
			"context":  obj{"arguments": obj{"country": "fr"}},
		}
	}

	res := f.call("completion/complete", base("p")).complete(t)
	assert.Equal(t, obj{"values": []any{"paris", "prague"}, "total": float64(2)}, res["completion"])
	assert.NotContains(t, res, "ttlMs")
	assert.Contains(t, res, "_meta")
	require.NotNil(t, got)
	assert.Equal(t, mrtr.CompletionRef{Type: "ref/prompt", Name: "trip"}, got.Ref)
	assert.Equal(t, map[string]string{"country": "fr"}, got.Context.Arguments)

	res = f.call("completion/complete", base("many")).complete(t)
	c := res["completion"].(map[string]any)
	assert.Len(t, c["values"], 100)
	assert.Equal(t, true, c["hasMore"])

	res = f.call("completion/complete", base("none")).complete(t)
	assert.Equal(t, obj{"values": []any{}}, res["completion"])

	e := f.call("completion/complete", base("fail")).fail(t, mrtr.CodeInvalidParams)
	assert.Equal(t, "no such argument", e.Message)
	e = f.call("completion/complete", base("boom")).fail(t, mrtr.CodeInternalError)
	assert.Equal(t, "Internal error", e.Message)
	assert.Nil(t, e.Data)

	resource := base("x")
	resource["ref"] = obj{"type": "ref/resource", "uri": "file:///{path}"}
	f.call("completion/complete", resource).complete(t)

	bad := []struct {
		name string
		edit func(p obj)
	}{
		{"no ref", func(p obj) { delete(p, "ref") }},
		{"no argument", func(p obj) { delete(p, "argument") }},
		{"unknown ref type", func(p obj) { p["ref"] = obj{"type": "ref/tool", "name": "x"} }},
		{"prompt ref without name", func(p obj) { p["ref"] = obj{"type": "ref/prompt"} }},
		{"resource ref without uri", func(p obj) { p["ref"] = obj{"type": "ref/resource"} }},
		{"argument without name", func(p obj) { p["argument"] = obj{"value": "x"} }},
		{"context not an object", func(p obj) { p["context"] = "x" }},
		{"ref not an object", func(p obj) { p["ref"] = 1 }},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			p := base("p")
			tt.edit(p)
			r := f.call("completion/complete", p)
			r.fail(t, mrtr.CodeInvalidParams)
			assert.False(t, r.Envelope)
		})
	}
}
