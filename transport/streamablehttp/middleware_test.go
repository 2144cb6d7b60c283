package streamablehttp

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// holdingWriter is a middleware's writer that holds the answer back to
// rewrite it: it flushes nothing itself, yet lets
// http.ResponseController reach the connection beneath it.
type holdingWriter struct {
	w      http.ResponseWriter
	status int
	body   bytes.Buffer
}

func (h *holdingWriter) Header() http.Header         { return h.w.Header() }
func (h *holdingWriter) WriteHeader(code int)        { h.status = code }
func (h *holdingWriter) Write(b []byte) (int, error) { return h.body.Write(b) }
func (h *holdingWriter) Flush()                      {}
func (h *holdingWriter) Unwrap() http.ResponseWriter { return h.w }

// A middleware that holds the answer back decides its status: the
// Handler's end-of-request flush goes through the middleware, never
// around it to the connection.
func TestHoldingMiddlewareDecidesTheAnswer(t *testing.T) {
	f := newFixture(t)
	inner, err := New(f.srv, WithLogger(quiet))
	require.NoError(t, err)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hw := &holdingWriter{w: w}
		inner.ServeHTTP(hw, r)
		w.Header().Set("X-Rewritten", "yes")
		w.WriteHeader(http.StatusNonAuthoritativeInfo)
		_, _ = w.Write(hw.body.Bytes())
	}))
	t.Cleanup(ts.Close)
	c := toolCall(1, "echo", `{"text":"p"}`)
	req, err := c.request(t.Context(), ts.URL)
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	assert.Equal(t, http.StatusNonAuthoritativeInfo, resp.StatusCode)
	assert.Equal(t, "yes", resp.Header.Get("X-Rewritten"))
}
