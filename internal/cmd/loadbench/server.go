package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"runtime"
	"runtime/pprof"
	"sync"
	"time"
)

// serverLifetime bounds how long a server process lives even if its
// parent never closes its stdin.
const serverLifetime = 2 * time.Hour

// serverStats is what a server process reports about one measured phase:
// the differences between /start and /stop.
type serverStats struct {
	// UserNs and SysNs are the process's CPU time in user and kernel mode.
	UserNs int64 `json:"userNs"`
	SysNs  int64 `json:"sysNs"`
	// WallNs is the time between /start and /stop.
	WallNs int64 `json:"wallNs"`
	// Mallocs and AllocBytes count heap allocations (runtime.MemStats).
	Mallocs    uint64 `json:"mallocs"`
	AllocBytes uint64 `json:"allocBytes"`
	// GCs is the number of completed GC cycles.
	GCs uint32 `json:"gcs"`
}

// snapshot is the process's counters at one instant.
type snapshot struct {
	cpu     cpuTimes
	wall    time.Time
	mallocs uint64
	bytes   uint64
	gcs     uint32
}

func takeSnapshot() (snapshot, error) {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	cpu, err := processCPU()
	if err != nil {
		return snapshot{}, err
	}
	return snapshot{cpu: cpu, wall: time.Now(), mallocs: ms.Mallocs, bytes: ms.TotalAlloc, gcs: ms.NumGC}, nil
}

func (a snapshot) to(b snapshot) serverStats {
	return serverStats{
		UserNs:     b.cpu.user.Nanoseconds() - a.cpu.user.Nanoseconds(),
		SysNs:      b.cpu.sys.Nanoseconds() - a.cpu.sys.Nanoseconds(),
		WallNs:     b.wall.Sub(a.wall).Nanoseconds(),
		Mallocs:    b.mallocs - a.mallocs,
		AllocBytes: b.bytes - a.bytes,
		GCs:        b.gcs - a.gcs,
	}
}

// control is the server process's control endpoint, on a listener of its
// own so that the measured server sees only measured traffic.
//
//	POST /start  begins a phase: records the counters, starts the CPU
//	             profile when one was asked for.
//	POST /stop   ends it: stops the profile and answers the serverStats.
type control struct {
	profile string // CPU profile path; "" for none

	mu      sync.Mutex
	start   snapshot
	running bool
	file    *os.File
}

func (c *control) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	switch r.URL.Path {
	case "/start":
		if c.running {
			http.Error(w, "a phase is already running", http.StatusConflict)
			return
		}
		if c.profile != "" {
			f, err := os.Create(c.profile)
			if err != nil {
				http.Error(w, err.Error(), http.StatusInternalServerError)
				return
			}
			if err := pprof.StartCPUProfile(f); err != nil {
				f.Close()
				http.Error(w, err.Error(), http.StatusInternalServerError)
				return
			}
			c.file = f
		}
		s, err := takeSnapshot()
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		c.start, c.running = s, true
		w.WriteHeader(http.StatusNoContent)
	case "/stop":
		if !c.running {
			http.Error(w, "no phase is running", http.StatusConflict)
			return
		}
		end, err := takeSnapshot()
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		c.running = false
		if c.file != nil {
			pprof.StopCPUProfile()
			if err := c.file.Close(); err != nil {
				http.Error(w, err.Error(), http.StatusInternalServerError)
				return
			}
			c.file = nil
			// One profile per process: later phases are not profiled.
			c.profile = ""
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(c.start.to(end))
	default:
		http.NotFound(w, r)
	}
}

// serve runs a server process: the scenario's handler on one ephemeral
// loopback port and the control endpoint on another. It prints
// "ready <server address> <control address>" on stdout and serves until
// its stdin reaches end of file (the parent closes it, or exits).
func serve(name, profile string) error {
	h, err := newHandler(name)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	cln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	errLog := log.New(os.Stderr, "loadbench server: ", 0)
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: time.Minute, ErrorLog: errLog}
	csrv := &http.Server{Handler: &control{profile: profile}, ReadHeaderTimeout: 10 * time.Second, ErrorLog: errLog}
	errc := make(chan error, 3)
	go func() { errc <- srv.Serve(ln) }()
	go func() { errc <- csrv.Serve(cln) }()
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		errc <- nil
	}()
	if _, err := fmt.Printf("ready %s %s\n", ln.Addr(), cln.Addr()); err != nil {
		return err
	}
	t := time.NewTimer(serverLifetime)
	defer t.Stop()
	select {
	case err = <-errc:
	case <-t.C:
		err = errors.New("lifetime exceeded")
	}
	_ = srv.Close()
	_ = csrv.Close()
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}
