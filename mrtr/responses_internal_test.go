package mrtr

import (
	"sort"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

// Responses finds every answer by key and kind, in order up to a few
// answers and through an index beyond; a key answered again is replaced.
func TestResponsesLookups(t *testing.T) {
	for _, n := range []int{0, 1, indexAnswersFrom, indexAnswersFrom + 1, 40} {
		var r Responses
		want := []string{}
		for i := range n {
			key := "k" + strconv.Itoa(i)
			want = append(want, key)
			switch i % 3 {
			case 0:
				r.put(key, &ElicitResult{Action: Accepted})
			case 1:
				r.put(key, &SamplingResult{Model: key})
			default:
				r.put(key, &RootsResult{})
			}
		}
		require.Equal(t, n, r.Len())
		sort.Strings(want)
		require.Equal(t, want, r.Keys())
		for i := range n {
			key := "k" + strconv.Itoa(i)
			_, isElicit := r.Elicitation(key)
			s, isSampling := r.Sampling(key)
			_, isRoots := r.Roots(key)
			require.Equal(t, []bool{i%3 == 0, i%3 == 1, i%3 == 2}, []bool{isElicit, isSampling, isRoots}, "%s of %d", key, n)
			if isSampling {
				require.Equal(t, key, s.Model)
			}
		}
		_, ok := r.get("absent")
		require.False(t, ok)
		if n > 1 {
			r.put("k1", &SamplingResult{Model: "again"})
			s, ok := r.Sampling("k1")
			require.True(t, ok)
			require.Equal(t, "again", s.Model)
			require.Equal(t, n, r.Len(), "replaced, not added")
		}
	}
}
