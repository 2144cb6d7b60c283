package redisshare_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mrtrkit/mrtrkit/discover"
	"github.com/mrtrkit/mrtrkit/mrtr"
	"github.com/mrtrkit/mrtrkit/mrtr/legacy"
	"github.com/mrtrkit/mrtrkit/mrtr/mrtrtest"
	redisshare "github.com/mrtrkit/mrtrkit/redis"
	"github.com/mrtrkit/mrtrkit/transport/streamablehttp"
)

// Sessions of the initialize era served by replicas that share a real
// Redis and nothing else: each replica has its own Redis client, its own
// mrtr.Server, legacy.Engine and HTTP server.

// legacyReplica starts one replica; redisAddr "" makes a replica with no
// shared bus.
func legacyReplica(t testing.TB, redisAddr string, held chan error) string {
	t.Helper()
	quiet := slog.New(slog.DiscardHandler)
	desc := discover.Description{
		Server:         discover.Implementation{Name: "legacy-replicas", Version: "1.0.0"},
		LegacyVersions: []string{"2025-11-25"},
		Capabilities: discover.Capabilities{
			Logging:   &discover.Empty{},
			Resources: &discover.ResourcesCapability{Subscribe: true},
		},
	}
	opts := []mrtr.Option{mrtr.WithCodec(mrtrtest.ReplicaCodec(t)), mrtr.WithLogger(quiet), mrtr.WithAudience("https://mcp.example.test/mcp")}
	if redisAddr != "" {
		client := redis.NewClient(&redis.Options{Addr: redisAddr, MaxRetries: -1, DialTimeout: 500 * time.Millisecond})
		t.Cleanup(func() { client.Close() })
		opts = append(opts, mrtr.WithShare(redisshare.New(client)))
	}
	srv, err := mrtr.NewServer(desc, opts...)
	require.NoError(t, err)
	t.Cleanup(func() { srv.Close() })
	schema := json.RawMessage(`{"type":"object"}`)
	require.NoError(t, srv.AddTool(mrtr.Tool{Name: "trio", InputSchema: schema}, mrtrtest.ThreeRounds("")))
	require.NoError(t, srv.AddTool(mrtr.Tool{Name: "hold", InputSchema: schema}, mrtr.HandlerFunc(func(ctx context.Context, _ *mrtr.Request) (mrtr.Result, error) {
		held <- nil
		select {
		case <-ctx.Done():
			held <- context.Cause(ctx)
			return nil, ctx.Err()
		case <-time.After(20 * time.Second):
			held <- nil
			return mrtr.TextResult("never cancelled"), nil
		}
	})))
	require.NoError(t, srv.AddTool(mrtr.Tool{Name: "logs", InputSchema: schema}, mrtr.HandlerFunc(func(_ context.Context, req *mrtr.Request) (mrtr.Result, error) {
		if err := req.Log(mrtr.LevelDebug, "logs", "fine detail"); err != nil {
			return nil, err
		}
		return mrtr.TextResult("logged"), nil
	})))
	require.NoError(t, srv.AddResource(mrtr.Resource{URI: "file:///watched", Name: "watched"}, mrtr.HandlerFunc(func(context.Context, *mrtr.Request) (mrtr.Result, error) {
		return &mrtr.ReadResourceResult{}, nil
	})))
	eng, err := legacy.New(srv, legacy.WithKeyRing(mrtrtest.ReplicaKeyRing(t)), legacy.WithLogger(quiet), legacy.WithLegTimeout(5*time.Second))
	require.NoError(t, err)
	t.Cleanup(func() { eng.Close() })
	h, err := streamablehttp.New(srv, streamablehttp.WithLegacy(eng))
	require.NoError(t, err)
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	return ts.URL + "/mcp"
}

// msg is a JSON-RPC message as the client receives it.
type msg struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  json.RawMessage `json:"error"`
}

// session is a client of the initialize era holding one session.
type session struct {
	tb  testing.TB
	sid string
}

func (s *session) req(ctx context.Context, method, url, body string) *http.Request {
	r, err := http.NewRequestWithContext(ctx, method, url, strings.NewReader(body))
	require.NoError(s.tb, err)
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", "application/json, text/event-stream")
	if s.sid != "" {
		r.Header.Set("Mcp-Session-Id", s.sid)
	}
	return r
}

