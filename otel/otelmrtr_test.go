package otelmrtr_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/baggage"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/mrtrkit/mrtrkit/discover"
	"github.com/mrtrkit/mrtrkit/mrtr"
	"github.com/mrtrkit/mrtrkit/mrtr/mrtrtest"
	otelmrtr "github.com/mrtrkit/mrtrkit/otel"
	"github.com/mrtrkit/mrtrkit/state"
)

// Distinctive values a caller sends, which must never be recorded.
const (
	argValue      = "ARG-VALUE-7f3a9c"
	answerValue   = "ANSWER-VALUE-91c2e4"
	promptArg     = "PROMPT-ARG-5d1e77"
	principalName = "alice@example.com"
)

// seen is what a handler saw of its context.
type seen struct {
	span    trace.SpanContext
	baggage baggage.Baggage
}

type fixture struct {
	t      *testing.T
	srv    *mrtr.Server
	tp     *sdktrace.TracerProvider
	spans  *tracetest.SpanRecorder
	reader *sdkmetric.ManualReader
	seen   chan seen
}

// newFixture builds a server with the interceptor over in-memory
// providers: tools greet (one elicitation round), plain (no rounds) and
// fail (a JSON-RPC error of its own that quotes its argument), prompt
// summary, resource file:///notes.txt, and tools list changes so that
// subscriptions/listen is served.
func newFixture(t *testing.T, opts ...otelmrtr.Option) *fixture {
	t.Helper()
	f := &fixture{t: t, spans: tracetest.NewSpanRecorder(), reader: sdkmetric.NewManualReader(), seen: make(chan seen, 16)}
	f.tp = sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(f.spans))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(f.reader))
	t.Cleanup(func() {
		_ = f.tp.Shutdown(context.Background())
		_ = mp.Shutdown(context.Background())
	})
	all := append([]otelmrtr.Option{otelmrtr.WithTracerProvider(f.tp), otelmrtr.WithMeterProvider(mp)}, opts...)
	f.srv = newServer(t, mrtr.WithInterceptors(otelmrtr.Interceptor(all...)))
	f.register()
	return f
}

func newServer(t *testing.T, opts ...mrtr.Option) *mrtr.Server {
	t.Helper()
	ring, err := state.GenerateKeyRing()
	require.NoError(t, err)
	codec, err := state.NewAEAD(ring)
	require.NoError(t, err)
	desc := discover.Description{
		Server:       discover.Implementation{Name: "otel-test", Version: "1.0.0"},
		Capabilities: discover.Capabilities{Tools: &discover.ListChanged{ListChanged: true}},
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	srv, err := mrtr.NewServer(desc, append([]mrtr.Option{mrtr.WithCodec(codec), mrtr.WithLogger(quiet)}, opts...)...)
	require.NoError(t, err)
	return srv
}

var nameSchema = &mrtr.ElicitSchema{Type: "object", Properties: map[string]json.RawMessage{"name": json.RawMessage(`{"type":"string"}`)}}

func (f *fixture) register() {
	t := f.t
	note := func(ctx context.Context) {
		select {
		case f.seen <- seen{span: trace.SpanContextFromContext(ctx), baggage: baggage.FromContext(ctx)}:
		default:
		}
	}
	require.NoError(t, f.srv.AddTool(mrtr.Tool{Name: "greet"}, mrtr.HandlerFunc(func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
		note(ctx)
		if a, ok := req.Responses.Elicitation("name"); ok && a.Accepted() {
			return mrtr.TextResult("Hello, " + a.Content["name"].(string) + "!"), nil
		}
		return mrtr.Ask("name", &mrtr.ElicitRequest{Message: "Your name?", RequestedSchema: nameSchema}), nil
	})))
	require.NoError(t, f.srv.AddTool(mrtr.Tool{Name: "plain"}, mrtr.HandlerFunc(func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
		note(ctx)
		return mrtr.TextResult("plain " + string(req.Arguments)), nil
	})))
	require.NoError(t, f.srv.AddTool(mrtr.Tool{Name: "fail"}, mrtr.HandlerFunc(func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
		return nil, mrtr.NewError(-32001, "cannot reach "+string(req.Arguments), nil)
	})))
	require.NoError(t, f.srv.AddPrompt(mrtr.Prompt{Name: "summary", Arguments: []mrtr.PromptArgument{{Name: "topic", Required: true}}},
		mrtr.HandlerFunc(func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
			return &mrtr.GetPromptResult{Messages: []mrtr.PromptMessage{{Role: mrtr.RoleUser, Content: mrtr.Text("Summarise " + req.PromptArguments["topic"])}}}, nil
		})))
	require.NoError(t, f.srv.AddResource(mrtr.Resource{URI: "file:///notes.txt", Name: "notes"},
		mrtr.HandlerFunc(func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
			text := "notes"
			return &mrtr.ReadResourceResult{Contents: []mrtr.ResourceContents{{URI: req.URI, Text: &text}}}, nil
		})))
}

