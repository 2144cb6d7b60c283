package mrtr_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mrtrkit/mrtrkit/mrtr"
)

// templateFixture registers one resource template and records what its
// handler saw.
func templateFixture(t *testing.T, tmpl string) (*fixture, *[]map[string]string) {
	t.Helper()
	f := newFixture(t)
	var got []map[string]string
	require.NoError(t, f.srv.AddResourceTemplate(mrtr.ResourceTemplate{URITemplate: tmpl, Name: "t"},
		mrtr.HandlerFunc(func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
			got = append(got, req.Vars)
			return &mrtr.ReadResourceResult{Contents: []mrtr.ResourceContents{mrtr.TextResource(req.URI, "", "x")}}, nil
		})))
	return f, &got
}

// Resource templates are RFC 6570 templates: every operator matches, and
// the values reach the handler decoded.
func TestTemplatesRFC6570(t *testing.T) {
	tests := []struct {
		tmpl string
		uri  string
		want map[string]string // nil: the URI does not match
	}{
		{"db://{schema}/{table}", "db://sales/orders", map[string]string{"schema": "sales", "table": "orders"}},
		{"db://{schema}/{table}", "db:///orders", nil},
		{"db://{schema}/{table}", "db://sales/orders/2024", nil},
		{"file:///{name}", "file:///a%20b", map[string]string{"name": "a b"}},
		{"file:///{+path}", "file:///src/main.go", map[string]string{"path": "src/main.go"}},
		{"file:///{+path}", "file:///", nil},
		{"search{?q,lang}", "search?q=go&lang=en", map[string]string{"q": "go", "lang": "en"}},
		{"search{?q,lang}", "search?q=go", map[string]string{"q": "go"}},
		{"docs{/section,page}", "docs/guide/intro", map[string]string{"section": "guide", "page": "intro"}},
		{"page{#frag}", "page#top", map[string]string{"frag": "top"}},
		{"img{.fmt}", "img.png", map[string]string{"fmt": "png"}},
		{"m{;x,y}", "m;x=1;y=2", map[string]string{"x": "1", "y": "2"}},
		{"tags/{list*}", "tags/a,b,c", map[string]string{"list": "a,b,c"}},
		{"q?fixed=1{&extra}", "q?fixed=1&extra=yes", map[string]string{"extra": "yes"}},
		{"q?fixed=1{&extra}", "q?fixed=2&extra=yes", nil},
	}
	for _, tt := range tests {
		t.Run(tt.tmpl+" "+tt.uri, func(t *testing.T) {
			f, got := templateFixture(t, tt.tmpl)
			r := f.call("resources/read", obj{"uri": tt.uri})
			if tt.want == nil {
				e := r.fail(t, mrtr.CodeInvalidParams)
				assert.Equal(t, "Resource not found", e.Message)
				assert.Empty(t, *got)
				return
			}
			r.complete(t)
			require.Len(t, *got, 1)
			for k, v := range tt.want {
				assert.Equal(t, v, (*got)[0][k], "variable %s", k)
			}
		})
	}
}

func TestTemplateErrorsAtRegistration(t *testing.T) {
	f := newFixture(t)
	h := mrtr.HandlerFunc(noopTool)
	for _, bad := range []string{"db://{schema", "db://{sch ema}", "db://{}", "db://{!x}"} {
		err := f.srv.AddResourceTemplate(mrtr.ResourceTemplate{URITemplate: bad, Name: "bad"}, h)
		assert.Error(t, err, "%q", bad)
	}
	assert.Nil(t, f.srv.Capabilities().Resources, "nothing was registered")
}

func TestRemoveResourceAndTemplate(t *testing.T) {
	f, _ := readFixture(t, testDesc().Cache)
	f.call("resources/read", obj{"uri": "file:///readme"}).complete(t)
	f.call("resources/read", obj{"uri": "db://sales/orders"}).complete(t)

	assert.True(t, f.srv.RemoveResource("file:///readme"))
	assert.False(t, f.srv.RemoveResource("file:///readme"), "already gone")
	assert.True(t, f.srv.RemoveResourceTemplate("db://{schema}/{table}"))
	assert.False(t, f.srv.RemoveResourceTemplate("db://{schema}/{table}"))

	f.call("resources/read", obj{"uri": "file:///readme"}).fail(t, mrtr.CodeInvalidParams)
	f.call("resources/read", obj{"uri": "db://sales/orders"}).fail(t, mrtr.CodeInvalidParams)
	names := func(key, field string) []string {
		var out []string
		for _, e := range f.call("resources/"+key, obj{}).complete(t)[field].([]any) {
			out = append(out, e.(map[string]any)["name"].(string))
		}
		return out
	}
	assert.Equal(t, []string{"secret"}, names("list", "resources"))
	assert.Equal(t, []string{"text"}, names("templates/list", "resourceTemplates"))
	// The other template still serves, and a removed URI can be added again.
	f.call("resources/read", obj{"uri": "file:///notes.txt"}).complete(t)
	require.NoError(t, f.srv.AddResource(mrtr.Resource{URI: "file:///readme", Name: "readme"}, mrtr.HandlerFunc(func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
		return &mrtr.ReadResourceResult{Contents: []mrtr.ResourceContents{mrtr.TextResource(req.URI, "", "again")}}, nil
	})))
	f.call("resources/read", obj{"uri": "file:///readme"}).complete(t)
}

