package mrtr_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mrtrkit/mrtrkit/internal/testkit"
	"github.com/mrtrkit/mrtrkit/mrtr"
)

// escapeAll percent-encodes every byte of s but ASCII letters and
// digits, so that a template's simple variable matches all of it.
func escapeAll(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' {
			b.WriteByte(c)
			continue
		}
		fmt.Fprintf(&b, "%%%02X", c)
	}
	return b.String()
}

// injectionServer serves, logging to logger (with the audit
// interceptor too), a template whose handler fails naming its variable,
// a tool that fails with its argument, one that panics with it, and one
// that asks (for state refusals).
func injectionServer(t *testing.T, logger *slog.Logger) *mrtr.Server {
	t.Helper()
	srv := testkit.Server(t, testDesc(), mrtr.WithCodec(testkit.FreshCodec(t)), mrtr.WithLogger(logger),
		mrtr.WithInterceptors(mrtr.AuditLog(logger)))
	argOf := func(req *mrtr.Request) string {
		var a struct{ V string }
		_ = json.Unmarshal(req.Arguments, &a)
		return a.V
	}
	require.NoError(t, srv.AddResourceTemplate(mrtr.ResourceTemplate{URITemplate: "note://{name}", Name: "note"},
		mrtr.HandlerFunc(func(_ context.Context, req *mrtr.Request) (mrtr.Result, error) {
			return nil, fmt.Errorf("no note named %s", req.Vars["name"])
		})))
	schema := json.RawMessage(`{"type":"object"}`)
	for name, h := range map[string]mrtr.HandlerFunc{
		"fail": func(_ context.Context, req *mrtr.Request) (mrtr.Result, error) {
			return nil, errors.New("cannot handle " + argOf(req))
		},
		"boom": func(_ context.Context, req *mrtr.Request) (mrtr.Result, error) {
			panic("cannot handle " + argOf(req))
		},
		"ask": func(_ context.Context, req *mrtr.Request) (mrtr.Result, error) {
			if req.Round == 0 {
				return mrtr.Ask("f", nameForm("name?")), nil
			}
			return mrtr.TextResult("ok"), nil
		},
	} {
		require.NoError(t, srv.AddTool(mrtr.Tool{Name: name, InputSchema: schema}, h))
	}
	return srv
}

// injectionPath sends one caller-controlled value v down one path that
// logs it.
type injectionPath struct {
	name string
	// known names a violation the non-test code still has; the test logs
	// it instead of failing (see the report of the audit).
	known string
	send  func(t *testing.T, srv *mrtr.Server, v string)
}

func injectionPaths() []injectionPath {
	handle := func(t *testing.T, srv *mrtr.Server, method string, params obj) {
		t.Helper()
		body, err := json.Marshal(obj{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
		require.NoError(t, err)
		msg, _, perr := mrtr.ParseMessage(body)
		if perr != nil {
			return // refused before anything is logged
		}
		require.NotNilf(t, srv.Handle(context.Background(), &mrtr.Inbound{Message: msg}), "no response to %s", method)
	}
	m := meta(capsEverything)
	return []injectionPath{
		{name: "template variable, failing handler",
			send: func(t *testing.T, srv *mrtr.Server, v string) {
				handle(t, srv, "resources/read", obj{"_meta": m, "uri": "note://" + escapeAll(v)})
			}},
		{name: "handler error",
			send: func(t *testing.T, srv *mrtr.Server, v string) {
				handle(t, srv, "tools/call", obj{"_meta": m, "name": "fail", "arguments": obj{"v": v}})
			}},
		{name: "handler panic", send: func(t *testing.T, srv *mrtr.Server, v string) {
			handle(t, srv, "tools/call", obj{"_meta": m, "name": "boom", "arguments": obj{"v": v}})
		}},
		{name: "tool name", send: func(t *testing.T, srv *mrtr.Server, v string) {
			handle(t, srv, "tools/call", obj{"_meta": m, "name": v, "arguments": obj{}})
		}},
		{name: "method name", send: func(t *testing.T, srv *mrtr.Server, v string) {
			handle(t, srv, v, obj{"_meta": m})
		}},
		{name: "state refusal", send: func(t *testing.T, srv *mrtr.Server, v string) {
			handle(t, srv, "tools/call", obj{"_meta": m, "name": "ask", "arguments": obj{"v": v}, "requestState": v,
				"inputResponses": obj{"f": obj{"action": "accept", "content": obj{"name": v}}}})
		}},
		{name: "state refusal, unknown tool", send: func(t *testing.T, srv *mrtr.Server, v string) {
			handle(t, srv, "tools/call", obj{"_meta": m, "name": v, "requestState": v})
		}},
	}
}

// TestLogInjection sends values holding line breaks and forged records
// down every path of the server that logs what a caller sent, under the
// text, JSON and default handlers of log/slog, and checks that every
// line of the log is one genuine record with a constant message and that
// the values are clipped.
func TestLogInjection(t *testing.T) {
	for _, kind := range testkit.LogKinds {
		for _, p := range injectionPaths() {
			logger, buf, done := testkit.LogSink(kind)
			srv := injectionServer(t, logger)
			for _, v := range testkit.InjectionPayloads(64 << 10) {
				p.send(t, srv, v)
			}
			done()
			msgs, violations := testkit.CheckLogLines(kind, buf.String(), isMrtrMessage)
			assert.Falsef(t, len(msgs) == 0 && p.name != "tool name" && p.name != "method name", "%s, %s handler: nothing was logged; the path is not exercised", p.name, kind)
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

// TestLogLineChecker makes sure the checker catches what it is for.
func TestLogLineChecker(t *testing.T) {
	var b bytes.Buffer
	l := slog.New(slog.NewTextHandler(&b, nil))
	l.Info("mrtr: ok", "v", "a\nb")
	_, v := testkit.CheckLogLines("text", b.String(), isMrtrMessage)
	require.Empty(t, v, "a genuine record was flagged")
	b.Reset()
	l.Info("mrtr: not constant\ntime=" + testkit.ForgedTime + "T00:00:00Z level=ERROR msg=FORGED")
	_, v = testkit.CheckLogLines("text", b.String(), isMrtrMessage)
	require.NotEmpty(t, v, "a forged record went unnoticed")
	b.Reset()
	l.Info("mrtr: ok", "v", strings.Repeat(testkit.Filler, 1000))
	_, v = testkit.CheckLogLines("text", b.String(), isMrtrMessage)
	require.NotEmpty(t, v, "an unclipped value went unnoticed")
}

// isMrtrMessage reports whether msg is one of the package's constant
// log messages, all of which start "mrtr".
func isMrtrMessage(msg string) bool { return strings.HasPrefix(msg, "mrtr") }
