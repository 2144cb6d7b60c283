package mrtr

import (
	"bytes"
	"encoding/json"
	"strconv"

	"github.com/mrtrkit/mrtrkit/internal/strictjson"
	"github.com/mrtrkit/mrtrkit/internal/wire"
)

// This file is what a transport needs; handler authors never use it. See
// "Writing a transport" in the package documentation.

// Inbound is one parsed message a transport hands to Server.Handle.
type Inbound struct {
	// Message is the parsed request or notification (see ParseMessage).
	Message *Message
	// Principal is who the transport authenticated; "" when anonymous.
	// It comes from the transport's authenticator, never from clientInfo.
	Principal string
	// Token is what the authenticator learned of the caller's credentials
	// (its Subject is Principal); nil when there is none.
	Token *TokenInfo
	// Headers are the request headers an operator chose to pass on to
	// handlers (a tenant header set by a gateway, say), by lower-cased
	// name; nil for none.
	Headers map[string]string
	// Peer is who the transport sees at the other end (the client's IP
	// address on Streamable HTTP), "" when it cannot tell. The limits of
	// anonymous callers count per peer, so that one anonymous client
	// cannot use up the share of all the others.
	Peer string
	// Mirror holds the values the transport carries beside the body (the
	// MCP-Protocol-Version, Mcp-Method, Mcp-Name and Mcp-Param-* headers on
	// Streamable HTTP), already decoded. Nil for a transport without them,
	// such as stdio: then no header checks are made.
	Mirror *Mirror
	// Emit delivers one encoded server-to-client notification related to
	// this request (progress, log, listen notifications). Nil when the
	// transport cannot deliver notifications.
	Emit func(notification []byte) error
}

// ID is a JSON-RPC request id: a string or an integer, kept verbatim so
// that it is echoed exactly. The zero ID means "none" (a notification, or
// an id that could not be read).
type ID struct{ raw json.RawMessage }

// IsZero reports whether the id is absent.
func (id ID) IsZero() bool { return len(id.raw) == 0 }

// String returns the id's JSON text, such as 7 or "a7", or "" when absent.
func (id ID) String() string { return string(id.raw) }

// MarshalJSON renders the id verbatim, or null when absent.
func (id ID) MarshalJSON() ([]byte, error) {
	if id.IsZero() {
		return []byte("null"), nil
	}
	return id.raw, nil
}

// validID reports whether raw is a JSON string or an integer.
func validID(raw json.RawMessage) bool {
	if len(raw) == 0 {
		return false
	}
	if raw[0] == '"' {
		_, ok := wire.String(raw)
		return ok
	}
	_, err := strconv.ParseInt(string(raw), 10, 64)
	return err == nil
}

// Message is one JSON-RPC message as received: a request, a notification
// or (from a client of the initialize era answering the server) a
// response.
type Message struct {
	// ID is the request id; zero for a notification.
	ID ID
	// Method is the JSON-RPC method, such as "tools/call"; "" for a
	// response.
	Method string
	// Params is the params object verbatim; nil when absent or null.
	Params json.RawMessage
	// Result is the result of a response, verbatim; nil otherwise.
	Result json.RawMessage
	// Error is the error object of a response, verbatim; nil otherwise.
	Error json.RawMessage

	// params holds the members of Params the Server reads, found by
	// ParseMessage in its one pass over the body (nil for a Message built
	// some other way), and paramsErr what was wrong with them. args is
	// what the strict door found in params.arguments in that same pass.
	params    *params
	paramsErr error
	args      strictjson.Verdict
}

// IsNotification reports whether the message is a notification: a method
// and no id.
func (m *Message) IsNotification() bool { return m.Method != "" && m.ID.IsZero() }

// IsResponse reports whether the message is a response: a result or an
// error and no method. Clients of MCP 2026-07-28 never send one; clients
// of the initialize era answer the server's requests with them.
func (m *Message) IsResponse() bool { return m.Method == "" }

