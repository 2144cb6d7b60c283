package main

import (
	"context"
	"io"
	"log/slog"
	"testing"

	"github.com/mrtrkit/mrtrkit/internal/fixture"
	"github.com/mrtrkit/mrtrkit/internal/testkit"
	"github.com/mrtrkit/mrtrkit/mrtr"
	otelmrtr "github.com/mrtrkit/mrtrkit/otel"
)

// TestReportCountsWhatTheInterceptorSaw serves three requests through the
// fixture with the interceptor: the report counts three spans, the refusal
// among them, and the same number in the request and duration metrics.
func TestReportCountsWhatTheInterceptorSaw(t *testing.T) {
	tel := newTelemetry()
	srv, err := fixture.New(slog.New(slog.NewTextHandler(io.Discard, nil)),
		mrtr.WithCodec(testkit.FreshCodec(t)), mrtr.WithInterceptors(tel.interceptor()))
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	if _, e := testkit.Call(t, srv, `{}`, "tools/list", nil); e != nil {
		t.Fatalf("tools/list: %v", e)
	}
	if _, e := testkit.Call(t, srv, `{}`, "tools/call", map[string]any{"name": "test_simple_text", "arguments": map[string]any{}}); e != nil {
		t.Fatalf("tools/call: %v", e)
	}
	if _, e := testkit.Call(t, srv, `{}`, "tools/call", map[string]any{"name": "no_such_tool", "arguments": map[string]any{}}); e == nil {
		t.Fatal("an unknown tool was called")
	}

	rep, err := tel.report(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if rep.Spans.Total != 3 || rep.Spans.ByName["tools/list"] != 1 || rep.Spans.ByName["tools/call test_simple_text"] != 1 {
		t.Errorf("spans %+v", rep.Spans)
	}
	if rep.Spans.Errors != 1 || rep.Spans.Events["mrtr.refusal"] != 1 {
		t.Errorf("error spans %d, refusal events %d; want 1 and 1", rep.Spans.Errors, rep.Spans.Events["mrtr.refusal"])
	}
	if got := rep.Metrics[otelmrtr.MetricRequests].Sum; got != 3 {
		t.Errorf("%s = %d, want 3", otelmrtr.MetricRequests, got)
	}
	if got := rep.Metrics[otelmrtr.MetricDuration].Count; got != 3 {
		t.Errorf("%s count = %d, want 3", otelmrtr.MetricDuration, got)
	}
	if got := rep.Metrics[otelmrtr.MetricRefusals].Sum; got != 1 {
		t.Errorf("%s = %d, want 1", otelmrtr.MetricRefusals, got)
	}
}
