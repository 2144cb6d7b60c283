package client_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mrtrkit/mrtrkit/client"
	"github.com/mrtrkit/mrtrkit/discover"
	"github.com/mrtrkit/mrtrkit/internal/fixture"
	"github.com/mrtrkit/mrtrkit/mrtr"
	"github.com/mrtrkit/mrtrkit/state"
	"github.com/mrtrkit/mrtrkit/transport/stdio"
)

// serveEnv makes the test binary a server subprocess.
const serveEnv = "MRTRKIT_CLIENT_TEST_SERVE"

func TestMain(m *testing.M) {
	switch os.Getenv(serveEnv) {
	case "":
		os.Exit(m.Run())
	case "crash":
		fmt.Fprintln(os.Stderr, "starting up")
		fmt.Fprintln(os.Stderr, "fatal: no config file at /etc/x.conf")
		os.Exit(3)
	case "killed":
		fmt.Fprintln(os.Stderr, "about to be killed")
		_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
		time.Sleep(time.Minute)
	case "silent-legacy":
		// An old server that ignores methods it does not know, as some
		// do: it answers only initialize and tools/list.
		sc := bufio.NewScanner(os.Stdin)
		for sc.Scan() {
			var m struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
			}
			_ = json.Unmarshal(sc.Bytes(), &m)
			switch m.Method {
			case "initialize":
				fmt.Printf(`{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"silent","version":"1"}}}`+"\n", m.ID)
			case "tools/list":
				fmt.Printf(`{"jsonrpc":"2.0","id":%s,"result":{"tools":[{"name":"t","inputSchema":{"type":"object"}}]}}`+"\n", m.ID)
			}
		}
		os.Exit(0)
	case "fixture":
		srv, err := fixture.New(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
		if err != nil {
			panic(err)
		}
		if err := stdio.ServeStdio(context.Background(), srv); err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	case "hang-on-eof":
		// Ignores its stdin closing: Close must escalate to signals.
		time.Sleep(time.Minute)
		os.Exit(0)
	default:
		ring, _ := state.GenerateKeyRing()
		codec, _ := state.NewAEAD(ring)
		srv, err := mrtr.NewServer(discover.Description{
			Server:         discover.Implementation{Name: "stdio-kit", Version: "1"},
			LegacyVersions: []string{"2025-11-25"},
		}, mrtr.WithCodec(codec))
		if err != nil {
			panic(err)
		}
		_ = srv.AddTool(mrtr.Tool{Name: "three"}, mrtr.HandlerFunc(threeRounds))
		_ = srv.AddTool(mrtr.Tool{Name: "env"}, mrtr.HandlerFunc(func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
			var names []string
			for _, kv := range os.Environ() {
				names = append(names, strings.SplitN(kv, "=", 2)[0])
			}
			return mrtr.TextResult(strings.Join(names, ",")), nil
		}))
		_ = srv.AddTool(mrtr.Tool{Name: "slow"}, mrtr.HandlerFunc(func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
			<-ctx.Done()
			return nil, ctx.Err()
		}))
		if err := stdio.ServeStdio(context.Background(), srv); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
}

func serverCmd(t *testing.T, mode string) *exec.Cmd {
	exe, err := os.Executable()
	require.NoError(t, err)
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), serveEnv+"="+mode)
	return cmd
}

func TestStdioBothEras(t *testing.T) {
	for _, version := range []string{"", client.LegacyVersion} {
		t.Run("version="+version, func(t *testing.T) {
			opts := []client.Option{client.OnElicitation(answerName), client.OnSampling(answerModel), client.WithRoots(roots...)}
			if version != "" {
				opts = append(opts, client.WithProtocolVersion(version))
			}
			c, err := client.Connect(ctxT(t), client.Command(serverCmd(t, "kit")), opts...)
			require.NoError(t, err)
			assert.Equal(t, "stdio-kit", c.ServerInfo().Name)
			assert.Equal(t, version != "", c.Legacy())
			res, err := c.CallTool(ctxT(t), "three", nil)
			require.NoError(t, err)
			assert.Equal(t, "Ada/gpt/file:///src", res.Text())
			tools, err := c.ListTools(ctxT(t))
			require.NoError(t, err)
			assert.Len(t, tools, 3)

			// Cancelling a call tells the server; the connection goes on.
			ctx, cancel := context.WithTimeout(ctxT(t), 100*time.Millisecond)
			_, err = c.CallTool(ctx, "slow", nil)
			cancel()
			require.ErrorIs(t, err, context.DeadlineExceeded)
			_, err = c.CallTool(ctxT(t), "env", nil)
			require.NoError(t, err)

			start := time.Now()
			require.NoError(t, c.Close())
			assert.Less(t, time.Since(start), 2*time.Second, "the server exits when its stdin closes")
		})
	}
}

