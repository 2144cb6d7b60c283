package main

// The timed loop checks with a plain if and calls testify only when the
// check fails: require calls b.Helper, which walks the stack, and boxes its
// arguments, on every call, which would count in ns/op and allocs/op.

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// recordWriter is a ResponseWriter that keeps the status and, when asked,
// the body.
type recordWriter struct {
	h      http.Header
	status int
	keep   bool
	body   bytes.Buffer
}

func (w *recordWriter) Header() http.Header { return w.h }
func (w *recordWriter) WriteHeader(s int) {
	if w.status == 0 {
		w.status = s
	}
}
func (w *recordWriter) Write(p []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	if w.keep {
		w.body.Write(p)
	}
	return len(p), nil
}

// serveOnce sends body to h and returns the status and the answer.
func serveOnce(h http.Handler, hdr http.Header, body []byte) (int, []byte) {
	req := httptest.NewRequest(http.MethodPost, "http://127.0.0.1/mcp", bytes.NewReader(body))
	req.Header = hdr.Clone()
	w := &recordWriter{h: http.Header{}, keep: true}
	h.ServeHTTP(w, req)
	return w.status, w.body.Bytes()
}

// benchRequest returns the handler and the measured request body of a
// scenario, prepared and checked as the load generator does (prepare),
// over loopback HTTP.
func benchRequest(tb testing.TB, sc scenario) (http.Handler, http.Header, []byte) {
	tb.Helper()
	h, err := newHandler(sc.name)
	require.NoError(tb, err)
	srv := httptest.NewServer(h)
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	t, err := prepare(ctx, srv.Client(), srv.URL+"/mcp", sc)
	require.NoError(tb, err)
	status, out := serveOnce(h, t.header, t.body)
	require.Equal(tb, http.StatusOK, status, "in process: %s", out)
	require.Truef(tb, bytes.Contains(out, t.want), "in process: want %s: %s", sc.want, out)
	return h, t.header, t.body
}

// TestScenarios checks that every scenario's request gets the answer the
// load generator expects.
func TestScenarios(t *testing.T) {
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) { benchRequest(t, sc) })
	}
}

// BenchmarkServeHTTP is each scenario's handler alone, in process: no
// network, no client, no net/http server. Its difference from the load
// generator's server CPU per request is what net/http and the kernel cost.
func BenchmarkServeHTTP(b *testing.B) {
	for _, sc := range scenarios {
		b.Run(sc.name, func(b *testing.B) {
			h, hdr, body := benchRequest(b, sc)
			rd := bytes.NewReader(body)
			req := httptest.NewRequest(http.MethodPost, "http://127.0.0.1/mcp", nil)
			req.Header = hdr
			w := &recordWriter{h: http.Header{}}
			b.ReportAllocs()
			for b.Loop() {
				rd.Reset(body)
				req.Body = io.NopCloser(rd)
				req.ContentLength = int64(len(body))
				clear(w.h)
				w.status = 0
				h.ServeHTTP(w, req)
				if w.status != http.StatusOK { // testify only on failure: see the note at the top
					require.Equal(b, http.StatusOK, w.status)
				}
			}
		})
	}
}
