package mrtr

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	mathrand "math/rand/v2"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/mrtrkit/mrtrkit/internal/wire"
)

// run records what one run of a straight-line handler asked and learned.
// It is made on the first ask, memo, CallID or CallStart, so a handler
// that does none of these pays nothing for it. Runs are pooled: a call
// releases its run once it is settled, and a goroutine of the handler
// that asks after that finds the run is no longer its request's
// (errCallOver) rather than another call's questions.
type run struct {
	mu sync.Mutex
	runState

	// What settling a round builds and nothing needs once the round is
	// sealed and rendered, kept (emptied) from call to call.
	asks    map[string]InputRequest
	entries []jentry
	payload []byte
}

// runState is a run's contents, zeroed as a whole when it is released.
type runState struct {
	req *Request // the request the run belongs to; nil while pooled
	j   journal  // header; entries are the journal's, sorted (entryLess)

	reached  []reachEntry   // what this run asked, in ask order
	index    map[string]int // key → position in reached, once it is long
	newMemo  []jentry       // memo values kept for the next round
	pending  []string       // keys asked and not answered, in ask order
	active   []string       // memos whose f is running
	diverged string         // the reason a run does not fit the journal
	detail   string         // what diverged, for the log

	reachBuf   [2]reachEntry
	pendingBuf [2]string
	entryBuf   [2]jentry
}

// runs holds released runs.
var runs = sync.Pool{New: func() any { return new(run) }}

// errCallOver is what an ask, a memo or a CallID returns when the
// handler's call has already been answered: a goroutine the handler left
// running asked after the handler returned.
var errCallOver = errors.New("mrtr: the call has ended: ask only while the handler runs")

// owns reports whether ru still belongs to r. The caller holds ru.mu.
func (ru *run) owns(r *Request) bool { return ru.req == r }

// endedRun is the run of a request whose handler returned without one:
// it belongs to no request, so a late ask, memo or CallID finds the call
// over, as it does on a released run.
var endedRun run

// releaseRun ends the request's run once its call is settled: a run of
// its own goes back to the pool, and a request that had none gets
// endedRun. r.run keeps pointing at what it had: a late ask locks it and
// finds it no longer owned by r.
func (r *Request) releaseRun() {
	if r.run.CompareAndSwap(nil, &endedRun) {
		return
	}
	ru := r.run.Load()
	ru.mu.Lock()
	owned := ru.owns(r)
	keep := owned && len(ru.asks) <= maxPooledAsked && cap(ru.entries) <= maxPooledAsked && cap(ru.payload) <= maxPooledPayload
	if owned {
		ru.runState = runState{}
		clear(ru.asks)
		clear(ru.entries)
		ru.entries, ru.payload = ru.entries[:0], ru.payload[:0]
	}
	ru.mu.Unlock()
	if keep {
		runs.Put(ru)
	}
}

// maxPooledPayload is the largest journal buffer a pooled run keeps.
const maxPooledPayload = 4096

// reachEntry is one question as this run asked it.
type reachEntry struct {
	key      string
	kind     kind
	digest   [digestLen]byte
	flags    byte
	attempts uint8
	consumed bool   // its memo completed: it leaves the journal
	answer   any    // the decoded answer; nil while pending
	value    []byte // the answer as JSON, for the journal; made when sealed
	question InputRequest
	memo     string // the memo whose f asked it, if any
}

// indexFrom is the length of reached past which it is indexed by a map,
// so that a run of many questions stays linear.
const indexFrom = 8

// reach returns what this run asked under key, or nil.
func (ru *run) reach(key string) *reachEntry {
	if ru.index != nil {
		if i, ok := ru.index[key]; ok {
			return &ru.reached[i]
		}
		return nil
	}
	for i := range ru.reached {
		if ru.reached[i].key == key {
			return &ru.reached[i]
		}
	}
	return nil
}

// add records a question of this run and returns it.
func (ru *run) add(e reachEntry) *reachEntry {
	ru.reached = append(ru.reached, e)
	n := len(ru.reached)
	switch {
	case ru.index != nil:
		ru.index[e.key] = n - 1
	case n > indexFrom:
		ru.index = make(map[string]int, 2*n)
		for i := range ru.reached {
			ru.index[ru.reached[i].key] = i
		}
	}
	return &ru.reached[n-1]
}

