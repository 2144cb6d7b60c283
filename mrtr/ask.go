package mrtr

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"time"

	"github.com/mrtrkit/mrtrkit/internal/askhook"
)

// ErrInputRequired is what an ask returns while its question has no
// answer yet. A handler returns it (or an error wrapping it, with %w or
// errors.Join) as it would any error; the Server then answers the call
// with input_required carrying every question asked in this run, and
// calls the handler again from the top when the client retries with the
// answers.
var ErrInputRequired = errors.New("mrtr: input required")

// errReplayDiverged is what an ask returns when this run does not fit
// what earlier runs of the call recorded. The Server refuses the call;
// the log says what diverged.
var errReplayDiverged = errors.New("mrtr: replay diverged from the call's journal")

// An AskOption changes how one question is asked.
type AskOption interface{ applyAsk(*askConfig) }

type askConfig struct {
	bind        []byte
	contentJSON bool // the asker reads an elicitation answer by ContentJSON only
	check       func(*ElicitResult) error
	reword      func(q *ElicitRequest, problem error) *ElicitRequest
	max         int
	model       func(context.Context, *SamplingRequest) (*SamplingResult, error)
}

type askOptionFunc func(*askConfig)

func (f askOptionFunc) applyAsk(c *askConfig) { f(c) }

// The options mrtr keeps for its own layers (typed.Form).
func init() {
	askhook.ContentJSON = AskOption(askOptionFunc(func(c *askConfig) { c.contentJSON = true }))
	askhook.Compile = compileAsk
}

// compiledAsk is options applied once (askhook.Compile). Asked with
// alone, its config is used as it is (ask never writes it), with the
// digest BindTo gives a form question computed ahead; among other
// options, it applies the options it was compiled from in its place.
type compiledAsk struct {
	cfg   askConfig
	bound *[digestLen]byte // the digest of a form question under cfg.bind
	opts  []AskOption
}

func (c *compiledAsk) applyAsk(dst *askConfig) {
	for _, o := range c.opts {
		o.applyAsk(dst)
	}
}

// compileAsk is askhook.Compile.
func compileAsk(opts ...AskOption) AskOption {
	c := &compiledAsk{opts: slices.Clone(opts)}
	for _, o := range opts {
		o.applyAsk(&c.cfg)
	}
	if c.cfg.bind != nil {
		d := questionDigest(&ElicitRequest{}, c.cfg.bind)
		c.bound = &d
	}
	return c
}

// BindTo identifies a question by fingerprint instead of by its full
// contents: an answer is reused on later runs while the fingerprint is
// the same. Use it for large prompts whose digest the handler already
// has; the fingerprint must change whenever the question does.
func BindTo(fingerprint []byte) AskOption {
	return askOptionFunc(func(c *askConfig) { c.bind = fingerprint })
}

// CheckAnswer checks an accepted elicitation answer before the handler
// sees it. When check fails, the question is asked again under the same
// key, reworded by reword (nil keeps it), up to maxInvalid more times;
// after that the ask returns check's error. Declined and cancelled
// answers are not checked. typed.Form uses it; most handlers use a Form.
func CheckAnswer(check func(*ElicitResult) error, reword func(q *ElicitRequest, problem error) *ElicitRequest, maxInvalid int) AskOption {
	return askOptionFunc(func(c *askConfig) { c.check, c.reword, c.max = check, reword, maxInvalid })
}

// AnswerWith answers a sampling question on the server, inline, with the
// given model when the call has no answer for it yet: the answer is
// recorded in the call's journal, so later rounds neither pay for it
// again nor get a different one. package model's Sample uses it.
func AnswerWith(m func(context.Context, *SamplingRequest) (*SamplingResult, error)) AskOption {
	return askOptionFunc(func(c *askConfig) { c.model = m })
}

// Elicit asks the user q under key and returns the answer when this run
// of the handler has one. Otherwise it returns an error matching
// ErrInputRequired, which the handler returns; or -32021 (*Error) at once
// when the client did not declare the elicitation capability q needs, so
// that the handler may go on without asking.
//
// Keys identify questions across runs: give each question its own key
// (Key builds keys in loops). See "Asking in straight-line code" in the
// package documentation for the contract the handler keeps.
func Elicit(ctx context.Context, req *Request, key string, q *ElicitRequest, opts ...AskOption) (*ElicitResult, error) {
	a, err := req.ask(ctx, key, q, opts)
	if err != nil {
		return nil, err
	}
	return a.(*ElicitResult), nil
}

