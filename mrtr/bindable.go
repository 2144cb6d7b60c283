package mrtr

import (
	"encoding/json"
	"fmt"
	"math/big"
	"strconv"
	"strings"
)

// maxBindDepth bounds the nesting checkBindable walks.
const maxBindDepth = 64

// checkBindable refuses arguments whose digest would not pin what a
// handler reads from them. The digest (package state) hashes the RFC 8785
// form, where member order does not matter and numbers are IEEE doubles,
// while Go's JSON decoding matches member names ignoring case (the last
// one wins) and keeps integers exact. So a state issued for
// {"amount":5,"AMOUNT":1000} would also open for {"AMOUNT":1000,"amount":5},
// which a handler reads as 1000, and a state issued for one 19-digit
// integer would open for another that rounds to the same double. Both
// shapes are refused: no two member names of one object may be equal
// ignoring case, and every number must be, as a value, the shortest
// decimal of its double (1, 1.0, 1e0 and 0.1 are; 9007199254740993 and
// 0.10000000000000000001 are not: send such values as strings).
func checkBindable(raw json.RawMessage) error {
	return bindable(raw, "arguments", 0)
}

func bindable(v json.RawMessage, path string, depth int) error {
	if depth > maxBindDepth {
		return fmt.Errorf("%s is nested too deeply", path)
	}
	if len(v) == 0 {
		return nil
	}
	switch c := v[0]; {
	case c == '{':
		seen := map[string]string{}
		return eachMember(v, func(name string, m json.RawMessage) error {
			folded := strings.ToLower(name)
			if prev, dup := seen[folded]; dup {
				return fmt.Errorf("%s has members %q and %q, which differ only in case", path, prev, name)
			}
			seen[folded] = name
			return bindable(m, path+"."+name, depth+1)
		})
	case c == '[':
		var elems []json.RawMessage
		if err := json.Unmarshal(v, &elems); err != nil {
			return err
		}
		for i, e := range elems {
			if err := bindable(e, fmt.Sprintf("%s[%d]", path, i), depth+1); err != nil {
				return err
			}
		}
	case c == '-' || (c >= '0' && c <= '9'):
		if !exactNumber(string(v)) {
			return fmt.Errorf("%s: the number %s has no exact IEEE 754 double form; send it as a string", path, v)
		}
	}
	return nil
}

// exactNumber reports whether the literal's value equals the shortest
// decimal that round-trips its double.
func exactNumber(lit string) bool {
	f, err := strconv.ParseFloat(lit, 64)
	if err != nil {
		return false
	}
	want, ok := new(big.Rat).SetString(lit)
	if !ok {
		return false
	}
	got, ok := new(big.Rat).SetString(strconv.FormatFloat(f, 'g', -1, 64))
	return ok && want.Cmp(got) == 0
}
