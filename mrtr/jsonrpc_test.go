package mrtr_test

import (
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
		{name: "posted result", body: `{"jsonrpc":"2.0","id":3,"result":{}}`, code: mrtr.CodeInvalidRequest, wantID: `3`},
		{name: "posted null result", body: `{"jsonrpc":"2.0","id":3,"result":null}`, code: mrtr.CodeInvalidRequest, wantID: `3`},
		{name: "posted error", body: `{"jsonrpc":"2.0","id":"e","error":{"code":-1,"message":"x"}}`, code: mrtr.CodeInvalidRequest, wantID: `"e"`},
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
			assert.Equal(t, 400, mrtr.HTTPStatus(err))
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

func TestIDConstructors(t *testing.T) {
	assert.Equal(t, `"a\"b"`, mrtr.StringID(`a"b`).String())
	assert.Equal(t, `-3`, mrtr.IntID(-3).String())
	var zero mrtr.ID
	assert.True(t, zero.IsZero())
	b, err := json.Marshal(zero)
	require.NoError(t, err)
	assert.Equal(t, `null`, string(b))
	b, err = json.Marshal(mrtr.IntID(5))
	require.NoError(t, err)
	assert.Equal(t, `5`, string(b))
}

func TestResponseEncoding(t *testing.T) {
	r := &mrtr.Response{ID: mrtr.StringID("x"), Result: json.RawMessage(`{"a":1}`)}
	b, err := json.Marshal(r)
	require.NoError(t, err)
	assert.JSONEq(t, `{"jsonrpc":"2.0","id":"x","result":{"a":1}}`, string(b))
	assert.Equal(t, 200, r.Status())

	r = &mrtr.Response{ID: mrtr.IntID(2), Error: mrtr.ErrMethodNotFound("nope")}
	b, err = r.AppendJSON([]byte("prefix:"))
	require.NoError(t, err)
	assert.Equal(t, `prefix:{"jsonrpc":"2.0","id":2,"error":{"code":-32601,"message":"Method not found: nope"}}`, string(b))
	assert.Equal(t, 404, r.Status())
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
	e := mrtr.ErrUnsupportedVersion(nil, "x")
	b, err := json.Marshal(e)
	require.NoError(t, err)
	assert.JSONEq(t, `{"code":-32022,"message":"Unsupported protocol version","data":{"supported":[],"requested":"x"}}`, string(b))

	e = mrtr.ErrResourceNotFound("file:///a")
	b, err = json.Marshal(e)
	require.NoError(t, err)
	assert.JSONEq(t, `{"code":-32602,"message":"Resource not found","data":{"uri":"file:///a"}}`, string(b))

	assert.Equal(t, "mcp error -32603: Internal error", mrtr.ErrInternal().Error())

	wrapped := fmt.Errorf("outer: %w", mrtr.ErrUnknownTool("t"))
	got, ok := mrtr.AsError(wrapped)
	require.True(t, ok)
	assert.Equal(t, mrtr.CodeInvalidParams, got.Code)
	_, ok = mrtr.AsError(errors.New("plain"))
	assert.False(t, ok)
}
