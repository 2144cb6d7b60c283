package testkit

import (
	"io"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Process is the test binary started again as a subprocess, to run a
// command as a host runs it (its TestMain runs the command instead of the
// tests when a variable of env says so): its stdin and stdout are pipes,
// and its stderr is collected while it runs.
type Process struct {
	Cmd    *exec.Cmd
	Stdin  io.WriteCloser
	Stdout io.Reader
	Stderr *LogBuffer
}

// StartProcess starts the test binary with -test.run=^$ and the whole
// environment env (append to os.Environ() to keep it). The process is
// killed when tb ends, if it is still running.
func StartProcess(tb testing.TB, env []string) *Process {
	tb.Helper()
	p := &Process{Cmd: exec.Command(os.Args[0], "-test.run=^$"), Stderr: &LogBuffer{}}
	p.Cmd.Env = env
	p.Cmd.Stderr = p.Stderr
	var err error
	p.Stdin, err = p.Cmd.StdinPipe()
	require.NoError(tb, err)
	p.Stdout, err = p.Cmd.StdoutPipe()
	require.NoError(tb, err)
	require.NoError(tb, p.Cmd.Start())
	tb.Cleanup(func() { _ = p.Cmd.Process.Kill() })
	return p
}

// Exit waits for the process to exit, for within at most, and returns its
// exit status; tb fails when it does not exit in time. Whoever reads
// Stdout must have read it to its end, or be reading it, so that the
// wait can finish.
func (p *Process) Exit(tb testing.TB, within time.Duration) int {
	tb.Helper()
	done := make(chan error, 1)
	go func() { done <- p.Cmd.Wait() }()
	select {
	case <-done:
		return p.Cmd.ProcessState.ExitCode()
	case <-time.After(within):
		require.FailNow(tb, "the process did not exit within "+within.String())
		return -1
	}
}
