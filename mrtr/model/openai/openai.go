package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/mrtrkit/mrtrkit/mrtr"
	"github.com/mrtrkit/mrtrkit/mrtr/model"
)

// Defaults of Config.
const (
	defaultBaseURL          = "https://api.openai.com/v1"
	defaultTimeout          = 60 * time.Second
	defaultMaxResponseBytes = 4 << 20
)

// Environment variables read by ConfigFromEnv.
const (
	EnvAPIKey  = "OPENAI_API_KEY"
	EnvBaseURL = "OPENAI_BASE_URL"
	EnvModel   = "OPENAI_MODEL"
)

// Config configures a Client.
type Config struct {
	// BaseURL is the API root; requests go to BaseURL + "/chat/completions".
	// Empty means https://api.openai.com/v1.
	BaseURL string
	// APIKey is sent as a Bearer token. It never appears in errors. Empty
	// sends no Authorization header (for local servers).
	APIKey string
	// Model is the model name sent with every request. Empty means the
	// first named hint of the request's modelPreferences; a request with
	// neither is refused.
	Model string
	// Timeout bounds one completion, on top of the caller's context.
	// Zero means 60 seconds.
	Timeout time.Duration
	// MaxResponseBytes bounds the response body read. Zero means
	// 4 MiB.
	MaxResponseBytes int64
	// HTTPClient sends the requests. Nil means a client with
	// http.DefaultTransport that follows no redirects.
	HTTPClient *http.Client
}

// ConfigFromEnv returns a Config with APIKey, BaseURL and Model taken from
// OPENAI_API_KEY, OPENAI_BASE_URL and OPENAI_MODEL.
func ConfigFromEnv() Config {
	return Config{
		APIKey:  os.Getenv(EnvAPIKey),
		BaseURL: os.Getenv(EnvBaseURL),
		Model:   os.Getenv(EnvModel),
	}
}

// Client is a model.Model that calls an OpenAI-compatible chat-completions
// API. It maps a sampling request to one POST {BaseURL}/chat/completions
// (systemPrompt as a leading system message; text, image and audio
// blocks; maxTokens, temperature and stopSequences) and the first choice
// back to a sampling result. It does not retry. Requests with tools,
// toolChoice or tool_use/tool_result blocks are refused; includeContext is
// ignored, as the server has no client context to include. A Client is
// safe for concurrent use.
type Client struct {
	endpoint string
	key      string
	model    string
	timeout  time.Duration
	max      int64
	http     *http.Client
}

var _ model.Model = (*Client)(nil)

// New returns a Client for cfg.
func New(cfg Config) (*Client, error) {
	base := cfg.BaseURL
	if base == "" {
		base = defaultBaseURL
	}
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, errors.New("openai: BaseURL must be an absolute http or https URL")
	}
	if cfg.APIKey != "" && u.Scheme == "http" && !loopbackHost(u.Hostname()) {
		return nil, errors.New("openai: refusing to send an API key over plain http to a host other than loopback; use https")
	}
	if cfg.Timeout < 0 || cfg.MaxResponseBytes < 0 {
		return nil, errors.New("openai: Timeout and MaxResponseBytes must not be negative")
	}
	c := &Client{
		endpoint: strings.TrimRight(base, "/") + "/chat/completions",
		key:      cfg.APIKey,
		model:    cfg.Model,
		timeout:  cfg.Timeout,
		max:      cfg.MaxResponseBytes,
		http:     cfg.HTTPClient,
	}
	if c.timeout == 0 {
		c.timeout = defaultTimeout
	}
	if c.max == 0 {
		c.max = defaultMaxResponseBytes
	}
	if c.http == nil {
		// No redirects: a redirect could carry the API key to another
		// scheme or host.
		c.http = &http.Client{Transport: http.DefaultTransport, CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		}}
	}
	return c, nil
}

