package mrtr

import "sort"

// Responses are the client's answers to the previous round, decoded by the
// kind recorded for each key when it was asked. Answers to keys that were
// not asked never appear here.
type Responses struct {
	list  []answer       // in the order decoded; each key once
	index map[string]int // key → position in list, once list is long
}

// answer is one decoded answer: a *SamplingResult, *ElicitResult or
// *RootsResult.
type answer struct {
	key string
	v   any
}

// indexAnswersFrom is the number of answers past which Responses looks
// keys up in a map rather than in order.
const indexAnswersFrom = 8

// Sampling returns the model's answer for key.
func (r Responses) Sampling(key string) (*SamplingResult, bool) {
	v, ok := r.get(key)
	a, isKind := v.(*SamplingResult)
	return a, ok && isKind
}

// Elicitation returns the user's answer for key.
func (r Responses) Elicitation(key string) (*ElicitResult, bool) {
	v, ok := r.get(key)
	a, isKind := v.(*ElicitResult)
	return a, ok && isKind
}

// Roots returns the client's roots for key.
func (r Responses) Roots(key string) (*RootsResult, bool) {
	v, ok := r.get(key)
	a, isKind := v.(*RootsResult)
	return a, ok && isKind
}

// Len returns the number of answers.
func (r Responses) Len() int { return len(r.list) }

// Keys returns the answered keys, sorted.
func (r Responses) Keys() []string {
	keys := make([]string, 0, len(r.list))
	for _, a := range r.list {
		keys = append(keys, a.key)
	}
	sort.Strings(keys)
	return keys
}

func (r Responses) has(key string) bool {
	_, ok := r.get(key)
	return ok
}

// get returns the answer under key, whatever its kind.
func (r Responses) get(key string) (any, bool) {
	if r.index != nil {
		if i, ok := r.index[key]; ok {
			return r.list[i].v, true
		}
		return nil, false
	}
	for _, a := range r.list {
		if a.key == key {
			return a.v, true
		}
	}
	return nil, false
}

// put records an answer decoded by decodeAnswer for its kind; an answer
// under a key already answered replaces it.
func (r *Responses) put(key string, v any) {
	switch v.(type) {
	case *SamplingResult, *ElicitResult, *RootsResult:
	default:
		return
	}
	if r.index != nil {
		if i, ok := r.index[key]; ok {
			r.list[i].v = v
			return
		}
	} else {
		for i := range r.list {
			if r.list[i].key == key {
				r.list[i].v = v
				return
			}
		}
	}
	if r.list == nil {
		r.list = make([]answer, 0, 2)
	}
	r.list = append(r.list, answer{key, v})
	switch n := len(r.list); {
	case r.index != nil:
		r.index[key] = n - 1
	case n > indexAnswersFrom:
		r.index = make(map[string]int, 2*n)
		for i, a := range r.list {
			r.index[a.key] = i
		}
	}
}
