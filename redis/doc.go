// Package redisshare is a share.Bus kept in Redis, for the replicas of
// one mrtrkit deployment running behind a plain load balancer.
//
// Every replica gives its mrtr.Server the same Redis:
//
//	client := redis.NewClient(&redis.Options{Addr: "redis:6379"})
//	bus := redisshare.New(client)
//	srv, err := mrtr.NewServer(desc, mrtr.WithShare(bus), mrtr.RequireKeys(),
//		mrtr.WithAudience("https://mcp.example.com/mcp"))
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