// loopbackHost reports whether host names this machine.
func loopbackHost(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// APIError is a non-2xx answer of the API.
type APIError struct {
	// StatusCode is the HTTP status.
	StatusCode int
	// Type is the error type from the body's error.type, such as
	// "invalid_request_error"; "" when absent.
	Type string
	// Code is the error code from the body's error.code, such as
	// "model_not_found"; "" when absent.
	Code string
	// Message is the API's message (or the status text), with the API key
	// and anything shaped like one removed, at most 512 bytes.
	Message string
}

// Error describes the failure.
func (e *APIError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "openai: HTTP %d", e.StatusCode)
	if e.Code != "" {
		b.WriteString(" " + e.Code)
	} else if e.Type != "" {
		b.WriteString(" " + e.Type)
	}
	b.WriteString(": " + e.Message)
	return b.String()
}

type chatRequest struct {
	Model       string        `json:"model"`
	Messages    []chatMessage `json:"messages"`
	MaxTokens   int           `json:"max_tokens,omitempty"`
	Temperature *float64      `json:"temperature,omitempty"`
	Stop        []string      `json:"stop,omitempty"`
}

type chatMessage struct {
	Role    string `json:"role"`
	Content any    `json:"content"` // a string, or []chatPart
}

type chatPart struct {
	Type       string      `json:"type"`
	Text       string      `json:"text,omitempty"`
	ImageURL   *imageURL   `json:"image_url,omitempty"`
	InputAudio *inputAudio `json:"input_audio,omitempty"`
}

type imageURL struct {
	URL string `json:"url"`
}

type inputAudio struct {
	Data   string `json:"data"`
	Format string `json:"format"`
}

