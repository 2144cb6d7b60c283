// Package testkit holds the helpers that the tests of several mrtrkit
// packages share: a fixed key ring and the AEAD codec over it, an
// adjustable clock, a log buffer safe for concurrent writers, the
// log-injection payloads and the checker of slog's output lines, and the
// construction of a test mrtr.Server.
//
// It is imported only by _test.go files. Everything that fails does so
// through the testing.TB it is given, so a helper's caller never checks
// an error.
package testkit
