package mrtr

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
	return missingCapability(need)
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

// capable reports, without allocating, whether caps let the client answer
// r; gateCapabilities builds the error when they do not.
func capable(r InputRequest, caps ClientCapabilities) bool {
	switch v := r.(type) {
	case *SamplingRequest:
		s := caps.Sampling
		return s != nil &&
			(s.Tools != nil || len(v.Tools) == 0 && v.ToolChoice == nil && !usesToolBlocks(v.Messages)) &&
			(s.Context != nil || v.IncludeContext == "" || v.IncludeContext == "none")
	case *ElicitRequest:
		if v.Mode == "url" {
			return caps.URLElicitation()
		}
		return caps.FormElicitation()
	case *RootsRequest:
		return caps.Roots != nil
	}
	return false
}
