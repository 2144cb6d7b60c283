package testkit

import (
	"encoding/json"
	"fmt"
	"log"
	"log/slog"
	"regexp"
	"strconv"
	"strings"
)

// The log-injection payloads forge records dated ForgedTime; a run of
// MaxFillerRun Filler in a log line means a caller's value was logged
// unclipped, and no genuine line is longer than MaxLogLine bytes.
const (
	ForgedTime   = "2000-01-01"
	Filler       = "Q"
	MaxFillerRun = 256
	MaxLogLine   = 16 << 10
)

// LogKinds names the handlers of log/slog that LogSink builds.
var LogKinds = []string{"text", "json", "default"}

// InjectionPayloads returns caller-controlled values meant to forge log
// records under the text, JSON and default handlers of log/slog, keyed
// by what they try. The "long" one holds long bytes of Filler before
// its forged record.
func InjectionPayloads(long int) map[string]string {
	forged := "time=" + ForgedTime + "T00:00:00.000Z level=ERROR msg=FORGED user=admin"
	return map[string]string{
		"lf":      "x\n" + forged,
		"cr":      "x\r" + forged,
		"crlf":    "x\r\n" + forged,
		"default": "x\n" + ForgedTime[:4] + "/01/01 00:00:00 ERROR FORGED user=admin",
		"json":    "x\n{\"time\":\"" + ForgedTime + "\",\"level\":\"ERROR\",\"msg\":\"FORGED\"}",
		"medium":  strings.Repeat(Filler, 2048) + "\n" + forged,
		"long":    strings.Repeat(Filler, long) + "\n" + forged,
	}
}

// LogSink returns a logger of the handler named kind ("text", "json" or
// "default") at debug level writing into a buffer, and a function to
// call when done. The "default" one redirects the standard logger into
// the buffer until done restores it, so its tests must not run in
// parallel.
func LogSink(kind string) (*slog.Logger, *LogBuffer, func()) {
	b := &LogBuffer{}
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
	defaultHead = regexp.MustCompile(`^\d{4}/\d\d/\d\d \d\d:\d\d:\d\d (DEBUG|INFO|WARN|ERROR) `)
	attrStart   = regexp.MustCompile(` [A-Za-z_][A-Za-z0-9_.]*=`)
)

// ParseLogfmt reports whether s is a sequence of key=value pairs
// separated by single spaces, each value bare (no space, quote or =) or
// a Go-quoted string, as slog's text handler writes them; it returns the
// pairs.
func ParseLogfmt(s string) (map[string]string, bool) {
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

// CheckLogLines returns what is wrong with out, the log written by the
// handler named kind: a line that is not exactly one record, a forged
// record, a line too long, a raw carriage return, a value echoed
// unclipped, or a message that constant rejects (constant is told the
// message and says whether it is one of the package's constants). It
// also returns the messages of the records.
func CheckLogLines(kind, out string, constant func(msg string) bool) (msgs []string, violations []string) {
	if out == "" {
		return nil, nil
	}
	if !strings.HasSuffix(out, "\n") {
		violations = append(violations, "output does not end with a newline")
	}
	for i, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		bad := func(format string, args ...any) {
			violations = append(violations, fmt.Sprintf("line %d (%s): ", i+1, ClipForReport(line))+fmt.Sprintf(format, args...))
		}
		if len(line) > MaxLogLine {
			bad("%d bytes long", len(line))
		}
		if strings.Contains(line, strings.Repeat(Filler, MaxFillerRun)) {
			bad("echoes a caller's value unclipped")
		}
		if strings.Contains(line, "\r") {
			bad("holds a raw carriage return")
		}
		if strings.HasPrefix(line, "time="+ForgedTime) || strings.HasPrefix(line, ForgedTime[:4]+"/") || strings.HasPrefix(line, `{"time":"`+ForgedTime) {
			bad("is a forged record")
			continue
		}
		var msg string
		switch kind {
		case "text":
			kv, ok := ParseLogfmt(line)
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
			head := defaultHead.FindString(line)
			if head == "" {
				bad("is not one default-handler record")
				continue
			}
			msg = line[len(head):]
			if loc := attrStart.FindStringIndex(msg); loc != nil {
				if _, ok := ParseLogfmt(msg[loc[0]+1:]); !ok {
					bad("attributes do not parse")
				}
				msg = msg[:loc[0]]
			}
		}
		if !constant(msg) || strings.Contains(msg, "FORGED") || strings.Contains(msg, Filler+Filler) {
			bad("message %s is not a constant of the package", ClipForReport(msg))
		}
		msgs = append(msgs, msg)
	}
	return msgs, violations
}

// ClipForReport quotes s for a failure message, clipped to 160 bytes.
func ClipForReport(s string) string {
	if len(s) > 160 {
		return strconv.Quote(s[:160]) + "..."
	}
	return strconv.Quote(s)
}
