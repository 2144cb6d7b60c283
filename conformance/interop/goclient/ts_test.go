package goclient

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mrtrkit/mrtrkit/client"
)

var (
	npmOnce sync.Once
	npmErr  error
)

// tsServer is conformance/interop/tsserver/server.mjs. Its locked
// dependencies are installed (npm ci in that folder) once when missing;
// Node.js and npm are requirements of these tests, which fail without them.
func tsServer(t *testing.T) string {
	dir, err := filepath.Abs("../tsserver")
	require.NoError(t, err)
	_, err = exec.LookPath("node")
	require.NoError(t, err, "these tests need Node.js (20 or later) and npm")
	npmOnce.Do(func() {
		if _, err := os.Stat(filepath.Join(dir, "node_modules", "@modelcontextprotocol", "server")); err == nil {
			return
		}
		cmd := exec.Command("npm", "ci", "--no-audit", "--no-fund")
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			npmErr = fmt.Errorf("npm ci in %s: %v\n%s", dir, err, out)
		}
	})
	require.NoError(t, npmErr)
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
