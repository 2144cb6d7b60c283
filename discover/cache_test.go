package discover

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestHintDefaults(t *testing.T) {
	var p CachePolicy
	assert.Equal(t, Hint{TTLMs: 3_600_000, CacheScope: Public}, p.Hint(KindDiscover))
	assert.Equal(t, Hint{TTLMs: 300_000, CacheScope: Public}, p.Hint(KindList))
	assert.Equal(t, Hint{TTLMs: 60_000, CacheScope: Public}, p.Hint(KindRead))
}

func TestHintOverrides(t *testing.T) {
	p := CachePolicy{
		Discover: 2 * time.Hour,
		List:     30 * time.Second,
		Read:     1500 * time.Microsecond,
		Scope:    Private,
	}
	assert.Equal(t, Hint{TTLMs: 7_200_000, CacheScope: Private}, p.Hint(KindDiscover))
	assert.Equal(t, Hint{TTLMs: 30_000, CacheScope: Private}, p.Hint(KindList))
	assert.Equal(t, Hint{TTLMs: 1, CacheScope: Private}, p.Hint(KindRead), "truncated to whole milliseconds")
}

func TestHintNoCacheAndNegative(t *testing.T) {
	p := CachePolicy{Discover: NoCache, List: -time.Hour, Read: NoCache}
	for _, k := range []Kind{KindDiscover, KindList, KindRead} {
		assert.Equal(t, int64(0), p.Hint(k).TTLMs, k.String())
	}
	// Only the field set to NoCache is affected.
	p = CachePolicy{List: NoCache}
	assert.Equal(t, int64(3_600_000), p.Hint(KindDiscover).TTLMs)
	assert.Equal(t, int64(0), p.Hint(KindList).TTLMs)
	assert.Equal(t, int64(60_000), p.Hint(KindRead).TTLMs)
}

func TestHintNeverNegative(t *testing.T) {
	durations := []time.Duration{0, NoCache, -1, -time.Nanosecond, -time.Hour, time.Nanosecond, time.Hour}
	for _, d := range durations {
		p := CachePolicy{Discover: d, List: d, Read: d}
		for _, k := range []Kind{0, KindDiscover, KindList, KindRead, 99} {
			assert.GreaterOrEqual(t, p.Hint(k).TTLMs, int64(0), "duration %v kind %v", d, k)
		}
	}
}

func TestHintUnknownKindAndScope(t *testing.T) {
	assert.Equal(t, Hint{TTLMs: 0, CacheScope: Public}, CachePolicy{}.Hint(0))
	assert.Equal(t, Private, CachePolicy{Scope: "shared"}.Hint(KindList).CacheScope)
}

func TestKindString(t *testing.T) {
	assert.Equal(t, "discover", KindDiscover.String())
	assert.Equal(t, "list", KindList.String())
	assert.Equal(t, "read", KindRead.String())
	assert.Equal(t, "Kind(0)", Kind(0).String())
}

func TestKindOf(t *testing.T) {
	cases := map[string]Kind{
		"server/discover":          KindDiscover,
		"tools/list":               KindList,
		"prompts/list":             KindList,
		"resources/list":           KindList,
		"resources/templates/list": KindList,
		"resources/read":           KindRead,
	}
	for method, want := range cases {
		got, ok := KindOf(method)
		assert.True(t, ok, method)
		assert.Equal(t, want, got, method)
	}
	for _, method := range []string{"tools/call", "initialize", "prompts/get", ""} {
		_, ok := KindOf(method)
		assert.False(t, ok, method)
	}
}

func TestScopeValid(t *testing.T) {
	assert.True(t, Public.Valid())
	assert.True(t, Private.Valid())
	assert.False(t, Scope("").Valid())
	assert.False(t, Scope("PUBLIC").Valid())
}