func TestStdioChildEnvCarriesNoCredentials(t *testing.T) {
	cmd := serverCmd(t, "kit")
	cmd.Env = append(cmd.Env, "MY_API_TOKEN=t0k", "GITHUB_PAT=p", "OPENAI_API_KEY=k", "DB_PASSWORD=pw", "HARMLESS=1")
	c, err := client.Connect(ctxT(t), client.Command(cmd, client.WithSecretEnv("GITHUB_PAT")))
	require.NoError(t, err)
	defer c.Close()
	res, err := c.CallTool(ctxT(t), "env", nil)
	require.NoError(t, err)
	names := strings.Split(res.Text(), ",")
	assert.Contains(t, names, "HARMLESS")
	for _, n := range []string{"MY_API_TOKEN", "GITHUB_PAT", "OPENAI_API_KEY", "DB_PASSWORD"} {
		assert.NotContains(t, names, n)
	}
}

func TestStdioFailedLaunchSaysHow(t *testing.T) {
	_, err := client.Connect(ctxT(t), client.Command(serverCmd(t, "crash")))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "exited with code 3")
	assert.Contains(t, err.Error(), "fatal: no config file at /etc/x.conf")
	assert.Contains(t, err.Error(), "stdio:")
	assert.Contains(t, err.Error(), "server/discover")

	_, err = client.Connect(ctxT(t), client.Command(serverCmd(t, "killed")))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "killed by signal killed")
	assert.Contains(t, err.Error(), "about to be killed")

	_, err = client.Connect(ctxT(t), client.Command(exec.Command("/nonexistent/mcp-server")))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "/nonexistent/mcp-server")
}

func TestStdioCloseEscalatesToSignals(t *testing.T) {
	// A server that never answers: Connect fails on its deadline, and the
	// process is then stopped with SIGTERM.
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := client.Connect(ctx, client.Command(serverCmd(t, "hang-on-eof"), client.WithShutdownTimeout(200*time.Millisecond)))
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Less(t, time.Since(start), 3*time.Second)
}

// Over stdio, a server that does not answer server/discover at all is
// taken for a server of the initialize era once the probe bound passes.
func TestStdioSilentProbeFallsBackToInitialize(t *testing.T) {
	start := time.Now()
	c, err := client.Connect(ctxT(t), client.Command(serverCmd(t, "silent-legacy")), client.WithProbeTimeout(300*time.Millisecond))
	require.NoError(t, err)
	defer c.Close()
	assert.True(t, c.Legacy())
	assert.Equal(t, "2025-06-18", c.Version())
	assert.GreaterOrEqual(t, time.Since(start), 300*time.Millisecond)
	tools, err := c.ListTools(ctxT(t))
	require.NoError(t, err)
	assert.Len(t, tools, 1)
}

// The conformance fixture over stdio: three rounds, and a listen stream
// that the client ends with notifications/cancelled.
func TestStdioFixtureRoundsAndListen(t *testing.T) {
	c, err := client.Connect(ctxT(t), client.Command(serverCmd(t, "fixture")),
		client.OnElicitation(answerName), client.OnSampling(answerModel), client.WithRoots(roots...))
	require.NoError(t, err)
	defer c.Close()
	assert.False(t, c.Legacy())
	res, err := c.CallTool(ctxT(t), "test_three_rounds", map[string]any{})
	require.NoError(t, err)
	assert.Equal(t, 3, res.Rounds)

	ctx, cancel := context.WithCancel(ctxT(t))
	defer cancel()
	changed := make(chan struct{}, 1)
	acked := make(chan struct{}, 1)
	done := make(chan error, 1)
	go func() {
		done <- c.Listen(ctx, client.ListenFilter{ToolsListChanged: true}, func(n client.Notification) {
			switch n.Method {
			case "notifications/subscriptions/acknowledged":
				acked <- struct{}{}
			case "notifications/tools/list_changed":
				changed <- struct{}{}
			}
		})
	}()
	select {
	case <-acked:
	case err := <-done:
		t.Fatalf("listen ended: %v", err)
	case <-time.After(5 * time.Second):
		t.Fatal("no acknowledgement")
	}
	_, err = c.CallTool(ctxT(t), "test_trigger_tool_change", map[string]any{})
	require.NoError(t, err)
	select {
	case <-changed:
	case <-time.After(5 * time.Second):
		t.Fatal("no list_changed")
	}
	cancel()
	assert.ErrorIs(t, <-done, context.Canceled)
	// The connection goes on after the listen stream ends.
	_, err = c.ListTools(ctxT(t))
	require.NoError(t, err)
}
