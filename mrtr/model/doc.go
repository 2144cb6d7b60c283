// Package model gives handlers one way to get a model completion, whether
// the client's model answers it (MCP sampling) or a model the server calls
// itself.
//
// A Model turns an *mrtr.SamplingRequest into an *mrtr.SamplingResult. The
// client's model, Client(), cannot answer in the same round: it returns
// ErrDeferred, and the handler asks the client with an embedded
// sampling/createMessage and reads the answer on the retry. A model the
// server owns (package mrtr/model/openai, or any Func) answers at once.
// Sampling is deprecated in MCP 2026-07-28; moving a server to its own
// provider is a change of configuration, not of handler code:
//
//	var m model.Model = model.Client()
//	if *direct {
//		c, err := openai.New(openai.ConfigFromEnv())
//		...
//		m = c
//	}
//
// Flows (package mrtr/flow) take the Model with flow.WithModel. A plain
// mrtr.Handler uses Complete.
package model
