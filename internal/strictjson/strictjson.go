// Package strictjson holds mrtrkit's byte-level JSON readers: the strict
// door every argument object (and every elicitation answer's content)
// passes before a handler or the state pipeline sees it, the syntax
// checker every message passes before anything reads it, and the one-pass
// reader that validates a JSON-RPC message, splits its envelope and its
// params, and runs the door over params.arguments on the way.
//
// It knows nothing of MCP beyond the name "arguments": its verdicts are
// plain errors whose text names the offending value by path, and package
// mrtr turns them into JSON-RPC errors.
package strictjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
	"unsafe"

	"github.com/mrtrkit/mrtrkit/internal/wire"
)

// Limits of the strict door.
const (
	// maxArgumentDepth bounds the nesting of objects and arrays in
	// arguments.
	maxArgumentDepth = 100
	// maxNumberLength bounds the characters of one number literal in
	// arguments: the exact-double check then costs a small constant per
	// literal. The longest shortest-form double is 24 characters.
	maxNumberLength = 40
	// maxQuoted bounds what an error message quotes of a member name.
	maxQuoted = 32
	// pairwiseNames is how many members an object may have before its
	// names are checked through a set rather than pairwise.
	pairwiseNames = 8
)

// Check is the one door every argument object passes (the arguments of
// tools/call and prompts/get, the content of an elicitation answer)
// before a handler or the state pipeline sees it. In one pass, in time
// linear in its size, it refuses:
//
//   - two member names of one object that are equal under the case
//     folding encoding/json uses to bind names to struct fields (Unicode
//     simple folding, so "ſ" equals "s" and the Kelvin sign equals "k"):
//     a handler decoding into a struct would bind one of them and the
//     argument digest would pin neither;
//   - numbers that are not, as values, exactly the shortest decimal of an
//     IEEE 754 double (9007199254740993 is not; 1, 1.0 and 1e0 are), or
//     that are longer than 40 characters: the digest canonicalizes
//     numbers as doubles, so it could not tell two such values apart;
//   - strings that are not valid Unicode (invalid UTF-8, lone surrogate
//     escapes), which decoders repair differently;
//   - nesting deeper than 100 levels.
//
// root names the value in the error, whose text is only the problem
// ("arguments.a.b[2] repeats a member name"). With stringValues, every
// member of the top-level object must also be a string (prompt
// arguments); the other rules are judged first. The error names the
// offending member by path, quoting at most a short prefix of each name;
// the path is built only when there is an error to report.
func Check(raw []byte, root string, stringValues bool) error {
	d := door{b: raw, root: root, stringValues: stringValues}
	end := d.value(wire.SkipSpace(raw, 0), 0)
	if d.fail == "" && wire.SkipSpace(raw, end) != len(raw) {
		d.fail = "is not one JSON value"
	}
	if d.fail != "" {
		return errors.New(d.where() + " " + d.fail)
	}
	if stringValues && d.nonString != nil {
		// Checked last, so that a refusal for a rule of the door wins
		// whatever the order of the members.
		return errors.New(NotString(root, d.nonString))
	}
	return nil
}

// NotString words the door's refusal of a top-level member, named by its
// raw (quoted) name, whose value is not a string where every value must
// be.
func NotString(root string, name []byte) string {
	return root + "." + QuoteName(name) + " must be a string"
}

// door walks one argument value. The first problem found stops the walk.
type door struct {
	b            []byte
	root         string
	stringValues bool
	fail         string // what is wrong; "" while all is well
	malformed    bool   // the failure is bad JSON syntax, not a strictness rule
	nonString    []byte // the first top-level member whose value is not a string
	// failPath is the path to the failure, innermost step first: each
	// level the failure unwinds through adds its own step, so that a walk
	// that finds nothing wrong records nothing.
	failPath []pathElem
}

// at adds the step e to the failure's path and returns ret.
func (d *door) at(ret int, e pathElem) int {
	d.failPath = append(d.failPath, e)
	return ret
}

// pathElem is one step of the path to the value being walked: a member
// name (as it appears in the body, quotes included) or an array index.
type pathElem struct {
	name  []byte
	index int
}

func (d *door) bad(reason string) int {
	if d.fail == "" {
		d.fail = reason
	}
	return len(d.b)
}

// syntaxError records that the text is not valid JSON at all.
func (d *door) syntaxError(reason string) int {
	if d.fail == "" {
		d.fail, d.malformed = reason, true
	}
	return len(d.b)
}

