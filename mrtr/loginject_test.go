package mrtr_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"log/slog"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mrtrkit/mrtrkit/internal/testkit"
	"github.com/mrtrkit/mrtrkit/mrtr"
)

// forgedTime is the time of the records the injection payloads forge:
// no genuine record carries it.
const forgedTime = "2000-01-01"

// filler pads the long payloads; a run of maxFillerRun of it in a log
// line means a caller's value was logged unclipped.
const (
	filler       = "Q"
	maxFillerRun = 256
	maxLogLine   = 16 << 10
	longPayload  = 64 << 10
)

// injectionPayloads are caller-controlled values meant to forge log
// records under the text, JSON and default handlers of log/slog.
func injectionPayloads() map[string]string {
	forged := "time=" + forgedTime + "T00:00:00.000Z level=ERROR msg=FORGED user=admin"
	return map[string]string{
		"lf":      "x\n" + forged,
		"cr":      "x\r" + forged,
		"crlf":    "x\r\n" + forged,
		"default": "x\n" + forgedTime[:4] + "/01/01 00:00:00 ERROR FORGED user=admin",
		"json":    "x\n{\"time\":\"" + forgedTime + "\",\"level\":\"ERROR\",\"msg\":\"FORGED\"}",
		"medium":  strings.Repeat(filler, 2048) + "\n" + forged,
		"long":    strings.Repeat(filler, longPayload) + "\n" + forged,
	}
}

// safeBuffer is a bytes.Buffer for concurrent writers.
type safeBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *safeBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *safeBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// logSink is one slog handler under test writing into a buffer.
type logSink struct {
	name   string
	logger *slog.Logger
	buf    *safeBuffer
	done   func()
}

// logSinks returns the text, JSON and default handlers, each writing
// into its own buffer. The default one redirects the standard logger
// until done is called.
func logSinks(t *testing.T) []func() logSink {
	return []func() logSink{
		func() logSink {
			b := &safeBuffer{}
			return logSink{"text", slog.New(slog.NewTextHandler(b, &slog.HandlerOptions{Level: slog.LevelDebug})), b, func() {}}
		},
		func() logSink {
			b := &safeBuffer{}
			return logSink{"json", slog.New(slog.NewJSONHandler(b, &slog.HandlerOptions{Level: slog.LevelDebug})), b, func() {}}
		},
		func() logSink {
			b := &safeBuffer{}
			prevOut, prevFlags := log.Writer(), log.Flags()
			log.SetOutput(b)
			log.SetFlags(log.LstdFlags)
			return logSink{"default", slog.New(slog.Default().Handler()), b, func() {
				log.SetOutput(prevOut)
				log.SetFlags(prevFlags)
			}}
		},
	}
}

var (
	defaultPrefix = regexp.MustCompile(`^\d{4}/\d\d/\d\d \d\d:\d\d:\d\d (DEBUG|INFO|WARN|ERROR) `)
	attrStart     = regexp.MustCompile(` [A-Za-z_][A-Za-z0-9_.]*=`)
)

// parseLogfmt reports whether s is a sequence of key=value pairs
// separated by single spaces, each value bare (no space, quote or =) or
// a Go-quoted string, as slog's text handler writes them; it returns the
// pairs.
func parseLogfmt(s string) (map[string]string, bool) {
	out := map[string]string{}
	for s != "" {
		eq := strings.IndexByte(s, '=')
		if eq <= 0 || strings.ContainsAny(s[:eq], " \"") {
			return nil, false
		}
		key := s[:eq]
		s = s[eq+1:]
		var val string
		if strings.HasPrefix(s, `"`) {
			q, err := strconv.QuotedPrefix(s)
			if err != nil {
				return nil, false
			}
			val, _ = strconv.Unquote(q)
			s = s[len(q):]
		} else {
			end := strings.IndexByte(s, ' ')
			if end < 0 {
				end = len(s)
			}
			val = s[:end]
			if strings.ContainsAny(val, "\"=") {
				return nil, false
			}
			s = s[end:]
		}
		out[key] = val
		if s == "" {
			break
		}
		if s[0] != ' ' || len(s) == 1 {
			return nil, false
		}
		s = s[1:]
	}
	return out, true
}