// Sample asks the client's model to complete q under key, as Elicit asks
// the user. With AnswerWith, a model on the server answers instead.
func Sample(ctx context.Context, req *Request, key string, q *SamplingRequest, opts ...AskOption) (*SamplingResult, error) {
	a, err := req.ask(ctx, key, q, opts)
	if err != nil {
		return nil, err
	}
	return a.(*SamplingResult), nil
}

// ListRoots asks the client for its roots under key, as Elicit asks the
// user.
func ListRoots(ctx context.Context, req *Request, key string) (*RootsResult, error) {
	a, err := req.ask(ctx, key, &RootsRequest{}, nil)
	if err != nil {
		return nil, err
	}
	return a.(*RootsResult), nil
}

// Check returns the first of errs that does not match ErrInputRequired,
// else one that does, else nil. Ask several independent questions, then
// Check their errors, to send them to the client in one round:
//
//	name, err1 := askName.Ask(ctx, req)
//	roots, err2 := mrtr.ListRoots(ctx, req, "roots")
//	if err := mrtr.Check(err1, err2); err != nil {
//		return nil, err
//	}
func Check(errs ...error) error {
	var pending error
	for _, err := range errs {
		switch {
		case err == nil:
		case errors.Is(err, ErrInputRequired):
			if pending == nil {
				pending = err
			}
		default:
			return err
		}
	}
	return pending
}

// Key joins a base and parts into a question key, such as "file/3" for
// Key("file", 3). Build keys in loops from stable values (indices of a
// slice, sorted map keys), never from user data or secrets: keys reach the
// client and the audit log.
func Key(base string, parts ...any) string {
	b := []byte(base)
	for _, p := range parts {
		b = append(b, '/')
		switch v := p.(type) {
		case string:
			b = append(b, v...)
		case int:
			b = strconv.AppendInt(b, int64(v), 10)
		default:
			b = fmt.Append(b, v)
		}
	}
	return string(b)
}

// CallID returns an identifier of this call, drawn on its first run and
// the same on every later run of the call: an idempotency key for effects
// after the last question. It is stable only once the call has asked (or
// memoised) something; a call that completes on its first run draws it
// then.
// After the handler has returned it is zero.
func CallID(req *Request) [16]byte {
	ru := req.runner()
	ru.mu.Lock()
	defer ru.mu.Unlock()
	if !ru.owns(req) {
		return [16]byte{}
	}
	return ru.j.callID
}

// CallStart returns when the call's first run began, the same on every
// run: use it instead of time.Now wherever the time decides a question.
// After the handler has returned it is the zero Time.
func CallStart(req *Request) time.Time {
	ru := req.runner()
	ru.mu.Lock()
	defer ru.mu.Unlock()
	if !ru.owns(req) {
		return time.Time{}
	}
	return time.UnixMilli(ru.j.start)
}

// Memo returns the value f computed on an earlier run of this call under
// key, or calls f and records its result in the call's sealed state.
// Compute once with Memo whatever may differ between runs and decides a
// question: the clock, randomness, a read of a file, a database or
// another service. An error from f records nothing and is returned.
//
// f may ask, with the context it is given: it then runs on every round
// until its questions are answered, and once it returns, the answers it
// used leave the state, as later runs return the memoised value without
// calling f. T must survive encoding/json unchanged. A memo is not an
// exactly-once guarantee: a client may present an older state, so effects
// belong after the last question and are keyed by CallID. The default
// codec encrypts the state; under the HMAC codec (state.NewHMAC) the
// client can read it, so memoise nothing secret there.
func Memo[T any](ctx context.Context, req *Request, key string, f func(context.Context) (T, error)) (T, error) {
	var zero T
	r := req.runner()
	fp := typeFingerprint(reflect.TypeFor[T]())
	raw, found, err := r.memoLookup(req, key, fp)
	if err != nil {
		return zero, err
	}
	if found {
		var v T
		if err := json.Unmarshal(raw, &v); err != nil {
			r.divergeLocked(req, "memo_type", fmt.Sprintf("memo %q no longer decodes into %v: %v", key, reflect.TypeFor[T](), err))
			return zero, errReplayDiverged
		}
		return v, nil
	}
	v, err := f(context.WithValue(ctx, memoCtxKey{}, key))
	r.memoDone(req, key)
	if err != nil {
		return zero, err
	}
	b, err := json.Marshal(v)
	if err != nil {
		return zero, fmt.Errorf("mrtr: memo %q: %w", key, err)
	}
	r.memoStore(req, key, fp, b)
	return v, nil
}

// memoCtxKey marks the context a memo's f runs with: asks made with it
// belong to the memo.
type memoCtxKey struct{}