// where renders the path of the failure, as arguments.a.b[2]. A deep path
// shows its first and last steps only.
func (d *door) where() string {
	var b strings.Builder
	b.WriteString(d.root)
	n := len(d.failPath)
	for i := range n {
		e := d.failPath[n-1-i]
		if n > 8 && i >= 3 && i < n-4 {
			if i == 3 {
				b.WriteString("...")
			}
			continue
		}
		if e.name == nil && e.index < 0 {
			b.WriteString(" member name")
			continue
		}
		if e.name == nil {
			b.WriteByte('[')
			b.WriteString(strconv.Itoa(e.index))
			b.WriteByte(']')
			continue
		}
		b.WriteByte('.')
		b.WriteString(QuoteName(e.name))
	}
	return b.String()
}

// QuoteName renders a raw member name for an error message: as is when it
// is a short plain identifier, else quoted and cut to a short prefix.
func QuoteName(quoted []byte) string {
	name, err := wire.MemberName(quoted)
	if err != nil {
		name = string(quoted)
	}
	plain := len(name) > 0 && len(name) <= maxQuoted
	for i := 0; plain && i < len(name); i++ {
		c := name[i]
		plain = c == '_' || c == '-' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
	}
	if plain {
		return name
	}
	cut := ""
	if len(name) > maxQuoted {
		n := maxQuoted
		for n > 0 && !utf8.RuneStart(name[n]) {
			n--
		}
		name, cut = name[:n], "..."
	}
	return strconv.Quote(name) + cut
}

// value walks the value at b[i] and returns the index just past it.
func (d *door) value(i, depth int) int {
	if i >= len(d.b) {
		return d.syntaxError("is truncated")
	}
	switch c := d.b[i]; {
	case c == '{':
		if depth >= maxArgumentDepth {
			return d.bad("is nested more than " + strconv.Itoa(maxArgumentDepth) + " levels deep")
		}
		return d.object(i, depth)
	case c == '[':
		if depth >= maxArgumentDepth {
			return d.bad("is nested more than " + strconv.Itoa(maxArgumentDepth) + " levels deep")
		}
		return d.array(i, depth)
	case c == '"':
		end, _ := d.str(i)
		return end
	case c == '-' || c >= '0' && c <= '9':
		return d.number(i)
	case c == 't':
		return d.literal(i, "true")
	case c == 'f':
		return d.literal(i, "false")
	case c == 'n':
		return d.literal(i, "null")
	}
	return d.syntaxError("is not valid JSON")
}

func (d *door) literal(i int, lit string) int {
	if !bytes.HasPrefix(d.b[i:], []byte(lit)) {
		return d.syntaxError("is not valid JSON")
	}
	return i + len(lit)
}

func (d *door) object(i, depth int) int {
	i = wire.SkipSpace(d.b, i+1)
	if i < len(d.b) && d.b[i] == '}' {
		return i + 1
	}
	top := depth == 0
	var names [pairwiseNames][]byte // this object's names, while few
	var set map[string]struct{}     // its folded names, once it outgrows pairwise checks
	n := 0
	for {
		if i >= len(d.b) || d.b[i] != '"' {
			return d.syntaxError("is not valid JSON")
		}
		end, escaped := d.str(i)
		if d.fail != "" {
			return d.at(end, pathElem{index: -1}) // a name that cannot be read
		}
		name := d.b[i:end]
		if fold(&names, name, escaped, n, &set) {
			return d.at(d.bad("repeats a member name: names that differ only in case are one name to Go's JSON decoding"), pathElem{name: name})
		}
		n++
		i = wire.SkipSpace(d.b, end)
		if i >= len(d.b) || d.b[i] != ':' {
			return d.at(d.syntaxError("is not valid JSON"), pathElem{name: name})
		}
		i = wire.SkipSpace(d.b, i+1)
		if top && d.nonString == nil && (i >= len(d.b) || d.b[i] != '"') {
			d.nonString = name
		}
		i = wire.SkipSpace(d.b, d.value(i, depth+1))
		if d.fail != "" {
			return d.at(i, pathElem{name: name})
		}
		switch {
		case i >= len(d.b):
			return d.at(d.syntaxError("is truncated"), pathElem{name: name})
		case d.b[i] == '}':
			return i + 1
		case d.b[i] != ',':
			return d.at(d.syntaxError("is not valid JSON"), pathElem{name: name})
		}
		i = wire.SkipSpace(d.b, i+1)
	}
}

