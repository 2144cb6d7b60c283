//go:build scaleout

package scaleout_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
)

var proxyURL string

func TestMain(m *testing.M) {
	proxyURL = os.Getenv("SCALEOUT_PROXY_URL")
	if proxyURL == "" || os.Getenv("SCALEOUT_REPLICAS") == "" {
		fmt.Fprintln(os.Stderr, "scaleout: SCALEOUT_PROXY_URL and SCALEOUT_REPLICAS are not set; run redis/scaleout/run.sh")
		os.Exit(2)
	}
	os.Exit(m.Run())
}

// post is one POST the client made and the replica that served it.
type post struct {
	method  string          // JSON-RPC method; "" for an answer
	id      json.RawMessage // JSON-RPC id
	status  int
	replica string // X-Replica of the response
}

// wire records the replica behind every POST.
type wire struct {
	mu    sync.Mutex
	posts []post
}

func (w *wire) RoundTrip(req *http.Request) (*http.Response, error) {
	var p post
	if req.Method == http.MethodPost && req.Body != nil {
		b, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, err
		}
		req.Body = io.NopCloser(bytes.NewReader(b))
		var m struct {
			Method string          `json:"method"`
			ID     json.RawMessage `json:"id"`
		}
		_ = json.Unmarshal(b, &m)
		p.method, p.id = m.Method, m.ID
	}
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil || req.Method != http.MethodPost {
		return resp, err
	}
	p.status, p.replica = resp.StatusCode, resp.Header.Get("X-Replica")
	w.mu.Lock()
	w.posts = append(w.posts, p)
	w.mu.Unlock()
	return resp, nil
}

func (w *wire) since(n int) []post {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]post(nil), w.posts[n:]...)
}

func (w *wire) mark() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.posts)
}

// connect connects a go-sdk client pinned to 2025-11-25 through nginx,
// answering relay's questions for tag; asked gets each question's text.
func connect(t *testing.T, standalone bool, tag string, asked *[]string) (*mcp.ClientSession, *wire) {
	t.Helper()
	w := &wire{}
	var mu sync.Mutex
	note := func(s string) {
		mu.Lock()
		*asked = append(*asked, s)
		mu.Unlock()
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "mrtrkit-scaleout-go-sdk", Version: "1.0.0"}, &mcp.ClientOptions{
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			note("elicitation/create: " + req.Params.Message)
			if strings.Contains(req.Params.Message, "name") {
				return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": tag}}, nil
			}
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"colour": "teal-" + tag}}, nil
		},
		CreateMessageHandler: func(_ context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			text := ""
			if len(req.Params.Messages) > 0 {
				if tc, ok := req.Params.Messages[0].Content.(*mcp.TextContent); ok {
					text = tc.Text
				}
			}
			note("sampling/createMessage: " + text)
			return &mcp.CreateMessageResult{Role: "assistant", Content: &mcp.TextContent{Text: "hello " + tag}, Model: "scaleout", StopReason: "endTurn"}, nil
		},
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{
		Endpoint:             proxyURL,
		HTTPClient:           &http.Client{Transport: w},
		DisableStandaloneSSE: !standalone,
		MaxRetries:           -1,
	}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	require.NoError(t, err, "Connect through nginx")
	t.Cleanup(func() { cs.Close() })
	return cs, w
}

