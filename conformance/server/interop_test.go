package main

import (
	"testing"
)

// These tests drive the interop fixtures over the 2026-07-28 wire; the
// interop suites (conformance/interop) drive them with real 2025-11-25
// clients.

func TestThreeRoundsAsksInTurn(t *testing.T) {
	ts := newTestServer(t)
	want := []struct{ key, method string }{
		{"elicitation", "elicitation/create"},
		{"sampling", "sampling/createMessage"},
		{"roots", "roots/list"},
	}
	answers := map[string]any{
		"elicitation": accept(obj{"name": "Alice"}),
		"sampling":    obj{"role": "assistant", "model": "m", "content": obj{"type": "text", "text": "Paris"}},
		"roots":       obj{"roots": []any{obj{"uri": "file:///tmp/r", "name": "r"}}},
	}
	extra := obj{}
	for i, w := range want {
		r := result(t, call(t, ts, threeRoundsTool, extra, allCaps))
		keys := inputKeys(t, r)
		if len(keys) != 1 || keys[0] != w.key {
			t.Fatalf("round %d asked %v, want [%s]", i+1, keys, w.key)
		}
		if m := r["inputRequests"].(obj)[w.key].(obj)["method"]; m != w.method {
			t.Fatalf("round %d asked by %v, want %s", i+1, m, w.method)
		}
		extra = obj{"inputResponses": obj{w.key: answers[w.key]}, "requestState": r["requestState"]}
	}
	r := result(t, call(t, ts, threeRoundsTool, extra, allCaps))
	if r["resultType"] != "complete" {
		t.Fatalf("want complete, got %v", r)
	}
	text := r["content"].([]any)[0].(obj)["text"]
	if text != "Three rounds completed: elicitation=Alice; sampling=Paris; roots=file:///tmp/r" {
		t.Errorf("text %q", text)
	}
}

func TestLegTimeoutToolAsksOnce(t *testing.T) {
	ts := newTestServer(t)
	r := result(t, call(t, ts, legTimeoutTool, nil, allCaps))
	if keys := inputKeys(t, r); len(keys) != 1 || keys[0] != "late" {
		t.Fatalf("asked %v, want [late]", keys)
	}
	if msg := r["inputRequests"].(obj)["late"].(obj)["params"].(obj)["message"]; msg != legTimeoutMessage {
		t.Errorf("message %v", msg)
	}
}

func TestInputRequiredResource(t *testing.T) {
	ts := newTestServer(t)
	_, resp := rpc(t, ts, "resources/list", nil, allCaps)
	resources := result(t, resp)["resources"].([]any)
	// The suite's caching scenario reads resources[0]: it must be a plain one.
	if uri := resources[0].(obj)["uri"]; uri != "test://static-text" {
		t.Errorf("resources[0] = %v, want test://static-text", uri)
	}
	_, resp = rpc(t, ts, "resources/read", obj{"uri": inputResourceURI}, allCaps)
	r := result(t, resp)
	if keys := inputKeys(t, r); len(keys) != 1 || keys[0] != "client_roots" {
		t.Fatalf("asked %v, want [client_roots]", keys)
	}
	_, resp = rpc(t, ts, "resources/read", obj{
		"uri":            inputResourceURI,
		"inputResponses": obj{"client_roots": obj{"roots": []any{obj{"uri": "file:///tmp/r"}}}},
		"requestState":   r["requestState"],
	}, allCaps)
	r = result(t, resp)
	if r["resultType"] != "complete" {
		t.Fatalf("want complete, got %v", r)
	}
	if text := r["contents"].([]any)[0].(obj)["text"]; text != "Client roots: file:///tmp/r" {
		t.Errorf("text %q", text)
	}
}
