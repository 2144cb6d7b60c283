// Command load measures the scale-out deployment that redis/scaleout/run.sh
// starts (run.sh bench):
//
//   - with -url (nginx in front of one or three replicas): the throughput
//     of tools/call (whoami, one request) and of two-round MRTR calls
//     (confirm: the first round seals a state, the second opens it), from
//     -c workers, each with its own keep-alive connection and one request
//     in flight, for -seconds each;
//   - with -redis-paths and -replicas (the replicas called directly, one
//     request at a time): the latency the Redis paths add: the second
//     round of confirm_once (OnceOnly: one SET NX PX before the handler)
//     beside the same round of confirm, and a list change's delivery to a
//     listener on another replica (through Redis PUBLISH) beside its
//     delivery to a listener on the replica that made it.
//
// Every answer is checked; any failure makes it exit 1.
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

func main() {
	url := flag.String("url", "", "endpoint to load (nginx)")
	seconds := flag.Float64("seconds", 5, "seconds per measurement")
	workers := flag.Int("c", 8, "concurrent workers")
	label := flag.String("label", "", "label of the lines printed")
	redisPaths := flag.Bool("redis-paths", false, "measure the latency the Redis paths add, on -replicas")
	replicas := flag.String("replicas", "", "NAME=host:port,... (for -redis-paths)")
	flag.Parse()
	d := time.Duration(*seconds * float64(time.Second))
	var err error
	switch {
	case *redisPaths:
		err = measureRedisPaths(*replicas, d)
	case *url != "":
		err = measureThroughput(*url, *label, *workers, d)
	default:
		err = fmt.Errorf("give -url or -redis-paths")
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "load:", err)
		os.Exit(1)
	}
}

var client = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64, MaxConnsPerHost: 64, DisableCompression: true}, Timeout: 30 * time.Second}

const version = "2026-07-28"

func body(tool string, args any, state string, responses any) []byte {
	p := map[string]any{"name": tool, "arguments": args, "_meta": map[string]any{
		"io.modelcontextprotocol/protocolVersion":    version,
		"io.modelcontextprotocol/clientCapabilities": map[string]any{"elicitation": map[string]any{"form": map[string]any{}}},
	}}
	if state != "" {
		p["requestState"] = state
		p["inputResponses"] = responses
	}
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": p})
	return b
}

// result is what the load generator reads of a tools/call answer.
type result struct {
	Result struct {
		ResultType   string `json:"resultType"`
		RequestState string `json:"requestState"`
		Content      []struct {
			Text string `json:"text"`
		} `json:"content"`
	} `json:"result"`
	Error *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func call(url, tool string, b []byte) (result, error) {
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(b))
	if err != nil {
		return result{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", version)
	req.Header.Set("Mcp-Method", "tools/call")
	req.Header.Set("Mcp-Name", tool)
	resp, err := client.Do(req)
	if err != nil {
		return result{}, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return result{}, err
	}
	var r result
	if err := json.Unmarshal(raw, &r); err != nil {
		return result{}, fmt.Errorf("HTTP %d %q: %v", resp.StatusCode, raw, err)
	}
	if r.Error != nil {
		return r, fmt.Errorf("%s: error %d %s", tool, r.Error.Code, r.Error.Message)
	}
	return r, nil
}

var yes = map[string]any{"ok": map[string]any{"action": "accept", "content": map[string]any{"yes": true}}}

// twoRounds runs one confirm (or confirm_once) call: the first round, then
// the second with its state. It returns the second round's latency.
func twoRounds(url, tool string) (time.Duration, error) {
	r, err := call(url, tool, body(tool, map[string]any{}, "", nil))
	if err != nil {
		return 0, err
	}
	if r.Result.ResultType != "input_required" || r.Result.RequestState == "" {
		return 0, fmt.Errorf("%s first round: %+v", tool, r.Result)
	}
	b := body(tool, map[string]any{}, r.Result.RequestState, yes)
	t0 := time.Now()
	r, err = call(url, tool, b)
	lat := time.Since(t0)
	if err != nil {
		return 0, err
	}
	if len(r.Result.Content) == 0 || !strings.HasPrefix(r.Result.Content[0].Text, "confirmed on ") {
		return 0, fmt.Errorf("%s second round: %+v", tool, r.Result)
	}
	return lat, nil
}

// run calls op from workers goroutines for d and returns the operations
// done per second.
func run(workers int, d time.Duration, op func() error) (float64, error) {
	var (
		n       atomic.Int64
		errOnce sync.Once
		first   error
		wg      sync.WaitGroup
	)
	deadline := time.Now().Add(d)
	start := time.Now()
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(deadline) {
				if err := op(); err != nil {
					errOnce.Do(func() { first = err })
					return
				}
				n.Add(1)
			}
		}()
	}
	wg.Wait()
	return float64(n.Load()) / time.Since(start).Seconds(), first
}