// remove forgets the last question added (one the client cannot answer).
func (ru *run) removeLast() {
	n := len(ru.reached) - 1
	if ru.index != nil {
		delete(ru.index, ru.reached[n].key)
	}
	ru.reached = ru.reached[:n]
}

// recorded returns the journal's entry with tag under key, or nil.
func (ru *run) recorded(tag byte, key string) *jentry {
	es := ru.j.entries
	i := sort.Search(len(es), func(i int) bool {
		return es[i].tag > tag || es[i].tag == tag && es[i].key >= key
	})
	if i < len(es) && es[i].tag == tag && es[i].key == key {
		return &es[i]
	}
	return nil
}

// previous returns what earlier runs recorded of the question under key:
// its answer, or its being asked.
func (ru *run) previous(key string) *jentry {
	if len(ru.j.entries) == 0 {
		return nil
	}
	if e := ru.recorded(tagAnswer, key); e != nil {
		return e
	}
	return ru.recorded(tagPending, key)
}

// runner returns the request's run, made on first use (by one of the
// handler's goroutines, if several ask at once).
func (r *Request) runner() *run {
	if ru := r.run.Load(); ru != nil {
		return ru
	}
	ru := newRun(r)
	drawCallID(&ru.j.callID)
	ru.j.start = time.Now().UnixMilli()
	if !r.run.CompareAndSwap(nil, ru) {
		ru.runState = runState{} // another goroutine was first
		runs.Put(ru)
		return r.run.Load()
	}
	return ru
}

// callIDs are the generators CallIDs are drawn from: ChaCha8, each seeded
// from crypto/rand, so that a first round costs no system call.
var callIDs = sync.Pool{New: func() any {
	var seed [32]byte
	_, _ = rand.Read(seed[:]) // crypto/rand.Read never fails
	return mathrand.NewChaCha8(seed)
}}

// drawCallID fills id with 128 random bits.
func drawCallID(id *[16]byte) {
	g := callIDs.Get().(*mathrand.ChaCha8)
	_, _ = g.Read(id[:])
	callIDs.Put(g)
}

// newRun takes a run for r from the pool.
func newRun(r *Request) *run {
	ru := runs.Get().(*run)
	ru.req = r
	ru.reached, ru.pending = ru.reachBuf[:0], ru.pendingBuf[:0]
	return ru
}

// resume makes the request's run from the journal earlier runs recorded,
// encoded in b; the run's journal aliases b. It runs before the handler,
// which has no run yet.
func (r *Request) resume(b []byte) error {
	ru := newRun(r)
	if err := decodeJournalInto(&ru.j, b, ru.entryBuf[:0]); err != nil {
		ru.runState = runState{}
		runs.Put(ru)
		return err
	}
	r.run.Store(ru)
	r.resumed = true
	return nil
}

// divergeLocked is diverge for a caller that does not hold ru.mu.
func (ru *run) divergeLocked(r *Request, reason, detail string) {
	ru.mu.Lock()
	defer ru.mu.Unlock()
	if ru.owns(r) {
		ru.diverge(reason, detail)
	}
}

// diverge records why this run does not fit the journal; the first
// reason wins. The caller holds ru.mu or owns ru.
func (ru *run) diverge(reason, detail string) {
	if ru.diverged == "" {
		ru.diverged, ru.detail = reason, detail
	}
}

// memoOf returns the memo whose f asks with ctx, if any. With no memo's
// f running, no ask belongs to one.
func (ru *run) memoOf(ctx context.Context) string {
	if len(ru.active) == 0 {
		return ""
	}
	if m, ok := ctx.Value(memoCtxKey{}).(string); ok {
		return m
	}
	if len(ru.active) == 1 {
		return ru.active[0]
	}
	return ""
}

