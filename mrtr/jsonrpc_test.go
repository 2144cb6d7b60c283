package mrtr_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mrtrkit/mrtrkit/mrtr"
)

func TestParseMessageAccepts(t *testing.T) {
	tests := []struct {
		name         string
		body         string
		wantID       string // JSON text of the id, "" for a notification
		wantMethod   string
		wantParams   string // "" when params is absent
		notification bool
	}{
		{name: "integer id", body: `{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{}}`, wantID: `7`, wantMethod: "tools/list", wantParams: `{}`},
		{name: "negative integer id", body: `{"jsonrpc":"2.0","id":-12,"method":"m"}`, wantID: `-12`, wantMethod: "m"},
		{name: "large integer id kept verbatim", body: `{"jsonrpc":"2.0","id":9007199254740993,"method":"m"}`, wantID: `9007199254740993`, wantMethod: "m"},
		{name: "string id", body: `{"jsonrpc":"2.0","id":"abc","method":"m"}`, wantID: `"abc"`, wantMethod: "m"},
		{name: "empty string id", body: `{"jsonrpc":"2.0","id":"","method":"m"}`, wantID: `""`, wantMethod: "m"},
		{name: "escaped string id kept verbatim", body: `{"jsonrpc":"2.0","id":"a\u0062\n","method":"m"}`, wantID: `"a\u0062\n"`, wantMethod: "m"},
		{name: "notification", body: `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`, wantMethod: "notifications/cancelled", wantParams: `{"requestId":1}`, notification: true},
		{name: "null params is absent", body: `{"jsonrpc":"2.0","id":1,"method":"m","params":null}`, wantID: `1`, wantMethod: "m"},
		{name: "surrounding whitespace", body: " \n\t{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\"}\r\n ", wantID: `1`, wantMethod: "m"},
		{name: "member order does not matter", body: `{"params":{"a":1},"method":"m","id":2,"jsonrpc":"2.0"}`, wantID: `2`, wantMethod: "m", wantParams: `{"a":1}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			msg, id, err := mrtr.ParseMessage([]byte(tt.body))
			require.Nil(t, err)
			require.NotNil(t, msg)
			assert.Equal(t, tt.wantMethod, msg.Method)
			assert.Equal(t, tt.notification, msg.IsNotification())
			assert.Equal(t, tt.wantID, msg.ID.String())
			assert.Equal(t, tt.wantID, id.String())
			if tt.wantParams == "" {
				assert.Nil(t, msg.Params)
			} else {
				assert.JSONEq(t, tt.wantParams, string(msg.Params))
			}
			// The id is echoed byte for byte.
			resp := &mrtr.Response{ID: msg.ID, Result: json.RawMessage(`{}`)}
			b, merr := resp.AppendJSON(nil)
			require.NoError(t, merr)
			if tt.wantID != "" {
				assert.Contains(t, string(b), `"id":`+tt.wantID)
			} else {
				assert.NotContains(t, string(b), `"id"`)
			}
		})
	}
}

func TestParseMessageRejects(t *testing.T) {
	tests := []struct {
		name   string
		body   string
		code   mrtr.Code
		wantID string // id the error echoes, "" for none
	}{
		{name: "empty body", body: ``, code: mrtr.CodeParseError},
		{name: "blank body", body: "  \n", code: mrtr.CodeParseError},
		{name: "invalid JSON", body: `{"jsonrpc":"2.0",`, code: mrtr.CodeParseError},
		{name: "trailing garbage", body: `{"jsonrpc":"2.0","id":1,"method":"m"} x`, code: mrtr.CodeParseError},
		{name: "two objects", body: `{"jsonrpc":"2.0","id":1,"method":"m"}{"jsonrpc":"2.0","id":2,"method":"m"}`, code: mrtr.CodeParseError},
		{name: "batch", body: `[{"jsonrpc":"2.0","id":1,"method":"m"}]`, code: mrtr.CodeInvalidRequest},
		{name: "empty batch", body: `[]`, code: mrtr.CodeInvalidRequest},
		{name: "string", body: `"hello"`, code: mrtr.CodeInvalidRequest},
		{name: "number", body: `42`, code: mrtr.CodeInvalidRequest},
		{name: "null", body: `null`, code: mrtr.CodeInvalidRequest},
		{name: "missing jsonrpc", body: `{"id":1,"method":"m"}`, code: mrtr.CodeInvalidRequest, wantID: `1`},
		{name: "jsonrpc 1.0", body: `{"jsonrpc":"1.0","id":1,"method":"m"}`, code: mrtr.CodeInvalidRequest, wantID: `1`},
		{name: "jsonrpc number", body: `{"jsonrpc":2.0,"id":"x","method":"m"}`, code: mrtr.CodeInvalidRequest, wantID: `"x"`},
		{name: "jsonrpc escaped", body: `{"jsonrpc":"2\u002e0","id":1,"method":"m"}`, code: mrtr.CodeInvalidRequest, wantID: `1`},
		{name: "null id", body: `{"jsonrpc":"2.0","id":null,"method":"m"}`, code: mrtr.CodeInvalidRequest},
		{name: "float id", body: `{"jsonrpc":"2.0","id":1.5,"method":"m"}`, code: mrtr.CodeInvalidRequest},
		{name: "integral float id", body: `{"jsonrpc":"2.0","id":1.0,"method":"m"}`, code: mrtr.CodeInvalidRequest},
		{name: "exponent id", body: `{"jsonrpc":"2.0","id":1e3,"method":"m"}`, code: mrtr.CodeInvalidRequest},
		{name: "boolean id", body: `{"jsonrpc":"2.0","id":true,"method":"m"}`, code: mrtr.CodeInvalidRequest},
		{name: "object id", body: `{"jsonrpc":"2.0","id":{},"method":"m"}`, code: mrtr.CodeInvalidRequest},
		{name: "null result", body: `{"jsonrpc":"2.0","id":3,"result":null}`, code: mrtr.CodeInvalidRequest, wantID: `3`},
		{name: "array result", body: `{"jsonrpc":"2.0","id":3,"result":[]}`, code: mrtr.CodeInvalidRequest, wantID: `3`},
		{name: "result without id", body: `{"jsonrpc":"2.0","result":{}}`, code: mrtr.CodeInvalidRequest},
		{name: "result with null id", body: `{"jsonrpc":"2.0","id":null,"result":{}}`, code: mrtr.CodeInvalidRequest},
		{name: "error without id", body: `{"jsonrpc":"2.0","error":{"code":-1,"message":"x"}}`, code: mrtr.CodeInvalidRequest},
		{name: "result and error", body: `{"jsonrpc":"2.0","id":3,"result":{},"error":{"code":-1,"message":"x"}}`, code: mrtr.CodeInvalidRequest, wantID: `3`},
		{name: "method and result", body: `{"jsonrpc":"2.0","id":3,"method":"m","result":{}}`, code: mrtr.CodeInvalidRequest, wantID: `3`},
		{name: "error without code", body: `{"jsonrpc":"2.0","id":3,"error":{"message":"x"}}`, code: mrtr.CodeInvalidRequest, wantID: `3`},
		{name: "error with a float code", body: `{"jsonrpc":"2.0","id":3,"error":{"code":1.5,"message":"x"}}`, code: mrtr.CodeInvalidRequest, wantID: `3`},
		{name: "error without message", body: `{"jsonrpc":"2.0","id":3,"error":{"code":-1}}`, code: mrtr.CodeInvalidRequest, wantID: `3`},
		{name: "error not an object", body: `{"jsonrpc":"2.0","id":3,"error":"x"}`, code: mrtr.CodeInvalidRequest, wantID: `3`},
		{name: "duplicate method", body: `{"jsonrpc":"2.0","id":1,"method":"a","method":"b"}`, code: mrtr.CodeInvalidRequest},
		{name: "duplicate id", body: `{"jsonrpc":"2.0","id":1,"id":2,"method":"m"}`, code: mrtr.CodeInvalidRequest},
		{name: "missing method", body: `{"jsonrpc":"2.0","id":1}`, code: mrtr.CodeInvalidRequest, wantID: `1`},
		{name: "empty method", body: `{"jsonrpc":"2.0","id":1,"method":""}`, code: mrtr.CodeInvalidRequest, wantID: `1`},
		{name: "null method", body: `{"jsonrpc":"2.0","id":1,"method":null}`, code: mrtr.CodeInvalidRequest, wantID: `1`},
		{name: "number method", body: `{"jsonrpc":"2.0","id":1,"method":5}`, code: mrtr.CodeInvalidRequest, wantID: `1`},
		{name: "array params", body: `{"jsonrpc":"2.0","id":1,"method":"m","params":[1,2]}`, code: mrtr.CodeInvalidRequest, wantID: `1`},
		{name: "string params", body: `{"jsonrpc":"2.0","id":1,"method":"m","params":"x"}`, code: mrtr.CodeInvalidRequest, wantID: `1`},
		{name: "number params", body: `{"jsonrpc":"2.0","id":1,"method":"m","params":0}`, code: mrtr.CodeInvalidRequest, wantID: `1`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			msg, id, err := mrtr.ParseMessage([]byte(tt.body))
			require.NotNil(t, err)
			assert.Nil(t, msg)
			assert.Equal(t, tt.code, err.Code)
			assert.Equal(t, tt.wantID, id.String())
			assert.True(t, err.Envelope(), "a message that does not parse is an envelope error")
			// The error response is well formed and carries the id when known.
			b, merr := (&mrtr.Response{ID: id, Error: err}).AppendJSON(nil)
			require.NoError(t, merr)
			var resp map[string]json.RawMessage
			require.NoError(t, json.Unmarshal(b, &resp))
			assert.JSONEq(t, `"2.0"`, string(resp["jsonrpc"]))
			if tt.wantID != "" {
				assert.Equal(t, tt.wantID, string(resp["id"]))
			}
		})
	}
}

// A client of the initialize era answers the server's requests with
// responses: ParseMessage reads them (for transports that serve such
// clients next to the Server), and Server.Handle refuses them.
func TestParseMessageResponses(t *testing.T) {
	f := newFixture(t)
	tests := []struct {
		name   string
		body   string
		wantID string
		result string
		error  string
	}{
		{name: "result", body: `{"jsonrpc":"2.0","id":3,"result":{"roots":[]}}`, wantID: `3`, result: `{"roots":[]}`},
		{name: "empty result", body: `{"id":"r","result":{},"jsonrpc":"2.0"}`, wantID: `"r"`, result: `{}`},
		{name: "error", body: `{"jsonrpc":"2.0","id":"e","error":{"code":-1,"message":"x"}}`, wantID: `"e"`, error: `{"code":-1,"message":"x"}`},
		{name: "error with data", body: `{"jsonrpc":"2.0","id":4,"error":{"code":-32601,"message":"no","data":[1]}}`, wantID: `4`, error: `{"code":-32601,"message":"no","data":[1]}`},
		{name: "error with null id", body: `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}`, error: `{"code":-32700,"message":"x"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			msg, id, err := mrtr.ParseMessage([]byte(tt.body))
			require.Nil(t, err)
			require.NotNil(t, msg)
			assert.True(t, msg.IsResponse())
			assert.False(t, msg.IsNotification())
			assert.Empty(t, msg.Method)
			assert.Nil(t, msg.Params)
			assert.Equal(t, tt.wantID, msg.ID.String())
			assert.Equal(t, tt.wantID, id.String())
			if tt.result != "" {
				assert.Equal(t, tt.result, string(msg.Result))
				assert.Nil(t, msg.Error)
			} else {
				assert.Equal(t, tt.error, string(msg.Error))
				assert.Nil(t, msg.Result)
			}

			// Server.Handle refuses a response, echoing its id.
			resp := f.srv.Handle(context.Background(), &mrtr.Inbound{Message: msg})
			require.NotNil(t, resp, "a response gets an answer, it is not a notification")
			require.NotNil(t, resp.Error)
			assert.Equal(t, mrtr.CodeInvalidRequest, resp.Error.Code)
			assert.True(t, resp.Error.Envelope())
			assert.Equal(t, tt.wantID, resp.ID.String())
		})
	}

	// Requests are neither responses nor, with an id, notifications.
	msg, _, err := mrtr.ParseMessage([]byte(`{"jsonrpc":"2.0","id":1,"method":"m"}`))
	require.Nil(t, err)
	assert.False(t, msg.IsResponse())
	assert.False(t, msg.IsNotification())
}

