package suite

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// ProtocolVersion is the MCP revision the suite speaks.
const ProtocolVersion = "2026-07-28"

// The reserved _meta keys of a 2026-07-28 request.
const (
	metaProtocolVersion    = "io.modelcontextprotocol/protocolVersion"
	metaClientCapabilities = "io.modelcontextprotocol/clientCapabilities"
	metaClientInfo         = "io.modelcontextprotocol/clientInfo"
)

// maxResponseBytes bounds how much of a response body the suite reads.
const maxResponseBytes = 16 << 20

// member is one member of a JSON object being built. The builder keeps
// members in order and does not merge repeated names, so that a probe can
// send an object with a duplicate member on purpose.
type member struct {
	name  string
	value json.RawMessage
}

func m(name string, value json.RawMessage) member { return member{name, value} }

// object renders members as a JSON object, in order, duplicates kept.
func object(ms ...member) json.RawMessage {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, x := range ms {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(str(x.name))
		b.WriteByte(':')
		b.Write(x.value)
	}
	b.WriteByte('}')
	return b.Bytes()
}

// str renders s as a JSON string.
func str(s string) json.RawMessage {
	b, _ := json.Marshal(s)
	return b
}

// RPCError is a JSON-RPC error object as received.
type RPCError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

// Evidence is what one HTTP exchange of a scenario showed: what was sent,
// and the status, JSON-RPC error or result type that came back.
type Evidence struct {
	// Probe says what was sent.
	Probe string `json:"probe"`
	// HTTPStatus is the status of the response; 0 when none arrived.
	HTTPStatus int `json:"httpStatus,omitempty"`
	// ContentType is the media type of the response.
	ContentType string `json:"contentType,omitempty"`
	// Error is the JSON-RPC error of the response, if it was one.
	Error *RPCError `json:"error,omitempty"`
	// ResultType is result.resultType of a result response ("complete"
	// when a result carries none).
	ResultType string `json:"resultType,omitempty"`
	// InputKeys are the keys of result.inputRequests, sorted.
	InputKeys []string `json:"inputKeys,omitempty"`
	// TransportError is set when no HTTP response, or no JSON-RPC response
	// for the request, could be read.
	TransportError string `json:"transportError,omitempty"`
	// Body is the start of a response body that held no JSON-RPC response.
	Body string `json:"body,omitempty"`
	// Received summarises, for the exchanges of a session of the
	// initialize era, what came back on the response: the server's own
	// requests (legs), notifications and the result's members.
	Received string `json:"received,omitempty"`
	// ElapsedMS is how long the exchange took, in milliseconds.
	ElapsedMS int64 `json:"elapsedMs"`
}

// String renders the evidence in one line.
func (e Evidence) String() string {
	var parts []string
	if e.HTTPStatus != 0 {
		parts = append(parts, "HTTP "+strconv.Itoa(e.HTTPStatus))
	}
	switch {
	case e.Error != nil:
		parts = append(parts, fmt.Sprintf("error %d %q", e.Error.Code, clip(e.Error.Message, 80)))
	case e.ResultType != "":
		r := "result " + e.ResultType
		if len(e.InputKeys) > 0 {
			r += " asking [" + strings.Join(e.InputKeys, ", ") + "]"
		}
		parts = append(parts, r)
	}
	if e.Received != "" {
		parts = append(parts, e.Received)
	}
	if e.TransportError != "" {
		parts = append(parts, e.TransportError)
	}
	if len(parts) == 0 {
		return "no response"
	}
	return strings.Join(parts, ", ")
}

// isRPCError reports whether the exchange ended in a JSON-RPC error.
func (e Evidence) isRPCError() bool { return e.Error != nil }

// isResult reports whether the exchange ended in a JSON-RPC result.
func (e Evidence) isResult() bool { return e.ResultType != "" }

// reply is one exchange: its evidence and, for a result, the parts of
// the result the scenarios use.
type reply struct {
	Evidence
	result        json.RawMessage
	requestState  json.RawMessage // raw, as sent by the server
	inputRequests map[string]json.RawMessage
}

