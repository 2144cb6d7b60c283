package client_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mrtrkit/mrtrkit/client"
)

// rawPost posts body with h to url through the raw layer.
func rawPost(t *testing.T, url string, h http.Header, body []byte) *client.RawResponse {
	t.Helper()
	req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, url, bytes.NewReader(body))
	require.NoError(t, err)
	req.Header = h
	resp, err := client.RawDo(nil, req)
	require.NoError(t, err)
	t.Cleanup(func() { _ = resp.Close() })
	return resp
}

// The raw layer sends exactly what it was given (a repeated member, a
// requestState byte for byte, the chosen headers) and reads an event
// stream as the client does: the response to the request is returned,
// the server's request and notification before it go to each, in order.
func TestRawPostReadsTheStreamUpToTheResponse(t *testing.T) {
	var got seen
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got.Header, got.Body = r.Header.Clone(), mustRead(r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, ": a comment\r\n"+
			"data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progress\":1}}\r\n\r\n"+
			"event: other\ndata: {\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{\"ignored\":true}}\n\n"+
			"data: {\"jsonrpc\":\"2.0\",\"id\":1,\n"+
			"data: \"method\":\"elicitation/create\",\"params\":{}}\n\n"+
			"data: {\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{\"requestState\":\"a\\u003cb\"}}\n\n"+
			"data: {\"jsonrpc\":\"2.0\",\"method\":\"after\"}\n\n")
	}))
	defer ts.Close()

	state := json.RawMessage(`"a\u003cb"`) // escaped as the server wrote it
	params := client.RawObject(
		client.RawMember{Name: "name", Value: client.RawString("ask")},
		client.RawMember{Name: "name", Value: client.RawString("ask")},
		client.RawMember{Name: "requestState", Value: state},
		client.RawMember{Name: "_meta", Value: client.RawMeta(client.LatestVersion, json.RawMessage(`{}`), client.Implementation{Name: "t", Version: "1"})},
	)
	h := client.RawHeader(client.LatestVersion, "tools/call", "ask é")
	h.Set("Origin", "http://evil.example")
	resp := rawPost(t, ts.URL, h, client.RawRequestBody(7, "tools/call", params))

	var before []string
	m, err := resp.Await(7, func(m *client.RawMessage) {
		switch {
		case m.IsRequest():
			before = append(before, "request "+m.Method+" "+string(m.ID))
		case m.IsNotification():
			before = append(before, "notification "+m.Method)
		}
	})
	require.NoError(t, err)
	require.NotNil(t, m)
	assert.JSONEq(t, `{"requestState":"a<b"}`, string(m.Result))
	assert.Equal(t, []string{"notification notifications/progress", "request elicitation/create 1"}, before,
		"the event of another type is skipped; a data field split over lines is one message")
	assert.Equal(t, "text/event-stream", resp.ContentType)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Contains(t, string(resp.Seen()), ": a comment")

	assert.Equal(t, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"ask","name":"ask","requestState":"a\u003cb",`+
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},`+
		`"io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"}}}}`, string(got.Body))
	assert.Equal(t, "application/json", got.Header.Get("Content-Type"))
	assert.Equal(t, "application/json, text/event-stream", got.Header.Get("Accept"))
	assert.Equal(t, "2026-07-28", got.Header.Get("Mcp-Protocol-Version"))
	assert.Equal(t, "tools/call", got.Header.Get("Mcp-Method"))
	assert.Equal(t, client.EncodeHeaderValue("ask é"), got.Header.Get("Mcp-Name"))
	assert.True(t, strings.HasPrefix(got.Header.Get("Mcp-Name"), "=?base64?"))
	assert.Equal(t, "http://evil.example", got.Header.Get("Origin"))

	// What is left of the stream is still there to read.
	m, err = resp.Next()
	require.NoError(t, err)
	assert.Equal(t, "after", m.Method)
	_, err = resp.Next()
	assert.Equal(t, io.EOF, err)
}