// client answers elicitations with answerValue, as alice.
func (f *fixture) client() *mrtrtest.Client {
	return mrtrtest.NewClient(f.srv, mrtrtest.WithPrincipal(principalName),
		mrtrtest.OnElicitation(func(ctx context.Context, r *mrtr.ElicitRequest) (*mrtr.ElicitResult, error) {
			return &mrtr.ElicitResult{Action: "accept", Content: map[string]any{"name": answerValue}}, nil
		}))
}

func (f *fixture) send(principal string, req *mrtrtest.Request) (json.RawMessage, *mrtr.Error) {
	return mrtrtest.Send(context.Background(), f.srv, principal, req)
}

func (f *fixture) ended() []sdktrace.ReadOnlySpan { return f.spans.Ended() }

// only returns the one span ended so far.
func (f *fixture) only() sdktrace.ReadOnlySpan {
	f.t.Helper()
	spans := f.ended()
	require.Len(f.t, spans, 1)
	return spans[0]
}

func attrs(kvs []attribute.KeyValue) map[string]attribute.Value {
	m := make(map[string]attribute.Value, len(kvs))
	for _, kv := range kvs {
		m[string(kv.Key)] = kv.Value
	}
	return m
}

// assertAttrs checks that s has each attribute of want (string, int or
// bool values), and none of the keys in absent.
func assertAttrs(t *testing.T, got []attribute.KeyValue, want map[string]any, absent ...string) {
	t.Helper()
	m := attrs(got)
	for k, v := range want {
		val, ok := m[k]
		if !assert.True(t, ok, "attribute %s missing from %v", k, got) {
			continue
		}
		switch v := v.(type) {
		case string:
			assert.Equal(t, attribute.STRING, val.Type(), k)
			assert.Equal(t, v, val.AsString(), k)
		case int:
			assert.Equal(t, attribute.INT64, val.Type(), k)
			assert.Equal(t, int64(v), val.AsInt64(), k)
		case bool:
			assert.Equal(t, attribute.BOOL, val.Type(), k)
			assert.Equal(t, v, val.AsBool(), k)
		case []string:
			assert.Equal(t, v, val.AsStringSlice(), k)
		default:
			t.Fatalf("unsupported want type %T", v)
		}
	}
	for _, k := range absent {
		assert.NotContains(t, m, k, "attribute %s", k)
	}
}

func eventNamed(t *testing.T, s sdktrace.ReadOnlySpan, name string) sdktrace.Event {
	t.Helper()
	for _, e := range s.Events() {
		if e.Name == name {
			return e
		}
	}
	t.Fatalf("span %q has no event %q (events %v)", s.Name(), name, s.Events())
	return sdktrace.Event{}
}