// TestGoSDK2025ThreeRounds runs relay (an elicitation, a sampling request,
// an elicitation) from go-sdk sessions pinned to 2025-11-25 through
// nginx's round robin. The call runs on one replica, which sends the three
// questions on the call's stream; the client POSTs each answer, which
// nginx places on whichever replica comes next. Every call must complete,
// and answers must have landed on replicas other than the call's.
func TestGoSDK2025ThreeRounds(t *testing.T) {
	elsewhere := 0
	holders := map[string]bool{}
	for i, standalone := range []bool{false, false, false, true} {
		tag := fmt.Sprintf("gosdk%d", i)
		var asked []string
		cs, w := connect(t, standalone, tag, &asked)
		if v := cs.InitializeResult().ProtocolVersion; v != "2025-11-25" {
			require.FailNow(t, fmt.Sprintf("negotiated %s", v))
		}
		mark := w.mark()
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "relay", Arguments: map[string]any{}})
		cancel()
		require.NoErrorf(t, err, "call %d: CallTool(relay)", i)
		// The result can come before the 202 of the last answer's POST:
		// wait until the client has every answer's status.
		var holder string
		var answers []post
		for deadline := time.Now().Add(10 * time.Second); ; {
			holder, answers = "", nil
			for _, p := range w.since(mark) {
				switch {
				case p.method == "tools/call":
					holder = p.replica
				case p.method == "" && len(p.id) > 0:
					require.Falsef(t, p.status != http.StatusAccepted, "call %d: an answer got HTTP %d from %s", i, p.status, p.replica)
					answers = append(answers, p)
				}
			}
			if len(answers) >= 3 || time.Now().After(deadline) {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		text := ""
		if len(res.Content) > 0 {
			if tc, ok := res.Content[0].(*mcp.TextContent); ok {
				text = tc.Text
			}
		}
		want := fmt.Sprintf("name=%s; sample=hello %s; colour=teal-%s; served=%s,%s,%s,%s", tag, tag, tag, holder, holder, holder, holder)
		require.Falsef(t, res.IsError || text != want, "call %d (standalone stream %v): %q (isError %v); want %q\nquestions: %q", i, standalone, text, res.IsError, want, asked)
		require.Falsef(t, len(asked) != 3 || len(answers) != 3, "call %d: %d questions %q and %d answers; want 3 and 3", i, len(asked), asked, len(answers))
		for _, q := range asked {
			require.Containsf(t, q, "(replica "+holder+")", "call %d: question %q did not come from the call's replica %s", i, q, holder)
		}
		var where []string
		for _, a := range answers {
			where = append(where, a.replica)
			if a.replica != holder {
				elsewhere++
			}
		}
		holders[holder] = true
		t.Logf("call %d (standalone stream %v): ran on %s; answers served by %s", i, standalone, holder, strings.Join(where, ", "))
	}
	require.NotEqualValues(t, 0, elsewhere, "no answer landed on a replica other than its call's: round robin did not spread them, so nothing was proved")
	t.Logf("%d answers landed on another replica than their call's, and every call completed; calls ran on %d replicas", elsewhere, len(holders))
}

// TestGoSDK2025ReplicaKilled is run by the script's last phase: the
// replica running a bridged call is killed (SIGKILL) while the client
// answers its first question. CallTool must fail, as the call's stream
// broke off; the session must go on, on the replicas left, without a new
// initialize.
func TestGoSDK2025ReplicaKilled(t *testing.T) {
	pids := map[string]int{}
	for _, kv := range strings.Split(os.Getenv("SCALEOUT_PIDS"), ",") {
		if k, v, ok := strings.Cut(kv, "="); ok {
			pids[k], _ = strconv.Atoi(v)
		}
	}
	var killed string
	var asked []string
	w := &wire{}
	client := mcp.NewClient(&mcp.Implementation{Name: "mrtrkit-scaleout-go-sdk", Version: "1.0.0"}, &mcp.ClientOptions{
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			asked = append(asked, req.Params.Message)
			if killed == "" {
				for name, pid := range pids {
					if strings.Contains(req.Params.Message, "(replica "+name+")") && syscall.Kill(pid, 0) == nil {
						killed = name
						if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
							return nil, err
						}
					}
				}
			}
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "killed"}}, nil
		},
	})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{
		Endpoint: proxyURL, HTTPClient: &http.Client{Transport: w}, DisableStandaloneSSE: true, MaxRetries: -1,
	}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	require.NoError(t, err, "Connect through nginx")
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "relay", Arguments: map[string]any{}})
	require.NotEqualValuesf(t, "", killed, "no question named a live replica to kill: %q", asked)
	require.Errorf(t, err, "CallTool on the killed replica %s returned %+v without an error", killed, res)
	t.Logf("the bridged call on replica %s, killed mid-call: CallTool failed: %v", killed, err)

	for i := range 3 {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "whoami", Arguments: map[string]any{}})
		// Just after the kill, nginx may send a request over a kept-alive
		// connection to the dead replica before it has seen that
		// connection close; it answers 502 and, the request being a POST
		// it has sent, does not resend it (docs/deployment.md). The
		// client retries; nginx has then left the dead replica out.
		for retry := 0; i == 0 && retry < 2 && err != nil && strings.Contains(err.Error(), "Bad Gateway"); retry++ {
			t.Logf("the first call after the kill got 502 (%v): retried", err)
			res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "whoami", Arguments: map[string]any{}})
		}
		require.Falsef(t, err != nil || res.IsError || len(res.Content) == 0, "call %d on the same session after the kill: %+v, %v", i, res, err)
		text := res.Content[0].(*mcp.TextContent).Text
		require.Falsef(t, strings.HasPrefix(text, "replica="+killed+" "), "served by the killed replica: %q", text)
		t.Logf("the same session, call %d: %s", i, text)
	}
}
