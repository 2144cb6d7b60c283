// Package redisshare is a share.Bus kept in Redis, for the replicas of
// one mrtrkit deployment running behind a plain load balancer.
//
// Every replica gives its mrtr.Server the same Redis:
//
//	client := redis.NewClient(&redis.Options{Addr: "redis:6379"})
//	sealer, err := state.NewBusSealer(ring) // the ring of the Server's codec
//	bus := share.Sealed(redisshare.New(client), sealer)
//	srv, err := mrtr.NewServer(desc, mrtr.WithShare(bus), mrtr.RequireKeys(),
//		mrtr.WithAudience("https://mcp.example.com/mcp"))
//	// and sealer.Codec() beside the Server's codec in the state.KeyRingFile
//
// Whoever can PUBLISH on the Redis can otherwise speak for a replica:
// answer a user's pending elicitation (forging consent), end or cancel
// sessions, or inject change notifications. share.Sealed authenticates
// every event with a key derived from the key ring (and drops, counts and
// logs the rest); without it, package mrtr/legacy still seals its own
// events with its ring, but the Server's change events are not. Claims and
// records (SET, GET) are not authenticated: their integrity rests with
// the Redis ACL, so grant the replicas' user only the mrtrkit/ keys and
// channels (docs/deployment.md).
//
// Events travel by Redis pub/sub (PUBLISH and SUBSCRIBE): at most once,
// to the replicas connected when they pass, which is what list-changed
// and resource-updated notifications need. Claims are SET key NX PX ttl:
// exactly one replica wins a key until it expires, which is what
// mrtr.OnceOnly needs. Records are SET key value PX ttl and GET key: what
// a session of the initialize era changes (its log level, its resource
// subscriptions, its deletion; package mrtr/legacy), so that every replica
// serves it the same. Nothing else is kept in Redis; requestState still
// travels in the tokens, sealed with the key ring every replica holds.
//
// The module is separate from mrtrkit's so that only deployments that use
// Redis depend on a Redis client.
package redisshare
