package suite

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mrtrkit/mrtrkit/discover"
	"github.com/mrtrkit/mrtrkit/mrtr"
	"github.com/mrtrkit/mrtrkit/mrtr/legacy"
	"github.com/mrtrkit/mrtrkit/transport/streamablehttp"
)

// This file holds the servers the legacy scenarios are tested against:
// the fixture's stack built in process (mrtr, mrtr/legacy and
// streamablehttp), which must pass them all, and the same stack behind a
// middleware that breaks one property of the initialize era at a time,
// which must fail the scenario that checks it.

// scripted returns a handler that asks the rounds in turn, one round per
// call: a nil round is state-only (a retry is asked for, nothing else).
// The round reached travels in the sealed state; a round whose questions
// are not all answered is asked again.
func scripted(rounds ...map[string]mrtr.InputRequest) mrtr.Handler {
	return mrtr.HandlerFunc(func(_ context.Context, req *mrtr.Request) (mrtr.Result, error) {
		next := 0
		if req.State != nil {
			n, err := strconv.Atoi(string(req.State))
			if err != nil {
				return nil, err
			}
			next = n
			answered := map[string]bool{}
			for _, k := range req.Responses.Keys() {
				answered[k] = true
			}
			for k := range rounds[n-1] {
				if !answered[k] {
					next = n - 1
				}
			}
		}
		if next >= len(rounds) {
			return &mrtr.CallToolResult{Content: []mrtr.Content{mrtr.Text(fmt.Sprintf("done after %d rounds", len(rounds)))}}, nil
		}
		return &mrtr.InputRequired{Requests: rounds[next], State: []byte(strconv.Itoa(next + 1))}, nil
	})
}

// endless asks one question per round until the server's round limit.
func endless() mrtr.Handler {
	return mrtr.HandlerFunc(func(_ context.Context, req *mrtr.Request) (mrtr.Result, error) {
		n := 0
		if req.State != nil {
			n, _ = strconv.Atoi(string(req.State))
		}
		return &mrtr.InputRequired{Requests: map[string]mrtr.InputRequest{"q" + strconv.Itoa(n): nameForm()}, State: []byte(strconv.Itoa(n + 1))}, nil
	})
}

func nameForm() *mrtr.ElicitRequest {
	return &mrtr.ElicitRequest{
		Message:         "Your name?",
		RequestedSchema: &mrtr.ElicitSchema{Type: "object", Properties: map[string]json.RawMessage{"name": json.RawMessage(`{"type":"string"}`)}, Required: []string{"name"}},
	}
}

func greeting() *mrtr.SamplingRequest {
	return &mrtr.SamplingRequest{Messages: []mrtr.SamplingMessage{mrtr.UserText("Say hello.")}, MaxTokens: 20}
}

// legacyToolNames are the tools of the legacy stack the tests call.
var legacyToolNames = []string{"one_round", "two_rounds", "state_only", "three_inputs"}

