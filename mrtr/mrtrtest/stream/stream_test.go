package stream

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func response(contentType, body string) *http.Response {
	return &http.Response{Header: http.Header{"Content-Type": {contentType}}, Body: io.NopCloser(strings.NewReader(body))}
}

func collect(t *testing.T, resp *http.Response) []string {
	t.Helper()
	var got []string
	require.NoError(t, Each(resp, func(m []byte) error { got = append(got, string(m)); return nil }))
	return got
}

func TestEach(t *testing.T) {
	tests := []struct {
		name, contentType, body string
		want                    []string
	}{
		{"json", "application/json", `{"id":1}`, []string{`{"id":1}`}},
		{"empty", "application/json", " \n", nil},
		{"events", "text/event-stream", ": open\n\nid: 1\ndata: {\"a\":1}\n\nevent: message\r\ndata:{\"b\":\r\ndata: 2}\r\n\r\n", []string{`{"a":1}`, "{\"b\":\n2}"}},
		{"unterminated last event", "text/event-stream", "data: {\"a\":1}\n\ndata: {\"cut\"", []string{`{"a":1}`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := collect(t, response(tt.contentType, tt.body))
			require.Falsef(t, strings.Join(got, "|") != strings.Join(tt.want, "|") || len(got) != len(tt.want), "got %q, want %q", got, tt.want)
		})
	}
	stop := errors.New("stop")
	err := Each(response("text/event-stream", "data: 1\n\ndata: 2\n\n"), func([]byte) error { return stop })
	require.ErrorIsf(t, err, stop, "fn's error not returned: %v", err)
}
