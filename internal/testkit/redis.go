package testkit

import (
	"fmt"
	"os"
	"os/exec"
	"sync"
)

var (
	redisOnce sync.Once
	redisPath string
	redisErr  error
)

// RedisServer returns the path of redis-server: found on PATH, or
// installed once from Debian's packages when the tests run as root on a
// system with apt-get. Tests that need a real Redis fail, not skip, when
// neither works: the error says how to install it.
func RedisServer() (string, error) {
	redisOnce.Do(func() {
		if p, err := exec.LookPath("redis-server"); err == nil {
			redisPath = p
			return
		}
		if _, err := exec.LookPath("apt-get"); err != nil || os.Geteuid() != 0 {
			redisErr = fmt.Errorf("redis-server is not on PATH; install it (Debian: apt-get install redis-server)")
			return
		}
		for _, args := range [][]string{{"update"}, {"install", "-y", "redis-server"}} {
			cmd := exec.Command("apt-get", args...)
			cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
			if out, err := cmd.CombinedOutput(); err != nil {
				redisErr = fmt.Errorf("apt-get %v: %v\n%s", args, err, out)
				return
			}
		}
		redisPath, redisErr = exec.LookPath("redis-server")
	})
	return redisPath, redisErr
}
