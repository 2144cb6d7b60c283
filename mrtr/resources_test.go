package mrtr_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mrtrkit/mrtrkit/discover"
	"github.com/mrtrkit/mrtrkit/mrtr"
)

// readFixture serves file:///readme exactly, db://{schema}/{table} and
// file:///{name}.txt as templates, and file:///secret through one
// elicitation round.
func readFixture(t *testing.T, cache discover.CachePolicy) (*fixture, *[]*mrtr.Request) {
	desc := testDesc()
	desc.Cache = cache
	f := newFixtureDesc(t, desc)
	var got []*mrtr.Request
	h := mrtr.HandlerFunc(func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
		got = append(got, req)
		if req.URI == "file:///secret" {
			if ans, ok := req.Responses.Elicitation("ok"); !ok || !ans.Accepted() {
				return mrtr.Ask("ok", &mrtr.ElicitRequest{Message: "Reveal?", RequestedSchema: &mrtr.ElicitSchema{Type: "object", Properties: map[string]json.RawMessage{}}}), nil
			}
		}
		return &mrtr.ReadResourceResult{Contents: []mrtr.ResourceContents{mrtr.TextResource(req.URI, "text/plain", "body of "+req.URI)}}, nil
	})
	require.NoError(t, f.srv.AddResource(mrtr.Resource{URI: "file:///readme", Name: "readme", MIMEType: "text/plain"}, h))
	require.NoError(t, f.srv.AddResource(mrtr.Resource{URI: "file:///secret", Name: "secret"}, h))
	require.NoError(t, f.srv.AddResourceTemplate(mrtr.ResourceTemplate{URITemplate: "db://{schema}/{table}", Name: "table"}, h))
	require.NoError(t, f.srv.AddResourceTemplate(mrtr.ResourceTemplate{URITemplate: "file:///{name}.txt", Name: "text"}, h))
	return f, &got
}

func TestReadExactResource(t *testing.T) {
	f, got := readFixture(t, discover.CachePolicy{})
	res := f.call("resources/read", obj{"uri": "file:///readme"}).complete(t)
	assert.Equal(t, []any{obj{"uri": "file:///readme", "mimeType": "text/plain", "text": "body of file:///readme"}}, res["contents"])
	assert.Equal(t, float64(time.Minute.Milliseconds()), res["ttlMs"])
	assert.Equal(t, "public", res["cacheScope"])
	assert.Contains(t, res, "_meta")
	require.Len(t, *got, 1)
	req := (*got)[0]
	assert.Equal(t, "resources/read", req.Method)
	assert.Equal(t, "file:///readme", req.URI)
	assert.Nil(t, req.Vars)
	assert.Equal(t, "{}", string(req.Arguments))
}

func TestReadTemplate(t *testing.T) {
	f, got := readFixture(t, discover.CachePolicy{})
	f.call("resources/read", obj{"uri": "db://sales/orders"}).complete(t)
	assert.Equal(t, map[string]string{"schema": "sales", "table": "orders"}, (*got)[0].Vars)
	assert.Equal(t, `{"schema":"sales","table":"orders"}`, string((*got)[0].Arguments), "the matched values, one JSON object in name order")
	f.call("resources/read", obj{"uri": "file:///notes.txt"}).complete(t)
	assert.Equal(t, map[string]string{"name": "notes"}, (*got)[1].Vars)
	// The literal parts of a template are not patterns.
	f.call("resources/read", obj{"uri": "file:///notesXtxt"}).fail(t, mrtr.CodeInvalidParams)
}

func TestReadNotFound(t *testing.T) {
	f, got := readFixture(t, discover.CachePolicy{})
	for uri, near := range map[string]string{"file:///nope": "", "db://sales": "", "db://sales/orders/2024": "", "db:///orders": "",
		"file:///readme/": " (did you mean file:///readme?)", "FILE:///readme": " (did you mean file:///readme?)"} {
		r := f.call("resources/read", obj{"uri": uri})
		e := r.fail(t, mrtr.CodeInvalidParams)
		assert.False(t, r.Envelope)
		assert.Equal(t, "Resource not found"+near, e.Message, "the nearest resource the caller sees, if any")
		assert.Equal(t, obj{"uri": uri}, e.dataJSON(t))
	}
	assert.Empty(t, *got)
	for _, p := range []obj{{}, {"uri": ""}, {"uri": 5}} {
		e := f.call("resources/read", p).fail(t, mrtr.CodeInvalidParams)
		assert.Contains(t, e.Message, "params.uri")
	}
}

func TestReadCacheHint(t *testing.T) {
	f, _ := readFixture(t, discover.CachePolicy{Read: 5 * time.Second, Scope: discover.Private})
	res := f.call("resources/read", obj{"uri": "file:///readme"}).complete(t)
	assert.Equal(t, float64(5000), res["ttlMs"])
	assert.Equal(t, "private", res["cacheScope"])

	g, _ := readFixture(t, discover.CachePolicy{Read: discover.NoCache})
	res = g.call("resources/read", obj{"uri": "file:///readme"}).complete(t)
	assert.Equal(t, float64(0), res["ttlMs"])
}

func TestReadAfterInputRoundIsNotCacheable(t *testing.T) {
	f, got := readFixture(t, discover.CachePolicy{Read: time.Hour})
	res, tok := f.call("resources/read", obj{"uri": "file:///secret"}).inputRequired(t)
	assert.NotContains(t, res, "ttlMs")
	assert.NotContains(t, res, "cacheScope")
	res = f.call("resources/read", obj{"uri": "file:///secret", "requestState": tok, "inputResponses": obj{"ok": rawJSON(`{"action":"accept","content":{}}`)}}).complete(t)
	assert.Equal(t, float64(0), res["ttlMs"])
	assert.Equal(t, "public", res["cacheScope"])
	assert.Equal(t, 1, (*got)[1].Round)

	// A state for one URI does not open for another.
	r := f.call("resources/read", obj{"uri": "file:///readme", "requestState": tok})
	requireInvalidState(t, r, mrtr.ReasonInvalidRequestState)
}

