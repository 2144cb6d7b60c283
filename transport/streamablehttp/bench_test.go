package streamablehttp

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"
)

// benchClient keeps connections to the loopback server open between calls.
var benchClient = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16}}

// benchCall sends c repeatedly over loopback HTTP and checks every status.
// An in-band error is 200 too, so the first answer is checked to be a
// result: the benchmark measures the call, not a refusal.
func benchCall(b *testing.B, f *fixture, c call) {
	requireResult(b, f, c)
	body := []byte(c.body)
	hdr := http.Header{}
	for _, h := range c.headers {
		hdr[h[0]] = append(hdr[h[0]], h[1])
	}
	url := f.url + "/mcp"
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		req.Header = hdr
		resp, err := benchClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			b.Fatalf("status %d", resp.StatusCode)
		}
	}
}

// requireResult sends c once and fails unless it is answered with a
// result.
func requireResult(b *testing.B, f *fixture, c call) {
	b.Helper()
	resp, body := f.do(b, c)
	require.Equal(b, http.StatusOK, resp.StatusCode, "%s", body)
	m := decodeRPC(b, body)
	require.Nil(b, m.Error, "%s", body)
	require.Contains(b, string(m.Result), `"resultType":"complete"`)
}

// BenchmarkHTTPToolsCall is one tools/call with small arguments over
// loopback HTTP, client and server included.
func BenchmarkHTTPToolsCall(b *testing.B) {
	f := newFixture(b)
	benchCall(b, f, toolCall(1, "echo", `{"text":"hello"}`))
}

// BenchmarkHTTPMRTRRound is the retry round of a multi-round call: the
// request carries a sealed AEAD requestState and an elicitation answer,
// and the tool completes.
func BenchmarkHTTPMRTRRound(b *testing.B) {
	f := newFixture(b)
	meta := `{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}`
	resp, body := f.do(b, toolCall(1, "confirm", `{"item":"x"}`).withMeta(meta))
	require.Equal(b, http.StatusOK, resp.StatusCode)
	var first struct {
		Result struct {
			RequestState string `json:"requestState"`
		} `json:"result"`
	}
	require.NoError(b, json.Unmarshal(body, &first))
	retry := mrtrRetry(2, meta, first.Result.RequestState, `{"item":"x"}`)
	_, body = f.do(b, retry)
	require.Contains(b, string(body), "confirmed=accept")
	benchCall(b, f, retry)
}

// BenchmarkHandlerToolsCall is the server side of BenchmarkHTTPToolsCall
// alone: the Handler and mrtr.Server, without a network or client.
func BenchmarkHandlerToolsCall(b *testing.B) {
	f := &fixture{}
	srv := newTestServer(b, f)
	h, err := New(srv, WithLogger(quiet))
	require.NoError(b, err)
	c := toolCall(1, "echo", `{"text":"hello"}`)
	body := []byte(c.body)
	hdr := http.Header{}
	for _, kv := range c.headers {
		hdr.Add(kv[0], kv[1])
	}
	rd := bytes.NewReader(body)
	req := httptest.NewRequest(http.MethodPost, "http://localhost/mcp", nil)
	req.Header = hdr
	// The first answer is checked to be the echo's result.
	rec := httptest.NewRecorder()
	req.Body, req.ContentLength = io.NopCloser(rd), int64(len(body))
	h.ServeHTTP(rec, req)
	require.Equal(b, http.StatusOK, rec.Code)
	require.Contains(b, rec.Body.String(), `"text":"hello"`)
	w := &discardWriter{h: http.Header{}}
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
}

// discardWriter is a ResponseWriter that keeps only the status.
type discardWriter struct {
	h      http.Header
	status int
}

func (w *discardWriter) Header() http.Header { return w.h }
func (w *discardWriter) WriteHeader(s int)   { w.status = s }
func (w *discardWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return len(p), nil
}
