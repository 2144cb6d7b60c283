package mrtr

import "sort"

// Responses are the client's answers to the previous round, decoded by the
// kind recorded for each key when it was asked. Answers to keys that were
// not asked never appear here.
type Responses struct {
	sampling map[string]*SamplingResult
	elicit   map[string]*ElicitResult
	roots    map[string]*RootsResult
}

// Sampling returns the model's answer for key.
func (r Responses) Sampling(key string) (*SamplingResult, bool) {
	v, ok := r.sampling[key]
	return v, ok
}

// Elicitation returns the user's answer for key.
func (r Responses) Elicitation(key string) (*ElicitResult, bool) {
	v, ok := r.elicit[key]
	return v, ok
}

// Roots returns the client's roots for key.
func (r Responses) Roots(key string) (*RootsResult, bool) {
	v, ok := r.roots[key]
	return v, ok
}

// Len returns the number of answers.
func (r Responses) Len() int { return len(r.sampling) + len(r.elicit) + len(r.roots) }

// Keys returns the answered keys, sorted.
func (r Responses) Keys() []string {
	keys := make([]string, 0, r.Len())
	for k := range r.sampling {
		keys = append(keys, k)
	}
	for k := range r.elicit {
		keys = append(keys, k)
	}
	for k := range r.roots {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func (r Responses) has(key string) bool {
	_, a := r.sampling[key]
	_, b := r.elicit[key]
	_, c := r.roots[key]
	return a || b || c
}

// get returns the answer under key, whatever its kind.
func (r Responses) get(key string) (any, bool) {
	if v, ok := r.elicit[key]; ok {
		return v, true
	}
	if v, ok := r.sampling[key]; ok {
		return v, true
	}
	if v, ok := r.roots[key]; ok {
		return v, true
	}
	return nil, false
}

// put records an answer decoded by decodeAnswer for its kind.
func (r *Responses) put(key string, v any) {
	switch a := v.(type) {
	case *SamplingResult:
		if r.sampling == nil {
			r.sampling = map[string]*SamplingResult{}
		}
		r.sampling[key] = a
	case *RootsResult:
		if r.roots == nil {
			r.roots = map[string]*RootsResult{}
		}
		r.roots[key] = a
	case *ElicitResult:
		if r.elicit == nil {
			r.elicit = map[string]*ElicitResult{}
		}
		r.elicit[key] = a
	}
}
