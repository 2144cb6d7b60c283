//go:build unix

package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mrtrkit/mrtrkit/client"
)

// This file holds the connection holders (-hold): clients that each open
// a connection, send one request (a subscriptions/listen by default) and
// then keep the connection open whatever the answer, as 19,000 clients
// refused past the listener caps did to the fixture's memory before the
// server closed refused connections and capped how many it holds.

// holdMethods are the requests a holder can send (-hold-method).
var holdMethods = map[string]struct {
	method string
	params []client.RawMember
}{
	"listen":     {"subscriptions/listen", listenParams},
	"tools/list": {"tools/list", nil},
}

// holders open connections, send one request on each and hold them.
type holders struct {
	// answers counts the answers by HTTP status ("200 stream" for an
	// accepted event stream), and the failures before one.
	answers *counter
	// ends counts how held connections ended: "closed by the server
	// after <bucket>" (timed from the answer), "open at end".
	ends     *counter
	opened   atomic.Int64 // connections opened
	open     atomic.Int64 // connections open now
	maxOpen  atomic.Int64
	streams  atomic.Int64 // accepted event streams open now
	closedBy atomic.Int64 // connections the server closed

	mu    sync.Mutex
	conns map[net.Conn]struct{}
}

func newHolders() *holders {
	return &holders{answers: newCounter(), ends: newCounter(), conns: map[net.Conn]struct{}{}}
}

// holdSources returns the local addresses holders bind, spread over
// 127.0.0.first to 127.0.0.(first+n-1), or an error when the target is
// not a loopback address: holders only ever connect to loopback.
func holdSources(u string, first, n int) ([]net.IP, error) {
	pu, err := url.Parse(u)
	if err != nil {
		return nil, err
	}
	ip := net.ParseIP(pu.Hostname())
	if ip == nil || !ip.IsLoopback() {
		return nil, fmt.Errorf("-hold targets loopback addresses only, not %q", pu.Hostname())
	}
	if ip.To4() == nil || n <= 0 {
		return []net.IP{nil}, nil
	}
	if first < 1 || first+n-1 > 254 {
		return nil, fmt.Errorf("-hold-from %d and -hold-addrs %d leave 127.0.0.1-254", first, n)
	}
	out := make([]net.IP, n)
	for i := range out {
		out[i] = net.IPv4(127, 0, 0, byte(first+i))
	}
	return out, nil
}

// run opens n held connections from conc workers (each from the next of
// from, round robin; nil: the system's choice), at most rate a second
// when rate > 0, and holds them until ctx ends. With again > 0 a holder
// whose connection the server closed opens a new one after again
// (steady load for the soak). opened, when not nil, is called once n
// connections have been opened and answered (or ctx ended).
func (h *holders) run(ctx context.Context, u, kind string, n, conc int, rate float64, from []net.IP, again time.Duration, opened func()) {
	pu, _ := url.Parse(u)
	m := holdMethods[kind]
	body := requestBody(1, m.method, "{}", m.params...)
	req := rawRequest(pu.Host, pu.Path, m.method, "", body, len(body))
	go func() {
		<-ctx.Done()
		h.mu.Lock()
		for c := range h.conns {
			_ = c.Close()
		}
		h.mu.Unlock()
	}()
	var workers, held sync.WaitGroup
	var next atomic.Int64
	start := time.Now()
	for range conc {
		workers.Go(func() {
			for ctx.Err() == nil {
				i := next.Add(1)
				if i > int64(n) {
					return
				}
				if rate > 0 {
					at := start.Add(time.Duration(float64(i-1) / rate * float64(time.Second)))
					if d := time.Until(at); d > 0 {
						select {
						case <-ctx.Done():
							return
						case <-time.After(d):
						}
					}
				}
				src := from[int(i)%len(from)]
				conn, br, ok := h.open1(ctx, pu.Host, src, req)
				if !ok {
					if again > 0 {
						held.Go(func() { h.loop(ctx, pu.Host, src, req, again, nil, nil) })
					}
					continue
				}
				held.Go(func() { h.loop(ctx, pu.Host, src, req, again, conn, br) })
			}
		})
	}
	workers.Wait()
	if opened != nil {
		opened()
	}
	held.Wait()
}

