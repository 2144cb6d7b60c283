package openai_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"

	"github.com/mrtrkit/mrtrkit/mrtr"
	"github.com/mrtrkit/mrtrkit/mrtr/model/openai"
)

// A Client asking an OpenAI-compatible API for a completion. The API here
// is a stand-in served by httptest; a real Client takes its settings from
// ConfigFromEnv or from configuration.
func ExampleNew() {
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Model     string `json:"model"`
			MaxTokens int    `json:"max_tokens"`
		}
		if r.URL.Path != "/v1/chat/completions" || r.Header.Get("Authorization") != "Bearer sk-example" ||
			json.NewDecoder(r.Body).Decode(&req) != nil {
			http.Error(w, `{"error":{"message":"bad request","type":"invalid_request_error"}}`, http.StatusBadRequest)
			return
		}
		fmt.Printf("API got: model %s, max_tokens %d\n", req.Model, req.MaxTokens)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"model":"gpt-4o-mini-2024-07-18","choices":[{"index":0,`+
			`"message":{"role":"assistant","content":"Paris."},"finish_reason":"stop"}]}`)
	}))
	defer api.Close()

	c, err := openai.New(openai.Config{
		BaseURL: api.URL + "/v1", // empty means https://api.openai.com/v1
		APIKey:  "sk-example",
		Model:   "gpt-4o-mini",
	})
	if err != nil {
		log.Fatal(err)
	}
	res, err := c.CreateMessage(context.Background(), &mrtr.SamplingRequest{
		SystemPrompt: "Answer in one word.",
		Messages:     []mrtr.SamplingMessage{mrtr.UserText("What is the capital of France?")},
		MaxTokens:    20,
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("answer:", res.Text())
	fmt.Println("model:", res.Model)
	fmt.Println("stop reason:", res.StopReason)
	// Output:
	// API got: model gpt-4o-mini, max_tokens 20
	// answer: Paris.
	// model: gpt-4o-mini-2024-07-18
	// stop reason: endTurn
}
