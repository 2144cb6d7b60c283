package streamablehttp

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mrtrkit/mrtrkit/mrtr"
)

func TestAppendEvent(t *testing.T) {
	tests := []struct{ data, want string }{
		{`{"a":1}`, "event: message\ndata: {\"a\":1}\n\n"},
		{"a\nb", "event: message\ndata: a\ndata: b\n\n"},
		{"a\r\nb\rc", "event: message\ndata: a\ndata: b\ndata: c\n\n"},
		{"a\n", "event: message\ndata: a\ndata: \n\n"},
		{"", "event: message\ndata: \n\n"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, string(appendEvent(nil, []byte(tt.data))), "%q", tt.data)
	}
}

func TestEncodeResponseFallsBackToInternalError(t *testing.T) {
	resp := &mrtr.Response{ID: testID(t, "3"), Error: mrtr.NewError(mrtr.CodeInvalidParams, "x", make(chan int))}
	b := encodeResponse(resp, nil, quiet)
	assert.JSONEq(t, `{"jsonrpc":"2.0","id":3,"error":{"code":-32603,"message":"Internal error"}}`, string(b))
	assert.Equal(t, http.StatusOK, statusOf(resp.Error), "the fallback is an in-band error")
}

// plainWriter hides every optional interface of the ResponseWriter it
// wraps, as some middleware does.
type plainWriter struct{ w http.ResponseWriter }

func (p plainWriter) Header() http.Header         { return p.w.Header() }
func (p plainWriter) Write(b []byte) (int, error) { return p.w.Write(b) }
func (p plainWriter) WriteHeader(s int)           { p.w.WriteHeader(s) }

func TestStreamWithoutFlusher(t *testing.T) {
	rec := httptest.NewRecorder()
	s := &stream{w: plainWriter{rec}, ctx: context.Background(), log: quiet}
	require.NoError(t, s.emit([]byte(`{"jsonrpc":"2.0","method":"notifications/progress","params":{}}`)))
	s.finish(&mrtr.Response{ID: testID(t, "1"), Result: []byte(`{}`)})
	assert.Equal(t, "text/event-stream", rec.Header().Get("Content-Type"))
	events, _ := readSSE(t, rec.Body.Bytes())
	require.Len(t, events, 2)
	assert.JSONEq(t, `{"jsonrpc":"2.0","id":1,"result":{}}`, events[1].data)
	assert.ErrorIs(t, s.emit([]byte(`{}`)), errAnswered)
}

func TestEmitAfterCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	s := &stream{w: httptest.NewRecorder(), ctx: ctx, log: quiet}
	assert.ErrorIs(t, s.emit([]byte(`{}`)), errClientGone)
}

// testID returns the request id whose JSON text is raw, as a transport
// gets it from mrtr.ParseMessage.
func testID(t testing.TB, raw string) mrtr.ID {
	t.Helper()
	msg, id, err := mrtr.ParseMessage([]byte(`{"jsonrpc":"2.0","id":` + raw + `,"method":"ping"}`))
	require.Nil(t, err)
	require.Equal(t, raw, msg.ID.String())
	return id
}