// ParseMessage parses exactly one JSON-RPC message: a request, a
// notification or a response (callers serving MCP 2026-07-28 refuse the
// last, as Server.Handle does). Member names are matched exactly and
// duplicates are refused. On failure it returns the error to answer with
// and, when it could be read, the request id to echo. The message shares
// memory with body (Params and the values handlers see are slices of it),
// so body must not be reused while the message is in use.
func ParseMessage(body []byte) (*Message, ID, *Error) {
	body = bytes.TrimSpace(body)
	if e := notAnObject(body); e != nil {
		return nil, ID{}, e
	}
	var env envelope
	if e := env.read(body); e != nil {
		return nil, ID{}, e
	}
	var id ID
	if env.hasID && validID(env.ID) {
		id = ID{raw: append(json.RawMessage(nil), env.ID...)}
	}
	if !bytes.Equal(env.JSONRPC, []byte(`"2.0"`)) {
		return nil, id, invalidRequest(`jsonrpc must be "2.0"`)
	}
	if env.Method == nil && (env.Result != nil || env.Error != nil) {
		return parseResponse(id, env.hasID, env.Result, env.Error)
	}
	return env.request(id)
}

// notAnObject refuses a body that is not one JSON object: an empty body
// or invalid JSON is a parse error, a batch or any other value an invalid
// request. It returns nil when body starts as an object.
func notAnObject(body []byte) *Error {
	if len(body) == 0 {
		return parseError("empty body")
	}
	if body[0] == '{' {
		return nil
	}
	if !strictjson.Valid(body) {
		return parseError("body is not valid JSON")
	}
	if body[0] == '[' {
		return invalidRequest("batches are not supported; send one message per request")
	}
	return invalidRequest("message must be a JSON object")
}

// envelope is a message's members as read by one pass over the body: the
// raw values of the envelope, the members of params when it is an object,
// and the pre-judged verdict on params.arguments.
type envelope struct {
	JSONRPC, ID, Method, Params, Result, Error json.RawMessage

	hasID bool
	room  *parsedMessage // where the message and its params go, once params is seen
	perr  error          // what reading params' members found wrong
	args  strictjson.Verdict
	dup   bool // an envelope member appears twice
}

// read makes the one pass that validates the body, splits the envelope
// and, when params is an object, splits its members too, so that no later
// step walks the body again to find them.
func (env *envelope) read(body []byte) *Error {
	// Only room and perr are captured by the closure that outlives the
	// call, so that env stays on the caller's stack.
	var room *parsedMessage
	var perr error
	err := strictjson.Object(body, func(name []byte, val json.RawMessage) error {
		var slot *json.RawMessage
		switch string(name) {
		case "jsonrpc":
			slot = &env.JSONRPC
		case "id":
			slot, env.hasID = &env.ID, true
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
			env.dup = true
		}
		*slot = val
		return nil
	}, func(name []byte) func([]byte, json.RawMessage) error {
		if string(name) != "params" || room != nil {
			return nil
		}
		// The params the Server reads go into the message's own room.
		room = new(parsedMessage)
		return func(n []byte, val json.RawMessage) error {
			if err := room.p.set(string(n), val); err != nil && perr == nil {
				perr = err
			}
			return nil
		}
	}, &env.args)
	env.room, env.perr = room, perr
	if err != nil {
		return parseError("body is not valid JSON")
	}
	if env.dup {
		return invalidRequest(wire.ErrDuplicateMember.Error())
	}
	return nil
}