// checkLogLines asserts that every line of out is exactly one record of
// the handler named kind, that its message is a constant of the package
// (it starts with prefix and holds no injected text), that no record is
// forged, and that no caller value is echoed unbounded. It returns the
// messages of the records.
func checkLogLines(t *testing.T, kind, prefix, out string) (msgs []string, violations []string) {
	t.Helper()
	if out != "" && !strings.HasSuffix(out, "\n") {
		violations = append(violations, "output does not end with a newline")
	}
	for i, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if out == "" {
			break
		}
		bad := func(format string, args ...any) {
			violations = append(violations, fmt.Sprintf("line %d (%s): ", i+1, clipForReport(line))+fmt.Sprintf(format, args...))
		}
		if len(line) > maxLogLine {
			bad("%d bytes long", len(line))
		}
		if strings.Contains(line, strings.Repeat(filler, maxFillerRun)) {
			bad("echoes a caller's value unclipped")
		}
		if strings.Contains(line, "\r") {
			bad("holds a raw carriage return")
		}
		if strings.HasPrefix(line, "time="+forgedTime) || strings.HasPrefix(line, forgedTime[:4]+"/") || strings.HasPrefix(line, `{"time":"`+forgedTime) {
			bad("is a forged record")
			continue
		}
		var msg string
		switch kind {
		case "text":
			kv, ok := parseLogfmt(line)
			if !ok || !strings.HasPrefix(line, "time=") || kv["level"] == "" {
				bad("is not one text record")
				continue
			}
			msg = kv["msg"]
		case "json":
			var rec map[string]any
			dec := json.NewDecoder(strings.NewReader(line))
			if dec.Decode(&rec) != nil || dec.More() || rec["time"] == nil || rec["level"] == nil {
				bad("is not one JSON record")
				continue
			}
			msg, _ = rec["msg"].(string)
		case "default":
			head := defaultPrefix.FindString(line)
			if head == "" {
				bad("is not one default-handler record")
				continue
			}
			rest := line[len(head):]
			msg = rest
			if loc := attrStart.FindStringIndex(rest); loc != nil {
				msg = rest[:loc[0]]
				if _, ok := parseLogfmt(rest[loc[0]+1:]); !ok {
					bad("attributes do not parse")
				}
			}
		}
		if !strings.HasPrefix(msg, prefix) || strings.Contains(msg, "FORGED") || strings.Contains(msg, filler+filler) {
			bad("message %q is not a constant of the package", clipForReport(msg))
		}
		msgs = append(msgs, msg)
	}
	return msgs, violations
}

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

func clipForReport(s string) string {
	if len(s) > 160 {
		return strconv.Quote(s[:160]) + "..."
	}
	return strconv.Quote(s)
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
	for _, mk := range logSinks(t) {
		for _, p := range injectionPaths() {
			sink := mk()
			srv := injectionServer(t, sink.logger)
			for _, v := range injectionPayloads() {
				p.send(t, srv, v)
			}
			sink.done()
			out := sink.buf.String()
			msgs, violations := checkLogLines(t, sink.name, "mrtr", out)
			assert.Falsef(t, len(msgs) == 0 && p.name != "tool name" && p.name != "method name", "%s, %s handler: nothing was logged; the path is not exercised", p.name, sink.name)
			for _, v := range violations {
				if p.known != "" {
					t.Logf("KNOWN VIOLATION (%s) %s, %s handler: %s", p.known, p.name, sink.name, v)
					continue
				}
				assert.Failf(t, "log injection", "%s, %s handler: %s", p.name, sink.name, v)
			}
		}
	}
}

// TestLogLineChecker makes sure the checker catches what it is for.
func TestLogLineChecker(t *testing.T) {
	var b bytes.Buffer
	l := slog.New(slog.NewTextHandler(&b, nil))
	l.Info("mrtr: ok", "v", "a\nb")
	_, v := checkLogLines(t, "text", "mrtr", b.String())
	require.Empty(t, v, "a genuine record was flagged")
	b.Reset()
	l.Info("mrtr: not constant\ntime=" + forgedTime + "T00:00:00Z level=ERROR msg=FORGED")
	_, v = checkLogLines(t, "text", "mrtr", b.String())
	require.NotEmpty(t, v, "a forged record went unnoticed")
	b.Reset()
	l.Info("mrtr: ok", "v", strings.Repeat(filler, 1000))
	_, v = checkLogLines(t, "text", "mrtr", b.String())
	require.NotEmpty(t, v, "an unclipped value went unnoticed")
}
