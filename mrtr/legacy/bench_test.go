package legacy

// In the timed loops, testify is called only when a check has failed:
// require and assert call b.Helper, which walks the stack, on every call.

import (
	"context"
	"encoding/json"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/mrtrkit/mrtrkit/mrtr"
	"github.com/stretchr/testify/require"
)

// benchTool asks the client for its roots once, then answers: one round.
func benchTool(_ context.Context, req *mrtr.Request) (mrtr.Result, error) {
	r, ok := req.Responses.Roots("where")
	if !ok {
		return mrtr.Ask("where", &mrtr.RootsRequest{}), nil
	}
	return textResult("roots " + strconv.Itoa(len(r.Roots))), nil
}

func benchServer(b *testing.B) *mrtr.Server {
	srv := newTestServer(b, &book{})
	require.NoError(b, srv.AddTool(mrtr.Tool{Name: "bench", InputSchema: json.RawMessage(`{"type":"object"}`)}, mrtr.HandlerFunc(benchTool)))
	return srv
}

func mustParse(b *testing.B, s string) *mrtr.Message {
	m, _, perr := mrtr.ParseMessage([]byte(s))
	if perr != nil {
		require.Nil(b, perr)
	}
	return m
}

// chanSender hands each message the server sends to the client loop.
type chanSender chan []byte

func (c chanSender) Send(p []byte) error {
	c <- append([]byte(nil), p...)
	return nil
}

// BenchmarkBridgedCall is one tools/call of a client of the initialize era
// whose handler asks one question: the request, the server-to-client
// roots/list, the client's answer posted as its own message (through a
// session looked up afresh, as a host does), and the final result.
// Compare with BenchmarkModernCall, the same handler served to a
// 2026-07-28 client in two requests.
//
// The host serves the calls on one goroutine that lives as long as the
// benchmark, as an HTTP/1.1 server serves the requests of a kept-alive
// connection, and as BenchmarkModernCall serves its requests; the client
// answers on the benchmark's. BenchmarkBridgedCallGoroutinePerCall serves
// each call on a goroutine of its own instead.
func BenchmarkBridgedCall(b *testing.B) { benchBridged(b, false) }

// BenchmarkBridgedCallGoroutinePerCall is BenchmarkBridgedCall with each
// call served on a new goroutine, as an HTTP/2 server serves each request:
// the goroutine's stack grows to the handler's depth on every call, which
// is a cost of the goroutine, not of the bridge.
func BenchmarkBridgedCallGoroutinePerCall(b *testing.B) { benchBridged(b, true) }

// hostCall is one call handed to the host goroutine of benchBridged.
type hostCall struct {
	sess *Session
	msg  *mrtr.Message
}

func benchBridged(b *testing.B, perCall bool) {
	v := &env{t: b, srv: benchServer(b)}
	v.e = newEngine(b, v.srv)
	s := v.open("ada", `{"roots":{}}`)
	out := make(chanSender, 4)
	answer := []byte(`,"result":{"roots":[{"uri":"file:///w","name":"w"}]}}`)
	done := make(chan *mrtr.Response, 1)
	calls := make(chan hostCall)
	defer close(calls)
	go func() {
		for c := range calls {
			done <- c.sess.Handle(context.Background(), c.msg, out)
		}
	}()
	b.ReportAllocs()
	i := 0
	start := processCPU()
	for b.Loop() {
		i++
		sess, err := v.e.Session(s.ID(), caller("ada"))
		if err != nil {
			require.NoError(b, err)
		}
		msg := mustParse(b, `{"jsonrpc":"2.0","id":`+strconv.Itoa(i)+`,"method":"tools/call","params":{"name":"bench","arguments":{}}}`)
		if perCall {
			go func() { done <- sess.Handle(context.Background(), msg, out) }()
		} else {
			calls <- hostCall{sess, msg}
		}
		var resp *mrtr.Response
		for resp == nil {
			select {
			case raw := <-out:
				var m struct {
					ID json.RawMessage `json:"id"`
				}
				if json.Unmarshal(raw, &m) != nil || len(m.ID) == 0 {
					continue
				}
				a, err := v.e.Session(s.ID(), caller("ada"))
				if err != nil {
					require.NoError(b, err)
				}
				body := append(append([]byte(`{"jsonrpc":"2.0","id":`), m.ID...), answer...)
				a.Handle(context.Background(), mustParse(b, string(body)), nil)
				a.Release()
			case resp = <-done:
			}
		}
		sess.Release()
		if resp.Error != nil {
			require.Nil(b, resp.Error, "call failed")
		}
	}
	reportCPU(b, start)
}

// BenchmarkModernCall is BenchmarkBridgedCall's handler served to a
// 2026-07-28 client: a first request answered input_required, and the
// retry with the answer and the sealed requestState.
func BenchmarkModernCall(b *testing.B) {
	srv := benchServer(b)
	const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"roots":{}}}`
	first := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"bench","arguments":{},` + meta + `}}`
	in := &mrtr.Inbound{Principal: "ada"}
	b.ReportAllocs()
	start := processCPU()
	for b.Loop() {
		in.Message = mustParse(b, first)
		resp := srv.Handle(context.Background(), in)
		var r struct {
			RequestState string `json:"requestState"`
		}
		if resp.Error != nil || json.Unmarshal(resp.Result, &r) != nil || r.RequestState == "" {
			require.Failf(b, "first round", "%+v %s", resp.Error, resp.Result)
		}
		retry := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"bench","arguments":{},` + meta +
			`,"requestState":"` + r.RequestState + `","inputResponses":{"where":{"roots":[{"uri":"file:///w","name":"w"}]}}}}`
		in.Message = mustParse(b, retry)
		if resp := srv.Handle(context.Background(), in); resp.Error != nil {
			require.Nil(b, resp.Error, "retry")
		}
	}
	reportCPU(b, start)
}

// reportCPU reports the process CPU time per run since start (cpu-ns/op)
// beside the wall time: the two cores are shared, so compare the pair on
// cpu-ns/op when the machine is busy.
func reportCPU(b *testing.B, start time.Duration) {
	b.ReportMetric(float64(processCPU()-start)/float64(b.N), "cpu-ns/op")
}

// BenchmarkIdleSessions opens b.N sessions that then sit idle, and
// reports the heap each holds (heap-B/session) and how many the engine
// keeps (sessions): at most DefaultMaxSessions, the least recently used
// being dropped beyond that. Run with -benchtime=10000x to fill the
// default table exactly.
func BenchmarkIdleSessions(b *testing.B) {
	v := &env{t: b, srv: benchServer(b)}
	v.e = newEngine(b, v.srv)
	ids := make([]string, 0, b.N)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		ids = append(ids, v.open("user-"+strconv.Itoa(i), `{"roots":{},"elicitation":{}}`).ID())
	}
	b.StopTimer()
	runtime.GC()
	runtime.ReadMemStats(&after)
	held := float64(after.HeapAlloc) - float64(before.HeapAlloc)
	// The ids are what a client keeps; they are not the server's memory.
	idBytes := 0
	for _, id := range ids {
		idBytes += len(id)
	}
	b.ReportMetric((held-float64(idBytes))/float64(b.N), "heap-B/session")
	b.ReportMetric(float64(v.e.Sessions()), "sessions")
	b.ReportMetric(float64(idBytes)/float64(b.N), "id-bytes")
	runtime.KeepAlive(ids)
}
