package suite

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mrtrkit/mrtrkit/discover"
	"github.com/mrtrkit/mrtrkit/mrtr"
	"github.com/mrtrkit/mrtrkit/state"
	"github.com/mrtrkit/mrtrkit/transport/streamablehttp"
)

// This file holds the servers the tests point the suite at: a server
// built on mrtrkit, which must pass everything, and weak servers written
// by hand, which must fail where they are weak.

var quiet = slog.New(slog.DiscardHandler)

// Tokens of the two principals of the mrtrkit test server.
const (
	aliceToken = "alice-token"
	bobToken   = "bob-token"
)

// askSchema is the input schema of the mrtrkit test server's tools. The
// topic is mirrored in the Mcp-Param-Topic header, so a baseline that
// passes shows that the suite sends x-mcp-header mirrors.
const askSchema = `{"type":"object","properties":{"topic":{"type":"string","x-mcp-header":"Topic"}},"required":["topic"]}`

// frameworkConfig is the suite configuration for the mrtrkit test server.
func frameworkConfig(url string) Config {
	return Config{
		URL:        url,
		Tool:       "ask_name",
		Args:       json.RawMessage(`{"topic":"mrtrcheck topic"}`),
		OtherTool:  "ask_name_twin",
		Token:      aliceToken,
		OtherToken: bobToken,
	}
}

// newFrameworkServer serves, with mrtrkit, two tools with the same schema
// that ask for a name by form elicitation and then greet, behind bearer
// authentication whose principal is derived from the token. hmacState
// selects the readable HMAC codec instead of the default AEAD one.
func newFrameworkServer(t *testing.T, hmacState bool) string {
	t.Helper()
	ring, err := state.GenerateKeyRing()
	if err != nil {
		t.Fatal(err)
	}
	codec, err := state.NewAEAD(ring)
	if hmacState {
		codec, err = state.NewHMAC(ring)
	}
	if err != nil {
		t.Fatal(err)
	}
	srv, err := mrtr.NewServer(discover.Description{
		Server:       discover.Implementation{Name: "suite-test", Version: "1"},
		Capabilities: discover.Capabilities{Tools: &discover.ListChanged{}},
	}, mrtr.WithCodec(codec), mrtr.WithLogger(quiet))
	if err != nil {
		t.Fatal(err)
	}
	ask := mrtr.HandlerFunc(func(_ context.Context, req *mrtr.Request) (mrtr.Result, error) {
		var args struct {
			Topic string `json:"topic"`
		}
		if err := req.BindArguments(&args); err != nil || args.Topic == "" {
			return mrtr.ToolError("topic is required"), nil
		}
		if a, ok := req.Responses.Elicitation("name"); ok && a.Accepted() {
			return &mrtr.CallToolResult{Content: []mrtr.Content{mrtr.Text(fmt.Sprintf("%s: hello %v", args.Topic, a.Content["name"]))}}, nil
		}
		ir := mrtr.Ask("name", &mrtr.ElicitRequest{
			Message: "Your name?",
			RequestedSchema: &mrtr.ElicitSchema{
				Type:       "object",
				Properties: map[string]json.RawMessage{"name": json.RawMessage(`{"type":"string","minLength":2}`)},
				Required:   []string{"name"},
			},
		})
		ir.State = []byte("asked for " + args.Topic)
		return ir, nil
	})
	for _, name := range []string{"ask_name", "ask_name_twin"} {
		if err := srv.AddTool(mrtr.Tool{Name: name, Description: "Asks for a name", InputSchema: json.RawMessage(askSchema)}, ask); err != nil {
			t.Fatal(err)
		}
	}
	principals := map[string]string{aliceToken: "alice", bobToken: "bob"}
	auth := streamablehttp.BearerAuthenticator(func(_ context.Context, token string) (string, error) {
		if p, ok := principals[token]; ok {
			return p, nil
		}
		return "", errors.New("unknown token")
	}, "")
	h, err := streamablehttp.New(srv, streamablehttp.WithAuthenticator(auth), streamablehttp.WithLogger(quiet))
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	return ts.URL + streamablehttp.DefaultPath
}

// weakMode is what a weak server gets wrong.
type weakMode int

const (
	// weakSuffix refuses only a requestState ending in "-TAMPERED", the
	// one thing the official suite tries, and accepts anything else.
	weakSuffix weakMode = iota
	// weakUnbound checks a MAC over the state, which binds it to
	// nothing: not the tool, the arguments or the principal.
	weakUnbound
	// weakRefuseRetries refuses every retry, the genuine one included.
	weakRefuseRetries
)

