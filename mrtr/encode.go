package mrtr

import (
	"bytes"
	"encoding/json"
	"slices"
	"unicode/utf8"
)

// This file encodes the results handlers return most often without
// reflection: a tool result and its text blocks. Anything else goes
// through encoding/json.

// memberAppender is a result body that appends its own JSON members
// (without the surrounding braces) to b.
type memberAppender interface {
	appendMembers(b []byte) ([]byte, error)
}

// appendMembers renders the tool result's members: content, then
// structuredContent and isError when set.
func (r *CallToolResult) appendMembers(b []byte) ([]byte, error) {
	b = append(b, `"content":[`...)
	for i, c := range r.Content {
		if i > 0 {
			b = append(b, ',')
		}
		var err error
		if b, err = appendContent(b, c); err != nil {
			return nil, err
		}
	}
	b = append(b, ']')
	if r.StructuredContent != nil {
		b = append(b, `,"structuredContent":`...)
		var err error
		if b, err = appendValue(b, r.StructuredContent); err != nil {
			return nil, err
		}
	}
	if r.IsError {
		b = append(b, `,"isError":true`...)
	}
	return b, nil
}

// appendContent renders one content block. A text block without
// annotations or _meta, the common case, is written directly.
func appendContent(b []byte, c Content) ([]byte, error) {
	if t, ok := c.(*TextContent); ok && t != nil && t.Annotations == nil && t.Meta == nil {
		// Room for the text at once: a long text would otherwise grow the
		// buffer step by step, each step a copy left to the collector.
		b = slices.Grow(b, len(t.Text)+len(`{"type":"text","text":""}`))
		b = append(b, `{"type":"text","text":`...)
		b = appendString(b, t.Text)
		return append(b, '}'), nil
	}
	return appendValue(b, c)
}

// appendValue renders v with encoding/json, except that a json.RawMessage
// is checked and compacted without a detour through Go values.
func appendValue(b []byte, v any) ([]byte, error) {
	if raw, ok := v.(json.RawMessage); ok {
		// Compacted, as encoding/json would: a line-delimited transport
		// must never see a line break inside a message.
		buf := bytes.NewBuffer(b)
		if err := json.Compact(buf, raw); err != nil {
			return nil, err
		}
		return buf.Bytes(), nil
	}
	enc, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return append(b, enc...), nil
}

// appendString appends s as a JSON string, escaped as encoding/json escapes
// it but for HTML characters (<, > and &), which need no escaping in JSON:
// quotes, backslashes and control characters are escaped, invalid UTF-8
// becomes U+FFFD, and U+2028 and U+2029 are escaped for JavaScript.
func appendString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i++
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xF])
			i += n
			start = i
			continue
		}
		i += n
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