// fold records name (the n-th member of the object) and reports whether
// an earlier member of the same object has a name equal to it under
// simple case folding. Small objects compare pairwise; larger ones keep a
// set of folded names.
func fold(names *[pairwiseNames][]byte, quoted []byte, escaped bool, n int, set *map[string]struct{}) bool {
	name := quoted[1 : len(quoted)-1]
	if escaped {
		s, err := wire.MemberName(quoted)
		if err != nil {
			return false // the string check has already refused it
		}
		name = []byte(s)
	}
	if n < pairwiseNames {
		for _, prev := range names[:n] {
			if bytes.EqualFold(prev, name) {
				return true
			}
		}
		names[n] = name
		if n < pairwiseNames-1 {
			return false
		}
		// The last pairwise name: move everything into the set.
		*set = make(map[string]struct{}, 2*pairwiseNames)
		for _, prev := range names[:n+1] {
			(*set)[string(appendFolded(nil, prev))] = struct{}{}
		}
		return false
	}
	var buf [64]byte
	key := appendFolded(buf[:0], name)
	if _, dup := (*set)[string(key)]; dup {
		return true
	}
	(*set)[string(key)] = struct{}{}
	return false
}

// appendFolded appends the case-folded form of name: two names fold alike
// exactly when bytes.EqualFold reports them equal, which is how
// encoding/json matches member names to struct fields.
func appendFolded(out, name []byte) []byte {
	for i := 0; i < len(name); {
		if c := name[i]; c < utf8.RuneSelf {
			if 'a' <= c && c <= 'z' {
				c -= 'a' - 'A'
			}
			out = append(out, c)
			i++
			continue
		}
		r, n := utf8.DecodeRune(name[i:])
		// The smallest rune of r's simple-folding orbit stands for all.
		for {
			r2 := unicode.SimpleFold(r)
			if r2 <= r {
				r = r2
				break
			}
			r = r2
		}
		out = utf8.AppendRune(out, r)
		i += n
	}
	return out
}

func (d *door) array(i, depth int) int {
	i = wire.SkipSpace(d.b, i+1)
	if i < len(d.b) && d.b[i] == ']' {
		return i + 1
	}
	for k := 0; ; k++ {
		i = wire.SkipSpace(d.b, d.value(i, depth+1))
		if d.fail != "" {
			return d.at(i, pathElem{index: k})
		}
		switch {
		case i >= len(d.b):
			return d.at(d.syntaxError("is truncated"), pathElem{index: k})
		case d.b[i] == ']':
			return i + 1
		case d.b[i] != ',':
			return d.at(d.syntaxError("is not valid JSON"), pathElem{index: k})
		}
		i = wire.SkipSpace(d.b, i+1)
	}
}

// str checks the string at b[i] and returns the index just past it and
// whether it holds escapes. The text must be valid UTF-8 and its escapes
// must not leave a surrogate unpaired.
func (d *door) str(i int) (int, bool) {
	b := d.b
	escaped := false
	for j := i + 1; j < len(b); {
		c := b[j]
		switch {
		case c == '"':
			return j + 1, escaped
		case c == '\\':
			escaped = true
			if j+1 >= len(b) {
				return d.syntaxError("is truncated"), false
			}
			if b[j+1] != 'u' {
				switch b[j+1] {
				case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				default:
					return d.syntaxError("is not valid JSON"), false
				}
				j += 2
				continue
			}
			r, ok := hex4(b, j+2)
			if !ok {
				return d.syntaxError("is not valid JSON"), false
			}
			j += 6
			switch {
			case r >= 0xDC00 && r <= 0xDFFF:
				return d.bad("holds an unpaired surrogate escape"), false
			case r >= 0xD800 && r <= 0xDBFF:
				if j+1 >= len(b) || b[j] != '\\' || b[j+1] != 'u' {
					return d.bad("holds an unpaired surrogate escape"), false
				}
				lo, ok := hex4(b, j+2)
				if !ok || lo < 0xDC00 || lo > 0xDFFF {
					return d.bad("holds an unpaired surrogate escape"), false
				}
				j += 6
			}
		case c < 0x20:
			return d.syntaxError("is not valid JSON"), false
		case c < utf8.RuneSelf:
			j++
		default:
			r, n := utf8.DecodeRune(b[j:])
			if r == utf8.RuneError && n == 1 {
				return d.bad("is not valid UTF-8"), false
			}
			j += n
		}
	}
	return d.syntaxError("is truncated"), false
}

