package otelmrtr

import (
	"context"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/mrtrkit/mrtrkit/mrtr"
)

// ScopeName is the instrumentation scope of the tracer and the meter.
const ScopeName = "github.com/mrtrkit/mrtrkit/otel"

// Metric names. The duration histogram is the one of the OpenTelemetry
// MCP conventions; the others are mrtrkit's own.
const (
	MetricDuration  = "mcp.server.operation.duration"     // histogram, s
	MetricRequests  = "mrtr.server.requests"              // counter, {request}
	MetricRounds    = "mrtr.server.call.rounds"           // histogram, {round}
	MetricRefusals  = "mrtr.server.refusals"              // counter, {refusal}
	MetricListening = "mrtr.server.listen.active_streams" // up-down counter, {stream}
)

// durationBuckets are the bucket boundaries the MCP conventions advise
// for mcp.server.operation.duration, in seconds.
var durationBuckets = []float64{0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300}

// roundBuckets are the bucket boundaries of the rounds-per-call
// histogram: one bucket per round up to six, coarser beyond.
var roundBuckets = []float64{0, 1, 2, 3, 4, 5, 6, 8, 10, 16, 32, 64}

// Option configures the Interceptor.
type Option interface{ apply(*config) }

type optionFunc func(*config)

func (f optionFunc) apply(c *config) { f(c) }

type config struct {
	tp   trace.TracerProvider
	mp   metric.MeterProvider
	prop propagation.TextMapPropagator
}

// WithTracerProvider sets the TracerProvider spans are started with
// (default: the global one, otel.GetTracerProvider). Nil keeps the
// default.
func WithTracerProvider(tp trace.TracerProvider) Option {
	return optionFunc(func(c *config) {
		if tp != nil {
			c.tp = tp
		}
	})
}

// WithMeterProvider sets the MeterProvider metrics are recorded with
// (default: the global one, otel.GetMeterProvider). Nil keeps the
// default.
func WithMeterProvider(mp metric.MeterProvider) Option {
	return optionFunc(func(c *config) {
		if mp != nil {
			c.mp = mp
		}
	})
}

// WithPropagator sets the propagator that reads the caller's trace
// context from params._meta (default: W3C Trace Context and W3C Baggage,
// the keys MCP 2026-07-28 reserves in _meta). The propagator reads only
// the _meta members its Fields name. Nil keeps the default.
func WithPropagator(p propagation.TextMapPropagator) Option {
	return optionFunc(func(c *config) {
		if p != nil {
			c.prop = p
		}
	})
}

// instrumentation is one Interceptor's tracer, instruments and propagator.
type instrumentation struct {
	tracer    trace.Tracer
	prop      propagation.TextMapPropagator
	fields    []string
	duration  metric.Float64Histogram
	requests  metric.Int64Counter
	rounds    metric.Int64Histogram
	refusals  metric.Int64Counter
	listening metric.Int64UpDownCounter
}

