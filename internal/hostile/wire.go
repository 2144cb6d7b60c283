//go:build unix

package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
)

// protocolVersion is the MCP revision every request speaks.
const protocolVersion = "2026-07-28"

// metaJSON is the _meta object of a request that declares caps as its
// client capabilities.
func metaJSON(caps string) string {
	return `{"io.modelcontextprotocol/protocolVersion":"` + protocolVersion +
		`","io.modelcontextprotocol/clientCapabilities":` + caps + `}`
}

// quote returns s as a JSON string.
func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// requestBody is a JSON-RPC request body; params is a JSON object without
// its closing brace's _meta, which is added.
func requestBody(id int64, method, params, caps string) []byte {
	var b strings.Builder
	b.WriteString(`{"jsonrpc":"2.0","id":`)
	b.WriteString(strconv.FormatInt(id, 10))
	b.WriteString(`,"method":`)
	b.WriteString(quote(method))
	b.WriteString(`,"params":{`)
	if params != "" {
		b.WriteString(params)
		b.WriteString(",")
	}
	b.WriteString(`"_meta":`)
	b.WriteString(metaJSON(caps))
	b.WriteString(`}}`)
	return []byte(b.String())
}

// callParams are the params of a tools/call of tool with the JSON object
// args; extra, when not empty, is spliced in (requestState,
// inputResponses).
func callParams(tool, args, extra string) string {
	p := `"name":` + quote(tool) + `,"arguments":` + args
	if extra != "" {
		p += "," + extra
	}
	return p
}

// listenParams are the params of a subscriptions/listen asking for tool
// list changes.
const listenParams = `"notifications":{"toolsListChanged":true}`

// setHeaders sets the headers a 2026-07-28 client sends with method; name
// is the Mcp-Name (the tool), when the method has one. Names here are
// plain ASCII, so they need no encoding.
func setHeaders(h http.Header, method, name string) {
	h.Set("Content-Type", "application/json")
	h.Set("Accept", "application/json, text/event-stream")
	h.Set("Mcp-Protocol-Version", protocolVersion)
	h.Set("Mcp-Method", method)
	if name != "" {
		h.Set("Mcp-Name", name)
	}
}

// rawRequest is an HTTP/1.1 request as bytes, for the raw-socket clients.
func rawRequest(host, path, method, name string, body []byte, contentLength int) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "POST %s HTTP/1.1\r\nHost: %s\r\n", path, host)
	h := http.Header{}
	setHeaders(h, method, name)
	_ = h.Write(&b)
	fmt.Fprintf(&b, "Content-Length: %d\r\n\r\n", contentLength)
	b.Write(body)
	return b.Bytes()
}

// message is a JSON-RPC message as the clients here read it.
type message struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// errNoAnswer is a response that carried no JSON-RPC answer to the
// request.
var errNoAnswer = errors.New("no JSON-RPC answer in the response")

// readAnswer reads the JSON-RPC answer (a message with an id and a result
// or error) from a response body, plain JSON or an event stream, and
// returns its raw bytes and decoded form.
func readAnswer(resp *http.Response) ([]byte, *message, error) {
	ct := resp.Header.Get("Content-Type")
	if strings.HasPrefix(ct, "text/event-stream") {
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 64<<10), 16<<20)
		for sc.Scan() {
			data, ok := strings.CutPrefix(sc.Text(), "data:")
			if !ok {
				continue
			}
			var m message
			raw := []byte(strings.TrimSpace(data))
			if json.Unmarshal(raw, &m) == nil && len(m.ID) > 0 && m.Method == "" {
				return raw, &m, nil
			}
		}
		if err := sc.Err(); err != nil {
			return nil, nil, err
		}
		return nil, nil, errNoAnswer
	}
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 32<<20))
	if err != nil {
		return nil, nil, err
	}
	var m message
	if json.Unmarshal(raw, &m) != nil || len(m.ID) == 0 {
		return raw, nil, errNoAnswer
	}
	return raw, &m, nil
}
