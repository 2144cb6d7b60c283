package mrtr

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/go-playground/validator/v10"

	"github.com/mrtrkit/mrtrkit/state"
)

// validate is shared: a validator caches struct metadata and is safe for
// concurrent use.
var validate = validator.New(validator.WithRequiredStructEnabled())

// gateCapabilities returns -32021 naming every capability the embedded
// requests need and this request did not declare, so that a client which
// declares exactly what it is told is not refused again. The requests must
// have been validated (no nil pointers).
func gateCapabilities(reqs map[string]InputRequest, caps ClientCapabilities) *Error {
	var need ClientCapabilities
	missing := false
	needElicit := func() *ElicitCapability {
		if need.Elicitation == nil {
			need.Elicitation = &ElicitCapability{}
		}
		return need.Elicitation
	}
	for _, r := range reqs {
		switch v := r.(type) {
		case *SamplingRequest:
			have := caps.Sampling
			if have == nil {
				need.Sampling = orSampling(need.Sampling)
				missing = true
				have = &SamplingCapability{}
			}
			if (len(v.Tools) > 0 || v.ToolChoice != nil || usesToolBlocks(v.Messages)) && have.Tools == nil {
				need.Sampling = orSampling(need.Sampling)
				need.Sampling.Tools = Object{}
				missing = true
			}
			if v.IncludeContext != "" && v.IncludeContext != "none" && have.Context == nil {
				need.Sampling = orSampling(need.Sampling)
				need.Sampling.Context = Object{}
				missing = true
			}
		case *ElicitRequest:
			if v.Mode == "url" {
				if !caps.URLElicitation() {
					needElicit().URL = Object{}
					missing = true
				}
			} else if !caps.FormElicitation() {
				needElicit()
				missing = true
			}
		case *RootsRequest:
			if caps.Roots == nil {
				need.Roots = &Object{}
				missing = true
			}
		}
	}
	if !missing {
		return nil
	}
	// An elicitation object naming only url means url only; when form is
	// needed as well (or the client declared url only), name it.
	if e := need.Elicitation; e != nil && e.Form == nil {
		for _, r := range reqs {
			if v, ok := r.(*ElicitRequest); ok && v.Mode != "url" && (e.URL != nil || caps.Elicitation != nil) {
				e.Form = Object{}
				break
			}
		}
	}
	return ErrMissingCapability(need)
}

func orSampling(s *SamplingCapability) *SamplingCapability {
	if s == nil {
		return &SamplingCapability{}
	}
	return s
}

func usesToolBlocks(msgs []SamplingMessage) bool {
	for _, m := range msgs {
		for _, c := range m.Content {
			if c.Type == "tool_use" || c.Type == "tool_result" {
				return true
			}
		}
	}
	return false
}

// validateInputRequest checks what a handler embeds; a failure is a bug
// in the handler.
func validateInputRequest(r InputRequest) error {
	switch v := r.(type) {
	case *SamplingRequest:
		if v == nil {
			return errors.New("nil sampling request")
		}
		if err := validate.Struct(v); err != nil {
			return err
		}
		for i, m := range v.Messages {
			if err := checkBlocks(m.Content); err != nil {
				return fmt.Errorf("messages[%d]: %w", i, err)
			}
		}
		for _, t := range v.Tools {
			if !toolNameRE.MatchString(t.Name) || isAbsent(t.InputSchema) {
				return fmt.Errorf("sampling tool %q needs a valid name and an inputSchema", t.Name)
			}
		}
	case *ElicitRequest:
		if v == nil {
			return errors.New("nil elicitation request")
		}
		if v.Message == "" || (v.Mode != "" && v.Mode != "form" && v.Mode != "url") {
			return errors.New("elicitation needs a message and mode form or url")
		}
		switch v.Mode {
		case "", "form":
			if v.RequestedSchema == nil || v.URL != "" {
				return errors.New("form elicitation needs requestedSchema and no url")
			}
			if v.RequestedSchema.Type != "object" || v.RequestedSchema.Properties == nil {
				return errors.New("requestedSchema must be an object schema with properties")
			}
			for name, p := range v.RequestedSchema.Properties {
				if err := checkPrimitiveSchema(p); err != nil {
					return fmt.Errorf("requestedSchema property %q: %w", name, err)
				}
			}
		case "url":
			if v.RequestedSchema != nil || v.URL == "" {
				return errors.New("url elicitation needs a url and no requestedSchema")
			}
			if err := validate.Var(v.URL, "url"); err != nil {
				return errors.New("url elicitation: url is not a URL")
			}
		}
	case *RootsRequest:
		if v == nil {
			return errors.New("nil roots request")
		}
	default:
		return fmt.Errorf("unknown input request type %T", r)
	}
	return nil
}

