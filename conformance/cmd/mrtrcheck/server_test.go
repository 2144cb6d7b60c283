package main

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mrtrkit/mrtrkit/conformance/suite"
	"github.com/mrtrkit/mrtrkit/discover"
	"github.com/mrtrkit/mrtrkit/internal/testkit"
	"github.com/mrtrkit/mrtrkit/mrtr"
	"github.com/mrtrkit/mrtrkit/mrtr/legacy"
	"github.com/mrtrkit/mrtrkit/share"
	"github.com/mrtrkit/mrtrkit/transport/streamablehttp"
)

// legacyDeployment serves both eras with a tool "ask" that asks for a
// name; bus, when not nil, is shared (mrtr.WithShare).
func legacyDeployment(t *testing.T, bus share.Bus, srvOpts ...mrtr.Option) string {
	t.Helper()
	quiet := slog.New(slog.DiscardHandler)
	desc := discover.Description{
		Server:         discover.Implementation{Name: "server-test", Version: "1"},
		LegacyVersions: []string{"2025-11-25"},
		Capabilities: discover.Capabilities{
			Tools:     &discover.ListChanged{ListChanged: true},
			Resources: &discover.ResourcesCapability{Subscribe: true},
		},
	}
	opts := append([]mrtr.Option{mrtr.WithCodec(testkit.FreshCodec(t)), mrtr.WithLogger(quiet), mrtr.WithAudience("https://mcp.server-test.example/mcp")}, srvOpts...)
	if bus != nil {
		opts = append(opts, mrtr.WithShare(bus))
	}
	srv, err := mrtr.NewServer(desc, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	ask := mrtr.HandlerFunc(func(_ context.Context, req *mrtr.Request) (mrtr.Result, error) {
		if a, ok := req.Responses.Elicitation("name"); ok && a.Accepted() {
			return mrtr.TextResult("hello"), nil
		}
		return mrtr.Ask("name", &mrtr.ElicitRequest{Message: "Name?",
			RequestedSchema: &mrtr.ElicitSchema{Type: "object", Properties: map[string]json.RawMessage{"name": json.RawMessage(`{"type":"string"}`)}}}), nil
	})
	if err := srv.AddTool(mrtr.Tool{Name: "ask", InputSchema: json.RawMessage(`{"type":"object"}`)}, ask); err != nil {
		t.Fatal(err)
	}
	eng, err := legacy.New(srv, legacy.WithKeyRing(testkit.Ring(t)), legacy.WithLogger(quiet))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close() })
	h, err := streamablehttp.New(srv, streamablehttp.WithLogger(quiet), streamablehttp.WithLegacy(eng))
	if err != nil {
		t.Fatal(err)
	}
	return serve(t, h, nil)
}

func runServerCLI(t *testing.T, url, re string, extra ...string) (int, suite.Report, string) {
	t.Helper()
	args := append([]string{"-url", url, "-tool", "ask", "-run", re, "-json", "-timeout", "5s", "-legacy-tool", "ask"}, extra...)
	code, out, errOut := runCLI(t, args...)
	var rep suite.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("exit %d, the report does not decode: %v\n%s\n%s", code, err, out, errOut)
	}
	return code, rep, out
}

func TestServerLegacySubscriptions(t *testing.T) {
	url := legacyDeployment(t, nil)
	code, rep, out := runServerCLI(t, url, `^server\.legacy-subscriptions$`)
	res := statusOf(t, rep, "server.legacy-subscriptions")
	if code != exitOK || res.Status != suite.Pass || !strings.Contains(res.Reason, "the 1 MiB URI was refused, and 8 URIs of 8000 bytes") {
		t.Fatalf("exit %d: %s: %s\n%s", code, res.Status, res.Reason, out)
	}
	// Against a server of the modern era only: not run.
	_, rep, _ = runServerCLI(t, goodServer(t), `^server\.`)
	for _, id := range []string{"server.legacy-subscriptions", "server.peer-fairness", "server.bus-spoofing"} {
		if res := statusOf(t, rep, id); res.Status != suite.NotRun {
			t.Errorf("%s against a modern-only server: %s: %s", id, res.Status, res.Reason)
		}
	}
}

func TestServerPeerFairness(t *testing.T) {
	url := legacyDeployment(t, nil, mrtr.WithMaxListeners(100, 2))
	code, rep, out := runServerCLI(t, url, `^server\.peer-fairness$`, "-second-source", "127.0.0.2", "-listen-max", "10")
	res := statusOf(t, rep, "server.peer-fairness")
	if code != exitOK || res.Status != suite.Pass || !strings.Contains(res.Reason, "stream 3: HTTP 429") {
		t.Fatalf("exit %d: %s: %s\n%s", code, res.Status, res.Reason, out)
	}
	_, rep, _ = runServerCLI(t, url, `^server\.peer-fairness$`)
	if res := statusOf(t, rep, "server.peer-fairness"); res.Status != suite.NotRun || !strings.Contains(res.Reason, "-second-source") {
		t.Errorf("without -second-source: %s: %s", res.Status, res.Reason)
	}
}

// respBus is a share.Bus over a real redis-server, spoken to with the
// command's own RESP client: enough for a deployment of the test.
type respBus struct {
	addr string
	mu   sync.Mutex
	conn *redisConn
}

func (b *respBus) cmd(args ...string) (any, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.conn == nil {
		c, err := dialRedis(context.Background(), b.addr, 2*time.Second)
		if err != nil {
			return nil, err
		}
		b.conn = c
	}
	return b.conn.do(args...)
}

func (b *respBus) Publish(_ context.Context, channel string, payload []byte) error {
	_, err := b.cmd("PUBLISH", channel, string(payload))
	return err
}

