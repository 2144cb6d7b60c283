package client

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
)

// message is any JSON-RPC message a server sends: a response (ID with
// Result or Error), a request (ID and Method) or a notification (Method
// only). Result and Params stay raw so that nothing is re-encoded.
type message struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *RPCError       `json:"error,omitempty"`
}

func (m *message) hasID() bool { return len(m.ID) > 0 && string(m.ID) != "null" }

// isResponse reports whether m answers a request.
func (m *message) isResponse() bool { return m.Method == "" && (m.Result != nil || m.Error != nil) }

// intID returns m's id as the integer the client sent, or -1.
func (m *message) intID() int64 {
	n, err := strconv.ParseInt(string(m.ID), 10, 64)
	if err != nil {
		return -1
	}
	return n
}

// parseMessage parses one JSON-RPC message from untrusted bytes.
func parseMessage(b []byte) (*message, error) {
	var m message
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("not a JSON-RPC message: %w", err)
	}
	if m.JSONRPC != "2.0" {
		return nil, errors.New(`not a JSON-RPC 2.0 message (no "jsonrpc":"2.0")`)
	}
	if m.Method == "" && m.Result == nil && m.Error == nil {
		return nil, errors.New("a JSON-RPC message with neither method, result nor error")
	}
	if m.Method == "" && m.Result != nil && m.Error != nil {
		return nil, errors.New("a JSON-RPC response with both result and error")
	}
	return &m, nil
}

// member is one member of a JSON object, kept in order and verbatim.
type member struct {
	name  string
	value json.RawMessage
}

// encodeJSON encodes v without HTML escaping and without a trailing
// newline; json.RawMessage values keep their bytes.
func encodeJSON(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

func mustJSON(v any) json.RawMessage {
	b, err := encodeJSON(v)
	if err != nil {
		panic("client: value does not encode: " + err.Error())
	}
	return b
}

// objectOf renders members as a JSON object, in order. Values are
// written as given (they are valid JSON produced here or received from
// the server), so a requestState goes back byte for byte.
func objectOf(members []member) []byte {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range members {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(mustJSON(m.name))
		b.WriteByte(':')
		b.Write(m.value)
	}
	b.WriteByte('}')
	return b.Bytes()
}

// requestBody renders one JSON-RPC request (or a notification when id is
// 0: request ids are never 0).
func requestBody(id int64, method string, params []byte) []byte {
	m := []member{{"jsonrpc", json.RawMessage(`"2.0"`)}}
	if id != 0 {
		m = append(m, member{"id", json.RawMessage(strconv.FormatInt(id, 10))})
	}
	m = append(m, member{"method", mustJSON(method)})
	if params != nil {
		m = append(m, member{"params", params})
	}
	return objectOf(m)
}

// responseBody renders the client's answer to a server's request id.
func responseBody(id json.RawMessage, result any, rerr *RPCError) []byte {
	m := []member{{"jsonrpc", json.RawMessage(`"2.0"`)}, {"id", id}}
	if rerr != nil {
		m = append(m, member{"error", mustJSON(rerr)})
	} else {
		r, err := encodeJSON(result)
		if err != nil {
			m = append(m, member{"error", mustJSON(&RPCError{Code: -32603, Message: "the client's answer does not encode: " + err.Error()})})
		} else {
			m = append(m, member{"result", r})
		}
	}
	return objectOf(m)
}
