package streamablehttp

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mrtrkit/mrtrkit/discover"
	"github.com/mrtrkit/mrtrkit/internal/testkit"
	"github.com/mrtrkit/mrtrkit/internal/wire"
	"github.com/mrtrkit/mrtrkit/mrtr"
	"github.com/mrtrkit/mrtrkit/mrtr/mrtrtest"
)

// This file checks status.go, the transport's one mapping of answers to
// HTTP statuses: 200 for results and in-band errors, 404 for -32601, 400
// for every other envelope error, whoever raised it.

// newStatusServer returns a Server whose tools answer with the error a
// test chooses:
//
//   - "fail" returns mrtr.NewError(arguments.code, ...), or a plain Go
//     error when the code is 0;
//   - "ok" returns a result;
//   - "bad" returns mrtr.InvalidParamsError;
//   - "ask" emits one progress notification when arguments.stream is true,
//     then asks for a model completion (which needs the sampling
//     capability).
func newStatusServer(tb testing.TB) *mrtr.Server {
	tb.Helper()
	srv, err := mrtr.NewServer(discover.Description{Server: discover.Implementation{Name: "status", Version: "1"}},
		mrtr.WithCodec(testkit.Codec(tb)), mrtr.WithLogger(quiet))
	require.NoError(tb, err)
	add := func(name, schema string, h func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error)) {
		require.NoError(tb, srv.AddTool(mrtr.Tool{Name: name, InputSchema: json.RawMessage(schema)}, mrtr.HandlerFunc(h)))
	}
	add("fail", `{"type":"object","properties":{"code":{"type":"integer"}}}`, func(_ context.Context, req *mrtr.Request) (mrtr.Result, error) {
		var args struct{ Code int }
		if err := json.Unmarshal(req.Arguments, &args); err != nil {
			return nil, err
		}
		if args.Code == 0 {
			return nil, errors.New("a plain failure")
		}
		return nil, mrtr.NewError(mrtr.Code(args.Code), "failed on purpose", nil)
	})
	add("ok", `{"type":"object"}`, func(context.Context, *mrtr.Request) (mrtr.Result, error) {
		return mrtr.TextResult("ok"), nil
	})
	add("bad", `{"type":"object"}`, func(context.Context, *mrtr.Request) (mrtr.Result, error) {
		return nil, mrtr.InvalidParamsError("bad argument")
	})
	add("ask", `{"type":"object","properties":{"stream":{"type":"boolean"}}}`, func(_ context.Context, req *mrtr.Request) (mrtr.Result, error) {
		var args struct{ Stream bool }
		if err := json.Unmarshal(req.Arguments, &args); err != nil {
			return nil, err
		}
		if args.Stream {
			if err := req.Progress(1, nil, "thinking"); err != nil {
				return nil, err
			}
		}
		return mrtr.Ask("draft", &mrtr.SamplingRequest{Messages: []mrtr.SamplingMessage{mrtr.UserText("write")}, MaxTokens: 5}), nil
	})
	return srv
}

// newStatusFixture serves newStatusServer over loopback HTTP.
func newStatusFixture(t *testing.T) *fixture {
	t.Helper()
	h, err := New(newStatusServer(t), WithLogger(quiet))
	require.NoError(t, err)
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	return &fixture{url: ts.URL}
}

