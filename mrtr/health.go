package mrtr

import "errors"

// Reasons Ready gives for a server that should not take traffic.
var (
	// ErrEphemeralKeys: no requestState keys were configured, so the
	// server seals with a random key made at start-up, which no other
	// replica shares and which a restart loses.
	ErrEphemeralKeys = errors.New("mrtr: no requestState keys configured: running on a random key made at start-up")
	// ErrClosed: Close was called.
	ErrClosed = errors.New("mrtr: the server is closed")
)

// Ready reports whether the server should be given traffic: nil when it
// can serve, ErrClosed once Close was called, and ErrEphemeralKeys while
// it seals requestState with the random key NewServer made because no
// key ring was configured (neither WithCodec nor the MRTRKIT_STATE_KEYS
// environment variable). A server given WithCodec counts as keyed,
// whatever the codec. A readiness probe, such as the one package
// streamablehttp offers, turns the error into a refusal.
func (s *Server) Ready() error {
	select {
	case <-s.closedChan():
		return ErrClosed
	default:
	}
	if s.ephemeralKeys {
		return ErrEphemeralKeys
	}
	return nil
}
