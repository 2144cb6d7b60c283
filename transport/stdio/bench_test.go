package stdio_test

// In the timed loop each check is a plain if, and testify is called only
// when the check fails: require calls b.Helper, which walks the stack, and
// boxes its arguments on every call, which would count in ns/op and
// allocs/op. The goroutine that writes the requests sends its error back to
// the benchmark's goroutine, which checks it.

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/mrtrkit/mrtrkit/transport/stdio"
	"github.com/stretchr/testify/require"
)

// BenchmarkPipeToolsCall measures round trips of tools/call through Serve
// over a pair of pipes, the client in the same process: with one call in
// flight (each request written after the previous answer is read) and
// with 8 in flight. calls/s is the round-trip rate; cpu-us/call is the
// process's CPU time (user and system, client and server together) per
// call. os.Pipe is what a real stdio server reads and writes; io.Pipe
// leaves the kernel out.
func BenchmarkPipeToolsCall(b *testing.B) {
	for _, kind := range []string{"os.Pipe", "io.Pipe"} {
		for _, inflight := range []int{1, 8} {
			b.Run(kind+"/inflight="+strconv.Itoa(inflight), func(b *testing.B) {
				benchPipe(b, kind, inflight)
			})
		}
	}
}

func benchPipe(b *testing.B, kind string, inflight int) {
	f := newFixture(b)
	var (
		inR  io.Reader
		inW  io.WriteCloser
		outR io.Reader
		outW io.WriteCloser
	)
	if kind == "os.Pipe" {
		r1, w1, err := os.Pipe()
		require.NoError(b, err)
		r2, w2, err := os.Pipe()
		require.NoError(b, err)
		defer r1.Close()
		defer r2.Close()
		inR, inW, outR, outW = r1, w1, r2, w2
	} else {
		r1, w1 := io.Pipe()
		r2, w2 := io.Pipe()
		inR, inW, outR, outW = r1, w1, r2, w2
	}
	done := make(chan error, 1)
	go func() {
		err := stdio.Serve(context.Background(), f.srv, inR, outW, stdio.WithLogger(quiet))
		_ = outW.Close()
		done <- err
	}()

	prefix := []byte(`{"jsonrpc":"2.0","id":`)
	suffix := []byte(`,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"},` + modernMeta("") + "}}\n")
	sem := make(chan struct{}, inflight)
	writeErr := make(chan error, 1)
	br := bufio.NewReaderSize(outR, 64<<10)

	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := cpuTime()
	start := time.Now()
	go func() {
		line := make([]byte, 0, 512)
		for i := range b.N {
			sem <- struct{}{}
			line = append(strconv.AppendInt(append(line[:0], prefix...), int64(i), 10), suffix...)
			if _, err := inW.Write(line); err != nil {
				writeErr <- err
				return
			}
		}
		writeErr <- nil
	}()
	for range b.N {
		line, err := br.ReadSlice('\n')
		if err != nil {
			require.NoError(b, err)
		}
		if !bytes.Contains(line, []byte(`"text":"hello"`)) {
			require.Failf(b, "unexpected answer", "%s", line)
		}
		<-sem
	}
	elapsed := time.Since(start)
	cpu := cpuTime() - cpu0
	b.StopTimer()
	require.NoError(b, <-writeErr, "writing the requests")
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "calls/s")
	if cpu > 0 {
		b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-us/call")
	}
	_ = inW.Close()
	require.NoError(b, <-done, "Serve")
}
