package main

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/mrtrkit/mrtrkit/mrtr"
)

// readFunc adapts a function returning a *mrtr.ReadResourceResult.
func readFunc(f func(ctx context.Context, req *mrtr.Request) (*mrtr.ReadResourceResult, error)) mrtr.Handler {
	return mrtr.HandlerFunc(func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
		r, err := f(ctx, req)
		if err != nil {
			return nil, err
		}
		return r, nil
	})
}

// staticContents returns a handler that always reads c.
func staticContents(c mrtr.ResourceContents) mrtr.Handler {
	return readFunc(func(context.Context, *mrtr.Request) (*mrtr.ReadResourceResult, error) {
		return &mrtr.ReadResourceResult{Contents: []mrtr.ResourceContents{c}}, nil
	})
}

// registerResources registers the resources and the resource template.
// An unknown URI is answered by the framework with -32602 and data.uri.
func (f *fixtures) registerResources() error {
	resources := []struct {
		res mrtr.Resource
		h   mrtr.Handler
	}{
		{
			mrtr.Resource{URI: "test://static-text", Name: "static-text", Description: "A static text resource", MIMEType: "text/plain"},
			staticContents(mrtr.TextResource("test://static-text", "text/plain", "This is the content of the static text resource.")),
		},
		{
			mrtr.Resource{URI: "test://static-binary", Name: "static-binary", Description: "A static binary resource (1x1 PNG)", MIMEType: "image/png"},
			staticContents(mrtr.BlobResource("test://static-binary", "image/png", pngBase64)),
		},
		{
			mrtr.Resource{URI: "test://watched-resource", Name: "watched-resource", Description: "A resource clients may watch for updates", MIMEType: "text/plain"},
			staticContents(mrtr.TextResource("test://watched-resource", "text/plain", "Watched resource content.")),
		},
	}
	for _, r := range resources {
		if err := f.srv.AddResource(r.res, r.h); err != nil {
			return err
		}
	}
	return f.srv.AddResourceTemplate(mrtr.ResourceTemplate{
		URITemplate: "test://template/{id}/data",
		Name:        "template-data",
		Description: "JSON data for the given id",
		MIMEType:    "application/json",
	}, readFunc(func(_ context.Context, req *mrtr.Request) (*mrtr.ReadResourceResult, error) {
		id := req.Vars["id"]
		b, err := json.Marshal(map[string]string{"id": id, "templateTest": "true", "data": "Data for ID: " + id})
		if err != nil {
			return nil, err
		}
		return &mrtr.ReadResourceResult{Contents: []mrtr.ResourceContents{
			mrtr.TextResource(req.URI, "application/json", string(b)),
		}}, nil
	}))
}

// arg1Values are the completion candidates of test_prompt_with_arguments's
// arg1.
var arg1Values = []string{"paris", "park", "party", "testValue1", "test-value", "tokyo"}

// complete answers completion/complete: prefix matches for
// test_prompt_with_arguments's arg1 and the template's id, nothing
// otherwise.
func complete(_ context.Context, req *mrtr.CompleteRequest) (*mrtr.Completion, error) {
	var candidates []string
	switch {
	case req.Ref.Type == "ref/prompt" && req.Ref.Name == "test_prompt_with_arguments" && req.Argument.Name == "arg1":
		candidates = arg1Values
	case req.Ref.Type == "ref/resource" && req.Ref.URI == "test://template/{id}/data" && req.Argument.Name == "id":
		candidates = []string{"1", "2", "3", "123"}
	}
	values := []string{}
	for _, c := range candidates {
		if strings.HasPrefix(strings.ToLower(c), strings.ToLower(req.Argument.Value)) {
			values = append(values, c)
		}
	}
	total := len(values)
	return &mrtr.Completion{Values: values, Total: &total}, nil
}
