package streamablehttp

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestAcceptsResponses(t *testing.T) {
	tests := []struct {
		accept string // lines separated by |
		want   bool
	}{
		{"application/json, text/event-stream", true},
		{"text/event-stream, application/json", true},
		{"application/json,text/event-stream", true},
		{"Application/JSON, Text/Event-Stream", true},
		{"*/*", true},
		{"application/*, text/*", true},
		{"application/json;q=0.5, text/event-stream;q=0.001", true},
		{"application/json; charset=utf-8, text/event-stream", true},
		{"application/json|text/event-stream", true},
		{`application/json;foo="a,b", text/event-stream`, true},
		{"*/*;q=0.1, application/json;q=1", true},
		{"text/html, */*;q=0.8", true},
		{"", false},
		{"application/json", false},
		{"text/event-stream", false},
		{"application/*", false},
		{"text/*", false},
		{"application/json, text/event-stream;q=0", false},
		{"application/json;q=0.0, text/event-stream", false},
		{"*/*, text/event-stream;q=0", false},
		{"*/*;q=0", false},
		{"text/*;q=0, text/event-stream, application/json", true},
		{"text/*;q=0, text/event-stream", false},
		{"application/json, text/event-stream;q=2", false},
		{"application/json, text/event-stream;q=1.5", false},
		{"application/json, text/event-stream;q=abc", false},
		{"application/json, text/event-stream;q=0.0001", false},
		{"application/json, */json, text/event-stream", true},
		{"application, text/event-stream", false},
		{"application/json, text/event-stream;q=1.000", true},
		{"application/json;q=0, application/json, text/event-stream", true},
	}
	for _, tt := range tests {
		t.Run(tt.accept, func(t *testing.T) {
			var lines []string
			if tt.accept != "" {
				lines = strings.Split(tt.accept, "|")
			}
			assert.Equal(t, tt.want, acceptsResponses(lines))
		})
	}
}

func TestIsJSONContentType(t *testing.T) {
	tests := []struct {
		v    string
		want bool
	}{
		{"application/json", true},
		{"Application/Json", true},
		{"application/json; charset=utf-8", true},
		{"application/json;charset=\"UTF-8\"", true},
		{" application/json ", true},
		{"application/json; foo=bar", true},
		{"application/json; charset=latin1", false},
		{"application/jsonx", false},
		{"application/json-rpc", false},
		{"text/json", false},
		{"text/plain", false},
		{"", false},
	}
	for _, tt := range tests {
		t.Run(tt.v, func(t *testing.T) {
			assert.Equal(t, tt.want, isJSONContentType(tt.v))
		})
	}
}

func TestParseQ(t *testing.T) {
	tests := []struct {
		s    string
		q    int
		okay bool
	}{
		{"1", 1000, true}, {"1.", 1000, true}, {"1.000", 1000, true}, {"0", 0, true},
		{"0.5", 500, true}, {"0.125", 125, true}, {"0.001", 1, true},
		{"1.001", 0, false}, {"2", 0, false}, {"0.0000", 0, false}, {".5", 0, false}, {"", 0, false}, {"0,5", 0, false},
	}
	for _, tt := range tests {
		q, ok := parseQ(tt.s)
		assert.Equal(t, tt.okay, ok, tt.s)
		if ok {
			assert.Equal(t, tt.q, q, tt.s)
		}
	}
}