// A tool that declares an outputSchema has every complete result held to
// it: a mismatch is the server's bug, answered -32603 and logged.
func TestOutputSchemaEnforced(t *testing.T) {
	f := newFixture(t)
	schema := json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"],"additionalProperties":false}`)
	var out any
	h := mrtr.HandlerFunc(func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
		if out == "error" {
			return mrtr.ErrorResult("the tool failed"), nil
		}
		return &mrtr.CallToolResult{Content: []mrtr.Content{mrtr.Text("x")}, StructuredContent: out}, nil
	})
	in := json.RawMessage(`{"type":"object"}`)
	require.NoError(t, f.srv.AddTool(mrtr.Tool{Name: "count", InputSchema: in, OutputSchema: schema}, h))
	require.NoError(t, f.srv.AddTool(mrtr.Tool{Name: "trusted", InputSchema: in, OutputSchema: schema}, h, mrtr.SkipOutputCheck()))

	for _, good := range []any{map[string]int{"n": 3}, json.RawMessage(`{"n":4}`), struct {
		N int `json:"n"`
	}{5}} {
		out = good
		res := f.call("tools/call", obj{"name": "count", "arguments": obj{}}).complete(t)
		assert.NotNil(t, res["structuredContent"])
	}
	for name, bad := range map[string]any{
		"no structuredContent": nil,
		"wrong type":           map[string]any{"n": "three"},
		"missing property":     map[string]any{},
		"extra property":       json.RawMessage(`{"n":1,"secret":"s3cr3t"}`),
		"not an object":        []int{1},
	} {
		out = bad
		e := f.call("tools/call", obj{"name": "count", "arguments": obj{}}).fail(t, mrtr.CodeInternalError)
		assert.NotContains(t, e.Message+string(e.Data), "s3cr3t", "%s: the result does not leak to the client", name)
		assert.True(t, f.logHas("outputSchema", "count"), "%s: the mismatch is logged", name)
	}
	out = "error"
	res := f.call("tools/call", obj{"name": "count", "arguments": obj{}}).complete(t)
	assert.Equal(t, true, res["isError"], "an error result carries no structured content to check")

	out = map[string]any{"n": "three"}
	f.call("tools/call", obj{"name": "trusted", "arguments": obj{}}).complete(t)

	err := f.srv.AddTool(mrtr.Tool{Name: "broken", InputSchema: in, OutputSchema: json.RawMessage(`{"type":5}`)}, h)
	assert.ErrorContains(t, err, "outputSchema")
}

func TestCompletersPerArgument(t *testing.T) {
	f := newFixture(t)
	var others map[string]string
	cities := func(ctx context.Context, arg, value string, ctxArgs map[string]string) ([]string, error) {
		others = ctxArgs
		var out []string
		for _, c := range []string{"paris", "prague", "oslo"} {
			if strings.HasPrefix(c, value) {
				out = append(out, c)
			}
		}
		return out, nil
	}
	failing := func(context.Context, string, string, map[string]string) ([]string, error) {
		return nil, errors.New("backend down")
	}
	caps := func() obj {
		return f.call("server/discover", obj{"_meta": meta(capsNone)}).complete(t)["capabilities"].(map[string]any)
	}
	require.NoError(t, f.srv.AddPrompt(mrtr.Prompt{Name: "plain"}, mrtr.HandlerFunc(noopTool)))
	assert.NotContains(t, caps(), "completions")
	require.NoError(t, f.srv.AddPrompt(mrtr.Prompt{Name: "trip", Arguments: []mrtr.PromptArgument{{Name: "city"}}}, mrtr.HandlerFunc(noopTool),
		mrtr.Completions(map[string]mrtr.Completer{"city": cities, "broken": failing})))
	require.NoError(t, f.srv.AddResourceTemplate(mrtr.ResourceTemplate{URITemplate: "weather://{city}", Name: "weather"}, mrtr.HandlerFunc(noopTool),
		mrtr.Completions(map[string]mrtr.Completer{"city": cities})))
	assert.Contains(t, caps(), "completions", "a completer advertises the capability")

	complete := func(ref obj, arg, value string) reply {
		return f.call("completion/complete", obj{"_meta": meta(capsNone), "ref": ref, "argument": obj{"name": arg, "value": value},
			"context": obj{"arguments": obj{"country": "fr"}}})
	}
	res := complete(obj{"type": "ref/prompt", "name": "trip"}, "city", "p").complete(t)
	assert.Equal(t, obj{"values": []any{"paris", "prague"}}, res["completion"])
	assert.Equal(t, map[string]string{"country": "fr"}, others)
	res = complete(obj{"type": "ref/resource", "uri": "weather://{city}"}, "city", "o").complete(t)
	assert.Equal(t, obj{"values": []any{"oslo"}}, res["completion"])
	// No completer for the argument, or an unknown prompt: nothing to offer.
	res = complete(obj{"type": "ref/prompt", "name": "trip"}, "days", "1").complete(t)
	assert.Equal(t, obj{"values": []any{}}, res["completion"])
	res = complete(obj{"type": "ref/prompt", "name": "nope"}, "city", "p").complete(t)
	assert.Equal(t, obj{"values": []any{}}, res["completion"])
	// A failing completer is the server's problem, not a leak.
	e := complete(obj{"type": "ref/prompt", "name": "trip"}, "broken", "x").fail(t, mrtr.CodeInternalError)
	assert.NotContains(t, e.Message, "backend down")

	assert.True(t, f.srv.RemovePrompt("trip"))
	assert.True(t, f.srv.RemoveResourceTemplate("weather://{city}"))
	assert.NotContains(t, caps(), "completions", "the capability goes with the last completer")
}