// request checks the envelope of a request or a notification, whose id
// (zero for a notification) is id, and returns its message.
func (env *envelope) request(id ID) (*Message, ID, *Error) {
	if env.Result != nil || env.Error != nil {
		return nil, id, invalidRequest("a message has either a method or a result or error")
	}
	if env.hasID && id.IsZero() {
		return nil, ID{}, invalidRequest("id must be a string or an integer")
	}
	method, ok := wire.Interned(env.Method, methodNames)
	if env.Method == nil || !ok || method == "" {
		return nil, id, invalidRequest("method must be a non-empty string")
	}
	if env.Params != nil && !isAbsent(env.Params) && env.Params[0] != '{' {
		return nil, id, invalidRequest("params must be an object")
	}
	room := env.room
	if isAbsent(env.Params) || room == nil {
		env.Params, env.perr = nil, nil
		room = new(parsedMessage) // params absent: none to read
	}
	room.msg = Message{ID: id, Method: method, Params: env.Params, params: &room.p, paramsErr: env.perr, args: env.args}
	return &room.msg, id, nil
}

// parsedMessage is a parsed request and its params as the Server reads
// them, allocated at once.
type parsedMessage struct {
	msg Message
	p   params
}

// parseResponse checks a response: exactly one of result (an object) and
// error (an object with an integer code and a string message), and an id,
// which only an error response may leave null.
func parseResponse(id ID, hasID bool, result, errObj json.RawMessage) (*Message, ID, *Error) {
	if result != nil && errObj != nil {
		return nil, id, invalidRequest("a response has either a result or an error")
	}
	if id.IsZero() && (result != nil || !hasID) {
		return nil, ID{}, invalidRequest("a response needs the id of the request it answers")
	}
	if result != nil {
		if result[0] != '{' {
			return nil, id, invalidRequest("result must be an object")
		}
		return &Message{ID: id, Result: result}, id, nil
	}
	var e struct {
		Code    *int64  `json:"code"`
		Message *string `json:"message"`
	}
	if errObj[0] != '{' || json.Unmarshal(errObj, &e) != nil || e.Code == nil || e.Message == nil {
		return nil, id, invalidRequest("error must be an object with an integer code and a string message")
	}
	return &Message{ID: id, Error: errObj}, id, nil
}

// Response is the JSON-RPC response to one request: a result or an error.
type Response struct {
	// ID is the id of the request answered; zero when it could not be read.
	ID ID
	// Result is the encoded result object, when Error is nil.
	Result json.RawMessage
	// Error is the error answered instead of a result; nil on success.
	Error *Error

	pooled *[]byte // the buffer Result lies in, when Release may reuse it
}

// Release hands the memory Result lies in back to the Server, which
// renders later results into it, and sets Result to nil. A transport
// calls it once it has written the response and holds nothing of Result
// any longer; it is never required (a response not released is left to
// the garbage collector) and releasing a second time does nothing.
// Release the *Response that Handle returned, never a copy of it.
func (r *Response) Release() {
	bp := r.pooled
	if bp == nil {
		return
	}
	r.pooled, r.Result = nil, nil
	putResultBuf(bp)
}

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
	b = strconv.AppendQuote(b, method)
	b = append(b, `,"params":`...)
	b = append(b, p...)
	return append(b, '}'), nil
}

// ClaimedVersion returns the protocol version the message claims in
// params._meta, as every request of MCP 2026-07-28 and later does, and
// whether it claims one (a string under "io.modelcontextprotocol/protocolVersion"). A transport
// that serves clients of both eras classifies by it: a claim means a
// modern request, whatever else the message says.
func (m *Message) ClaimedVersion() (string, bool) {
	var meta json.RawMessage
	if m.params != nil {
		meta = m.params.Meta
	} else if len(m.Params) > 0 {
		_ = wire.EachMember(m.Params, func(name string, v json.RawMessage) error {
			if name == "_meta" {
				meta = v
			}
			return nil
		})
	}
	if isAbsent(meta) || meta[0] != '{' {
		return "", false
	}
	var version string
	found := false
	_ = wire.EachMember(meta, func(name string, v json.RawMessage) error {
		if name == wire.MetaProtocolVersion {
			version, found = wire.String(v)
		}
		return nil
	})
	return version, found
}
