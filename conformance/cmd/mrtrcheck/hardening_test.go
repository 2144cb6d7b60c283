package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mrtrkit/mrtrkit/conformance/suite"
	"github.com/mrtrkit/mrtrkit/discover"
	"github.com/mrtrkit/mrtrkit/internal/testkit"
	"github.com/mrtrkit/mrtrkit/mrtr"
	"github.com/mrtrkit/mrtrkit/transport/streamablehttp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// hardeningArgs keep the hardening scenarios short in tests.
var hardeningArgs = []string{"-listen-max", "40", "-body-wait", "500ms", "-quick", "2s", "-timeout", "5s"}

// hardenedHandler is an mrtrkit endpoint with a tool "ask", a read
// timeout of 300 ms, and srvOpts (listen caps, say).
func hardenedHandler(t *testing.T, srvOpts ...mrtr.Option) http.Handler {
	return hardenedHandlerReadTimeout(t, 300*time.Millisecond, srvOpts...)
}

// hardenedHandlerReadTimeout is hardenedHandler with the read timeout d.
func hardenedHandlerReadTimeout(t *testing.T, d time.Duration, srvOpts ...mrtr.Option) http.Handler {
	t.Helper()
	desc := discover.Description{
		Server:       discover.Implementation{Name: "hardening-test", Version: "1"},
		Capabilities: discover.Capabilities{Tools: &discover.ListChanged{ListChanged: true}},
	}
	quiet := slog.New(slog.DiscardHandler)
	srv, err := mrtr.NewServer(desc, append([]mrtr.Option{mrtr.WithCodec(testkit.FreshCodec(t)), mrtr.WithLogger(quiet)}, srvOpts...)...)
	require.NoError(t, err)
	require.NoError(t, srv.AddTool(mrtr.Tool{Name: "ask", InputSchema: json.RawMessage(`{"type":"object"}`)},
		mrtr.HandlerFunc(func(context.Context, *mrtr.Request) (mrtr.Result, error) { return mrtr.TextResult("ok"), nil })))
	h, err := streamablehttp.New(srv, streamablehttp.WithLogger(quiet), streamablehttp.WithReadTimeout(d))
	require.NoError(t, err)
	return h
}

// serve serves h on a loopback address and returns the endpoint URL.
func serve(t *testing.T, h http.Handler, configure func(*http.Server)) string {
	t.Helper()
	ts := httptest.NewUnstartedServer(h)
	if configure != nil {
		configure(ts.Config)
	}
	ts.Start()
	t.Cleanup(func() {
		ts.CloseClientConnections()
		ts.Close()
	})
	return ts.URL + "/mcp"
}

// echoing wraps next so that it answers any request with a long method,
// tool name or Mcp-* header with an error quoting it whole: a server that
// does not clip what it echoes.
func echoing(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var msg struct {
			Method string `json:"method"`
			Params struct {
				Name string `json:"name"`
			} `json:"params"`
		}
		_ = json.Unmarshal(body, &msg)
		long := ""
		for _, v := range []string{msg.Method, msg.Params.Name, r.Header.Get("Mcp-Method"), r.Header.Get("Mcp-Name")} {
			if len(v) > 1000 {
				long = v
				break
			}
		}
		if long != "" {
			w.Header().Set("Content-Type", "application/json")
			q, _ := json.Marshal("Unknown: " + long)
			_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":`+string(q)+`}}`)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		next.ServeHTTP(w, r)
	})
}

// pooled wraps next so that at most n requests are served at once and the
// others wait, never refused: a server with a small worker pool and no
// listen cap.
func pooled(n int, next http.Handler) http.Handler {
	sem := make(chan struct{}, n)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case sem <- struct{}{}:
		case <-r.Context().Done():
			return
		}
		defer func() { <-sem }()
		next.ServeHTTP(w, r)
	})
}

// serialized wraps next so that one request is served at a time, its
// body read and its answer written and flushed under one lock: a server
// that a stalled body or an unread answer blocks for everyone.
func serialized(next http.Handler) http.Handler {
	var mu sync.Mutex
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		body, err := io.ReadAll(r.Body)
		if err != nil {
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		next.ServeHTTP(w, r)
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
	})
}

// padded wraps next so that every JSON answer is followed by 64 KiB of
// white space (still one JSON value): a server whose answers are large.
func padded(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := httptest.NewRecorder()
		next.ServeHTTP(rec, r)
		for k, v := range rec.Header() {
			if k != "Content-Length" {
				w.Header()[k] = v
			}
		}
		w.WriteHeader(rec.Code)
		_, _ = w.Write(rec.Body.Bytes())
		if strings.HasPrefix(rec.Header().Get("Content-Type"), "application/json") {
			_, _ = w.Write(bytes.Repeat([]byte(" "), 64<<10))
		}
	})
}

