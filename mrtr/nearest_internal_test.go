package mrtr

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestNearestNames(t *testing.T) {
	names := []string{"add", "adder", "subtract", "summarize_repo", "greet"}
	assert.Equal(t, []string{"add"}, nearest("ad", names))
	assert.Equal(t, []string{"add", "adder"}, nearest("addr", names))
	assert.Equal(t, []string{"summarize_repo"}, nearest("summarise_repo", names))
	assert.Equal(t, []string{"greet"}, nearest("Greet", names), "case is ignored")
	assert.Empty(t, nearest("zzzzzz", names))
	assert.Empty(t, nearest("", names))
	many := make([]string, 5000)
	for i := range many {
		many[i] = "tool"
	}
	assert.Len(t, nearest("tool", many), maxSuggestions, "bounded")
	assert.Equal(t, ` (did you mean a, b or c?)`, didYouMean([]string{"a", "b", "c"}))
	assert.Equal(t, "", didYouMean(nil))
	assert.Equal(t, 3, editDistance("kitten", "sitting", 5))
	assert.Equal(t, 3, editDistance("abcdefgh", "a", 2), "past the limit: limit+1")
}