// ask is every straight-line question: it returns the answer when the
// call has one, asks otherwise, and notes what it did for the journal.
func (r *Request) ask(ctx context.Context, key string, q InputRequest, opts []AskOption) (any, error) {
	var (
		cfg   *askConfig
		bound *[digestLen]byte // a compiled ask's digest of a form question
	)
	if len(opts) == 1 {
		if c, ok := opts[0].(*compiledAsk); ok {
			cfg, bound = &c.cfg, c.bound // read, never written
		}
	}
	if cfg == nil && len(opts) > 0 {
		cfg = new(askConfig)
		for _, o := range opts {
			o.applyAsk(cfg)
		}
	}
	if key == "" || len(key) > maxKeyLen || strings.HasPrefix(key, reservedKeyPrefix) {
		return nil, fmt.Errorf("mrtr: question key %q: keys are 1 to %d bytes and do not begin with %q", clip(key), maxKeyLen, reservedKeyPrefix)
	}
	if nilRequest(q) {
		return nil, fmt.Errorf("mrtr: question %q: nil request", key)
	}
	k := q.inputKind()
	d := askDigest(q, cfg, bound)
	ru := r.runner()
	ru.mu.Lock()
	defer ru.mu.Unlock()
	if !ru.owns(r) {
		return nil, errCallOver
	}
	if ru.diverged != "" {
		return nil, errReplayDiverged
	}
	if got := ru.reach(key); got != nil {
		if got.kind != k || got.digest != d {
			ru.diverge("duplicate_key", fmt.Sprintf("%q asked twice in one run with different questions; give each its own key, e.g. mrtr.Key(%q, i)", key, key))
			return nil, errReplayDiverged
		}
		if got.answer == nil {
			return nil, ErrInputRequired
		}
		return got.answer, nil
	}
	prev := ru.previous(key)
	if prev != nil && prev.kind != k {
		ru.diverge("diverged", fmt.Sprintf("%q was asked as %s and is now asked as %s", key, prev.kind, k))
		return nil, errReplayDiverged
	}
	re := ru.add(reachEntry{key: key, kind: k, digest: d, question: q, memo: ru.memoOf(ctx)})
	switch {
	case prev != nil && prev.tag == tagAnswer && prev.digest == d:
		a, err := decodeRecorded(k, prev.value, cfg != nil && cfg.contentJSON)
		if err != nil {
			ru.diverge("diverged", fmt.Sprintf("the recorded answer to %q no longer decodes: %v", key, err))
			return nil, errReplayDiverged
		}
		re.answer, re.value, re.flags, re.attempts = a, prev.value, prev.flags&flagInline, prev.attempts
		return a, nil
	case prev != nil && prev.tag == tagPending:
		re.attempts = prev.attempts
		if prev.digest != d {
			if prev.flags&flagChanged != 0 {
				ru.diverge("question_unstable", fmt.Sprintf("question %q changed on two rounds in a row; build questions from arguments, answers and memo values only", key))
				return nil, errReplayDiverged
			}
			re.flags = flagChanged // asked again: the user answered another question
			break
		}
		re.flags = prev.flags & flagChanged
		if a, answered := r.Responses.get(key); answered {
			return ru.accept(re, a, cfg)
		}
	case prev != nil: // answered, but the question changed since: ask again
		re.flags = flagChanged
	}
	// No usable answer: a server model answers inline, or the client is asked.
	if cfg != nil && cfg.model != nil {
		if sq, ok := q.(*SamplingRequest); ok {
			res, err := cfg.model(ctx, sq)
			switch {
			case errors.Is(err, ErrInputRequired):
				goto client // the model leaves this one to the client
			case err != nil:
				return nil, err
			}
			if err := res.Validate(); err != nil {
				return nil, fmt.Errorf("mrtr: the server's model answered %q badly: %w", key, err)
			}
			re.answer, re.flags = res, re.flags|flagInline
			return res, nil
		}
	}
client:
	// Only a question that goes to the client is checked: one answered
	// was checked when it was first asked.
	if err := validateInputRequest(q); err != nil {
		ru.removeLast()
		return nil, fmt.Errorf("mrtr: question %q: %w", key, err)
	}
	if caps := r.Meta.ClientCapabilities; !capable(q, caps) {
		ru.removeLast() // not asked: the handler may go on without it
		return nil, gateCapabilities(map[string]InputRequest{key: q}, caps)
	}
	ru.pending = append(ru.pending, key)
	return nil, ErrInputRequired
}

