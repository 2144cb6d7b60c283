// Command replica is one replica of the scale-out test
// (redis/scaleout/run.sh): an mrtr.Server sharing a Redis with its peers
// (mrtr.WithShare over redisshare, every event authenticated with
// share.Sealed), sealing requestState with a key ring
// read from a file and reloaded without a restart (state.KeyRingFile, on
// SIGHUP and by polling), with one audience for the whole deployment,
// 2025-11-25 clients served through mrtr/legacy, and /livez and /readyz.
//
// Its tools exist for the test's scenarios, and every one says which
// replica served it:
//
//   - whoami: "replica=NAME keys=ID,ID" (the key ids in use, first sealing);
//   - relay: three rounds (an elicitation, a sampling request, another
//     elicitation), each question naming the replica that asked it, and a
//     final text naming the replica of every round;
//   - confirm: two rounds (a yes/no elicitation, then "confirmed on NAME");
//   - confirm_once: confirm registered with mrtr.OnceOnly, so that each of
//     its states is good for one retry, on any replica;
//   - hold: confirm's question, then a round that reports progress at once
//     and answers only after the milliseconds its argument says, so that a
//     replica can be killed while the round is in flight;
//   - change_list: adds a tool named by its argument, which changes the
//     tool list (notifications/tools/list_changed on every replica).
//
// Every HTTP response carries X-Replica: NAME.
//
//	replica -name A -redis 127.0.0.1:6379 -keys /run/secrets/state-keys -addr 127.0.0.1:0
//
// It logs `msg="replica listening" url=http://HOST:PORT/mcp` once it
// serves.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/mrtrkit/mrtrkit/discover"
	"github.com/mrtrkit/mrtrkit/mrtr"
	"github.com/mrtrkit/mrtrkit/mrtr/legacy"
	redisshare "github.com/mrtrkit/mrtrkit/redis"
	"github.com/mrtrkit/mrtrkit/share"
	"github.com/mrtrkit/mrtrkit/state"
	"github.com/mrtrkit/mrtrkit/transport/streamablehttp"
)

func main() {
	name := flag.String("name", "", "this replica's name, reported by every tool and in X-Replica")
	addr := flag.String("addr", "127.0.0.1:0", "address to listen on")
	path := flag.String("path", "/mcp", "path of the MCP endpoint")
	redisAddr := flag.String("redis", "127.0.0.1:6379", "Redis address (host:port), or a redis:// or rediss:// URL with user and password")
	keys := flag.String("keys", "", "key ring file (one ID:BASE64 per line, first seals); reloaded on SIGHUP and when -keys-poll finds it changed")
	poll := flag.Duration("keys-poll", 0, "how often to look for a changed key ring file (0: on SIGHUP only)")
	audience := flag.String("audience", "https://mcp.scaleout.test/mcp", "the deployment's canonical URL, the same on every replica")
	legTimeout := flag.Duration("leg-timeout", legacy.DefaultLegTimeout, "how long a 2025-11-25 client may take to answer one server-to-client request")
	verbose := flag.Bool("v", false, "log at debug level")
	flag.Parse()

	level := slog.LevelInfo
	if *verbose {
		level = slog.LevelDebug
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level})).With("replica", *name)
	slog.SetDefault(log)
	if *name == "" || *keys == "" {
		fmt.Fprintln(os.Stderr, "replica: -name and -keys are required")
		os.Exit(2)
	}
	if err := run(*name, *addr, *path, *redisAddr, *keys, *poll, *audience, *legTimeout, log); err != nil {
		log.Error("replica failed", "err", err)
		os.Exit(1)
	}
}

