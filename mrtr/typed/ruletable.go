package typed

import (
	"fmt"
	"regexp"
	"strconv"
)

// This file is the rule table of "Rules and schemas" in the package
// documentation, as code: one handler per validator tag, each recording
// in a ruleSet what its rule asks of a value of one kind. A tag without a
// handler (and not a RegisterPattern tag) is enforced by the server alone.

// ruleFunc records rule it, of a value of kind k, in r. It reports whether
// the rule has an exact JSON Schema form (false leaves it to the server),
// and an error when validator cannot read its parameter; errInexact is
// read as false. ptr says the rule is one of a pointer's target.
type ruleFunc func(r *ruleSet, k vkind, ptr bool, it rule) (mapped bool, err error)

// ruleTable maps validator's tags to their handlers, in the order of the
// package documentation's table.
var ruleTable = map[string]ruleFunc{
	// Sizes of strings, slices and maps; values of numbers.
	"min": boundRule(bounds.atLeast),
	"gte": boundRule(bounds.atLeast),
	"max": boundRule(bounds.atMost),
	"lte": boundRule(bounds.atMost),
	"gt":  boundRule(bounds.above),
	"lt":  boundRule(bounds.below),
	"len": boundRule(bounds.exactly),
	// Values allowed and denied.
	"eq":       equalRule,
	"ne":       equalRule,
	"oneof":    oneofRule,
	"required": requiredRule,
	// Formats and patterns of strings.
	"email":      formatRule,
	"url":        formatRule,
	"uri":        formatRule,
	"uuid":       formatRule,
	"hostname":   formatRule,
	"ipv4":       formatRule,
	"ipv6":       formatRule,
	"datetime":   datetimeRule,
	"startswith": patternRule,
	"endswith":   patternRule,
	"contains":   patternRule,
	// Items of slices.
	"unique": uniqueRule,
}

// collect reads the rules of one value of kind k (omit rules already
// removed) into a ruleSet. A rule whose parameter validator cannot read is
// an error: validator would panic on the first value it checks.
//
// ptr says the rules are those of a pointer's target: there, required
// only refuses nil, which the caller handles.
func collect(k vkind, ptr bool, items []rule) (*ruleSet, error) {
	r := &ruleSet{}
	for _, it := range items {
		if it.or {
			r.serverOnly = append(r.serverOnly, it.String())
			continue
		}
		mapped, err := applyRule(r, k, ptr, it)
		if err == errInexact {
			mapped, err = false, nil
		}
		if err != nil {
			return nil, fmt.Errorf("rule %q: %v", it.String(), err)
		}
		if !mapped {
			r.serverOnly = append(r.serverOnly, it.String())
		}
	}
	return r, nil
}

// applyRule records one rule through its handler of ruleTable, or as a
// RegisterPattern tag.
func applyRule(r *ruleSet, k vkind, ptr bool, it rule) (bool, error) {
	if f, ok := ruleTable[it.tag]; ok {
		return f(r, k, ptr, it)
	}
	if p, ok := lookupPattern(it.tag); ok && k == kString && it.param == "" {
		r.patterns = append(r.patterns, p.pattern)
		return true, nil
	}
	return false, nil
}

// isSized reports whether the bounds of kind k are on its size: the
// length of a string, the items of a slice, the members of a map.
func isSized(k vkind) bool { return k == kString || k == kSlice || k == kMap }

// isNumeric reports whether the bounds of kind k are on its value.
func isNumeric(k vkind) bool { return k == kInt || k == kUint || k == kFloat }

// bound is what a bound rule asks: of a size (n an integer parameter) and
// of a number (f its numeric parameter).
type bound struct {
	size func(r *ruleSet, n int64)
	num  func(r *ruleSet, f float64)
}

// bounds are the bound rules: min and gte are atLeast, max and lte
// atMost, gt above, lt below, len exactly.
var bounds = struct{ atLeast, atMost, above, below, exactly bound }{
	atLeast: bound{
		size: func(r *ruleSet, n int64) { r.atLeast(n) },
		num:  func(r *ruleSet, f float64) { tighterMin(&r.min, f) },
	},
	atMost: bound{
		size: func(r *ruleSet, n int64) { r.atMost(n) },
		num:  func(r *ruleSet, f float64) { tighterMax(&r.max, f) },
	},
	above: bound{
		size: func(r *ruleSet, n int64) { r.atLeast(n + 1) },
		num:  func(r *ruleSet, f float64) { tighterMin(&r.exMin, f) },
	},
	below: bound{
		size: func(r *ruleSet, n int64) { r.atMost(n - 1) },
		num:  func(r *ruleSet, f float64) { tighterMax(&r.exMax, f) },
	},
	exactly: bound{
		size: func(r *ruleSet, n int64) { r.atLeast(n); r.atMost(n) },
		num:  func(r *ruleSet, f float64) { tighterMin(&r.min, f); tighterMax(&r.max, f) },
	},
}