// checkPrimitiveSchema accepts the flat schemas form elicitation allows.
func checkPrimitiveSchema(raw json.RawMessage) error {
	var p struct {
		Type  string          `json:"type"`
		Enum  json.RawMessage `json:"enum"`
		OneOf json.RawMessage `json:"oneOf"`
		Items *struct {
			Type  string          `json:"type"`
			Enum  json.RawMessage `json:"enum"`
			AnyOf json.RawMessage `json:"anyOf"`
		} `json:"items"`
	}
	if json.Unmarshal(raw, &p) != nil {
		return errors.New("must be an object")
	}
	switch p.Type {
	case "string", "number", "integer", "boolean":
		return nil
	case "array":
		if p.Items != nil && (p.Items.Enum != nil || p.Items.AnyOf != nil) {
			return nil
		}
		return errors.New("array properties must be multi-select enums")
	}
	return fmt.Errorf("type %q is not a primitive schema type", p.Type)
}

// checkBlocks checks sampling content: media must be canonical base64 with
// a MIME type of its kind.
func checkBlocks(blocks []SamplingContent) error {
	for i, c := range blocks {
		if err := validate.Struct(c); err != nil {
			return fmt.Errorf("content[%d]: %w", i, err)
		}
		switch c.Type {
		case "image", "audio":
			if !strings.HasPrefix(c.MIMEType, c.Type+"/") {
				return fmt.Errorf("content[%d]: %s content needs a %s/* mimeType, not %q", i, c.Type, c.Type, c.MIMEType)
			}
			if !canonicalBase64(c.Data) {
				return fmt.Errorf("content[%d]: data is not canonical base64", i)
			}
		case "tool_use":
			if c.ID == "" || c.Name == "" || isAbsent(c.Input) || c.Input[0] != '{' {
				return fmt.Errorf("content[%d]: tool_use needs id, name and an input object", i)
			}
		case "tool_result":
			if c.ToolUseID == "" {
				return fmt.Errorf("content[%d]: tool_result needs toolUseId", i)
			}
		}
	}
	return nil
}

// canonicalBase64 reports whether s is padded standard base64 that
// re-encodes to itself.
func canonicalBase64(s string) bool {
	if s == "" {
		return false
	}
	b, err := base64.StdEncoding.Strict().DecodeString(s)
	return err == nil && base64.StdEncoding.EncodeToString(b) == s
}

// decodeAnswer decodes an untrusted answer by the kind it was asked as.
func decodeAnswer(kind state.Kind, raw json.RawMessage) (any, error) {
	if raw[0] != '{' {
		return nil, errors.New("must be an object")
	}
	dec := func(v any) error {
		if err := json.Unmarshal(raw, v); err != nil {
			return fmt.Errorf("malformed: %v", err)
		}
		return nil
	}
	switch kind {
	case state.KindSampling:
		var r SamplingResult
		if err := dec(&r); err != nil {
			return nil, err
		}
		if err := r.Validate(); err != nil {
			return nil, err
		}
		return &r, nil
	case state.KindElicitForm, state.KindElicitURL:
		var r ElicitResult
		if err := dec(&r); err != nil {
			return nil, err
		}
		if r.Action != "accept" && r.Action != "decline" && r.Action != "cancel" {
			return nil, errors.New("an elicitation answer needs action accept, decline or cancel")
		}
		if r.Action != "accept" || kind == state.KindElicitURL {
			r.Content = nil
		}
		for k, v := range r.Content {
			if !elicitValue(v) {
				return nil, fmt.Errorf("content %q must be a string, number, boolean or array of strings", k)
			}
		}
		return &r, nil
	case state.KindRoots:
		var r RootsResult
		if err := dec(&r); err != nil {
			return nil, err
		}
		if err := validate.Struct(&r); err != nil {
			return nil, errors.New("a roots answer needs roots, each with a file:// uri")
		}
		return &r, nil
	}
	return nil, fmt.Errorf("unknown kind %v", kind)
}

func elicitValue(v any) bool {
	switch t := v.(type) {
	case string, float64, bool:
		return true
	case []any:
		for _, e := range t {
			if _, ok := e.(string); !ok {
				return false
			}
		}
		return true
	}
	return false
}
