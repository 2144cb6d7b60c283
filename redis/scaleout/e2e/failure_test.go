//go:build scaleout

package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestRedisDown runs with redis-server killed (run.sh kills it first).
// Single-use tools fail closed on every replica; multi-round calls go on
// across replicas; a list change reaches the listeners of its own replica
// only, and the replica logs that it could not publish it.
func TestRedisDown(t *testing.T) {
	for _, r := range reps {
		state, _ := confirmState(t, r.url, "confirm_once", nil)
		_, rerr, _ := confirmRound("confirm_once", state, nil).call(t, r.url, 2)
		require.Falsef(t, rerr == nil || rerr.Code != -32603 || !strings.Contains(rerr.Message, "single-use check"), "confirm_once on %s with Redis down: %+v; want -32603 saying the single-use check could not be made", r.name, rerr)
	}
	t.Log("confirm_once refused (-32603) on A, B and C: fail closed")

	for i := range 3 {
		served := relay(t, proxyURL, fmt.Sprintf("down%d", i))
		require.Falsef(t, len(distinct(served)) < 2, "relay with Redis down: every round on %v", served)
	}
	t.Log("relay calls complete across replicas with Redis down")

	origin := reps[0]
	var ls []*listener
	for _, r := range reps {
		ls = append(ls, listen(t, r))
	}
	mark := logSize(t, origin)
	res, rerr, rep := round{tool: "change_list", args: map[string]any{"name": "down"}}.call(t, origin.url, 5)
	require.Falsef(t, rerr != nil || rep != origin.name || !strings.HasPrefix(res.text(), "replica="+origin.name), "change_list on %s: %+v %+v", origin.name, res, rerr)
	ls[0].expectListChanged(t)
	// Once the publish has failed, nothing can reach the others.
	logHas(t, origin, mark, "publishing a change to the other replicas failed")
	for _, l := range ls[1:] {
		if m, ok := l.pending(); ok {
			require.FailNow(t, fmt.Sprintf("listener on %s got %+v with Redis down", l.rep.name, m))
		}
	}
	t.Logf("a change on %s reached its own listener only; the publish failed and was logged", origin.name)

	// 2025-11-25 sessions: initialize works; every later request of the
	// session is refused with 503, since whether the session was deleted
	// cannot be read (fail closed).
	sid := legacyInit(t, origin.url, http.StatusServiceUnavailable)
	for _, r := range reps {
		x := post(t, "2025-11-25 whoami on "+r.name, r.url, legacyHeaders(sid), map[string]any{
			"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": map[string]any{"name": "whoami", "arguments": map[string]any{}}})
		if x.status != http.StatusServiceUnavailable {
			m, _ := x.tryNext(time.Second)
			require.FailNow(t, fmt.Sprintf("%s with Redis down: HTTP %d %+v; want 503", x.what, x.status, m))
		}
	}
	t.Log("2025-11-25: initialize answered; the session's later requests refused with 503 on A, B and C")
}

// TestRedisBack runs once redis-server is started again on its port:
// single-use states are claimed again and refused when replayed, and list
// changes reach every replica again once each has subscribed anew.
func TestRedisBack(t *testing.T) {
	deadline := time.Now().Add(30 * time.Second)
	for {
		state, _ := confirmState(t, proxyURL, "confirm_once", nil)
		_, rerr, _ := confirmRound("confirm_once", state, nil).call(t, reps[0].url, 2)
		if rerr == nil {
			_, rerr, _ = confirmRound("confirm_once", state, nil).call(t, reps[1].url, 2)
			wantReplayed(t, rerr, "a single-use state replayed once Redis is back")
			break
		}
		require.Falsef(t, time.Now().After(deadline), "confirm_once still refused 30 s after Redis came back: %+v", rerr)
		time.Sleep(100 * time.Millisecond)
	}
	t.Log("single-use states work again")

	// The replicas' subscriptions come back in the background: change the
	// list until a change reaches every listener.
	for i := 0; ; i++ {
		require.NotEqualValues(t, 30, i, "30 changes on A after Redis came back; none reached the listeners of B and C")
		var ls []*listener
		for _, r := range reps {
			ls = append(ls, listen(t, r))
		}
		if _, rerr, _ := (round{tool: "change_list", args: map[string]any{"name": fmt.Sprintf("back%d", i)}}).call(t, reps[0].url, 5); rerr != nil {
			require.FailNow(t, fmt.Sprint(rerr))
		}
		ls[0].expectListChanged(t)
		all := true
		for _, l := range ls[1:] {
			m, err := l.x.tryNext(time.Second)
			all = all && err == nil && m.Method == "notifications/tools/list_changed"
		}
		for _, l := range ls {
			l.x.cancel()
		}
		if all {
			t.Logf("change %d on A reached B and C again", i)
			break
		}
	}
}

