// Package wire holds the vocabulary of the MCP wire that mrtrkit's own
// packages share (method names, reserved _meta keys, result types) and the
// bound on what a log line or error message repeats of a caller's value.
//
// It is internal on purpose: handler authors never spell these names (the
// Server routes methods and renders _meta), and a transport or an
// interceptor that needs one writes the protocol's own string, which is
// the contract. Keeping them here keeps the package users import small.
// It imports nothing of mrtrkit and must stay a leaf.
package wire
