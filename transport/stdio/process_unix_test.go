//go:build unix

package stdio_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mrtrkit/mrtrkit/internal/testkit"
	"github.com/mrtrkit/mrtrkit/transport/stdio"
)

// helperEnv makes the test binary a stdio server (see TestMain).
const helperEnv = "MRTRKIT_STDIO_TEST_SERVER"

func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) == "1" {
		os.Exit(serverMain())
	}
	code := m.Run()
	for _, f := range cleanups {
		f()
	}
	os.Exit(code)
}

// cleanups run when the test binary ends: they remove what the benchmarks
// built.
var cleanups []func()

// serverMain is what a stdio server's main does: serve until stdin ends
// or a signal comes, then exit 0.
func serverMain() int {
	f := newFixture(processTB{})
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := stdio.ServeStdio(ctx, f.srv, stdio.WithLogger(quiet)); err != nil {
		return 1
	}
	return 0
}

// processTB lets the helper process build the test fixture: a failure
// there ends the process with status 2.
type processTB struct{ testing.TB }

func (processTB) Helper() {}

func (processTB) Errorf(format string, args ...any) { fmt.Fprintf(os.Stderr, format+"\n", args...) }

func (processTB) FailNow() { os.Exit(2) }

// A real process: it answers on stdout, and exits 0 when its stdin is
// closed, or on SIGTERM while its stdin stays open.
func TestProcess(t *testing.T) {
	start := func(t *testing.T) (*testkit.Process, *bufio.Reader) {
		p := testkit.StartProcess(t, append(os.Environ(), helperEnv+"=1"))
		br := bufio.NewReader(p.Stdout)
		_, err := io.WriteString(p.Stdin, call("1", "echo", `{"text":"from a process"}`)+"\n")
		require.NoError(t, err)
		line, err := br.ReadString('\n')
		require.NoError(t, err)
		assert.Contains(t, line, `"text":"from a process"`)
		return p, br
	}
	exited := func(t *testing.T, p *testkit.Process) {
		require.Equalf(t, 0, p.Exit(t, wait), "exit status; stderr:\n%s", p.Stderr.String())
	}
	t.Run("stdin closed", func(t *testing.T) {
		t.Parallel()
		p, br := start(t)
		_, err := io.WriteString(p.Stdin, call("2", "stubborn", `{"tag":"s","sleepMs":30}`)+"\n")
		require.NoError(t, err)
		require.NoError(t, p.Stdin.Close())
		line, err := br.ReadString('\n')
		require.NoError(t, err)
		assert.Contains(t, line, "stubborn s", "answered during the shutdown")
		exited(t, p)
	})
	t.Run("SIGTERM", func(t *testing.T) {
		t.Parallel()
		p, _ := start(t)
		defer p.Stdin.Close()
		require.NoError(t, p.Cmd.Process.Signal(syscall.SIGTERM))
		exited(t, p)
	})
}
