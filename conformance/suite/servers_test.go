package suite

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

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
	require.NoError(t, err)
	codec, err := state.NewAEAD(ring)
	if hmacState {
		codec, err = state.NewHMAC(ring)
	}
	require.NoError(t, err)
	srv, err := mrtr.NewServer(discover.Description{
		Server:       discover.Implementation{Name: "suite-test", Version: "1"},
		Capabilities: discover.Capabilities{Tools: &discover.ListChanged{}},
	}, mrtr.WithCodec(codec), mrtr.WithLogger(quiet))
	require.NoError(t, err)
	ask := mrtr.HandlerFunc(func(_ context.Context, req *mrtr.Request) (mrtr.Result, error) {
		var args struct {
			Topic string `json:"topic"`
		}
		if err := json.Unmarshal(req.Arguments, &args); err != nil || args.Topic == "" {
			return mrtr.ErrorResult("topic is required"), nil
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
		require.NoError(t, srv.AddTool(mrtr.Tool{Name: name, Description: "Asks for a name", InputSchema: json.RawMessage(askSchema)}, ask))
	}
	principals := map[string]string{aliceToken: "alice", bobToken: "bob"}
	auth := streamablehttp.BearerAuthenticator(func(_ context.Context, token string) (*mrtr.TokenInfo, error) {
		if p, ok := principals[token]; ok {
			return &mrtr.TokenInfo{Subject: p}, nil
		}
		return nil, errors.New("unknown token")
	}, "")
	h, err := streamablehttp.New(srv, streamablehttp.WithAuthenticator(auth), streamablehttp.WithLogger(quiet))
	require.NoError(t, err)
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	return ts.URL + "/mcp"
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
	// weakUnsigned issues base64url(JSON{tool,args,principal,step}) with
	// no MAC, parses it strictly (exact members, strict base64) and
	// compares it with the request: every bit flip breaks it, so it passes
	// the state and replay scenarios, but the client can write one itself.
	weakUnsigned
	// signedJSON is weakUnsigned with an HMAC: a JWT-like
	// base64url(JSON).base64url(HMAC), bound to tool, arguments and
	// principal. It is correct, and must pass state.forged.
	signedJSON
	// meaningSigned issues base64url(JSON{tool,args,principal,step,mac})
	// where the MAC covers the claims re-encoded by the server, not the
	// bytes sent: it accepts a re-encoding of the same meaning and refuses
	// any change of meaning. It is correct, and must pass state.forged.
	meaningSigned
	// weakMergeOnRetry checks a MAC like weakUnbound but, on a retry,
	// completes with any answers at all, asked or not.
	weakMergeOnRetry
	// lenientPadded checks a MAC like weakUnbound over a padded base64url
	// state, which it decodes leniently (padding optional). It is correct
	// as far as integrity goes: truncation or extension must not fail it.
	lenientPadded
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
			Name           string                     `json:"name"`
			Arguments      json.RawMessage            `json:"arguments"`
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
		bind := binding{tool: msg.Params.Name, args: msg.Params.Arguments, principal: r.Header.Get("Authorization")}
		accepted := true
		if len(msg.Params.RequestState) > 0 {
			accepted = ws.verify(msg.Params.RequestState, bind)
		}
		if !accepted {
			ws.write(w, msg.ID, "", `{"code":-32602,"message":"bad requestState"}`)
			return
		}
		_, answered := msg.Params.InputResponses["name"]
		if ws.mode == weakMergeOnRetry && len(msg.Params.RequestState) > 0 && len(msg.Params.InputResponses) > 0 {
			answered = true
		}
		if answered {
			ws.write(w, msg.ID, `{"resultType":"complete","content":[{"type":"text","text":"done"}]}`, "")
			return
		}
		st, _ := json.Marshal(ws.issue(bind))
		ws.write(w, msg.ID, `{"resultType":"input_required","inputRequests":{"name":{"method":"elicitation/create",`+
			`"params":{"mode":"form","message":"Name?","requestedSchema":{"type":"object","properties":{"name":{"type":"string"}}}}}},`+
			`"requestState":`+string(st)+`}`, "")
	default:
		ws.write(w, msg.ID, "", `{"code":-32601,"message":"method not found"}`)
	}
}

