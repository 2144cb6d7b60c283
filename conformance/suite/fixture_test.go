package suite

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fixturePackage is mrtrkit's conformance fixture server, a main package.
const fixturePackage = "github.com/mrtrkit/mrtrkit/conformance/server"

// startFixtureServer builds the fixture server, starts it on a free
// loopback port and returns its URL. The server is stopped when the test
// ends.
func startFixtureServer(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs the fixture server; skipped with -short")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		require.EqualValues(t, "", os.Getenv("CI"), "the go command is not on PATH")
		t.Skip("the go command is not on PATH")
	}
	bin := filepath.Join(t.TempDir(), "fixture-server")
	build := exec.Command(goTool, "build", "-o", bin, fixturePackage)
	if out, err := build.CombinedOutput(); err != nil {
		require.FailNow(t, fmt.Sprintf("go build %s: %v\n%s", fixturePackage, err, out))
	}

	cmd := exec.Command(bin, "-addr", "127.0.0.1:0", "-path", "/mcp")
	cmd.Env = append(os.Environ(), "MRTRKIT_STATE_KEYS=")
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	done := make(chan struct{})
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})

	// The server logs the URL it listens on; the rest of its log is
	// drained so that it never blocks on a full pipe.
	urls := make(chan string, 1)
	go func() {
		defer close(done)
		listening := regexp.MustCompile(`url=(http://\S+)`)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := listening.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case urls <- m[1]:
				default:
				}
			}
		}
		_, _ = io.Copy(io.Discard, stderr)
		_ = cmd.Wait()
	}()
	select {
	case u := <-urls:
		return u
	case <-done:
		require.FailNow(t, "the fixture server exited before listening")
	case <-time.After(30 * time.Second):
		require.FailNow(t, "the fixture server did not report its URL in 30 s")
	}
	return ""
}

// TestFixtureServerPassesEverything runs the suite with its defaults
// against the real fixture server, which serves both eras. The fixture
// server has no authentication, so the cross-principal replay and the
// legacy session-principal scenario cannot run, and its state is opaque
// (AEAD), so there is nothing to forge.
func TestFixtureServerPassesEverything(t *testing.T) {
	url := startFixtureServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	rep, err := Run(ctx, Config{URL: url})
	require.NoError(t, err)
	requireAllPass(t, rep, "replay.other-principal", "state.forged", "legacy.session-principal", "tasks.other-principal")
	res, _ := rep.Result("legacy.no-leak")
	assert.Containsf(t, res.Reason, "test_input_required_result_multi_round 2 round(s) of legs", "legacy.no-leak: %s", res.Reason)
	// test_three_rounds is a fixture of the interop tests: when the fixture
	// lists it, the default run covers rounds 1 to 3.
	assert.Falsef(t, !strings.Contains(res.Reason, "test_three_rounds is not listed") && !strings.Contains(res.Reason, "rounds covered: 1, 2, 3 of 1..3"), "legacy.no-leak: %s", res.Reason)
	if t.Failed() {
		_ = rep.WriteText(os.Stderr, true)
	}
}
