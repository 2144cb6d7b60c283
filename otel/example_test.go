package otelmrtr_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"strings"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/mrtrkit/mrtrkit/discover"
	"github.com/mrtrkit/mrtrkit/mrtr"
	"github.com/mrtrkit/mrtrkit/mrtr/mrtrtest"
	otelmrtr "github.com/mrtrkit/mrtrkit/otel"
	"github.com/mrtrkit/mrtrkit/state"
)

// A greeter that asks for a name, traced: one span per round, the first
// with an event naming the key it asked, and a refused requestState.
func ExampleInterceptor() {
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	defer tp.Shutdown(context.Background())

	ring, _ := state.GenerateKeyRing()
	codec, _ := state.NewAEAD(ring)
	srv, _ := mrtr.NewServer(discover.Description{Server: discover.Implementation{Name: "greeter", Version: "1.0.0"}},
		mrtr.WithCodec(codec),
		mrtr.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))),
		mrtr.WithInterceptors(otelmrtr.Interceptor(otelmrtr.WithTracerProvider(tp))))
	_ = srv.AddTool(mrtr.Tool{Name: "greet"}, mrtr.HandlerFunc(func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
		a, err := mrtr.Elicit(ctx, req, "name", &mrtr.ElicitRequest{Message: "Your name?", RequestedSchema: &mrtr.ElicitSchema{
			Type: "object", Properties: map[string]json.RawMessage{"name": json.RawMessage(`{"type":"string"}`)}}})
		if err != nil {
			return nil, err
		}
		return mrtr.TextResult(fmt.Sprintf("Hello, %v!", a.Content["name"])), nil
	}))

	ctx := context.Background()
	c := mrtrtest.NewClient(srv, mrtrtest.OnElicitation(func(ctx context.Context, r *mrtr.ElicitRequest) (*mrtr.ElicitResult, error) {
		return &mrtr.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}}, nil
	}))
	res, _ := c.CallTool(ctx, "greet", nil)
	fmt.Println(res.Text())
	mrtrtest.Send(ctx, srv, "", mrtrtest.NewRequest(mrtr.MethodToolsCall, map[string]any{"name": "greet", "requestState": "forged"}).
		WithMeta("traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"))

	show := []string{"gen_ai.tool.name", "mrtr.round", "mrtr.state.presented", "mrtr.result_type", "mrtr.refusal", "mrtr.state.reason", "error.type"}
	for _, s := range spans.Ended() {
		got := map[string]string{}
		for _, kv := range s.Attributes() {
			got[string(kv.Key)] = kv.Value.Emit()
		}
		var line []string
		for _, k := range show {
			if v, ok := got[k]; ok {
				line = append(line, k+"="+v)
			}
		}
		fmt.Printf("%s [%s] %s\n", s.Name(), s.Status().Code, strings.Join(line, " "))
		if s.Parent().IsRemote() {
			fmt.Println("  trace", s.SpanContext().TraceID(), "parent", s.Parent().SpanID())
		}
		for _, e := range s.Events() {
			var ev []string
			for _, kv := range e.Attributes {
				ev = append(ev, string(kv.Key)+"="+kv.Value.Emit())
			}
			fmt.Printf("  event %s %s\n", e.Name, strings.Join(ev, " "))
		}
	}
	// Output:
	// Hello, Ada!
	// tools/call greet [Unset] gen_ai.tool.name=greet mrtr.round=0 mrtr.state.presented=false mrtr.result_type=input_required
	//   event mrtr.input_required mrtr.round=0 mrtr.asked=["name"]
	// tools/call greet [Unset] gen_ai.tool.name=greet mrtr.round=1 mrtr.state.presented=true mrtr.result_type=complete
	// tools/call greet [Error] gen_ai.tool.name=greet mrtr.round=0 mrtr.state.presented=true mrtr.refusal=state mrtr.state.reason=malformed error.type=-32602
	//   trace 4bf92f3577b34da6a3ce929d0e0e4736 parent 00f067aa0ba902b7
	//   event mrtr.refusal mrtr.refusal=state mrtr.state.reason=malformed rpc.response.status_code=-32602
}
