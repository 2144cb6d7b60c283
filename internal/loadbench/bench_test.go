package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
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
// scenario, checked once, as prepare does over HTTP.
func benchRequest(tb testing.TB, sc scenario) (http.Handler, http.Header, []byte) {
	tb.Helper()
	h, err := newHandler(sc.name)
	if err != nil {
		tb.Fatal(err)
	}
	hdr := callHeader(sc.tool)
	body := callBody(sc.tool, sc.caps, "", "")
	if sc.retry {
		status, out := serveOnce(h, hdr, body)
		var first struct {
			Result struct {
				RequestState string `json:"requestState"`
			} `json:"result"`
		}
		if status != http.StatusOK || json.Unmarshal(out, &first) != nil || first.Result.RequestState == "" {
			tb.Fatalf("first round: status %d: %s", status, out)
		}
		body = callBody(sc.tool, sc.caps, first.Result.RequestState, nameAnswer)
	}
	if status, out := serveOnce(h, hdr, body); status != http.StatusOK || !bytes.Contains(out, []byte(sc.want)) {
		tb.Fatalf("probe: status %d, want %s: %s", status, sc.want, out)
	}
	return h, hdr, body
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
				if w.status != http.StatusOK {
					b.Fatalf("status %d", w.status)
				}
			}
		})
	}
}