func hex4(b []byte, i int) (rune, bool) {
	if i+4 > len(b) {
		return 0, false
	}
	var r rune
	for _, c := range b[i : i+4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

func (d *door) number(i int) int {
	j := i
	// Fast path: a short integer, which every double holds exactly.
	for j < len(d.b) && d.b[j] >= '0' && d.b[j] <= '9' {
		j++
	}
	if j > i && j-i <= 15 && (d.b[i] != '0' || j == i+1) && (j == len(d.b) || d.b[j] == ',' || d.b[j] == ']' || d.b[j] == '}' || d.b[j] <= ' ') {
		return j
	}
	j, ok := numberEnd(d.b, i)
	if !ok {
		return d.syntaxError("is not valid JSON")
	}
	lit := d.b[i:j]
	if len(lit) > maxNumberLength {
		return d.bad("is a number literal longer than " + strconv.Itoa(maxNumberLength) + " characters; send it as a string")
	}
	if !exactDouble(lit) {
		return d.bad("is a number with no exact IEEE 754 double form; send it as a string")
	}
	return j
}

// exactDouble reports whether the number literal lit (at most
// maxNumberLength bytes) is, as a value, exactly the shortest decimal of
// the double it parses to. Its cost is bounded by the literal's length.
func exactDouble(lit []byte) bool {
	if len(lit) > maxNumberLength {
		return false
	}
	if smallInteger(lit) {
		return true
	}
	// ParseFloat does not keep its argument: viewing the bytes as a
	// string saves an allocation per literal.
	f, err := strconv.ParseFloat(unsafe.String(unsafe.SliceData(lit), len(lit)), 64)
	if err != nil {
		return false
	}
	var buf [32]byte
	return sameDecimal(lit, strconv.AppendFloat(buf[:0], f, 'e', -1, 64))
}

// smallInteger reports whether lit is an integer of at most 15 digits,
// which every double represents exactly.
func smallInteger(lit []byte) bool {
	digits := lit
	if len(digits) > 0 && digits[0] == '-' {
		digits = digits[1:]
	}
	if len(digits) == 0 || len(digits) > 15 {
		return false
	}
	for _, c := range digits {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// decimal is a number literal as sign, significant digits (no leading or
// trailing zeros; empty for zero) and the power of ten of the last digit.
type decimal struct {
	neg    bool
	digits [maxNumberLength]byte
	n      int
	exp    int
}

// parseDecimal reads a number literal of at most maxNumberLength bytes.
// It reports false for anything that is not a JSON number or whose
// exponent is out of any double's reach.
func parseDecimal(lit []byte, d *decimal) bool {
	i := 0
	if i < len(lit) && lit[i] == '-' {
		d.neg = true
		i++
	}
	frac := 0 // digits seen after the point
	point := false
	for ; i < len(lit); i++ {
		c := lit[i]
		switch {
		case c >= '0' && c <= '9':
			if point {
				frac++
			}
			if c == '0' && d.n == 0 {
				continue // a leading zero
			}
			d.digits[d.n] = c
			d.n++
		case c == '.' && !point:
			point = true
		default:
			goto exponent
		}
	}
exponent:
	exp := 0
	if i < len(lit) {
		if lit[i] != 'e' && lit[i] != 'E' {
			return false
		}
		i++
		neg := false
		if i < len(lit) && (lit[i] == '+' || lit[i] == '-') {
			neg = lit[i] == '-'
			i++
		}
		if i == len(lit) {
			return false
		}
		for ; i < len(lit); i++ {
			c := lit[i]
			if c < '0' || c > '9' {
				return false
			}
			if exp > 100000 {
				continue // far beyond any double; the value decides below
			}
			exp = exp*10 + int(c-'0')
		}
		if neg {
			exp = -exp
		}
	}
	d.exp = exp - frac
	for d.n > 0 && d.digits[d.n-1] == '0' {
		d.n--
		d.exp++
	}
	return true
}

// sameDecimal reports whether two number literals have the same value.
func sameDecimal(a, b []byte) bool {
	var x, y decimal
	if !parseDecimal(a, &x) || !parseDecimal(b, &y) {
		return false
	}
	if x.n == 0 || y.n == 0 {
		return x.n == y.n // zero, whatever its sign
	}
	return x.neg == y.neg && x.exp == y.exp && x.n == y.n && bytes.Equal(x.digits[:x.n], y.digits[:y.n])
}

// maxValidDepth bounds the nesting Valid accepts, as encoding/json
// bounds its own.
const maxValidDepth = 10000

// Valid reports whether b is exactly one JSON value (RFC 8259),
// surrounded by optional whitespace: the check every message passes
// before anything reads it. It accepts what json.Valid accepts, except
// nesting deeper than maxValidDepth, and runs several times faster, which
// matters for a body of megabytes that will be refused anyway.
func Valid(b []byte) bool {
	v := syntax{b: b}
	v.space()
	if !v.value(0) {
		return false
	}
	v.space()
	return v.i == len(b)
}

type syntax struct {
	b []byte
	i int
}

func (v *syntax) space() {
	if v.i < len(v.b) && v.b[v.i] > ' ' {
		return // the common case in compact JSON
	}
	for v.i < len(v.b) {
		switch v.b[v.i] {
		case ' ', '\t', '\n', '\r':
			v.i++
		default:
			return
		}
	}
}

func (v *syntax) value(depth int) bool {
	if v.i >= len(v.b) {
		return false
	}
	switch c := v.b[v.i]; {
	case c == '{':
		if depth >= maxValidDepth {
			return false
		}
		v.i++
		v.space()
		if v.i < len(v.b) && v.b[v.i] == '}' {
			v.i++
			return true
		}
		for {
			if v.i >= len(v.b) || v.b[v.i] != '"' || !v.str() {
				return false
			}
			v.space()
			if v.i >= len(v.b) || v.b[v.i] != ':' {
				return false
			}
			v.i++
			v.space()
			if !v.value(depth + 1) {
				return false
			}
			v.space()
			if v.i >= len(v.b) {
				return false
			}
			switch v.b[v.i] {
			case ',':
				v.i++
				v.space()
			case '}':
				v.i++
				return true
			default:
				return false
			}
		}
	case c == '[':
		if depth >= maxValidDepth {
			return false
		}
		v.i++
		v.space()
		if v.i < len(v.b) && v.b[v.i] == ']' {
			v.i++
			return true
		}
		for {
			if !v.value(depth + 1) {
				return false
			}
			v.space()
			if v.i >= len(v.b) {
				return false
			}
			switch v.b[v.i] {
			case ',':
				v.i++
				v.space()
			case ']':
				v.i++
				return true
			default:
				return false
			}
		}
	case c == '"':
		return v.str()
	case c == '-' || c >= '0' && c <= '9':
		return v.number()
	case c == 't':
		return v.literal("true")
	case c == 'f':
		return v.literal("false")
	case c == 'n':
		return v.literal("null")
	}
	return false
}

func (v *syntax) literal(lit string) bool {
	if !bytes.HasPrefix(v.b[v.i:], []byte(lit)) {
		return false
	}
	v.i += len(lit)
	return true
}

// str checks the string at v.i: no control characters, valid escapes.
// Like encoding/json it does not judge the bytes as UTF-8.
func (v *syntax) str() bool {
	b := v.b
	for j := v.i + 1; j < len(b); {
		// The run of bytes that need no second look: a requestState is
		// hundreds of them, read eight at a time, then one at a time up to
		// the next quote, backslash or control character.
		j = wire.PlainRun(b, j)
		for j < len(b) && strByte[b[j]] {
			j++
		}
		if j >= len(b) {
			break
		}
		c := b[j]
		switch {
		case c == '"':
			v.i = j + 1
			return true
		case c == '\\':
			if j+1 >= len(b) {
				return false
			}
			switch b[j+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				j += 2
			case 'u':
				if _, ok := hex4(b, j+2); !ok {
					return false
				}
				j += 6
			default:
				return false
			}
		case c < 0x20:
			return false
		default:
			j++
		}
	}
	return false
}

// strByte marks the bytes a string holds as they are, as syntax.str
// judges them: neither a quote, a backslash nor a control character.
var strByte = func() (t [256]bool) {
	for c := 0x20; c < 256; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

func (v *syntax) number() bool {
	end, ok := numberEnd(v.b, v.i)
	v.i = end
	return ok
}

// numberEnd returns the index just past the JSON number at b[i] and
// whether it follows the grammar of RFC 8259.
func numberEnd(b []byte, i int) (int, bool) {
	if b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
	default:
		return i, false
	}
	if i < len(b) && b[i] == '.' {
		i++
		if i >= len(b) || b[i] < '0' || b[i] > '9' {
			return i, false
		}
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i >= len(b) || b[i] < '0' || b[i] > '9' {
			return i, false
		}
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
	}
	return i, true
}

// Object validates body, which must be one JSON object surrounded by
// optional whitespace, in one pass, and calls fn with the exact
// (unescaped) name and the raw value of each of its members, in order.
// When sub returns a function for a member's name and that member's value
// is an object, the value's own members are validated and handed to that
// function in the same pass. With args, a member named "arguments" of such
// an inner object whose value is an object passes the strict door in the
// same pass, and args records the verdict. It returns wire.ErrMalformed
// for anything that is not valid JSON, and the first error fn or a
// function of sub returns.
func Object(body []byte, fn func(name []byte, value json.RawMessage) error, sub func(name []byte) func([]byte, json.RawMessage) error, args *Verdict) error {
	v := syntax{b: body}
	v.space()
	if err := v.members(0, fn, sub, args); err != nil {
		return err
	}
	v.space()
	if v.i != len(body) {
		return wire.ErrMalformed
	}
	return nil
}

// members validates the object at v.i and calls fn with the exact
// (unescaped) name and the raw value of each of its members, in order, leaving v.i just past
// the object. When sub returns a function for a member's name and that
// member's value is an object, the value's own members are validated and
// handed to that function in the same pass. It returns wire.ErrMalformed for
// anything that is not valid JSON, and the first error fn returns.
//
// With args, a member named "arguments" whose value is an object passes
// the strict door in the same pass, and args records the verdict.
func (v *syntax) members(depth int, fn func(name []byte, value json.RawMessage) error, sub func(name []byte) func([]byte, json.RawMessage) error, args *Verdict) error {
	if depth >= maxValidDepth || v.i >= len(v.b) || v.b[v.i] != '{' {
		return wire.ErrMalformed
	}
	v.i++
	v.space()
	if v.i < len(v.b) && v.b[v.i] == '}' {
		v.i++
		return nil
	}
	for {
		start := v.i
		if v.i >= len(v.b) || v.b[v.i] != '"' || !v.str() {
			return wire.ErrMalformed
		}
		name := v.b[start+1 : v.i-1]
		if bytes.IndexByte(name, '\\') >= 0 || !utf8.Valid(name) {
			s, err := wire.MemberName(v.b[start:v.i])
			if err != nil {
				return wire.ErrMalformed
			}
			name = []byte(s)
		}
		v.space()
		if v.i >= len(v.b) || v.b[v.i] != ':' {
			return wire.ErrMalformed
		}
		v.i++
		v.space()
		vstart := v.i
		var inner func([]byte, json.RawMessage) error
		if sub != nil && v.i < len(v.b) && v.b[v.i] == '{' {
			inner = sub(name)
		}
		switch {
		case inner != nil:
			if err := v.members(depth+1, inner, nil, args); err != nil {
				return err
			}
		case sub == nil && args != nil && string(name) == "arguments" && v.i < len(v.b) && v.b[v.i] == '{':
			if !v.strictArguments(depth+1, args) {
				return wire.ErrMalformed
			}
		case !v.value(depth + 1):
			return wire.ErrMalformed
		}
		if err := fn(name, json.RawMessage(v.b[vstart:v.i])); err != nil {
			return err
		}
		v.space()
		if v.i >= len(v.b) {
			return wire.ErrMalformed
		}
		switch v.b[v.i] {
		case ',':
			v.i++
			v.space()
		case '}':
			v.i++
			return nil
		default:
			return wire.ErrMalformed
		}
	}
}

// A Verdict is what the strict door found in the arguments of a message,
// while Object read it.
type Verdict struct {
	Checked   bool   // the message had an arguments object, and the door ran
	Raw       []byte // the arguments the verdict is about
	Where     string // the path of the refused value, as arguments.a.b[2]
	Fail      string // what the door found wrong there; "" when they passed
	NonString []byte // the first top-level member whose value is not a string
}

// strictArguments runs the strict door over the arguments object at v.i,
// which also validates it, and records the verdict. When the door refuses
// them for a rule of its own, the value is validated again as plain JSON,
// so that a message that is not JSON at all is still told apart.
func (v *syntax) strictArguments(depth int, args *Verdict) bool {
	start := v.i
	d := door{b: v.b, root: "arguments"}
	end := d.value(start, 0)
	if d.fail == "" {
		v.i = end
		*args = Verdict{Checked: true, Raw: v.b[start:end], NonString: d.nonString}
		return true
	}
	if d.malformed {
		return false
	}
	if !v.value(depth) {
		return false
	}
	*args = Verdict{Checked: true, Raw: v.b[start:v.i], Where: d.where(), Fail: d.fail}
	return true
}
