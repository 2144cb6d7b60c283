// Command server is the conformance fixture server of mrtrkit: one
// Streamable HTTP endpoint exposing every tool, prompt, resource, resource
// template and completion the official MCP conformance suite calls for the
// 2026-07-28 and 2025-11-25 revisions, plus the fixtures of the client
// interop tests, built on mrtrkit alone. Clients of the initialize era
// (2025-11-25, 2025-06-18) are served on the same endpoint by package
// mrtr/legacy.
//
// It listens on -addr (default 127.0.0.1:3001) and serves MCP at -path
// (default /mcp). With -stdio it serves the same fixtures on standard input
// and output instead (package transport/stdio), as a client's subprocess.
// With -production the endpoint is wired as a deployment wires it: bearer
// JWTs verified against -jwks-url for the audience -resource, RFC 9728
// metadata, per-caller visibility, CORS for -allowed-origins, /livez and
// /readyz, an audit log and a call counter. -leg-timeout bounds how long a
// 2025-11-25 client may take to answer one server-to-client request. Logs
// go to stderr, always. requestState is sealed with the key ring in
// MRTRKIT_STATE_KEYS (required with -production), or with a random key made
// at start-up when that variable is unset.
//
// The command is conformance/fixture's Main, which the OpenTelemetry and
// Redis modules' fixture commands run too, with their interceptor or
// shared bus added.
package main

import (
	"os"

	"github.com/mrtrkit/mrtrkit/conformance/fixture"
)

func main() {
	os.Exit(fixture.Main(os.Args[1:], fixture.Extras{}))
}
