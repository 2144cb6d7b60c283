// Command clientfixture is the client the official MCP conformance suite
// drives (`conformance client --command 'exec clientfixture'`): one
// process per scenario, the server URL as its only argument, the scenario
// in MCP_CONFORMANCE_SCENARIO, the wire revision in
// MCP_CONFORMANCE_PROTOCOL_VERSION and scenario data in
// MCP_CONFORMANCE_CONTEXT. Everything it does goes through package
// client; it exits non-zero when the scenario's calls fail.
package main