// newLegacyStack serves, in process and as the fixture server does, one
// mrtr.Server to both eras: tools that ask one round, two rounds, three
// rounds of which one is state-only, three requests in one round, and
// without end; logging; a resource to subscribe to. With auth, bearer
// tokens of two principals are required.
func newLegacyStack(t *testing.T, auth bool) http.Handler {
	t.Helper()
	srv, err := mrtr.NewServer(discover.Description{
		Server: discover.Implementation{Name: "legacy-suite-test", Version: "1"},
		Capabilities: discover.Capabilities{
			Logging:   &discover.Empty{},
			Tools:     &discover.ListChanged{},
			Resources: &discover.ResourcesCapability{Subscribe: true},
		},
		LegacyVersions: []string{"2025-11-25", "2025-06-18"},
	}, mrtr.WithLogger(quiet))
	require.NoError(t, err)
	schema := json.RawMessage(`{"type":"object","properties":{"topic":{"type":"string"}}}`)
	tools := map[string]mrtr.Handler{
		"one_round":  scripted(map[string]mrtr.InputRequest{"name": nameForm()}),
		"two_rounds": scripted(map[string]mrtr.InputRequest{"name": nameForm()}, map[string]mrtr.InputRequest{"greeting": greeting()}),
		"state_only": scripted(map[string]mrtr.InputRequest{"roots": &mrtr.RootsRequest{}}, nil, map[string]mrtr.InputRequest{"name": nameForm()}),
		"three_inputs": scripted(map[string]mrtr.InputRequest{
			"name": nameForm(), "greeting": greeting(), "roots": &mrtr.RootsRequest{},
		}),
		"endless": endless(),
	}
	for name, h := range tools {
		require.NoError(t, srv.AddTool(mrtr.Tool{Name: name, Description: "asks", InputSchema: schema}, h))
	}
	readme := mrtr.HandlerFunc(func(_ context.Context, req *mrtr.Request) (mrtr.Result, error) {
		return &mrtr.ReadResourceResult{Contents: []mrtr.ResourceContents{mrtr.TextResource(req.URI, "text/plain", "hello")}}, nil
	})
	require.NoError(t, srv.AddResource(mrtr.Resource{URI: "test://readme", Name: "readme"}, readme))
	eng, err := legacy.New(srv, legacy.WithLogger(quiet))
	require.NoError(t, err)
	opts := []streamablehttp.Option{streamablehttp.WithLegacy(eng), streamablehttp.WithLogger(quiet)}
	if auth {
		principals := map[string]string{aliceToken: "alice", bobToken: "bob"}
		opts = append(opts, streamablehttp.WithAuthenticator(streamablehttp.BearerAuthenticator(func(_ context.Context, token string) (*mrtr.TokenInfo, error) {
			if p, ok := principals[token]; ok {
				return &mrtr.TokenInfo{Subject: p}, nil
			}
			return nil, errors.New("unknown token")
		}, "")))
	}
	h, err := streamablehttp.New(srv, opts...)
	require.NoError(t, err)
	t.Cleanup(func() { _ = srv.Close() })
	return h
}

// serve starts h on a loopback port and returns the endpoint's URL.
func serve(t *testing.T, h http.Handler) string {
	t.Helper()
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	return ts.URL + "/mcp"
}

// legacyFlaw is what a weakened server gets wrong about the initialize
// era; each breaks one property a legacy scenario checks.
type legacyFlaw int

const (
	flawNone legacyFlaw = iota
	// flawLeakResultType adds "resultType":"complete" to tools/call results.
	flawLeakResultType
	// flawLeakLegMeta puts the server's identity in the _meta of every leg.
	flawLeakLegMeta
	// flawLeakCode turns an isError tools/call result (a capability the
	// session lacks) into the error -32021 of 2026-07-28.
	flawLeakCode
	// flawPingResultType answers ping with {"resultType":"complete"}.
	flawPingResultType
	// flawLegsFromZero numbers legs from 0.
	flawLegsFromZero
	// flawLegsPerCall numbers the legs of every call from 1 again.
	flawLegsPerCall
	// flawLegsOnGet sends legs on the session's GET stream, not the POST's.
	flawLegsOnGet
	// flawCancelIgnored drops the client's notifications/cancelled.
	flawCancelIgnored
	// flawNoLegCancel drops the server's notifications/cancelled for legs.
	flawNoLegCancel
	// flawLateAnswer400 answers 400 to an answer for a leg not open.
	flawLateAnswer400
	// flawUnknown400 answers 400 instead of 404 for a session it does not know.
	flawUnknown400
	// flawDeleteIgnored answers DELETE 204 and keeps the session.
	flawDeleteIgnored
	// flawSessionOptional serves a request without a session id on the
	// last session opened.
	flawSessionOptional
	// flawErrorStatus sends JSON-RPC errors on a live session with 400.
	flawErrorStatus
	// flawUnbound serves a session to any principal.
	flawUnbound
	// flawCrossSessionAnswers routes an answer to whichever session has a
	// leg open with its id.
	flawCrossSessionAnswers
)

