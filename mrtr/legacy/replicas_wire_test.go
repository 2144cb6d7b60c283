package legacy_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mrtrkit/mrtrkit/discover"
	"github.com/mrtrkit/mrtrkit/internal/testkit"
	"github.com/mrtrkit/mrtrkit/mrtr"
	"github.com/mrtrkit/mrtrkit/mrtr/legacy"
	"github.com/mrtrkit/mrtrkit/share"
	"github.com/mrtrkit/mrtrkit/transport/streamablehttp"
)

// These tests run two replicas of one deployment, each an mrtr.Server and
// a legacy.Engine behind its own Streamable HTTP server, sharing nothing
// but a share.Bus, the key ring and the audience, as replicas behind a
// round-robin balancer do. A client of the initialize era sends each
// request to whichever replica the test says.

// held reports, for the "hold" tool, which replica ran it and why its
// context ended.
type held struct {
	replica string
	cause   error
}

// replicaSet is the replicas of one deployment.
type replicaSet struct {
	urls    []string
	servers []*mrtr.Server
	started chan string // the "hold" tool reports its replica when it runs
	ended   chan held
}

// newReplicas starts n replicas sharing bus (none when bus is nil: each
// replica then serves alone).
func newReplicas(t testing.TB, bus share.Bus, n int) *replicaSet {
	t.Helper()
	rs := &replicaSet{started: make(chan string, 16), ended: make(chan held, 16)}
	quiet := slog.New(slog.DiscardHandler)
	for i := range n {
		name := string(rune('A' + i))
		desc := discover.Description{
			Server:         discover.Implementation{Name: "replicas", Version: "1.0.0"},
			LegacyVersions: []string{"2025-06-18", "2025-11-25"},
			Capabilities: discover.Capabilities{
				Logging:   &discover.Empty{},
				Tools:     &discover.ListChanged{},
				Resources: &discover.ResourcesCapability{Subscribe: true},
			},
		}
		opts := []mrtr.Option{mrtr.WithCodec(testkit.Codec(t)), mrtr.WithLogger(quiet), mrtr.WithAudience("https://mcp.example.test/mcp")}
		if bus != nil {
			opts = append(opts, mrtr.WithShare(bus))
		}
		srv, err := mrtr.NewServer(desc, opts...)
		require.NoError(t, err)
		t.Cleanup(func() { srv.Close() })
		addReplicaTools(t, srv, name, rs)
		eng, err := legacy.New(srv, legacy.WithKeyRing(testkit.Ring(t)), legacy.WithLogger(quiet), legacy.WithLegTimeout(5*time.Second))
		require.NoError(t, err)
		t.Cleanup(func() { eng.Close() })
		h, err := streamablehttp.New(srv, streamablehttp.WithLegacy(eng))
		require.NoError(t, err)
		ts := httptest.NewServer(h)
		t.Cleanup(ts.Close)
		rs.urls = append(rs.urls, ts.URL+"/mcp")
		rs.servers = append(rs.servers, srv)
	}
	return rs
}

func addReplicaTools(t testing.TB, srv *mrtr.Server, name string, rs *replicaSet) {
	t.Helper()
	schema := json.RawMessage(`{"type":"object"}`)
	// trio asks three rounds: a form, a completion, the roots.
	require.NoError(t, srv.AddTool(mrtr.Tool{Name: "trio", InputSchema: schema}, testkit.ThreeRounds(" on "+name)))
	require.NoError(t, srv.AddTool(mrtr.Tool{Name: "hold", InputSchema: schema}, mrtr.HandlerFunc(func(ctx context.Context, _ *mrtr.Request) (mrtr.Result, error) {
		rs.started <- name
		select {
		case <-ctx.Done():
			rs.ended <- held{name, context.Cause(ctx)}
			return nil, ctx.Err()
		case <-time.After(20 * time.Second):
			rs.ended <- held{name, nil}
			return mrtr.TextResult("never cancelled"), nil
		}
	})))
	require.NoError(t, srv.AddTool(mrtr.Tool{Name: "logs", InputSchema: schema}, mrtr.HandlerFunc(func(_ context.Context, req *mrtr.Request) (mrtr.Result, error) {
		for _, l := range []mrtr.LogLevel{mrtr.LevelDebug, mrtr.LevelWarning} {
			if err := req.Log(l, "logs", string(l)+" from "+name); err != nil {
				return nil, err
			}
		}
		return mrtr.TextResult("logged on " + name), nil
	})))
	require.NoError(t, srv.AddResource(mrtr.Resource{URI: "file:///watched", Name: "watched"}, mrtr.HandlerFunc(func(context.Context, *mrtr.Request) (mrtr.Result, error) {
		return &mrtr.ReadResourceResult{Contents: []mrtr.ResourceContents{mrtr.TextResource("file:///watched", "text/plain", "x")}}, nil
	})))
}