// weakServer is a hand-written MCP 2026-07-28 endpoint with the tools
// "weak" and "weak_twin", which ask for "name" and then complete. It
// checks nothing but the requestState, and that badly.
type weakServer struct {
	mode weakMode
	key  []byte
	// sse answers tools/call as an event stream, with a notification
	// before the response.
	sse bool
}

func newWeakServer(t *testing.T, mode weakMode, sse bool) string {
	t.Helper()
	ws := &weakServer{mode: mode, key: make([]byte, 32), sse: sse}
	_, _ = rand.Read(ws.key)
	ts := httptest.NewServer(ws)
	t.Cleanup(ts.Close)
	return ts.URL + "/mcp"
}

func weakConfig(url string) Config {
	return Config{
		URL:        url,
		Tool:       "weak",
		Args:       json.RawMessage(`{"target":"nothing"}`),
		AltArgs:    json.RawMessage(`{"target":"everything"}`),
		OtherTool:  "weak_twin",
		Token:      aliceToken,
		OtherToken: bobToken,
	}
}

func (ws *weakServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	body, _ := io.ReadAll(r.Body)
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			RequestState   json.RawMessage            `json:"requestState"`
			InputResponses map[string]json.RawMessage `json:"inputResponses"`
		} `json:"params"`
	}
	if err := json.Unmarshal(body, &msg); err != nil {
		ws.write(w, nil, "", `{"code":-32700,"message":"parse error"}`)
		return
	}
	switch msg.Method {
	case "tools/list":
		ws.write(w, msg.ID, `{"resultType":"complete","tools":[`+
			`{"name":"weak","inputSchema":{"type":"object"}},`+
			`{"name":"weak_twin","inputSchema":{"type":"object"}}]}`, "")
	case "tools/call":
		accepted := true
		if len(msg.Params.RequestState) > 0 {
			accepted = ws.verify(msg.Params.RequestState)
		}
		if !accepted {
			ws.write(w, msg.ID, "", `{"code":-32602,"message":"bad requestState"}`)
			return
		}
		if _, ok := msg.Params.InputResponses["name"]; ok {
			ws.write(w, msg.ID, `{"resultType":"complete","content":[{"type":"text","text":"done"}]}`, "")
			return
		}
		st, _ := json.Marshal(ws.issue())
		ws.write(w, msg.ID, `{"resultType":"input_required","inputRequests":{"name":{"method":"elicitation/create",`+
			`"params":{"mode":"form","message":"Name?","requestedSchema":{"type":"object","properties":{"name":{"type":"string"}}}}}},`+
			`"requestState":`+string(st)+`}`, "")
	default:
		ws.write(w, msg.ID, "", `{"code":-32601,"message":"method not found"}`)
	}
}

// issue mints a state: random for the suffix checker, a nonce and its
// MAC for the others.
func (ws *weakServer) issue() string {
	nonce := make([]byte, 24)
	_, _ = rand.Read(nonce)
	if ws.mode == weakSuffix {
		return base64.RawURLEncoding.EncodeToString(nonce)
	}
	mac := hmac.New(sha256.New, ws.key)
	mac.Write(nonce)
	return base64.RawURLEncoding.EncodeToString(append(nonce, mac.Sum(nil)...))
}

func (ws *weakServer) verify(raw json.RawMessage) bool {
	switch ws.mode {
	case weakSuffix:
		var s string
		_ = json.Unmarshal(raw, &s)
		return !strings.HasSuffix(s, "-TAMPERED")
	case weakUnbound:
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return false
		}
		b, err := base64.RawURLEncoding.Strict().DecodeString(s)
		if err != nil || len(b) != 24+sha256.Size {
			return false
		}
		mac := hmac.New(sha256.New, ws.key)
		mac.Write(b[:24])
		return hmac.Equal(mac.Sum(nil), b[24:])
	}
	return false
}

// write answers with a result or an error, as JSON or, for tools/call on
// an SSE server, as an event stream that starts with a notification.
func (ws *weakServer) write(w http.ResponseWriter, id json.RawMessage, result, rpcErr string) {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	msg := `{"jsonrpc":"2.0","id":` + string(id) + `,"result":` + result + `}`
	if rpcErr != "" {
		msg = `{"jsonrpc":"2.0","id":` + string(id) + `,"error":` + rpcErr + `}`
	}
	if ws.sse && result != "" && strings.Contains(result, "resultType") && !strings.Contains(result, "tools") {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, ": keep-alive\n\n")
		fmt.Fprint(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\n")
		fmt.Fprint(w, "data: \"params\":{\"progressToken\":1,\"progress\":50}}\n\n")
		fmt.Fprintf(w, "event: message\ndata: %s\n\n", msg)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprint(w, msg)
}
