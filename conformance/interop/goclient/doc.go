// Package goclient tests mrtrkit's client (package client) against
// servers other people wrote: the official Go SDK v1.8.0 everything-server
// at both revisions, over Streamable HTTP and over stdio, and benchmarks
// it against the Go SDK's own client on the same server. It is a separate
// Go module so that the framework's go.mod does not name the Go SDK.
package goclient
