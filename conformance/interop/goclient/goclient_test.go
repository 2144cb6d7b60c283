package goclient

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mrtrkit/mrtrkit/client"
	"github.com/mrtrkit/mrtrkit/mrtr"
)

// everything is the go-sdk v1.8.0 conformance everything-server, built
// once for the run from the module cache (or the module proxy).
var everything string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "goclient")
	if err != nil {
		panic(err)
	}
	everything = filepath.Join(dir, "everything-server")
	out, err := exec.Command("go", "build", "-o", everything, "github.com/modelcontextprotocol/go-sdk/conformance/everything-server").CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "building the go-sdk everything-server: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// startHTTP runs the everything-server on a loopback port.
func startHTTP(t testing.TB, stateless bool) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	l.Close()
	cmd := exec.Command(everything, "-http="+addr, fmt.Sprintf("-stateless=%v", stateless))
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	url := "http://" + addr + "/mcp"
	for i := 0; i < 100; i++ {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return url
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatal("the everything-server did not listen")
	return ""
}

var (
	sample mrtr.SamplingFunc = func(ctx context.Context, r *mrtr.SamplingRequest) (*mrtr.SamplingResult, error) {
		return &mrtr.SamplingResult{Role: mrtr.RoleAssistant, Model: "m", Content: []mrtr.SamplingContent{{Type: "text", Text: "sampled"}}}, nil
	}
	elicit mrtr.ElicitFunc = func(ctx context.Context, r *mrtr.ElicitRequest) (*mrtr.ElicitResult, error) {
		content := map[string]any{}
		if r.RequestedSchema != nil {
			for k := range r.RequestedSchema.Properties {
				content[k] = "ada"
			}
		}
		return &mrtr.ElicitResult{Action: mrtr.Accepted, Content: content}, nil
	}
	answers = []client.Option{client.OnSampling(sample), client.OnElicitation(elicit), client.WithRoots(mrtr.Root{URI: "file:///src", Name: "src"})}
)

// At 2026-07-28 (the stateless server): the MRTR tools, answered in
// rounds.
func TestGoSDKEverythingServerModern(t *testing.T) {
	c, err := client.Connect(ctxT(t), client.HTTP(startHTTP(t, true)), answers...)
	require.NoError(t, err)
	defer c.Close()
	assert.False(t, c.Legacy())
	assert.Equal(t, "mcp-conformance-test-server", c.ServerInfo().Name)
	tools, err := c.ListTools(ctxT(t))
	require.NoError(t, err)
	assert.Greater(t, len(tools), 20)
	for _, tool := range []string{"test_input_required_result_sampling", "test_input_required_result_elicitation",
		"test_input_required_result_list_roots", "test_input_required_result_multiple_inputs",
		"test_input_required_result_multi_round", "test_input_required_result_request_state"} {
		res, err := c.CallTool(ctxT(t), tool, map[string]any{})
		require.NoError(t, err, tool)
		assert.False(t, res.IsError, "%s: %s", tool, res.Text())
		assert.GreaterOrEqual(t, res.Rounds, 1, tool)
	}
	res, err := c.CallTool(ctxT(t), "test_x_mcp_header", map[string]any{"region": "eu west"})
	require.NoError(t, err)
	assert.False(t, res.IsError, res.Text())
}

// At 2025-11-25 (the stateful server): sampling and elicitation as real
// requests on the session's streams, answered by the same functions.
func TestGoSDKEverythingServerLegacy(t *testing.T) {
	c, err := client.Connect(ctxT(t), client.HTTP(startHTTP(t, false)), append(answers, client.WithProtocolVersion(client.LegacyVersion))...)
	require.NoError(t, err)
	defer c.Close()
	assert.True(t, c.Legacy())
	res, err := c.CallTool(ctxT(t), "test_sampling", map[string]any{"prompt": "hello"})
	require.NoError(t, err)
	assert.Contains(t, res.Text(), "sampled")
	res, err = c.CallTool(ctxT(t), "test_elicitation", map[string]any{"message": "name?"})
	require.NoError(t, err)
	assert.Contains(t, res.Text(), "action=accept")
	assert.Contains(t, res.Text(), "ada")
}

// Over stdio, the everything-server launched as a subprocess.
func TestGoSDKEverythingServerStdio(t *testing.T) {
	c, err := client.Connect(ctxT(t), client.Command(exec.Command(everything)), answers...)
	require.NoError(t, err)
	res, err := c.CallTool(ctxT(t), "test_simple_text", map[string]any{})
	require.NoError(t, err)
	assert.NotEmpty(t, res.Text())
	tool := "test_input_required_result_sampling"
	if c.Legacy() {
		tool = "test_sampling"
	}
	res, err = c.CallTool(ctxT(t), tool, map[string]any{"prompt": "hi"})
	require.NoError(t, err)
	assert.False(t, res.IsError, res.Text())
	t.Logf("stdio era: legacy=%v version=%s", c.Legacy(), c.Version())
	require.NoError(t, c.Close())
}
