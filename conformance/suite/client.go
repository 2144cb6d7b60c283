package suite

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/mrtrkit/mrtrkit/client"
)

// ProtocolVersion is the MCP revision the suite speaks.
const ProtocolVersion = "2026-07-28"

// clientInfo is the clientInfo the suite declares.
var clientInfo = client.Implementation{Name: "mrtrcheck", Version: "1"}

// member is one member of a JSON object being built. object keeps
// members in order and does not merge repeated names, so that a probe can
// send an object with a duplicate member on purpose.
type member = client.RawMember

func m(name string, value json.RawMessage) member { return member{Name: name, Value: value} }

// object renders members as a JSON object, in order, duplicates kept.
func object(ms ...member) json.RawMessage { return client.RawObject(ms...) }

// str renders s as a JSON string.
func str(s string) json.RawMessage { return client.RawString(s) }

// RPCError is a JSON-RPC error object as received.
type RPCError = client.RPCError

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
	resp, err := client.RawDo(r.client, req)
	if err != nil {
		out.ElapsedMS = time.Since(start).Milliseconds()
		out.TransportError = describeTransportError(ctx, err)
		return out
	}
	defer resp.Close()
	out.HTTPStatus = resp.StatusCode
	out.ContentType = resp.ContentType
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
	// The response to the request: one whose id is the request's, or an
	// error without an id. A JSON body that is an array (a batch) is no
	// response to a request.
	msg, err := resp.Await(p.id, nil)
	out.ElapsedMS = time.Since(start).Milliseconds()
	seen := resp.Seen()
	if resp.ContentType != "text/event-stream" && bytes.HasPrefix(bytes.TrimSpace(seen), []byte("[")) {
		msg = nil
	}
	if err != nil && msg == nil {
		out.TransportError = describeTransportError(ctx, err)
		out.Body = clip(string(seen), 200)
		return out
	}
	if msg == nil {
		if len(bytes.TrimSpace(seen)) > 0 {
			out.TransportError = "no JSON-RPC response in the body"
			out.Body = clip(string(seen), 200)
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
