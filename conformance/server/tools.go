package main

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/mrtrkit/mrtrkit/mrtr"
)

// Base64 media returned by the content fixtures: a 1x1 PNG and a tiny WAV.
const (
	pngBase64 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
	wavBase64 = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA="
)

// emptySchema is the input schema of tools that take no arguments.
var emptySchema = json.RawMessage(`{"type":"object","properties":{}}`)

// Names of the transient items the list-change triggers add and remove.
const (
	transientTool   = "test_transient_tool"
	transientPrompt = "test_transient_prompt"
)

// toolFunc adapts a function returning a *mrtr.CallToolResult.
func toolFunc(f func(ctx context.Context, req *mrtr.Request) (*mrtr.CallToolResult, error)) mrtr.Handler {
	return mrtr.HandlerFunc(func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
		r, err := f(ctx, req)
		if err != nil {
			return nil, err
		}
		return r, nil
	})
}

// textResult returns a complete tool result with one text block.
func textResult(s string) *mrtr.CallToolResult {
	return &mrtr.CallToolResult{Content: []mrtr.Content{mrtr.Text(s)}}
}

// staticText returns a handler that always answers with text.
func staticText(s string) mrtr.Handler {
	return toolFunc(func(context.Context, *mrtr.Request) (*mrtr.CallToolResult, error) {
		return textResult(s), nil
	})
}

// sleep waits for d or until ctx is done.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// registerTools registers the tools that complete in one round.
// test_simple_text comes first: http-header-validation calls tools[0] with
// no arguments.
func (f *fixtures) registerTools() error {
	tools := []struct {
		tool mrtr.Tool
		h    mrtr.Handler
	}{
		{
			mrtr.Tool{Name: "test_simple_text", Description: "Returns a simple text response", InputSchema: emptySchema},
			staticText("This is a simple text response for testing."),
		},
		{
			mrtr.Tool{Name: "test_image_content", Description: "Returns an image (1x1 PNG)", InputSchema: emptySchema},
			toolFunc(func(context.Context, *mrtr.Request) (*mrtr.CallToolResult, error) {
				return &mrtr.CallToolResult{Content: []mrtr.Content{
					&mrtr.ImageContent{Data: pngBase64, MIMEType: "image/png"},
				}}, nil
			}),
		},
		{
			mrtr.Tool{Name: "test_audio_content", Description: "Returns audio (a short WAV)", InputSchema: emptySchema},
			toolFunc(func(context.Context, *mrtr.Request) (*mrtr.CallToolResult, error) {
				return &mrtr.CallToolResult{Content: []mrtr.Content{
					&mrtr.AudioContent{Data: wavBase64, MIMEType: "audio/wav"},
				}}, nil
			}),
		},
		{
			mrtr.Tool{Name: "test_embedded_resource", Description: "Returns an embedded text resource", InputSchema: emptySchema},
			toolFunc(func(context.Context, *mrtr.Request) (*mrtr.CallToolResult, error) {
				return &mrtr.CallToolResult{Content: []mrtr.Content{
					&mrtr.EmbeddedResource{Resource: mrtr.TextResource("test://embedded-resource", "text/plain", "This is an embedded resource content.")},
				}}, nil
			}),
		},
		{
			mrtr.Tool{Name: "test_multiple_content_types", Description: "Returns text, image and an embedded resource", InputSchema: emptySchema},
			toolFunc(func(context.Context, *mrtr.Request) (*mrtr.CallToolResult, error) {
				return &mrtr.CallToolResult{Content: []mrtr.Content{
					mrtr.Text("Multiple content types test:"),
					&mrtr.ImageContent{Data: pngBase64, MIMEType: "image/png"},
					&mrtr.EmbeddedResource{Resource: mrtr.TextResource("test://mixed-content-resource", "application/json", `{"test":"data","value":123}`)},
				}}, nil
			}),
		},
		{
			mrtr.Tool{Name: "test_tool_with_logging", Description: "Sends three log messages while it runs (when the request sets a log level)", InputSchema: emptySchema},
			toolFunc(logThree),
		},
		{
			mrtr.Tool{Name: "test_logging_tool", Description: "Tries to log; the framework drops the message unless the request set a log level", InputSchema: emptySchema},
			toolFunc(func(ctx context.Context, req *mrtr.Request) (*mrtr.CallToolResult, error) {
				if err := req.Log(mrtr.LevelInfo, "conformance", "test_logging_tool ran"); err != nil {
					return nil, err
				}
				return textResult("Logging tool completed."), nil
			}),
		},
		{
			mrtr.Tool{Name: "test_tool_with_progress", Description: "Reports progress 0, 50 and 100 of 100, then completes", InputSchema: emptySchema},
			toolFunc(progressThree),
		},
		{
			mrtr.Tool{Name: "test_error_handling", Description: "Always fails with a tool error (isError)", InputSchema: emptySchema},
			toolFunc(func(context.Context, *mrtr.Request) (*mrtr.CallToolResult, error) {
				return mrtr.ErrorResult("This tool intentionally returns an error for testing"), nil
			}),
		},
		{
			mrtr.Tool{Name: "test_streaming_elicitation", Description: "Completes with a plain result; never sends a request on the response stream", InputSchema: emptySchema},
			staticText("Streaming elicitation test completed without server-to-client requests."),
		},
		{
			mrtr.Tool{Name: "json_schema_2020_12_tool", Description: "Tool with JSON Schema 2020-12 features", InputSchema: jsonSchema202012Fixture},
			toolFunc(func(ctx context.Context, req *mrtr.Request) (*mrtr.CallToolResult, error) {
				return textResult("Received arguments: " + string(req.Arguments)), nil
			}),
		},
		{
			mrtr.Tool{Name: "test_x_mcp_header", Description: "Echoes its region argument, which is mirrored in the Mcp-Param-Region header", InputSchema: xMCPHeaderSchema},
			toolFunc(echoRegion),
		},
		{
			mrtr.Tool{Name: "test_trigger_tool_change", Description: "Adds or removes a transient tool, changing the tool list", InputSchema: emptySchema},
			toolFunc(f.toggleTool),
		},
		{
			mrtr.Tool{Name: "test_trigger_prompt_change", Description: "Adds or removes a transient prompt, changing the prompt list", InputSchema: emptySchema},
			toolFunc(f.togglePrompt),
		},
	}
	for _, t := range tools {
		if err := f.srv.AddTool(t.tool, t.h); err != nil {
			return err
		}
	}
	return nil
}