func TestID(t *testing.T) {
	var zero mrtr.ID
	assert.True(t, zero.IsZero())
	assert.Equal(t, "", zero.String())
	b, err := json.Marshal(zero)
	require.NoError(t, err)
	assert.Equal(t, `null`, string(b))

	for _, raw := range []string{`5`, `-3`, `"a\"b"`, `"\u00e9"`, `9007199254740993`} {
		id := messageID(t, raw)
		assert.False(t, id.IsZero())
		assert.Equal(t, raw, id.String(), "the id is kept verbatim")
		b, err = json.Marshal(id)
		require.NoError(t, err)
		assert.Equal(t, raw, string(b))
	}
}

func TestResponseEncoding(t *testing.T) {
	r := &mrtr.Response{ID: messageID(t, `"x"`), Result: json.RawMessage(`{"a":1}`)}
	b, err := json.Marshal(r)
	require.NoError(t, err)
	assert.JSONEq(t, `{"jsonrpc":"2.0","id":"x","result":{"a":1}}`, string(b))

	r = &mrtr.Response{ID: messageID(t, `2`), Error: mrtr.NewError(mrtr.CodeMethodNotFound, "Method not found: nope", nil)}
	b, err = r.AppendJSON([]byte("prefix:"))
	require.NoError(t, err)
	assert.Equal(t, `prefix:{"jsonrpc":"2.0","id":2,"error":{"code":-32601,"message":"Method not found: nope"}}`, string(b))

	// An error whose id could not be read has no id member.
	r = &mrtr.Response{Error: mrtr.NewError(mrtr.CodeParseError, "Parse error: x", []int{1})}
	b, err = r.AppendJSON(nil)
	require.NoError(t, err)
	assert.Equal(t, `{"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error: x","data":[1]}}`, string(b))
}

