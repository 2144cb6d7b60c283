package mrtr

import (
	"bytes"
	"encoding/json"
	"strconv"
)

// ID is a JSON-RPC request id: a string or an integer, kept verbatim so
// that it is echoed exactly. The zero ID means "none" (a notification, or
// an id that could not be read).
type ID struct{ raw json.RawMessage }

// IsZero reports whether the id is absent.
func (id ID) IsZero() bool { return len(id.raw) == 0 }

// String returns the id's JSON text, or "" when absent.
func (id ID) String() string { return string(id.raw) }

// Raw returns the id's JSON text.
func (id ID) Raw() json.RawMessage { return id.raw }

// MarshalJSON renders the id verbatim, or null when absent.
func (id ID) MarshalJSON() ([]byte, error) {
	if id.IsZero() {
		return []byte("null"), nil
	}
	return id.raw, nil
}

// StringID returns an id holding a JSON string.
func StringID(s string) ID {
	b, _ := json.Marshal(s)
	return ID{raw: b}
}

// IntID returns an id holding a JSON integer.
func IntID(n int64) ID { return ID{raw: []byte(strconv.FormatInt(n, 10))} }

// validID reports whether raw is a JSON string or an integer.
func validID(raw json.RawMessage) bool {
	if len(raw) == 0 {
		return false
	}
	if raw[0] == '"' {
		var s string
		return json.Unmarshal(raw, &s) == nil
	}
	_, err := strconv.ParseInt(string(raw), 10, 64)
	return err == nil
}

// Message is one JSON-RPC request or notification as received.
type Message struct {
	// ID is the request id; zero for a notification.
	ID ID
	// Method is the JSON-RPC method, such as "tools/call".
	Method string
	// Params is the params object verbatim; nil when absent or null.
	Params json.RawMessage
}

// IsNotification reports whether the message has no id.
func (m *Message) IsNotification() bool { return m.ID.IsZero() }

// ParseMessage parses exactly one JSON-RPC request or notification. On
// failure it returns the error to answer with and, when it could be read,
// the request id to echo. The message shares memory with body (Params and
// the values handlers see are slices of it), so body must not be reused
// while the message is in use.
func ParseMessage(body []byte) (*Message, ID, *Error) {
	body = bytes.TrimSpace(body)
	if len(body) == 0 {
		return nil, ID{}, ErrParse("empty body")
	}
	if !json.Valid(body) {
		return nil, ID{}, ErrParse("body is not valid JSON")
	}
	switch body[0] {
	case '[':
		return nil, ID{}, ErrInvalidRequest("batches are not supported; send one message per request")
	case '{':
	default:
		return nil, ID{}, ErrInvalidRequest("message must be a JSON object")
	}
	var env struct {
		JSONRPC, ID, Method, Params, Result, Error json.RawMessage
	}
	var hasID bool
	err := eachMember(body, func(name string, v json.RawMessage) error {
		var slot *json.RawMessage
		switch name {
		case "jsonrpc":
			slot = &env.JSONRPC
		case "id":
			slot, hasID = &env.ID, true
		case "method":
			slot = &env.Method
		case "params":
			slot = &env.Params
		case "result":
			slot = &env.Result
		case "error":
			slot = &env.Error
		default:
			return nil
		}
		if *slot != nil {
			return errDuplicateMember
		}
		*slot = v
		return nil
	})
	if err != nil {
		return nil, ID{}, ErrInvalidRequest(err.Error())
	}
	var id ID
	if hasID && validID(env.ID) {
		id = ID{raw: append(json.RawMessage(nil), env.ID...)}
	}
	if !bytes.Equal(env.JSONRPC, []byte(`"2.0"`)) {
		return nil, id, ErrInvalidRequest(`jsonrpc must be "2.0"`)
	}
	if env.Result != nil || env.Error != nil {
		return nil, id, ErrInvalidRequest("clients do not send responses in this protocol version")
	}
	if hasID && id.IsZero() {
		return nil, ID{}, ErrInvalidRequest("id must be a string or an integer")
	}
	var method string
	if env.Method == nil || json.Unmarshal(env.Method, &method) != nil || method == "" {
		return nil, id, ErrInvalidRequest("method must be a non-empty string")
	}
	if env.Params != nil && !isAbsent(env.Params) && env.Params[0] != '{' {
		return nil, id, ErrInvalidRequest("params must be an object")
	}
	if isAbsent(env.Params) {
		env.Params = nil
	}
	return &Message{ID: id, Method: method, Params: env.Params}, id, nil
}

// Response is the JSON-RPC response to one request: a result or an error.
type Response struct {
	// ID is the id of the request answered; zero when it could not be read.
	ID ID
	// Result is the encoded result object, when Error is nil.
	Result json.RawMessage
	// Error is the error answered instead of a result; nil on success.
	Error *Error
}

// Status is the HTTP status that carries this response.
func (r *Response) Status() int { return HTTPStatus(r.Error) }

// MarshalJSON renders the response object.
func (r *Response) MarshalJSON() ([]byte, error) {
	return r.AppendJSON(nil)
}

// AppendJSON appends the response object to b.
func (r *Response) AppendJSON(b []byte) ([]byte, error) {
	b = append(b, `{"jsonrpc":"2.0"`...)
	if !r.ID.IsZero() {
		b = append(b, `,"id":`...)
		b = append(b, r.ID.raw...)
	}
	if r.Error != nil {
		eb, err := json.Marshal(r.Error)
		if err != nil {
			return nil, err
		}
		b = append(b, `,"error":`...)
		b = append(b, eb...)
	} else {
		b = append(b, `,"result":`...)
		b = append(b, r.Result...)
	}
	return append(b, '}'), nil
}

// encodeNotification renders a server-to-client notification.
func encodeNotification(method string, params any) ([]byte, error) {
	p, err := json.Marshal(params)
	if err != nil {
		return nil, err
	}
	b := make([]byte, 0, len(p)+len(method)+40)
	b = append(b, `{"jsonrpc":"2.0","method":`...)
	mb, _ := json.Marshal(method)
	b = append(b, mb...)
	b = append(b, `,"params":`...)
	b = append(b, p...)
	return append(b, '}'), nil
}
