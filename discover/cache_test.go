package discover

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestHintDefaults(t *testing.T) {
	var p CachePolicy
	assert.Equal(t, Hint{TTLMs: 3_600_000, CacheScope: Public}, p.Hint(CacheDiscover))
	assert.Equal(t, Hint{TTLMs: 300_000, CacheScope: Public}, p.Hint(CacheList))
	assert.Equal(t, Hint{TTLMs: 60_000, CacheScope: Public}, p.Hint(CacheRead))
}

func TestHintOverrides(t *testing.T) {
	p := CachePolicy{
		Discover: 2 * time.Hour,
		List:     30 * time.Second,
		Read:     1500 * time.Microsecond,
		Scope:    Private,
	}
	assert.Equal(t, Hint{TTLMs: 7_200_000, CacheScope: Private}, p.Hint(CacheDiscover))
	assert.Equal(t, Hint{TTLMs: 30_000, CacheScope: Private}, p.Hint(CacheList))
	assert.Equal(t, Hint{TTLMs: 1, CacheScope: Private}, p.Hint(CacheRead), "truncated to whole milliseconds")
}

func TestHintNoCacheAndNegative(t *testing.T) {
	p := CachePolicy{Discover: NoCache, List: -time.Hour, Read: NoCache}
	for _, k := range []CacheKind{CacheDiscover, CacheList, CacheRead} {
		assert.Equal(t, int64(0), p.Hint(k).TTLMs, k.String())
	}
	// Only the field set to NoCache is affected.
	p = CachePolicy{List: NoCache}
	assert.Equal(t, int64(3_600_000), p.Hint(CacheDiscover).TTLMs)
	assert.Equal(t, int64(0), p.Hint(CacheList).TTLMs)
	assert.Equal(t, int64(60_000), p.Hint(CacheRead).TTLMs)
}

func TestHintNeverNegative(t *testing.T) {
	durations := []time.Duration{0, NoCache, -1, -time.Nanosecond, -time.Hour, time.Nanosecond, time.Hour}
	for _, d := range durations {
		p := CachePolicy{Discover: d, List: d, Read: d}
		for _, k := range []CacheKind{0, CacheDiscover, CacheList, CacheRead, 99} {
			assert.GreaterOrEqual(t, p.Hint(k).TTLMs, int64(0), "duration %v kind %v", d, k)
		}
	}
}

func TestHintUnknownKindAndScope(t *testing.T) {
	assert.Equal(t, Hint{TTLMs: 0, CacheScope: Public}, CachePolicy{}.Hint(0))
	assert.Equal(t, Hint{TTLMs: 0, CacheScope: Private},
		CachePolicy{Discover: time.Hour, List: time.Hour, Read: time.Hour, Scope: Private}.Hint(CacheKind(99)))
	assert.Equal(t, Private, CachePolicy{Scope: "shared"}.Hint(CacheList).CacheScope)
}

func TestCacheKindString(t *testing.T) {
	assert.Equal(t, "discover", CacheDiscover.String())
	assert.Equal(t, "list", CacheList.String())
	assert.Equal(t, "read", CacheRead.String())
	assert.Equal(t, "CacheKind(0)", CacheKind(0).String())
	assert.Equal(t, "CacheKind(99)", CacheKind(99).String())
}

// The kinds are distinct and non-zero, so the zero CacheKind stays invalid.
func TestCacheKindValues(t *testing.T) {
	kinds := []CacheKind{CacheDiscover, CacheList, CacheRead}
	seen := map[CacheKind]bool{}
	for _, k := range kinds {
		assert.NotZero(t, k, k.String())
		assert.False(t, seen[k], "duplicate %v", k)
		seen[k] = true
	}
}

func TestScopeValid(t *testing.T) {
	assert.True(t, Public.Valid())
	assert.True(t, Private.Valid())
	assert.False(t, Scope("").Valid())
	assert.False(t, Scope("PUBLIC").Valid())
}
