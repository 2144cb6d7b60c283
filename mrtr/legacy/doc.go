// Package legacy is the bridge the transports use to serve clients of the
// initialize era (MCP 2025-11-25 and 2025-06-18) with the same
// mrtr.Server, the same handlers and the same multi-round safety as
// clients of 2026-07-28. Servers rarely use it directly: the transports
// build an Engine themselves when the Server's description lists legacy
// versions; pass your own (WithLegacy) to set its options or keys.
//
// Such a client starts with initialize, carries a session id on every
// later request, and expects the server to send it requests
// (sampling/createMessage, elicitation/create, roots/list) while a call
// runs. An Engine gives it exactly that, and nothing of the modern wire:
//
//   - initialize negotiates a served version (the description's
//     LegacyVersions) and answers from the one description; the session id
//     is a token sealed with the key ring under its own purpose, holding
//     the negotiated version, the client's capabilities, a digest of the
//     principal and the expiry, so that any replica with the keys serves
//     any session, and a session presented by another principal is
//     unknown;
//   - what changes during a session (its log level, its resource
//     subscriptions, its stream, its calls in flight, a deletion) is kept
//     per process, bounded in number, idle time and calls in flight, and
//     shared with the other replicas when the Server has a bus (see
//     Replicas below);
//   - every request a session makes of the Server carries the peer of the
//     HTTP request (Session.SetPeer), so that the Server's limits count
//     anonymous callers per peer, as on the modern path;
//   - a tools/call, prompts/get or resources/read runs as an in-process
//     modern client of the Server, with a _meta made from the session
//     (version, capabilities, client info, log level, the client's
//     progress token and its own _meta keys), so that sealing, binding,
//     expiry, the round limit and the capability gate are the modern path
//     itself. When the handler answers input_required, every embedded
//     request goes to the client as a real request on the stream of the
//     request being served (never only on the session's stream, which a
//     client may not keep open), with ids that count from 1 per session
//     (strings naming the replica and 128 random bits when replicas share
//     a bus);
//     the answers come back, and the call is retried with exactly that
//     round's answers and the state byte for byte, as many rounds as the
//     handler needs, up to the Server's round limit;
//   - a client error, a timeout (WithLegTimeout) or the round limit ends a
//     tools/call with an isError result saying which request failed, and
//     other methods with a JSON-RPC error; cancelling the outer request
//     (notifications/cancelled, or the client going away) cancels the
//     call and tells the client which of its requests are no longer
//     wanted, on the request's stream or, when that is gone, on the
//     session's. A client that goes away is taken to have cancelled: the
//     initialize era says a disconnection SHOULD NOT be read so, but
//     without resumable streams (which mrtrkit does not offer: no event
//     ids) the answer could not reach it anyway;
//   - no answer carries resultType, inputRequests, requestState, ttlMs,
//     cacheScope, the server's identity in _meta, or an error code of
//     2026-07-28 (-32020, -32021, -32022); empty results are exactly {};
//     a missing resource is -32002, as that era says.
//
// # Bounds
//
// A session subscribes to at most 256 URIs of at most MaxSubscriptionURI
// bytes each, and WithMaxSubscriptionBytes (64 KiB) together, with or
// without a bus; past them resources/subscribe is refused with -32602
// saying which bound. A principal holds at most
// WithMaxSessionsPerPrincipal (16) sessions' extras in a process, and at
// most WithMaxCallsPerPrincipal (32) bridged calls in flight, those
// waiting for the client's answers included; anonymous callers count per
// peer, the one InitializeFrom was given when the session was made. Past
// the first, the principal's own least recently used idle session gives
// up its extras, and when all are busy initialize is refused with
// ErrTooManySessions (429 on Streamable HTTP) for that principal only.
// When the process's table (WithMaxSessions) is full, extras that hold
// nothing a client set go first, then the least recently used idle ones
// of the principal holding the most sessions: another caller's flood does
// not make an idle session forget its subscriptions or log level while the
// flooder holds more sessions than its victim (when every caller holds
// one, the least recently used goes, so that newcomers are still served).
//
// # Deleted sessions
//
// A session id is sealed with its issue time and expiry (WithSessionLifetime,
// 24 hours by default) and is refused once expired, deleted or presented
// by another principal. Without a bus, DELETE is remembered by the process
// that got it, until the id expires: one by one up to 4 × the per-principal
// session limit per principal and 4 × WithMaxSessions in all; past that,
// the principal remembering the most turns its oldest deletions into a
// cut, refusing every session of that principal issued up to them (its
// own older sessions may end with them; nobody else's do). The cuts are
// bounded too (4 × WithMaxSessions); forgetting one is logged. An Engine
// without a bus also seals a random epoch into its session ids and serves
// only its own: after a restart, every session is unknown (404; clients
// initialize again), so a deleted id never comes back.
// WithPortableSessions turns the epoch off, for replicas without a bus
// that must serve each other's sessions, at the price that a deletion is
// then known only where and while it was made. With a bus, deletions are
// records in the shared store that expire with the session (see Deletion
// below): they survive restarts of the replicas, not of a store that
// keeps nothing on disk.
//
// # Replicas
//
// A Server made with mrtr.WithShare hands its bus (package share; Redis
// in the module github.com/mrtrkit/mrtrkit/redis) to the Engine, and any
// replica then serves any request of a session, behind a plain
// round-robin balancer, without affinity. Nothing else is to be set: the
// replicas share the bus, the key ring and the audience. Without a bus,
// everything below is off and a process serves alone, as before.
//
// Authentication. Every message the Engine publishes is sealed: a MAC
// (HMAC-SHA256) under a key derived from the key ring (state.BusSealer,
// purpose "mrtrkit-bus"), over the channel, the time, a random message id
// and the payload, with the key's id so that keys rotate as for tokens.
// Messages that do not verify, are older than share.DefaultMaxMessageAge
// or repeat a message id are dropped, counted and logged (share.Sealed):
// whoever can publish on the bus without the key ring cannot answer a
// user's question, cancel a call or end a session. When the Server's bus
// is already a share.SealedBus the Engine uses it as it is; otherwise it
// seals its own messages with its ring, and BusCodec is to be reloaded
// with the ring file. Records and claims in the store (the session record,
// deletion markers) are not sealed: their integrity rests with the
// store's access control.
//
// Answers. A server-to-client request of a replica has a string id,
// "<replica>-<random>": twelve hex digits drawn at random when the Engine
// starts, then 128 random bits as 32 hex digits, so that nobody who has
// not seen the request can guess its id. Ids so never repeat in a session,
// whatever replica sends them,
// and the replica that receives the answer knows where it goes: when no
// call of its own waits for it, it publishes the answer on the channel
// of the replica the id names, which every Engine subscribes to once, at
// start ("mrtrkit/legacy/replica/<replica>"). One subscription per
// replica rather than one per waiting call or session, because a Redis
// subscription is a connection of its own. The answer carries a digest
// of the session, so it reaches only a leg of the session it was posted
// on (the posting replica has checked the session id against the
// caller); ids that name no replica, or this one, are dropped there. An
// answer larger than MaxForwardedAnswer reaches the call as a refusal
// saying so, and a session has at most 256 legs waiting on one replica.
//
// Cancellations. A notifications/cancelled for a request no call of this
// replica serves is published on the deployment's channel of session
// events ("mrtrkit/legacy/events/<digest of the audience>"), and the
// replica that runs the call cancels it. Delivery is best effort, as the
// bus's is: a cancellation published before the call started is lost,
// which the initialize era allows (a cancellation may arrive too late).
//
// Log level and subscriptions. They live in a record of the session in
// the bus's store (share.Bus Put and Get; SET PX and GET in Redis),
// named by a digest of the session and expiring with it. A replica reads
// it afresh before every bridged call, list and completion, so a level
// set on one replica rules the very next call on another; setLevel and
// resources/(un)subscribe read it, change it and write it back (the last
// writer wins: a client changes its session one request at a time), and
// publish the new record as an event, so that the session's stream on
// whatever replica holds it listens again with the new subscriptions at
// once (and reads the record every 30 seconds in case an event was
// missed). When the store cannot be read, a call is served with what the
// replica knows (logged); a change that cannot be read or written is
// refused with -32603 and nothing changes.
//
// Deletion. DELETE records a deletion key for the session (a claim
// expiring with the session) and publishes an event that ends the
// session's calls and stream on every replica. Every replica reads that
// key for every request of a session (one GET), and refuses the session
// when it is there; when the store cannot be read, it refuses it too,
// with ErrUnavailable (which matches ErrBusy: 503, retry later, rather
// than the 404 that would make the client start over). When the deletion
// cannot be written, the session ends on the replica that got the DELETE
// (logged) and Session.Close returns ErrUnavailable, which Streamable HTTP
// answers 503 so that the client sends the DELETE again; until one
// succeeds, the other replicas serve the session.
//
// Channel names, keys and payloads carry digests (SHA-256 with a
// purpose), never a session id or a principal.
//
// A transport hosts an Engine through a small surface: Initialize,
// Engine.Session for later requests, Session.Handle with a Sender for the
// request's stream, Session.Listen with a Sender for the session's own
// stream, Session.Close. Streamable HTTP (transport/streamablehttp) and
// stdio (transport/stdio) host it, each building one by default.
package legacy