// stateString returns result.requestState when it is a non-empty string.
func (r *reply) stateString() (string, bool) {
	var s string
	if len(r.requestState) == 0 || json.Unmarshal(r.requestState, &s) != nil || s == "" {
		return "", false
	}
	return s, true
}

// probe is one HTTP request to send.
type probe struct {
	label  string
	method string // HTTP method; "" is POST
	body   []byte
	header http.Header
	host   string // Host to send instead of the URL's
	id     int64  // the JSON-RPC id to look for in the response; 0 for none
}

// wireMessage is any JSON-RPC message.
type wireMessage struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Result json.RawMessage `json:"result"`
	Error  *RPCError       `json:"error"`
}

// resultFields are the members of a result the suite reads.
type resultFields struct {
	ResultType    string                     `json:"resultType"`
	RequestState  json.RawMessage            `json:"requestState"`
	InputRequests map[string]json.RawMessage `json:"inputRequests"`
}

// send performs one exchange and never fails: what went wrong is in the
// evidence.
func (r *runner) send(ctx context.Context, p probe) reply {
	ctx, cancel := context.WithTimeout(ctx, r.cfg.Timeout)
	defer cancel()
	method := p.method
	if method == "" {
		method = http.MethodPost
	}
	var body io.Reader
	if p.body != nil {
		body = bytes.NewReader(p.body)
	}
	out := reply{Evidence: Evidence{Probe: p.label}}
	req, err := http.NewRequestWithContext(ctx, method, r.cfg.URL, body)
	if err != nil {
		out.TransportError = err.Error()
		return out
	}
	for k, vs := range p.header {
		req.Header[k] = vs
	}
	if p.host != "" {
		req.Host = p.host
	}
	start := time.Now()
	resp, err := r.client.Do(req)
	if err != nil {
		out.ElapsedMS = time.Since(start).Milliseconds()
		out.TransportError = describeTransportError(ctx, err)
		return out
	}
	defer resp.Body.Close()
	out.HTTPStatus = resp.StatusCode
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	out.ContentType = mt
	if method != http.MethodPost {
		// GET and DELETE are judged by their status and, for a 2xx, by
		// whether the body holds an MCP result. A stream the server opens
		// is read for a moment only.
		if resp.StatusCode >= 200 && resp.StatusCode < 300 {
			out.Body = string(readBriefly(resp.Body, 64<<10, time.Second))
		}
		out.ElapsedMS = time.Since(start).Milliseconds()
		return out
	}
	var msg *wireMessage
	var raw []byte
	if mt == "text/event-stream" {
		msg, raw, err = readSSE(resp.Body, p.id)
	} else {
		msg, raw, err = readJSON(resp.Body, p.id)
	}
	out.ElapsedMS = time.Since(start).Milliseconds()
	if err != nil {
		out.TransportError = describeTransportError(ctx, err)
		out.Body = clip(string(raw), 200)
		return out
	}
	if msg == nil {
		if len(bytes.TrimSpace(raw)) > 0 {
			out.TransportError = "no JSON-RPC response in the body"
			out.Body = clip(string(raw), 200)
		}
		return out
	}
	switch {
	case msg.Error != nil:
		out.Error = msg.Error
	case msg.Result != nil:
		out.result = msg.Result
		var f resultFields
		if json.Unmarshal(msg.Result, &f) != nil {
			out.TransportError = "result is not an object"
			return out
		}
		out.ResultType = f.ResultType
		if out.ResultType == "" {
			out.ResultType = "complete"
		}
		out.requestState = f.RequestState
		out.inputRequests = f.InputRequests
		for k := range f.InputRequests {
			out.InputKeys = append(out.InputKeys, k)
		}
		sort.Strings(out.InputKeys)
	}
	return out
}

// readBriefly reads up to n bytes of body, for at most d.
func readBriefly(body io.ReadCloser, n int64, d time.Duration) []byte {
	stop := time.AfterFunc(d, func() { body.Close() })
	defer stop.Stop()
	b, _ := io.ReadAll(io.LimitReader(body, n))
	return b
}

