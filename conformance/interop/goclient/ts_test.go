package goclient

import (
	"bufio"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mrtrkit/mrtrkit/client"
)

// tsServer is conformance/interop/tsserver/server.mjs; the tests skip
// when its dependencies are not installed (npm ci in that folder).
func tsServer(t *testing.T) string {
	dir, err := filepath.Abs("../tsserver")
	require.NoError(t, err)
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@modelcontextprotocol", "server")); err != nil {
		t.Skip("conformance/interop/tsserver: run npm ci there first")
	}
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("no node")
	}
	return filepath.Join(dir, "server.mjs")
}

func TestTypeScriptV2ServerHTTP(t *testing.T) {
	script := tsServer(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	cmd := exec.Command("node", script, "--http", strconv.Itoa(port))
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, "listening\n", line)

	c, err := client.Connect(ctxT(t), client.HTTP("http://127.0.0.1:"+strconv.Itoa(port)+"/mcp"), answers...)
	require.NoError(t, err)
	defer c.Close()
	assert.False(t, c.Legacy())
	res, err := c.CallTool(ctxT(t), "ask", map[string]any{})
	require.NoError(t, err)
	assert.Equal(t, "hello ada from m", res.Text())
	assert.Equal(t, 1, res.Rounds)
}

func TestTypeScriptV2ServerStdio(t *testing.T) {
	c, err := client.Connect(ctxT(t), client.Command(exec.Command("node", tsServer(t))), answers...)
	require.NoError(t, err)
	t.Logf("era: legacy=%v version=%s", c.Legacy(), c.Version())
	res, err := c.CallTool(ctxT(t), "ask", map[string]any{})
	require.NoError(t, err)
	assert.Equal(t, "hello ada from m", res.Text())
	require.NoError(t, c.Close())
}
