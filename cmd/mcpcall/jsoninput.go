package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"unicode/utf8"
)

// parseJSON checks that data is one JSON value and returns it. A syntax
// error names where it is: line, column and byte offset, and shows the
// line with a caret under the place.
func parseJSON(data []byte, what string) (json.RawMessage, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, fmt.Errorf("%s: empty; expected JSON", what)
	}
	if !utf8.Valid(data) {
		return nil, fmt.Errorf("%s: not valid UTF-8", what)
	}
	var raw json.RawMessage
	err := json.Unmarshal(data, &raw)
	if err == nil {
		return bytes.TrimSpace(raw), nil
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		// Offset counts the bytes read before the error, the offending byte
		// included; at the end of the input it is the input's length.
		off := int(se.Offset) - 1
		if off < 0 {
			off = 0
		}
		if se.Offset >= int64(len(data)) && strings.Contains(se.Error(), "end of JSON input") {
			off = len(data)
		}
		return nil, fmt.Errorf("%s: invalid JSON at %s: %s\n%s", what, position(data, off), se.Error(), caret(data, off))
	}
	return nil, fmt.Errorf("%s: invalid JSON: %v", what, err)
}

// parseJSONObject is parseJSON for a value that must be an object.
func parseJSONObject(data []byte, what string) (json.RawMessage, error) {
	raw, err := parseJSON(data, what)
	if err != nil {
		return nil, err
	}
	if raw[0] != '{' {
		return nil, fmt.Errorf("%s: must be a JSON object, not %s", what, jsonKind(raw))
	}
	return raw, nil
}

// position renders byte offset off of data as line, column (both from 1,
// the column in characters) and byte.
func position(data []byte, off int) string {
	if off > len(data) {
		off = len(data)
	}
	line := 1 + bytes.Count(data[:off], []byte("\n"))
	start := bytes.LastIndexByte(data[:off], '\n') + 1
	col := 1 + utf8.RuneCount(data[start:off])
	return fmt.Sprintf("line %d, column %d (byte %d)", line, col, off+1)
}

// caret shows the line holding offset off, cut to about 70 characters
// around it, with a ^ under the offending character.
func caret(data []byte, off int) string {
	if off > len(data) {
		off = len(data)
	}
	start := bytes.LastIndexByte(data[:off], '\n') + 1
	end := bytes.IndexByte(data[off:], '\n')
	if end < 0 {
		end = len(data)
	} else {
		end += off
	}
	line := []rune(string(data[start:end]))
	col := utf8.RuneCount(data[start:off])
	from, to := 0, len(line)
	if col > 40 {
		from = col - 40
	}
	if to-from > 70 {
		to = from + 70
	}
	shown := string(line[from:to])
	shown = strings.Map(func(r rune) rune {
		if r == '\t' || r == '\r' {
			return ' '
		}
		return r
	}, shown)
	prefix := "    "
	if from > 0 {
		prefix = "  …"
	}
	return prefix + shown + "\n    " + strings.Repeat(" ", col-from) + "^"
}

// jsonKind names the kind of a JSON value.
func jsonKind(raw json.RawMessage) string {
	switch raw[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}

// checkPromptArgs checks that prompt arguments are all strings.
func checkPromptArgs(obj json.RawMessage, what string) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(obj, &m); err != nil {
		return fmt.Errorf("%s: %v", what, err)
	}
	for k, v := range m {
		if len(v) == 0 || v[0] != '"' {
			return fmt.Errorf("%s: prompt arguments are strings; %q is %s", what, k, jsonKind(v))
		}
	}
	return nil
}

// readJSONFile reads and parses a JSON file named by a flag.
func readJSONFile(path, flagName string) (json.RawMessage, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", flagName, err)
	}
	return parseJSON(data, flagName+" "+path)
}

// loopbackHost reports whether host (without port, as url.Hostname
// returns it) names this machine: localhost, 127.0.0.0/8 or ::1.
func loopbackHost(host string) bool {
	if strings.EqualFold(strings.TrimSuffix(host, "."), "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
