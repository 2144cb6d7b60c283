package main

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// target is the one request a load phase sends over and over,
// pre-encoded. The load phases (drive here, and wrk) do not go through
// the client package's Client on purpose: they measure the server's CPU
// per request, and a client that builds _meta, encodes the params and
// decodes every answer would spend this process's CPU and change the
// bytes sent, so the figures would no longer compare with those measured
// before. The request itself is rendered once, before a phase, with the
// client's raw layer (callBody, callHeader). The traffic of an ordinary
// client, the first round of a retry scenario, goes through the client
// package (firstRound).
type target struct {
	url    string
	header http.Header
	body   []byte
	// want is a fragment every good response body contains.
	want []byte
}

// loadResult is what the client saw of one load phase.
type loadResult struct {
	requests int           // requests answered, good or not
	failures int           // answers that were not 200 with the wanted body, and transport errors
	firstErr error         // the first failure
	elapsed  time.Duration // wall time of the phase
	latency  []time.Duration
	// client is the CPU time this process spent during the phase.
	client time.Duration
}

// percentile returns the p-th percentile (0 < p <= 100) of the sorted
// latencies, by the nearest-rank method.
func (r *loadResult) percentile(p float64) time.Duration {
	if len(r.latency) == 0 {
		return 0
	}
	rank := int(p/100*float64(len(r.latency))+0.999999) - 1
	rank = max(0, min(rank, len(r.latency)-1))
	return r.latency[rank]
}

// newClient returns a keep-alive HTTP/1.1 client that keeps one
// connection per worker.
func newClient(workers int) *http.Client {
	tr := &http.Transport{
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        workers,
		MaxIdleConnsPerHost: workers,
		MaxConnsPerHost:     workers,
		IdleConnTimeout:     time.Minute,
		DisableCompression:  true,
	}
	return &http.Client{Transport: tr, Timeout: 30 * time.Second}
}

// drive sends t n times from c concurrent workers, each waiting for its
// answer before sending again, and stops early when limit has passed.
// Every answer is checked: status 200 and a body containing t.want.
func drive(ctx context.Context, client *http.Client, t target, n, c int, limit time.Duration) loadResult {
	var (
		next     atomic.Int64
		failures atomic.Int64
		errOnce  sync.Once
		firstErr error
		wg       sync.WaitGroup
	)
	lat := make([][]time.Duration, c)
	fail := func(err error) {
		failures.Add(1)
		errOnce.Do(func() { firstErr = err })
	}
	cpu0, _ := processCPU()
	start := time.Now()
	deadline := start.Add(limit)
	for w := range c {
		lat[w] = make([]time.Duration, 0, n/c+1)
		wg.Go(func() {
			hdr := t.header.Clone()
			var buf bytes.Buffer
			for next.Add(1) <= int64(n) && ctx.Err() == nil {
				t0 := time.Now()
				if t0.After(deadline) {
					return
				}
				req, err := http.NewRequestWithContext(ctx, http.MethodPost, t.url, bytes.NewReader(t.body))
				if err != nil {
					fail(err)
					return
				}
				req.Header = hdr
				resp, err := client.Do(req)
				if err != nil {
					fail(err)
					continue
				}
				buf.Reset()
				_, err = buf.ReadFrom(resp.Body)
				resp.Body.Close()
				lat[w] = append(lat[w], time.Since(t0))
				switch {
				case err != nil:
					fail(err)
				case resp.StatusCode != http.StatusOK:
					fail(fmt.Errorf("status %d: %.200s", resp.StatusCode, buf.Bytes()))
				case !bytes.Contains(buf.Bytes(), t.want):
					fail(fmt.Errorf("answer lacks %s: %.300s", t.want, buf.Bytes()))
				}
			}
		})
	}
	wg.Wait()
	r := loadResult{elapsed: time.Since(start), failures: int(failures.Load()), firstErr: firstErr}
	if cpu1, err := processCPU(); err == nil {
		r.client = cpu1.user + cpu1.sys - cpu0.user - cpu0.sys
	}
	for _, l := range lat {
		r.latency = append(r.latency, l...)
	}
	r.requests = len(r.latency)
	slices.Sort(r.latency)
	return r
}