func run(name, addr, path, redisAddr, keyFile string, poll time.Duration, audience string, legTimeout time.Duration, log *slog.Logger) error {
	// SIGHUP reloads the keys; until the watcher below has registered for
	// it, this keeps it from ending the process.
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)

	ring, err := state.LoadKeyRingFile(keyFile)
	if err != nil {
		return err
	}
	codec, err := state.NewAEAD(ring)
	if err != nil {
		return err
	}
	opts := &redis.Options{Addr: redisAddr}
	if strings.Contains(redisAddr, "://") { // redis://user:password@host:port/0, rediss:// for TLS
		if opts, err = redis.ParseURL(redisAddr); err != nil {
			return fmt.Errorf("-redis: %w", err)
		}
	}
	opts.DialTimeout, opts.ReadTimeout, opts.WriteTimeout = time.Second, time.Second, time.Second
	client := redis.NewClient(opts)
	defer client.Close()
	// Every event on the bus is authenticated with a key derived from the
	// ring (reloaded with it below): whoever can PUBLISH on the Redis
	// cannot speak for a replica.
	sealer, err := state.NewBusSealer(ring)
	if err != nil {
		return err
	}
	bus := share.Sealed(redisshare.New(client), sealer, share.WithSealLogger(log))

	desc := discover.Description{
		Server:         discover.Implementation{Name: "mrtrkit-scaleout-replica", Version: "0.1.0"},
		Capabilities:   discover.Capabilities{Tools: &discover.ListChanged{ListChanged: true}},
		LegacyVersions: []string{"2025-11-25", "2025-06-18"},
	}
	// Task records are sealed with the same key ring, for their own
	// purpose; the tasks live on the shared bus (WithShare), and a task
	// whose replica stops is taken over a second after its last lease
	// renewal.
	taskCodec, err := state.NewAEAD(ring, state.WithPurpose("task"), state.WithTTL(2*time.Hour))
	if err != nil {
		return err
	}
	srv, err := mrtr.NewServer(desc,
		mrtr.WithTasks(mrtr.TaskCodec(taskCodec), mrtr.TaskLease(time.Second), mrtr.TaskPollInterval(200*time.Millisecond)),
		mrtr.WithCodec(codec),
		mrtr.RequireKeys(),
		mrtr.WithAudience(audience),
		mrtr.WithShare(bus),
		mrtr.WithLogger(log))
	if err != nil {
		return err
	}
	r := &replica{name: name, srv: srv, codec: codec}
	if err := r.register(); err != nil {
		return err
	}
	// The engine joins the Server's shared bus by itself: answers that land
	// here for a call held elsewhere are passed on through Redis. Session
	// ids are sealed with their own codec, reloaded from the same file as
	// the Server's.
	eng, err := legacy.New(srv, legacy.WithKeyRing(ring), legacy.WithLegTimeout(legTimeout), legacy.WithLogger(log))
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	keyFileWatch := state.NewKeyRingFile(keyFile, log, codec, eng.SessionCodec(), sealer.Codec(), taskCodec)
	go keyFileWatch.Watch(ctx, poll)
	h, err := streamablehttp.New(srv, streamablehttp.WithPath(path), streamablehttp.WithLegacy(eng), streamablehttp.WithAllowedHosts("*"))
	if err != nil {
		return err
	}
	ready := streamablehttp.Readiness(srv)
	mux := http.NewServeMux()
	mux.Handle(path, h)
	mux.Handle("/livez", streamablehttp.Liveness())
	mux.Handle("/readyz", ready)
	tagged := http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		w.Header().Set("X-Replica", name)
		mux.ServeHTTP(w, req)
	})

	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	hs := streamablehttp.NewHTTPServer(ln.Addr().String(), tagged)
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	log.Info("replica listening", "url", "http://"+ln.Addr().String()+path, "keys", codec.KeyIDs())

	stop := make(chan os.Signal, 1)
	signal.Notify(stop, os.Interrupt, syscall.SIGTERM)
	select {
	case err := <-errc:
		if errors.Is(err, http.ErrServerClosed) {
			return nil
		}
		return err
	case <-stop:
	}
	log.Info("draining")
	ready.Drain()
	_ = srv.Close()
	_ = eng.Close()
	sctx, scancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer scancel()
	if err := hs.Shutdown(sctx); err != nil {
		_ = hs.Close()
	}
	return nil
}

// replica holds the tools' shared parts.
type replica struct {
	name  string
	srv   *mrtr.Server
	codec *state.RingCodec
}

var (
	emptySchema = json.RawMessage(`{"type":"object"}`)
	nameSchema  = json.RawMessage(`{"type":"object","properties":{"name":{"type":"string","pattern":"^[a-z0-9_-]{1,40}$"}},"required":["name"]}`)
)

