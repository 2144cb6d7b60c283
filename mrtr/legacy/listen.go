package legacy

import (
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/mrtrkit/mrtrkit/mrtr"
)

// Listen serves the session's own stream (the GET stream of Streamable
// HTTP; stdout on stdio) until ctx ends or the session is closed: the
// list changes the server advertises and the updates of the resources
// the session subscribed to, as the initialize era shapes them. It runs
// an in-process subscriptions/listen on the Server, restarted whenever the
// subscriptions change. A session has one stream at a time: a new Listen
// ends the previous one.
func (s *Session) Listen(ctx context.Context, out Sender) error {
	return s.ListenOpen(ctx, out, nil)
}

// StreamRefusedError is what ListenOpen returns when the Server refuses
// the session stream's first listen (its listener limits, say), before
// the stream was opened. Err is the Server's refusal; its Limit says
// whose limit it was.
type StreamRefusedError struct {
	Err *mrtr.Error
}

func (e *StreamRefusedError) Error() string {
	return "legacy: the session stream was refused: " + e.Err.Message
}

// ListenOpen is Listen for a host that opens the stream only once it is
// sure to serve it: open, when not nil, is called once the first
// in-process listen is registered (at once when the session has nothing
// to listen to), before anything is sent to out, and ListenOpen returns
// at once when it reports false. When the Server refuses that first
// listen, open is not called and ListenOpen returns a
// *StreamRefusedError, so that the host can answer the request with the
// refusal (Streamable HTTP: 429 or 503) rather than with a stream that
// ends at once.
func (s *Session) ListenOpen(ctx context.Context, out Sender, open func() bool) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	s.x.mu.Lock()
	if s.x.closed {
		s.x.mu.Unlock()
		return ErrUnknownSession
	}
	if s.x.listen != nil {
		s.x.listen() // the newest stream wins
	}
	s.x.listen, s.x.stream = cancel, out
	s.x.listenGen++
	gen := s.x.listenGen
	s.x.mu.Unlock()
	// With a shared bus, the subscriptions may have been made on another
	// replica: read them, and read them again now and then in case an
	// event about them was missed.
	var refresh <-chan time.Time
	if s.e.rep != nil {
		s.refreshOrWarn(ctx)
		t := time.NewTicker(listenRefresh)
		defer t.Stop()
		refresh = t.C
	}
	defer func() {
		s.x.mu.Lock()
		// Only the stream that is still the session's clears the slot.
		if s.x.listenGen == gen {
			s.x.listen, s.x.stream = nil, nil
		}
		s.x.mu.Unlock()
	}()

	// Each change of the subscriptions starts a new in-process listen; the
	// old one stops only once the new one listens, so that nothing posted
	// in between is lost (a notification may then come twice, which costs
	// a client a refetch at most).
	var stopPrev context.CancelFunc
	var prevDone, prevSettled chan struct{}
	defer func() {
		if prevSettled != nil {
			close(prevSettled)
		}
		if stopPrev != nil {
			stopPrev()
			<-prevDone
		}
	}()
	for round := 0; ctx.Err() == nil; round++ {
		s.x.mu.Lock()
		changed, settled := make(chan struct{}), make(chan struct{})
		s.x.changed, s.x.settled = changed, settled
		subs := make([]string, 0, len(s.x.subs))
		for u := range s.x.subs {
			subs = append(subs, u)
		}
		s.x.mu.Unlock()
		slices.Sort(subs)

		lctx, stop := context.WithCancel(ctx)
		ready, done := make(chan struct{}), make(chan struct{})
		var refused *mrtr.Error // set before done closes
		go func() {
			defer close(done)
			refused = s.listenOnce(lctx, subs, round, out, ready)
		}()
		select {
		case <-ready:
		case <-done:
		case <-ctx.Done():
		}
		if round == 0 && open != nil {
			select {
			case <-ready:
				if !open() {
					stop()
					<-done
					return nil
				}
			default:
				stop()
				<-done
				if refused != nil {
					return &StreamRefusedError{Err: refused}
				}
				return nil
			}
		}
		if stopPrev != nil {
			stopPrev()
			<-prevDone
		}
		if prevSettled != nil {
			close(prevSettled) // the change that asked for this listener is in force
		}
		stopPrev, prevDone, prevSettled = stop, done, settled
	wait:
		for {
			select {
			case <-changed:
				break wait // the subscriptions changed: listen again with the new set
			case <-done:
				// The server closed the listen (it is shutting down): so
				// does the stream.
				return nil
			case <-ctx.Done():
				return nil
			case <-refresh:
				s.refreshOrWarn(ctx)
			}
		}
	}
	return nil
}

// listenOnce runs one in-process subscriptions/listen for the session's
// filter until ctx ends or the server closes it, closing ready once it
// listens. It returns the Server's refusal when the listen was refused
// (and then ready stays open).
func (s *Session) listenOnce(ctx context.Context, subs []string, round int, out Sender, ready chan struct{}) *mrtr.Error {
	var once sync.Once
	listening := func() { once.Do(func() { close(ready) }) }
	caps := s.e.srv.Capabilities()
	filter := map[string]any{}
	if caps.Tools != nil && caps.Tools.ListChanged {
		filter["toolsListChanged"] = true
	}
	if caps.Prompts != nil && caps.Prompts.ListChanged {
		filter["promptsListChanged"] = true
	}
	if caps.Resources != nil && caps.Resources.ListChanged {
		filter["resourcesListChanged"] = true
	}
	if len(subs) > 0 && caps.Resources != nil && caps.Resources.Subscribe {
		filter["resourceSubscriptions"] = subs
	}
	if len(filter) == 0 {
		listening()
		<-ctx.Done() // nothing to listen to: the stream stays open, idle
		return nil
	}
	f, _ := json.Marshal(filter)
	b := []byte(`{"jsonrpc":"2.0","id":"session-stream-` + strconv.Itoa(round) + `","method":"subscriptions/listen","params":{"notifications":`)
	b = append(b, f...)
	b = append(b, `,"_meta":`...)
	b, _ = s.appendMeta(b, nil)
	b = append(b, "}}"...)
	m, _, perr := mrtr.ParseMessage(b)
	if perr != nil {
		s.e.log.Error("legacy: the session stream's listen request does not parse", "err", perr)
		listening()
		<-ctx.Done()
		return nil
	}
	resp := s.e.srv.Handle(ctx, &mrtr.Inbound{Message: m, Principal: s.principal, Token: s.token, Headers: s.headers, Peer: s.peer, Emit: func(n []byte) error {
		if legacy := legacyNotification(n); legacy != nil {
			return out.Send(legacy)
		}
		listening() // the acknowledgement: the listener is registered
		return nil
	}})
	if resp != nil && resp.Error != nil && ctx.Err() == nil {
		// Refused (the listener limits): the stream ends, and says why in
		// the log rather than nowhere.
		s.e.log.Warn("legacy: the session stream's listen was refused", "code", int(resp.Error.Code), "message", resp.Error.Message)
		return resp.Error
	}
	listening() // ended without a refusal (the server closed it): the loop sees done
	return nil
}