func TestCodeStrings(t *testing.T) {
	for code, name := range map[mrtr.Code]string{
		mrtr.CodeParseError:         "parse_error",
		mrtr.CodeInvalidRequest:     "invalid_request",
		mrtr.CodeMethodNotFound:     "method_not_found",
		mrtr.CodeInvalidParams:      "invalid_params",
		mrtr.CodeInternalError:      "internal_error",
		mrtr.CodeHeaderMismatch:     "header_mismatch",
		mrtr.CodeMissingCapability:  "missing_required_client_capability",
		mrtr.CodeUnsupportedVersion: "unsupported_protocol_version",
		mrtr.Code(-1):               "code(-1)",
	} {
		assert.Equal(t, name, code.String())
	}
}

func TestErrorConstructors(t *testing.T) {
	tests := []struct {
		name string
		err  *mrtr.Error
		want string
	}{
		{"invalid params", mrtr.InvalidParamsError("bad city"), `{"code":-32602,"message":"bad city"}`},
		{"new error with data", mrtr.NewError(mrtr.CodeInvalidParams, "bad city", map[string]string{"field": "city"}), `{"code":-32602,"message":"bad city","data":{"field":"city"}}`},
		{"new error without data", mrtr.NewError(-32001, "quota", nil), `{"code":-32001,"message":"quota"}`},
		{"resource not found", mrtr.ResourceNotFoundError("file:///a"), `{"code":-32602,"message":"Resource not found","data":{"uri":"file:///a"}}`},
		{"invalid state", mrtr.InvalidStateError(false), `{"code":-32602,"message":"Invalid or expired requestState","data":{"reason":"invalid_request_state"}}`},
		{"expired state", mrtr.InvalidStateError(true), `{"code":-32602,"message":"Invalid or expired requestState","data":{"reason":"expired_request_state"}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := json.Marshal(tt.err)
			require.NoError(t, err)
			assert.JSONEq(t, tt.want, string(b))
			// Errors a handler builds travel in-band, like every -32602
			// that is not about _meta.
			assert.False(t, tt.err.Envelope())
		})
	}
	assert.Equal(t, "mcp error -32603: Internal error", mrtr.NewError(mrtr.CodeInternalError, "Internal error", nil).Error())

	// A handler's error with a code of the envelope is one.
	for _, code := range []mrtr.Code{mrtr.CodeParseError, mrtr.CodeInvalidRequest, mrtr.CodeMethodNotFound, mrtr.CodeHeaderMismatch, mrtr.CodeMissingCapability, mrtr.CodeUnsupportedVersion} {
		assert.True(t, mrtr.NewError(code, "x", nil).Envelope(), "%v", code)
	}
	for _, code := range []mrtr.Code{mrtr.CodeInvalidParams, mrtr.CodeInternalError, -32001} {
		assert.False(t, mrtr.NewError(code, "x", nil).Envelope(), "%v", code)
	}
}

func TestErrorsAsAndCodeOf(t *testing.T) {
	wrapped := fmt.Errorf("outer: %w", mrtr.ResourceNotFoundError("file:///x"))
	var e *mrtr.Error
	require.True(t, errors.As(wrapped, &e))
	assert.Equal(t, mrtr.CodeInvalidParams, e.Code)
	assert.Equal(t, "Resource not found", e.Message)
	assert.False(t, errors.As(errors.New("plain"), &e))

	assert.Equal(t, mrtr.CodeInvalidParams, mrtr.CodeOf(wrapped))
	assert.Equal(t, mrtr.Code(-32001), mrtr.CodeOf(mrtr.NewError(-32001, "x", nil)))
	assert.Equal(t, mrtr.CodeInternalError, mrtr.CodeOf(errors.New("plain")), "as the Server answers it")
	assert.Equal(t, mrtr.Code(0), mrtr.CodeOf(nil))
}

// Regression: the envelope was decoded into a struct, so member names
// matched ignoring case: {"JSONRPC":"2.0",...} passed the version check
// and {"METHOD":"tools/list"} was taken as the method, although JSON-RPC
// member names are case-sensitive. The same decoding read params (a
// "NAME" member overrode "name"), the _meta version probe and
// ClientCapabilities ({"SAMPLING":{}} declared sampling). Now
// ParseMessage, params.decode and ClientCapabilities.UnmarshalJSON all
// read members through wire.EachMember, by exact name.
func TestRegressionJSONRPCMemberNamesAreCaseSensitive(t *testing.T) {
	for _, body := range []string{
		`{"JSONRPC":"2.0","id":1,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":1,"METHOD":"tools/list"}`,
		`{"jsonrpc":"2.0","id":1,"Method":"tools/list"}`,
	} {
		t.Run(body, func(t *testing.T) {
			msg, _, err := mrtr.ParseMessage([]byte(body))
			if assert.NotNil(t, err, "parsed as method %q", methodOf(msg)) {
				assert.Equal(t, mrtr.CodeInvalidRequest, err.Code)
			}
		})
	}
}

// A params member the Server reads that appears twice is refused before
// anything reads either copy: two readers of one body must never see two
// different names, states or answers.
func TestDuplicateParamsMembersAreRefused(t *testing.T) {
	f := newFixture(t)
	f.addTool("echo", func(context.Context, *mrtr.Request) (mrtr.Result, error) { return mrtr.TextResult("ran"), nil })
	m := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	for _, params := range []string{
		`"name":"echo","name":"other",` + m,
		`"name":"echo","arguments":{},"arguments":{"a":1},` + m,
		`"name":"echo","requestState":"a","requestState":"b",` + m,
		`"name":"echo","inputResponses":{},"inputResponses":{},` + m,
		`"name":"echo",` + m + `,` + m,
	} {
		e := f.raw(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{`+params+`}}`).fail(t, mrtr.CodeInvalidRequest)
		require.Equal(t, "Invalid request: params: duplicate member name", e.Message, params)
	}
	// Members the Server does not read may repeat, as before.
	f.raw(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","x":1,"x":2,` + m + `}}`).complete(t)
}