func TestRequireScopes(t *testing.T) {
	f := newFixture(t)
	f.addTool("deploy", func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
		return mrtr.TextResult("deployed by " + req.Principal), nil
	}, mrtr.RequireScopes("deploy", "write"))
	f.addTool("open", noopTool)
	withToken := func(scopes ...string) inOpt {
		return func(in *mrtr.Inbound) {
			in.Principal = "ada"
			in.Token = &mrtr.TokenInfo{Subject: "ada", Scopes: scopes}
		}
	}
	call := func(name string, o ...inOpt) reply {
		return f.call("tools/call", obj{"name": name, "arguments": obj{}}, o...)
	}
	for name, o := range map[string][]inOpt{
		"anonymous":    nil,
		"no scopes":    {withToken()},
		"one of two":   {withToken("deploy")},
		"other scopes": {withToken("read", "Deploy", "WRITE")},
	} {
		r := call("deploy", o...)
		e := r.fail(t, mrtr.CodeInvalidRequest)
		assert.True(t, r.Envelope, "%s: refused as a whole request", name)
		assert.Contains(t, e.Message, "insufficient scope", name)
	}
	assert.Equal(t, "deployed by ada", toolText(t, call("deploy", withToken("write", "deploy", "read")).complete(t)))
	call("open").complete(t)
	// A scope check never reveals more than an unknown name would: tools
	// that do not exist are still unknown.
	call("missing", withToken()).fail(t, mrtr.CodeInvalidParams)

	// The error says which scopes to ask for.
	for _, bad := range []string{"", "two words", `q"uote`, "back\\slash", "caf\u00e9"} {
		err := f.srv.AddTool(mrtr.Tool{Name: "bad", InputSchema: json.RawMessage(`{"type":"object"}`)}, mrtr.HandlerFunc(noopTool), mrtr.RequireScopes("ok", bad))
		assert.ErrorContains(t, err, "scope token", "%q", bad)
	}

	resp := f.srv.Handle(context.Background(), inboundFor(t, request("tools/call", obj{"name": "deploy", "arguments": obj{}})))
	require.NotNil(t, resp.Error)
	assert.Equal(t, []string{"deploy", "write"}, resp.Error.Scopes())
}

// inboundFor parses body into an anonymous Inbound.
func inboundFor(t *testing.T, body string) *mrtr.Inbound {
	t.Helper()
	msg, _, perr := mrtr.ParseMessage([]byte(body))
	require.Nil(t, perr)
	return &mrtr.Inbound{Message: msg}
}

// visibilityFixture shows "admin" everything and everyone else only the
// entries whose name does not start with "admin".
func visibilityFixture(t *testing.T) *fixture {
	t.Helper()
	f := newFixture(t, mrtr.WithVisibility(func(principal string, tok *mrtr.TokenInfo, kind, name string) bool {
		return principal == "admin" || !strings.Contains(name, "admin")
	}))
	f.addTool("admin_reset", noopTool)
	f.addTool("echo", noopTool)
	h := mrtr.HandlerFunc(func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
		return &mrtr.ReadResourceResult{Contents: []mrtr.ResourceContents{mrtr.TextResource(req.URI, "", "x")}}, nil
	})
	require.NoError(t, f.srv.AddPrompt(mrtr.Prompt{Name: "admin_prompt"}, mrtr.HandlerFunc(func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
		return &mrtr.GetPromptResult{}, nil
	}), mrtr.Completions(map[string]mrtr.Completer{"x": func(context.Context, string, string, map[string]string) ([]string, error) {
		return []string{"secret-value"}, nil
	}})))
	require.NoError(t, f.srv.AddResource(mrtr.Resource{URI: "file:///admin/keys", Name: "keys"}, h))
	require.NoError(t, f.srv.AddResourceTemplate(mrtr.ResourceTemplate{URITemplate: "admin://{x}", Name: "adm"}, h))
	return f
}