func measureThroughput(url, label string, workers int, d time.Duration) error {
	whoami := body("whoami", map[string]any{}, "", nil)
	op := func() error {
		r, err := call(url, "whoami", whoami)
		if err == nil && (len(r.Result.Content) == 0 || !strings.HasPrefix(r.Result.Content[0].Text, "replica=")) {
			err = fmt.Errorf("whoami: %+v", r.Result)
		}
		return err
	}
	// Warm up connections and code paths.
	if _, err := run(workers, d/5, op); err != nil {
		return err
	}
	rate, err := run(workers, d, op)
	if err != nil {
		return err
	}
	fmt.Printf("%s: tools/call (whoami): %.0f calls/s (%d workers, %s)\n", label, rate, workers, d)
	rate, err = run(workers, d, func() error { _, err := twoRounds(url, "confirm"); return err })
	if err != nil {
		return err
	}
	fmt.Printf("%s: MRTR two-round calls (confirm): %.0f calls/s = %.0f rounds/s (%d workers, %s)\n", label, rate, 2*rate, workers, d)
	return nil
}

func median(ds []time.Duration) time.Duration {
	slices.Sort(ds)
	return ds[len(ds)/2]
}

func p90(ds []time.Duration) time.Duration {
	slices.Sort(ds)
	return ds[len(ds)*9/10]
}

func measureRedisPaths(spec string, d time.Duration) error {
	urls := map[string]string{}
	var names []string
	for _, kv := range strings.Split(spec, ",") {
		if k, v, ok := strings.Cut(kv, "="); ok {
			urls[k] = "http://" + v + "/mcp"
			names = append(names, k)
		}
	}
	if len(names) < 2 {
		return fmt.Errorf("-replicas needs two replicas at least")
	}
	a, b := urls[names[0]], urls[names[1]]

	// OnceOnly: the second round with and without the claim, alternated
	// so that drifts touch both alike.
	var plain, once []time.Duration
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) || len(plain) < 200 {
		l, err := twoRounds(a, "confirm")
		if err != nil {
			return err
		}
		plain = append(plain, l)
		if l, err = twoRounds(a, "confirm_once"); err != nil {
			return err
		}
		once = append(once, l)
	}
	mp, mo := median(plain), median(once)
	fmt.Printf("OnceOnly claim: second round %v median (p90 %v) with confirm_once, %v (p90 %v) with confirm: %v added (%d calls each, one replica, sequential)\n",
		mo.Round(time.Microsecond), p90(once).Round(time.Microsecond), mp.Round(time.Microsecond), p90(plain).Round(time.Microsecond), (mo - mp).Round(time.Microsecond), len(once))

	// publish → deliver: a list change made on A, seen by a listener on A
	// (in process) and one on B (through Redis).
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	la, err := listen(ctx, a)
	if err != nil {
		return err
	}
	lb, err := listen(ctx, b)
	if err != nil {
		return err
	}
	var local, remote, extra []time.Duration
	deadline = time.Now().Add(d)
	for i := 0; time.Now().Before(deadline) || i < 200; i++ {
		t0 := time.Now()
		if _, err := call(a, "change_list", body("change_list", map[string]any{"name": fmt.Sprintf("bench%d", i)}, "", nil)); err != nil {
			return err
		}
		ta, err := waitNote(la)
		if err != nil {
			return fmt.Errorf("local listener: %w", err)
		}
		tb, err := waitNote(lb)
		if err != nil {
			return fmt.Errorf("remote listener: %w", err)
		}
		local = append(local, ta.Sub(t0))
		remote = append(remote, tb.Sub(t0))
		extra = append(extra, tb.Sub(ta))
	}
	fmt.Printf("list change → listener: %v median on the replica that made it, %v median on another replica (through Redis); the other replica's listener is told %v (median, p90 %v) later (%d changes)\n",
		median(local).Round(time.Microsecond), median(remote).Round(time.Microsecond), median(extra).Round(time.Microsecond), p90(extra).Round(time.Microsecond), len(extra))

	// A 2025-11-25 bridged call on A: its answer POSTed to A itself, or to
	// B, which passes it to A through Redis.
	sid, err := legacyInit(a)
	if err != nil {
		return err
	}
	var same, other []time.Duration
	deadline = time.Now().Add(d)
	for i := 0; time.Now().Before(deadline) || i < 200; i++ {
		l, err := bridgedAnswer(a, a, sid, i)
		if err != nil {
			return fmt.Errorf("answer to the call's replica: %w", err)
		}
		same = append(same, l)
		if l, err = bridgedAnswer(a, b, sid, i); err != nil {
			return fmt.Errorf("answer to another replica: %w", err)
		}
		other = append(other, l)
	}
	ms, mo := median(same), median(other)
	fmt.Printf("2025-11-25 answer → call's response: %v median (p90 %v) when the answer reaches the call's replica, %v (p90 %v) when it lands on another (through Redis): %v added (%d calls each)\n",
		ms.Round(time.Microsecond), p90(same).Round(time.Microsecond), mo.Round(time.Microsecond), p90(other).Round(time.Microsecond), (mo - ms).Round(time.Microsecond), len(same))
	return nil
}