// askDigest is the digest of q asked with cfg, or bound for a form
// question when a compiled ask has it.
func askDigest(q InputRequest, cfg *askConfig, bound *[digestLen]byte) [digestLen]byte {
	switch {
	case bound != nil && q.inputKind() == kindElicitForm:
		return *bound // a form question under bind: its digest depends on nothing else
	case cfg == nil:
		return questionDigest(q, nil)
	}
	return questionDigest(q, cfg.bind)
}

// nilRequest reports whether q is nil or a nil pointer.
func nilRequest(q InputRequest) bool {
	switch v := q.(type) {
	case *ElicitRequest:
		return v == nil
	case *SamplingRequest:
		return v == nil
	case *RootsRequest:
		return v == nil
	}
	return q == nil
}

// accept takes the client's answer to a pending question, checking it
// first when the ask has a check. The caller holds ru.mu.
func (ru *run) accept(re *reachEntry, a any, cfg *askConfig) (any, error) {
	if er, ok := a.(*ElicitResult); ok && cfg != nil && cfg.check != nil && er.Accepted() {
		if problem := cfg.check(er); problem != nil {
			if int(re.attempts) >= cfg.max {
				return nil, problem
			}
			re.attempts++
			if cfg.reword != nil {
				q := cfg.reword(re.question.(*ElicitRequest), problem)
				if q == nil || q.inputKind() != re.kind {
					return nil, fmt.Errorf("mrtr: question %q: reworded as another kind of question", re.key)
				}
				if err := validateInputRequest(q); err != nil {
					return nil, fmt.Errorf("mrtr: question %q reworded: %w", re.key, err)
				}
				re.question = q
			}
			ru.pending = append(ru.pending, re.key)
			return nil, ErrInputRequired
		}
	}
	re.answer = a // encoded only if sealed (settleRun)
	return a, nil
}

// encodeAnswer renders a decoded answer for the journal.
func encodeAnswer(a any) ([]byte, error) {
	if er, ok := a.(*ElicitResult); ok {
		b := make([]byte, 0, 32+len(er.Action)+len(er.raw))
		b = wire.AppendString(append(b, `{"action":`...), string(er.Action))
		if er.raw != nil {
			b = append(append(b, `,"content":`...), er.raw...)
		}
		return append(b, '}'), nil
	}
	return json.Marshal(a)
}

func (ru *run) memoLookup(r *Request, key string, fp [digestLen]byte) ([]byte, bool, error) {
	if key == "" || len(key) > maxKeyLen || strings.HasPrefix(key, reservedKeyPrefix) {
		return nil, false, fmt.Errorf("mrtr: memo key %q: keys are 1 to %d bytes and do not begin with %q", clip(key), maxKeyLen, reservedKeyPrefix)
	}
	ru.mu.Lock()
	defer ru.mu.Unlock()
	if !ru.owns(r) {
		return nil, false, errCallOver
	}
	if ru.diverged != "" {
		return nil, false, errReplayDiverged
	}
	for i := range ru.newMemo {
		if e := &ru.newMemo[i]; e.key == key {
			if e.digest != fp {
				ru.diverge("diverged", fmt.Sprintf("memo %q computed twice in one run with different types", key))
				return nil, false, errReplayDiverged
			}
			return e.value, true, nil
		}
	}
	if e := ru.recorded(tagMemo, key); e != nil {
		if e.digest != fp {
			ru.diverge("diverged", fmt.Sprintf("memo %q was recorded with another type", key))
			return nil, false, errReplayDiverged
		}
		ru.newMemo = append(ru.newMemo, *e)
		return e.value, true, nil
	}
	ru.active = append(ru.active, key)
	return nil, false, nil
}

// memoDone notes that the f of memo key returned, whatever it returned:
// later asks are no longer its own.
func (ru *run) memoDone(r *Request, key string) {
	ru.mu.Lock()
	defer ru.mu.Unlock()
	if !ru.owns(r) {
		return
	}
	if i := slices.Index(ru.active, key); i >= 0 {
		ru.active = slices.Delete(ru.active, i, i+1)
	}
}

func (ru *run) memoStore(r *Request, key string, fp [digestLen]byte, value []byte) {
	ru.mu.Lock()
	defer ru.mu.Unlock()
	if !ru.owns(r) {
		return
	}
	ru.newMemo = append(ru.newMemo, jentry{tag: tagMemo, key: key, digest: fp, value: value})
	for i := range ru.reached {
		if re := &ru.reached[i]; re.memo == key && re.answer != nil {
			re.consumed = true
		}
	}
}