// loop holds conn (when not nil) until it ends, then, with again > 0,
// opens and holds new connections until ctx ends.
func (h *holders) loop(ctx context.Context, host string, src net.IP, req []byte, again time.Duration, conn net.Conn, br *bufio.Reader) {
	for {
		if conn != nil {
			h.hold(ctx, conn, br)
		}
		if again <= 0 {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(again):
		}
		var ok bool
		if conn, br, ok = h.open1(ctx, host, src, req); !ok {
			conn = nil
		}
	}
}

// open1 connects from src, sends req and reads the answer's head (and a
// refusal's body); the connection is left open.
func (h *holders) open1(ctx context.Context, host string, src net.IP, req []byte) (net.Conn, *bufio.Reader, bool) {
	d := net.Dialer{Timeout: 10 * time.Second}
	if src != nil {
		d.LocalAddr = &net.TCPAddr{IP: src}
	}
	conn, err := d.DialContext(ctx, "tcp", host)
	if err != nil {
		if ctx.Err() == nil {
			h.answers.add("dial error", err.Error())
		}
		return nil, nil, false
	}
	h.mu.Lock()
	if ctx.Err() != nil {
		h.mu.Unlock()
		conn.Close()
		return nil, nil, false
	}
	h.conns[conn] = struct{}{}
	h.mu.Unlock()
	h.opened.Add(1)
	open := h.open.Add(1)
	for {
		m := h.maxOpen.Load()
		if open <= m || h.maxOpen.CompareAndSwap(m, open) {
			break
		}
	}
	fail := func(label string, err error) (net.Conn, *bufio.Reader, bool) {
		if ctx.Err() == nil {
			h.answers.add(label, err.Error())
			if label == "closed before an answer" {
				h.closedBy.Add(1)
			}
		}
		h.forget(conn)
		return nil, nil, false
	}
	_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
	if _, err := conn.Write(req); err != nil {
		return fail("write error", err)
	}
	br := bufio.NewReaderSize(conn, 1024)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		if errKind(err) == "EOF" || errKind(err) == "reset" {
			return fail("closed before an answer", err)
		}
		return fail("no answer", err)
	}
	stream := resp.StatusCode == http.StatusOK && strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream")
	if stream {
		h.answers.add("200 stream", "")
		h.streams.Add(1)
	} else {
		b, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		if err != nil {
			return fail("body error", err)
		}
		h.answers.add(fmt.Sprint(resp.StatusCode), string(b))
	}
	_ = conn.SetDeadline(time.Time{})
	if stream {
		// The rest of the stream is read by hold; mark it.
		return conn, nil, true
	}
	return conn, br, true
}

// hold keeps conn until the server closes it or ctx ends, reading (and
// dropping) whatever arrives; br is nil for an event stream.
func (h *holders) hold(ctx context.Context, conn net.Conn, br *bufio.Reader) {
	start := time.Now()
	if br == nil {
		defer h.streams.Add(-1)
	}
	var r io.Reader = conn
	if br != nil {
		r = br
	}
	buf := make([]byte, 512)
	var err error
	for err == nil {
		_, err = r.Read(buf)
	}
	if ctx.Err() != nil {
		h.ends.add("open at end", "")
	} else {
		h.closedBy.Add(1)
		h.ends.add("closed by the server after "+bucket(time.Since(start)), "")
	}
	h.forget(conn)
}

// forget closes conn and stops counting it.
func (h *holders) forget(conn net.Conn) {
	h.mu.Lock()
	delete(h.conns, conn)
	h.mu.Unlock()
	_ = conn.Close()
	h.open.Add(-1)
}
