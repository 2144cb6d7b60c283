// Command redisfixture is the conformance fixture server of mrtrkit
// (conformance/fixture, the same flags as conformance/server) sharing a
// Redis with the other replicas of a deployment: -redis names it
// (host:port, or a redis:// or rediss:// URL with user and password).
// Notifications, single-use states, sessions of the initialize era and
// the tasks of the Tasks extension are then seen by every replica. Every
// replica must be given the same key ring (MRTRKIT_STATE_KEYS). It lives
// in the Redis module so that the core module needs no Redis client.
package main

import (
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/mrtrkit/mrtrkit/conformance/fixture"
	"github.com/mrtrkit/mrtrkit/mrtr"
	redisshare "github.com/mrtrkit/mrtrkit/redis"
)

func main() {
	var addr string
	var client *redis.Client
	os.Exit(fixture.Main(os.Args[1:], fixture.Extras{
		Flags: func(fs *flag.FlagSet) {
			fs.StringVar(&addr, "redis", "", "Redis address (host:port), or a redis:// or rediss:// URL; required")
		},
		Options: func(*slog.Logger) ([]mrtr.Option, error) {
			if addr == "" {
				return nil, errors.New("-redis is required")
			}
			opts := &redis.Options{Addr: addr}
			if strings.Contains(addr, "://") {
				var err error
				if opts, err = redis.ParseURL(addr); err != nil {
					return nil, fmt.Errorf("-redis: %w", err)
				}
			}
			opts.DialTimeout, opts.ReadTimeout, opts.WriteTimeout = time.Second, time.Second, time.Second
			client = redis.NewClient(opts)
			return []mrtr.Option{mrtr.WithShare(redisshare.New(client)), mrtr.RequireKeys()}, nil
		},
		Stopped: func(*slog.Logger) error {
			if client != nil {
				return client.Close()
			}
			return nil
		},
	}))
}
