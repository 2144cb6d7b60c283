// Package openai is for servers that own a model: a model.Model that calls an OpenAI-compatible
// chat-completions API: OpenAI itself, or a server that speaks the same
// protocol such as vLLM, Ollama or LiteLLM.
//
// It sends POST {BaseURL}/chat/completions with the model, the messages
// (systemPrompt first, as a system message), max_tokens, temperature and
// stop, authenticated with a Bearer API key, and maps choices[0] back to
// an *mrtr.SamplingResult (text content, the model that answered, and the
// finish reason as stopReason: stop → endTurn, length → maxTokens). Each
// call is bounded by Config.Timeout and the caller's context; responses are
// bounded in size. A non-2xx answer is an *APIError. The API key never
// appears in errors: it is sent only in the Authorization header and
// removed, together with anything shaped like a key, from the API's
// messages.
//
//	c, err := openai.New(openai.Config{APIKey: os.Getenv("OPENAI_API_KEY"), Model: "gpt-4o-mini"})
//	res, err := model.Sample(ctx, c, req, "summary", q) // in a handler: answered inline
package openai
