// Package wire holds the vocabulary of the MCP wire that mrtrkit's own
// packages share (method names, reserved _meta keys, result types) and the
// bound on what a log line or error message repeats of a caller's value.
//
// It is internal: code outside the root module (the otel and redis
// modules, third-party interceptors) uses the names package mrtr exports
// from these (mrtr.MethodToolsCall, mrtr.MetaProtocolVersion, ...), never
// this package, which carries no compatibility promise. It imports
// nothing of mrtrkit and must stay a leaf.
package wire
