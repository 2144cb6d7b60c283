package streamablehttp

import (
	"errors"
	"net/http"
	"strconv"
	"sync/atomic"

	"github.com/mrtrkit/mrtrkit/mrtr"
)

// Health probes, for an orchestrator or a load balancer. The Handler
// serves them on their own paths beside the endpoint, for example:
//
//	ready := streamablehttp.Readiness(srv)
//	h, err := streamablehttp.New(srv,
//		streamablehttp.WithLiveness("/livez"),
//		streamablehttp.WithReadiness("/readyz", ready))
//
// They are http.Handlers too, to mount on a router of your own.
//
// They check neither Host nor Origin nor authentication, and say nothing
// a caller could use beyond whether to send traffic.

var (
	hvNoStore   = []string{"no-store"}
	livenessOK  = []byte(`{"status":"ok"}` + "\n")
	readinessOK = []byte(`{"status":"ready"}` + "\n")
)

// Liveness returns a handler that answers every request 200 OK with
// {"status":"ok"}: the process is up and serving HTTP. It checks nothing
// else, so that an orchestrator restarts the process only when it no
// longer answers at all.
func Liveness() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeProbe(w, statusReady, livenessOK)
	})
}

// ErrDraining is the reason a ReadinessProbe gives once Drain was called.
var ErrDraining = errors.New("streamablehttp: draining: the server is shutting down")

// ReadinessProbe answers readiness probes for one mrtr.Server; build it
// with Readiness. It is an http.Handler.
type ReadinessProbe struct {
	srv            *mrtr.Server
	allowEphemeral bool
	draining       atomic.Bool
}

// ReadinessOption configures a ReadinessProbe.
type ReadinessOption interface{ applyReadiness(*ReadinessProbe) }

type readinessFunc func(*ReadinessProbe)

func (f readinessFunc) applyReadiness(p *ReadinessProbe) { f(p) }

// AllowEphemeralKeys counts a server running on the random requestState
// key made at start-up as ready: for a single replica that accepts that a
// restart breaks the multi-round calls in flight.
func AllowEphemeralKeys() ReadinessOption {
	return readinessFunc(func(p *ReadinessProbe) { p.allowEphemeral = true })
}

// Readiness returns a probe that answers 200 OK with {"status":"ready"}
// while srv should take traffic, and 503 Service Unavailable with
// {"status":"unavailable","reason":"..."} while it should not: while srv
// runs on the random requestState key NewServer made because no keys were
// configured (mrtr.ErrEphemeralKeys; see AllowEphemeralKeys), once srv's
// Close was called (mrtr.ErrClosed), and once the probe's Drain was
// called (ErrDraining).
func Readiness(srv *mrtr.Server, opts ...ReadinessOption) *ReadinessProbe {
	p := &ReadinessProbe{srv: srv}
	for _, o := range opts {
		if o != nil {
			o.applyReadiness(p)
		}
	}
	return p
}

// Drain makes the probe answer 503 from now on, so that load balancers
// stop sending traffic before the process stops serving. Call it first on
// a shutdown signal, wait for the balancers to notice, then call the
// mrtr.Server's Close and http.Server.Shutdown. It is safe to call more
// than once, and from any goroutine; it suits
// http.Server.RegisterOnShutdown.
func (p *ReadinessProbe) Drain() { p.draining.Store(true) }

// Check returns why the server should not take traffic, or nil.
func (p *ReadinessProbe) Check() error {
	if p.draining.Load() {
		return ErrDraining
	}
	err := p.srv.Ready()
	if p.allowEphemeral && errors.Is(err, mrtr.ErrEphemeralKeys) {
		return nil
	}
	return err
}

// ServeHTTP answers one probe.
func (p *ReadinessProbe) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var reason string
	switch err := p.Check(); {
	case err == nil:
		writeProbe(w, statusReady, readinessOK)
		return
	case errors.Is(err, ErrDraining):
		reason = "draining"
	case errors.Is(err, mrtr.ErrClosed):
		reason = "closed"
	case errors.Is(err, mrtr.ErrEphemeralKeys):
		reason = "no requestState keys configured"
	default:
		reason = "not ready"
	}
	writeProbe(w, statusNotReady, []byte(`{"status":"unavailable","reason":`+strconv.Quote(reason)+"}\n"))
}

func writeProbe(w http.ResponseWriter, status int, body []byte) {
	h := w.Header()
	h["Content-Type"] = hvJSON
	h["Cache-Control"] = hvNoStore
	h["Content-Length"] = []string{strconv.Itoa(len(body))}
	w.WriteHeader(status)
	_, _ = w.Write(body)
}
