package typed

import (
	"encoding/json"
	"errors"
	"reflect"
	"strconv"
	"strings"
	"unicode"

	"github.com/mrtrkit/mrtrkit/internal/wire"
)

// flatDecoder decodes a form's content into its struct without
// encoding/json for the common shape of a form: members named exactly as
// top-level fields of plain kinds (strings, booleans, numbers, lists of
// strings). Anything else (a name in another case, a member no field
// has, a value of another type, an integer written with a fraction) is
// declined, and the caller decodes with encoding/json instead, so the
// result is always the one json.Unmarshal gives.
type flatDecoder struct {
	fields map[string]flatField
}

// flatField is one field the decoder fills.
type flatField struct {
	index int
	kind  reflect.Kind // of the field, or reflect.Slice for []string
	bits  int          // of a number
}

// newFlatDecoder returns the decoder for struct t, or nil when one of its
// fields is not of a shape the decoder fills the way encoding/json does.
func newFlatDecoder(t reflect.Type) *flatDecoder {
	if decodesItself(t) {
		return nil
	}
	d := &flatDecoder{fields: map[string]flatField{}}
	for i := range t.NumField() {
		sf := t.Field(i)
		if sf.Anonymous {
			return nil // promoted fields: encoding/json's rules of depth
		}
		if !sf.IsExported() {
			continue
		}
		name, opts, found := strings.Cut(sf.Tag.Get("json"), ",")
		switch {
		case name == "-" && !found:
			continue
		case name == "" || !validTagName(name):
			name = sf.Name
		}
		ft := sf.Type
		if _, dup := d.fields[name]; dup || strings.Contains(opts, "string") || decodesItself(ft) {
			return nil
		}
		ff := flatField{index: i, kind: ft.Kind()}
		switch ft.Kind() {
		case reflect.String, reflect.Bool:
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
			reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
			reflect.Float32, reflect.Float64:
			ff.bits = ft.Bits()
		case reflect.Slice:
			if et := ft.Elem(); et.Kind() != reflect.String || decodesItself(et) {
				return nil
			}
		default:
			return nil
		}
		d.fields[name] = ff
	}
	return d
}

// validTagName reports whether encoding/json takes name, from a field's
// tag, as the field's name.
func validTagName(name string) bool {
	for _, c := range name {
		switch {
		case strings.ContainsRune("!#$%&()*+-./:;<=>?@[]^_{|}~ ", c):
		case !unicode.IsLetter(c) && !unicode.IsDigit(c):
			return false
		}
	}
	return true
}

// decode fills the struct out (addressable, zero) from raw, a JSON object
// already checked to be valid JSON (on other input it may be more lenient
// than encoding/json), or reports false, having left out in any state,
// when encoding/json must decode it.
func (d *flatDecoder) decode(raw []byte, out reflect.Value) bool {
	err := wire.EachMemberBytes(raw, func(name []byte, v json.RawMessage) error {
		f, ok := d.fields[string(name)]
		if !ok || !d.set(out.Field(f.index), f, v) {
			return errDeclined
		}
		return nil
	})
	return err == nil
}

// errDeclined stops a walk the decoder leaves to encoding/json.
var errDeclined = errors.New("typed: left to encoding/json")

// set decodes v into fv as encoding/json would, or reports false.
func (d *flatDecoder) set(fv reflect.Value, f flatField, v []byte) bool {
	if string(v) == "null" {
		if f.kind == reflect.Slice {
			fv.SetZero() // encoding/json sets a slice to nil
		}
		return true // and leaves any other field as it is
	}
	switch f.kind {
	case reflect.String:
		if v[0] != '"' {
			return false
		}
		s, ok := wire.String(v)
		if ok {
			fv.SetString(s)
		}
		return ok
	case reflect.Bool:
		switch string(v) {
		case "true":
			fv.SetBool(true)
		case "false":
			fv.SetBool(false)
		default:
			return false
		}
		return true
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n, err := strconv.ParseInt(string(v), 10, f.bits)
		if err != nil {
			return false
		}
		fv.SetInt(n)
		return true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		n, err := strconv.ParseUint(string(v), 10, f.bits)
		if err != nil {
			return false
		}
		fv.SetUint(n)
		return true
	case reflect.Float32, reflect.Float64:
		if v[0] != '-' && (v[0] < '0' || v[0] > '9') {
			return false
		}
		x, err := strconv.ParseFloat(string(v), f.bits)
		if err != nil {
			return false
		}
		fv.SetFloat(x)
		return true
	case reflect.Slice:
		return d.setStrings(fv, v)
	}
	return false
}

// setStrings decodes a JSON array of strings into the []string-kinded fv.
func (d *flatDecoder) setStrings(fv reflect.Value, v []byte) bool {
	if v[0] != '[' {
		return false
	}
	var out []string
	i := wire.SkipSpace(v, 1)
	if i < len(v) && v[i] == ']' {
		fv.Set(reflect.MakeSlice(fv.Type(), 0, 0))
		return true
	}
	for i < len(v) {
		end := wire.SkipValue(v, i)
		if end <= i || v[i] != '"' {
			return false
		}
		s, ok := wire.String(v[i:end])
		if !ok {
			return false
		}
		out = append(out, s)
		i = wire.SkipSpace(v, end)
		switch {
		case i >= len(v):
			return false
		case v[i] == ']':
			s := reflect.MakeSlice(fv.Type(), len(out), len(out))
			for k, e := range out {
				s.Index(k).SetString(e)
			}
			fv.Set(s)
			return true
		case v[i] != ',':
			return false
		}
		i = wire.SkipSpace(v, i+1)
	}
	return false
}
