package interop_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"
)

// exchange is one HTTP round trip seen on the wire: the JSON-RPC message the
// client posted and the JSON-RPC messages the server answered with (one for
// an application/json reply, one or more for a text/event-stream reply).
type exchange struct {
	HTTPMethod  string            // GET, POST or DELETE
	Method      string            // JSON-RPC method of the posted message
	ID          json.RawMessage   // JSON-RPC id of the posted message (nil for notifications)
	Params      json.RawMessage   // params of the posted message
	Header      http.Header       // request headers
	Status      int               // HTTP status
	ContentType string            // response Content-Type
	Replies     []json.RawMessage // JSON-RPC messages in the response body
	RawRequest  []byte
	RawResponse []byte

	complete chan struct{} // closed once the response body has been consumed
}

// result returns the "result" member of the reply whose id matches the
// request id, or nil.
func (e *exchange) result() map[string]any {
	for _, r := range e.Replies {
		var m map[string]any
		if json.Unmarshal(r, &m) != nil {
			continue
		}
		if res, ok := m["result"].(map[string]any); ok {
			return res
		}
	}
	return nil
}

// recorder is an http.RoundTripper that keeps a copy of every exchange so a
// test can check what the client actually sent and received.
type recorder struct {
	next http.RoundTripper

	mu        sync.Mutex
	exchanges []*exchange
}

func newRecorder() *recorder { return &recorder{next: withToken(http.DefaultTransport)} }

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	ex := &exchange{HTTPMethod: req.Method, Header: req.Header.Clone(), complete: make(chan struct{})}
	if req.Body != nil {
		body, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, err
		}
		ex.RawRequest = body
		req.Body = io.NopCloser(bytes.NewReader(body))
		var msg struct {
			Method string          `json:"method"`
			ID     json.RawMessage `json:"id"`
			Params json.RawMessage `json:"params"`
		}
		if json.Unmarshal(body, &msg) == nil {
			ex.Method, ex.ID, ex.Params = msg.Method, msg.ID, msg.Params
		}
	}
	resp, err := r.next.RoundTrip(req)
	if err != nil {
		close(ex.complete)
		return nil, err
	}
	ex.Status = resp.StatusCode
	ex.ContentType = resp.Header.Get("Content-Type")
	// The body is teed rather than read eagerly so that streamed replies
	// still reach the client as they arrive; the copy is parsed on Close.
	var buf bytes.Buffer
	resp.Body = &teeBody{r: io.TeeReader(resp.Body, &buf), c: resp.Body, done: func() {
		ex.RawResponse = buf.Bytes()
		ex.Replies = parseReplies(ex.ContentType, ex.RawResponse)
		close(ex.complete)
	}}
	r.mu.Lock()
	r.exchanges = append(r.exchanges, ex)
	r.mu.Unlock()
	return resp, nil
}

// snapshot returns the exchanges recorded so far, once their response
// bodies have been consumed.
func (r *recorder) snapshot() []*exchange {
	return r.since(0)
}

// mark returns the number of exchanges recorded so far; since(mark) returns
// those recorded afterwards.
func (r *recorder) mark() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.exchanges)
}

func (r *recorder) since(mark int) []*exchange {
	r.mu.Lock()
	exs := append([]*exchange(nil), r.exchanges[mark:]...)
	r.mu.Unlock()
	// A client may hand a reply to its caller before it closes the response
	// body; wait briefly so the copy is whole.
	deadline := time.After(5 * time.Second)
	for _, ex := range exs {
		if ex.HTTPMethod == http.MethodGet {
			continue // a session's stream lasts as long as the session
		}
		select {
		case <-ex.complete:
		case <-deadline:
			return exs
		}
	}
	return exs
}

type teeBody struct {
	r    io.Reader
	c    io.Closer
	once sync.Once
	done func()
}

func (t *teeBody) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	if err == io.EOF {
		t.once.Do(t.done)
	}
	return n, err
}

func (t *teeBody) Close() error {
	err := t.c.Close()
	t.once.Do(t.done)
	return err
}

// parseReplies extracts JSON-RPC messages from a response body, which is
// either one JSON object or a server-sent event stream whose data fields hold
// JSON-RPC messages.
func parseReplies(contentType string, body []byte) []json.RawMessage {
	if strings.HasPrefix(contentType, "text/event-stream") {
		var out []json.RawMessage
		var data []string
		flush := func() {
			if len(data) > 0 {
				out = append(out, json.RawMessage(strings.Join(data, "\n")))
				data = nil
			}
		}
		sc := bufio.NewScanner(bytes.NewReader(body))
		sc.Buffer(make([]byte, 0, 64*1024), 16<<20)
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				flush()
			case strings.HasPrefix(line, "data:"):
				data = append(data, strings.TrimPrefix(strings.TrimPrefix(line, "data:"), " "))
			}
		}
		flush()
		return out
	}
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) == 0 {
		return nil
	}
	return []json.RawMessage{json.RawMessage(trimmed)}
}
