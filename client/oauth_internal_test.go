package client

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func challenged(status int, challenge string) *http.Response {
	return &http.Response{StatusCode: status, Header: http.Header{"Www-Authenticate": {challenge}}}
}

func TestChallengeScopes(t *testing.T) {
	ch, scopes, stepUp, err := challengeScopes(challenged(http.StatusUnauthorized, `Bearer resource_metadata="https://rs/prm", scope="a b"`), []string{"x"})
	require.NoError(t, err)
	assert.False(t, stepUp)
	assert.Equal(t, []string{"a", "b"}, scopes, "a 401 asks for the challenge's scopes only")
	assert.Equal(t, "https://rs/prm", ch["resource_metadata"])

	ch, scopes, stepUp, err = challengeScopes(&http.Response{StatusCode: http.StatusUnauthorized, Header: http.Header{}}, nil)
	require.NoError(t, err)
	assert.False(t, stepUp)
	assert.Empty(t, scopes)
	assert.NotNil(t, ch, "no challenge still gives a map")

	_, scopes, stepUp, err = challengeScopes(challenged(http.StatusForbidden, `Bearer error="insufficient_scope", scope="b c"`), []string{"a", "b"})
	require.NoError(t, err)
	assert.True(t, stepUp)
	assert.Equal(t, []string{"a", "b", "c"}, scopes, "step-up asks for the union")

	_, _, stepUp, err = challengeScopes(challenged(http.StatusForbidden, `Bearer error="insufficient_scope", scope="b"`), []string{"a", "b"})
	assert.True(t, stepUp)
	assert.ErrorContains(t, err, "granted already")
}