// TestReplicaKilled kills, with SIGKILL, the replica that is serving a
// 2026-07-28 round in flight, while it also holds a listen stream and a
// bridged 2025-11-25 call waiting for its client's answer. Each client
// sees its response end without an answer; the modern client retries the
// same round (the state is in its hands) through nginx and completes on
// another replica; the 2025-11-25 session goes on elsewhere without a new
// initialize; the listener opens a new stream; and every later call
// through nginx succeeds, on the two replicas left.
func TestReplicaKilled(t *testing.T) {
	args := map[string]any{"ms": 4000}
	state, _ := confirmState(t, proxyURL, "hold", args)
	held := confirmRound("hold", state, args)
	held.progress = true
	// The hold round starts its response at once with progress, which
	// names the replica serving it: that one is killed.
	inflight := held.send(t, proxyURL, 7)
	require.Falsef(t, inflight.status != http.StatusOK, "hold: HTTP %d", inflight.status)
	if m := inflight.next(t); m.Method != "notifications/progress" {
		require.FailNow(t, fmt.Sprintf("hold: first message %+v, want progress", m))
	}
	victim := byName[inflight.replica]
	require.Falsef(t, victim == nil, "hold served by %q", inflight.replica)

	// A listen stream and a bridged 2025-11-25 call on the victim.
	l := listen(t, victim)
	sid := legacyInit(t, victim.url, http.StatusAccepted)
	lx := post(t, "2025-11-25 relay on "+victim.name, victim.url, legacyHeaders(sid), map[string]any{
		"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": map[string]any{"name": "relay", "arguments": map[string]any{}}})
	require.Falsef(t, lx.status != http.StatusOK, "%s: HTTP %d", lx.what, lx.status)
	if q := lx.next(t); !q.isRequest() || q.Method != "elicitation/create" {
		require.FailNow(t, fmt.Sprintf("%s: first message %+v, want elicitation/create", lx.what, q))
	}

	// And a task running on it (the Tasks extension).
	taskID := startVictimTask(t, victim)

	require.NoError(t, syscall.Kill(victim.pid, syscall.SIGKILL))
	t.Logf("killed replica %s (pid %d) with a hold round, a listen stream, a bridged call and a task on it", victim.name, victim.pid)

	// What each client sees: its response ends without the answer.
	got, err := inflight.ended(t)
	for _, m := range got {
		require.NotEqualValuesf(t, "", m.Method, "the hold round on the killed replica answered %+v", m)
	}
	t.Logf("2026-07-28 round in flight: the stream ended without a response (%v)", err)
	got, err = l.x.ended(t)
	require.EqualValuesf(t, 0, len(got), "the listen stream on the killed replica got %+v", got)
	t.Logf("listen stream: ended without its final result (%v)", err)
	got, err = lx.ended(t)
	for _, m := range got {
		require.NotEqualValuesf(t, "2", string(m.ID), "the bridged call on the killed replica answered %+v", m)
	}
	t.Logf("2025-11-25 bridged call: the stream ended without a response (%v)", err)

	// The modern client retries the same round with the same state and
	// answers: another replica completes it.
	held.progress = false
	settle(t)
	res, rerr, rep := held.call(t, proxyURL, 8)
	require.Falsef(t, rerr != nil || rep == victim.name || !strings.HasPrefix(res.text(), "confirmed on "+rep), "the hold round retried through nginx: %+v %+v on %s", res, rerr, rep)
	t.Logf("the same round retried through nginx: completed on %s", rep)

	// The task of the killed replica: another takes it over.
	checkVictimTask(t, victim, taskID)

	// The 2025-11-25 session lives on: no 404, no new initialize.
	for range 3 {
		x := post(t, "2025-11-25 whoami", proxyURL, legacyHeaders(sid), map[string]any{
			"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": map[string]any{"name": "whoami", "arguments": map[string]any{}}})
		require.Falsef(t, x.status != http.StatusOK || x.replica == victim.name, "the session's next call: HTTP %d on %q", x.status, x.replica)
		if m := x.next(t); m.Error != nil || !strings.Contains(string(m.Result), "replica="+x.replica) {
			require.FailNow(t, fmt.Sprintf("the session's next call on %s: %+v", x.replica, m))
		}
	}
	// A bridged call of the session, through nginx: it runs on a replica
	// left, and its answers reach it wherever nginx places them.
	for i := range 2 {
		text, holder, where := bridgedRelay(t, sid, fmt.Sprintf("legacy%d", i))
		require.Falsef(t, holder == victim.name || text != relayWant(fmt.Sprintf("legacy%d", i), []string{holder, holder, holder, holder}), "a bridged call after the kill: %q on %s", text, holder)
		t.Logf("bridged call %d after the kill: ran on %s, answers served by %s", i, holder, strings.Join(where, ", "))
	}
	t.Log("the 2025-11-25 session goes on on the other replicas, bridged calls included")

	// Every later call through nginx succeeds, none on the victim.
	for i := range 4 {
		served := relay(t, proxyURL, fmt.Sprintf("after%d", i))
		for _, s := range served {
			require.Falsef(t, s == victim.name, "a round was served by the killed replica %s", s)
		}
	}
	for _, r := range reps {
		if r != victim {
			listen(t, r).x.cancel()
		}
	}
	t.Logf("4 relay calls through nginx after the kill: every round on the two replicas left")
}