func TestStatusOf(t *testing.T) {
	// An envelope -32602 can only come from the server: a request whose
	// _meta lacks the protocol version.
	_, envelope := mrtrtest.Send(context.Background(), newStatusServer(t), "",
		mrtrtest.NewRequest(wire.MethodToolsList, nil).WithMeta(wire.MetaProtocolVersion, nil))
	require.NotNil(t, envelope)
	require.Equal(t, mrtr.CodeInvalidParams, envelope.Code)
	require.True(t, envelope.Envelope(), "%v", envelope)

	tests := []struct {
		name string
		err  *mrtr.Error
		want int
	}{
		{"a result", nil, http.StatusOK},
		{"-32700", mrtr.NewError(mrtr.CodeParseError, "m", nil), http.StatusBadRequest},
		{"-32600", mrtr.NewError(mrtr.CodeInvalidRequest, "m", nil), http.StatusBadRequest},
		{"-32601", mrtr.NewError(mrtr.CodeMethodNotFound, "m", nil), http.StatusNotFound},
		{"-32602 in-band", mrtr.InvalidParamsError("m"), http.StatusOK},
		{"-32602 in-band with data", mrtr.NewError(mrtr.CodeInvalidParams, "m", map[string]string{"k": "v"}), http.StatusOK},
		{"-32602 resource not found", mrtr.ResourceNotFoundError("file:///x"), http.StatusOK},
		{"-32602 requestState", mrtr.InvalidStateError(true), http.StatusOK},
		{"-32602 envelope", envelope, http.StatusBadRequest},
		{"-32603", mrtr.NewError(mrtr.CodeInternalError, "m", nil), http.StatusOK},
		{"-32020", mrtr.NewError(mrtr.CodeHeaderMismatch, "m", nil), http.StatusBadRequest},
		{"-32021", mrtr.NewError(mrtr.CodeMissingCapability, "m", nil), http.StatusBadRequest},
		{"-32022", mrtr.NewError(mrtr.CodeUnsupportedVersion, "m", nil), http.StatusBadRequest},
		{"a handler's own code", mrtr.NewError(-32001, "m", nil), http.StatusOK},
		{"a positive code", mrtr.NewError(7, "m", nil), http.StatusOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, statusOf(tt.err))
		})
	}
}

// statusCall is a request to the status server with every header right.
func statusCall(id int, tool, args, caps string) call {
	c := toolCall(id, tool, args)
	return c.withMeta(`{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":` + caps + `}`)
}

// TestStatusOnTheWire checks each code's status over real HTTP, raised
// by a handler and by the server's own ladder: the status follows the
// code and Envelope alone, never who raised the error.
func TestStatusOnTheWire(t *testing.T) {
	f := newStatusFixture(t)
	failing := func(code int) call {
		return statusCall(code, "fail", `{"code":`+strconv.Itoa(code)+`}`, `{}`)
	}
	tests := []struct {
		name     string
		req      call
		status   int
		code     mrtr.Code // 0: a result
		noEchoID bool      // the id could not be read
	}{
		{name: "result", req: statusCall(1, "ok", `{}`, `{}`), status: 200},

		// Errors a handler returns.
		{name: "handler -32700", req: failing(-32700), status: 400, code: mrtr.CodeParseError},
		{name: "handler -32600", req: failing(-32600), status: 400, code: mrtr.CodeInvalidRequest},
		{name: "handler -32601", req: failing(-32601), status: 404, code: mrtr.CodeMethodNotFound},
		{name: "handler -32602", req: failing(-32602), status: 200, code: mrtr.CodeInvalidParams},
		{name: "handler InvalidParamsError", req: statusCall(2, "bad", `{}`, `{}`), status: 200, code: mrtr.CodeInvalidParams},
		{name: "handler -32603", req: failing(-32603), status: 200, code: mrtr.CodeInternalError},
		{name: "handler plain error becomes -32603", req: failing(0), status: 200, code: mrtr.CodeInternalError},
		{name: "handler -32020", req: failing(-32020), status: 400, code: mrtr.CodeHeaderMismatch},
		{name: "handler -32021", req: failing(-32021), status: 400, code: mrtr.CodeMissingCapability},
		{name: "handler -32022", req: failing(-32022), status: 400, code: mrtr.CodeUnsupportedVersion},
		{name: "handler -32001", req: failing(-32001), status: 200, code: -32001},

		// Errors the server's ladder raises.
		{name: "ladder -32600 repeated params member", req: func() call {
			c := statusCall(3, "ok", `{}`, `{}`)
			c.body = strings.Replace(c.body, `"name":"ok"`, `"name":"ok","name":"ok"`, 1)
			return c
		}(), status: 400, code: mrtr.CodeInvalidRequest},
		{name: "ladder -32601 unknown method", req: func() call {
			c := statusCall(4, "ok", `{}`, `{}`).withHeader("Mcp-Method", "tools/frobnicate")
			c.body = strings.Replace(c.body, `"method":"tools/call"`, `"method":"tools/frobnicate"`, 1)
			return c
		}(), status: 404, code: mrtr.CodeMethodNotFound},
		{name: "ladder -32602 envelope: _meta without clientCapabilities", req: statusCall(5, "ok", `{}`, `{}`).
			withMeta(`{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}`), status: 400, code: mrtr.CodeInvalidParams},
		{name: "ladder -32602 in-band: unknown tool", req: statusCall(6, "nope", `{}`, `{}`), status: 200, code: mrtr.CodeInvalidParams},
		{name: "ladder -32602 in-band: strict door", req: statusCall(7, "ok", `{"a":1,"A":2}`, `{}`), status: 200, code: mrtr.CodeInvalidParams},
		{name: "ladder -32020 header mismatch", req: statusCall(8, "ok", `{}`, `{}`).withHeader("Mcp-Name", "ko"), status: 400, code: mrtr.CodeHeaderMismatch},
		{name: "ladder -32021 missing capability", req: statusCall(9, "ask", `{}`, `{}`), status: 400, code: mrtr.CodeMissingCapability},
		{name: "ladder -32022 unsupported version", req: statusCall(10, "ok", `{}`, `{}`).
			withMeta(`{"io.modelcontextprotocol/protocolVersion":"2099-01-01","io.modelcontextprotocol/clientCapabilities":{}}`).
			withHeader("MCP-Protocol-Version", "2099-01-01"), status: 400, code: mrtr.CodeUnsupportedVersion},

		// And the parser's.
		{name: "parser -32700", req: statusCall(11, "ok", `{}`, `{}`).withBody(`{"jsonrpc":`), status: 400, code: mrtr.CodeParseError, noEchoID: true},
		{name: "parser -32600", req: statusCall(12, "ok", `{}`, `{}`).withBody(`{"jsonrpc":"2.0","id":12,"method":""}`), status: 400, code: mrtr.CodeInvalidRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := f.do(t, tt.req)
			assert.Equal(t, tt.status, resp.StatusCode, "%s", body)
			assert.Equal(t, "application/json", resp.Header.Get("Content-Type"))
			m := decodeRPC(t, body)
			if tt.noEchoID {
				assert.Nil(t, m.ID)
			} else {
				var sent struct{ ID json.RawMessage }
				require.NoError(t, json.Unmarshal([]byte(tt.req.body), &sent))
				assert.JSONEq(t, string(sent.ID), string(m.ID), "the id is echoed")
			}
			if tt.code == 0 {
				assert.Nil(t, m.Error, "%s", body)
				assert.NotEmpty(t, m.Result)
				return
			}
			require.NotNil(t, m.Error, "%s", body)
			assert.Equal(t, int(tt.code), m.Error.Code, "%s", body)
			assert.Nil(t, m.Result)
		})
	}
}