// typeFingerprint identifies a Go type across processes of one build and
// across builds that keep the type's name.
func typeFingerprint(t reflect.Type) [digestLen]byte {
	h := sha256.New()
	h.Write([]byte(t.PkgPath()))
	h.Write([]byte{0})
	h.Write([]byte(t.String()))
	var d [digestLen]byte
	copy(d[:], h.Sum(nil))
	return d
}

// questionDigest identifies a question by what it asks: its kind and its
// fields, each length-prefixed, hashed with SHA-256 and cut to 16 bytes.
// bind, when set, stands for the question's contents.
func questionDigest(q InputRequest, bind []byte) [digestLen]byte {
	var buf [512]byte // most questions fit: no allocation
	b := append(buf[:0], byte(q.inputKind()))
	switch v := q.(type) {
	case *ElicitRequest:
		if bind != nil {
			b = appendStr(b, "bind")
			b = appendField(b, bind)
			break
		}
		b = appendStr(b, v.Mode)
		b = appendStr(b, v.Message)
		b = appendStr(b, v.URL)
		if rs := v.RequestedSchema; rs != nil {
			b = appendStr(b, rs.Schema)
			b = appendStr(b, rs.Type)
			var nb [16]string
			names := nb[:0]
			for k := range rs.Properties {
				names = append(names, k)
			}
			slices.Sort(names)
			b = appendNum(b, uint64(len(names)))
			for _, k := range names {
				b = appendStr(b, k)
				b = appendField(b, rs.Properties[k])
			}
			b = appendNum(b, uint64(len(rs.Required)))
			for _, r := range rs.Required {
				b = appendStr(b, r)
			}
		}
	case *SamplingRequest:
		if bind != nil {
			b = appendStr(b, "bind")
			b = appendField(b, bind)
			break
		}
		b = appendNum(b, uint64(len(v.Messages)))
		for _, m := range v.Messages {
			b = appendStr(b, string(m.Role))
			b = appendNum(b, uint64(len(m.Content)))
			for i := range m.Content {
				c := &m.Content[i]
				b = appendStr(b, c.Type)
				b = appendStr(b, c.Text)
				b = appendStr(b, c.Data)
				b = appendStr(b, c.MIMEType)
				b = appendStr(b, c.ID)
				b = appendStr(b, c.Name)
				b = appendField(b, c.Input)
				b = appendStr(b, c.ToolUseID)
				b = appendNum(b, uint64(len(c.Content)))
				for _, r := range c.Content {
					b = appendField(b, r)
				}
				b = appendField(b, c.StructuredContent)
				b = strconv.AppendBool(b, c.IsError)
				b = appendField(b, jsonOrNil(c.Annotations))
				b = appendField(b, jsonOrNil(c.Meta))
			}
			b = appendField(b, jsonOrNil(m.Meta))
		}
		b = appendStr(b, v.SystemPrompt)
		b = appendStr(b, v.IncludeContext)
		if v.Temperature != nil {
			b = strconv.AppendFloat(append(b, 't'), *v.Temperature, 'g', -1, 64)
		}
		b = appendNum(b, uint64(v.MaxTokens))
		b = appendNum(b, uint64(len(v.StopSequences)))
		for _, s := range v.StopSequences {
			b = appendStr(b, s)
		}
		b = appendField(b, jsonOrNil(v.ModelPreferences))
		b = appendField(b, jsonOrNil(v.Metadata))
		b = appendField(b, jsonOrNil(v.Tools))
		b = appendField(b, jsonOrNil(v.ToolChoice))
	}
	sum := sha256.Sum256(b)
	return [digestLen]byte(sum[:digestLen])
}

// appendNum, appendStr and appendField write one part of a question's
// canonical encoding: a number, or a length-prefixed string or bytes.
func appendNum(b []byte, v uint64) []byte { return binary.AppendUvarint(b, v) }

func appendStr(b []byte, v string) []byte { return append(appendNum(b, uint64(len(v))), v...) }

func appendField(b []byte, v []byte) []byte { return append(appendNum(b, uint64(len(v))), v...) }

// jsonOrNil encodes the rarer parts of a question for its digest; nil
// values cost nothing.
func jsonOrNil(v any) []byte {
	switch x := v.(type) {
	case nil:
		return nil
	case *Annotations:
		if x == nil {
			return nil
		}
	case Object:
		if x == nil {
			return nil
		}
	case *ModelPreferences:
		if x == nil {
			return nil
		}
	case []Tool:
		if x == nil {
			return nil
		}
	case *ToolChoice:
		if x == nil {
			return nil
		}
	}
	b, _ := json.Marshal(v)
	return b
}