// A JSON body is one message or a batch; what is not JSON-RPC is
// skipped but kept in Seen; an error without an id answers when nothing
// else does.
func TestRawJSONBodies(t *testing.T) {
	body := ""
	status := http.StatusOK
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}))
	defer ts.Close()
	post := func() *client.RawResponse {
		return rawPost(t, ts.URL, client.RawHeader("", "", ""), client.RawRequestBody(3, "ping", nil))
	}

	body = `[{"jsonrpc":"2.0","id":2,"result":{}},{"jsonrpc":"2.0","id":3,"error":{"code":-32600,"message":"no"}}]`
	resp := post()
	assert.Equal(t, "application/json", resp.ContentType)
	var ids []string
	for {
		m, err := resp.Next()
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		ids = append(ids, string(m.ID))
		assert.True(t, m.IsResponse())
	}
	assert.Equal(t, []string{"2", "3"}, ids)

	body, status = `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}`, http.StatusBadRequest
	m, err := post().Await(3, nil)
	require.NoError(t, err)
	require.NotNil(t, m)
	assert.Equal(t, -32700, m.Error.Code)
	assert.False(t, m.HasID())

	body, status = `{"jsonrpc":"2.0","id":4,"result":{}}`, http.StatusOK
	m, err = post().Await(3, nil)
	require.NoError(t, err)
	assert.Nil(t, m, "a response to another id is not the response")

	body, status = "Forbidden: bad host", http.StatusForbidden
	resp = post()
	m, err = resp.Await(3, nil)
	require.NoError(t, err)
	assert.Nil(t, m)
	assert.Equal(t, http.StatusForbidden, resp.StatusCode)
	assert.Equal(t, "Forbidden: bad host", string(resp.Seen()))
}

// The raw builders render what a Client sends: a notification without
// an id, a response to the server's id, Mcp-Param-* headers from the
// schema's x-mcp-header declarations (encoded), and a refusal of a
// declaration no client may honour.
func TestRawBuilders(t *testing.T) {
	assert.Equal(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, string(client.RawRequestBody(0, "notifications/initialized", nil)))
	assert.Equal(t, `{"jsonrpc":"2.0","id":"s-1","result":{"roots":[]}}`,
		string(client.RawResponseBody(json.RawMessage(`"s-1"`), json.RawMessage(`{"roots":[]}`), nil)))
	assert.Equal(t, `{"jsonrpc":"2.0","id":4,"error":{"code":-32601,"message":"Method not found"}}`,
		string(client.RawResponseBody(json.RawMessage(`4`), nil, &client.RPCError{Code: -32601, Message: "Method not found"})))

	schema := json.RawMessage(`{"type":"object","properties":{"topic":{"type":"string","x-mcp-header":"Topic"},` +
		`"n":{"type":"integer","x-mcp-header":"N"},"opt":{"type":"string","x-mcp-header":"Opt"}}}`)
	h, err := client.RawParamHeaders(schema, json.RawMessage(`{"topic":" spaced","n":3,"opt":null}`))
	require.NoError(t, err)
	assert.Equal(t, http.Header{"Mcp-Param-Topic": {client.EncodeHeaderValue(" spaced")}, "Mcp-Param-N": {"3"}}, h)

	_, err = client.RawParamHeaders(json.RawMessage(`{"properties":{"a":{"type":"object","x-mcp-header":"A"}}}`), json.RawMessage(`{"a":{}}`))
	assert.Error(t, err)

	h = client.RawHeader(client.LegacyVersion, "", "")
	assert.Empty(t, h.Get("Mcp-Method"))
	assert.Empty(t, h.Get("Mcp-Name"))
	assert.Equal(t, client.LegacyVersion, h.Get("Mcp-Protocol-Version"))
}

func mustRead(r io.Reader) []byte {
	b, _ := io.ReadAll(r)
	return b
}
