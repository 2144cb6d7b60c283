//go:build scaleout

package e2e

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestSharedModernRounds runs 2026-07-28 multi-round calls through nginx,
// which places every request round robin: the rounds of one call land on
// different replicas, each question names the replica that asked it, and
// the final text names the replica of every round.
func TestSharedModernRounds(t *testing.T) {
	seen := map[string]bool{}
	for i := range 6 {
		served := relay(t, proxyURL, fmt.Sprintf("user%d", i))
		require.Falsef(t, len(distinct(served)) < 2, "relay call %d: every round on %v; round robin must spread them", i, served)
		for _, r := range served {
			seen[r] = true
		}
		t.Logf("relay call %d: rounds served by %s", i, strings.Join(served, " → "))
	}
	require.EqualValuesf(t, 3, len(seen), "the calls' rounds reached %v; want all three replicas", seen)
	// A two-round call whose second round goes to a named other replica.
	for _, asker := range reps {
		state, rep := confirmState(t, asker.url, "confirm", nil)
		for _, r := range reps {
			if r == asker {
				continue
			}
			res, rerr, got := confirmRound("confirm", state, nil).call(t, r.url, 2)
			require.Falsef(t, rerr != nil || res.text() != "confirmed on "+r.name+" (asked on "+rep+")", "confirm asked on %s, answered on %s (%s): %+v %+v", rep, r.name, got, res, rerr)
		}
	}
}

// TestSharedListChange opens a listen stream on every replica and changes
// the tool list on one (through nginx): the listeners of all three are
// told, the other two through Redis. It does so until the change has come
// from two different replicas.
func TestSharedListChange(t *testing.T) {
	origins := map[string]bool{}
	for i := 0; len(origins) < 2; i++ {
		require.NotEqualValuesf(t, 6, i, "six changes through nginx all came from %v", origins)
		var ls []*listener
		for _, r := range reps {
			ls = append(ls, listen(t, r))
		}
		res, rerr, rep := round{tool: "change_list", args: map[string]any{"name": fmt.Sprintf("shared%d", i)}}.call(t, proxyURL, 5)
		require.Falsef(t, rerr != nil || !strings.HasPrefix(res.text(), "replica="+rep+" added="), "change_list: %+v %+v", res, rerr)
		for _, l := range ls {
			l.expectListChanged(t)
			l.x.cancel()
		}
		origins[rep] = true
		t.Logf("a change on %s reached the listeners of A, B and C", rep)
	}
}

// TestSharedListChangeLegacyStreams opens the GET stream of a 2025-11-25
// session on B and on C, and changes the tool list on A, directly: both
// streams are told, through Redis. A GET stream gives no sign of when its
// listener is in place, so the change is made again, up to ten times,
// until each stream has been told of one; every change is made on A, so
// whatever B's and C's streams get came from another replica.
func TestSharedListChangeLegacyStreams(t *testing.T) {
	origin := reps[0]
	got := map[*listener]bool{}
	ls := []*listener{legacyStream(t, reps[1]), legacyStream(t, reps[2])}
	for i := 0; len(got) < len(ls); i++ {
		require.NotEqualValuesf(t, 10, i, "ten changes on %s; the 2025-11-25 streams told: %d of %d", origin.name, len(got), len(ls))
		if _, rerr, _ := (round{tool: "change_list", args: map[string]any{"name": fmt.Sprintf("legacy%d", i)}}).call(t, origin.url, 5); rerr != nil {
			require.FailNow(t, fmt.Sprint(rerr))
		}
		for _, l := range ls {
			if got[l] {
				continue
			}
			if m, err := l.x.tryNext(2 * time.Second); err == nil {
				require.EqualValuesf(t, "notifications/tools/list_changed", m.Method, "the 2025-11-25 stream on %s got %+v", l.rep.name, m)
				got[l] = true
			}
		}
	}
	t.Logf("changes on %s reached the 2025-11-25 session streams on %s and %s", origin.name, reps[1].name, reps[2].name)
}

