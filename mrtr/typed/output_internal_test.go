package typed

import (
	"encoding/json"
	"math/rand"
	"reflect"
	"testing"
	"testing/quick"

	"github.com/stretchr/testify/require"
)

type (
	outLeaf struct {
		N int     `json:"n"`
		F float32 `json:"f"`
		S string  `json:"s,omitempty"`
		B bool    `json:"b"`
	}
	OutEmbedded struct {
		Shared string `json:"shared"`
	}
	outAll struct {
		OutEmbedded
		Bytes   []byte             `json:"bytes"`
		Named   []uint8            `json:"named,omitempty"`
		Fixed   [3]byte            `json:"fixed"`
		Map     map[string]int     `json:"map"`
		Nested  map[string]outLeaf `json:"nested"`
		Deep    map[string][]byte  `json:"deep"`
		Leaves  []outLeaf          `json:"leaves"`
		Ptr     *outLeaf           `json:"ptr"`
		PtrMap  *map[string]string `json:"ptrMap"`
		Grid    [][]int64          `json:"grid"`
		U       uint16             `json:"u"`
		Skipped string             `json:"-"`
	}
)

// TestPlainOutputConformsToItsSchema backs the claim AddTool relies on to
// skip the Server's check: for a type that does not encode itself, every
// value encoding/json writes is admitted by the schema SchemaFor
// generates. Random values (nil maps and slices included) of several
// types are encoded and validated.
func TestPlainOutputConformsToItsSchema(t *testing.T) {
	for _, typ := range []reflect.Type{
		reflect.TypeFor[outAll](), reflect.TypeFor[outLeaf](), reflect.TypeFor[map[string][]byte](),
		reflect.TypeFor[[]map[string]int](), reflect.TypeFor[*outAll](),
	} {
		t.Run(typ.String(), func(t *testing.T) {
			require.False(t, encodesItself(typ), "the type must be a plain one")
			s, err := schemaForType(typ, nil)
			require.NoError(t, err)
			fitEncoding(typ, s, true, map[reflect.Type]bool{})
			resolved, err := s.Resolve(nil)
			require.NoError(t, err)
			rnd := rand.New(rand.NewSource(1))
			for i := range 300 {
				v := reflect.New(typ).Elem() // the zero value first
				// (but for a top-level pointer: a nil output is not a
				// document, and render refuses it before any schema)
				if i > 0 || typ.Kind() == reflect.Pointer {
					var ok bool
					if v, ok = quick.Value(typ, rnd); !ok {
						t.Fatalf("cannot generate a %v", typ)
					}
					if typ.Kind() == reflect.Pointer && v.IsNil() {
						continue
					}
				}
				b, err := json.Marshal(v.Interface())
				require.NoError(t, err)
				var doc any
				require.NoError(t, json.Unmarshal(b, &doc))
				if err := resolved.Validate(doc); err != nil {
					t.Fatalf("%s does not conform to its schema: %v", b, err)
				}
			}
		})
	}
}
