//go:build unix

package main

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/mrtrkit/mrtrkit/client"
)

// The requests here are built with package client's raw layer, as a
// client of 2026-07-28 writes them; the hostile clients send them over
// sockets they misuse, the well-behaved ones speak through client.Client.

// clientInfo names this program in the _meta of its requests.
var clientInfo = client.Implementation{Name: "hostile", Version: "1"}

// member is one member of a request's params.
func member(name string, value json.RawMessage) client.RawMember {
	return client.RawMember{Name: name, Value: value}
}

// requestBody is a JSON-RPC request body of 2026-07-28: params, then the
// _meta that declares caps (a JSON object) as the client capabilities.
func requestBody(id int64, method string, caps string, params ...client.RawMember) []byte {
	params = append(params, member("_meta", client.RawMeta(client.LatestVersion, json.RawMessage(caps), clientInfo)))
	return client.RawRequestBody(id, method, client.RawObject(params...))
}

// callParams are the params of a tools/call of tool with the JSON object
// args.
func callParams(tool, args string) []client.RawMember {
	return []client.RawMember{member("name", client.RawString(tool)), member("arguments", json.RawMessage(args))}
}

// listenParams are the params of a subscriptions/listen asking for tool
// list changes.
var listenParams = []client.RawMember{member("notifications", json.RawMessage(`{"toolsListChanged":true}`))}

// rawRequest is an HTTP/1.1 POST of method (with Mcp-Name name, when
// set) as bytes, for the raw-socket clients: its head, with the headers a
// client sends and Content-Length contentLength, then body.
func rawRequest(host, path, method, name string, body []byte, contentLength int) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "POST %s HTTP/1.1\r\nHost: %s\r\n", path, host)
	_ = client.RawHeader(client.LatestVersion, method, name).Write(&b)
	fmt.Fprintf(&b, "Content-Length: %d\r\n\r\n", contentLength)
	b.Write(body)
	return b.Bytes()
}
