package mrtr

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
)

// run records what one run of a straight-line handler asked and learned.
// It is made on the first ask, memo, CallID or CallStart, so a handler
// that does none of these pays nothing for it.
type run struct {
	mu  sync.Mutex
	req *Request
	j   journal // header, and the entries of earlier runs

	prev    map[string]*jentry // answers and pending questions of earlier runs, by key
	memos   map[string]*jentry // memo values of earlier runs, by key
	reached map[string]*reach  // what this run asked, by key
	newMemo map[string]*jentry // memo values kept for the next round
	pending []string           // keys asked and not answered, in ask order
	active  []string           // memos whose f is running

	diverged string // the reason a run does not fit the journal
	detail   string // what diverged, for the log
}

// reach is one question as this run asked it.
type reach struct {
	kind     kind
	digest   [digestLen]byte
	flags    byte
	attempts uint8
	answer   any    // the decoded answer; nil while pending
	value    []byte // the answer as JSON, for the journal
	question InputRequest
	memo     string // the memo whose f asked it, if any
	consumed bool   // its memo completed: it leaves the journal
}

// runner returns the request's run, made on first use.
func (r *Request) runner() *run {
	if r.run != nil {
		return r.run
	}
	ru := &run{req: r, reached: map[string]*reach{}}
	if r.journal != nil {
		ru.j.callID, ru.j.start = r.journal.callID, r.journal.start
		for i := range r.journal.entries {
			e := &r.journal.entries[i]
			if e.tag == tagMemo {
				if ru.memos == nil {
					ru.memos = map[string]*jentry{}
				}
				ru.memos[e.key] = e
				continue
			}
			if ru.prev == nil {
				ru.prev = map[string]*jentry{}
			}
			ru.prev[e.key] = e
		}
	} else {
		_, _ = rand.Read(ru.j.callID[:])
		ru.j.start = time.Now().UnixMilli()
	}
	r.run = ru
	return ru
}

// diverge records why this run does not fit the journal; the first
// reason wins. The caller holds r.mu or owns r.
func (ru *run) diverge(reason, detail string) {
	if ru.diverged == "" {
		ru.diverged, ru.detail = reason, detail
	}
}

func (ru *run) memoOf(ctx context.Context) string {
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
	var cfg askConfig
	for _, o := range opts {
		o.applyAsk(&cfg)
	}
	if key == "" || len(key) > maxKeyLen || strings.HasPrefix(key, reservedKeyPrefix) {
		return nil, fmt.Errorf("mrtr: question key %q: keys are 1 to %d bytes and do not begin with %q", clip(key), maxKeyLen, reservedKeyPrefix)
	}
	if err := validateInputRequest(q); err != nil {
		return nil, fmt.Errorf("mrtr: question %q: %w", key, err)
	}
	k := q.inputKind()
	d := questionDigest(q, cfg.bind)
	ru := r.runner()
	ru.mu.Lock()
	defer ru.mu.Unlock()
	if ru.diverged != "" {
		return nil, errReplayDiverged
	}
	if got := ru.reached[key]; got != nil {
		if got.kind != k || got.digest != d {
			ru.diverge("duplicate_key", fmt.Sprintf("%q asked twice in one run with different questions; give each its own key, e.g. mrtr.Key(%q, i)", key, key))
			return nil, errReplayDiverged
		}
		if got.answer == nil {
			return nil, ErrInputRequired
		}
		return got.answer, nil
	}
	re := &reach{kind: k, digest: d, question: q, memo: ru.memoOf(ctx)}
	ru.reached[key] = re
	prev := ru.prev[key]
	if prev != nil && prev.kind != k {
		ru.diverge("diverged", fmt.Sprintf("%q was asked as %s and is now asked as %s", key, prev.kind, k))
		return nil, errReplayDiverged
	}
	switch {
	case prev != nil && prev.tag == tagAnswer && prev.digest == d:
		a, err := decodeAnswer(k, prev.value)
		if err != nil {
			ru.diverge("diverged", fmt.Sprintf("the recorded answer to %q no longer decodes: %v", key, err))
			return nil, errReplayDiverged
		}
		re.answer, re.value, re.flags, re.attempts = a, prev.value, prev.flags&flagInline, prev.attempts
		return a, nil
	case prev != nil && prev.tag == tagPending:
		re.attempts = prev.attempts
		a, answered := r.Responses.get(key)
		if prev.digest != d {
			if prev.flags&flagChanged != 0 {
				ru.diverge("question_unstable", fmt.Sprintf("question %q changed on two rounds in a row; build questions from arguments, answers and memo values only", key))
				return nil, errReplayDiverged
			}
			re.flags = flagChanged // asked again: the user answered another question
			break
		}
		re.flags = prev.flags & flagChanged
		if !answered {
			break
		}
		return ru.accept(re, key, a, &cfg)
	case prev != nil: // answered, but the question changed since: ask again
		re.flags = flagChanged
	}
	// No usable answer: a server model answers inline, or the client is asked.
	if cfg.model != nil {
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
			b, err := json.Marshal(res)
			if err != nil {
				return nil, err
			}
			re.answer, re.value, re.flags = res, b, re.flags|flagInline
			return res, nil
		}
	}
