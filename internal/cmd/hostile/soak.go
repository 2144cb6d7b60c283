//go:build unix

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mrtrkit/mrtrkit/client"
	"github.com/mrtrkit/mrtrkit/mrtr"
)

// soakStats are the well-behaved side of a soak: every request counted
// once, by outcome and kind.
type soakStats struct {
	requests atomic.Int64
	outcomes *counter // "<kind> <outcome>"
	fivexx   atomic.Int64
	lost     atomic.Int64
	wrong    atomic.Int64
	refused  *counter // listen refusals of well-behaved listeners, by status
}

func (s *soakStats) record(kind string, o outcome, why string) {
	s.requests.Add(1)
	switch o {
	case status5xx:
		s.fivexx.Add(1)
	case lost:
		s.lost.Add(1)
	case wrong:
		s.wrong.Add(1)
	}
	s.outcomes.add(kind+" "+[]string{"ok", "5xx", "lost", "wrong"}[o], why)
}

// soak runs steady mixed load for o.duration and reports; the status is 1
// when a well-behaved request got a 5xx or no answer.
func soak(ctx context.Context, o *options, u string, srv *child, out io.Writer) (int, error) {
	runCtx, cancel := context.WithTimeout(ctx, o.duration)
	defer cancel()
	st := &soakStats{outcomes: newCounter(), refused: newCounter()}
	flood := &listenFlood{statuses: newCounter()}
	slow := &slowClients{events: newCounter()}
	nr := &nonReaders{events: newCounter()}
	hold := newHolders()
	var holdFrom []net.IP
	if o.hold > 0 {
		var err error
		if holdFrom, err = holdSources(u, o.holdFrom, o.holdAddrs); err != nil {
			return 1, err
		}
	}
	samp := &sampler{}
	var (
		gmu   sync.Mutex
		gAt   []time.Duration
		gSeen []int
	)
	var wg sync.WaitGroup
	c := newHTTPClient(o.soakGood, 30*time.Second)
	defer c.CloseIdleConnections()
	for w := range o.soakGood {
		wg.Go(func() { soakWorker(runCtx, c, u, w, st) })
	}
	wg.Go(func() { flood.run(runCtx, u, o.listens, o.listenConc, 500*time.Millisecond, 2*time.Second, nil) })
	wg.Go(func() { slow.run(runCtx, u, o.slow, o.slowLen, o.slowEvery, true) })
	wg.Go(func() { nr.run(runCtx, u, o.nonread, o.pipeline, o.big, 45*time.Second) })
	if o.hold > 0 {
		// Holders whose connection the server closes open another after
		// o.holdAgain: steady load of connections held after a refusal.
		wg.Go(func() { hold.run(runCtx, u, o.holdMethod, o.hold, o.holdConc, o.holdRate, holdFrom, o.holdAgain, nil) })
	}
	if srv != nil {
		wg.Go(func() {
			samp.run(runCtx, srv.cmd.Process.Pid, o.sample, func(at time.Duration, rss int64, fds int) {
				g := srv.goroutines()
				if g >= 0 {
					gmu.Lock()
					gAt, gSeen = append(gAt, at), append(gSeen, g)
					gmu.Unlock()
				}
				fmt.Fprintf(out, "  t=%-5v rss=%-10s fds=%-5d goroutines=%-5d good requests=%d 5xx=%d lost=%d wrong=%d listens held=%d slow open=%d nonread open=%d held conns open=%d\n",
					at, mib(rss), fds, g, st.requests.Load(), st.fivexx.Load(), st.lost.Load(), st.wrong.Load(), flood.held.Load(), slow.open.Load(), nr.open.Load(), hold.open.Load())
			})
		})
	}
	wg.Wait()

	fmt.Fprintf(out, "\nsoak of %v: well-behaved requests %d (%d workers); 5xx %d; lost answers %d; other wrong answers %d\n",
		o.duration, st.requests.Load(), o.soakGood, st.fivexx.Load(), st.lost.Load(), st.wrong.Load())
	fmt.Fprintf(out, "  by kind: %s\n", st.outcomes)
	for _, e := range st.outcomes.examples() {
		fmt.Fprintln(out, "  first", e)
	}
	fmt.Fprintf(out, "  well-behaved listens refused: %s\n", st.refused)
	fmt.Fprintf(out, "hostile share: listen attempts %d (answers %s); slow-body clients %d (events %s); non-readers %d (requests written %d, events %s)\n",
		flood.sent.Load(), flood.statuses, o.slow, slow.events, o.nonread, nr.written.Load(), nr.events)
	if o.hold > 0 {
		fmt.Fprintf(out, "held connections: %d holders (one %s each, reopened %v after the server closes it) over %d source addresses; opened %d (max open at once %d); answers: %s; closed by the server %d\n",
			o.hold, o.holdMethod, o.holdAgain, len(holdFrom), hold.opened.Load(), hold.maxOpen.Load(), hold.answers, hold.closedBy.Load())
	}
	if srv != nil {
		if cs := srv.connStats(); cs != "" {
			fmt.Fprintln(out, "server connection cap at the end:", cs)
		}
		samp.mu.Lock()
		var rss []int64
		var fds []int
		for i, at := range samp.at {
			if at >= o.warmup {
				rss, fds = append(rss, samp.rss[i]), append(fds, samp.fds[i])
			}
		}
		samp.mu.Unlock()
		if len(rss) > 0 {
			maxR, maxF := rss[0], fds[0]
			for i := range rss {
				maxR, maxF = max(maxR, rss[i]), max(maxF, fds[i])
			}
			fmt.Fprintf(out, "after %v warm-up (%d samples): RSS first %s last %s max %s; fds first %d last %d max %d\n",
				o.warmup, len(rss), mib(rss[0]), mib(rss[len(rss)-1]), mib(maxR), fds[0], fds[len(fds)-1], maxF)
		} else {
			fmt.Fprintln(out, "no samples after the warm-up")
		}
		gmu.Lock()
		var gs []int
		for i, at := range gAt {
			if at >= o.warmup {
				gs = append(gs, gSeen[i])
			}
		}
		gmu.Unlock()
		if len(gs) > 0 {
			fmt.Fprintf(out, "after %v warm-up (%d samples): goroutines first %d last %d max %d\n",
				o.warmup, len(gs), gs[0], gs[len(gs)-1], slices.Max(gs))
		}
	}
	if st.fivexx.Load() > 0 || st.lost.Load() > 0 {
		fmt.Fprintln(out, "FAIL: well-behaved requests got 5xx or no answer")
		return 1, nil
	}
	fmt.Fprintln(out, "PASS: no 5xx and no lost answer for well-behaved requests")
	return 0, nil
}