// TestSharedOnceOnly uses a single-use state on one replica, then presents
// it again to every replica, directly and through nginx: each refuses it
// as replayed. A state of the same tool without OnceOnly opens anywhere,
// any number of times.
func TestSharedOnceOnly(t *testing.T) {
	for _, first := range reps {
		state, asker := confirmState(t, proxyURL, "confirm_once", nil)
		res, rerr, _ := confirmRound("confirm_once", state, nil).call(t, first.url, 2)
		require.Falsef(t, rerr != nil || res.text() != "confirmed on "+first.name+" (asked on "+asker+")", "confirm_once on %s: %+v %+v", first.name, res, rerr)
		targets := append([]*replica{}, reps...)
		for _, r := range targets {
			_, rerr, got := confirmRound("confirm_once", state, nil).call(t, r.url, 3)
			wantReplayed(t, rerr, fmt.Sprintf("the state used on %s, replayed on %s (%s)", first.name, r.name, got))
		}
		_, rerr, got := confirmRound("confirm_once", state, nil).call(t, proxyURL, 4)
		wantReplayed(t, rerr, "the state used on "+first.name+", replayed through nginx on "+got)
	}
	state, _ := confirmState(t, proxyURL, "confirm", nil)
	for _, r := range reps {
		for range 2 {
			if res, rerr, _ := confirmRound("confirm", state, nil).call(t, r.url, 2); rerr != nil || !strings.HasPrefix(res.text(), "confirmed on "+r.name) {
				require.FailNow(t, fmt.Sprintf("confirm (not single-use) on %s: %+v %+v", r.name, res, rerr))
			}
		}
	}
}

func wantReplayed(t *testing.T, rerr *rpcError, what string) {
	t.Helper()
	require.Falsef(t, rerr == nil || rerr.Code != -32602 || !strings.Contains(string(rerr.Data), "replayed_request_state"), "%s: got %+v; want -32602 with reason replayed_request_state", what, rerr)
}

// newKey returns a key ring line with a fresh random secret.
func newKey(t *testing.T, id string) string {
	t.Helper()
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		require.FailNow(t, fmt.Sprint(err))
	}
	return id + ":" + base64.StdEncoding.EncodeToString(b)
}

