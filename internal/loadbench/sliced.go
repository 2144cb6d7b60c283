package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"time"
)

// This file holds the sliced way of measuring (-slices above 1, the
// default): every scenario's server runs at once, and each run's measured
// requests are sent in slices, one slice to each server in turn. A burst
// of load from elsewhere on the machine (or a slower spell of the host)
// then lands on every scenario about equally, so the ratios between
// scenarios hold even when the absolute figures drift.

// armed is one scenario's server, prepared and warmed up.
type armed struct {
	sc     scenario
	srv    *server
	client *http.Client
	t      target
}

// measureSliced measures every scenario of one run in slices.
func measureSliced(ctx context.Context, o *options, run int) (ms []measurement, err error) {
	var all []*armed
	defer func() {
		for _, a := range all {
			a.client.CloseIdleConnections()
			if serr := a.srv.stop(); serr != nil && err == nil {
				err = serr
			}
		}
	}()
	for _, sc := range o.scenarios {
		profile := ""
		if o.cpuprofile != "" {
			profile = filepath.Join(o.cpuprofile, fmt.Sprintf("%s-run%d.pprof", sc.name, run))
		}
		srv, err := startServer(sc.name, profile, o.serverProcs)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", sc.name, err)
		}
		a := &armed{sc: sc, srv: srv, client: newClient(o.c)}
		all = append(all, a)
		if a.t, err = prepare(ctx, a.client, srv.url, sc); err != nil {
			return nil, fmt.Errorf("%s: %w", sc.name, err)
		}
	}
	for _, a := range all {
		if o.warmup > 0 {
			w := drive(ctx, a.client, a.t, o.warmup, o.c, o.duration)
			if w.failures > 0 {
				return nil, fmt.Errorf("%s: warm-up: %d of %d requests failed, the first: %v", a.sc.name, w.failures, w.requests, w.firstErr)
			}
		}
	}
	ms = make([]measurement, len(all))
	limit := o.duration / time.Duration(o.slices)
	for s := range o.slices {
		n := o.n / o.slices
		if s < o.n%o.slices {
			n++
		}
		// The order turns every slice, so that no scenario always
		// follows the same one.
		for k := range all {
			i := (k + s) % len(all)
			a := all[i]
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			if err := a.srv.control("/start", nil); err != nil {
				return nil, fmt.Errorf("%s: %w", a.sc.name, err)
			}
			busy0, ok0 := machineBusy()
			l := drive(ctx, a.client, a.t, n, o.c, limit)
			busy1, ok1 := machineBusy()
			var st serverStats
			if err := a.srv.control("/stop", &st); err != nil {
				return nil, fmt.Errorf("%s: %w", a.sc.name, err)
			}
			if l.failures > 0 {
				return nil, fmt.Errorf("%s: %d of %d requests failed, the first: %v", a.sc.name, l.failures, l.requests, l.firstErr)
			}
			m := &ms[i]
			m.load.add(l)
			m.srv.add(st)
			if ok0 && ok1 {
				m.machine += busy1 - busy0
			}
		}
	}
	for i := range ms {
		if ms[i].load.requests == 0 {
			return nil, fmt.Errorf("%s: %w", all[i].sc.name, errors.New("no request was answered"))
		}
		slices.Sort(ms[i].load.latency)
	}
	return ms, nil
}

// add counts another slice into r; sort must follow before percentiles
// are read.
func (r *loadResult) add(s loadResult) {
	r.requests += s.requests
	r.failures += s.failures
	if r.firstErr == nil {
		r.firstErr = s.firstErr
	}
	r.elapsed += s.elapsed
	r.client += s.client
	r.latency = append(r.latency, s.latency...)
}

// add counts another slice's server figures into st.
func (st *serverStats) add(s serverStats) {
	st.UserNs += s.UserNs
	st.SysNs += s.SysNs
	st.WallNs += s.WallNs
	st.Mallocs += s.Mallocs
	st.AllocBytes += s.AllocBytes
	st.GCs += s.GCs
}
