package streamablehttp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mrtrkit/mrtrkit/internal/testkit"
	"github.com/mrtrkit/mrtrkit/internal/wire"
	"github.com/mrtrkit/mrtrkit/mrtr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// injServer is an endpoint logging to logger, at the transport and in
// the server (with the audit interceptor), whose authenticator refuses
// every token naming it, and whose tool "fail" fails naming its argument.
func injServer(t *testing.T, logger *slog.Logger) http.Handler {
	t.Helper()
	srv := testkit.Server(t, testkit.Desc("inject", "1"), mrtr.WithCodec(testkit.FreshCodec(t)), mrtr.WithLogger(logger),
		mrtr.WithInterceptors(mrtr.AuditLog(logger)))
	require.NoError(t, srv.AddTool(mrtr.Tool{Name: "fail", InputSchema: json.RawMessage(`{"type":"object"}`)},
		mrtr.HandlerFunc(func(_ context.Context, req *mrtr.Request) (mrtr.Result, error) {
			return nil, errors.New("cannot handle " + string(req.Arguments))
		})))
	h, err := New(srv, WithLogger(logger), WithAuthenticator(func(r *http.Request) (*mrtr.TokenInfo, error) {
		if tok := r.Header.Get("Authorization"); tok != "" {
			return nil, fmt.Errorf("unknown token %s", tok)
		}
		return nil, nil
	}))
	require.NoError(t, err)
	return h
}

// injPost is a POST to /mcp of a request of method with params, with the
// headers a 2026-07-28 client sends plus extra.
func injPost(method, name string, params map[string]any, extra map[string]string) *http.Request {
	params["_meta"] = map[string]any{wire.MetaProtocolVersion: "2026-07-28", wire.MetaClientCapabilities: map[string]any{}}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	r := httptest.NewRequest(http.MethodPost, "http://127.0.0.1/mcp", bytes.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", "application/json, text/event-stream")
	r.Header.Set("Mcp-Protocol-Version", "2026-07-28")
	r.Header.Set("Mcp-Method", EncodeHeaderValue(method))
	if name != "" {
		r.Header.Set("Mcp-Name", EncodeHeaderValue(name))
	}
	for k, v := range extra {
		r.Header[k] = []string{v}
	}
	return r
}

// TestLogInjectionHTTP sends values holding line breaks and forged
// records through every path of the endpoint that logs what a caller
// sent (Host, Origin, a refused credential, a method name, a tool name,
// mirror headers, a failing handler), under the text, JSON and default
// handlers of log/slog. Headers are set on the request directly, past
// net/http's own refusal of line breaks in them.
func TestLogInjectionHTTP(t *testing.T) {
	type path struct {
		name  string
		known string
		req   func(v string) *http.Request
	}
	paths := []path{
		{"host", "transport/streamablehttp/handler.go serveEndpoint: host and origin are logged unclipped", func(v string) *http.Request {
			r := injPost("tools/list", "", map[string]any{}, nil)
			r.Host = v
			return r
		}},
		{"origin", "transport/streamablehttp/handler.go serveEndpoint: host and origin are logged unclipped", func(v string) *http.Request {
			return injPost("tools/list", "", map[string]any{}, map[string]string{"Origin": "http://" + v})
		}},
		{"credential", "transport/streamablehttp/handler.go serveEndpoint: the authenticator's error is logged unclipped", func(v string) *http.Request {
			return injPost("tools/list", "", map[string]any{}, map[string]string{"Authorization": "Bearer " + v})
		}},
		{"method name", "", func(v string) *http.Request { return injPost(v, "", map[string]any{}, nil) }},
		{"tool name", "", func(v string) *http.Request { return injPost("tools/call", v, map[string]any{"name": v}, nil) }},
		{"mirror header", "", func(v string) *http.Request {
			return injPost("tools/call", "fail", map[string]any{"name": "fail"}, map[string]string{"Mcp-Name": v, "Mcp-Method": v})
		}},
		{"handler error", "", func(v string) *http.Request {
			return injPost("tools/call", "fail", map[string]any{"name": "fail", "arguments": map[string]any{"v": v}}, nil)
		}},
	}
	for _, kind := range testkit.LogKinds {
		for _, p := range paths {
			logger, buf, done := testkit.LogSink(kind)
			h := injServer(t, logger)
			for _, v := range testkit.InjectionPayloads(32 << 10) {
				w := httptest.NewRecorder()
				h.ServeHTTP(w, p.req(v))
				assert.LessOrEqualf(t, w.Body.Len(), 8<<10, "%s: an answer of %d bytes echoes the value", p.name, w.Body.Len())
			}
			done()
			msgs, violations := testkit.CheckLogLines(kind, buf.String(), func(msg string) bool {
				return strings.HasPrefix(msg, "streamablehttp") || strings.HasPrefix(msg, "mrtr")
			})
			assert.Falsef(t, len(msgs) == 0 && kind != "default", "%s, %s handler: nothing was logged; the path is not exercised", p.name, kind)
			for _, v := range violations {
				if p.known != "" {
					t.Logf("KNOWN VIOLATION (%s) %s, %s handler: %s", p.known, p.name, kind, v)
					continue
				}
				assert.Failf(t, "log injection", "%s, %s handler: %s", p.name, kind, v)
			}
		}
	}
}
