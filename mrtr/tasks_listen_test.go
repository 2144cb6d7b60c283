package mrtr_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mrtrkit/mrtrkit/mrtr"
)

// listenSSE opens subscriptions/listen on the wire as principal token
// and returns its messages, read from the event stream.
func listenSSE(t *testing.T, ctx context.Context, c *wireClient, caps obj, filter obj) (<-chan map[string]json.RawMessage, int) {
	t.Helper()
	body, err := json.Marshal(obj{"jsonrpc": "2.0", "id": "L1", "method": "subscriptions/listen", "params": obj{"_meta": meta(caps), "notifications": filter}})
	require.NoError(t, err)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", version)
	req.Header.Set("Mcp-Method", "subscriptions/listen")
	req.Header.Set("Authorization", "Bearer "+c.token)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	out := make(chan map[string]json.RawMessage, 16)
	go func() {
		defer resp.Body.Close()
		defer close(out)
		if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
			var m map[string]json.RawMessage
			_ = json.NewDecoder(resp.Body).Decode(&m)
			out <- m
			return
		}
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				var m map[string]json.RawMessage
				if json.Unmarshal([]byte(d), &m) == nil {
					out <- m
				}
			}
		}
	}()
	return out, resp.StatusCode
}

func nextMessage(t *testing.T, ch <-chan map[string]json.RawMessage) map[string]json.RawMessage {
	t.Helper()
	select {
	case m := <-ch:
		require.NotNil(t, m, "the stream ended")
		return m
	case <-time.After(5 * time.Second):
		t.Fatal("no message")
		return nil
	}
}

func TestTaskNotificationsOnListen(t *testing.T) {
	_, client := taskServer(t)
	alice, bob := client("alice"), client("bob")
	id := alice.call("tools/call", capsTasks, obj{"name": "confirm"}).str("taskId")
	other := bob.call("tools/call", capsTasks, obj{"name": "confirm"}).str("taskId")
	waitStatus(t, alice, id, mrtr.TaskInputRequired)

	// Asking for taskIds without declaring the extension: -32021.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ch, status := listenSSE(t, ctx, alice, capsNone, obj{"taskIds": []string{id}})
	m := nextMessage(t, ch)
	assert.Equal(t, http.StatusBadRequest, status)
	assert.Contains(t, string(m["error"]), "-32021")

	// Declared: only the caller's live tasks are honoured.
	ch, _ = listenSSE(t, ctx, alice, capsTasks, obj{"taskIds": []string{id, other, "unknown"}})
	ack := nextMessage(t, ch)
	assert.Equal(t, `"notifications/subscriptions/acknowledged"`, string(ack["method"]))
	assert.Contains(t, string(ack["params"]), `"taskIds":["`+id+`"]`)
	assert.Contains(t, string(ack["params"]), `subscriptionId":"L1"`)

	alice.call(mrtr.MethodTasksUpdate, capsTasks, obj{"taskId": id, "inputResponses": obj{"r1/confirm": obj{"action": "accept", "content": obj{"confirm": "y"}}}})
	var last map[string]json.RawMessage
	for {
		n := nextMessage(t, ch)
		require.Equal(t, `"notifications/tasks"`, string(n["method"]))
		var p struct {
			TaskID string          `json:"taskId"`
			Status string          `json:"status"`
			Meta   json.RawMessage `json:"_meta"`
		}
		require.NoError(t, json.Unmarshal(n["params"], &p))
		assert.Equal(t, id, p.TaskID)
		assert.Contains(t, string(p.Meta), `"L1"`)
		last = n
		if p.Status == mrtr.TaskCompleted {
			break
		}
	}
	assert.Contains(t, string(last["params"]), "answered accept", "the DetailedTask, result inlined")
}
