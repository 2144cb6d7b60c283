package main

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// Bounds of the answer to pick_files.
const (
	// MaxPicks is how many files the model may choose.
	MaxPicks = 3
	// maxPickAnswer is the longest answer examined, in bytes. The request
	// allows 400 tokens, which is far less.
	maxPickAnswer = 8 << 10
)

// PickError says why an answer to pick_files was refused. It never quotes
// the answer: the text came from a model and is not trusted.
type PickError struct{ Reason string }

func (e *PickError) Error() string { return "invalid answer to pick_files: " + e.Reason }

func pickErr(format string, args ...any) error {
	return &PickError{Reason: fmt.Sprintf(format, args...)}
}

// ParsePick validates the model's answer to pick_files against the listing
// it was shown. The answer must be exactly a JSON array (surrounding white
// space allowed, nothing else: no prose, no code fence) of one to MaxPicks
// strings, each one of the listed paths, none repeated. It returns the
// paths in the order given, or a *PickError. A path that the listing's
// repository withholds (hidden, or named like a credential) is refused
// naming the rule.
func ParsePick(answer string, listing Listing) ([]string, error) {
	if len(answer) > maxPickAnswer {
		return nil, pickErr("longer than %d bytes", maxPickAnswer)
	}
	b := bytes.TrimSpace([]byte(answer))
	if len(b) == 0 || b[0] != '[' {
		return nil, pickErr("not a JSON array")
	}
	var items []json.RawMessage
	if err := json.Unmarshal(b, &items); err != nil {
		return nil, pickErr("not a JSON array")
	}
	switch {
	case len(items) == 0:
		return nil, pickErr("no paths chosen")
	case len(items) > MaxPicks:
		return nil, pickErr("%d paths chosen, at most %d allowed", len(items), MaxPicks)
	}
	picks := make([]string, 0, len(items))
	for i, raw := range items {
		var p string
		if raw[0] != '"' || json.Unmarshal(raw, &p) != nil {
			return nil, pickErr("entry %d is not a string", i)
		}
		// A withheld path is refused by its rule: in client-sampling mode
		// the client, not the server, chose it.
		if listing.withheld != nil && validRel(p) == nil {
			if rule := listing.withheld(p); rule != "" {
				return nil, pickErr("entry %d is withheld by rule %s", i, rule)
			}
		}
		if !listing.Contains(p) {
			return nil, pickErr("entry %d is not one of the listed paths", i)
		}
		for _, q := range picks {
			if q == p {
				return nil, pickErr("entry %d repeats an earlier path", i)
			}
		}
		picks = append(picks, p)
	}
	return picks, nil
}
