package mrtr_test

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime/pprof"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/mrtrkit/mrtrkit/mrtr"
	"github.com/mrtrkit/mrtrkit/mrtr/typed"
)

// Pairs of benchmarks: the same tool written against mrtr.Result (Raw)
// and in straight-line code (Straight), served in process, round by
// round. Compare them with benchstat:
//
//	go test -run '^$' -bench 'Raw|Straight' -benchmem -count 10 ./mrtr/ > b.txt
//
// On a machine whose speed drifts, the interleaved pairs report the ratio
// straight/raw of each round directly, for a handler that asks with
// mrtr.Elicit and for one in the recommended style (a typed.Form):
//
//	go test -run '^$' -bench InterleavedThree -benchtime 150000x -cpu 1 ./mrtr/
//
// To see where the difference goes, profile one round of a pair (here the
// final round of the mrtr.Elicit pair; InterleavedThreeTyped/Final for the
// typed one) and split the profile by the side label its batches run under:
//
//	go test -run '^$' -bench 'InterleavedThree$/Final' -benchtime 300000x -cpu 1 \
//		-cpuprofile cpu.out -o mrtr.test ./mrtr/
//	go tool pprof -tagfocus side=raw -proto mrtr.test cpu.out > raw.pb.gz
//	go tool pprof -tagfocus side=straight -proto mrtr.test cpu.out > straight.pb.gz
//	go tool pprof -top -cum -diff_base raw.pb.gz straight.pb.gz
//
// BenchmarkStraightReplay measures a final round that replays n answered
// questions, for n = 1, 4, 16, 64: its cost grows linearly in n.

// askNameQ is the question both styles ask first, built once as real
// code builds its fixed questions (a package-level form, say).
var askNameQ = nameForm("What is your name?")

// rawThree is the idiomatic state machine: it carries the earlier answers
// in its State as JSON and decodes them each round.
var rawThree = rawThreeAsking(
	func(req *mrtr.Request) (string, error) {
		e, ok := req.Responses.Elicitation("name")
		if !ok {
			return "", nil
		}
		name, _ := e.Content["name"].(string)
		return name, nil
	},
	func() *mrtr.InputRequired { return mrtr.Ask("name", askNameQ) })

// rawThreeAsking is rawThree with the name read from this round's answers
// by readName and asked by askName.
func rawThreeAsking(readName func(*mrtr.Request) (string, error), askName func() *mrtr.InputRequired) mrtr.HandlerFunc {
	return func(_ context.Context, req *mrtr.Request) (mrtr.Result, error) {
		var st struct {
			Name, Draft string
		}
		if req.State != nil {
			if err := json.Unmarshal(req.State, &st); err != nil {
				return nil, err
			}
		}
		name, err := readName(req)
		if err != nil {
			return nil, err
		}
		if name != "" {
			st.Name = name
		}
		if d, ok := req.Responses.Sampling("draft"); ok {
			st.Draft = d.Text()
		}
		var ir *mrtr.InputRequired
		switch {
		case st.Name == "":
			ir = askName()
		case st.Draft == "":
			ir = mrtr.Ask("draft", &mrtr.SamplingRequest{Messages: []mrtr.SamplingMessage{mrtr.UserText("for " + st.Name)}, MaxTokens: 50})
		default:
			return mrtr.TextResult(st.Name + ": " + st.Draft), nil
		}
		b, err := json.Marshal(st)
		if err != nil {
			return nil, err
		}
		ir.State = b
		return ir, nil
	}
}

// straightThree is rawThree in straight-line code.
func straightThree(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
	who, err := mrtr.Elicit(ctx, req, "name", askNameQ)
	if err != nil {
		return nil, err
	}
	name, _ := who.Content["name"].(string)
	draft, err := mrtr.Sample(ctx, req, "draft", &mrtr.SamplingRequest{Messages: []mrtr.SamplingMessage{mrtr.UserText("for " + name)}, MaxTokens: 50})
	if err != nil {
		return nil, err
	}
	return mrtr.TextResult(name + ": " + draft.Text()), nil
}

var (
	benchName  = obj{"action": "accept", "content": obj{"name": "Ada"}}
	benchDraft = obj{"role": "assistant", "model": "m", "content": obj{"type": "text", "text": "a short poem"}}
)

