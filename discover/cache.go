package discover

import (
	"fmt"
	"time"
)

// Scope says who may reuse a cached result. It renders as cacheScope.
type Scope string

const (
	// Public marks a result that holds no user-specific data; any client
	// may reuse it.
	Public Scope = "public"
	// Private marks a result that may be reused only within the same
	// authorization context.
	Private Scope = "private"
)

// Valid reports whether s is Public or Private.
func (s Scope) Valid() bool { return s == Public || s == Private }

// CacheKind names a family of cacheable results; each has its own time to live
// in a [CachePolicy]. The zero CacheKind is not valid.
type CacheKind uint8

const (
	// CacheDiscover is the result of server/discover.
	CacheDiscover CacheKind = iota + 1
	// CacheList is the result of tools/list, prompts/list, resources/list
	// and resources/templates/list.
	CacheList
	// CacheRead is the result of resources/read.
	CacheRead
)

// String returns "discover", "list" or "read", or "CacheKind(n)" for an unknown
// CacheKind.
func (k CacheKind) String() string {
	switch k {
	case CacheDiscover:
		return "discover"
	case CacheList:
		return "list"
	case CacheRead:
		return "read"
	}
	return fmt.Sprintf("CacheKind(%d)", uint8(k))
}

// NoCache is the duration to put in a [CachePolicy] field to mark results
// stale immediately (ttlMs 0). Any negative duration has the same effect;
// zero cannot be used for this because it selects the default.
const NoCache time.Duration = -1

// Default times to live used by [CachePolicy] for fields left at zero.
const (
	// defaultDiscoverTTL is the default freshness of server/discover.
	defaultDiscoverTTL = time.Hour
	// defaultListTTL is the default freshness of list results.
	defaultListTTL = 5 * time.Minute
	// defaultReadTTL is the default freshness of resources/read.
	defaultReadTTL = time.Minute
)

// CachePolicy says how long each kind of result stays fresh and who may
// reuse it. The zero CachePolicy is ready to use and selects every default.
//
// A zero duration means "use the default". To mark results stale
// immediately, use [NoCache] (or any negative duration), which renders as
// ttlMs 0. Durations are rendered in whole milliseconds, truncating any
// remainder.
type CachePolicy struct {
	// Discover is the time to live of server/discover results; default
	// one hour.
	Discover time.Duration
	// List is the time to live of list results; default five minutes.
	List time.Duration
	// Read is the time to live of resources/read results; default
	// one minute.
	Read time.Duration
	// Scope applies to every kind of result. Use Private when results
	// depend on the caller's authorization, Public when they never do.
	// Unset, Hint renders Public; the mrtr Server then makes list and read
	// results private for requests that carry an authenticated principal,
	// so that a shared cache never hands one user's results to another.
	Scope Scope
}

// Hint is the rendered caching hint of one result: the ttlMs and
// cacheScope fields. Embed it in a result struct to have both fields appear
// at the top level of the result's JSON.
type Hint struct {
	// TTLMs is how many milliseconds the result stays fresh; never
	// negative, and 0 means stale immediately.
	TTLMs int64 `json:"ttlMs"`
	// CacheScope says who may reuse the result.
	CacheScope Scope `json:"cacheScope"`
}

// Hint renders the caching hint for results of kind k, applying defaults.
// TTLMs is never negative. An unknown CacheKind gets ttlMs 0, and a Scope that
// is neither Public nor Private (which [Description.Validate] rejects)
// renders as Private, the more restrictive choice.
func (p CachePolicy) Hint(k CacheKind) Hint {
	return Hint{TTLMs: p.ttl(k).Milliseconds(), CacheScope: p.scope()}
}

// ttl returns the effective, non-negative time to live for kind k.
func (p CachePolicy) ttl(k CacheKind) time.Duration {
	var d, def time.Duration
	switch k {
	case CacheDiscover:
		d, def = p.Discover, defaultDiscoverTTL
	case CacheList:
		d, def = p.List, defaultListTTL
	case CacheRead:
		d, def = p.Read, defaultReadTTL
	default:
		return 0
	}
	switch {
	case d == 0:
		return def
	case d < 0:
		return 0
	}
	return d
}

// scope returns the effective scope.
func (p CachePolicy) scope() Scope {
	switch p.Scope {
	case "":
		return Public
	case Public, Private:
		return p.Scope
	}
	return Private
}
