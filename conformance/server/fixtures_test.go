package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mrtrkit/mrtrkit/transport/streamablehttp"
)

// These tests drive the fixture server over HTTP the way the conformance
// suite does, so that a broken fixture shows up in `go test` without Node.

type obj = map[string]any

var allCaps = obj{"sampling": obj{}, "elicitation": obj{}, "roots": obj{}}

func newTestServer(t *testing.T) *httptest.Server {
	t.Helper()
	srv, err := newFixtureServer(slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	h, err := streamablehttp.New(srv, streamablehttp.WithPath("/mcp"))
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	return ts
}

// rpc sends one request with the 2026-07-28 headers and _meta and returns
// the HTTP status and the JSON-RPC response (the last message of an SSE
// response).
func rpc(t *testing.T, ts *httptest.Server, method string, params obj, caps obj) (int, obj) {
	t.Helper()
	if params == nil {
		params = obj{}
	}
	params["_meta"] = obj{
		"io.modelcontextprotocol/protocolVersion":    "2026-07-28",
		"io.modelcontextprotocol/clientCapabilities": caps,
	}
	body, _ := json.Marshal(obj{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	req, _ := http.NewRequest(http.MethodPost, ts.URL+"/mcp", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", method)
	if name, ok := params["name"].(string); ok {
		req.Header.Set("Mcp-Name", name)
	}
	if uri, ok := params["uri"].(string); ok {
		req.Header.Set("Mcp-Name", uri)
	}
	resp, err := ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		var last string
		sc := bufio.NewScanner(bytes.NewReader(raw))
		for sc.Scan() {
			if d, ok := strings.CutPrefix(sc.Text(), "data:"); ok {
				last = strings.TrimSpace(d)
			}
		}
		raw = []byte(last)
	}
	var out obj
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("%s: response is not JSON: %q", method, raw)
	}
	return resp.StatusCode, out
}

func result(t *testing.T, resp obj) obj {
	t.Helper()
	r, ok := resp["result"].(obj)
	if !ok {
		t.Fatalf("want a result, got %v", resp)
	}
	return r
}

func call(t *testing.T, ts *httptest.Server, tool string, extra obj, caps obj) obj {
	t.Helper()
	p := obj{"name": tool, "arguments": obj{}}
	for k, v := range extra {
		p[k] = v
	}
	_, resp := rpc(t, ts, "tools/call", p, caps)
	return resp
}

func inputKeys(t *testing.T, r obj) []string {
	t.Helper()
	if r["resultType"] != "input_required" {
		t.Fatalf("want input_required, got %v", r)
	}
	var keys []string
	for k := range r["inputRequests"].(obj) {
		keys = append(keys, k)
	}
	return keys
}

func accept(content obj) obj { return obj{"action": "accept", "content": content} }

func TestToolsList(t *testing.T) {
	ts := newTestServer(t)
	_, resp := rpc(t, ts, "tools/list", nil, allCaps)
	tools := result(t, resp)["tools"].([]any)
	if name := tools[0].(obj)["name"]; name != "test_simple_text" {
		t.Errorf("tools[0] = %v, want test_simple_text", name)
	}
	seen := map[string]bool{}
	for _, raw := range tools {
		tool := raw.(obj)
		name := tool["name"].(string)
		seen[name] = true
		if tool["description"] == nil || tool["inputSchema"] == nil {
			t.Errorf("tool %s lacks a description or an inputSchema", name)
		}
	}
	for _, want := range []string{"test_missing_capability", "test_streaming_elicitation", "test_logging_tool", "test_x_mcp_header", "json_schema_2020_12_tool"} {
		if !seen[want] {
			t.Errorf("tool %s is not listed", want)
		}
	}
}

func TestJSONSchemaFixtureVerbatim(t *testing.T) {
	ts := newTestServer(t)
	_, resp := rpc(t, ts, "tools/list", nil, allCaps)
	for _, raw := range result(t, resp)["tools"].([]any) {
		tool := raw.(obj)
		if tool["name"] != "json_schema_2020_12_tool" {
			continue
		}
		got, _ := json.Marshal(tool["inputSchema"])
		var want any
		_ = json.Unmarshal(jsonSchema202012Fixture, &want)
		wantB, _ := json.Marshal(want)
		if !bytes.Equal(got, wantB) {
			t.Errorf("inputSchema changed:\n got %s\nwant %s", got, wantB)
		}
		return
	}
	t.Fatal("json_schema_2020_12_tool not listed")
}

func TestPromptsHaveDescriptions(t *testing.T) {
	ts := newTestServer(t)
	_, resp := rpc(t, ts, "prompts/list", nil, allCaps)
	for _, raw := range result(t, resp)["prompts"].([]any) {
		if p := raw.(obj); p["description"] == nil || p["description"] == "" {
			t.Errorf("prompt %v has no description", p["name"])
		}
	}
}

func TestElicitationStaticAsk(t *testing.T) {
	ts := newTestServer(t)
	const tool = "test_input_required_result_elicitation"

	r := result(t, call(t, ts, tool, nil, allCaps))
	if keys := inputKeys(t, r); len(keys) != 1 || keys[0] != "user_name" {
		t.Fatalf("asked %v, want [user_name]", keys)
	}
	// An answer sent before being asked completes the call.
	r = result(t, call(t, ts, tool, obj{"inputResponses": obj{"user_name": accept(obj{"name": "Alice"}), "extra": accept(obj{})}}, allCaps))
	if r["resultType"] != "complete" {
		t.Fatalf("want complete, got %v", r)
	}
	// Answers to other keys only are asked again.
	r = result(t, call(t, ts, tool, obj{"inputResponses": obj{"wrong_key": accept(obj{"name": "Alice"})}}, allCaps))
	inputKeys(t, r)
	// A malformed answer is an error.
	resp := call(t, ts, tool, obj{"inputResponses": obj{"user_name": 12345}}, allCaps)
	if resp["error"] == nil {
		t.Fatalf("want an error for a malformed answer, got %v", resp)
	}
}

func TestMultiRound(t *testing.T) {
	ts := newTestServer(t)
	const tool = "test_input_required_result_multi_round"
	r1 := result(t, call(t, ts, tool, nil, allCaps))
	if keys := inputKeys(t, r1); len(keys) != 1 || keys[0] != "step1" {
		t.Fatalf("round 1 asked %v", keys)
	}
	r2 := result(t, call(t, ts, tool, obj{"requestState": r1["requestState"], "inputResponses": obj{"step1": accept(obj{"name": "Alice"})}}, allCaps))
	if keys := inputKeys(t, r2); len(keys) != 1 || keys[0] != "step2" {
		t.Fatalf("round 2 asked %v", keys)
	}
	if r2["requestState"] == r1["requestState"] {
		t.Fatal("requestState did not change between rounds")
	}
	r3 := result(t, call(t, ts, tool, obj{"requestState": r2["requestState"], "inputResponses": obj{"step2": accept(obj{"color": "blue"})}}, allCaps))
	text := r3["content"].([]any)[0].(obj)["text"].(string)
	if r3["resultType"] != "complete" || !strings.Contains(text, "Alice") || !strings.Contains(text, "blue") {
		t.Fatalf("round 3: %v", r3)
	}
}

func TestTamperedState(t *testing.T) {
	ts := newTestServer(t)
	const tool = "test_input_required_result_tampered_state"
	r := result(t, call(t, ts, tool, nil, allCaps))
	answers := obj{"confirm": accept(obj{"ok": true})}
	resp := call(t, ts, tool, obj{"requestState": r["requestState"].(string) + "-TAMPERED", "inputResponses": answers}, allCaps)
	if resp["error"] == nil {
		t.Fatalf("tampered state accepted: %v", resp)
	}
	done := result(t, call(t, ts, tool, obj{"requestState": r["requestState"], "inputResponses": answers}, allCaps))
	if done["resultType"] != "complete" {
		t.Fatalf("untampered retry: %v", done)
	}
}

func TestCapabilitiesAskOnlyDeclared(t *testing.T) {
	ts := newTestServer(t)
	r := result(t, call(t, ts, "test_input_required_result_capabilities", nil, obj{"sampling": obj{}}))
	if keys := inputKeys(t, r); len(keys) != 1 || keys[0] != "greeting" {
		t.Fatalf("asked %v, want [greeting]", keys)
	}
}

func TestMissingCapability(t *testing.T) {
	ts := newTestServer(t)
	status, resp := rpc(t, ts, "tools/call", obj{"name": "test_missing_capability", "arguments": obj{}}, obj{})
	e, _ := resp["error"].(obj)
	if status != http.StatusBadRequest || e == nil || e["code"] != float64(-32021) {
		t.Fatalf("status %d, response %v; want 400 with -32021", status, resp)
	}
	if _, ok := e["data"].(obj)["requiredCapabilities"].(obj)["sampling"].(obj); !ok {
		t.Fatalf("requiredCapabilities does not name sampling: %v", e["data"])
	}
	r := result(t, call(t, ts, "test_missing_capability", nil, obj{"sampling": obj{}}))
	inputKeys(t, r)
}

func TestTriggerKeepsFirstTool(t *testing.T) {
	ts := newTestServer(t)
	for i := 0; i < 2; i++ {
		call(t, ts, "test_trigger_tool_change", nil, allCaps)
		_, resp := rpc(t, ts, "tools/list", nil, allCaps)
		tools := result(t, resp)["tools"].([]any)
		if name := tools[0].(obj)["name"]; name != "test_simple_text" {
			t.Fatalf("after trigger %d, tools[0] = %v", i+1, name)
		}
		last := tools[len(tools)-1].(obj)["name"]
		if (i == 0) != (last == transientTool) {
			t.Fatalf("after trigger %d, last tool is %v", i+1, last)
		}
	}
}

func TestResources(t *testing.T) {
	ts := newTestServer(t)
	_, resp := rpc(t, ts, "resources/read", obj{"uri": "test://template/123/data"}, allCaps)
	c := result(t, resp)["contents"].([]any)[0].(obj)
	if c["mimeType"] != "application/json" || !strings.Contains(c["text"].(string), "123") {
		t.Fatalf("template read: %v", c)
	}
	_, resp = rpc(t, ts, "resources/read", obj{"uri": "test://nonexistent"}, allCaps)
	e, _ := resp["error"].(obj)
	if e == nil || e["code"] != float64(-32602) || e["data"].(obj)["uri"] != "test://nonexistent" {
		t.Fatalf("unknown uri: %v", resp)
	}
}