// rpc is a JSON-RPC message as the client receives it.
type rpc struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  json.RawMessage `json:"error"`
}

func (m rpc) isRequest() bool  { return m.Method != "" && len(m.ID) > 0 }
func (m rpc) isResponse() bool { return m.Method == "" && len(m.ID) > 0 }

// wireClient is a client of the initialize era holding one session.
type wireClient struct {
	t   testing.TB
	sid string
}

func (c *wireClient) request(ctx context.Context, method, url, body string) *http.Request {
	c.t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, r)
	require.NoError(c.t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if c.sid != "" {
		req.Header.Set("Mcp-Session-Id", c.sid)
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	}
	return req
}

// initialize opens a session on the replica at url.
func initialize(t testing.TB, url string) *wireClient {
	t.Helper()
	c := &wireClient{t: t}
	body := `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"sampling":{},"elicitation":{},"roots":{}},"clientInfo":{"name":"wire","version":"1"}}}`
	resp, err := http.DefaultClient.Do(c.request(context.Background(), http.MethodPost, url, body))
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	c.sid = resp.Header.Get("Mcp-Session-Id")
	require.NotEmpty(t, c.sid)
	return c
}

// do sends body to url and returns the status and every message of the
// answer, JSON or a stream read to its end.
func (c *wireClient) do(method, url, body string) (int, []rpc) {
	c.t.Helper()
	resp, err := http.DefaultClient.Do(c.request(context.Background(), method, url, body))
	require.NoError(c.t, err)
	defer resp.Body.Close()
	var out []rpc
	for m := range messages(c.t, resp) {
		out = append(out, m)
	}
	return resp.StatusCode, out
}

// open sends body to url and returns the messages of the answer as they
// come; the channel closes when the answer ends. The request is sent in
// the background: a response stream begins only with its first event.
func (c *wireClient) open(ctx context.Context, method, url, body string) <-chan rpc {
	c.t.Helper()
	req := c.request(ctx, method, url, body)
	ch := make(chan rpc, 64)
	go func() {
		defer close(ch)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			if ctx.Err() == nil {
				c.t.Errorf("%s %s: %v", method, url, err)
			}
			return
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			c.t.Errorf("%s %s: status %d", method, url, resp.StatusCode)
			return
		}
		for m := range messages(c.t, resp) {
			ch <- m
		}
	}()
	return ch
}

// stream opens the session's stream on url and returns its messages;
// the stream is open when it returns.
func (c *wireClient) stream(ctx context.Context, url string) <-chan rpc {
	c.t.Helper()
	resp, err := http.DefaultClient.Do(c.request(ctx, http.MethodGet, url, ""))
	require.NoError(c.t, err)
	require.Equal(c.t, http.StatusOK, resp.StatusCode)
	ch := make(chan rpc, 64)
	go func() {
		defer close(ch)
		defer resp.Body.Close()
		for m := range messages(c.t, resp) {
			ch <- m
		}
	}()
	return ch
}

// messages yields the JSON-RPC messages of a response: its body when it
// is JSON, each event's data when it is a stream.
func messages(t testing.TB, resp *http.Response) func(func(rpc) bool) {
	return func(yield func(rpc) bool) {
		if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
			b, _ := io.ReadAll(resp.Body)
			if len(bytes.TrimSpace(b)) == 0 {
				return
			}
			var m rpc
			if json.Unmarshal(b, &m) == nil {
				yield(m)
			}
			return
		}
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			data, ok := strings.CutPrefix(sc.Text(), "data: ")
			if !ok {
				continue
			}
			var m rpc
			if json.Unmarshal([]byte(data), &m) != nil {
				t.Errorf("an event that is not JSON-RPC: %s", data)
				return
			}
			if !yield(m) {
				return
			}
		}
	}
}