func (r *replica) register() error {
	whoami := mrtr.HandlerFunc(func(context.Context, *mrtr.Request) (mrtr.Result, error) {
		return mrtr.TextResult(r.whoami()), nil
	})
	if err := r.srv.AddTool(mrtr.Tool{Name: "whoami", Description: "Names the replica that serves the call and its key ids", InputSchema: emptySchema}, whoami); err != nil {
		return err
	}
	if err := r.srv.AddTool(mrtr.Tool{Name: "relay", Description: "Three rounds: an elicitation (name), a sampling request, an elicitation (colour); names the replica of every round", InputSchema: emptySchema}, mrtr.HandlerFunc(r.relay)); err != nil {
		return err
	}
	if err := r.srv.AddTool(mrtr.Tool{Name: "confirm", Description: "Asks yes or no, then says which replica confirmed", InputSchema: emptySchema}, mrtr.HandlerFunc(r.confirm)); err != nil {
		return err
	}
	if err := r.srv.AddTool(mrtr.Tool{Name: "confirm_once", Description: "confirm, with each requestState good for one retry on any replica", InputSchema: emptySchema}, mrtr.HandlerFunc(r.confirm), mrtr.OnceOnly()); err != nil {
		return err
	}
	holdSchema := json.RawMessage(`{"type":"object","properties":{"ms":{"type":"integer","minimum":0,"maximum":60000}},"required":["ms"]}`)
	if err := r.srv.AddTool(mrtr.Tool{Name: "hold", Description: "Asks yes or no; then reports progress and holds the answer for ms milliseconds (or until the request ends)", InputSchema: holdSchema}, mrtr.HandlerFunc(r.hold)); err != nil {
		return err
	}
	if err := r.srv.AddTool(mrtr.Tool{Name: "task_confirm", Description: "A task (for clients that declare the Tasks extension): asks yes or no, then names the replicas that ran it", InputSchema: emptySchema},
		mrtr.HandlerFunc(r.taskConfirm), mrtr.TaskSupport(mrtr.TaskOptional)); err != nil {
		return err
	}
	if err := r.srv.AddTool(mrtr.Tool{Name: "task_slow", Description: "A task: sleeps ms milliseconds (or until cancelled), then names the replica that ran it", InputSchema: holdSchema},
		mrtr.HandlerFunc(r.taskSlow), mrtr.TaskSupport(mrtr.TaskRequired)); err != nil {
		return err
	}
	return r.srv.AddTool(mrtr.Tool{Name: "change_list", Description: "Adds a tool of the given name, changing the tool list", InputSchema: nameSchema}, mrtr.HandlerFunc(r.changeList))
}

func (r *replica) whoami() string {
	return "replica=" + r.name + " keys=" + strings.Join(r.codec.KeyIDs(), ",")
}

// relayState is what relay carries from round to round, sealed.
type relayState struct {
	Step   int      `json:"step"`
	Served []string `json:"served"`
	Name   string   `json:"name,omitempty"`
	Sample string   `json:"sample,omitempty"`
}

func formOf(field, description string) *mrtr.ElicitSchema {
	return &mrtr.ElicitSchema{Type: "object", Required: []string{field},
		Properties: map[string]json.RawMessage{field: json.RawMessage(`{"type":"string","description":"` + description + `"}`)}}
}

// relay asks three questions, one a round, and names the replica of each.
func (r *replica) relay(_ context.Context, req *mrtr.Request) (mrtr.Result, error) {
	var st relayState
	if req.State != nil {
		if err := json.Unmarshal(req.State, &st); err != nil {
			return nil, err
		}
	}
	st.Served = append(st.Served, r.name)
	switch st.Step {
	case 1:
		e, ok := req.Responses.Elicitation("name")
		if !ok || !e.Accepted() {
			return mrtr.TextResult("relay: no name given"), nil
		}
		st.Name, _ = e.Content["name"].(string)
	case 2:
		s, ok := req.Responses.Sampling("sample")
		if !ok {
			return mrtr.TextResult("relay: no sample given"), nil
		}
		st.Sample = s.Text()
	case 3:
		e, ok := req.Responses.Elicitation("colour")
		if !ok || !e.Accepted() {
			return mrtr.TextResult("relay: no colour given"), nil
		}
		colour, _ := e.Content["colour"].(string)
		return mrtr.TextResult(fmt.Sprintf("name=%s; sample=%s; colour=%s; served=%s",
			st.Name, st.Sample, colour, strings.Join(st.Served, ","))), nil
	}
	var key string
	var ask mrtr.InputRequest
	switch st.Step {
	case 0:
		key, ask = "name", &mrtr.ElicitRequest{Message: "Round 1 of 3 (replica " + r.name + "): what is your name?", RequestedSchema: formOf("name", "Your name")}
	case 1:
		key, ask = "sample", &mrtr.SamplingRequest{Messages: []mrtr.SamplingMessage{mrtr.UserText("Round 2 of 3 (replica " + r.name + "): greet " + st.Name)}, MaxTokens: 50}
	case 2:
		key, ask = "colour", &mrtr.ElicitRequest{Message: "Round 3 of 3 (replica " + r.name + "): your favourite colour?", RequestedSchema: formOf("colour", "A colour")}
	}
	st.Step++
	b, err := json.Marshal(st)
	if err != nil {
		return nil, err
	}
	return &mrtr.InputRequired{Requests: map[string]mrtr.InputRequest{key: ask}, State: b}, nil
}

