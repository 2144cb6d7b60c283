package redisshare_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mrtrkit/mrtrkit/discover"
	"github.com/mrtrkit/mrtrkit/mrtr"
	"github.com/mrtrkit/mrtrkit/mrtr/legacy"
	redisshare "github.com/mrtrkit/mrtrkit/redis"
	"github.com/mrtrkit/mrtrkit/state"
)

// Example_replicas is the README's "Several replicas" block: the code
// between the markers is that block, indented once; TestREADMEReplicas
// keeps the two the same. It is compiled, not run.
func Example_replicas() {
	ctx := context.Background()
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	desc := discover.Description{Server: discover.Implementation{Name: "replicated", Version: "1.0.0"}}
	url := "https://mcp.example.com/mcp"
	client := redis.NewClient(&redis.Options{Addr: "redis:6379"})

	// README begins
	ring, _ := state.LoadKeyRingFile("/etc/mrtrkit/keys")
	codec, _ := state.NewAEAD(ring)
	srv, _ := mrtr.NewServer(desc, mrtr.WithCodec(codec), mrtr.WithAudience(url), mrtr.WithShare(redisshare.New(client)))
	eng, _ := legacy.New(srv, legacy.WithKeyRing(ring)) // joins the Server's bus by itself
	keys := state.NewKeyRingFile("/etc/mrtrkit/keys", log, codec, eng.SessionCodec())
	go keys.Watch(ctx, time.Minute) // and on SIGHUP
	// README ends
}

// TestREADMEReplicas checks that the README's "Several replicas" block is
// the code of Example_replicas, so that the README shows code that
// compiles.
func TestREADMEReplicas(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	require.NoError(t, err)
	block := regexp.MustCompile("(?s)### Several replicas.*?```go\n(.*?)```").FindSubmatch(readme)
	require.False(t, block == nil, "README has no Several replicas block")
	src, err := os.ReadFile("readme_example_test.go")
	require.NoError(t, err)
	code := regexp.MustCompile("(?s)// README begins\n(.*?)\t// README ends").FindSubmatch(src)
	require.False(t, code == nil, "the example has no README markers")
	var lines []string
	for _, l := range strings.Split(strings.TrimRight(string(code[1]), "\n"), "\n") {
		lines = append(lines, strings.TrimPrefix(l, "\t"))
	}
	if got, want := strings.Join(lines, "\n")+"\n", string(block[1]); got != want {
		assert.Fail(t, fmt.Sprintf("README block and Example_replicas differ:\nREADME:\n%s\nexample:\n%s", want, got))
	}
}