// Interceptor returns an mrtr.Interceptor that traces every request the
// Server answers as a server span and records its metrics; see the
// package documentation for the span, its attributes and events, and the
// metrics. Give it to mrtr.WithInterceptors first, so that its span
// covers the other interceptors and its context (with the caller's trace
// and baggage) reaches them and the handlers.
func Interceptor(opts ...Option) mrtr.Interceptor {
	cfg := config{
		tp:   otel.GetTracerProvider(),
		mp:   otel.GetMeterProvider(),
		prop: propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}),
	}
	for _, o := range opts {
		if o != nil {
			o.apply(&cfg)
		}
	}
	in := &instrumentation{
		tracer: cfg.tp.Tracer(ScopeName),
		prop:   cfg.prop,
		fields: cfg.prop.Fields(),
	}
	meter := cfg.mp.Meter(ScopeName)
	var err error
	in.duration, err = meter.Float64Histogram(MetricDuration,
		metric.WithUnit("s"),
		metric.WithDescription("MCP request duration as observed on the receiver from the time it was received until the result or ack is sent."),
		metric.WithExplicitBucketBoundaries(durationBuckets...))
	if err != nil || in.duration == nil {
		handle(err)
		in.duration = noop.Float64Histogram{}
	}
	in.requests, err = meter.Int64Counter(MetricRequests,
		metric.WithUnit("{request}"),
		metric.WithDescription("Requests answered, by method and outcome."))
	if err != nil || in.requests == nil {
		handle(err)
		in.requests = noop.Int64Counter{}
	}
	in.rounds, err = meter.Int64Histogram(MetricRounds,
		metric.WithUnit("{round}"),
		metric.WithDescription("Input-required rounds a multi-round call went through before it completed."),
		metric.WithExplicitBucketBoundaries(roundBuckets...))
	if err != nil || in.rounds == nil {
		handle(err)
		in.rounds = noop.Int64Histogram{}
	}
	in.refusals, err = meter.Int64Counter(MetricRefusals,
		metric.WithUnit("{refusal}"),
		metric.WithDescription("Requests the Server refused, by method, step and reason."))
	if err != nil || in.refusals == nil {
		handle(err)
		in.refusals = noop.Int64Counter{}
	}
	in.listening, err = meter.Int64UpDownCounter(MetricListening,
		metric.WithUnit("{stream}"),
		metric.WithDescription("subscriptions/listen streams open."))
	if err != nil || in.listening == nil {
		handle(err)
		in.listening = noop.Int64UpDownCounter{}
	}
	return in.intercept
}

func (in *instrumentation) intercept(ctx context.Context, c *mrtr.Call, next func(context.Context) *mrtr.Response) *mrtr.Response {
	if c == nil || c.Message == nil {
		return next(ctx)
	}
	start := c.Start
	if start.IsZero() {
		start = time.Now()
	}
	method := c.Message.Method
	meta := readMeta(c.Message.Params, in.fields)

	// The caller's context in _meta is the parent; an ambient span (the
	// transport's, such as an HTTP server span) is linked.
	ambient := trace.SpanContextFromContext(ctx)
	parent := ctx
	if meta.carrier != nil {
		parent = in.prop.Extract(ctx, propagation.MapCarrier(meta.carrier))
	}
	attrs := make([]attribute.KeyValue, 0, 4)
	attrs = append(attrs, keyMethod.String(clip(method)))
	if id := requestID(c.Message.ID); id != "" {
		attrs = append(attrs, keyRequestID.String(id))
	}
	if meta.version != "" {
		attrs = append(attrs, keyProtocolVersion.String(meta.version))
	}
	if method == mrtr.MethodToolsCall {
		attrs = append(attrs, keyOperation.String(operationExecuteTool))
	}
	startOpts := []trace.SpanStartOption{
		trace.WithSpanKind(trace.SpanKindServer),
		trace.WithTimestamp(start),
		trace.WithAttributes(attrs...),
	}
	if remote := trace.SpanContextFromContext(parent); ambient.IsValid() && !remote.Equal(ambient) {
		startOpts = append(startOpts, trace.WithLinks(trace.Link{SpanContext: ambient}))
	}
	ctx, span := in.tracer.Start(parent, knownMethod(method), startOpts...)
	defer span.End()

	if method == mrtr.MethodSubscriptionsListen {
		in.listening.Add(ctx, 1)
		defer in.listening.Add(context.WithoutCancel(ctx), -1)
	}

	resp := next(ctx)

	in.recordSpan(span, c)
	in.recordMetrics(context.WithoutCancel(ctx), c, meta.version, time.Since(start))
	return resp
}

// handle reports an error creating an instrument to the global error
// handler; the instrument is then a no-op.
func handle(err error) {
	if err != nil {
		otel.Handle(err)
	}
}

