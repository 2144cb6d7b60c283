package streamablehttp

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/mrtrkit/mrtrkit/internal/wire"
	"github.com/mrtrkit/mrtrkit/mrtr"
	"github.com/mrtrkit/mrtrkit/mrtr/legacy"
	"github.com/mrtrkit/mrtrkit/state"
)

// legacyEngine returns the Engine serving the initialize era for srv:
// cfg's (WithLegacy), or one made here when the description lists
// LegacyVersions, or nil when that era is not served. Every legacy
// version the description lists must be served, so that server/discover
// advertises nothing the endpoint refuses.
func legacyEngine(srv *mrtr.Server, cfg *config, log *slog.Logger) (*legacy.Engine, error) {
	listed := srv.Description().LegacyVersions
	switch {
	case cfg.legacy != nil && cfg.noLegacy:
		return nil, errors.New("streamablehttp: WithLegacy and WithoutLegacy contradict each other; give one")
	case cfg.legacy != nil && cfg.legacy.Server() != srv:
		return nil, errors.New("streamablehttp: the legacy engine serves another server")
	case len(listed) == 0:
		return cfg.legacy, nil
	case cfg.noLegacy:
		return nil, fmt.Errorf("streamablehttp: the server's description lists LegacyVersions %s, which WithoutLegacy leaves unserved "+
			"(server/discover would advertise them and the endpoint refuse them): drop WithoutLegacy, "+
			"or build the Server with mrtr.NewServer and a description without LegacyVersions", strings.Join(listed, ", "))
	}
	if err := wire.UnbridgedVersion("streamablehttp", listed); err != nil {
		return nil, err
	}
	if cfg.legacy != nil {
		return cfg.legacy, nil
	}
	if _, fromEnv, _ := state.KeyRingFromEnv(); !fromEnv && srv.Ready() == nil {
		log.Warn("streamablehttp: the initialize era's session ids are sealed with a random key made at start-up, "+
			"since the Server's keys do not come from the environment; replicas will not share sessions. "+
			"Give WithLegacy(legacy.New(srv, legacy.WithKeyRing(ring))) with the Server's ring", "env", state.EnvKeys)
	}
	e, err := legacy.New(srv, legacy.WithLogger(log))
	if err != nil {
		return nil, fmt.Errorf("streamablehttp: serving the initialize era: %w", err)
	}
	return e, nil
}

// Legacy returns the Engine that serves clients of the initialize era:
// the one given with WithLegacy or the one New made, or nil when that era
// is not served. With a shared bus (mrtr.WithShare), Close it when the
// replica shuts down, as the Server.
func (h *Handler) Legacy() *legacy.Engine { return h.legacy }
