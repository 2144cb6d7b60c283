// Package model is for handlers that need a model completion: one call,
// Sample, whether the client's model answers it (MCP sampling) or a model
// the server calls itself.
//
// A Model turns an *mrtr.SamplingRequest into an *mrtr.SamplingResult. The
// client's model, Client(), cannot answer in the same round: Sample then
// asks the client with an embedded sampling/createMessage and returns an
// error matching mrtr.ErrInputRequired, which the handler returns; the
// answer is there on the next run. A model the server owns (package
// mrtr/model/openai, or any Func) answers at once, and its answer is
// sealed into the call's state so that later rounds reuse it.
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
//	summary, err := model.Sample(ctx, m, req, "summary", q)
//	if err != nil {
//		return Output{}, err
//	}
//
// A handler that returns its own *mrtr.InputRequired uses Complete.
package model