// binding is what a call is: the tool, its arguments and the principal.
type binding struct {
	tool      string
	args      json.RawMessage
	principal string
}

// claims is the JSON of the weakUnsigned and signedJSON states.
type claims struct {
	Tool      string          `json:"tool"`
	Args      json.RawMessage `json:"args"`
	Principal string          `json:"principal"`
	Step      int             `json:"step"`
}

// issue mints a state: random for the suffix checker, JSON claims for
// weakUnsigned and signedJSON, a nonce and its MAC for the others.
func (ws *weakServer) issue(b binding) string {
	switch ws.mode {
	case weakUnsigned, signedJSON:
		var args bytes.Buffer
		_ = json.Compact(&args, b.args)
		payload, _ := json.Marshal(claims{Tool: b.tool, Args: args.Bytes(), Principal: b.principal, Step: 1})
		seg := base64.RawURLEncoding.EncodeToString(payload)
		if ws.mode == weakUnsigned {
			return seg
		}
		mac := hmac.New(sha256.New, ws.key)
		mac.Write([]byte(seg))
		return seg + "." + base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
	}
	if ws.mode == meaningSigned {
		var args bytes.Buffer
		_ = json.Compact(&args, b.args)
		c := claims{Tool: b.tool, Args: args.Bytes(), Principal: b.principal, Step: 1}
		payload, _ := json.Marshal(macClaims{claims: c, MAC: ws.meaningMAC(c)})
		return base64.RawURLEncoding.EncodeToString(payload)
	}
	nonce := make([]byte, 24)
	_, _ = rand.Read(nonce)
	if ws.mode == weakSuffix {
		return base64.RawURLEncoding.EncodeToString(nonce)
	}
	mac := hmac.New(sha256.New, ws.key)
	mac.Write(nonce)
	if ws.mode == lenientPadded {
		// 56 bytes: one "=" of padding.
		return base64.URLEncoding.EncodeToString(append(nonce, mac.Sum(nil)...))
	}
	return base64.RawURLEncoding.EncodeToString(append(nonce, mac.Sum(nil)...))
}

// meaningMAC is the MAC of meaningSigned: over the server's own encoding
// of the claims.
func (ws *weakServer) meaningMAC(c claims) string {
	var args bytes.Buffer
	_ = json.Compact(&args, c.Args)
	c.Args = args.Bytes()
	b, _ := json.Marshal(c)
	m := hmac.New(sha256.New, ws.key)
	m.Write(b)
	return hex.EncodeToString(m.Sum(nil))
}

type macClaims struct {
	claims
	MAC string `json:"mac"`
}

// checkClaims parses the JSON claims strictly (exactly the four members,
// in any order) and compares them with the call.
func checkClaims(payload []byte, b binding) bool {
	var members map[string]json.RawMessage
	if json.Unmarshal(payload, &members) != nil || len(members) != 4 {
		return false
	}
	for _, k := range []string{"tool", "args", "principal", "step"} {
		if _, ok := members[k]; !ok {
			return false
		}
	}
	var c claims
	if json.Unmarshal(payload, &c) != nil {
		return false
	}
	return c.Tool == b.tool && c.Principal == b.principal && c.Step == 1 && sameJSON(c.Args, b.args)
}

