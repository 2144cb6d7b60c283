// Command otelfixture is the conformance fixture server of mrtrkit
// (conformance/fixture, the same flags as conformance/server) with the
// otelmrtr interceptor added, outermost, on an OpenTelemetry SDK tracer
// provider and meter provider of its own. It lives in the OpenTelemetry
// module so that the core module needs no OpenTelemetry dependency.
//
// Nothing is exported over the network: a span processor counts the spans
// that end (by name, with their error status, events and remote parents),
// and a manual reader holds the metrics. When the server has stopped,
// every request answered, the tally is written as JSON (Report) to the
// file named by -telemetry-report, and logged. The production test
// (conformance/production) compares it with the fixture's own call
// counter.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"log/slog"
	"os"
	"sync"

	"go.opentelemetry.io/otel/codes"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/mrtrkit/mrtrkit/conformance/fixture"
	"github.com/mrtrkit/mrtrkit/mrtr"
	otelmrtr "github.com/mrtrkit/mrtrkit/otel"
)

func main() {
	var reportPath string
	tel := newTelemetry()
	os.Exit(fixture.Main(os.Args[1:], fixture.Extras{
		Flags: func(fs *flag.FlagSet) {
			fs.StringVar(&reportPath, "telemetry-report", "", "write the spans and metrics recorded, as JSON, to this file once the server has stopped")
		},
		Interceptors: func(*slog.Logger) ([]mrtr.Interceptor, error) {
			return []mrtr.Interceptor{tel.interceptor()}, nil
		},
		Stopped: func(log *slog.Logger) error {
			rep, err := tel.report(context.Background())
			if err != nil {
				return err
			}
			b, err := json.Marshal(rep)
			if err != nil {
				return err
			}
			log.Info("telemetry", "report", string(b))
			if reportPath == "" {
				return nil
			}
			return os.WriteFile(reportPath, append(b, '\n'), 0o600)
		},
	}))
}

// telemetry is an SDK tracer provider whose spans a spanCounter counts and
// an SDK meter provider read by a manual reader.
type telemetry struct {
	spans  *spanCounter
	reader *sdkmetric.ManualReader
	tp     *sdktrace.TracerProvider
	mp     *sdkmetric.MeterProvider
}

func newTelemetry() *telemetry {
	t := &telemetry{spans: newSpanCounter(), reader: sdkmetric.NewManualReader()}
	t.tp = sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(t.spans))
	t.mp = sdkmetric.NewMeterProvider(sdkmetric.WithReader(t.reader))
	return t
}

// interceptor returns the otelmrtr interceptor on t's providers.
func (t *telemetry) interceptor() mrtr.Interceptor {
	return otelmrtr.Interceptor(otelmrtr.WithTracerProvider(t.tp), otelmrtr.WithMeterProvider(t.mp))
}

// report flushes the spans, collects the metrics and returns the tally.
func (t *telemetry) report(ctx context.Context) (Report, error) {
	if err := t.tp.ForceFlush(ctx); err != nil {
		return Report{}, err
	}
	rep := Report{Spans: t.spans.snapshot(), Metrics: map[string]MetricTotal{}}
	var rm metricdata.ResourceMetrics
	if err := t.reader.Collect(ctx, &rm); err != nil {
		return Report{}, err
	}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			rep.Metrics[m.Name] = total(m.Data)
		}
	}
	return rep, nil
}

// Report is what -telemetry-report holds.
type Report struct {
	Spans SpanTally `json:"spans"`
	// Metrics are the totals of each metric recorded, by name.
	Metrics map[string]MetricTotal `json:"metrics"`
}

// SpanTally counts the spans that ended.
type SpanTally struct {
	// Total is the number of spans.
	Total int64 `json:"total"`
	// ByName counts them by span name (the MCP method).
	ByName map[string]int64 `json:"by_name"`
	// Errors counts the spans whose status is Error.
	Errors int64 `json:"errors"`
	// Events counts the span events by name.
	Events map[string]int64 `json:"events"`
	// RemoteParents counts the spans that continued a caller's trace.
	RemoteParents int64 `json:"remote_parents"`
}

// MetricTotal sums one metric over its data points: Sum is a counter's
// or up-down counter's value (over every attribute set), Count a
// histogram's number of observations.
type MetricTotal struct {
	Points int   `json:"points"`
	Sum    int64 `json:"sum,omitempty"`
	Count  int64 `json:"count,omitempty"`
}

func total(d metricdata.Aggregation) MetricTotal {
	var t MetricTotal
	switch d := d.(type) {
	case metricdata.Sum[int64]:
		for _, p := range d.DataPoints {
			t.Points++
			t.Sum += p.Value
		}
	case metricdata.Histogram[float64]:
		for _, p := range d.DataPoints {
			t.Points++
			t.Count += int64(p.Count)
		}
	case metricdata.Histogram[int64]:
		for _, p := range d.DataPoints {
			t.Points++
			t.Count += int64(p.Count)
		}
	}
	return t
}

// spanCounter is a span processor that counts the spans that end; it
// keeps no span, so its memory does not grow with the traffic.
type spanCounter struct {
	mu sync.Mutex
	t  SpanTally
}

func newSpanCounter() *spanCounter {
	return &spanCounter{t: SpanTally{ByName: map[string]int64{}, Events: map[string]int64{}}}
}

func (c *spanCounter) OnStart(context.Context, sdktrace.ReadWriteSpan) {}

func (c *spanCounter) OnEnd(s sdktrace.ReadOnlySpan) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t.Total++
	c.t.ByName[s.Name()]++
	if s.Status().Code == codes.Error {
		c.t.Errors++
	}
	for _, e := range s.Events() {
		c.t.Events[e.Name]++
	}
	if s.Parent().IsRemote() {
		c.t.RemoteParents++
	}
}

func (c *spanCounter) Shutdown(context.Context) error   { return nil }
func (c *spanCounter) ForceFlush(context.Context) error { return nil }

func (c *spanCounter) snapshot() SpanTally {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := c.t
	t.ByName, t.Events = map[string]int64{}, map[string]int64{}
	for k, v := range c.t.ByName {
		t.ByName[k] = v
	}
	for k, v := range c.t.Events {
		t.Events[k] = v
	}
	return t
}