// soakWorker runs well-behaved operations in turn until ctx ends: two
// tools/call, one three-request MRTR call, one listen stream held for a
// second. Its calls go through one client.Client, as a well-behaved
// client's do; a worker whose client cannot connect counts that as a
// lost request and tries again.
func soakWorker(ctx context.Context, hc *http.Client, u string, w int, st *soakStats) {
	var c *client.Client
	defer func() {
		if c != nil {
			_ = c.Close()
		}
	}()
	ops := []func(){
		func() { soakCall(ctx, c, st) },
		func() { soakMRTR(ctx, c, st) },
		func() { soakCall(ctx, c, st) },
		func() { soakListen(ctx, hc, u, w, st) },
	}
	for i := w; ctx.Err() == nil; i++ {
		if c == nil {
			var err error
			c, err = dialGood(ctx, hc, u, client.OnElicitation(answerMRTR))
			if done(ctx, err) {
				return
			}
			if err != nil {
				o, why := classify(nil, err, "")
				st.record("connect", o, why)
				c = nil
			}
		}
		if c != nil {
			ops[i%len(ops)]()
		}
		select {
		case <-ctx.Done():
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// done reports whether the request failed only because the soak ended.
func done(ctx context.Context, err error) bool { return err != nil && ctx.Err() != nil }

func soakCall(ctx context.Context, c *client.Client, st *soakStats) {
	o, why := callSimple(ctx, c, 30*time.Second)
	if o != ok && ctx.Err() != nil {
		return
	}
	st.record("call", o, why)
}

// mrtrTool asks a name (step1), then a colour (step2), one round each.
const mrtrTool = "test_input_required_result_multi_round"

// answerMRTR answers mrtrTool's questions: the name Ada, the colour blue.
func answerMRTR(_ context.Context, q *mrtr.ElicitRequest) (*mrtr.ElicitResult, error) {
	if q.RequestedSchema != nil {
		if _, ok := q.RequestedSchema.Properties["color"]; ok {
			return &mrtr.ElicitResult{Action: mrtr.Accepted, Content: map[string]any{"color": "blue"}}, nil
		}
	}
	return &mrtr.ElicitResult{Action: mrtr.Accepted, Content: map[string]any{"name": "Ada"}}, nil
}

// soakMRTR completes one multi-round call: three requests, each counted
// (mrtr-round1 to 3), the client answering the two rounds.
func soakMRTR(ctx context.Context, c *client.Client, st *soakStats) {
	cctx, cancel := context.WithTimeout(ctx, 90*time.Second)
	defer cancel()
	res, err := c.CallTool(cctx, mrtrTool, json.RawMessage(`{}`))
	if done(ctx, err) {
		return
	}
	var raw json.RawMessage
	rounds := 0
	if res != nil {
		raw, rounds = res.Raw, res.Rounds
	}
	var ce *client.Error
	if errors.As(err, &ce) {
		rounds = ce.Round
	}
	for i := range rounds {
		st.record(fmt.Sprintf("mrtr-round%d", i+1), ok, "")
	}
	o, why := classify(raw, err, `Ada's favourite colour is blue.`)
	if o == ok && rounds != 2 {
		o, why = wrong, fmt.Sprintf("%d rounds, not 2: %s", rounds, raw)
	}
	st.record(fmt.Sprintf("mrtr-round%d", rounds+1), o, why)
}

// soakListen opens a listen stream, waits for its acknowledgement, holds
// it for a second and hangs up.
func soakListen(ctx context.Context, hc *http.Client, u string, w int, st *soakStats) {
	lctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(lctx, http.MethodPost, u,
		bytes.NewReader(requestBody(int64(100+w), "subscriptions/listen", "{}", listenParams...)))
	if err != nil {
		return
	}
	req.Header = client.RawHeader(client.LatestVersion, "subscriptions/listen", "")
	resp, err := client.RawDo(hc, req)
	if done(ctx, err) {
		return
	}
	if err != nil {
		st.record("listen", lost, err.Error())
		return
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode >= 500:
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		st.record("listen", status5xx, fmt.Sprintf("status %d: %s", resp.StatusCode, b))
		if resp.StatusCode == http.StatusServiceUnavailable {
			st.refused.add("503", string(b))
		}
		return
	case resp.StatusCode == http.StatusTooManyRequests:
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		st.refused.add("429", string(b))
		st.record("listen-refused", ok, "")
		return
	case resp.StatusCode != http.StatusOK:
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		st.record("listen", wrong, fmt.Sprintf("status %d: %s", resp.StatusCode, b))
		return
	}
	// The first message must be the acknowledgement.
	m, err := resp.Next()
	if done(ctx, err) {
		return
	}
	if err != nil || m.Method != "notifications/subscriptions/acknowledged" {
		why := fmt.Sprintf("no acknowledgement: %v %s", err, resp.Seen())
		st.record("listen", lost, why)
		return
	}
	st.record("listen", ok, "")
	select {
	case <-ctx.Done():
	case <-time.After(time.Second):
	}
}