func TestSpanPerRequest(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	c := f.client()

	_, err := c.Call(ctx, mrtr.MethodToolsList, nil)
	require.NoError(t, err)
	list := f.only()
	assert.Equal(t, "tools/list", list.Name())
	assert.Equal(t, trace.SpanKindServer, list.SpanKind())
	assert.Equal(t, codes.Unset, list.Status().Code)
	assertAttrs(t, list.Attributes(), map[string]any{
		"mcp.method.name":       "tools/list",
		"mcp.protocol.version":  mrtrtest.ProtocolVersion,
		"mrtr.principal.digest": mrtr.PrincipalDigest(principalName),
		"mrtr.result_type":      "complete",
	}, "mrtr.round", "mrtr.state.presented", "gen_ai.tool.name", "gen_ai.operation.name", "error.type", "mrtr.refusal")
	assert.NotEmpty(t, attrs(list.Attributes())["jsonrpc.request.id"].AsString())
	assert.Equal(t, otelmrtr.ScopeName, list.InstrumentationScope().Name)
	f.spans.Reset()

	res, err := c.CallTool(ctx, "plain", map[string]any{"account": argValue})
	require.NoError(t, err)
	require.Contains(t, res.Text(), argValue, "the handler saw the argument")
	call := f.only()
	assert.Equal(t, "tools/call plain", call.Name())
	assertAttrs(t, call.Attributes(), map[string]any{
		"mcp.method.name":       "tools/call",
		"gen_ai.tool.name":      "plain",
		"gen_ai.operation.name": "execute_tool",
		"mrtr.round":            0,
		"mrtr.state.presented":  false,
		"mrtr.result_type":      "complete",
	})
	f.spans.Reset()

	_, err = c.GetPrompt(ctx, "summary", map[string]string{"topic": promptArg})
	require.NoError(t, err)
	prompt := f.only()
	assert.Equal(t, "prompts/get summary", prompt.Name())
	assertAttrs(t, prompt.Attributes(), map[string]any{"gen_ai.prompt.name": "summary", "mrtr.round": 0}, "gen_ai.operation.name", "gen_ai.tool.name")
	f.spans.Reset()

	_, err = c.ReadResource(ctx, "file:///notes.txt")
	require.NoError(t, err)
	read := f.only()
	assert.Equal(t, "resources/read", read.Name(), "a URI is never part of the span name")
	assertAttrs(t, read.Attributes(), map[string]any{"mcp.resource.uri": "file:///notes.txt", "mrtr.round": 0})
}

func TestRequestIDs(t *testing.T) {
	f := newFixture(t)
	f.send("", mrtrtest.NewRequest(mrtr.MethodToolsList, nil).WithID("req-7"))
	f.send("", mrtrtest.NewRequest(mrtr.MethodToolsList, nil).WithID(42))
	spans := f.ended()
	require.Len(t, spans, 2)
	assertAttrs(t, spans[0].Attributes(), map[string]any{"jsonrpc.request.id": "req-7", "mrtr.principal.digest": "anonymous"})
	assertAttrs(t, spans[1].Attributes(), map[string]any{"jsonrpc.request.id": "42"})
	assert.Nil(t, f.srv.Handle(context.Background(), mrtrtest.NewRequest(mrtr.MethodToolsList, nil).WithID(nil).Inbound("")))
	assert.Len(t, f.ended(), 2, "a notification has no span")
}

const (
	remoteTrace = "4bf92f3577b34da6a3ce929d0e0e4736"
	remoteSpan  = "00f067aa0ba902b7"
	traceparent = "00-" + remoteTrace + "-" + remoteSpan + "-01"
)

func tracedRequest() *mrtrtest.Request {
	return mrtrtest.NewRequest(mrtr.MethodToolsCall, map[string]any{"name": "plain"}).
		WithMeta("traceparent", traceparent).
		WithMeta("tracestate", "rojo=00f067aa0ba902b7").
		WithMeta("baggage", "tenant=acme")
}

func TestTraceContinuedFromMeta(t *testing.T) {
	f := newFixture(t)
	_, rerr := f.send("", tracedRequest())
	require.Nil(t, rerr)
	s := f.only()
	assert.Equal(t, remoteTrace, s.SpanContext().TraceID().String(), "same trace")
	assert.Equal(t, remoteSpan, s.Parent().SpanID().String(), "the caller's span is the parent")
	assert.True(t, s.Parent().IsRemote())
	assert.Equal(t, "rojo=00f067aa0ba902b7", s.SpanContext().TraceState().String())
	assert.Empty(t, s.Links(), "no ambient span to link")

	h := <-f.seen
	assert.Equal(t, s.SpanContext().SpanID(), h.span.SpanID(), "the handler runs in the server span")
	assert.Equal(t, "acme", h.baggage.Member("tenant").Value(), "baggage from _meta reaches the handler")
}

func TestAmbientSpanLinkedOrParent(t *testing.T) {
	f := newFixture(t)
	ctx, ambient := f.tp.Tracer("transport").Start(context.Background(), "POST /mcp", trace.WithSpanKind(trace.SpanKindServer))
	defer ambient.End()

	// _meta names the parent; the transport's span is linked.
	f.srv.Handle(ctx, tracedRequest().Inbound(""))
	s := f.only()
	assert.Equal(t, remoteSpan, s.Parent().SpanID().String())
	require.Len(t, s.Links(), 1)
	assert.Equal(t, ambient.SpanContext(), s.Links()[0].SpanContext)
	f.spans.Reset()

	// Without a traceparent in _meta the transport's span is the parent.
	f.srv.Handle(ctx, mrtrtest.NewRequest(mrtr.MethodToolsList, nil).Inbound(""))
	s = f.only()
	assert.Equal(t, ambient.SpanContext().SpanID(), s.Parent().SpanID())
	assert.Equal(t, ambient.SpanContext().TraceID(), s.SpanContext().TraceID())
	assert.Empty(t, s.Links())
}