// runHardeningCLI runs mrtrcheck's hardening scenarios matching re
// against url and returns the report.
func runHardeningCLI(t *testing.T, url, re string) (int, suite.Report, string) {
	t.Helper()
	args := append([]string{"-url", url, "-run", re, "-json"}, hardeningArgs...)
	code, out, errOut := runCLI(t, args...)
	var rep suite.Report
	require.NoError(t, json.Unmarshal([]byte(out), &rep), "exit %d: the report does not decode\n%s\n%s", code, out, errOut)
	return code, rep, out
}

func statusOf(t *testing.T, rep suite.Report, id string) suite.Result {
	t.Helper()
	res, ok := rep.Result(id)
	require.True(t, ok, "%s did not run: %+v", id, rep.Results)
	return res
}

func TestHardeningPassesOnMrtrkit(t *testing.T) {
	// The default caps: 16 listen streams for an anonymous caller.
	url := serve(t, hardenedHandler(t), nil)
	start := time.Now()
	code, rep, out := runHardeningCLI(t, url, `^hardening\.`)
	require.Equal(t, exitOK, code, "exit code\n%s", out)
	require.Len(t, rep.Results, len(hardeningScenarios())-len(serverScenarios()), "results:\n%s", out)
	for _, res := range rep.Results {
		assert.Equal(t, suite.Pass, res.Status, "%s: %s", res.ID, res.Reason)
	}
	assert.Contains(t, statusOf(t, rep, "hardening.listen-cap").Reason, "listen stream 17 was refused with HTTP 429", "listen-cap")
	d := time.Since(start)
	assert.LessOrEqual(t, d, 30*time.Second, "the hardening scenarios took %s", d)
	// Large answers alone do not fail hardening.unread-response: the
	// weakened server below fails it by its lock.
	code, rep, out = runHardeningCLI(t, serve(t, padded(hardenedHandler(t)), nil), `^hardening\.unread-response$`)
	require.Equal(t, exitOK, code, "large answers: exit code\n%s", out)
	require.Equal(t, suite.Pass, statusOf(t, rep, "hardening.unread-response").Status, "large answers:\n%s", out)
}

func TestHardeningListenCapInfo(t *testing.T) {
	// No listen cap, but the server keeps answering tools/list: INFO,
	// which does not fail the run.
	h := hardenedHandler(t, mrtr.WithMaxListeners(0, 0))
	url := serve(t, h, nil)
	code, rep, out := runHardeningCLI(t, url, `^hardening\.listen-cap$`)
	require.Equal(t, exitOK, code, "exit code\n%s", out)
	require.Equal(t, suite.Info, statusOf(t, rep, "hardening.listen-cap").Status, out)
}

func TestHardeningFailsOnWeakServers(t *testing.T) {
	for _, tc := range []struct {
		name    string
		url     func(t *testing.T) string
		re      string
		failing []string
	}{
		{"unbounded echoes", func(t *testing.T) string {
			// A header limit of 4 MiB lets the 1 MiB header values through
			// to the echo.
			return serve(t, echoing(hardenedHandler(t)), func(s *http.Server) { s.MaxHeaderBytes = 4 << 20 })
		}, `^hardening\.echo-`, []string{"hardening.echo-method", "hardening.echo-tool", "hardening.echo-header"}},
		{"no listen cap, a pool that waits", func(t *testing.T) string {
			return serve(t, pooled(20, hardenedHandler(t, mrtr.WithMaxListeners(0, 0))), nil)
		}, `^hardening\.listen-cap$`, []string{"hardening.listen-cap"}},
		{"a stalled body blocks everyone", func(t *testing.T) string {
			return serve(t, serialized(hardenedHandler(t)), nil)
		}, `^hardening\.slow-body$`, []string{"hardening.slow-body"}},
		{"an unread answer blocks everyone", func(t *testing.T) string {
			// Answers large enough that writing one into a connection
			// nobody reads blocks, under the lock.
			return serve(t, serialized(padded(hardenedHandler(t))), nil)
		}, `^hardening\.unread-response$`, []string{"hardening.unread-response"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			code, rep, out := runHardeningCLI(t, tc.url(t), tc.re)
			assert.Equal(t, exitFail, code, "exit code\n%s", out)
			for _, id := range tc.failing {
				res := statusOf(t, rep, id)
				assert.Equal(t, suite.Fail, res.Status, "%s (%s)", id, res.Reason)
			}
			d := time.Since(start)
			assert.LessOrEqual(t, d, 20*time.Second, "took %s", d)
		})
	}
}

func TestHardeningSlowBodyInfo(t *testing.T) {
	// A server that waits for the body longer than twice -body-wait but
	// serves others meanwhile: INFO.
	url := serve(t, hardenedHandlerReadTimeout(t, 10*time.Second), nil)
	code, rep, out := runHardeningCLI(t, url, `^hardening\.slow-body$`)
	res := statusOf(t, rep, "hardening.slow-body")
	require.Equal(t, exitOK, code, "exit code\n%s", out)
	require.Equal(t, suite.Info, res.Status, out)
}