// reply is the standard answer of the test client to a server request.
func reply(m rpc) string {
	switch m.Method {
	case "elicitation/create":
		return `{"action":"accept","content":{"name":"Ada"}}`
	case "sampling/createMessage":
		return `{"role":"assistant","content":{"type":"text","text":"drafted"},"model":"m"}`
	case "roots/list":
		return `{"roots":[{"uri":"file:///home/ada","name":"home"}]}`
	}
	return ""
}

// answerTo posts the client's answer to request m to url.
func (c *wireClient) answerTo(url string, m rpc) {
	c.t.Helper()
	status, out := c.do(http.MethodPost, url, `{"jsonrpc":"2.0","id":`+string(m.ID)+`,"result":`+reply(m)+`}`)
	require.Equal(c.t, http.StatusAccepted, status)
	require.Empty(c.t, out)
}

// next returns the next message of ch, failing when the stream ends first.
func next(t testing.TB, ch <-chan rpc) rpc {
	t.Helper()
	select {
	case m, ok := <-ch:
		require.True(t, ok, "the stream ended")
		return m
	case <-time.After(15 * time.Second):
		t.Fatal("no message")
		return rpc{}
	}
}

// legIDForm: a replica, then 128 random bits.
var legIDForm = regexp.MustCompile(`^"[0-9a-f]{12}-[0-9a-f]{32}"$`)

// TestBridgedCallAnswersOnOtherReplica: the call runs on B, every answer
// is posted to A, and the call completes all three rounds.
func TestBridgedCallAnswersOnOtherReplica(t *testing.T) {
	rs := newReplicas(t, share.Local(), 2)
	a, b := rs.urls[0], rs.urls[1]
	c := initialize(t, a)
	ch := c.open(context.Background(), http.MethodPost, b, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"trio","arguments":{}}}`)
	var methods []string
	ids := map[string]bool{}
	var final rpc
	for final.ID == nil {
		m := next(t, ch)
		switch {
		case m.isRequest():
			methods = append(methods, m.Method)
			assert.Regexp(t, legIDForm, string(m.ID), "a leg id names its replica")
			assert.False(t, ids[string(m.ID)], "leg id %s used twice", m.ID)
			ids[string(m.ID)] = true
			c.answerTo(a, m) // the other replica
		case m.isResponse():
			final = m
		}
	}
	assert.Equal(t, []string{"elicitation/create", "sampling/createMessage", "roots/list"}, methods)
	assert.JSONEq(t, `"7"`, fmt.Sprintf("%q", string(final.ID)))
	var res struct {
		Content []struct{ Text string } `json:"content"`
		IsError bool                    `json:"isError"`
	}
	require.NoError(t, json.Unmarshal(final.Result, &res), "%s", final.Result)
	require.False(t, res.IsError, "%s", final.Result)
	assert.Equal(t, "Ada|drafted|file:///home/ada on B", res.Content[0].Text)
}

// TestLegIDsUniqueAcrossReplicas: calls of one session on both replicas
// never send the same leg id.
func TestLegIDsUniqueAcrossReplicas(t *testing.T) {
	rs := newReplicas(t, share.Local(), 2)
	c := initialize(t, rs.urls[0])
	ids := map[string]string{}
	for i := range 4 {
		on, other := rs.urls[i%2], rs.urls[(i+1)%2]
		ch := c.open(context.Background(), http.MethodPost, on, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"trio","arguments":{}}}`, i))
		for {
			m := next(t, ch)
			if m.isResponse() {
				require.Nil(t, m.Error)
				break
			}
			if m.isRequest() {
				prev, seen := ids[string(m.ID)]
				require.False(t, seen, "leg id %s sent by %s and %s", m.ID, prev, on)
				ids[string(m.ID)] = on
				c.answerTo(other, m)
			}
		}
	}
	assert.Len(t, ids, 12)
}

