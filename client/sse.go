package client

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"strconv"
	"strings"
)

// maxEvent bounds one server-sent event's data.
const maxEvent = 16 << 20

// errEventTooLarge is returned by the SSE reader for an event larger than
// maxEvent.
var errEventTooLarge = errors.New("a server-sent event is larger than the client accepts")

// sseEvent is one dispatched server-sent event.
type sseEvent struct {
	ID    string // the last event id after this event (the stream's, per the SSE rules)
	Event string // the event type ("" means message)
	Data  []byte
}

// sseReader reads a text/event-stream body as the HTML SSE rules say:
// fields data, event, id and retry; comment lines; CR, LF or CRLF line
// ends; an event is dispatched at a blank line. The body is untrusted:
// every line and event is bounded.
type sseReader struct {
	r     *bufio.Reader
	id    string // last event id
	retry int    // the last retry field, in ms (-1: none)
	// hasID says whether the stream has set an id.
	hasID bool
	// skipLF drops the LF of a CRLF whose CR ended the last line.
	skipLF bool
}

func newSSEReader(r io.Reader) *sseReader {
	return &sseReader{r: bufio.NewReaderSize(r, 64<<10), retry: -1}
}

// readLine returns one line without its end (CRLF, LF or a lone CR),
// bounded by maxEvent. Plain runs of bytes are copied in chunks, so the
// cost is linear in the input whatever its line ends.
func (s *sseReader) readLine() (string, error) {
	var b []byte
	for {
		if s.skipLF {
			s.skipLF = false
			c, err := s.r.ReadByte()
			if err != nil {
				return "", err
			}
			if c != '\n' {
				_ = s.r.UnreadByte()
			}
		}
		chunk, err := s.r.Peek(1)
		if err != nil {
			if err == io.EOF && len(b) > 0 {
				return string(b), nil
			}
			return "", err
		}
		_ = chunk
		buf, _ := s.r.Peek(s.r.Buffered())
		i := bytes.IndexAny(buf, "\r\n")
		if i < 0 {
			b = append(b, buf...)
			_, _ = s.r.Discard(len(buf))
			if len(b) > maxEvent {
				return "", errEventTooLarge
			}
			continue
		}
		b = append(b, buf[:i]...)
		_, _ = s.r.Discard(i + 1)
		if len(b) > maxEvent {
			return "", errEventTooLarge
		}
		if buf[i] == '\r' {
			s.skipLF = true
		}
		return string(b), nil
	}
}

// next returns the next event, or io.EOF at the end of the stream (an
// event not ended by a blank line is dropped, as the SSE rules say).
func (s *sseReader) next() (*sseEvent, error) {
	var data bytes.Buffer
	hasData := false
	event := ""
	for {
		line, err := s.readLine()
		if err != nil {
			return nil, err
		}
		if line == "" {
			if !hasData {
				event = ""
				continue
			}
			return &sseEvent{ID: s.id, Event: event, Data: data.Bytes()}, nil
		}
		if line[0] == ':' {
			continue
		}
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch field {
		case "data":
			if hasData {
				data.WriteByte('\n')
			}
			data.WriteString(value)
			hasData = true
			if data.Len() > maxEvent {
				return nil, errEventTooLarge
			}
		case "event":
			event = value
		case "id":
			if !strings.ContainsRune(value, 0) {
				s.id = value
				s.hasID = true
			}
		case "retry":
			if n, err := strconv.Atoi(value); err == nil && n >= 0 && value[0] != '+' {
				s.retry = n
			}
		}
	}
}
