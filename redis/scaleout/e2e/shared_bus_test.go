//go:build scaleout

package e2e

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

// audience is the replicas' default -audience.
const audience = "https://mcp.scaleout.test/mcp"

var digestInEvent = regexp.MustCompile(`"s":"([0-9a-f]{32})"`)

// TestSharedForgedBusMessage is the review's M4 reproduction against the
// running deployment: someone holding the replicas' own Redis credentials
// (PUBLISH and SUBSCRIBE, as the ACL of docs/deployment.md grants) but
// not the key ring learns a session's digest from what the replicas
// publish, and while a bridged call waits on replica B for the client's
// answer, publishes an answer to its question (forging consent) and a
// deletion of the session. Replica B drops both (and logs it); the
// client's real answer, posted to replica A, reaches the call on B
// through Redis.
func TestSharedForgedBusMessage(t *testing.T) {
	url := os.Getenv("SCALEOUT_REDIS_URL")
	require.NotEqualValues(t, "", url, "SCALEOUT_REDIS_URL is not set; run redis/scaleout/run.sh")
	opts, err := redis.ParseURL(url)
	require.NoError(t, err)
	rdb := redis.NewClient(opts)
	defer rdb.Close()
	ctx := context.Background()
	a, b := reps[0], reps[1]

	// The channel of session events is named after the audience.
	sum := sha256.Sum256([]byte("mrtrkit legacy\x00deployment\x00" + audience))
	events := "mrtrkit/legacy/events/" + hex.EncodeToString(sum[:16])
	sub := rdb.Subscribe(ctx, events)
	defer sub.Close()
	if _, err := sub.Receive(ctx); err != nil {
		require.FailNow(t, fmt.Sprint(err))
	}

	// The session's digest, as anyone subscribed sees it: a cancellation
	// of a request no replica runs is published with it.
	sid := legacyInit(t, b.url, http.StatusAccepted)
	post(t, "notifications/cancelled", b.url, legacyHeaders(sid), map[string]any{"jsonrpc": "2.0", "method": "notifications/cancelled", "params": map[string]any{"requestId": "probe"}})
	var digest string
	for digest == "" {
		select {
		case m := <-sub.Channel():
			if g := digestInEvent.FindStringSubmatch(m.Payload); g != nil && strings.Contains(m.Payload, `"k":"cancel"`) {
				digest = g[1]
			}
		case <-time.After(waitMessage):
			require.FailNow(t, "the cancellation was not published")
		}
	}

	skip := logSize(t, b)
	x := post(t, "2025-11-25 confirm on "+b.name, b.url, legacyHeaders(sid), map[string]any{
		"jsonrpc": "2.0", "id": 21, "method": "tools/call", "params": map[string]any{"name": "confirm", "arguments": map[string]any{}}})
	require.Falsef(t, x.status != http.StatusOK, "%s: HTTP %d", x.what, x.status)
	ask := x.next(t)
	require.EqualValuesf(t, "elicitation/create", ask.Method, "%s: %+v; want elicitation/create", x.what, ask)
	var leg string
	require.NoErrorf(t, json.Unmarshal(ask.ID, &leg), "leg id %s", ask.ID)
	prefix, random, _ := strings.Cut(leg, "-")
	require.EqualValuesf(t, 32, len(random), "leg id %q: want the replica and 32 random hex digits", leg)
	forged := map[string]string{
		"mrtrkit/legacy/replica/" + prefix: `{"r":"attacker","k":"ans","s":"` + digest + `","id":` + strconv.Quote(string(ask.ID)) + `,"res":{"action":"accept","content":{"yes":true}}}`,
		events:                             `{"r":"attacker","k":"del","s":"` + digest + `"}`,
	}
	for channel, payload := range forged {
		n, err := rdb.Publish(ctx, channel, payload).Result()
		require.Falsef(t, err != nil || n < 1, "PUBLISH %s: %d receivers, %v; want a replica listening", channel, n, err)
	}
	if m, err := x.tryNext(time.Second); err == nil {
		require.FailNow(t, fmt.Sprintf("a forged bus message moved the call on %s: %+v", b.name, m))
	}
	logHas(t, b, skip, "dropped a message received on the bus", "not authentic")

	// The client's own answer, a refusal, posted to A, ends the call on B.
	ans := post(t, "answer on "+a.name, a.url, legacyHeaders(sid), map[string]any{"jsonrpc": "2.0", "id": ask.ID, "result": map[string]any{"action": "decline"}})
	require.Falsef(t, ans.status != http.StatusAccepted, "%s: HTTP %d", ans.what, ans.status)
	final := x.next(t)
	var res toolResult
	if err := json.Unmarshal(final.Result, &res); err != nil || res.text() != "not confirmed on "+b.name {
		require.FailNow(t, fmt.Sprintf("the call on %s: %s; want the client's own refusal", b.name, final.Result))
	}
	ping := post(t, "ping on "+b.name, b.url, legacyHeaders(sid), map[string]any{"jsonrpc": "2.0", "id": 22, "method": "ping"})
	require.Falsef(t, ping.status != http.StatusOK, "after the forged deletion, ping on %s: HTTP %d; want the session alive", b.name, ping.status)
	t.Logf("a forged answer and deletion published on Redis were dropped by %s; the real answer posted to %s reached the call", b.name, a.name)
}