// benchRounds returns the bodies of the three requests of one call of the
// tool: the first, the retry answering the name, the retry answering the
// draft.
func benchRounds(b testing.TB, fx *fixture, tool string) [3][]byte {
	params := func(st string, ans obj) obj {
		p := obj{"_meta": meta(capsElicitSampl), "name": tool, "arguments": obj{"lang": "en"}}
		if st != "" {
			p["requestState"], p["inputResponses"] = st, ans
		}
		return p
	}
	var out [3][]byte
	out[0] = []byte(request("tools/call", params("", nil)))
	_, s1 := fx.call("tools/call", params("", nil)).inputRequired(b)
	out[1] = []byte(request("tools/call", params(s1, obj{"name": benchName})))
	_, s2 := fx.call("tools/call", params(s1, obj{"name": benchName})).inputRequired(b)
	out[2] = []byte(request("tools/call", params(s2, obj{"draft": benchDraft})))
	fx.call("tools/call", params(s2, obj{"draft": benchDraft})).complete(b)
	return out
}

func benchPair(b *testing.B, h mrtr.HandlerFunc) {
	fx := newFixture(b, mrtr.WithLogger(discardLogger))
	fx.addTool("three", h)
	bodies := benchRounds(b, fx, "three")
	for i, name := range []string{"First", "Middle", "Final"} {
		b.Run(name, func(b *testing.B) {
			buf := make([]byte, 0, 2048)
			b.ReportAllocs()
			cpuLoop(b, func() { buf = benchServe(b, fx.srv, bodies[i], buf, false) })
		})
	}
}

// BenchmarkInterleavedThree serves rawThree's and straightThree's rounds
// in one process, in alternating batches of 100, and reports the median
// of the batch-pair ratios straight/raw (straight/raw): a machine whose
// speed drifts, or whose CPU is stolen in bursts, moves both halves of a
// pair alike. Its ns/op is the time of one raw and one straight round.
func BenchmarkInterleavedThree(b *testing.B) { interleaved(b, rawThree, straightThree) }

// BenchmarkInterleavedThreeTyped is BenchmarkInterleavedThree in the
// recommended style: the name is a typed.Form, asked in straight-line code
// against read by a handler written against mrtr.Result.
func BenchmarkInterleavedThreeTyped(b *testing.B) { interleaved(b, rawThreeTyped, straightThreeTyped) }

// benchNameForm is the form the typed pair asks.
type benchNameForm struct {
	Name string `json:"name" validate:"required"`
}

var askNameForm = typed.MustForm[benchNameForm]("name", "What is your name?")

// rawThreeTyped is rawThree with the name asked and read through a
// typed.Form.
var rawThreeTyped = rawThreeAsking(
	func(req *mrtr.Request) (string, error) {
		who, _, err := askNameForm.Read(req)
		return who.Name, err
	},
	askNameForm.InputRequired)

// straightThreeTyped is rawThreeTyped in straight-line code.
func straightThreeTyped(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
	who, _, err := askNameForm.Ask(ctx, req)
	if err != nil {
		return nil, err
	}
	draft, err := mrtr.Sample(ctx, req, "draft", &mrtr.SamplingRequest{Messages: []mrtr.SamplingMessage{mrtr.UserText("for " + who.Name)}, MaxTokens: 50})
	if err != nil {
		return nil, err
	}
	return mrtr.TextResult(who.Name + ": " + draft.Text()), nil
}

