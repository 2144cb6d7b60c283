package mrtr

import (
	"encoding/json"
	"fmt"

	"github.com/google/jsonschema-go/jsonschema"
)

// compileOutput compiles a tool's declared output schema, so that every
// complete result is checked against it.
func compileOutput(raw json.RawMessage) (*jsonschema.Resolved, error) {
	var s jsonschema.Schema
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, fmt.Errorf("outputSchema: %w", err)
	}
	r, err := s.Resolve(nil)
	if err != nil {
		return nil, fmt.Errorf("outputSchema: %w", err)
	}
	return r, nil
}

// checkOutput holds a tool's complete result to its declared output
// schema: a result that is not an error must carry structuredContent that
// conforms. A mismatch is the server's bug, not the client's: it is
// logged, naming what is wrong, and answered with -32603.
func (s *Server) checkOutput(c *call, r *CallToolResult) *Error {
	if c.ep.out == nil || r.IsError {
		return nil
	}
	problem := ""
	switch v := r.StructuredContent.(type) {
	case nil:
		problem = "the result has no structuredContent"
	default:
		var doc any
		var raw []byte
		if rm, ok := v.(json.RawMessage); ok {
			raw = rm
		} else {
			b, err := json.Marshal(v)
			if err != nil {
				problem = "structuredContent does not encode: " + err.Error()
				break
			}
			raw = b
		}
		if err := json.Unmarshal(raw, &doc); err != nil {
			problem = "structuredContent is not JSON: " + err.Error()
		} else if err := c.ep.out.Validate(doc); err != nil {
			problem = err.Error()
		}
	}
	if problem == "" {
		return nil
	}
	s.log.Error("mrtr: a tool's result does not match its outputSchema", "tool", clip(c.target), "problem", problem)
	return internalError()
}
