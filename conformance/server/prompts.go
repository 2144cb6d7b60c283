package main

import (
	"context"

	"github.com/mrtrkit/mrtrkit/mrtr"
)

// promptFunc adapts a function returning a *mrtr.GetPromptResult.
func promptFunc(f func(ctx context.Context, req *mrtr.Request) (*mrtr.GetPromptResult, error)) mrtr.Handler {
	return mrtr.HandlerFunc(func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
		r, err := f(ctx, req)
		if err != nil {
			return nil, err
		}
		return r, nil
	})
}

// userTextPrompt returns a prompt result with one user text message.
func userTextPrompt(text string) *mrtr.GetPromptResult {
	return &mrtr.GetPromptResult{Messages: []mrtr.PromptMessage{{Role: mrtr.RoleUser, Content: mrtr.Text(text)}}}
}

// registerPrompts registers the prompt fixtures.
func (f *fixtures) registerPrompts() error {
	prompts := []struct {
		prompt mrtr.Prompt
		h      mrtr.Handler
	}{
		{
			mrtr.Prompt{Name: "test_simple_prompt", Description: "A simple prompt without arguments"},
			promptFunc(func(context.Context, *mrtr.Request) (*mrtr.GetPromptResult, error) {
				return userTextPrompt("This is a simple prompt for testing."), nil
			}),
		},
		{
			mrtr.Prompt{
				Name:        "test_prompt_with_arguments",
				Description: "A prompt with two required arguments",
				Arguments: []mrtr.PromptArgument{
					{Name: "arg1", Description: "First test argument", Required: true},
					{Name: "arg2", Description: "Second test argument", Required: true},
				},
			},
			promptFunc(func(_ context.Context, req *mrtr.Request) (*mrtr.GetPromptResult, error) {
				a := req.PromptArguments
				return userTextPrompt("Prompt with arguments: arg1='" + a["arg1"] + "', arg2='" + a["arg2"] + "'"), nil
			}),
		},
		{
			mrtr.Prompt{
				Name:        "test_prompt_with_embedded_resource",
				Description: "A prompt that embeds the resource it is given",
				Arguments:   []mrtr.PromptArgument{{Name: "resourceUri", Description: "URI of the resource to embed", Required: true}},
			},
			promptFunc(func(_ context.Context, req *mrtr.Request) (*mrtr.GetPromptResult, error) {
				uri := req.PromptArguments["resourceUri"]
				return &mrtr.GetPromptResult{Messages: []mrtr.PromptMessage{
					{Role: mrtr.RoleUser, Content: &mrtr.EmbeddedResource{Resource: mrtr.TextResource(uri, "text/plain", "Embedded resource content for testing.")}},
					{Role: mrtr.RoleUser, Content: mrtr.Text("Please process the embedded resource above.")},
				}}, nil
			}),
		},
		{
			mrtr.Prompt{Name: "test_prompt_with_image", Description: "A prompt with an image"},
			promptFunc(func(context.Context, *mrtr.Request) (*mrtr.GetPromptResult, error) {
				return &mrtr.GetPromptResult{Messages: []mrtr.PromptMessage{
					{Role: mrtr.RoleUser, Content: &mrtr.ImageContent{Data: pngBase64, MIMEType: "image/png"}},
					{Role: mrtr.RoleUser, Content: mrtr.Text("Please analyze the image above.")},
				}}, nil
			}),
		},
		{
			mrtr.Prompt{Name: "test_input_required_result_prompt", Description: "Asks for context by elicitation (key user_context) before rendering"},
			mrtr.HandlerFunc(contextPrompt),
		},
	}
	for _, p := range prompts {
		if err := f.srv.AddPrompt(p.prompt, p.h); err != nil {
			return err
		}
	}
	return nil
}

// contextPrompt asks the user for context, then renders a prompt with it.
func contextPrompt(_ context.Context, req *mrtr.Request) (mrtr.Result, error) {
	q := question{
		key:      "user_context",
		req:      formRequest("What context should the prompt use?", []string{"context"}, "context", `{"type":"string","description":"Context for the prompt"}`),
		declared: hasForm,
		answer:   formAnswer("user_context", "context"),
	}
	return gather(req, []question{q}, askAll, func(a map[string]string) (mrtr.Result, error) {
		return &mrtr.GetPromptResult{
			Description: "A prompt rendered with the context the user gave",
			Messages: []mrtr.PromptMessage{
				{Role: mrtr.RoleUser, Content: mrtr.Text("Context: " + a["user_context"])},
				{Role: mrtr.RoleUser, Content: mrtr.Text("Please answer with this context in mind.")},
			},
		}, nil
	})
}
