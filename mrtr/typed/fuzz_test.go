package typed_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/mrtrkit/mrtrkit/mrtr/typed"
)

// FuzzBinder feeds arbitrary arguments to a Binder: it must never panic,
// and it either returns a value or an *ArgumentError with problems.
func FuzzBinder(f *testing.F) {
	for _, s := range []string{
		`{"audience":"World"}`, `{"audience":7}`, `{}`, `null`, `[]`, `{"options":{"depth":1e999}}`,
		`{"audience":"W","max_words":-1,"tone":"x","options":null}`, `{"a":{"b":[1,{"c":null}]}}`, `"\u0000"`,
	} {
		f.Add([]byte(s))
	}
	b, err := typed.NewBinder[GreetIn](nil)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		v, err := b.Bind(json.RawMessage(raw))
		if err == nil {
			if len(v.Audience) < 2 {
				t.Fatalf("accepted %q with audience %q", raw, v.Audience)
			}
			return
		}
		var ae *typed.ArgumentError
		if !errors.As(err, &ae) || len(ae.Problems) == 0 {
			t.Fatalf("%q: %v is not an ArgumentError with problems", raw, err)
		}
	})
}