func TestTraceContextIgnoredWhenNotAString(t *testing.T) {
	f := newFixture(t)
	f.send("", mrtrtest.NewRequest(mrtr.MethodToolsList, nil).WithMeta("traceparent", 7))
	s := f.only()
	assert.False(t, s.Parent().IsValid(), "a new root")
	assert.NotEqual(t, remoteTrace, s.SpanContext().TraceID().String())
}

func TestWithPropagator(t *testing.T) {
	f := newFixture(t, otelmrtr.WithPropagator(propagation.TraceContext{}))
	_, rerr := f.send("", tracedRequest())
	require.Nil(t, rerr)
	s := f.only()
	assert.Equal(t, remoteTrace, s.SpanContext().TraceID().String())
	h := <-f.seen
	assert.Zero(t, h.baggage.Len(), "baggage is not read without the Baggage propagator")
}

func TestRoundEvents(t *testing.T) {
	f := newFixture(t)
	res, err := f.client().CallTool(context.Background(), "greet", map[string]any{"account": argValue})
	require.NoError(t, err)
	require.Equal(t, 1, res.Rounds)
	spans := f.ended()
	require.Len(t, spans, 2)

	first, second := spans[0], spans[1]
	assert.Equal(t, "tools/call greet", first.Name())
	assertAttrs(t, first.Attributes(), map[string]any{
		"mrtr.result_type":     "input_required",
		"mrtr.round":           0,
		"mrtr.state.presented": false,
	})
	ev := eventNamed(t, first, "mrtr.input_required")
	assertAttrs(t, ev.Attributes, map[string]any{"mrtr.round": 0, "mrtr.asked": []string{"name"}})
	assert.Equal(t, codes.Unset, first.Status().Code, "asking for input is no error")

	assertAttrs(t, second.Attributes(), map[string]any{
		"mrtr.result_type":     "complete",
		"mrtr.round":           1,
		"mrtr.state.presented": true,
	})
	assert.Empty(t, second.Events())
}

func TestRefusalOfForgedState(t *testing.T) {
	f := newFixture(t)
	_, rerr := f.send(principalName, mrtrtest.NewRequest(mrtr.MethodToolsCall, map[string]any{"name": "greet", "requestState": "forged"}))
	require.NotNil(t, rerr)
	s := f.only()
	assert.Equal(t, "tools/call greet", s.Name(), "the tool exists: the state was refused after it resolved")
	assert.Equal(t, codes.Error, s.Status().Code)
	assert.Equal(t, "invalid_params", s.Status().Description)
	assertAttrs(t, s.Attributes(), map[string]any{
		"mrtr.refusal":             "state",
		"mrtr.state.reason":        "malformed",
		"mrtr.state.presented":     true,
		"mrtr.round":               0,
		"error.type":               "-32602",
		"rpc.response.status_code": "-32602",
	}, "mrtr.result_type")
	ev := eventNamed(t, s, "mrtr.refusal")
	assertAttrs(t, ev.Attributes, map[string]any{"mrtr.refusal": "state", "mrtr.state.reason": "malformed", "rpc.response.status_code": "-32602"})
}

func TestRefusalOfReplayedState(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	args := map[string]any{"account": argValue}
	raw, err := f.client().Call(ctx, mrtr.MethodToolsCall, map[string]any{"name": "greet", "arguments": args})
	require.NoError(t, err)
	var ir struct{ RequestState string }
	require.NoError(t, json.Unmarshal(raw, &ir))
	require.NotEmpty(t, ir.RequestState)
	f.spans.Reset()

	// Bob presents alice's state.
	_, rerr := f.send("bob", mrtrtest.NewRequest(mrtr.MethodToolsCall, map[string]any{"name": "greet", "arguments": args, "requestState": ir.RequestState}).
		WithCapabilities(`{"elicitation":{}}`))
	require.NotNil(t, rerr)
	s := f.only()
	assertAttrs(t, s.Attributes(), map[string]any{
		"mrtr.refusal":          "state",
		"mrtr.state.reason":     "principal_mismatch",
		"mrtr.principal.digest": mrtr.PrincipalDigest("bob"),
	})
	assertAttrs(t, eventNamed(t, s, "mrtr.refusal").Attributes, map[string]any{"mrtr.state.reason": "principal_mismatch"})
}