func openSession(tb testing.TB, url string) *session {
	tb.Helper()
	s := &session{tb: tb}
	resp, err := http.DefaultClient.Do(s.req(context.Background(), http.MethodPost, url,
		`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"sampling":{},"elicitation":{},"roots":{}},"clientInfo":{"name":"r","version":"1"}}}`))
	require.NoError(tb, err)
	resp.Body.Close()
	require.Equal(tb, http.StatusOK, resp.StatusCode)
	s.sid = resp.Header.Get("Mcp-Session-Id")
	return s
}

// send posts body to url in the background and returns the status, then
// the messages of the answer as they come.
func (s *session) send(ctx context.Context, method, url, body string) (<-chan int, <-chan msg) {
	status, ch := make(chan int, 1), make(chan msg, 64)
	r := s.req(ctx, method, url, body)
	go func() {
		defer close(ch)
		resp, err := http.DefaultClient.Do(r)
		if err != nil {
			status <- 0
			return
		}
		defer resp.Body.Close()
		status <- resp.StatusCode
		if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
			b, _ := io.ReadAll(resp.Body)
			var m msg
			if json.Unmarshal(b, &m) == nil {
				ch <- m
			}
			return
		}
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				var m msg
				if json.Unmarshal([]byte(data), &m) == nil {
					ch <- m
				}
			}
		}
	}()
	return status, ch
}

// do sends body to url and waits for the whole answer.
func (s *session) do(method, url, body string) (int, []msg) {
	status, ch := s.send(context.Background(), method, url, body)
	var out []msg
	for m := range ch {
		out = append(out, m)
	}
	return <-status, out
}

func take(tb testing.TB, ch <-chan msg) msg {
	tb.Helper()
	select {
	case m, ok := <-ch:
		require.True(tb, ok, "the stream ended")
		return m
	case <-time.After(15 * time.Second):
		tb.Fatal("no message")
		return msg{}
	}
}