// orphans returns, sorted, the keys earlier runs recorded an answer for
// that this run did not reach, and the keys answered on this retry that
// it did not ask: the path through the handler changed.
func (ru *run) orphans() []string {
	var out []string
	for i := range ru.j.entries {
		e := &ru.j.entries[i]
		if e.tag == tagMemo || ru.reach(e.key) != nil {
			continue
		}
		if e.tag == tagAnswer {
			out = append(out, e.key)
		} else if _, ok := ru.req.Responses.get(e.key); ok {
			out = append(out, e.key)
		}
	}
	sort.Strings(out)
	return out
}

// settleRun turns the end of a straight-line run into the call's answer:
// a complete result, an input-required round carrying the journal, or a
// refusal when the run does not fit the call.
func (s *Server) settleRun(c *call, req *Request, res Result, herr error, args json.RawMessage) (json.RawMessage, *Error, bool) {
	ru := req.run.Load()
	ru.mu.Lock()
	defer ru.mu.Unlock()
	pendingErr := herr != nil && errors.Is(herr, ErrInputRequired)
	if ru.diverged == "" && (herr == nil || pendingErr) {
		if o := ru.orphans(); len(o) > 0 {
			ru.diverge("diverged", fmt.Sprintf("%q (answered in round %d) was not asked on this run; the clock, randomness, map order or an external read decided the path, or the handler changed", o[0], req.Round))
		}
	}
	if ru.diverged != "" {
		c.rec.StateReason = ru.diverged
		s.log.Error("mrtr: replay diverged", "method", c.method, "target", clip(c.target), "round", req.Round, "reason", ru.diverged, "detail", ru.detail)
		e := InvalidStateError(false)
		e.Message = "Invalid or expired requestState: the tool's questions changed since this call began; call it again without requestState"
		return nil, e, true
	}
	switch {
	case herr != nil && !pendingErr:
		if len(ru.pending) > 0 {
			s.log.Warn("mrtr: a handler ended with an error while questions were pending; if the error wraps an ask's, wrap it with %w", "method", c.method, "target", clip(c.target), "pending", ru.pending[0], "err", errText(herr))
		}
		return nil, nil, false // the caller reports herr as usual
	case pendingErr && len(ru.pending) == 0:
		return nil, s.internal("handler returned ErrInputRequired with no question pending", herr, c), true
	case herr == nil && isInputRequired(res):
		return nil, s.internal("handler both asked in straight-line code and returned an *InputRequired; use one style", errors.New("mixed styles"), c), true
	case herr == nil && len(ru.pending) > 0:
		return nil, s.internal("handler completed while a question was unanswered: an ask's error was dropped; return it", fmt.Errorf("question %q", ru.pending[0]), c), true
	case herr == nil:
		return nil, nil, false // a complete result
	}
	// Another round: every pending question, and the journal, built in
	// the run's own scratch: inputRequiredJournal seals them or, for a
	// task, copies them into its record, and keeps none of it.
	if ru.asks == nil {
		ru.asks = make(map[string]InputRequest, len(ru.pending))
	}
	ir := &InputRequired{Requests: ru.asks}
	j := journal{callID: ru.j.callID, start: ru.j.start, entries: ru.entries[:0]}
	for i := range ru.reached {
		re := &ru.reached[i]
		switch {
		case re.consumed:
		case re.answer != nil:
			if re.value == nil {
				b, err := encodeAnswer(re.answer)
				if err != nil {
					return nil, s.internal("encoding an answer for the state failed", err, c), true
				}
				re.value = b
			}
			j.entries = append(j.entries, jentry{tag: tagAnswer, flags: re.flags & flagInline, kind: re.kind, attempts: re.attempts, key: re.key, digest: re.digest, value: re.value})
		case re.question != nil && slices.Contains(ru.pending, re.key):
			ir.Requests[re.key] = re.question
			j.entries = append(j.entries, jentry{tag: tagPending, flags: re.flags & flagChanged, kind: re.kind, attempts: re.attempts, key: re.key, digest: re.digest})
		}
	}
	j.entries = append(j.entries, ru.newMemo...)
	slices.SortFunc(j.entries, func(a, b jentry) int {
		if entryLess(&a, &b) {
			return -1
		}
		return 1
	})
	ru.entries = j.entries
	ru.payload = appendJournal(ru.payload[:0], &j)
	ir.State = ru.payload
	out, err := s.inputRequiredJournal(c, ir, args, req.Round, &j)
	return out, err, true
}