// boundRule is the handler of a bound rule: on the size of strings,
// slices and maps, on the value of numbers, unmapped on other kinds.
func boundRule(b bound) ruleFunc {
	return func(r *ruleSet, k vkind, _ bool, it rule) (bool, error) {
		switch {
		case isSized(k):
			n, err := sizeParam(it.param)
			if err != nil {
				return true, err
			}
			b.size(r, n)
			return true, nil
		case isNumeric(k):
			f, _, err := numParam(k, it.param)
			if err != nil {
				return true, err
			}
			b.num(r, f)
			return true, nil
		}
		return false, nil
	}
}

// requiredRule: a string is not empty, a number not zero, a bool true.
// On a pointer's target it only refuses nil, which the caller handles.
func requiredRule(r *ruleSet, k vkind, ptr bool, _ rule) (bool, error) {
	r.required = true
	if ptr {
		return true, nil
	}
	switch k {
	case kString:
		r.atLeast(1)
	case kInt:
		r.denied = append(r.denied, int64(0))
	case kUint:
		r.denied = append(r.denied, uint64(0))
	case kFloat:
		r.denied = append(r.denied, 0.0) // -0 is zero to both
	case kBool:
		r.allow([]any{true})
	}
	return true, nil
}

// equalRule handles eq and ne: the only value allowed, or a value denied,
// of a string, number or bool; eq on a slice or a map is its size.
func equalRule(r *ruleSet, k vkind, _ bool, it rule) (bool, error) {
	var v any
	var err error
	switch k {
	case kString:
		v = it.param
	case kInt, kUint, kFloat:
		_, v, err = numParam(k, it.param)
	case kBool:
		var b bool
		b, err = strconv.ParseBool(it.param)
		v = b
	case kSlice, kMap:
		if it.tag == "ne" {
			return false, nil
		}
		// A parameter that is not an integer records nothing and is
		// not reported.
		if n, err := sizeParam(it.param); err == nil {
			r.atLeast(n)
			r.atMost(n)
		}
		return true, nil
	default:
		return false, nil
	}
	if err != nil {
		return true, err
	}
	if it.tag == "eq" {
		r.allow([]any{v})
	} else {
		r.denied = append(r.denied, v)
	}
	return true, nil
}

// oneofRule: the values a string or an integer may take. An integer value
// is mapped only as validator prints it, and only when a double holds it
// exactly; a word that is not an integer at all is left out of the enum.
func oneofRule(r *ruleSet, k vkind, _ bool, it rule) (bool, error) {
	var vals []any
	for _, s := range oneofValues(it.param) {
		switch k {
		case kString:
			vals = append(vals, s)
		case kInt:
			// validator compares the decimal form of the value.
			if i, perr := strconv.ParseInt(s, 10, 64); perr == nil && strconv.FormatInt(i, 10) == s {
				if _, ok := exactFloat(i); !ok {
					return false, nil
				}
				vals = append(vals, i)
			}
		case kUint:
			if u, perr := strconv.ParseUint(s, 10, 64); perr == nil && strconv.FormatUint(u, 10) == s {
				if _, ok := exactFloatU(u); !ok {
					return false, nil
				}
				vals = append(vals, u)
			}
		default:
			return false, nil
		}
	}
	r.allow(vals)
	return true, nil
}

// formatRule: the format of a string, the first format rule only.
func formatRule(r *ruleSet, k vkind, _ bool, it rule) (bool, error) {
	if k != kString || r.format != "" {
		return false, nil
	}
	r.format = formats[it.tag]
	return true, nil
}

// datetimeRule: the format of a string whose layout is a JSON Schema
// format, the first format rule only.
func datetimeRule(r *ruleSet, k vkind, _ bool, it rule) (bool, error) {
	f, ok := datetimeFormats[it.param]
	if k != kString || !ok || r.format != "" {
		return false, nil
	}
	r.format = f
	return true, nil
}

// patternRule handles startswith, endswith and contains: a pattern of a
// string, its parameter escaped.
func patternRule(r *ruleSet, k vkind, _ bool, it rule) (bool, error) {
	if k != kString {
		return false, nil
	}
	q := regexp.QuoteMeta(it.param)
	switch it.tag {
	case "startswith":
		q = "^" + q
	case "endswith":
		q += "$"
	}
	r.patterns = append(r.patterns, q)
	return true, nil
}

// uniqueRule: the items of a slice are distinct (unique=field is left to
// the server).
func uniqueRule(r *ruleSet, k vkind, _ bool, it rule) (bool, error) {
	if k != kSlice || it.param != "" {
		return false, nil
	}
	r.unique = true
	return true, nil
}