func legacyHeaders(sid string) map[string]string {
	return map[string]string{"Mcp-Session-Id": sid, "MCP-Protocol-Version": legacyVersion}
}

// legacyInit opens a 2025-11-25 session at url; notifications/initialized
// must get the status initialized.
func legacyInit(t *testing.T, url string, initialized int) string {
	t.Helper()
	x := post(t, "initialize", url, nil, map[string]any{
		"jsonrpc": "2.0", "id": 1, "method": "initialize",
		"params": map[string]any{
			"protocolVersion": legacyVersion,
			"capabilities":    map[string]any{"elicitation": map[string]any{"form": map[string]any{}}, "sampling": map[string]any{}},
			"clientInfo":      map[string]any{"name": "scaleout-e2e", "version": "1"},
		},
	})
	if m := x.next(t); x.status != http.StatusOK || m.Error != nil {
		require.FailNow(t, fmt.Sprintf("initialize: HTTP %d, %+v", x.status, m))
	}
	sid := x.header.Get("Mcp-Session-Id")
	require.NotEqualValues(t, "", sid, "initialize: no Mcp-Session-Id")
	n := post(t, "notifications/initialized", url, legacyHeaders(sid), map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"})
	require.Falsef(t, n.status != initialized, "notifications/initialized: HTTP %d; want %d", n.status, initialized)
	return sid
}

// bridgedRelay runs relay as a bridged call of session sid through nginx,
// answering every question through nginx too. It returns the result's
// text, the replica that ran the call and the replicas that took the
// answers.
func bridgedRelay(t *testing.T, sid, tag string) (string, string, []string) {
	t.Helper()
	x := post(t, "2025-11-25 relay", proxyURL, legacyHeaders(sid), map[string]any{
		"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": map[string]any{"name": "relay", "arguments": map[string]any{}}})
	require.Falsef(t, x.status != http.StatusOK, "%s: HTTP %d", x.what, x.status)
	var where []string
	for {
		m := x.next(t)
		switch {
		case m.isRequest():
			var key string
			switch {
			case m.Method == "sampling/createMessage":
				key = "sample"
			case strings.Contains(string(m.Params), "name"):
				key = "name"
			default:
				key = "colour"
			}
			a := post(t, "answer to "+m.Method, proxyURL, legacyHeaders(sid), map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": answer(t, key, tag)})
			require.Falsef(t, a.status != http.StatusAccepted, "%s: HTTP %d", a.what, a.status)
			where = append(where, a.replica)
		case m.Method != "":
			// a notification
		case string(m.ID) == "9":
			require.Falsef(t, m.Error != nil, "%s: error %+v", x.what, m.Error)
			var res toolResult
			if err := json.Unmarshal(m.Result, &res); err != nil || res.IsError {
				require.FailNow(t, fmt.Sprintf("%s: %s", x.what, m.Result))
			}
			return res.text(), x.replica, where
		}
	}
}

// settle sends whoami through nginx until it succeeds, at most three
// times, allowing only 502: just after a kill, nginx may send a request
// over a kept-alive connection to the dead replica before it has seen
// that connection close, and answers 502 without resending a POST it has
// sent (docs/deployment.md). Each 502 leaves the dead replica out.
func settle(t *testing.T) {
	t.Helper()
	for i := 0; ; i++ {
		x := round{tool: "whoami"}.send(t, proxyURL, 4)
		if x.status == http.StatusOK {
			if m := x.next(t); m.Error != nil {
				require.FailNow(t, fmt.Sprintf("whoami after the kill: %+v", m.Error))
			}
			return
		}
		require.Falsef(t, x.status != http.StatusBadGateway || i == 2, "whoami after the kill: HTTP %d (attempt %d); only 502, and only twice, is expected", x.status, i+1)
		t.Logf("whoami just after the kill: 502 from nginx; retried")
	}
}