func TestJSONRPCErrors(t *testing.T) {
	f := newFixture(t)

	// A method the Server does not serve: the span name stays low-cardinality.
	_, rerr := f.send("", mrtrtest.NewRequest("ping", nil))
	require.NotNil(t, rerr)
	s := f.only()
	assert.Equal(t, "_OTHER", s.Name())
	assert.Equal(t, codes.Error, s.Status().Code)
	assert.Equal(t, "method_not_found", s.Status().Description)
	assertAttrs(t, s.Attributes(), map[string]any{
		"mcp.method.name":          "ping",
		"error.type":               "-32601",
		"rpc.response.status_code": "-32601",
		"mrtr.refusal":             "method",
	})
	f.spans.Reset()

	// A handler's own error: no refusal, and its message is not recorded.
	_, rerr = f.send("", mrtrtest.NewRequest(mrtr.MethodToolsCall, map[string]any{"name": "fail", "arguments": map[string]any{"account": argValue}}))
	require.NotNil(t, rerr)
	require.Contains(t, rerr.Message, argValue)
	s = f.only()
	assert.Equal(t, "tools/call fail", s.Name())
	assert.Equal(t, codes.Error, s.Status().Code)
	assert.NotContains(t, s.Status().Description, argValue)
	assertAttrs(t, s.Attributes(), map[string]any{"error.type": "-32001", "rpc.response.status_code": "-32001"}, "mrtr.refusal")
	assert.Empty(t, s.Events())
	f.spans.Reset()

	// An unknown tool: recorded on the span, but not in its name.
	_, rerr = f.send("", mrtrtest.NewRequest(mrtr.MethodToolsCall, map[string]any{"name": "no-such-tool"}))
	require.NotNil(t, rerr)
	s = f.only()
	assert.Equal(t, "tools/call", s.Name())
	assertAttrs(t, s.Attributes(), map[string]any{"gen_ai.tool.name": "no-such-tool", "mrtr.refusal": "target", "error.type": "-32602"})
}

// metrics collects what the reader holds, by metric name.
func (f *fixture) metrics() map[string]metricdata.Metrics {
	f.t.Helper()
	var rm metricdata.ResourceMetrics
	require.NoError(f.t, f.reader.Collect(context.Background(), &rm))
	out := map[string]metricdata.Metrics{}
	for _, sm := range rm.ScopeMetrics {
		require.Equal(f.t, otelmrtr.ScopeName, sm.Scope.Name)
		for _, m := range sm.Metrics {
			out[m.Name] = m
		}
	}
	return out
}

func set(kv ...attribute.KeyValue) attribute.Set { return attribute.NewSet(kv...) }

func counter(t *testing.T, m metricdata.Metrics, want attribute.Set) int64 {
	t.Helper()
	sum, ok := m.Data.(metricdata.Sum[int64])
	require.True(t, ok, "%s is a %T", m.Name, m.Data)
	for _, p := range sum.DataPoints {
		if p.Attributes.Equals(&want) {
			return p.Value
		}
	}
	t.Errorf("%s has no point %v; points: %v", m.Name, want.ToSlice(), pointSets(sum.DataPoints))
	return 0
}

func pointSets[N int64 | float64](ps []metricdata.DataPoint[N]) [][]attribute.KeyValue {
	var out [][]attribute.KeyValue
	for _, p := range ps {
		out = append(out, p.Attributes.ToSlice())
	}
	return out
}

func histogram[N int64 | float64](t *testing.T, m metricdata.Metrics, want attribute.Set) metricdata.HistogramDataPoint[N] {
	t.Helper()
	h, ok := m.Data.(metricdata.Histogram[N])
	require.True(t, ok, "%s is a %T", m.Name, m.Data)
	var sets [][]attribute.KeyValue
	for _, p := range h.DataPoints {
		if p.Attributes.Equals(&want) {
			return p
		}
		sets = append(sets, p.Attributes.ToSlice())
	}
	t.Errorf("%s has no point %v; points: %v", m.Name, want.ToSlice(), sets)
	return metricdata.HistogramDataPoint[N]{}
}