// confirm asks yes or no, then names the replica that confirmed.
func (r *replica) confirm(_ context.Context, req *mrtr.Request) (mrtr.Result, error) {
	if e, ok := req.Responses.Elicitation("ok"); ok && req.State != nil {
		if yes, _ := e.Content["yes"].(bool); e.Accepted() && yes {
			return mrtr.TextResult("confirmed on " + r.name + " (asked on " + string(req.State) + ")"), nil
		}
		return mrtr.TextResult("not confirmed on " + r.name), nil
	}
	return &mrtr.InputRequired{
		Requests: map[string]mrtr.InputRequest{"ok": &mrtr.ElicitRequest{Message: "Proceed? (replica " + r.name + ")",
			RequestedSchema: &mrtr.ElicitSchema{Type: "object", Required: []string{"yes"},
				Properties: map[string]json.RawMessage{"yes": json.RawMessage(`{"type":"boolean"}`)}}}},
		State: []byte(r.name),
	}, nil
}

// changeList adds a tool, which changes the tool list on every replica's
// listeners: this replica's at once, the others' through Redis.
func (r *replica) changeList(_ context.Context, req *mrtr.Request) (mrtr.Result, error) {
	var in struct {
		Name string `json:"name"`
	}
	if err := json.Unmarshal(req.Arguments, &in); err != nil {
		return nil, err
	}
	tool := "added_" + in.Name
	err := r.srv.AddTool(mrtr.Tool{Name: tool, InputSchema: emptySchema}, mrtr.HandlerFunc(func(context.Context, *mrtr.Request) (mrtr.Result, error) {
		return mrtr.TextResult("added on " + r.name), nil
	}))
	if err != nil {
		return &mrtr.CallToolResult{IsError: true, Content: []mrtr.Content{mrtr.Text(err.Error())}}, nil
	}
	return mrtr.TextResult("replica=" + r.name + " added=" + tool), nil
}

// hold asks yes or no; its second round reports progress, which starts
// the response, and answers after the requested time.
func (r *replica) hold(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
	if req.State == nil {
		return r.confirm(ctx, req)
	}
	_ = req.Progress(0, nil, "holding on "+r.name)
	if err := sleepFor(ctx, req); err != nil {
		return nil, err
	}
	return r.confirm(ctx, req)
}

// sleepFor waits for the milliseconds the argument "ms" of req names, or
// until ctx ends (its error).
func sleepFor(ctx context.Context, req *mrtr.Request) error {
	var in struct {
		MS int `json:"ms"`
	}
	if err := json.Unmarshal(req.Arguments, &in); err != nil {
		return err
	}
	t := time.NewTimer(time.Duration(in.MS) * time.Millisecond)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// taskConfirm asks yes or no in straight-line code; as a task, its
// second run (after tasks/update) may be on another replica than its
// first. It names the replica that created the question (a memo) and the
// one that answered.
func (r *replica) taskConfirm(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
	first, err := mrtr.Memo(ctx, req, "first", func(context.Context) (string, error) { return r.name, nil })
	if err != nil {
		return nil, err
	}
	ans, err := mrtr.Elicit(ctx, req, "ok", &mrtr.ElicitRequest{Message: "Proceed?", RequestedSchema: &mrtr.ElicitSchema{Type: "object",
		Properties: map[string]json.RawMessage{"yes": json.RawMessage(`{"type":"boolean"}`)}}})
	if err != nil {
		return nil, err
	}
	return mrtr.TextResult("asked=" + first + " finished=" + r.name + " action=" + string(ans.Action)), nil
}

// taskSlow sleeps, then names the replica that ran it.
func (r *replica) taskSlow(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
	if err := sleepFor(ctx, req); err != nil {
		return nil, err
	}
	return mrtr.TextResult("finished=" + r.name), nil
}