// Once a response has switched to SSE its status is sent: an envelope
// error raised after that is the stream's last event, under 200.
func TestEnvelopeErrorAfterStreamStarted(t *testing.T) {
	f := newStatusFixture(t)
	c := statusCall(1, "ask", `{"stream":true}`, `{}`).
		withMeta(`{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"progressToken":"p"}`)
	resp, body := f.do(t, c)
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
	require.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	events, _ := readSSE(t, body)
	require.Len(t, events, 2, "the progress notification, then the response")
	assert.Equal(t, "notifications/progress", decodeRPC(t, []byte(events[0].data)).Method)
	last := decodeRPC(t, []byte(events[1].data))
	assert.JSONEq(t, `1`, string(last.ID))
	require.NotNil(t, last.Error)
	assert.Equal(t, int(mrtr.CodeMissingCapability), last.Error.Code)

	// The same call without a progress token is plain JSON, and 400.
	resp, body = f.do(t, statusCall(2, "ask", `{"stream":true}`, `{}`))
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode, "%s", body)
	assert.Equal(t, "application/json", resp.Header.Get("Content-Type"))
}

// FuzzHandlerStatus posts arbitrary bodies and mirrored headers to the
// Handler (in process, every transport check passed) and checks that
// every answer is one JSON-RPC response whose status agrees with its
// error: 404 only for -32601, 400 only for envelope codes, 200 never for
// a code that is always an envelope error, 202 only for a notification,
// and the request id echoed whenever the body carries a readable one.
func FuzzHandlerStatus(f *testing.F) {
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	seeds := [][3]string{
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ok","arguments":{},` + meta + `}}`, "tools/call", "ok"},
		{`{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":"fail","arguments":{"code":-32601},` + meta + `}}`, "tools/call", "fail"},
		{`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"ask","arguments":{},` + meta + `}}`, "tools/call", "ask"},
		{`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"ok","arguments":{"a":1,"A":2},` + meta + `}}`, "tools/call", "ok"},
		{`{"jsonrpc":"2.0","id":4,"method":"tools/list","params":{` + meta + `}}`, "tools/list", ""},
		{`{"jsonrpc":"2.0","id":5,"method":"tools/list"}`, "tools/list", ""},
		{`{"jsonrpc":"2.0","id":6,"method":"ping","params":{` + meta + `}}`, "ping", ""},
		{`{"jsonrpc":"2.0","method":"notifications/cancelled"}`, "", ""},
		{`{"jsonrpc":"2.0","id":7,"result":{}}`, "", ""},
		{`{"jsonrpc":"2.0","id":null,"error":{"code":1,"message":"m"}}`, "", ""},
		{`[{"jsonrpc":"2.0","id":8,"method":"tools/list"}]`, "tools/list", ""},
		{`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"ok","name":"ok"}}`, "tools/call", "ok"},
		{`{`, "", ""},
		{``, "", ""},
	}
	for _, s := range seeds {
		f.Add(s[0], s[1], s[2])
	}
	h, err := New(newStatusServer(f), WithLogger(quiet))
	require.NoError(f, err)
	alwaysEnvelope := map[int]bool{-32700: true, -32600: true, -32601: true, -32020: true, -32021: true, -32022: true}
	f.Fuzz(func(t *testing.T, body, method, name string) {
		msg, id, _ := mrtr.ParseMessage([]byte(body))
		if msg != nil && msg.Method == wire.MethodSubscriptionsListen {
			return // a listen stream stays open until the client leaves; listen has tests of its own
		}
		req := httptest.NewRequest(http.MethodPost, "http://localhost/mcp", strings.NewReader(body))
		req.Header = http.Header{
			"Content-Type":         {"application/json"},
			"Accept":               {"application/json, text/event-stream"},
			"Mcp-Protocol-Version": {"2026-07-28"},
			"Mcp-Method":           {method},
			"Mcp-Name":             {name},
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		status, out := rec.Code, rec.Body.Bytes()
		if status == http.StatusAccepted {
			if msg == nil || !msg.IsNotification() || len(out) != 0 {
				t.Fatalf("202 for %q, answer %q", body, out)
			}
			return
		}
		streamed := rec.Header().Get("Content-Type") == "text/event-stream"
		if streamed {
			// The status went out with the first event, before the
			// answer was known.
			events, _ := readSSE(t, out)
			if status != http.StatusOK || len(events) == 0 {
				t.Fatalf("status %d, %d events for %q", status, len(events), body)
			}
			out = []byte(events[len(events)-1].data)
		}
		var m rpc
		if err := json.Unmarshal(out, &m); err != nil {
			t.Fatalf("status %d, answer %q is not JSON: %v", status, out, err)
		}
		if (m.Error == nil) == (m.Result == nil) {
			t.Fatalf("answer %q has not exactly one of result and error", out)
		}
		if string(m.ID) != id.String() {
			t.Fatalf("body %q: answer id %s, want %q", body, m.ID, id.String())
		}
		switch {
		case streamed:
		case m.Error == nil:
			if status != http.StatusOK {
				t.Fatalf("a result with status %d", status)
			}
		case status == http.StatusNotFound:
			if m.Error.Code != int(mrtr.CodeMethodNotFound) {
				t.Fatalf("404 for code %d", m.Error.Code)
			}
		case status == http.StatusBadRequest:
			if !alwaysEnvelope[m.Error.Code] && m.Error.Code != int(mrtr.CodeInvalidParams) || m.Error.Code == int(mrtr.CodeMethodNotFound) {
				t.Fatalf("400 for code %d", m.Error.Code)
			}
		case status == http.StatusOK:
			if alwaysEnvelope[m.Error.Code] {
				t.Fatalf("200 for code %d (%s)", m.Error.Code, m.Error.Message)
			}
		default:
			t.Fatalf("status %d for %q", status, body)
		}
	})
}