var (
	methodCall = attribute.String("mcp.method.name", "tools/call")
	execTool   = attribute.String("gen_ai.operation.name", "execute_tool")
	version    = attribute.String("mcp.protocol.version", mrtrtest.ProtocolVersion)
)

func tool(name string) attribute.KeyValue { return attribute.String("gen_ai.tool.name", name) }

func TestMetrics(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	c := f.client()
	_, err := c.CallTool(ctx, "greet", nil) // input_required, then complete in round 1
	require.NoError(t, err)
	_, err = c.CallTool(ctx, "plain", nil) // complete at once
	require.NoError(t, err)
	_, err = c.CallTool(ctx, "plain", nil)
	require.NoError(t, err)
	f.send("", mrtrtest.NewRequest(mrtr.MethodToolsCall, map[string]any{"name": "greet", "requestState": "forged"}))
	f.send("", mrtrtest.NewRequest(mrtr.MethodToolsCall, map[string]any{"name": "no-such-tool"}))
	f.send("", mrtrtest.NewRequest("ping", nil))
	f.send("", mrtrtest.NewRequest(mrtr.MethodToolsList, nil).WithMeta(mrtr.MetaProtocolVersion, "1999-01-01"))

	m := f.metrics()
	complete := attribute.String("mrtr.result_type", "complete")
	asked := attribute.String("mrtr.result_type", "input_required")
	invalid := []attribute.KeyValue{attribute.String("error.type", "-32602"), attribute.String("rpc.response.status_code", "-32602")}

	// Requests and durations, by method and outcome.
	greetAsked := set(methodCall, execTool, tool("greet"), version, asked)
	greetDone := set(methodCall, execTool, tool("greet"), version, complete)
	plainDone := set(methodCall, execTool, tool("plain"), version, complete)
	forged := set(append([]attribute.KeyValue{methodCall, execTool, tool("greet"), version, attribute.String("mrtr.refusal", "state")}, invalid...)...)
	unknownTool := set(append([]attribute.KeyValue{methodCall, execTool, version, attribute.String("mrtr.refusal", "target")}, invalid...)...)
	unknownMethod := set(attribute.String("mcp.method.name", "_OTHER"), version,
		attribute.String("error.type", "-32601"), attribute.String("rpc.response.status_code", "-32601"), attribute.String("mrtr.refusal", "method"))
	badVersion := set(attribute.String("mcp.method.name", "tools/list"),
		attribute.String("error.type", "-32022"), attribute.String("rpc.response.status_code", "-32022"), attribute.String("mrtr.refusal", "version"))

	requests := m[otelmrtr.MetricRequests]
	assert.Equal(t, "{request}", requests.Unit)
	for s, n := range map[*attribute.Set]int64{&greetAsked: 1, &greetDone: 1, &plainDone: 2, &forged: 1, &unknownTool: 1, &unknownMethod: 1, &badVersion: 1} {
		assert.Equal(t, n, counter(t, requests, *s), "%v", s.ToSlice())
	}
	total := int64(0)
	for _, p := range requests.Data.(metricdata.Sum[int64]).DataPoints {
		total += p.Value
	}
	assert.Equal(t, int64(8), total)

	duration := m[otelmrtr.MetricDuration]
	assert.Equal(t, "s", duration.Unit)
	p := histogram[float64](t, duration, plainDone)
	assert.Equal(t, uint64(2), p.Count)
	assert.Greater(t, p.Sum, 0.0)
	assert.Equal(t, []float64{0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300}, p.Bounds)
	assert.Equal(t, uint64(1), histogram[float64](t, duration, forged).Count)

	// Rounds per completed call.
	rounds := m[otelmrtr.MetricRounds]
	r := histogram[int64](t, rounds, set(methodCall, execTool, tool("greet"), version))
	assert.Equal(t, uint64(1), r.Count)
	assert.Equal(t, int64(1), r.Sum, "greet completed in round 1")
	r = histogram[int64](t, rounds, set(methodCall, execTool, tool("plain"), version))
	assert.Equal(t, uint64(2), r.Count)
	assert.Equal(t, int64(0), r.Sum)
	assert.Len(t, rounds.Data.(metricdata.Histogram[int64]).DataPoints, 2, "only completed multi-round calls")

	// Refusals by step and reason.
	refusals := m[otelmrtr.MetricRefusals]
	assert.Equal(t, int64(1), counter(t, refusals, set(methodCall, attribute.String("mrtr.refusal", "state"),
		attribute.String("mrtr.state.reason", "malformed"), attribute.String("rpc.response.status_code", "-32602"))))
	assert.Equal(t, int64(1), counter(t, refusals, set(methodCall, attribute.String("mrtr.refusal", "target"), attribute.String("rpc.response.status_code", "-32602"))))
	assert.Equal(t, int64(1), counter(t, refusals, set(attribute.String("mcp.method.name", "_OTHER"), attribute.String("mrtr.refusal", "method"), attribute.String("rpc.response.status_code", "-32601"))))
	assert.Equal(t, int64(1), counter(t, refusals, set(attribute.String("mcp.method.name", "tools/list"), attribute.String("mrtr.refusal", "version"), attribute.String("rpc.response.status_code", "-32022"))))
}