// TestCancelOnOtherReplica: a notifications/cancelled posted to A ends
// the call running on B, which sends no answer.
func TestCancelOnOtherReplica(t *testing.T) {
	rs := newReplicas(t, share.Local(), 2)
	a, b := rs.urls[0], rs.urls[1]
	c := initialize(t, a)
	ch := c.open(context.Background(), http.MethodPost, b, `{"jsonrpc":"2.0","id":"long","method":"tools/call","params":{"name":"hold","arguments":{}}}`)
	require.Equal(t, "B", <-rs.started)
	status, _ := c.do(http.MethodPost, a, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"long","reason":"enough"}}`)
	require.Equal(t, http.StatusAccepted, status)
	var h held
	select {
	case h = <-rs.ended:
	case <-time.After(15 * time.Second):
		t.Fatal("the call on B was not cancelled")
	}
	assert.Equal(t, "B", h.replica)
	require.Error(t, h.cause, "the handler ran to its end: the cancellation did not reach B")
	for m := range ch {
		assert.False(t, m.isResponse(), "a cancelled request gets no answer: %+v", m)
	}
}

// logsOf calls the "logs" tool on url and returns the levels of the log
// notifications it sent.
func (c *wireClient) logsOf(url string) []string {
	c.t.Helper()
	status, out := c.do(http.MethodPost, url, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"logs","arguments":{}}}`)
	require.Equal(c.t, http.StatusOK, status)
	var levels []string
	for _, m := range out {
		if m.Method == "notifications/message" {
			var p struct {
				Level string `json:"level"`
			}
			require.NoError(c.t, json.Unmarshal(m.Params, &p))
			levels = append(levels, p.Level)
		}
	}
	require.NotEmpty(c.t, out)
	require.True(c.t, out[len(out)-1].isResponse())
	return levels
}

// TestSetLevelOnOtherReplica: the log level set on A rules the
// notifications of a call on B, which served the session before, and on
// C, which sees the session for the first time after the change.
func TestSetLevelOnOtherReplica(t *testing.T) {
	rs := newReplicas(t, share.Local(), 4)
	a, b := rs.urls[0], rs.urls[1]
	c := initialize(t, a)
	assert.Empty(t, c.logsOf(b), "no level, no log notifications")
	for i, tc := range []struct {
		level string
		want  []string
	}{{"debug", []string{"debug", "warning"}}, {"warning", []string{"warning"}}} {
		status, out := c.do(http.MethodPost, a, `{"jsonrpc":"2.0","id":2,"method":"logging/setLevel","params":{"level":"`+tc.level+`"}}`)
		require.Equal(t, http.StatusOK, status)
		require.Len(t, out, 1)
		require.Nil(t, out[0].Error, "%s", out[0].Error)
		assert.Equal(t, tc.want, c.logsOf(rs.urls[2+i]), "level %s set on A, first call on a replica new to the session", tc.level)
		assert.Equal(t, tc.want, c.logsOf(b), "level %s set on A, call on B", tc.level)
		assert.Equal(t, tc.want, c.logsOf(a), "level %s set on A, call on A", tc.level)
	}
}

// TestSubscribeOnOtherReplica: a subscription made on A brings the
// resource's updates to the session's stream on B; unsubscribing on A
// stops them.
func TestSubscribeOnOtherReplica(t *testing.T) {
	rs := newReplicas(t, share.Local(), 2)
	a, b := rs.urls[0], rs.urls[1]
	c := initialize(t, a)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stream := c.stream(ctx, b)

	status, out := c.do(http.MethodPost, a, `{"jsonrpc":"2.0","id":4,"method":"resources/subscribe","params":{"uri":"file:///watched"}}`)
	require.Equal(t, http.StatusOK, status)
	require.Len(t, out, 1)
	require.Nil(t, out[0].Error)
	// The subscription reaches B by the bus, at its own pace: the update
	// is posted again until the stream carries it.
	updated := func() bool {
		for range 200 {
			rs.servers[1].NotifyResourceUpdated("file:///watched")
			select {
			case m, ok := <-stream:
				if !ok {
					return false
				}
				if m.Method == "notifications/resources/updated" {
					assert.JSONEq(t, `{"uri":"file:///watched"}`, string(m.Params))
					return true
				}
			case <-time.After(50 * time.Millisecond):
			}
		}
		return false
	}
	require.True(t, updated(), "the stream on B never carried the update of the resource subscribed on A")
}