// describeTransportError names a failure to get a response, calling a
// deadline a timeout.
func describeTransportError(ctx context.Context, err error) string {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) || errors.Is(err, context.DeadlineExceeded) {
		return "timed out"
	}
	return err.Error()
}

// readJSON reads a JSON body holding one JSON-RPC response. It returns the
// message when the body is one, whose id is the request's, or absent or
// null (an error whose id could not be read).
func readJSON(body io.Reader, id int64) (*wireMessage, []byte, error) {
	raw, err := io.ReadAll(io.LimitReader(body, maxResponseBytes))
	if err != nil {
		return nil, raw, err
	}
	return pickMessage(raw, id), raw, nil
}

// pickMessage returns the response in raw for request id, if it holds one.
func pickMessage(raw []byte, id int64) *wireMessage {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '{' {
		return nil
	}
	var msg wireMessage
	if json.Unmarshal(raw, &msg) != nil || msg.Method != "" || (msg.Result == nil && msg.Error == nil) {
		return nil
	}
	if idMatches(msg.ID, id) || (msg.Error != nil && idAbsent(msg.ID)) {
		return &msg
	}
	return nil
}

func idMatches(raw json.RawMessage, id int64) bool {
	return id != 0 && string(bytes.TrimSpace(raw)) == strconv.FormatInt(id, 10)
}

func idAbsent(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) == 0 || string(t) == "null"
}

// readSSE reads server-sent events until one carries the response to
// request id, skipping notifications. It stops there, so a stream the
// server keeps open does not hold the suite. An error without an id is
// kept as a fallback, returned if the stream ends without the response.
func readSSE(body io.Reader, id int64) (*wireMessage, []byte, error) {
	sc := bufio.NewScanner(io.LimitReader(body, maxResponseBytes))
	sc.Buffer(make([]byte, 0, 64<<10), maxResponseBytes)
	var data []string
	var seen bytes.Buffer
	var fallback *wireMessage
	dispatch := func() *wireMessage {
		if len(data) == 0 {
			return nil
		}
		payload := []byte(strings.Join(data, "\n"))
		data = data[:0]
		if msg := pickMessage(payload, id); msg != nil {
			if idMatches(msg.ID, id) {
				return msg
			}
			if fallback == nil {
				fallback = msg
			}
		}
		return nil
	}
	for sc.Scan() {
		line := sc.Text()
		if seen.Len() < 4096 {
			seen.WriteString(line)
			seen.WriteByte('\n')
		}
		if line == "" {
			if msg := dispatch(); msg != nil {
				return msg, seen.Bytes(), nil
			}
			continue
		}
		if strings.HasPrefix(line, ":") {
			continue
		}
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		if field == "data" {
			data = append(data, value)
		}
	}
	if msg := dispatch(); msg != nil {
		return msg, seen.Bytes(), nil
	}
	if err := sc.Err(); err != nil {
		return nil, seen.Bytes(), err
	}
	return fallback, seen.Bytes(), nil
}

// encodeHeaderValue renders v for an Mcp-Name or Mcp-Param-* header: as
// is when it is visible ASCII with no surrounding whitespace and does not
// look like the base64 form, otherwise in the =?base64?...?= form.
func encodeHeaderValue(v string) string {
	plain := v != "" && !strings.HasPrefix(v, "=?base64?") && v[0] != ' ' && v[len(v)-1] != ' '
	for i := 0; plain && i < len(v); i++ {
		if c := v[i]; c != ' ' && (c < 0x21 || c > 0x7e) {
			plain = false
		}
	}
	if plain {
		return v
	}
	return base64Sentinel(v)
}

// base64Sentinel renders v in the =?base64?...?= form, whatever v is.
func base64Sentinel(v string) string {
	return "=?base64?" + base64.StdEncoding.EncodeToString([]byte(v)) + "?="
}

// clip shortens s to at most n bytes, marking the cut, and keeps it on
// one line.
func clip(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
