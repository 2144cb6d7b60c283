// Package stream reads the JSON-RPC messages of a Streamable HTTP
// response, for tests that talk to an MCP endpoint over HTTP (an
// httptest.Server, or replicas behind a proxy) and look at each message
// the server sent: the one JSON body, or every event of a
// text/event-stream body. It imports nothing but the standard library.
package stream

import (
	"bufio"
	"bytes"
	"io"
	"net/http"
	"strings"
)

// Each calls fn with every message of resp, in order: its JSON body (none
// when the body is empty), or the data of each event of its
// text/event-stream body (comments and events without data are passed
// over). It returns nil when the body ends, fn's first error, or the
// error that ended the read. It does not close the body.
func Each(resp *http.Response, fn func(msg []byte) error) error {
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			return err
		}
		if len(bytes.TrimSpace(b)) == 0 {
			return nil
		}
		return fn(b)
	}
	br := bufio.NewReader(resp.Body)
	var data []string
	for {
		line, err := br.ReadString('\n')
		line = strings.TrimRight(line, "\r\n")
		switch {
		case line == "" && err == nil:
			if len(data) > 0 {
				if ferr := fn([]byte(strings.Join(data, "\n"))); ferr != nil {
					return ferr
				}
				data = data[:0]
			}
		case strings.HasPrefix(line, "data:"):
			data = append(data, strings.TrimPrefix(strings.TrimPrefix(line, "data:"), " "))
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}
