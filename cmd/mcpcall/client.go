package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/mrtrkit/mrtrkit/internal/wire"
	"github.com/mrtrkit/mrtrkit/transport/streamablehttp"
)

// maxBody bounds one response body (JSON or a whole event stream).
const maxBody = 64 << 20

// client sends MCP 2026-07-28 requests over Streamable HTTP.
type client struct {
	url      string
	token    string
	timeout  time.Duration
	caps     json.RawMessage
	logLevel string
	verbose  bool
	stderr   io.Writer
	// onNote receives each notification that arrives on a response
	// stream, as it arrives.
	onNote func(method string, params json.RawMessage)

	// transport sends the requests; nil means http.DefaultTransport.
	transport http.RoundTripper

	http   *http.Client
	nextID int64
}

func (c *client) init() {
	c.http = &http.Client{
		Transport: c.transport,
		// A redirect is reported, not followed: the body and the token
		// would go to a place the user did not name.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// rpcError is a JSON-RPC error object.
type rpcError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

// response is the answer to one request: a result or a JSON-RPC error.
type response struct {
	ID         int64
	Result     json.RawMessage
	Error      *rpcError
	HTTPStatus int
}

// transportError is a failure below JSON-RPC: the connection, HTTP, or a
// body that is not a JSON-RPC response to the request.
type transportError struct{ msg string }

func (e *transportError) Error() string { return e.msg }

func transportErr(format string, args ...any) error {
	return &transportError{fmt.Sprintf(format, args...)}
}

// member is one member of a params object, kept in order and verbatim.
type member struct {
	name  string
	value json.RawMessage
}

// encodeJSON encodes v without HTML escaping and without the trailing
// newline. json.RawMessage values inside v keep their bytes (only
// insignificant white space is removed), which is what carries
// requestState and arguments unchanged.
func encodeJSON(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// objectOf renders members as a JSON object, in order.
func objectOf(members []member) ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range members {
		if i > 0 {
			b.WriteByte(',')
		}
		name, err := encodeJSON(m.name)
		if err != nil {
			return nil, err
		}
		b.Write(name)
		b.WriteByte(':')
		var v bytes.Buffer
		if err := json.Compact(&v, m.value); err != nil {
			return nil, fmt.Errorf("params.%s: %w", m.name, err)
		}
		b.Write(v.Bytes())
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// meta builds params._meta of request id.
func (c *client) meta(id int64) (json.RawMessage, error) {
	m := []member{
		{wire.MetaProtocolVersion, mustJSON(ProtocolVersion)},
		{wire.MetaClientCapabilities, c.caps},
		{wire.MetaClientInfo, mustJSON(map[string]string{"name": "mcpcall", "version": Version})},
		{wire.MetaProgressToken, mustJSON("mcpcall-" + strconv.FormatInt(id, 10))},
	}
	if c.logLevel != "" {
		m = append(m, member{wire.MetaLogLevel, mustJSON(c.logLevel)})
	}
	return objectOf(m)
}

func mustJSON(v any) json.RawMessage {
	b, err := encodeJSON(v)
	if err != nil {
		panic(err)
	}
	return b
}

// call sends one request and returns its response. target is the tool or
// prompt name or resource URI (Mcp-Name), params its params without
// _meta, paramHeaders the Mcp-Param-* headers (name without the prefix →
// value, not yet encoded).
func (c *client) call(ctx context.Context, method, target string, params []member, paramHeaders map[string]string) (*response, error) {
	c.nextID++
	id := c.nextID
	meta, err := c.meta(id)
	if err != nil {
		return nil, err
	}
	p, err := objectOf(append(append([]member(nil), params...), member{"_meta", meta}))
	if err != nil {
		return nil, err
	}
	body, err := objectOf([]member{
		{"jsonrpc", mustJSON("2.0")},
		{"id", mustJSON(id)},
		{"method", mustJSON(method)},
		{"params", p},
	})
	if err != nil {
		return nil, err
	}
	// The timeout runs until the server's next message: each event of a
	// stream (a notification, a keep-alive comment) starts it again, so a
	// long call that reports progress is not cut off.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var timedOut atomic.Bool
	touch := func() {}
	if c.timeout > 0 {
		timer := time.AfterFunc(c.timeout, func() { timedOut.Store(true); cancel() })
		defer timer.Stop()
		touch = func() { timer.Reset(c.timeout) }
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return nil, transportErr("cannot build the request: %v", err)
	}
	h := req.Header
	h.Set("Content-Type", "application/json")
	h.Set("Accept", "application/json, text/event-stream")
	h.Set("User-Agent", "mcpcall/"+Version)
	h.Set("MCP-Protocol-Version", ProtocolVersion)
	h.Set("Mcp-Method", streamablehttp.EncodeHeaderValue(method))
	if method == wire.MethodToolsCall || method == wire.MethodPromptsGet || method == wire.MethodResourcesRead || strings.HasPrefix(method, "tasks/") {
		h.Set("Mcp-Name", streamablehttp.EncodeHeaderValue(target))
	}
	for name, v := range paramHeaders {
		h.Set("Mcp-Param-"+name, streamablehttp.EncodeHeaderValue(v))
	}
	if c.token != "" {
		// setup refuses such a run already; this keeps the rule where the
		// header is set.
		if err := tokenURLAllowed(req.URL); err != nil {
			return nil, err
		}
		h.Set("Authorization", "Bearer "+c.token)
	}
	if c.verbose {
		c.dumpRequest(req, body)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		if timedOut.Load() {
			return nil, transportErr("%s: no answer within %v (-timeout)", method, c.timeout)
		}
		return nil, transportErr("%s: %v", method, err)
	}
	defer resp.Body.Close()
	if c.verbose {
		c.dumpResponse(resp)
	}
	r, err := c.read(method, id, resp, touch)
	if err != nil && timedOut.Load() {
		return nil, transportErr("%s: the server sent nothing for %v (-timeout)", method, c.timeout)
	}
	return r, err
}

// read interprets the HTTP response to request id.
func (c *client) read(method string, id int64, resp *http.Response, touch func()) (*response, error) {
	status := resp.StatusCode
	ctype, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	switch {
	case status >= 300 && status < 400:
		return nil, transportErr("%s: HTTP %d redirect to %q, not followed; give that address with -url", method, status, resp.Header.Get("Location"))
	case status == http.StatusAccepted || status == http.StatusNoContent:
		return nil, transportErr("%s: HTTP %d with no response: the server took the request for a notification", method, status)
	case ctype == "text/event-stream" && status == http.StatusOK:
		return c.readStream(method, id, resp, touch)
	case ctype == "application/json":
		body, err := io.ReadAll(io.LimitReader(resp.Body, maxBody+1))
		if err != nil {
			return nil, transportErr("%s: reading the response: %v", method, err)
		}
		if len(body) > maxBody {
			return nil, transportErr("%s: response larger than %d bytes", method, maxBody)
		}
		if c.verbose {
			fmt.Fprintf(c.stderr, "< %s\n\n", termText(string(body)))
		}
		r, err := decodeResponse(body, id)
		if err != nil {
			if status != http.StatusOK {
				return nil, httpError(method, resp, body)
			}
			return nil, transportErr("%s: %v", method, err)
		}
		if r == nil {
			return nil, transportErr("%s: HTTP %d: the body is not the response to request %d", method, status, id)
		}
		r.HTTPStatus = status
		switch {
		case status != http.StatusOK && r.Error == nil:
			return nil, transportErr("%s: HTTP %d with a result", method, status)
		case status != http.StatusOK && status != http.StatusBadRequest && status != http.StatusNotFound:
			// Only 400 and 404 carry errors about the request itself; the
			// others (401, 403, 413, 5xx…) are refusals of the HTTP layer.
			return nil, httpError(method, resp, body)
		}
		return r, nil
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	return nil, httpError(method, resp, body)
}

// httpError describes an HTTP answer that holds no JSON-RPC response.
func httpError(method string, resp *http.Response, body []byte) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: HTTP %s", method, termLine(resp.Status))
	if ct := resp.Header.Get("Content-Type"); ct != "" {
		fmt.Fprintf(&b, " (%s)", termLine(ct))
	}
	if ch := resp.Header.Values("WWW-Authenticate"); len(ch) > 0 {
		fmt.Fprintf(&b, "\n  WWW-Authenticate: %s", termLine(strings.Join(ch, ", ")))
	}
	if s := strings.TrimSpace(string(body)); s != "" {
		if len(s) > 512 {
			s = s[:512] + "…"
		}
		fmt.Fprintf(&b, "\n  %s", termLine(s))
	}
	if resp.StatusCode == http.StatusUnauthorized {
		b.WriteString("\n  (give a bearer token with -token or $" + EnvToken + ")")
	}
	return &transportError{b.String()}
}

// wireMessage is any JSON-RPC message.
type wireMessage struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params"`
	Result  json.RawMessage `json:"result"`
	Error   *rpcError       `json:"error"`
}

// decodeResponse decodes one JSON-RPC response. It returns nil, nil for a
// response to another id; an error response without an id (the server
// could not read it) is taken as the answer.
func decodeResponse(body []byte, id int64) (*response, error) {
	var m wireMessage
	if err := json.Unmarshal(body, &m); err != nil {
		return nil, fmt.Errorf("the response is not JSON: %v", err)
	}
	return m.asResponse(id)
}

func (m *wireMessage) asResponse(id int64) (*response, error) {
	if m.JSONRPC != "2.0" {
		return nil, errors.New(`the response is not JSON-RPC 2.0 (no "jsonrpc":"2.0")`)
	}
	if m.Method != "" {
		return nil, fmt.Errorf("expected a response, got a %s message", m.Method)
	}
	if m.Error == nil && m.Result == nil {
		return nil, errors.New("the response has neither result nor error")
	}
	noID := len(m.ID) == 0 || string(m.ID) == "null"
	if noID && m.Error == nil {
		return nil, errors.New("the response has no id")
	}
	if !noID && string(m.ID) != strconv.FormatInt(id, 10) {
		return nil, nil
	}
	return &response{ID: id, Result: m.Result, Error: m.Error}, nil
}

// readStream reads a text/event-stream response: notifications go to
// onNote as they arrive; the response to id ends the stream.
func (c *client) readStream(method string, id int64, resp *http.Response, touch func()) (*response, error) {
	br := bufio.NewReader(io.LimitReader(resp.Body, maxBody))
	var data bytes.Buffer
	hasData := false
	event := ""
	dispatch := func() (*response, error) {
		defer func() { data.Reset(); hasData = false; event = "" }()
		if !hasData || (event != "" && event != "message") {
			return nil, nil
		}
		raw := data.Bytes()
		if c.verbose {
			fmt.Fprintf(c.stderr, "< event: %s\n", termText(string(raw)))
		}
		var m wireMessage
		if err := json.Unmarshal(raw, &m); err != nil {
			return nil, transportErr("%s: an event of the stream is not JSON: %v", method, err)
		}
		switch {
		case m.Method != "" && (len(m.ID) == 0 || string(m.ID) == "null"):
			if c.onNote != nil {
				c.onNote(m.Method, m.Params)
			}
			return nil, nil
		case m.Method != "":
			fmt.Fprintf(c.stderr, "mcpcall: warning: the server sent a %s request on the response stream; servers of 2026-07-28 must not send requests, ignored\n", termLine(m.Method))
			return nil, nil
		}
		r, err := m.asResponse(id)
		if err != nil {
			return nil, transportErr("%s: %v", method, err)
		}
		if r == nil {
			fmt.Fprintf(c.stderr, "mcpcall: warning: the stream carried a response to another request (id %s), ignored\n", termLine(string(m.ID)))
			return nil, nil
		}
		r.HTTPStatus = resp.StatusCode
		return r, nil
	}
	for {
		line, err := br.ReadString('\n')
		touch()
		if err != nil && err != io.EOF {
			return nil, transportErr("%s: the response stream broke: %v", method, err)
		}
		eof := err == io.EOF
		line = strings.TrimSuffix(strings.TrimSuffix(line, "\n"), "\r")
		switch {
		case line == "" && !eof:
			if r, err := dispatch(); r != nil || err != nil {
				return r, err
			}
		case strings.HasPrefix(line, ":"):
		default:
			field, value, _ := strings.Cut(line, ":")
			value = strings.TrimPrefix(value, " ")
			switch field {
			case "data":
				if hasData {
					data.WriteByte('\n')
				}
				data.WriteString(value)
				hasData = true
			case "event":
				event = value
			}
		}
		if eof {
			if r, err := dispatch(); r != nil || err != nil {
				return r, err
			}
			return nil, transportErr("%s: the response stream ended without the response", method)
		}
	}
}

func (c *client) dumpRequest(req *http.Request, body []byte) {
	fmt.Fprintf(c.stderr, "> POST %s\n", req.URL)
	c.dumpHeader(">", req.Header)
	fmt.Fprintf(c.stderr, "> %s\n\n", termText(string(body)))
}

func (c *client) dumpResponse(resp *http.Response) {
	fmt.Fprintf(c.stderr, "< HTTP %s\n", termLine(resp.Status))
	c.dumpHeader("<", resp.Header)
}

func (c *client) dumpHeader(dir string, h http.Header) {
	names := make([]string, 0, len(h))
	for k := range h {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		for _, v := range h[k] {
			if strings.EqualFold(k, "Authorization") {
				v = "[redacted]"
			}
			fmt.Fprintf(c.stderr, "%s %s: %s\n", dir, termLine(k), termLine(v))
		}
	}
}