type chatResponse struct {
	Model   string `json:"model"`
	Choices []struct {
		Message struct {
			Role    string  `json:"role"`
			Content *string `json:"content"`
			Refusal *string `json:"refusal"`
		} `json:"message"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
}

type errorBody struct {
	Error *struct {
		Message string          `json:"message"`
		Type    string          `json:"type"`
		Code    json.RawMessage `json:"code"`
	} `json:"error"`
}

// CreateMessage asks the API for the completion of r.
func (c *Client) CreateMessage(ctx context.Context, r *mrtr.SamplingRequest) (*mrtr.SamplingResult, error) {
	body, err := c.encode(r)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.endpoint, bytes.NewReader(body))
	if err != nil {
		return nil, errors.New("openai: cannot build the request")
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if c.key != "" {
		req.Header.Set("Authorization", "Bearer "+c.key)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		// The URL is left out: a base URL may carry credentials.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, fmt.Errorf("openai: POST chat/completions: %w", c.scrubErr(err))
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, c.max+1))
	if err != nil {
		return nil, fmt.Errorf("openai: reading the response: %w", c.scrubErr(err))
	}
	if int64(len(raw)) > c.max {
		return nil, fmt.Errorf("openai: response larger than %d bytes", c.max)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, c.apiError(resp.StatusCode, raw)
	}
	var cr chatResponse
	if err := json.Unmarshal(raw, &cr); err != nil {
		return nil, fmt.Errorf("openai: malformed response: %v", err)
	}
	if len(cr.Choices) == 0 {
		return nil, errors.New("openai: malformed response: no choices")
	}
	ch := cr.Choices[0]
	var text string
	switch {
	case ch.Message.Content != nil:
		text = *ch.Message.Content
	case ch.Message.Refusal != nil:
		text = *ch.Message.Refusal
	default:
		return nil, errors.New("openai: malformed response: the first choice has no content")
	}
	name := cr.Model
	if name == "" {
		name = c.modelFor(r)
	}
	return &mrtr.SamplingResult{
		Role:       mrtr.RoleAssistant,
		Content:    []mrtr.SamplingContent{{Type: "text", Text: text}},
		Model:      name,
		StopReason: stopReason(ch.FinishReason),
	}, nil
}

func (c *Client) modelFor(r *mrtr.SamplingRequest) string {
	if c.model != "" {
		return c.model
	}
	if r.ModelPreferences != nil {
		for _, h := range r.ModelPreferences.Hints {
			if h.Name != "" {
				return h.Name
			}
		}
	}
	return ""
}

// encode maps a sampling request to a chat-completions request body.
func (c *Client) encode(r *mrtr.SamplingRequest) ([]byte, error) {
	if r == nil || len(r.Messages) == 0 {
		return nil, errors.New("openai: the request has no messages")
	}
	if len(r.Tools) > 0 || r.ToolChoice != nil {
		return nil, errors.New("openai: tool use in sampling requests is not supported")
	}
	cr := chatRequest{Model: c.modelFor(r), MaxTokens: r.MaxTokens, Temperature: r.Temperature, Stop: r.StopSequences}
	if cr.Model == "" {
		return nil, errors.New("openai: no model configured and the request names none in modelPreferences.hints")
	}
	if r.SystemPrompt != "" {
		cr.Messages = append(cr.Messages, chatMessage{Role: "system", Content: r.SystemPrompt})
	}
	for i, m := range r.Messages {
		if m.Role != mrtr.RoleUser && m.Role != mrtr.RoleAssistant {
			return nil, fmt.Errorf("openai: messages[%d]: role %q is not user or assistant", i, m.Role)
		}
		content, err := encodeContent(m.Content)
		if err != nil {
			return nil, fmt.Errorf("openai: messages[%d]: %w", i, err)
		}
		cr.Messages = append(cr.Messages, chatMessage{Role: string(m.Role), Content: content})
	}
	return json.Marshal(cr)
}

func encodeContent(blocks []mrtr.SamplingContent) (any, error) {
	if len(blocks) == 1 && blocks[0].Type == "text" {
		return blocks[0].Text, nil
	}
	parts := make([]chatPart, 0, len(blocks))
	for i, b := range blocks {
		switch b.Type {
		case "text":
			parts = append(parts, chatPart{Type: "text", Text: b.Text})
		case "image":
			parts = append(parts, chatPart{Type: "image_url", ImageURL: &imageURL{URL: "data:" + b.MIMEType + ";base64," + b.Data}})
		case "audio":
			format, ok := audioFormat(b.MIMEType)
			if !ok {
				return nil, fmt.Errorf("content[%d]: audio type %q is not supported (wav or mp3)", i, b.MIMEType)
			}
			parts = append(parts, chatPart{Type: "input_audio", InputAudio: &inputAudio{Data: b.Data, Format: format}})
		default:
			return nil, fmt.Errorf("content[%d]: %s blocks are not supported", i, b.Type)
		}
	}
	return parts, nil
}

func audioFormat(mime string) (string, bool) {
	switch mime {
	case "audio/wav", "audio/x-wav", "audio/wave":
		return "wav", true
	case "audio/mpeg", "audio/mp3":
		return "mp3", true
	}
	return "", false
}

func stopReason(finish string) string {
	switch finish {
	case "stop":
		return "endTurn"
	case "length":
		return "maxTokens"
	case "tool_calls", "function_call":
		return "toolUse"
	}
	return finish
}

// keyShape matches strings that look like provider API keys, including the
// partly masked form some APIs echo in error messages.
var keyShape = regexp.MustCompile(`\b(sk|pk|rk)-[A-Za-z0-9_*\-]{6,}`)

func (c *Client) scrub(s string) string {
	if c.key != "" {
		s = strings.ReplaceAll(s, c.key, "[redacted]")
	}
	return keyShape.ReplaceAllString(s, "[redacted]")
}

// scrubErr keeps err's identity for errors.Is (context deadlines) when its
// text holds nothing to remove.
func (c *Client) scrubErr(err error) error {
	if s := err.Error(); c.scrub(s) != s {
		return errors.New(c.scrub(s))
	}
	return err
}

func (c *Client) apiError(status int, raw []byte) error {
	e := &APIError{StatusCode: status, Message: http.StatusText(status)}
	var eb errorBody
	if json.Unmarshal(raw, &eb) == nil && eb.Error != nil {
		if eb.Error.Message != "" {
			e.Message = eb.Error.Message
		}
		e.Type = eb.Error.Type
		var code string
		if json.Unmarshal(eb.Error.Code, &code) == nil {
			e.Code = code
		} else if len(eb.Error.Code) > 0 && string(eb.Error.Code) != "null" {
			e.Code = string(eb.Error.Code)
		}
	}
	e.Message = c.scrub(e.Message)
	e.Type = c.scrub(e.Type)
	e.Code = c.scrub(e.Code)
	if len(e.Message) > 512 {
		cut := 512
		for cut > 0 && !utf8.RuneStart(e.Message[cut]) {
			cut--
		}
		e.Message = e.Message[:cut] + "…"
	}
	if e.Message == "" {
		e.Message = fmt.Sprintf("status %d", status)
	}
	return e
}
