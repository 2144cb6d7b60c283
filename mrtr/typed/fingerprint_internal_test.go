package typed

import (
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A form's identity covers the rules of its fields that no schema keyword
// carries: the same type, deployed again with a validate tag changed, is
// another question, so that an answer checked under the old rule is not
// taken unchecked under the new one.
func TestFormFingerprintCoversRules(t *testing.T) {
	older := func() reflect.Type {
		type form struct {
			Name string `json:"name" validate:"required,startswith=A"`
		}
		return reflect.TypeFor[form]()
	}()
	newer := func() reflect.Type {
		type form struct {
			Name string `json:"name" validate:"required,startswith=B"`
		}
		return reflect.TypeFor[form]()
	}()
	require.Equal(t, older.String(), newer.String(), "the type's name alone does not tell them apart")
	a, err := newFormCore(older)
	require.NoError(t, err)
	b, err := newFormCore(newer)
	require.NoError(t, err)
	require.Equal(t, a.schema, b.schema, "nor does the schema")
	assert.NotEqual(t, a.fingerprint, b.fingerprint)

	again, err := newFormCore(older)
	require.NoError(t, err)
	assert.Equal(t, a.fingerprint, again.fingerprint, "the same form, the same identity")
}