func TestReadResultRendering(t *testing.T) {
	f := newFixture(t)
	require.NoError(t, f.srv.AddResource(mrtr.Resource{URI: "file:///bin", Name: "bin"}, mrtr.HandlerFunc(func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
		return &mrtr.ReadResourceResult{Contents: []mrtr.ResourceContents{mrtr.BlobResource(req.URI, "application/octet-stream", "AAE=")}}, nil
	})))
	require.NoError(t, f.srv.AddResource(mrtr.Resource{URI: "file:///empty", Name: "empty"}, mrtr.HandlerFunc(func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
		return &mrtr.ReadResourceResult{}, nil
	})))
	res := f.call("resources/read", obj{"uri": "file:///bin"}).complete(t)
	assert.Equal(t, []any{obj{"uri": "file:///bin", "mimeType": "application/octet-stream", "blob": "AAE="}}, res["contents"])
	res = f.call("resources/read", obj{"uri": "file:///empty"}).complete(t)
	assert.Equal(t, []any{}, res["contents"])
}

func TestReadWithMirror(t *testing.T) {
	f, _ := readFixture(t, discover.CachePolicy{})
	f.call("resources/read", obj{"uri": "db://a/b"}, withMirror(mirror("resources/read", "db://a/b"))).complete(t)
	f.call("resources/read", obj{"uri": "db://a/b"}, withMirror(mirror("resources/read", "db://a/c"))).fail(t, mrtr.CodeHeaderMismatch)
	f.call("resources/read", obj{"uri": "db://a/b"}, withMirror(mirror("resources/read", ""))).fail(t, mrtr.CodeHeaderMismatch)
}

func TestPromptsGet(t *testing.T) {
	f := newFixture(t)
	var got *mrtr.Request
	require.NoError(t, f.srv.AddPrompt(mrtr.Prompt{Name: "trip", Arguments: []mrtr.PromptArgument{{Name: "city", Required: true}, {Name: "days"}}},
		mrtr.HandlerFunc(func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
			got = req
			return &mrtr.GetPromptResult{Description: "Plan a trip", Messages: []mrtr.PromptMessage{
				{Role: mrtr.RoleUser, Content: mrtr.Text("Plan " + req.PromptArguments["city"])},
				{Role: mrtr.RoleAssistant, Content: &mrtr.ImageContent{Data: "AAE=", MIMEType: "image/png"}},
				{Role: mrtr.RoleUser, Content: &mrtr.ResourceLink{URI: "file:///map", Name: "map"}},
				{Role: mrtr.RoleUser, Content: &mrtr.EmbeddedResource{Resource: mrtr.TextResource("file:///x", "", "x")}},
				{Role: mrtr.RoleUser, Content: &mrtr.AudioContent{Data: "AAE=", MIMEType: "audio/wav"}},
			}}, nil
		})))
	require.NoError(t, f.srv.AddPrompt(mrtr.Prompt{Name: "empty"}, mrtr.HandlerFunc(func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
		return &mrtr.GetPromptResult{}, nil
	})))

	res := f.call("prompts/get", obj{"name": "trip", "arguments": obj{"city": "Oslo"}}).complete(t)
	assert.Equal(t, "Plan a trip", res["description"])
	assert.Equal(t, []any{
		obj{"role": "user", "content": obj{"type": "text", "text": "Plan Oslo"}},
		obj{"role": "assistant", "content": obj{"type": "image", "data": "AAE=", "mimeType": "image/png"}},
		obj{"role": "user", "content": obj{"type": "resource_link", "uri": "file:///map", "name": "map"}},
		obj{"role": "user", "content": obj{"type": "resource", "resource": obj{"uri": "file:///x", "text": "x"}}},
		obj{"role": "user", "content": obj{"type": "audio", "data": "AAE=", "mimeType": "audio/wav"}},
	}, res["messages"])
	assert.NotContains(t, res, "ttlMs")
	assert.Equal(t, map[string]string{"city": "Oslo"}, got.PromptArguments)
	assert.Equal(t, `{"city":"Oslo"}`, string(got.Arguments), "the prompt arguments as sent")
	assert.Equal(t, "trip", got.Name)

	res = f.call("prompts/get", obj{"name": "empty"}).complete(t)
	assert.Equal(t, []any{}, res["messages"])

	for name, p := range map[string]obj{
		"missing required argument": {"name": "trip", "arguments": obj{"days": "3"}},
		"no arguments":              {"name": "trip"},
		"number argument":           {"name": "trip", "arguments": obj{"city": 5}},
		"case-variant arguments":    {"name": "trip", "arguments": obj{"city": "Oslo", "CITY": "Rome"}},
		"lone surrogate":            {"name": "trip", "arguments": rawJSON(`{"city":"\ud800"}`)},
		"array arguments":           {"name": "trip", "arguments": []any{"Oslo"}},
		"unknown prompt":            {"name": "nope"},
		"no name":                   {},
	} {
		t.Run(name, func(t *testing.T) {
			got = nil
			r := f.call("prompts/get", p)
			r.fail(t, mrtr.CodeInvalidParams)
			assert.False(t, r.Envelope)
			assert.Nil(t, got, "the handler ran")
		})
	}
}