func TestMetricsBoundCardinality(t *testing.T) {
	f := newFixture(t)
	for _, name := range []string{"a1", "a2", "a3"} {
		f.send("", mrtrtest.NewRequest(mrtr.MethodToolsCall, map[string]any{"name": "no-such-tool-" + name}))
		f.send("", mrtrtest.NewRequest("x/"+name, nil))
		f.send("", mrtrtest.NewRequest(mrtr.MethodToolsList, nil).WithMeta(mrtr.MetaProtocolVersion, "1999-01-0"+name[1:]))
	}
	for _, m := range f.metrics() {
		var sets []attribute.Set
		switch d := m.Data.(type) {
		case metricdata.Sum[int64]:
			for _, p := range d.DataPoints {
				sets = append(sets, p.Attributes)
			}
		case metricdata.Histogram[float64]:
			for _, p := range d.DataPoints {
				sets = append(sets, p.Attributes)
			}
		}
		assert.LessOrEqual(t, len(sets), 3, "%s: nine requests, three kinds of refusal", m.Name)
		for _, s := range sets {
			for _, kv := range s.ToSlice() {
				assert.NotContains(t, kv.Value.Emit(), "no-such-tool", "%s %s", m.Name, kv.Key)
				assert.NotContains(t, kv.Value.Emit(), "x/a", "%s %s", m.Name, kv.Key)
				assert.NotContains(t, kv.Value.Emit(), "1999", "%s %s", m.Name, kv.Key)
			}
		}
	}
}

func TestListenStreams(t *testing.T) {
	f := newFixture(t)
	in := mrtrtest.NewRequest(mrtr.MethodSubscriptionsListen, map[string]any{"notifications": map[string]any{"toolsListChanged": true}}).Inbound("")
	acked := make(chan struct{}, 1)
	in.Emit = func([]byte) error {
		select {
		case acked <- struct{}{}:
		default:
		}
		return nil
	}
	done := make(chan *mrtr.Response, 1)
	go func() { done <- f.srv.Handle(context.Background(), in) }()
	select {
	case <-acked:
	case <-time.After(5 * time.Second):
		t.Fatal("no acknowledgement")
	}
	open := func() int64 {
		return counter(t, f.metrics()[otelmrtr.MetricListening], set())
	}
	assert.Equal(t, int64(1), open(), "the stream is open")
	assert.Empty(t, f.ended(), "its span lasts as long as the stream")

	require.NoError(t, f.srv.Close())
	select {
	case resp := <-done:
		require.Nil(t, resp.Error)
	case <-time.After(5 * time.Second):
		t.Fatal("listen did not end")
	}
	assert.Equal(t, int64(0), open(), "the stream is closed")
	s := f.only()
	assert.Equal(t, "subscriptions/listen", s.Name())
	assertAttrs(t, s.Attributes(), map[string]any{"mrtr.result_type": "complete"})
	sum := f.metrics()[otelmrtr.MetricListening].Data.(metricdata.Sum[int64])
	assert.False(t, sum.IsMonotonic)
}