func (ws *weakServer) verify(raw json.RawMessage, b binding) bool {
	switch ws.mode {
	case weakUnsigned, signedJSON:
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return false
		}
		seg := s
		if ws.mode == signedJSON {
			i := strings.IndexByte(s, '.')
			if i < 0 {
				return false
			}
			seg = s[:i]
			sig, err := base64.RawURLEncoding.Strict().DecodeString(s[i+1:])
			mac := hmac.New(sha256.New, ws.key)
			mac.Write([]byte(seg))
			if err != nil || !hmac.Equal(mac.Sum(nil), sig) {
				return false
			}
		}
		payload, err := base64.RawURLEncoding.Strict().DecodeString(seg)
		return err == nil && checkClaims(payload, b)
	case meaningSigned:
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return false
		}
		payload, err := base64.RawURLEncoding.Strict().DecodeString(s)
		var mc macClaims
		if err != nil || json.Unmarshal(payload, &mc) != nil {
			return false
		}
		return hmac.Equal([]byte(ws.meaningMAC(mc.claims)), []byte(mc.MAC)) &&
			mc.Tool == b.tool && mc.Principal == b.principal && mc.Step == 1 && sameJSON(mc.Args, b.args)
	case lenientPadded:
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return false
		}
		nb, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(s, "="))
		if err != nil || len(nb) != 24+sha256.Size {
			return false
		}
		mac := hmac.New(sha256.New, ws.key)
		mac.Write(nb[:24])
		return hmac.Equal(mac.Sum(nil), nb[24:])
	}
	switch ws.mode {
	case weakSuffix:
		var s string
		_ = json.Unmarshal(raw, &s)
		return !strings.HasSuffix(s, "-TAMPERED")
	case weakUnbound, weakMergeOnRetry:
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

// refuseAll answers every request with HTTP status and a JSON-RPC error
// of code: a server that refuses everything, which a scenario without a
// control would take for one that refuses what it must.
func refuseAll(t *testing.T, status, code int) string {
	t.Helper()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":null,"error":{"code":%d,"message":"refused"}}`, code)
	}))
	t.Cleanup(ts.Close)
	return ts.URL + "/mcp"
}

// newPickServer serves, with mrtrkit, a tool "pick" that asks the model,
// by sampling under the key pick_files, for a JSON array of listed paths,
// and refuses any other answer with -32602 naming the key, as
// examples/summarize_repo does. It is correct.
func newPickServer(t *testing.T) string {
	t.Helper()
	ring, err := state.GenerateKeyRing()
	require.NoError(t, err)
	codec, err := state.NewAEAD(ring)
	require.NoError(t, err)
	srv, err := mrtr.NewServer(discover.Description{
		Server:       discover.Implementation{Name: "pick-test", Version: "1"},
		Capabilities: discover.Capabilities{Tools: &discover.ListChanged{}},
	}, mrtr.WithCodec(codec), mrtr.WithLogger(quiet))
	require.NoError(t, err)
	listed := map[string]bool{"README.md": true, "main.go": true}
	pick := mrtr.HandlerFunc(func(_ context.Context, req *mrtr.Request) (mrtr.Result, error) {
		if a, ok := req.Responses.Sampling("pick_files"); ok {
			var paths []string
			if json.Unmarshal([]byte(a.Text()), &paths) != nil || len(paths) == 0 {
				return nil, mrtr.NewError(mrtr.CodeInvalidParams, "Invalid answer to pick_files: not a JSON array of paths", map[string]string{"key": "pick_files"})
			}
			for _, p := range paths {
				if !listed[p] {
					return nil, mrtr.NewError(mrtr.CodeInvalidParams, "Invalid answer to pick_files: unknown path", map[string]string{"key": "pick_files"})
				}
			}
			return &mrtr.CallToolResult{Content: []mrtr.Content{mrtr.Text("picked")}}, nil
		}
		return mrtr.Ask("pick_files", &mrtr.SamplingRequest{
			Messages:  []mrtr.SamplingMessage{{Role: "user", Content: []mrtr.SamplingContent{{Type: "text", Text: "Pick files among README.md, main.go"}}}},
			MaxTokens: 100,
		}), nil
	})
	schema := json.RawMessage(`{"type":"object","properties":{"dir":{"type":"string"}}}`)
	require.NoError(t, srv.AddTool(mrtr.Tool{Name: "pick", Description: "Picks files", InputSchema: schema}, pick))
	h, err := streamablehttp.New(srv, streamablehttp.WithLogger(quiet))
	require.NoError(t, err)
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	return ts.URL + "/mcp"
}
