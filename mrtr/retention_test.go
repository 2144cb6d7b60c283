package mrtr_test

import (
	"context"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mrtrkit/mrtrkit/internal/testkit"
	"github.com/mrtrkit/mrtrkit/mrtr"
)

// The Response Handle returns must not keep the request alive: a
// transport holds it for as long as a slow client takes to read the
// answer, and the request body (up to the body limit) must be free by
// then. The body here is 1 MiB; once Handle has returned and only the
// Response is held, the garbage collector must be able to free it.
func TestResponseDoesNotHoldTheRequest(t *testing.T) {
	srv := testkit.Server(t, testDesc(), mrtr.WithCodec(testkit.Codec(t)))
	require.NoError(t, srv.AddTool(mrtr.Tool{Name: "len"}, mrtr.HandlerFunc(func(_ context.Context, req *mrtr.Request) (mrtr.Result, error) {
		return mrtr.TextResult("ok"), nil
	})))
	freed := make(chan struct{})
	resp := func() *mrtr.Response {
		body := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"len","arguments":{"pad":"` +
			strings.Repeat("x", 1<<20) + `"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`)
		runtime.AddCleanup(&body[0], func(ch chan struct{}) { close(ch) }, freed)
		msg, _, perr := mrtr.ParseMessage(body)
		require.Nil(t, perr)
		return srv.Handle(context.Background(), &mrtr.Inbound{Message: msg})
	}()
	require.Nil(t, resp.Error)
	deadline := time.Now().Add(5 * time.Second)
	for {
		runtime.GC()
		select {
		case <-freed:
			runtime.KeepAlive(resp)
			return
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("the request body is still reachable from the Response")
		}
		time.Sleep(10 * time.Millisecond)
	}
}