func TestVisibility(t *testing.T) {
	f := visibilityFixture(t)
	names := func(method, field string, o ...inOpt) []string {
		var out []string
		for _, e := range f.call(method, obj{}, o...).complete(t)[field].([]any) {
			m := e.(map[string]any)
			if n, ok := m["name"].(string); ok {
				out = append(out, n)
			}
		}
		return out
	}
	admin := asPrincipal("admin")
	bob := asPrincipal("bob")

	assert.Equal(t, []string{"admin_reset", "echo"}, names("tools/list", "tools", admin))
	assert.Equal(t, []string{"echo"}, names("tools/list", "tools", bob))
	assert.Equal(t, []string{"echo"}, names("tools/list", "tools"), "anonymous")
	assert.Equal(t, []string{"admin_prompt"}, names("prompts/list", "prompts", admin))
	assert.Empty(t, names("prompts/list", "prompts", bob))
	assert.Empty(t, names("resources/list", "resources", bob))
	assert.Empty(t, names("resources/templates/list", "resourceTemplates", bob))

	// Hidden entries are answered exactly as missing ones.
	hidden := f.call("tools/call", obj{"name": "admin_reset", "arguments": obj{}}, bob).fail(t, mrtr.CodeInvalidParams)
	missing := f.call("tools/call", obj{"name": "admin_resex", "arguments": obj{}}, bob).fail(t, mrtr.CodeInvalidParams)
	assert.Equal(t, strings.Replace(missing.Message, "admin_resex", "admin_reset", 1), hidden.Message)
	f.call("tools/call", obj{"name": "admin_reset", "arguments": obj{}}, admin).complete(t)
	f.call("prompts/get", obj{"name": "admin_prompt"}, bob).fail(t, mrtr.CodeInvalidParams)
	f.call("resources/read", obj{"uri": "file:///admin/keys"}, bob).fail(t, mrtr.CodeInvalidParams)
	f.call("resources/read", obj{"uri": "admin://x"}, bob).fail(t, mrtr.CodeInvalidParams)
	f.call("resources/read", obj{"uri": "admin://x"}, admin).complete(t)

	// Completions of a hidden prompt offer nothing.
	comp := func(o inOpt) any {
		return f.call("completion/complete", obj{"ref": obj{"type": "ref/prompt", "name": "admin_prompt"}, "argument": obj{"name": "x", "value": ""}}, o).complete(t)["completion"]
	}
	assert.Equal(t, obj{"values": []any{}}, comp(bob))
	assert.Equal(t, obj{"values": []any{"secret-value"}}, comp(admin))

	// Discovery advertises only the kinds the caller sees, and since lists
	// depend on the caller, results are private to it.
	disc := func(o inOpt) obj { return f.call("server/discover", obj{"_meta": meta(capsNone)}, o).complete(t) }
	assert.Equal(t, obj{"tools": obj{}, "completions": obj{}}, disc(bob)["capabilities"])
	assert.Equal(t, obj{"tools": obj{}, "prompts": obj{}, "resources": obj{}, "completions": obj{}}, disc(admin)["capabilities"])
	assert.Equal(t, "private", f.call("tools/list", obj{}).complete(t)["cacheScope"], "even anonymous lists")
}

// Headers an operator forwards reach handlers and interceptors.
func TestForwardedHeadersReachHandlers(t *testing.T) {
	var seen string
	var fromCall map[string]string
	f := newFixture(t, mrtr.WithInterceptors(func(ctx context.Context, c *mrtr.Call, next func(context.Context) *mrtr.Response) *mrtr.Response {
		fromCall = c.Headers
		return next(ctx)
	}))
	f.addTool("tenant", func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
		seen = req.Header("X-Tenant")
		return mrtr.TextResult(seen), nil
	})
	f.call("tools/call", obj{"name": "tenant", "arguments": obj{}}, func(in *mrtr.Inbound) {
		in.Headers = map[string]string{"x-tenant": "acme"}
	}).complete(t)
	assert.Equal(t, "acme", seen, "names match regardless of case")
	assert.Equal(t, map[string]string{"x-tenant": "acme"}, fromCall)
}