// maxKeyLen is the longest question or memo key.
const maxKeyLen = 256

// ReasonStateTooLarge is the data.reason of the -32603 that ends a
// straight-line call whose answers and memo values no longer fit in a
// requestState (state.WithMaxTokenSize).
const ReasonStateTooLarge = "state_too_large"

// journalTooLarge reports a journal that does not fit in a token: the
// log names the largest entries, the client learns the reason.
func (s *Server) journalTooLarge(c *call, j *journal, err error) *Error {
	es := slices.Clone(j.entries)
	slices.SortFunc(es, func(a, b jentry) int { return len(b.value) - len(a.value) })
	var parts []string
	for i := 0; i < len(es) && i < 3; i++ {
		what := map[byte]string{tagAnswer: "answer", tagPending: "question", tagMemo: "memo"}[es[i].tag]
		parts = append(parts, fmt.Sprintf("%s %q %d bytes", what, es[i].key, len(es[i].value)))
	}
	s.log.Error("mrtr: the call's sealed state is too large; memo a parsed value instead of a long answer, bind model answers, or raise state.WithMaxTokenSize",
		"method", c.method, "target", clip(c.target), "err", errText(err), "largest", strings.Join(parts, ", "))
	return &Error{Code: CodeInternalError, Message: "Internal error: the call's state exceeds the requestState size limit", Data: map[string]string{"reason": ReasonStateTooLarge}}
}

func isInputRequired(r Result) bool {
	ir, ok := r.(*InputRequired)
	return ok && ir != nil
}

// decodeRecorded decodes an answer the journal recorded. It was checked
// when the client sent it and is authenticated since, so only its shape
// is read again.
func decodeRecorded(k kind, raw []byte, contentJSON bool) (any, error) {
	switch k {
	case kindElicitForm, kindElicitURL:
		// encodeAnswer writes {"action":"...","content":{...}}: read it as
		// written.
		if r, ok := readRecordedElicit(raw, contentJSON); ok {
			return r, nil
		}
		return decodeAnswer(k, raw) // any other form: as the client's answers are read
	case kindSampling:
		var r SamplingResult
		err := json.Unmarshal(raw, &r)
		return &r, err
	case kindRoots:
		var r RootsResult
		err := json.Unmarshal(raw, &r)
		return &r, err
	}
	return nil, fmt.Errorf("unknown kind %d", k)
}

// readRecordedElicit reads an elicitation answer in the one form
// encodeAnswer writes; ok is false for any other form. With contentJSON,
// the content is left undecoded, for ContentJSON.
func readRecordedElicit(raw []byte, contentJSON bool) (*ElicitResult, bool) {
	const pre, mid = `{"action":"`, `","content":`
	if !bytes.HasPrefix(raw, []byte(pre)) || raw[len(raw)-1] != '}' {
		return nil, false
	}
	rest := raw[len(pre):]
	q := bytes.IndexByte(rest, '"')
	if q < 0 {
		return nil, false
	}
	a, ok := wire.Interned(raw[len(pre)-1:len(pre)+q+1], actionNames)
	if !ok || !slices.Contains(actionNames, a) {
		return nil, false
	}
	r := &ElicitResult{Action: Action(a)}
	rest = rest[q:]
	switch {
	case len(rest) == 2: // "}
		return r, true
	case !bytes.HasPrefix(rest, []byte(mid)):
		return nil, false
	}
	r.raw = rest[len(mid) : len(rest)-1]
	if contentJSON {
		return r, true // Content stays nil: the asker reads ContentJSON
	}
	m, ok := readFlatContent(r.raw, true)
	if !ok {
		var slow map[string]any // its own variable: m stays off the heap
		if json.Unmarshal(r.raw, &slow) != nil {
			return nil, false
		}
		m = slow
	}
	r.Content = m
	return r, true
}