// logThree sends three info messages about 50 ms apart.
func logThree(ctx context.Context, req *mrtr.Request) (*mrtr.CallToolResult, error) {
	for i, msg := range []string{"Tool execution started", "Tool processing data", "Tool execution completed"} {
		if i > 0 {
			if err := sleep(ctx, 50*time.Millisecond); err != nil {
				return nil, err
			}
		}
		if err := req.Log(mrtr.LevelInfo, "conformance", msg); err != nil {
			return nil, err
		}
	}
	return textResult("Tool with logging executed successfully."), nil
}

// progressThree reports progress 0, 50 and 100 of 100 about 50 ms apart.
func progressThree(ctx context.Context, req *mrtr.Request) (*mrtr.CallToolResult, error) {
	total := 100.0
	for i, p := range []float64{0, 50, 100} {
		if i > 0 {
			if err := sleep(ctx, 50*time.Millisecond); err != nil {
				return nil, err
			}
		}
		if err := req.Progress(p, &total, fmt.Sprintf("step %d of 3", i+1)); err != nil {
			return nil, err
		}
	}
	return textResult("Tool with progress executed successfully."), nil
}

// xMCPHeaderSchema declares region as mirrored in Mcp-Param-Region.
var xMCPHeaderSchema = json.RawMessage(`{"type":"object","properties":{` +
	`"region":{"type":"string","description":"Region to query; mirrored in the Mcp-Param-Region header","x-mcp-header":"Region"},` +
	`"level":{"type":"integer","description":"Verbosity level"}},` +
	`"required":["region"]}`)

func echoRegion(ctx context.Context, req *mrtr.Request) (*mrtr.CallToolResult, error) {
	var args struct {
		Region *string `json:"region"`
		Level  *int64  `json:"level"`
	}
	if err := json.Unmarshal(req.Arguments, &args); err != nil {
		return mrtr.ErrorResult("invalid arguments: " + err.Error()), nil
	}
	if args.Region == nil {
		return mrtr.ErrorResult("region is required"), nil
	}
	return &mrtr.CallToolResult{
		Content:           []mrtr.Content{mrtr.Text("region=" + *args.Region)},
		StructuredContent: map[string]any{"region": *args.Region},
	}, nil
}

// toggleTool adds the transient tool when it is absent and removes it
// when it is present. It is registered last, so tools[0] never shifts.
func (f *fixtures) toggleTool(context.Context, *mrtr.Request) (*mrtr.CallToolResult, error) {
	f.toggleMu.Lock()
	defer f.toggleMu.Unlock()
	if f.srv.RemoveTool(transientTool) {
		return textResult("Removed tool " + transientTool), nil
	}
	err := f.srv.AddTool(mrtr.Tool{
		Name:        transientTool,
		Description: "A tool added by test_trigger_tool_change",
		InputSchema: emptySchema,
	}, staticText("transient tool called"))
	if err != nil {
		return nil, err
	}
	return textResult("Added tool " + transientTool), nil
}

// togglePrompt adds or removes the transient prompt, like toggleTool.
func (f *fixtures) togglePrompt(context.Context, *mrtr.Request) (*mrtr.CallToolResult, error) {
	f.toggleMu.Lock()
	defer f.toggleMu.Unlock()
	if f.srv.RemovePrompt(transientPrompt) {
		return textResult("Removed prompt " + transientPrompt), nil
	}
	err := f.srv.AddPrompt(mrtr.Prompt{
		Name:        transientPrompt,
		Description: "A prompt added by test_trigger_prompt_change",
	}, promptFunc(func(context.Context, *mrtr.Request) (*mrtr.GetPromptResult, error) {
		return userTextPrompt("This is a transient prompt."), nil
	}))
	if err != nil {
		return nil, err
	}
	return textResult("Added prompt " + transientPrompt), nil
}