func legacyPost(ctx context.Context, url, sid string, msg any) (*http.Response, error) {
	b, _ := json.Marshal(msg)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	if sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
	}
	return client.Do(req)
}

// legacyInit opens a 2025-11-25 session at url.
func legacyInit(url string) (string, error) {
	resp, err := legacyPost(context.Background(), url, "", map[string]any{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": map[string]any{
		"protocolVersion": "2025-11-25", "capabilities": map[string]any{"elicitation": map[string]any{"form": map[string]any{}}},
		"clientInfo": map[string]any{"name": "scaleout-load", "version": "1"},
	}})
	if err != nil {
		return "", err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	sid := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || sid == "" {
		return "", fmt.Errorf("initialize: HTTP %d", resp.StatusCode)
	}
	resp, err = legacyPost(context.Background(), url, sid, map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"})
	if err != nil {
		return "", err
	}
	resp.Body.Close()
	return sid, nil
}

// bridgedAnswer runs confirm as a bridged call at holder, POSTs the answer
// to its question at answerURL, and returns the time from that POST to
// the call's response.
func bridgedAnswer(holder, answerURL, sid string, n int) (time.Duration, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	resp, err := legacyPost(ctx, holder, sid, map[string]any{"jsonrpc": "2.0", "id": 100 + n, "method": "tools/call", "params": map[string]any{"name": "confirm", "arguments": map[string]any{}}})
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	var t0 time.Time
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Result *struct {
				Content []struct {
					Text string `json:"text"`
				} `json:"content"`
			} `json:"result"`
		}
		if err := json.Unmarshal([]byte(data), &m); err != nil {
			return 0, err
		}
		switch {
		case m.Method == "elicitation/create":
			t0 = time.Now()
			a, err := legacyPost(ctx, answerURL, sid, map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": map[string]any{"action": "accept", "content": map[string]any{"yes": true}}})
			if err != nil {
				return 0, err
			}
			a.Body.Close()
			if a.StatusCode != http.StatusAccepted {
				return 0, fmt.Errorf("answer: HTTP %d", a.StatusCode)
			}
		case m.Method == "" && m.Result != nil:
			if t0.IsZero() || len(m.Result.Content) == 0 || !strings.HasPrefix(m.Result.Content[0].Text, "confirmed on ") {
				return 0, fmt.Errorf("bridged confirm: %s", data)
			}
			return time.Since(t0), nil
		}
	}
	return 0, fmt.Errorf("bridged confirm: the stream ended without a result (%v)", sc.Err())
}

// listen opens a subscriptions/listen stream at url and returns a channel
// that gets the arrival time of each list_changed notification.
func listen(ctx context.Context, url string) (<-chan time.Time, error) {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": "l", "method": "subscriptions/listen", "params": map[string]any{
		"notifications": map[string]any{"toolsListChanged": true},
		"_meta":         map[string]any{"io.modelcontextprotocol/protocolVersion": version, "io.modelcontextprotocol/clientCapabilities": map[string]any{}},
	}})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", version)
	req.Header.Set("Mcp-Method", "subscriptions/listen")
	resp, err := (&http.Client{}).Do(req)
	if err != nil {
		return nil, err
	}
	out := make(chan time.Time, 1024)
	acked := make(chan struct{})
	go func() {
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.Contains(line, "notifications/subscriptions/acknowledged"):
				close(acked)
			case strings.HasPrefix(line, "data:") && strings.Contains(line, "notifications/tools/list_changed"):
				out <- time.Now()
			}
		}
	}()
	select {
	case <-acked:
		return out, nil
	case <-time.After(5 * time.Second):
		return nil, fmt.Errorf("listen at %s: no acknowledgement", url)
	}
}

func waitNote(c <-chan time.Time) (time.Time, error) {
	select {
	case t := <-c:
		return t, nil
	case <-time.After(5 * time.Second):
		return time.Time{}, fmt.Errorf("no list_changed within 5 s")
	}
}