func interleaved(b *testing.B, rawH, straightH mrtr.HandlerFunc) {
	fr, fs := newFixture(b, mrtr.WithLogger(discardLogger)), newFixture(b, mrtr.WithLogger(discardLogger))
	fr.addTool("three", rawH)
	fs.addTool("three", straightH)
	raw, straight := benchRounds(b, fr, "three"), benchRounds(b, fs, "three")
	for i, name := range []string{"First", "Middle", "Final"} {
		b.Run(name, func(b *testing.B) {
			const batch = 100
			buf := make([]byte, 0, 2048)
			// Each batch runs under a profiler label, side=raw or
			// side=straight, so that one profile of the pair splits in two.
			serve := func(fx *fixture, body []byte, side string) (d time.Duration) {
				pprof.Do(context.Background(), pprof.Labels("side", side), func(context.Context) {
					t0 := time.Now()
					for range batch {
						buf = benchServe(b, fx.srv, body, buf, false)
					}
					d = time.Since(t0)
				})
				return d
			}
			var ratios []float64
			n := 0
			for b.Loop() {
				n++
				if n%batch != 0 {
					continue
				}
				// One pair of batches per batch of b.N, in alternating order.
				var r, s time.Duration
				if len(ratios)%2 == 0 {
					r, s = serve(fr, raw[i], "raw"), serve(fs, straight[i], "straight")
				} else {
					s, r = serve(fs, straight[i], "straight"), serve(fr, raw[i], "raw")
				}
				ratios = append(ratios, float64(s)/float64(r))
			}
			if len(ratios) > 0 {
				slices.Sort(ratios)
				b.ReportMetric(ratios[len(ratios)/2], "straight/raw")
			}
		})
	}
}

func BenchmarkRawThree(b *testing.B)      { benchPair(b, rawThree) }
func BenchmarkStraightThree(b *testing.B) { benchPair(b, straightThree) }

// BenchmarkRawNoAsk and BenchmarkStraightNoAsk: a tool that never asks
// pays nothing for the straight-line machinery.
func BenchmarkRawNoAsk(b *testing.B) {
	benchOne(b, func(context.Context, *mrtr.Request) (mrtr.Result, error) { return mrtr.TextResult("hi"), nil })
}

func BenchmarkStraightNoAsk(b *testing.B) {
	benchOne(b, func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
		if req.Round > 0 { // never: the branch a straight-line tool takes when it asks
			if _, err := mrtr.ListRoots(ctx, req, "roots"); err != nil {
				return nil, err
			}
		}
		return mrtr.TextResult("hi"), nil
	})
}

func benchOne(b *testing.B, h mrtr.HandlerFunc) {
	fx := newFixture(b, mrtr.WithLogger(discardLogger))
	fx.addTool("one", h)
	body := []byte(request("tools/call", obj{"_meta": meta(capsNone), "name": "one", "arguments": obj{}}))
	buf := make([]byte, 0, 1024)
	b.ReportAllocs()
	cpuLoop(b, func() { buf = benchServe(b, fx.srv, body, buf, false) })
}

// cpuLoop runs f b.N times and reports the process CPU time per run
// (cpu-ns/op) beside the wall time: compare pairs on cpu-ns/op when the
// machine is busy.
func cpuLoop(b *testing.B, f func()) {
	start := processCPU()
	for b.Loop() {
		f()
	}
	b.ReportMetric(float64(processCPU()-start)/float64(b.N), "cpu-ns/op")
}

// BenchmarkStraightReplay: the final round of a call that asked n
// questions, one per round; n-1 answers replay from the sealed journal.
func BenchmarkStraightReplay(b *testing.B) {
	for _, n := range []int{1, 4, 16, 64} {
		b.Run("n="+strconv.Itoa(n), func(b *testing.B) {
			fx := newFixture(b, mrtr.WithLogger(discardLogger), mrtr.WithMaxRounds(n+1))
			fx.addTool("many", func(ctx context.Context, req *mrtr.Request) (mrtr.Result, error) {
				total := 0
				for i := range n {
					e, err := mrtr.Elicit(ctx, req, mrtr.Key("q", i), nameForm("Question "+strconv.Itoa(i)))
					if err != nil {
						return nil, err
					}
					total += len(e.Content["name"].(string))
				}
				return mrtr.TextResult(fmt.Sprint(total)), nil
			})
			p := obj{"_meta": meta(capsElicit), "name": "many", "arguments": obj{}}
			_, st := fx.call("tools/call", p).inputRequired(b)
			var last []byte
			for i := range n {
				p["requestState"], p["inputResponses"] = st, obj{mrtr.Key("q", i): benchName}
				if i == n-1 {
					last = []byte(request("tools/call", p))
					fx.call("tools/call", p).complete(b)
					break
				}
				_, st = fx.call("tools/call", p).inputRequired(b)
			}
			buf := make([]byte, 0, 1024)
			b.ReportAllocs()
			b.ReportMetric(float64(len(st)), "state-bytes")
			cpuLoop(b, func() { buf = benchServe(b, fx.srv, last, buf, false) })
		})
	}
}