// flawed is a middleware in front of the legacy stack that rewrites
// requests and responses to introduce its flaw.
type flawed struct {
	flaw legacyFlaw
	next http.Handler

	mu    sync.Mutex
	open  map[string]map[string]bool   // flawLateAnswer400, flawCrossSessionAnswers: legs sent and not answered, by session
	gets  map[string]func([]byte)      // flawLegsOnGet: writes to a session's GET stream
	fake  map[string]map[string]string // flawLegsPerCall: by session, the id shown → the real id
	owner map[string]string            // flawUnbound: the Authorization that opened each session
	last  string                       // flawSessionOptional: the last session opened
}

func weaken(h http.Handler, flaw legacyFlaw) http.Handler {
	return &flawed{flaw: flaw, next: h, open: map[string]map[string]bool{}, gets: map[string]func([]byte){},
		fake: map[string]map[string]string{}, owner: map[string]string{}}
}

// fexchange is one HTTP exchange through the middleware.
type fexchange struct {
	f          *flawed
	auth       string
	sid        string
	rpcMethod  string
	legs       []string          // flawLateAnswer400: the real ids of the legs sent on this exchange
	realToFake map[string]string // flawLegsPerCall
}

// setMember returns the JSON object raw with member name set to v.
func setMember(raw []byte, name string, v any) []byte {
	var obj map[string]json.RawMessage
	if json.Unmarshal(raw, &obj) != nil || obj == nil {
		return raw
	}
	b, _ := json.Marshal(v)
	obj[name] = b
	out, _ := json.Marshal(obj)
	return out
}

