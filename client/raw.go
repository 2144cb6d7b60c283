package client

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"strconv"

	"github.com/mrtrkit/mrtrkit/internal/wire"
)

// This file is the raw layer: the client's own request builders and
// response readers, for programs that must send what no client would
// (a tampered requestState, a wrong header, a forged session id, a
// malformed body) and judge what comes back, message by message. A
// Client never uses it; what it sends and reads is the caller's to get
// right.

// RawMember is one member of a JSON object that RawObject renders.
type RawMember struct {
	Name  string          // the member's name
	Value json.RawMessage // its value, written as it is
}

// RawObject renders members as a JSON object, in the order given and
// verbatim: repeated names stay repeated, values are not re-encoded (so
// a requestState goes back byte for byte). Values must be valid JSON
// unless the object is meant to be malformed.
func RawObject(members ...RawMember) json.RawMessage {
	m := make([]member, len(members))
	for i, x := range members {
		m[i] = member{x.Name, x.Value}
	}
	return objectOf(m)
}

// RawString renders s as a JSON string, without HTML escaping.
func RawString(s string) json.RawMessage { return mustJSON(s) }

// RawRequestBody renders a JSON-RPC request as a Client writes it:
// jsonrpc, id, method and params (left out when nil), in that order. An
// id of 0 renders a notification.
func RawRequestBody(id int64, method string, params json.RawMessage) []byte {
	return requestBody(id, method, params)
}

// RawResponseBody renders the client's response to the server's request
// id: the result, or the error when rerr is not nil.
func RawResponseBody(id json.RawMessage, result json.RawMessage, rerr *RPCError) []byte {
	if rerr != nil {
		return responseBody(id, nil, rerr)
	}
	return responseBody(id, result, nil)
}

// RawMeta renders the params._meta of a 2026-07-28 request: the protocol
// version, the client capabilities (a JSON object) and the client info.
func RawMeta(version string, caps json.RawMessage, info Implementation) json.RawMessage {
	return objectOf([]member{
		{wire.MetaProtocolVersion, mustJSON(version)},
		{wire.MetaClientCapabilities, caps},
		{wire.MetaClientInfo, mustJSON(info)},
	})
}

// RawHeader returns the headers of a POST as a Client sends them:
// Content-Type and Accept; MCP-Protocol-Version when version is set;
// Mcp-Method when method is set (2026-07-28 only) and Mcp-Name, encoded
// with EncodeHeaderValue, when name is.
func RawHeader(version, method, name string) http.Header {
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	h.Set("Accept", "application/json, text/event-stream")
	if version != "" {
		h.Set("MCP-Protocol-Version", version)
	}
	if method != "" {
		h.Set("Mcp-Method", method)
	}
	if name != "" {
		h.Set("Mcp-Name", EncodeHeaderValue(name))
	}
	return h
}

// RawParamHeaders returns the Mcp-Param-* headers a tools/call with the
// arguments args carries for a tool whose input schema is schema, as
// CallTool derives them from the schema's x-mcp-header declarations. It
// fails, naming the rule broken, for a declaration a client may not
// honour, or an argument that cannot be a header.
func RawParamHeaders(schema, args json.RawMessage) (http.Header, error) {
	hs, err := toolHeaders(schema)
	if err != nil {
		return nil, err
	}
	vals, err := headerValues(hs, args)
	if err != nil {
		return nil, err
	}
	h := http.Header{}
	for k, v := range vals {
		h["Mcp-Param-"+k] = []string{v}
	}
	return h, nil
}

// RawMessage is one JSON-RPC message a server sent, as the raw layer
// reads it: any JSON object, judged by nobody (a message without
// "jsonrpc":"2.0", or with both result and error, is returned as it
// came).
type RawMessage struct {
	ID     json.RawMessage `json:"id,omitempty"`     // the id; absent or null for a notification
	Method string          `json:"method,omitempty"` // the method of a request or a notification
	Params json.RawMessage `json:"params,omitempty"` // their params, verbatim
	Result json.RawMessage `json:"result,omitempty"` // the result of a response, verbatim
	Error  *RPCError       `json:"error,omitempty"`  // the error of a response
	Raw    json.RawMessage `json:"-"`                // the whole message, verbatim
}

// HasID reports whether the message carries an id that is not null.
func (m *RawMessage) HasID() bool {
	t := bytes.TrimSpace(m.ID)
	return len(t) > 0 && string(t) != "null"
}

// IsRequest reports whether the message is a request of the server.
func (m *RawMessage) IsRequest() bool { return m.Method != "" && m.HasID() }

// IsNotification reports whether the message is a notification.
func (m *RawMessage) IsNotification() bool { return m.Method != "" && !m.HasID() }

// IsResponse reports whether the message is a response (a result or an
// error).
func (m *RawMessage) IsResponse() bool {
	return m.Method == "" && (m.Result != nil || m.Error != nil)
}

