package main

import (
	"context"
	"fmt"
	"slices"
	"time"
)

// This file holds the sliced way of measuring (-slices above 1, the
// default): every scenario's server runs at once, and each run's measured
// requests are sent in slices, one slice to each server in turn. A burst
// of load from elsewhere on the machine (or a slower spell of the host)
// then lands on every scenario about equally, so the ratios between
// scenarios hold even when the absolute figures drift.

// measureSliced measures every scenario of one run in slices.
func measureSliced(ctx context.Context, o *options, run int) (ms []measurement, err error) {
	var all []*armed
	defer func() {
		for _, a := range all {
			if cerr := a.close(); cerr != nil && err == nil {
				err = cerr
			}
		}
	}()
	for _, sc := range o.scenarios {
		a, err := arm(ctx, o, sc, run)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", sc.name, err)
		}
		all = append(all, a)
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
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			if err := all[i].phase(ctx, &ms[i], n, limit); err != nil {
				return nil, fmt.Errorf("%s: %w", all[i].sc.name, err)
			}
		}
	}
	for i := range ms {
		if ms[i].load.requests == 0 {
			return nil, fmt.Errorf("%s: no request was answered", all[i].sc.name)
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
