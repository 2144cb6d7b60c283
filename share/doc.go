// Package share is for deployments of several replicas (mrtr.WithShare):
// it is what the replicas of one deployment share: events
// published on named channels, single-use claims that expire, and small
// records that expire.
//
// A deployment of several replicas behind a plain load balancer keeps
// almost nothing between requests: requestState carries each call's
// rounds, sealed with a key ring every replica holds. Two things cannot
// ride in a token. A notification raised on one replica (a tool list that
// changed, a resource that was updated) must reach the listeners open on
// every replica, and a token that must be used once must be remembered
// somewhere every replica can see. Bus is the small interface for both,
// plus a record per key (Put, Get) for state a client changes on one
// replica and expects on every other, such as what a session of the
// initialize era has subscribed to (package mrtr/legacy).
//
// Local is the in-process Bus, the default: it serves one process, which
// is all a single replica needs. A deployment of several replicas gives
// every replica the same shared Bus, such as the Redis one in the module
// github.com/mrtrkit/mrtrkit/redis.
//
// Sealed wraps any Bus so that its events are authenticated: whoever can
// publish on the store without the deployment's key ring (a Redis user
// with PUBLISH, say) is not heard. Its Sealer is state.BusSealer, keyed
// from the key ring every replica holds.
//
// The package imports nothing but the standard library, so that any store
// can implement Bus without depending on the rest of mrtrkit.
package share
