package share

import (
	"context"
	"errors"
	"time"
)

// Bus is what the replicas of one deployment share. Implementations are
// safe for concurrent use.
type Bus interface {
	// Publish sends payload to every current subscriber of channel, on
	// every replica sharing the Bus, the publishing replica included.
	// Delivery is at most once and best effort: a subscriber that is not
	// connected when the event passes does not see it. Publish may
	// return before the event is delivered.
	Publish(ctx context.Context, channel string, payload []byte) error

	// Subscribe calls fn with the payload of every event published on
	// channel from now until stop is called. Calls of fn for one
	// subscription come one at a time, in the order the events were
	// received; fn must not block for long, and must not keep payload
	// after it returns unless it copies it. stop may be called more than
	// once, and from fn; once it returns, no new call of fn starts (one
	// already running may still be finishing).
	Subscribe(channel string, fn func(payload []byte)) (stop func(), err error)

	// Claim records key for ttl if no unexpired record of it exists, and
	// reports whether this call made the record: first is true for
	// exactly one Claim of a key, across every replica, until the record
	// expires (SET key NX PX ttl). A ttl below one millisecond is an
	// error. An error means the store could not answer: callers that
	// guard something with Claim should refuse on error (fail closed).
	Claim(ctx context.Context, key string, ttl time.Duration) (first bool, err error)

	// Put records value under key for ttl, replacing any record of key
	// (SET key value PX ttl): the last Put wins. Records and claims share
	// one key space. A ttl below one millisecond is an error.
	Put(ctx context.Context, key string, value []byte, ttl time.Duration) error

	// Get returns the value recorded under key by Put (or "1" for a
	// claim), and found false when no unexpired record of key exists
	// (GET key). The caller may keep value. An error means the store
	// could not answer, which is not the same as not found: callers that
	// guard something with a record should refuse on error.
	Get(ctx context.Context, key string) (value []byte, found bool, err error)
}

// ErrClosed is returned by a Bus that has been closed.
var ErrClosed = errors.New("share: bus closed")

// ErrBadTTL is returned by Claim and Put for a ttl below one millisecond.
var ErrBadTTL = errors.New("share: ttl must be at least 1ms")