// recordSpan completes the span with the outcome of c.
func (in *instrumentation) recordSpan(span trace.Span, c *mrtr.Call) {
	if !span.IsRecording() {
		return
	}
	method := c.Message.Method
	if targetResolved(c) && (method == mrtr.MethodToolsCall || method == mrtr.MethodPromptsGet) {
		span.SetName(method + " " + c.Target)
	}
	attrs := make([]attribute.KeyValue, 0, 8)
	if c.Target != "" {
		switch method {
		case mrtr.MethodToolsCall:
			attrs = append(attrs, keyToolName.String(clip(c.Target)))
		case mrtr.MethodPromptsGet:
			attrs = append(attrs, keyPromptName.String(clip(c.Target)))
		case mrtr.MethodResourcesRead:
			attrs = append(attrs, keyResourceURI.String(clip(c.Target)))
		}
	}
	attrs = append(attrs, keyPrincipal.String(mrtr.PrincipalDigest(c.Principal)))
	if multiRound(method) {
		attrs = append(attrs, keyStatePresented.Bool(c.StatePresented), keyRound.Int(c.Round))
	}
	if c.ResultType != "" {
		attrs = append(attrs, keyResultType.String(c.ResultType))
	}
	if c.Refusal != "" {
		attrs = append(attrs, keyRefusal.String(c.Refusal))
	}
	if c.StateReason != "" {
		attrs = append(attrs, keyStateReason.String(c.StateReason))
	}
	if c.Error != nil {
		code := codeString(c.Error)
		attrs = append(attrs, keyErrorType.String(code), keyStatusCode.String(code))
		// The code's name rather than the error message: a handler's
		// message may quote what the caller sent.
		span.SetStatus(codes.Error, c.Error.Code.String())
	}
	span.SetAttributes(attrs...)

	if c.Error == nil && c.ResultType == mrtr.ResultTypeInputRequired {
		asked := make([]string, len(c.Asked))
		for i, k := range c.Asked {
			asked[i] = clip(k)
		}
		span.AddEvent(eventInputRequired, trace.WithAttributes(keyRound.Int(c.Round), keyAsked.StringSlice(asked)))
	}
	if c.Refusal != "" {
		ev := []attribute.KeyValue{keyRefusal.String(c.Refusal)}
		if c.StateReason != "" {
			ev = append(ev, keyStateReason.String(c.StateReason))
		}
		if c.Error != nil {
			ev = append(ev, keyStatusCode.String(codeString(c.Error)))
		}
		span.AddEvent(eventRefusal, trace.WithAttributes(ev...))
	}
}

// recordMetrics records the metrics of c. Every attribute is of bounded
// cardinality: values the client chose appear only once the Server has
// accepted them.
func (in *instrumentation) recordMetrics(ctx context.Context, c *mrtr.Call, version string, elapsed time.Duration) {
	method := c.Message.Method
	base := make([]attribute.KeyValue, 0, 8)
	base = append(base, keyMethod.String(knownMethod(method)))
	resolved := targetResolved(c)
	switch method {
	case mrtr.MethodToolsCall:
		base = append(base, keyOperation.String(operationExecuteTool))
		if resolved {
			base = append(base, keyToolName.String(clip(c.Target)))
		}
	case mrtr.MethodPromptsGet:
		if resolved {
			base = append(base, keyPromptName.String(clip(c.Target)))
		}
	}
	if version != "" && versionAccepted(c) {
		base = append(base, keyProtocolVersion.String(version))
	}
	outcome := append([]attribute.KeyValue(nil), base...)
	if c.Error != nil {
		code := codeString(c.Error)
		outcome = append(outcome, keyErrorType.String(code), keyStatusCode.String(code))
	} else if c.ResultType != "" {
		outcome = append(outcome, keyResultType.String(c.ResultType))
	}
	if c.Refusal != "" {
		outcome = append(outcome, keyRefusal.String(c.Refusal))
	}
	set := metric.WithAttributeSet(attribute.NewSet(outcome...))
	in.requests.Add(ctx, 1, set)
	in.duration.Record(ctx, elapsed.Seconds(), set)

	if c.Error == nil && c.ResultType == mrtr.ResultTypeComplete && multiRound(method) {
		in.rounds.Record(ctx, int64(c.Round), metric.WithAttributeSet(attribute.NewSet(base...)))
	}
	if c.Refusal != "" {
		ref := []attribute.KeyValue{keyMethod.String(knownMethod(method)), keyRefusal.String(c.Refusal)}
		if c.StateReason != "" {
			ref = append(ref, keyStateReason.String(c.StateReason))
		}
		if c.Error != nil {
			ref = append(ref, keyStatusCode.String(codeString(c.Error)))
		}
		in.refusals.Add(ctx, 1, metric.WithAttributeSet(attribute.NewSet(ref...)))
	}
}
