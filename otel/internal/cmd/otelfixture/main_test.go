package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mrtrkit/mrtrkit/conformance/fixture"
	"github.com/mrtrkit/mrtrkit/mrtr"
	"github.com/mrtrkit/mrtrkit/mrtr/mrtrtest"
	otelmrtr "github.com/mrtrkit/mrtrkit/otel"
)

// TestReportCountsWhatTheInterceptorSaw serves three requests through the
// fixture with the interceptor: the report counts three spans, the refusal
// among them, and the same number in the request and duration metrics.
func TestReportCountsWhatTheInterceptorSaw(t *testing.T) {
	tel := newTelemetry()
	srv, err := fixture.New(slog.New(slog.NewTextHandler(io.Discard, nil)),
		mrtr.WithCodec(mrtrtest.ReplicaCodec(t)), mrtr.WithInterceptors(tel.interceptor()))
	require.NoError(t, err)
	defer srv.Close()
	call := func(method string, params map[string]any) *mrtr.Error {
		_, e := mrtrtest.Send(context.Background(), srv, "", mrtrtest.NewRequest(method, params))
		return e
	}
	require.Nil(t, call(mrtr.MethodToolsList, nil))
	require.Nil(t, call(mrtr.MethodToolsCall, map[string]any{"name": "test_simple_text", "arguments": map[string]any{}}))
	require.NotNil(t, call(mrtr.MethodToolsCall, map[string]any{"name": "no_such_tool", "arguments": map[string]any{}}), "an unknown tool was called")

	rep, err := tel.report(context.Background())
	require.NoError(t, err)
	assert.Falsef(t, rep.Spans.Total != 3 || rep.Spans.ByName["tools/list"] != 1 || rep.Spans.ByName["tools/call test_simple_text"] != 1, "spans %+v", rep.Spans)
	if rep.Spans.Errors != 1 || rep.Spans.Events["mrtr.refusal"] != 1 {
		assert.Fail(t, fmt.Sprintf("error spans %d, refusal events %d; want 1 and 1", rep.Spans.Errors, rep.Spans.Events["mrtr.refusal"]))
	}
	if got := rep.Metrics[otelmrtr.MetricRequests].Sum; got != 3 {
		assert.Fail(t, fmt.Sprintf("%s = %d, want 3", otelmrtr.MetricRequests, got))
	}
	if got := rep.Metrics[otelmrtr.MetricDuration].Count; got != 3 {
		assert.Fail(t, fmt.Sprintf("%s count = %d, want 3", otelmrtr.MetricDuration, got))
	}
	if got := rep.Metrics[otelmrtr.MetricRefusals].Sum; got != 1 {
		assert.Fail(t, fmt.Sprintf("%s = %d, want 1", otelmrtr.MetricRefusals, got))
	}
}