// TestSharedKeyRotation rotates the key ring while calls run: the new key
// is added behind the old one, then moved first, the old one staying
// behind it, and every replica reloads on SIGHUP at each step. Calls whose states were sealed before the rotation
// complete after it, a steady load through nginx sees no failure, and
// once the old key is dropped only states sealed after the rotation still
// open, which shows the new key seals.
func TestSharedKeyRotation(t *testing.T) {
	old := readKeys(t)
	require.Falsef(t, len(old) != 1 || !strings.HasPrefix(old[0], "k1:"), "the key ring file holds %d lines; want the one key k1", len(old))
	for _, r := range reps {
		if got := whoami(t, r.url); got != "replica="+r.name+" keys=k1" {
			require.FailNow(t, fmt.Sprintf("before the rotation: %q", got))
		}
	}

	// Calls begun before the rotation, two rounds in.
	var pending []*relayCall
	for i := range 3 {
		c := newRelay(fmt.Sprintf("rot%d", i))
		c.step(t, proxyURL)
		c.step(t, proxyURL)
		pending = append(pending, c)
	}
	stateOld, _ := confirmState(t, proxyURL, "confirm", nil)
	sessionOld := legacyInit(t, reps[0].url, http.StatusAccepted)

	// A steady load through nginx across the rotation.
	var (
		stop     atomic.Bool
		calls    atomic.Int64
		failures atomic.Int64
		firstErr atomic.Value
		wg       sync.WaitGroup
	)
	for w := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; !stop.Load(); n++ {
				if err := relayQuiet(proxyURL, fmt.Sprintf("load%d-%d", w, n)); err != nil {
					failures.Add(1)
					firstErr.CompareAndSwap(nil, err.Error())
				}
				calls.Add(1)
			}
		}()
	}
	// Let the load run before, during and after the swap: 20 calls before
	// it, and 20 more after every replica has reloaded.
	waitCalls(t, &calls, 20)
	before := calls.Load()
	// Step 1: the new key behind the old one, so that every replica can
	// open it before any seals with it. Step 2, once every replica has
	// it: the new key first. (Both steps at once would let a replica that
	// has reloaded seal with k2 a state that a replica that has not yet
	// reloaded cannot open.)
	k2 := newKey(t, "k2")
	writeKeys(t, []string{old[0], k2}, "k1,k2")
	waitCalls(t, &calls, calls.Load()+10)
	writeKeys(t, []string{k2, old[0]}, "k2,k1")
	waitCalls(t, &calls, calls.Load()+20)
	for _, c := range pending {
		c.step(t, proxyURL)
		c.step(t, proxyURL)
		require.NotEqualValuesf(t, "", c.done, "relay %s begun before the rotation did not complete after it", c.tag)
		t.Logf("relay %s: rounds %s, the rotation after the second", c.tag, strings.Join(c.served, " → "))
	}
	stateNew, _ := confirmState(t, proxyURL, "confirm", nil)
	stop.Store(true)
	wg.Wait()
	if f := failures.Load(); f != 0 {
		require.FailNow(t, fmt.Sprintf("%d of %d calls under load failed across the rotation; first: %v", f, calls.Load(), firstErr.Load()))
	}
	require.NotEqualValues(t, 0, calls.Load(), "no call ran under load")
	t.Logf("%d relay calls (4 requests each) under load across the rotation (%d before it), none failed", calls.Load(), before)

	// The old key dropped: states it sealed stop opening, on every
	// replica; states sealed since the rotation open everywhere.
	writeKeys(t, []string{k2}, "k2")
	for _, r := range reps {
		if res, rerr, _ := confirmRound("confirm", stateNew, nil).call(t, r.url, 2); rerr != nil || !strings.HasPrefix(res.text(), "confirmed on "+r.name) {
			require.FailNow(t, fmt.Sprintf("a state sealed after the rotation, on %s once k1 is gone: %+v %+v", r.name, res, rerr))
		}
		_, rerr, _ := confirmRound("confirm", stateOld, nil).call(t, r.url, 2)
		require.Falsef(t, rerr == nil || rerr.Code != -32602, "a state sealed with k1, on %s once k1 is gone: %+v; want -32602", r.name, rerr)
	}

	// 2025-11-25 session ids follow the reload too: a session opened
	// before the rotation (sealed with k1) is unknown everywhere once k1
	// is gone, and one opened on any replica now (sealed with k2) is
	// served by the other two.
	for _, r := range reps {
		x := post(t, "tools/list of a session sealed with k1, on "+r.name, r.url, legacyHeaders(sessionOld),
			map[string]any{"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
		require.Falsef(t, x.status != http.StatusNotFound, "a 2025-11-25 session sealed with k1, on %s once k1 is gone: HTTP %d; want 404", r.name, x.status)
	}
	for i, r := range reps {
		sid := legacyInit(t, r.url, http.StatusAccepted)
		other := reps[(i+1)%len(reps)]
		x := post(t, "tools/list of a session opened on "+r.name, other.url, legacyHeaders(sid),
			map[string]any{"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
		if m := x.next(t); x.status != http.StatusOK || m.Error != nil {
			require.FailNow(t, fmt.Sprintf("a 2025-11-25 session opened on %s after the rotation, on %s: HTTP %d %+v", r.name, other.name, x.status, m))
		}
	}
}

// relayQuiet runs a relay call at url and returns what went wrong, for
// load goroutines, which must not call t.Fatal.
func relayQuiet(url, tag string) error {
	r := round{tool: "relay"}
	for i := range 4 {
		x, err := r.trySend(url, 20+i)
		if err != nil {
			return err
		}
		m, err := x.tryNext(waitMessage)
		x.cancel()
		if err != nil {
			return fmt.Errorf("round %d: %w", i, err)
		}
		if m.Error != nil {
			return fmt.Errorf("round %d on %s: error %d %s", i, x.replica, m.Error.Code, m.Error.Message)
		}
		var res toolResult
		if err := json.Unmarshal(m.Result, &res); err != nil {
			return err
		}
		switch res.ResultType {
		case "complete":
			if !strings.HasPrefix(res.text(), "name="+tag+";") || i != 3 {
				return fmt.Errorf("round %d: complete with %q", i, res.text())
			}
			return nil
		case "input_required":
			resp := map[string]any{}
			for k := range res.InputRequests {
				resp[k] = answerQuiet(k, tag)
			}
			r = round{tool: "relay", state: res.RequestState, responses: resp}
		default:
			return fmt.Errorf("round %d: resultType %q", i, res.ResultType)
		}
	}
	return fmt.Errorf("not complete after 4 rounds")
}

func answerQuiet(key, tag string) any {
	switch key {
	case "name":
		return map[string]any{"action": "accept", "content": map[string]any{"name": tag}}
	case "sample":
		return map[string]any{"role": "assistant", "content": map[string]any{"type": "text", "text": "hello " + tag}, "model": "scaleout", "stopReason": "endTurn"}
	case "colour":
		return map[string]any{"action": "accept", "content": map[string]any{"colour": "teal-" + tag}}
	case "ok":
		return map[string]any{"action": "accept", "content": map[string]any{"yes": true}}
	}
	return nil
}

// waitCalls waits until the load has made n calls.
func waitCalls(t *testing.T, calls *atomic.Int64, n int64) {
	t.Helper()
	deadline := time.Now().Add(waitMessage)
	for calls.Load() < n {
		require.Falsef(t, time.Now().After(deadline), "the load made %d calls in %s; want %d", calls.Load(), waitMessage, n)
		time.Sleep(5 * time.Millisecond)
	}
}