func writeJSONError(w http.ResponseWriter, status int, id json.RawMessage, message string) {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32600,"message":%q}}`, id, message)
}

func (f *flawed) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var msg lmsg
	_ = json.Unmarshal(body, &msg)
	x := &fexchange{f: f, sid: r.Header.Get(hdrSession), rpcMethod: msg.Method, auth: r.Header.Get("Authorization"), realToFake: map[string]string{}}
	isResponse := r.Method == http.MethodPost && msg.IsResponse()

	f.mu.Lock()
	switch f.flaw {
	case flawCancelIgnored:
		if msg.Method == "notifications/cancelled" {
			f.mu.Unlock()
			w.WriteHeader(http.StatusAccepted)
			return
		}
	case flawDeleteIgnored:
		if r.Method == http.MethodDelete {
			f.mu.Unlock()
			w.WriteHeader(http.StatusNoContent)
			return
		}
	case flawLateAnswer400:
		if isResponse {
			key := idText(msg.ID)
			ok := f.open[x.sid][key]
			delete(f.open[x.sid], key)
			if !ok {
				f.mu.Unlock()
				writeJSONError(w, http.StatusBadRequest, nil, "no such request")
				return
			}
		}
	case flawLegsFromZero:
		if isResponse {
			if n, err := strconv.ParseInt(string(msg.ID), 10, 64); err == nil {
				body = setMember(body, "id", n+1)
			}
		}
	case flawLegsPerCall:
		if isResponse {
			if real, ok := f.fake[x.sid][idText(msg.ID)]; ok {
				body = setMember(body, "id", json.RawMessage(real))
			}
		}
	case flawCrossSessionAnswers:
		if key := idText(msg.ID); isResponse && !f.open[x.sid][key] {
			for sid, legs := range f.open {
				if legs[key] {
					delete(legs, key)
					x.sid = sid
					r.Header.Set(hdrSession, sid)
					break
				}
			}
		}
	case flawSessionOptional:
		if x.sid == "" && r.Method == http.MethodPost && msg.Method != "initialize" && f.last != "" {
			x.sid = f.last
			r.Header.Set(hdrSession, f.last)
		}
	case flawUnbound:
		if o, ok := f.owner[x.sid]; ok && x.sid != "" && o != x.auth {
			r.Header.Set("Authorization", o)
		}
	}
	f.mu.Unlock()

	r.Body = io.NopCloser(bytes.NewReader(body))
	r.ContentLength = int64(len(body))
	t := &ftap{w: w, x: x}
	if f.flaw == flawLegsOnGet && r.Method == http.MethodGet && x.sid != "" {
		f.mu.Lock()
		f.gets[x.sid] = t.inject
		f.mu.Unlock()
		defer func() {
			f.mu.Lock()
			delete(f.gets, x.sid)
			f.mu.Unlock()
		}()
	}
	f.next.ServeHTTP(t, r)
	t.finish()
	if f.flaw == flawLateAnswer400 || f.flaw == flawCrossSessionAnswers {
		// The exchange ended: its legs are no longer open.
		f.mu.Lock()
		for _, id := range x.legs {
			delete(f.open[x.sid], id)
		}
		f.mu.Unlock()
	}
}

// started sees the response headers: it records the sessions opened.
func (x *fexchange) started(h http.Header) {
	sid := h.Get(hdrSession)
	if x.rpcMethod != "initialize" || sid == "" {
		return
	}
	x.f.mu.Lock()
	defer x.f.mu.Unlock()
	x.f.last = sid
	x.f.owner[sid] = x.auth
}

// message rewrites one JSON-RPC message the server sends; nil drops it.
func (x *fexchange) message(raw []byte) []byte {
	var msg lmsg
	if json.Unmarshal(raw, &msg) != nil {
		return raw
	}
	f := x.f
	if f.flaw == flawLegsOnGet && msg.IsRequest() {
		// Outside f.mu: the GET stream's own writes take its lock first.
		f.mu.Lock()
		inject := f.gets[x.sid]
		f.mu.Unlock()
		if inject != nil {
			inject(raw)
		}
		return nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	switch f.flaw {
	case flawLeakResultType:
		if msg.IsResponse() && msg.Result != nil && x.rpcMethod == "tools/call" {
			return setMember(raw, "result", json.RawMessage(setMember(msg.Result, "resultType", "complete")))
		}
	case flawLeakLegMeta:
		if msg.IsRequest() {
			return setMember(raw, "params", json.RawMessage(setMember(msg.Params, "_meta",
				map[string]any{"io.modelcontextprotocol/serverInfo": map[string]string{"name": "flawed", "version": "1"}})))
		}
	case flawLeakCode:
		if msg.IsResponse() && x.rpcMethod == "tools/call" && bytes.Contains(msg.Result, []byte(`"isError":true`)) {
			return []byte(`{"jsonrpc":"2.0","id":` + string(msg.ID) + `,"error":{"code":-32021,"message":"Missing capability"}}`)
		}
	case flawPingResultType:
		if msg.IsResponse() && x.rpcMethod == "ping" {
			return setMember(raw, "result", map[string]string{"resultType": "complete"})
		}
	case flawLegsFromZero:
		if msg.IsRequest() {
			n, _ := strconv.ParseInt(string(msg.ID), 10, 64)
			return setMember(raw, "id", n-1)
		}
		if msg.Method == "notifications/cancelled" {
			var p struct {
				RequestID int64 `json:"requestId"`
			}
			_ = json.Unmarshal(msg.Params, &p)
			return setMember(raw, "params", json.RawMessage(setMember(msg.Params, "requestId", p.RequestID-1)))
		}
	case flawLegsPerCall:
		if msg.IsRequest() {
			shown := strconv.Itoa(len(x.realToFake) + 1)
			x.realToFake[idText(msg.ID)] = shown
			if f.fake[x.sid] == nil {
				f.fake[x.sid] = map[string]string{}
			}
			f.fake[x.sid][shown] = idText(msg.ID)
			return setMember(raw, "id", json.RawMessage(shown))
		}
		if msg.Method == "notifications/cancelled" {
			var p struct {
				RequestID json.RawMessage `json:"requestId"`
			}
			_ = json.Unmarshal(msg.Params, &p)
			if shown, ok := x.realToFake[idText(p.RequestID)]; ok {
				return setMember(raw, "params", json.RawMessage(setMember(msg.Params, "requestId", json.RawMessage(shown))))
			}
		}
	case flawNoLegCancel:
		if msg.Method == "notifications/cancelled" {
			return nil
		}
	case flawLateAnswer400, flawCrossSessionAnswers:
		if msg.IsRequest() {
			if f.open[x.sid] == nil {
				f.open[x.sid] = map[string]bool{}
			}
			f.open[x.sid][idText(msg.ID)] = true
			x.legs = append(x.legs, idText(msg.ID))
		}
	}
	return raw
}

// status rewrites the status of a JSON response.
func (x *fexchange) status(status int, body []byte) int {
	switch x.f.flaw {
	case flawUnknown400:
		if status == http.StatusNotFound {
			return http.StatusBadRequest
		}
	case flawErrorStatus:
		var msg lmsg
		if status == http.StatusOK && x.sid != "" && json.Unmarshal(body, &msg) == nil && msg.Error != nil {
			return http.StatusBadRequest
		}
	}
	return status
}

// ftap is the ResponseWriter the middleware gives the stack: it passes an
// event stream on event by event, rewritten, and holds a JSON body until
// the handler returns, to rewrite it and its status.
type ftap struct {
	w  http.ResponseWriter
	x  *fexchange
	mu sync.Mutex

	decided, sse, closed bool
	status               int
	buf                  []byte
}

func (t *ftap) Header() http.Header { return t.w.Header() }

func (t *ftap) WriteHeader(code int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.decide(code)
}

func (t *ftap) decide(code int) {
	if t.decided {
		return
	}
	t.decided, t.status = true, code
	t.x.started(t.w.Header())
	if strings.HasPrefix(t.w.Header().Get("Content-Type"), "text/event-stream") {
		t.sse = true
		t.w.WriteHeader(code)
	}
}

func (t *ftap) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.decide(http.StatusOK)
	t.buf = append(t.buf, b...)
	for t.sse {
		i := bytes.Index(t.buf, []byte("\n\n"))
		if i < 0 {
			break
		}
		ev := append([]byte(nil), t.buf[:i+2]...)
		t.buf = t.buf[i+2:]
		if out := t.event(ev); out != nil {
			if _, err := t.w.Write(out); err != nil {
				return 0, err
			}
		}
	}
	return len(b), nil
}

// event rewrites one event; comments pass as they are.
func (t *ftap) event(ev []byte) []byte {
	var data [][]byte
	for _, line := range bytes.Split(bytes.TrimRight(ev, "\n"), []byte("\n")) {
		if p, ok := bytes.CutPrefix(line, []byte("data: ")); ok {
			data = append(data, p)
		}
	}
	if len(data) == 0 {
		return ev
	}
	out := t.x.message(bytes.Join(data, []byte("\n")))
	if out == nil {
		return nil
	}
	return frame(out)
}

func frame(msg []byte) []byte {
	return append(append([]byte("event: message\ndata: "), msg...), '\n', '\n')
}

func (t *ftap) Flush() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.sse && !t.closed {
		_ = http.NewResponseController(t.w).Flush()
	}
}

// Unwrap lets http.ResponseController reach the connection's deadlines.
func (t *ftap) Unwrap() http.ResponseWriter { return t.w }

// inject writes a message to this (GET) stream.
func (t *ftap) inject(msg []byte) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.sse && !t.closed {
		_, _ = t.w.Write(frame(msg))
		_ = http.NewResponseController(t.w).Flush()
	}
}

// finish writes a held JSON body, rewritten, with its status.
func (t *ftap) finish() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.closed = true
	if !t.decided || t.sse {
		return
	}
	body := t.buf
	if len(bytes.TrimSpace(body)) > 0 {
		body = t.x.message(body)
	}
	status := t.x.status(t.status, body)
	if len(body) > 0 {
		t.w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	} else {
		t.w.Header().Del("Content-Length")
	}
	t.w.WriteHeader(status)
	_, _ = t.w.Write(body)
}
