package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/mrtrkit/mrtrkit/client"
	"github.com/mrtrkit/mrtrkit/mrtr"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: clientfixture <server-url>")
		os.Exit(2)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 25*time.Second)
	defer cancel()
	if err := run(ctx, os.Getenv("MCP_CONFORMANCE_SCENARIO"), os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "clientfixture:", err)
		os.Exit(1)
	}
}

// fillDefaults answers a form elicitation with accept, each field set to
// its schema default, or to a plain value of its type when it has none.
func fillDefaults(ctx context.Context, r *mrtr.ElicitRequest) (*mrtr.ElicitResult, error) {
	content := map[string]any{}
	if r.RequestedSchema != nil {
		for name, raw := range r.RequestedSchema.Properties {
			var p struct {
				Type    string          `json:"type"`
				Default json.RawMessage `json:"default"`
				Enum    []any           `json:"enum"`
			}
			if json.Unmarshal(raw, &p) != nil {
				continue
			}
			if len(p.Default) > 0 {
				var v any
				if json.Unmarshal(p.Default, &v) == nil {
					content[name] = v
					continue
				}
			}
			switch {
			case len(p.Enum) > 0:
				content[name] = p.Enum[0]
			case p.Type == "boolean":
				content[name] = true
			case p.Type == "integer", p.Type == "number":
				content[name] = 0
			case p.Type == "string":
				content[name] = ""
			}
		}
	}
	return &mrtr.ElicitResult{Action: mrtr.Accepted, Content: content}, nil
}

func sample(ctx context.Context, r *mrtr.SamplingRequest) (*mrtr.SamplingResult, error) {
	return &mrtr.SamplingResult{Role: mrtr.RoleAssistant, Model: "conformance-model", StopReason: "endTurn",
		Content: []mrtr.SamplingContent{{Type: "text", Text: "ok"}}}, nil
}

func connect(ctx context.Context, url string, opts ...client.HTTPOption) (*client.Client, error) {
	copts := []client.Option{
		client.WithClientInfo("mrtrkit-conformance-client", "1.0.0"),
		client.OnElicitation(fillDefaults),
		client.OnSampling(sample),
		client.WithRoots(mrtr.Root{URI: "file:///tmp", Name: "tmp"}),
	}
	if v := os.Getenv("MCP_CONFORMANCE_PROTOCOL_VERSION"); v != "" {
		copts = append(copts, client.WithProtocolVersion(v))
	}
	return client.Connect(ctx, client.HTTP(url, opts...), copts...)
}

func run(ctx context.Context, scenario, url string) error {
	switch scenario {
	case "initialize", "sse-retry":
		c, err := connect(ctx, url)
		if err != nil {
			return err
		}
		defer c.Close()
		if scenario == "sse-retry" {
			_, err = c.CallTool(ctx, "test_reconnection", nil)
			return err
		}
		_, err = c.ListTools(ctx)
		return err
	case "tools_call":
		return listAndCall(ctx, url, "add_numbers", map[string]any{"a": 5, "b": 3})
	case "elicitation-sep1034-client-defaults":
		return listAndCall(ctx, url, "test_client_elicitation_defaults", map[string]any{})
	case "request-metadata":
		c, err := connect(ctx, url)
		if err != nil {
			return err
		}
		defer c.Close()
		_, err = c.ListTools(ctx)
		return err
	case "sep-2322-client-request-state":
		return requestState(ctx, url)
	case "http-standard-headers":
		return standardHeaders(ctx, url)
	case "http-custom-headers":
		return customHeaders(ctx, url)
	case "http-invalid-tool-headers":
		return listAndCall(ctx, url, "valid_tool", map[string]any{"region": "us-west1"})
	case "json-schema-ref-no-deref":
		c, err := connect(ctx, url)
		if err != nil {
			return err
		}
		defer c.Close()
		_, err = c.ListTools(ctx)
		return err
	case "json-schema-2020-12-preservation":
		return schemaEcho(ctx, url)
	}
	if isAuth(scenario) {
		return authFlow(ctx, scenario, url)
	}
	return fmt.Errorf("unknown scenario %q", scenario)
}

// listAndCall lists the tools and calls one.
func listAndCall(ctx context.Context, url, tool string, args map[string]any, opts ...client.HTTPOption) error {
	c, err := connect(ctx, url, opts...)
	if err != nil {
		return err
	}
	defer c.Close()
	if _, err := c.ListTools(ctx); err != nil {
		return err
	}
	_, err = c.CallTool(ctx, tool, args)
	return err
}

func requestState(ctx context.Context, url string) error {
	c, err := connect(ctx, url)
	if err != nil {
		return err
	}
	defer c.Close()
	if _, err := c.ListTools(ctx); err != nil {
		return err
	}
	for _, name := range []string{"test_mrtr_echo_state", "test_mrtr_no_state", "test_mrtr_unrelated", "test_mrtr_no_result_type"} {
		if _, err := c.CallTool(ctx, name, map[string]any{}); err != nil {
			return err
		}
	}
	return nil
}

func standardHeaders(ctx context.Context, url string) error {
	c, err := connect(ctx, url)
	if err != nil {
		return err
	}
	defer c.Close()
	tools, err := c.ListTools(ctx)
	if err != nil {
		return err
	}
	for _, t := range tools {
		if _, err := c.CallTool(ctx, t.Name, map[string]any{}); err != nil {
			return err
		}
	}
	res, err := c.ListResources(ctx)
	if err != nil {
		return err
	}
	for _, r := range res {
		if _, err := c.ReadResource(ctx, r.URI); err != nil {
			return err
		}
	}
	ps, err := c.ListPrompts(ctx)
	if err != nil {
		return err
	}
	for _, p := range ps {
		if _, err := c.GetPrompt(ctx, p.Name, nil); err != nil {
			return err
		}
	}
	return nil
}

func customHeaders(ctx context.Context, url string) error {
	var sc struct {
		ToolCalls []struct {
			Name      string         `json:"name"`
			Arguments map[string]any `json:"arguments"`
		} `json:"toolCalls"`
	}
	if err := json.Unmarshal([]byte(os.Getenv("MCP_CONFORMANCE_CONTEXT")), &sc); err != nil {
		return fmt.Errorf("MCP_CONFORMANCE_CONTEXT: %w", err)
	}
	c, err := connect(ctx, url)
	if err != nil {
		return err
	}
	defer c.Close()
	if _, err := c.ListTools(ctx); err != nil {
		return err
	}
	for _, call := range sc.ToolCalls {
		if _, err := c.CallTool(ctx, call.Name, call.Arguments); err != nil {
			return err
		}
	}
	return nil
}

func schemaEcho(ctx context.Context, url string) error {
	c, err := connect(ctx, url)
	if err != nil {
		return err
	}
	defer c.Close()
	tools, err := c.ListTools(ctx)
	if err != nil {
		return err
	}
	for _, t := range tools {
		if t.Name == "json_schema_2020_12_tool" {
			_, err := c.CallTool(ctx, "json_schema_echo", map[string]json.RawMessage{"schema": t.InputSchema})
			return err
		}
	}
	return fmt.Errorf("no json_schema_2020_12_tool listed")
}