// TestNothingOfTheCallerRecorded sends argument values, prompt arguments,
// answers and a principal, then scans every span name, status, attribute,
// event and link, and every metric attribute, for them.
func TestNothingOfTheCallerRecorded(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	c := f.client()
	args := map[string]any{"account": argValue, "nested": map[string]any{"deep": []any{argValue}}}
	_, err := c.CallTool(ctx, "greet", args)
	require.NoError(t, err)
	_, err = c.CallTool(ctx, "plain", args)
	require.NoError(t, err)
	_, err = c.CallTool(ctx, "fail", args)
	require.Error(t, err)
	_, err = c.GetPrompt(ctx, "summary", map[string]string{"topic": promptArg})
	require.NoError(t, err)
	f.send(principalName, mrtrtest.NewRequest(mrtr.MethodToolsCall, map[string]any{"name": "greet", "arguments": args, "requestState": "forged-" + argValue}))
	f.send(principalName, mrtrtest.NewRequest(mrtr.MethodToolsCall, map[string]any{"name": "plain", "arguments": json.RawMessage(`{"a":"` + argValue + `","A":1}`)}))
	f.send(principalName, mrtrtest.NewRequest(mrtr.MethodToolsCall, map[string]any{"name": "plain", "arguments": args}).WithMeta("x-custom", argValue))

	secrets := []string{argValue, answerValue, promptArg, principalName}
	var recorded []string
	kvs := func(kv []attribute.KeyValue) {
		for _, a := range kv {
			recorded = append(recorded, string(a.Key), a.Value.Emit())
		}
	}
	spans := f.ended()
	require.Len(t, spans, 8)
	for _, s := range spans {
		recorded = append(recorded, s.Name(), s.Status().Description)
		kvs(s.Attributes())
		for _, e := range s.Events() {
			recorded = append(recorded, e.Name)
			kvs(e.Attributes)
		}
		for _, l := range s.Links() {
			kvs(l.Attributes)
		}
	}
	for _, m := range f.metrics() {
		switch d := m.Data.(type) {
		case metricdata.Sum[int64]:
			for _, p := range d.DataPoints {
				kvs(p.Attributes.ToSlice())
			}
		case metricdata.Histogram[float64]:
			for _, p := range d.DataPoints {
				kvs(p.Attributes.ToSlice())
			}
		case metricdata.Histogram[int64]:
			for _, p := range d.DataPoints {
				kvs(p.Attributes.ToSlice())
			}
		default:
			t.Fatalf("unexpected metric data %T", d)
		}
	}
	all := strings.Join(recorded, "\n")
	require.Contains(t, all, "mrtr.asked", "the scan sees events")
	for _, secret := range secrets {
		assert.NotContains(t, all, secret)
	}
}

func TestDefaultsFromGlobalProviders(t *testing.T) {
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	prevT, prevM := otel.GetTracerProvider(), otel.GetMeterProvider()
	otel.SetTracerProvider(tp)
	otel.SetMeterProvider(mp)
	t.Cleanup(func() {
		otel.SetTracerProvider(prevT)
		otel.SetMeterProvider(prevM)
	})

	srv := newServer(t, mrtr.WithInterceptors(otelmrtr.Interceptor(otelmrtr.WithTracerProvider(nil), nil)))
	_, rerr := mrtrtest.Send(context.Background(), srv, "", tracedRequest())
	require.NotNil(t, rerr, "no tools: tools/call is not served")
	require.Len(t, spans.Ended(), 1)
	s := spans.Ended()[0]
	assert.Equal(t, remoteTrace, s.SpanContext().TraceID().String(), "the default propagator reads W3C trace context")

	var rm metricdata.ResourceMetrics
	require.NoError(t, reader.Collect(context.Background(), &rm))
	require.Len(t, rm.ScopeMetrics, 1)
	assert.NotEmpty(t, rm.ScopeMetrics[0].Metrics)
}

// TestOrderAmongInterceptors: given first, the span covers the
// interceptors after it, which see its context.
func TestOrderAmongInterceptors(t *testing.T) {
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	var inner trace.SpanContext
	srv := newServer(t, mrtr.WithInterceptors(
		otelmrtr.Interceptor(otelmrtr.WithTracerProvider(tp)),
		func(ctx context.Context, c *mrtr.Call, next func(context.Context) *mrtr.Response) *mrtr.Response {
			inner = trace.SpanContextFromContext(ctx)
			return next(ctx)
		}))
	mrtrtest.Send(context.Background(), srv, "", mrtrtest.NewRequest(mrtr.MethodDiscover, nil))
	require.Len(t, spans.Ended(), 1)
	assert.Equal(t, spans.Ended()[0].SpanContext(), inner)
	assert.Equal(t, "server/discover", spans.Ended()[0].Name())
}