client:
	if err := gateCapabilities(map[string]InputRequest{key: q}, r.Meta.ClientCapabilities); err != nil {
		re.question = nil // not asked: the handler may go on without it
		delete(ru.reached, key)
		return nil, err
	}
	ru.pending = append(ru.pending, key)
	return nil, ErrInputRequired
}

// accept takes the client's answer to a pending question, checking it
// first when the ask has a check. The caller holds ru.mu.
func (ru *run) accept(re *reach, key string, a any, cfg *askConfig) (any, error) {
	if er, ok := a.(*ElicitResult); ok && cfg.check != nil && er.Accepted() {
		if problem := cfg.check(er); problem != nil {
			if int(re.attempts) >= cfg.max {
				return nil, problem
			}
			re.attempts++
			if cfg.reword != nil {
				re.question = cfg.reword(re.question.(*ElicitRequest), problem)
			}
			ru.pending = append(ru.pending, key)
			return nil, ErrInputRequired
		}
	}
	b, err := encodeAnswer(a)
	if err != nil {
		return nil, err
	}
	re.answer, re.value = a, b
	return a, nil
}

// encodeAnswer renders a decoded answer for the journal.
func encodeAnswer(a any) ([]byte, error) {
	if er, ok := a.(*ElicitResult); ok {
		b := append([]byte(`{"action":`), appendString(nil, string(er.Action))...)
		if er.raw != nil {
			b = append(b, `,"content":`...)
			b = append(b, er.raw...)
		}
		return append(b, '}'), nil
	}
	return json.Marshal(a)
}

func (ru *run) memoLookup(key string, fp [digestLen]byte) ([]byte, bool, error) {
	if key == "" || len(key) > maxKeyLen || strings.HasPrefix(key, reservedKeyPrefix) {
		return nil, false, fmt.Errorf("mrtr: memo key %q: keys are 1 to %d bytes and do not begin with %q", clip(key), maxKeyLen, reservedKeyPrefix)
	}
	ru.mu.Lock()
	defer ru.mu.Unlock()
	if ru.diverged != "" {
		return nil, false, errReplayDiverged
	}
	if e := ru.newMemo[key]; e != nil {
		if e.digest != fp {
			ru.diverge("diverged", fmt.Sprintf("memo %q computed twice in one run with different types", key))
			return nil, false, errReplayDiverged
		}
		return e.value, true, nil
	}
	if e := ru.memos[key]; e != nil {
		if e.digest != fp {
			ru.diverge("diverged", fmt.Sprintf("memo %q was recorded with another type", key))
			return nil, false, errReplayDiverged
		}
		ru.keepMemo(e)
		return e.value, true, nil
	}
	ru.active = append(ru.active, key)
	return nil, false, nil
}

func (ru *run) keepMemo(e *jentry) {
	if ru.newMemo == nil {
		ru.newMemo = map[string]*jentry{}
	}
	ru.newMemo[e.key] = e
}

func (ru *run) memoStore(key string, fp [digestLen]byte, value []byte) {
	ru.mu.Lock()
	defer ru.mu.Unlock()
	ru.keepMemo(&jentry{tag: tagMemo, key: key, digest: fp, value: value})
	if i := slices.Index(ru.active, key); i >= 0 {
		ru.active = slices.Delete(ru.active, i, i+1)
	}
	for _, re := range ru.reached {
		if re.memo == key && re.answer != nil {
			re.consumed = true
		}
	}
}

// orphans returns, sorted, the keys earlier runs recorded an answer for
// that this run did not reach, and the keys answered on this retry that
// it did not ask: the path through the handler changed.
func (ru *run) orphans() []string {
	var out []string
	for k, e := range ru.prev {
		if ru.reached[k] != nil {
			continue
		}
		if e.tag == tagAnswer {
			out = append(out, k)
		} else if _, ok := ru.req.Responses.get(k); ok {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// settleRun turns the end of a straight-line run into the call's answer:
// a complete result, an input-required round carrying the journal, or a
// refusal when the run does not fit the call.
func (s *Server) settleRun(c *call, req *Request, res Result, herr error, args json.RawMessage) (json.RawMessage, *Error, bool) {
	ru := req.run
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
	// Another round: every pending question, and the journal.
	ir := &InputRequired{Requests: make(map[string]InputRequest, len(ru.pending))}
	j := journal{callID: ru.j.callID, start: ru.j.start}
	for k, re := range ru.reached {
		switch {
		case re.consumed:
		case re.answer != nil:
			j.entries = append(j.entries, jentry{tag: tagAnswer, flags: re.flags & flagInline, kind: re.kind, attempts: re.attempts, key: k, digest: re.digest, value: re.value})
		case re.question != nil && slices.Contains(ru.pending, k):
			ir.Requests[k] = re.question
			j.entries = append(j.entries, jentry{tag: tagPending, flags: re.flags & flagChanged, kind: re.kind, attempts: re.attempts, key: k, digest: re.digest})
		}
	}
	for _, e := range ru.newMemo {
		j.entries = append(j.entries, *e)
	}
	slices.SortFunc(j.entries, func(a, b jentry) int {
		if entryLess(&a, &b) {
			return -1
		}
		return 1
	})
	ir.State = appendJournal(nil, &j)
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