// Answers reports whether the message is the response to request id.
func (m *RawMessage) Answers(id int64) bool {
	return id != 0 && m.IsResponse() && string(bytes.TrimSpace(m.ID)) == strconv.FormatInt(id, 10)
}

// rawSeen bounds how much of a body RawResponse.Seen keeps.
const rawSeen = 4096

// RawResponse is a server's answer to a request sent with RawDo. Its
// body is read either with Next and Await, as JSON-RPC messages, or
// through Response.Body directly, not both. Close it when done.
type RawResponse struct {
	*http.Response
	// ContentType is the media type of the body, without parameters.
	ContentType string

	seen    prefix
	sse     *sseReader
	queue   []*RawMessage
	drained bool // the JSON body has been read
}

// RawDo sends req with hc (nil: a client that does not follow
// redirects) and returns the answer, whatever its status. It fails only
// when no HTTP response arrives.
func RawDo(hc *http.Client, req *http.Request) (*RawResponse, error) {
	if hc == nil {
		hc = noRedirectClient()
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	r := &RawResponse{Response: resp}
	r.ContentType, _, _ = mime.ParseMediaType(resp.Header.Get("Content-Type"))
	return r, nil
}

// prefix keeps the first rawSeen bytes written to it.
type prefix struct{ bytes.Buffer }

func (p *prefix) Write(b []byte) (int, error) {
	if n := rawSeen - p.Len(); n > 0 {
		p.Buffer.Write(b[:min(n, len(b))])
	}
	return len(b), nil
}

// Seen returns the start of the body as read so far (up to 4 KiB), for
// evidence of a body that held no JSON-RPC message.
func (r *RawResponse) Seen() []byte { return r.seen.Bytes() }

// Next returns the next JSON-RPC message of the body: those of a JSON
// body (one object, or the objects of a batch array), or of each message
// event of an event stream, read with the client's own SSE reader. A
// payload that is not a JSON object is skipped (Seen keeps the start of
// the body). It returns io.EOF at the end of the body.
func (r *RawResponse) Next() (*RawMessage, error) {
	for {
		if len(r.queue) > 0 {
			m := r.queue[0]
			r.queue = r.queue[1:]
			return m, nil
		}
		if r.ContentType == "text/event-stream" {
			if r.sse == nil {
				r.sse = newSSEReader(io.TeeReader(r.Body, &r.seen))
			}
			ev, err := r.sse.next()
			if err != nil {
				return nil, err
			}
			if ev.Event != "" && ev.Event != "message" {
				continue
			}
			r.queue = rawMessages(ev.Data)
			continue
		}
		if r.drained {
			return nil, io.EOF
		}
		r.drained = true
		b, err := io.ReadAll(io.LimitReader(io.TeeReader(r.Body, &r.seen), maxBody+1))
		if err != nil {
			return nil, err
		}
		if len(b) > maxBody {
			return nil, errors.New("a response body larger than the client accepts")
		}
		r.queue = rawMessages(b)
	}
}

// Await reads the body until the response to request id and returns it,
// passing every other message to each (when not nil). A response that
// names no id (an error the server could not tie to a request) is
// returned when the body ends without the response; nil when there was
// none either. The error is that of reading, not io.EOF.
func (r *RawResponse) Await(id int64, each func(*RawMessage)) (*RawMessage, error) {
	var fallback *RawMessage
	for {
		m, err := r.Next()
		if err == io.EOF {
			return fallback, nil
		}
		if err != nil {
			return fallback, err
		}
		switch {
		case m.Answers(id):
			return m, nil
		case m.IsResponse() && !m.HasID() && m.Error != nil && fallback == nil:
			fallback = m
		}
		if each != nil {
			each(m)
		}
	}
}

// Close closes the body.
func (r *RawResponse) Close() error { return r.Body.Close() }

// rawMessages decodes the JSON-RPC messages of one payload: an object, or
// the objects of an array. What is not an object is skipped.
func rawMessages(payload []byte) []*RawMessage {
	payload = bytes.TrimSpace(payload)
	var raws []json.RawMessage
	switch {
	case len(payload) > 0 && payload[0] == '[':
		if json.Unmarshal(payload, &raws) != nil {
			return nil
		}
	case len(payload) > 0 && payload[0] == '{':
		raws = []json.RawMessage{payload}
	}
	out := make([]*RawMessage, 0, len(raws))
	for _, raw := range raws {
		var m message
		if t := bytes.TrimSpace(raw); len(t) == 0 || t[0] != '{' || json.Unmarshal(t, &m) != nil {
			continue
		}
		out = append(out, &RawMessage{ID: m.ID, Method: m.Method, Params: m.Params, Result: m.Result, Error: m.Error,
			Raw: append(json.RawMessage(nil), raw...)})
	}
	return out
}
