package redisshare_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

// The tests run against a real redis-server: found on PATH, or installed
// from the distribution's packages when the tests run as root on a
// system with apt-get. Each test starts its own on a free loopback port,
// with persistence off, and stops it when the test ends.

var (
	installOnce sync.Once
	serverPath  string
	installErr  error
)

// redisServerPath finds redis-server, installing it once if it can.
func redisServerPath() (string, error) {
	installOnce.Do(func() {
		if p, err := exec.LookPath("redis-server"); err == nil {
			serverPath = p
			return
		}
		if _, err := exec.LookPath("apt-get"); err != nil || os.Geteuid() != 0 {
			installErr = fmt.Errorf("redis-server is not on PATH; install it (Debian: apt-get install redis-server)")
			return
		}
		for _, args := range [][]string{{"update"}, {"install", "-y", "redis-server"}} {
			cmd := exec.Command("apt-get", args...)
			cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
			if out, err := cmd.CombinedOutput(); err != nil {
				installErr = fmt.Errorf("apt-get %v: %v\n%s", args, err, out)
				return
			}
		}
		serverPath, installErr = exec.LookPath("redis-server")
	})
	return serverPath, installErr
}

// redisServer is one redis-server process the tests started.
type redisServer struct {
	Addr string
	cmd  *exec.Cmd
	once sync.Once
}

// Stop ends the server and waits for it.
func (s *redisServer) Stop() {
	s.once.Do(func() {
		s.cmd.Process.Kill()
		s.cmd.Wait()
	})
}

// freePort returns a loopback port nothing listens on right now.
func freePort(tb testing.TB) int {
	tb.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(tb, err)
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// startRedis starts a redis-server for tb and stops it at its end.
func startRedis(tb testing.TB) *redisServer {
	tb.Helper()
	path, err := redisServerPath()
	require.NoError(tb, err)
	for attempt := 0; attempt < 3; attempt++ {
		port := freePort(tb)
		cmd := exec.Command(path, "--port", strconv.Itoa(port), "--bind", "127.0.0.1",
			"--save", "", "--appendonly", "no", "--daemonize", "no", "--loglevel", "warning")
		require.NoError(tb, cmd.Start())
		s := &redisServer{Addr: "127.0.0.1:" + strconv.Itoa(port), cmd: cmd}
		tb.Cleanup(s.Stop)
		if waitPing(s.Addr, 5*time.Second) {
			return s
		}
		s.Stop() // the port was taken meanwhile, say; try another
	}
	require.FailNow(tb, "redis-server did not start")
	return nil
}

// waitPing waits for a server at addr to answer PING.
func waitPing(addr string, within time.Duration) bool {
	c := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1})
	defer c.Close()
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		err := c.Ping(ctx).Err()
		cancel()
		if err == nil {
			return true
		}
		time.Sleep(20 * time.Millisecond)
	}
	return false
}

// newClient returns a client of s, closed when tb ends.
func newClient(tb testing.TB, s *redisServer) *redis.Client {
	c := redis.NewClient(&redis.Options{Addr: s.Addr})
	tb.Cleanup(func() { c.Close() })
	return c
}
