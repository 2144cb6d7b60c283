package goclient

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/mrtrkit/mrtrkit/client"
)

// fixtureProcess runs the mrtrkit conformance fixture (conformance/server)
// as its own process, so that the CPU this process spends is the
// client's alone.
func fixtureProcess(b testing.TB) string {
	dir := b.TempDir()
	bin := filepath.Join(dir, "server")
	out, err := exec.Command("go", "build", "-o", bin, "github.com/mrtrkit/mrtrkit/conformance/server").CombinedOutput()
	require.NoError(b, err, string(out))
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(b, err)
	addr := l.Addr().String()
	l.Close()
	cmd := exec.Command(bin, "-addr", addr)
	cmd.Stderr = os.Stderr
	require.NoError(b, cmd.Start())
	b.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	for i := 0; i < 100; i++ {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return "http://" + addr + "/mcp"
		}
		time.Sleep(50 * time.Millisecond)
	}
	b.Fatal("the fixture did not listen")
	return ""
}

func cpuNow() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// runCPU runs call b.N times and reports this process's CPU per call.
func runCPU(b *testing.B, call func() error) {
	b.ReportAllocs()
	b.ResetTimer()
	start := cpuNow()
	for i := 0; i < b.N; i++ {
		if err := call(); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(cpuNow()-start)/float64(b.N), "client-cpu-ns/op")
}

// BenchmarkClientCPU measures the client's own CPU (the server runs in
// another process) per tools/call and per call of one input-required
// round, for mrtrkit's client and the go-sdk v1.8.0 client, in one run.
func BenchmarkClientCPU(b *testing.B) {
	url := fixtureProcess(b)
	ctx := context.Background()
	for _, tc := range []struct{ name, tool string }{{"tools-call", "test_simple_text"}, {"mrtr-round", "test_input_required_result_elicitation"}} {
		b.Run(tc.name+"/mrtrkit", func(b *testing.B) {
			c, err := client.Connect(ctx, client.HTTP(url), client.OnElicitation(elicit))
			require.NoError(b, err)
			defer c.Close()
			runCPU(b, func() error {
				res, err := c.CallTool(ctx, tc.tool, map[string]any{})
				if err == nil && res.IsError {
					b.Fatal(res.Text())
				}
				return err
			})
		})
		b.Run(tc.name+"/go-sdk", func(b *testing.B) {
			gc := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, &mcp.ClientOptions{
				ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"username": "ada", "name": "ada", "confirm": true}}, nil
				}})
			cs, err := gc.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url}, &mcp.ClientSessionOptions{ProtocolVersion: "2026-07-28"})
			require.NoError(b, err)
			defer cs.Close()
			runCPU(b, func() error {
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tc.tool, Arguments: map[string]any{}})
				if err == nil && res.IsError {
					b.Fatal(res.Content)
				}
				return err
			})
		})
	}
}