func (b *respBus) Subscribe(channel string, fn func([]byte)) (func(), error) {
	c, err := dialRedis(context.Background(), b.addr, 2*time.Second)
	if err != nil {
		return nil, err
	}
	if _, err := c.do("SUBSCRIBE", channel); err != nil {
		c.c.Close()
		return nil, err
	}
	go func() {
		for {
			v, err := c.read()
			if err != nil {
				return
			}
			if a, ok := v.([]any); ok && len(a) == 3 && a[0] == "message" {
				p, _ := a[2].(string)
				fn([]byte(p))
			}
		}
	}()
	return sync.OnceFunc(func() { c.c.Close() }), nil
}

func (b *respBus) Claim(_ context.Context, key string, ttl time.Duration) (bool, error) {
	v, err := b.cmd("SET", key, "1", "NX", "PX", strconv.FormatInt(ttl.Milliseconds(), 10))
	return v != nil, err
}

func (b *respBus) Put(_ context.Context, key string, value []byte, ttl time.Duration) error {
	_, err := b.cmd("SET", key, string(value), "PX", strconv.FormatInt(ttl.Milliseconds(), 10))
	return err
}

func (b *respBus) Get(_ context.Context, key string) ([]byte, bool, error) {
	v, err := b.cmd("GET", key)
	if err != nil || v == nil {
		return nil, false, err
	}
	s, _ := v.(string)
	return []byte(s), true, nil
}

// startRedis starts a redis-server on a loopback port for t.
func startRedis(t *testing.T) string {
	t.Helper()
	path, err := testkit.RedisServer()
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port := l.Addr().(*net.TCPAddr).Port
		l.Close()
		cmd := exec.Command(path, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--loglevel", "warning")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		addr := "127.0.0.1:" + strconv.Itoa(port)
		for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			if c, err := dialRedis(context.Background(), addr, time.Second); err == nil {
				_, err := c.do("PING")
				c.c.Close()
				if err == nil {
					return addr
				}
			}
		}
	}
	t.Fatal("redis-server did not start")
	return ""
}

func TestServerBusSpoofing(t *testing.T) {
	addr := startRedis(t)
	bus := &respBus{addr: addr}
	url := legacyDeployment(t, bus)
	code, rep, out := runServerCLI(t, url, `^server\.bus-spoofing$`, "-redis", "redis://"+addr)
	res := statusOf(t, rep, "server.bus-spoofing")
	if code != exitOK || res.Status != suite.Pass || strings.Contains(res.Reason, "unsealed") {
		t.Fatalf("exit %d: %s: %s\n%s", code, res.Status, res.Reason, out)
	}
	// By audience, without PSUBSCRIBE.
	_, rep, out = runServerCLI(t, url, `^server\.bus-spoofing$`, "-redis", addr, "-audience", "https://mcp.server-test.example/mcp")
	if res := statusOf(t, rep, "server.bus-spoofing"); res.Status != suite.Pass {
		t.Fatalf("%s: %s\n%s", res.Status, res.Reason, out)
	}
	// Without -redis, or with a Redis the deployment does not use: not run.
	_, rep, _ = runServerCLI(t, url, `^server\.bus-spoofing$`)
	if res := statusOf(t, rep, "server.bus-spoofing"); res.Status != suite.NotRun {
		t.Errorf("without -redis: %s: %s", res.Status, res.Reason)
	}
}

// unsealedBus is respBus claiming to authenticate its messages when it
// does not: the Engine then trusts whatever is published on the Redis,
// as a deployment with an unauthenticated bus would.
type unsealedBus struct{ *respBus }

func (unsealedBus) Authenticated() bool { return true }

// Against a deployment that acts on what anyone publishes on its Redis,
// server.bus-spoofing fails: the forged answer, cancellation or deletion
// reaches the call or the session.
func TestServerBusSpoofingFailsOnAnUnsealedBus(t *testing.T) {
	addr := startRedis(t)
	url := legacyDeployment(t, unsealedBus{&respBus{addr: addr}})
	code, rep, out := runServerCLI(t, url, `^server\.bus-spoofing$`, "-redis", addr)
	res := statusOf(t, rep, "server.bus-spoofing")
	require.Equal(t, suite.Fail, res.Status, out)
	assert.Contains(t, res.Reason, "after the forged messages")
	assert.Equal(t, exitFail, code)
}

// subscriber is a 2025-11-25 server that takes every subscription, of
// any size, and counts them.
func subscriber(t *testing.T) (url string, taken *atomic.Int64) {
	taken = new(atomic.Int64)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || len(req.ID) == 0 {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		result := `{}`
		switch req.Method {
		case "initialize":
			w.Header().Set("Mcp-Session-Id", "s1")
			result = `{"protocolVersion":"2025-11-25","capabilities":{"resources":{"subscribe":true}},"serverInfo":{"name":"subscriber","version":"1"}}`
		case "resources/subscribe":
			taken.Add(1)
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(req.ID)+`,"result":`+result+`}`)
	})
	return serve(t, h, nil), taken
}

// A server without a bound on the subscribed URIs fails
// server.legacy-subscriptions at its first, 1 MiB, subscription.
func TestServerLegacySubscriptionsFailsUnbounded(t *testing.T) {
	url, taken := subscriber(t)
	code, rep, out := runServerCLI(t, url, `^server\.legacy-subscriptions$`)
	res := statusOf(t, rep, "server.legacy-subscriptions")
	require.Equal(t, suite.Fail, res.Status, out)
	assert.Equal(t, "a 1 MiB URI was subscribed to", res.Reason)
	assert.Equal(t, exitFail, code)
	assert.Equal(t, int64(1), taken.Load())
}
