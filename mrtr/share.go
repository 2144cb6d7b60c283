package mrtr

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"sync"
	"time"

	"github.com/mrtrkit/mrtrkit/share"
	"github.com/mrtrkit/mrtrkit/state"
)

// WithShare makes the Server one replica of a deployment whose replicas
// share bus (package share; the Redis Bus of the module
// github.com/mrtrkit/mrtrkit/redis, for one). Every change a listener can
// be told of (NotifyListChanged, NotifyResourceUpdated and the
// registries' own changes) is published on a channel named after the
// server's audience ("mrtrkit/changes/" followed by it), and the changes other replicas
// publish there reach this replica's subscriptions/listen streams. The
// single-use checks of OnceOnly go to bus too, so that a state used on one
// replica is refused on every other.
//
// Listeners on this replica are told of its own changes at once, whatever
// the bus does; publishing happens in the background, and a change that
// cannot be published is logged and dropped (delivery across replicas is
// best effort, as notifications are). Without WithShare, changes reach
// the listeners of this process only, and OnceOnly remembers states in
// memory, which suits a single replica.
//
// Every replica of a deployment must share the bus and the audience
// (WithAudience). Messages on the bus are authenticated: when the Server's
// keys come from MRTRKIT_STATE_KEYS, bus is wrapped with share.Sealed
// under a key derived from that ring, so that a message nobody with the
// ring sealed is dropped; under WithCodec, wrap bus yourself with
// share.Sealed and a state.NewBusSealer of the same ring (NewServer warns
// when it is not wrapped). SharedBus returns the bus in use.
func WithShare(bus share.Bus) Option {
	return optionFunc(func(s *Server) { s.share.bus = bus })
}

// SharedBus returns the bus given to WithShare, or nil when the Server
// was made without it. Other parts of a replica that must reach the other
// replicas use it (package mrtr/legacy routes the answers of sessions of
// the initialize era through it), so that one WithShare wires them all.
func (s *Server) SharedBus() share.Bus { return s.share.bus }

// shareChannel returns the channel the Server publishes its changes on
// and listens to: "mrtrkit/changes/" followed by the audience.
func (s *Server) shareChannel() string { return "mrtrkit/changes/" + s.audience }

// shareQueue bounds the changes waiting to be published; past it, changes
// are dropped with a warning.
const shareQueue = 256

// sharePublishTimeout bounds one publish.
const sharePublishTimeout = 5 * time.Second

// maxSharedURI bounds the URI of a resource-updated event accepted from
// the bus.
const maxSharedURI = 8 << 10

// shareState is the Server's side of the shared bus.
type shareState struct {
	bus     share.Bus // as given to WithShare; nil for none
	replica string    // random id tagging this replica's events
	queue   chan sharedEvent
	stop    func() // ends the subscription
	done    chan struct{}
	once    sync.Once
	// local is the in-process Bus OnceOnly uses without WithShare, made
	// on first use.
	localOnce sync.Once
	local     share.Bus
}

// sharedEvent is a change as published on the bus.
type sharedEvent struct {
	Replica string `json:"r"`
	Bits    uint8  `json:"c,omitempty"`
	URI     string `json:"u,omitempty"`
}

// startShare subscribes to the shared channel and starts the publisher;
// NewServer calls it once the options are applied.
func (s *Server) startShare() error {
	sh := &s.share
	if sh.bus == nil {
		return nil
	}
	if _, sealed := sh.bus.(*share.SealedBus); !sealed {
		if s.ring == nil {
			s.log.Warn("mrtr: the shared bus is not sealed: anyone who can publish on it can forge the replicas' messages; " +
				"wrap it with share.Sealed(bus, sealer), the sealer from state.NewBusSealer(ring) on the key ring of WithCodec")
		} else {
			sealer, err := state.NewBusSealer(s.ring)
			if err != nil {
				return err
			}
			sh.bus = share.Sealed(sh.bus, sealer, share.WithSealLogger(s.log))
		}
	}
	var id [12]byte
	if _, err := rand.Read(id[:]); err != nil {
		return err
	}
	sh.replica = hex.EncodeToString(id[:])
	stop, err := sh.bus.Subscribe(s.shareChannel(), s.receiveShared)
	if err != nil {
		return err
	}
	sh.stop = stop
	sh.queue = make(chan sharedEvent, shareQueue)
	sh.done = make(chan struct{})
	go s.publishShared(sh.queue, sh.done)
	return nil
}

// post tells this replica's listeners of a change, then queues it for
// the other replicas.
func (s *Server) post(bits uint8, uri string) {
	s.hub.post(bits, uri)
	sh := &s.share
	if sh.queue == nil {
		return
	}
	select {
	case <-sh.done:
		return
	default:
	}
	select {
	case sh.queue <- sharedEvent{Replica: sh.replica, Bits: bits, URI: uri}:
	default:
		s.log.Warn("mrtr: too many changes waiting to be published to the other replicas; one dropped")
	}
}

// publishShared publishes queued changes until done is closed.
func (s *Server) publishShared(queue <-chan sharedEvent, done <-chan struct{}) {
	for {
		select {
		case <-done:
			return
		case ev := <-queue:
			b, _ := json.Marshal(ev)
			ctx, cancel := context.WithTimeout(context.Background(), sharePublishTimeout)
			err := s.share.bus.Publish(ctx, s.shareChannel(), b)
			cancel()
			if err != nil {
				s.log.Warn("mrtr: publishing a change to the other replicas failed", "err", err)
			}
		}
	}
}

// receiveShared delivers a change another replica published to this
// replica's listeners. Its own events, and anything malformed, are
// ignored.
func (s *Server) receiveShared(payload []byte) {
	var ev sharedEvent
	if json.Unmarshal(payload, &ev) != nil || ev.Replica == s.share.replica || len(ev.URI) > maxSharedURI {
		return
	}
	bits := ev.Bits & (changeTools | changePrompts | changeResources)
	if bits == 0 && ev.URI == "" {
		return
	}
	s.hub.post(bits, ev.URI)
}

// closeShare ends the subscription and the publisher.
func (s *Server) closeShare() {
	sh := &s.share
	sh.once.Do(func() {
		if sh.stop != nil {
			sh.stop()
		}
		if sh.done != nil {
			close(sh.done)
		}
	})
}

// claimBus is the Bus single-use checks go to: the shared one, or an
// in-process one made on first use.
func (s *Server) claimBus() share.Bus {
	if s.share.bus != nil {
		return s.share.bus
	}
	s.share.localOnce.Do(func() { s.share.local = share.Local() })
	return s.share.local
}