// trio runs the three-round tool on url, posting each answer to answerTo.
func (s *session) trio(url, answerTo string) msg {
	s.tb.Helper()
	_, ch := s.send(context.Background(), http.MethodPost, url, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"trio","arguments":{}}}`)
	for {
		m := take(s.tb, ch)
		if m.Method == "" {
			return m
		}
		if len(m.ID) == 0 {
			continue
		}
		var result string
		switch m.Method {
		case "elicitation/create":
			result = `{"action":"accept","content":{"name":"Ada"}}`
		case "sampling/createMessage":
			result = `{"role":"assistant","content":{"type":"text","text":"drafted"},"model":"m"}`
		default:
			result = `{"roots":[{"uri":"file:///home/ada"}]}`
		}
		status, _ := s.do(http.MethodPost, answerTo, `{"jsonrpc":"2.0","id":`+string(m.ID)+`,"result":`+result+`}`)
		require.Equal(s.tb, http.StatusAccepted, status)
	}
}

func TestLegacySessionAcrossReplicas(t *testing.T) {
	rs := startRedis(t)
	held := make(chan error, 4)
	a, b, c := legacyReplica(t, rs.Addr, held), legacyReplica(t, rs.Addr, held), legacyReplica(t, rs.Addr, held)
	s := openSession(t, a)

	// A three-round call on B, its answers posted to A.
	final := s.trio(b, a)
	assert.Contains(t, string(final.Result), "Ada|drafted|file:///home/ada")
	assert.NotContains(t, string(final.Result), `"isError":true`)

	// A cancellation posted to A ends the call running on B.
	_, ch := s.send(context.Background(), http.MethodPost, b, `{"jsonrpc":"2.0","id":"long","method":"tools/call","params":{"name":"hold","arguments":{}}}`)
	require.NoError(t, <-held)
	status, _ := s.do(http.MethodPost, a, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"long"}}`)
	require.Equal(t, http.StatusAccepted, status)
	require.Error(t, <-held, "the call on B ran to its end")
	for m := range ch {
		assert.NotEqual(t, "", m.Method, "a cancelled call gets no answer: %+v", m)
	}

	// The level set on A rules a call on C.
	status, _ = s.do(http.MethodPost, a, `{"jsonrpc":"2.0","id":2,"method":"logging/setLevel","params":{"level":"debug"}}`)
	require.Equal(t, http.StatusOK, status)
	_, out := s.do(http.MethodPost, c, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"logs","arguments":{}}}`)
	require.Len(t, out, 2, "a log notification, then the result")
	assert.Equal(t, "notifications/message", out[0].Method)

	// A subscription made on A reaches the session's stream on B.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	streamStatus, stream := s.send(ctx, http.MethodGet, b, "")
	require.Equal(t, http.StatusOK, <-streamStatus)
	status, _ = s.do(http.MethodPost, a, `{"jsonrpc":"2.0","id":4,"method":"resources/subscribe","params":{"uri":"file:///watched"}}`)
	require.Equal(t, http.StatusOK, status)
	got := false
	for i := 0; i < 200 && !got; i++ {
		// Any replica's update reaches B's server by the bus; the
		// subscription reaches B's stream at its own pace.
		s.do(http.MethodPost, c, `{"jsonrpc":"2.0","id":5,"method":"ping"}`)
		notifyResource(t, rs.Addr)
		select {
		case m := <-stream:
			got = m.Method == "notifications/resources/updated"
		case <-time.After(50 * time.Millisecond):
		}
	}
	require.True(t, got, "the stream on B never carried the update")

	// Deleted on A: B's stream ends, and B and C refuse the session.
	status, _ = s.do(http.MethodDelete, a, "")
	require.Equal(t, http.StatusNoContent, status)
	for ended := false; !ended; {
		select {
		case _, ok := <-stream:
			ended = !ok
		case <-time.After(15 * time.Second):
			t.Fatal("the stream on B outlived the deletion")
		}
	}
	for _, url := range []string{b, c} {
		status, _ = s.do(http.MethodPost, url, `{"jsonrpc":"2.0","id":6,"method":"ping"}`)
		assert.Equal(t, http.StatusNotFound, status)
	}
}

// notifyResource publishes an update of file:///watched the way a
// replica's mrtr.Server does, from a Server of its own.
func notifyResource(t testing.TB, addr string) {
	t.Helper()
	client := redis.NewClient(&redis.Options{Addr: addr})
	defer client.Close()
	srv, err := mrtr.NewServer(discover.Description{Server: discover.Implementation{Name: "notifier", Version: "1"}}, mrtr.WithCodec(mrtrtest.ReplicaCodec(t)),
		mrtr.WithLogger(slog.New(slog.DiscardHandler)), mrtr.WithAudience("https://mcp.example.test/mcp"),
		mrtr.WithShare(redisshare.New(client)))
	require.NoError(t, err)
	srv.NotifyResourceUpdated("file:///watched")
	// The Server publishes in the background: closing it at once could
	// drop the event, so publish it again directly.
	ev, _ := json.Marshal(map[string]string{"r": "notifier", "u": "file:///watched"})
	require.NoError(t, client.Publish(context.Background(), "mrtrkit/changes/"+srv.Audience(), ev).Err())
	srv.Close()
}

func TestLegacyRedisDownRefusesSessions(t *testing.T) {
	rs := startRedis(t)
	held := make(chan error, 4)
	a := legacyReplica(t, rs.Addr, held)
	s := openSession(t, a)
	status, _ := s.do(http.MethodPost, a, `{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	require.Equal(t, http.StatusOK, status)
	rs.Stop()
	status, out := s.do(http.MethodPost, a, `{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	assert.Equal(t, http.StatusServiceUnavailable, status, "whether the session was deleted cannot be read: retry later, %+v", out)
	status, out = s.do(http.MethodDelete, a, "")
	assert.Equal(t, http.StatusServiceUnavailable, status, "a deletion the other replicas cannot be told of: retry later, %+v", out)
}

// BenchmarkLegacyBridgedCall is one three-round bridged tools/call over
// HTTP on replica A: with no bus, and sharing a Redis with its answers
// posted to A itself or to replica B.
func BenchmarkLegacyBridgedCall(b *testing.B) {
	rs := startRedis(b)
	held := make(chan error, 4)
	for _, tc := range []struct {
		name  string
		addr  string
		other bool
	}{{"no-bus", "", false}, {"redis/same-replica", rs.Addr, false}, {"redis/other-replica", rs.Addr, true}} {
		b.Run(tc.name, func(b *testing.B) {
			a, o := legacyReplica(b, tc.addr, held), legacyReplica(b, tc.addr, held)
			if !tc.other {
				o = a
			}
			s := openSession(b, a)
			for b.Loop() {
				if m := s.trio(a, o); !bytes.Contains(m.Result, []byte("Ada|drafted")) {
					b.Fatalf("%s", m.Result)
				}
			}
		})
	}
}
