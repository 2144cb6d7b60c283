package streamablehttp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/mrtrkit/mrtrkit/internal/testkit"
	"github.com/mrtrkit/mrtrkit/internal/wire"
	"github.com/mrtrkit/mrtrkit/mrtr"
)

// The injection payloads forge records dated injTime; a run of
// injMaxRun injFiller in a log line means a caller's value was logged
// unclipped.
const (
	injTime    = "2000-01-01"
	injFiller  = "Q"
	injMaxRun  = 256
	injMaxLine = 16 << 10
)

func injPayloads() map[string]string {
	forged := "time=" + injTime + "T00:00:00.000Z level=ERROR msg=FORGED user=admin"
	return map[string]string{
		"lf":      "x\n" + forged,
		"cr":      "x\r" + forged,
		"crlf":    "x\r\n" + forged,
		"default": "x\n" + injTime[:4] + "/01/01 00:00:00 ERROR FORGED",
		"json":    "x\n{\"time\":\"" + injTime + "\",\"level\":\"ERROR\",\"msg\":\"FORGED\"}",
		"medium":  strings.Repeat(injFiller, 2048) + "\n" + forged,
		"long":    strings.Repeat(injFiller, 32<<10) + "\n" + forged,
	}
}

type injBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *injBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *injBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// injSink returns a logger of the handler named kind ("text", "json" or
// "default") writing into a buffer, and a function that restores the
// standard logger.
func injSink(kind string) (*slog.Logger, *injBuffer, func()) {
	b := &injBuffer{}
	opts := &slog.HandlerOptions{Level: slog.LevelDebug}
	switch kind {
	case "text":
		return slog.New(slog.NewTextHandler(b, opts)), b, func() {}
	case "json":
		return slog.New(slog.NewJSONHandler(b, opts)), b, func() {}
	}
	prevOut, prevFlags := log.Writer(), log.Flags()
	log.SetOutput(b)
	log.SetFlags(log.LstdFlags)
	return slog.New(slog.Default().Handler()), b, func() {
		log.SetOutput(prevOut)
		log.SetFlags(prevFlags)
	}
}

var (
	injDefaultHead = regexp.MustCompile(`^\d{4}/\d\d/\d\d \d\d:\d\d:\d\d (DEBUG|INFO|WARN|ERROR) `)
	injAttrStart   = regexp.MustCompile(` [A-Za-z_][A-Za-z0-9_.]*=`)
)

// injLogfmt reports whether s is key=value pairs separated by single
// spaces, each value bare or Go-quoted, as slog's text handler writes.
func injLogfmt(s string) (map[string]string, bool) {
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

// injCheck returns what is wrong with the log out of the handler kind:
// a line that is not exactly one record, a forged record, a message that
// is not a constant (prefixed "streamablehttp" or "mrtr"), a value echoed
// unclipped. It also returns the number of records.
func injCheck(kind, out string) (records int, violations []string) {
	if out == "" {
		return 0, nil
	}
	if !strings.HasSuffix(out, "\n") {
		violations = append(violations, "output does not end with a newline")
	}
	for i, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		bad := func(format string, args ...any) {
			shown := line
			if len(shown) > 160 {
				shown = shown[:160] + "..."
			}
			violations = append(violations, fmt.Sprintf("line %d (%q): ", i+1, shown)+fmt.Sprintf(format, args...))
		}
		if len(line) > injMaxLine {
			bad("%d bytes long", len(line))
		}
		if strings.Contains(line, strings.Repeat(injFiller, injMaxRun)) {
			bad("echoes a caller's value unclipped")
		}
		if strings.Contains(line, "\r") {
			bad("holds a raw carriage return")
		}
		if strings.HasPrefix(line, "time="+injTime) || strings.HasPrefix(line, injTime[:4]+"/") || strings.HasPrefix(line, `{"time":"`+injTime) {
			bad("is a forged record")
			continue
		}
		var msg string
		switch kind {
		case "text":
			kv, ok := injLogfmt(line)
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
		default:
			head := injDefaultHead.FindString(line)
			if head == "" {
				bad("is not one default-handler record")
				continue
			}
			msg = line[len(head):]
			if loc := injAttrStart.FindStringIndex(msg); loc != nil {
				if _, ok := injLogfmt(msg[loc[0]+1:]); !ok {
					bad("attributes do not parse")
				}
				msg = msg[:loc[0]]
			}
		}
		if !(strings.HasPrefix(msg, "streamablehttp") || strings.HasPrefix(msg, "mrtr")) || strings.Contains(msg, "FORGED") || strings.Contains(msg, injFiller+injFiller) {
			bad("message %q is not a constant", msg)
		}
		records++
	}
	return records, violations
}

// injServer is an endpoint logging to logger, at the transport and in
// the server (with the audit interceptor), whose authenticator refuses
// every token naming it, and whose tool "fail" fails naming its argument.
func injServer(t *testing.T, logger *slog.Logger) http.Handler {
	t.Helper()
	srv := testkit.Server(t, testkit.Desc("inject", "1"), mrtr.WithCodec(testkit.FreshCodec(t)), mrtr.WithLogger(logger),
		mrtr.WithInterceptors(mrtr.AuditLog(logger)))
	if err := srv.AddTool(mrtr.Tool{Name: "fail", InputSchema: json.RawMessage(`{"type":"object"}`)},
		mrtr.HandlerFunc(func(_ context.Context, req *mrtr.Request) (mrtr.Result, error) {
			return nil, errors.New("cannot handle " + string(req.Arguments))
		})); err != nil {
		t.Fatal(err)
	}
	h, err := New(srv, WithLogger(logger), WithAuthenticator(func(r *http.Request) (*mrtr.TokenInfo, error) {
		if tok := r.Header.Get("Authorization"); tok != "" {
			return nil, fmt.Errorf("unknown token %s", tok)
		}
		return nil, nil
	}))
	if err != nil {
		t.Fatal(err)
	}
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
	for _, kind := range []string{"text", "json", "default"} {
		for _, p := range paths {
			logger, buf, done := injSink(kind)
			h := injServer(t, logger)
			for _, v := range injPayloads() {
				w := httptest.NewRecorder()
				h.ServeHTTP(w, p.req(v))
				if w.Body.Len() > 8<<10 {
					t.Errorf("%s: an answer of %d bytes echoes the value", p.name, w.Body.Len())
				}
			}
			done()
			records, violations := injCheck(kind, buf.String())
			if records == 0 && kind != "default" {
				t.Errorf("%s, %s handler: nothing was logged; the path is not exercised", p.name, kind)
			}
			for _, v := range violations {
				if p.known != "" {
					t.Logf("KNOWN VIOLATION (%s) %s, %s handler: %s", p.known, p.name, kind, v)
					continue
				}
				t.Errorf("%s, %s handler: %s", p.name, kind, v)
			}
		}
	}
}