// TestDeleteOnOtherReplica: a session deleted on A is refused by B, and
// its stream on B ends; C, which never served the session, refuses it
// too.
func TestDeleteOnOtherReplica(t *testing.T) {
	rs := newReplicas(t, share.Local(), 3)
	a, b := rs.urls[0], rs.urls[1]
	c := initialize(t, a)
	ping := `{"jsonrpc":"2.0","id":1,"method":"ping"}`
	status, _ := c.do(http.MethodPost, b, ping)
	require.Equal(t, http.StatusOK, status)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel() // the servers close once every stream has ended
	stream := c.stream(ctx, b)

	status, _ = c.do(http.MethodDelete, a, "")
	require.Equal(t, http.StatusNoContent, status)
	// The session's stream on B ends, with no other request to tell B.
	for ended := false; !ended; {
		select {
		case _, ok := <-stream:
			ended = !ok
		case <-time.After(15 * time.Second):
			t.Fatal("the session's stream on B outlived its deletion on A")
		}
	}
	status, _ = c.do(http.MethodPost, b, ping)
	assert.Equal(t, http.StatusNotFound, status, "B serves a session deleted on A")
	status, _ = c.do(http.MethodPost, a, ping)
	assert.Equal(t, http.StatusNotFound, status)
	status, _ = c.do(http.MethodPost, rs.urls[2], ping)
	assert.Equal(t, http.StatusNotFound, status, "C serves a session deleted on A")
}

// TestThreeReplicasRoundRobin: every request of a session, answers
// included, goes to the next of three replicas in turn.
func TestThreeReplicasRoundRobin(t *testing.T) {
	rs := newReplicas(t, share.Local(), 3)
	turn := 0
	nextURL := func() string { turn++; return rs.urls[turn%3] }
	c := initialize(t, nextURL())
	for call := range 3 {
		ch := c.open(context.Background(), http.MethodPost, nextURL(), fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"trio","arguments":{}}}`, call+10))
		for {
			m := next(t, ch)
			if m.isResponse() {
				require.Nil(t, m.Error)
				assert.Contains(t, string(m.Result), "Ada|drafted|file:///home/ada")
				assert.NotContains(t, string(m.Result), `"isError":true`)
				break
			}
			if m.isRequest() {
				c.answerTo(nextURL(), m)
			}
		}
	}
}

// BenchmarkBridgedCallReplicas is one three-round bridged tools/call over HTTP:
// on a replica without a bus, on a replica of a deployment sharing an
// in-process bus with its answers posted to the same replica, and with
// its answers posted to the other replica.
func BenchmarkBridgedCallReplicas(b *testing.B) {
	for _, tc := range []struct {
		name  string
		bus   share.Bus
		other int
	}{{"no-bus", nil, 0}, {"local-bus/same-replica", share.Local(), 0}, {"local-bus/other-replica", share.Local(), 1}} {
		b.Run(tc.name, func(b *testing.B) {
			rs := newReplicas(b, tc.bus, 2)
			c := initialize(b, rs.urls[0])
			for b.Loop() {
				ch := c.open(context.Background(), http.MethodPost, rs.urls[0], `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"trio","arguments":{}}}`)
				for {
					m := next(b, ch)
					if m.isResponse() {
						if !bytes.Contains(m.Result, []byte("Ada|drafted")) {
							b.Fatalf("%s", m.Result)
						}
						break
					}
					if m.isRequest() {
						c.answerTo(rs.urls[tc.other], m)
					}
				}
			}
		})
	}
}

// claimDownBus is a shared bus whose single-use records cannot be written
// (Claim fails) while everything else works.
type claimDownBus struct {
	*share.LocalBus
	down atomic.Bool
}

func (b *claimDownBus) Claim(ctx context.Context, key string, ttl time.Duration) (bool, error) {
	if b.down.Load() {
		return false, errors.New("connection refused")
	}
	return b.LocalBus.Claim(ctx, key, ttl)
}

// TestDeleteNotSharedIsRetryLater: a DELETE whose deletion marker cannot be
// written is answered 503, not 204: the other replicas would go on serving
// the session, so the client is told to try again; once the store is back
// the retried DELETE ends it everywhere.
func TestDeleteNotSharedIsRetryLater(t *testing.T) {
	bus := &claimDownBus{LocalBus: share.Local()}
	rs := newReplicas(t, bus, 2)
	a, b := rs.urls[0], rs.urls[1]
	c := initialize(t, a)
	ping := `{"jsonrpc":"2.0","id":1,"method":"ping"}`

	bus.down.Store(true)
	status, out := c.do(http.MethodDelete, a, "")
	require.Equal(t, http.StatusServiceUnavailable, status, "%+v", out)
	bus.down.Store(false)
	status, _ = c.do(http.MethodPost, b, ping)
	require.Equal(t, http.StatusOK, status, "B was not told: the session lives on there")

	status, _ = c.do(http.MethodDelete, b, "")
	require.Equal(t, http.StatusNoContent, status)
	status, _ = c.do(http.MethodPost, a, ping)
	assert.Equal(t, http.StatusNotFound, status)
}
