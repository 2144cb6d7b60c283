package mrtr

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/mrtrkit/mrtrkit/internal/wire"
)

// SubscriptionFilter is the params.notifications of subscriptions/listen:
// the notification types a listener opts into. Everything is opt-in.
type SubscriptionFilter struct {
	// ToolsListChanged asks for notifications/tools/list_changed
	// (toolsListChanged).
	ToolsListChanged bool `json:"toolsListChanged,omitempty"`
	// PromptsListChanged asks for notifications/prompts/list_changed
	// (promptsListChanged).
	PromptsListChanged bool `json:"promptsListChanged,omitempty"`
	// ResourcesListChanged asks for notifications/resources/list_changed
	// (resourcesListChanged).
	ResourcesListChanged bool `json:"resourcesListChanged,omitempty"`
	// ResourceSubscriptions are the URIs of the resources whose
	// notifications/resources/updated the listener wants
	// (resourceSubscriptions); at most maxResourceSubscriptions.
	ResourceSubscriptions []string `json:"resourceSubscriptions,omitempty"`
}

// Notification methods of listen streams.
const (
	notifyAcknowledged         = "notifications/subscriptions/acknowledged"
	notifyToolsListChanged     = "notifications/tools/list_changed"
	notifyPromptsListChanged   = "notifications/prompts/list_changed"
	notifyResourcesListChanged = "notifications/resources/list_changed"
	notifyResourceUpdated      = "notifications/resources/updated"
)

// maxResourceSubscriptions bounds the resources one listen request may name.
const maxResourceSubscriptions = wire.MaxResourceSubscriptions

// NotifyResourceUpdated tells every listener subscribed to uri that the
// resource changed (notifications/resources/updated). Any caller may
// subscribe to any resource the server has, so a server whose resources
// are private to their owners should not advertise resources.subscribe, or
// should keep such URIs unguessable.
func (s *Server) NotifyResourceUpdated(uri string) { s.post(0, uri) }

// NotifyListChanged tells listeners that the server's tools, prompts or
// resources lists changed for a reason the registries do not see (for
// example a list that depends on data). Registry changes notify by
// themselves.
func (s *Server) NotifyListChanged(tools, prompts, resources bool) {
	var bits uint8
	if tools {
		bits |= changeTools
	}
	if prompts {
		bits |= changePrompts
	}
	if resources {
		bits |= changeResources
	}
	if bits != 0 {
		s.post(bits, "")
	}
}

// Close ends every open subscriptions/listen stream gracefully: each gets
// its final result, and new listen requests end at once. Other requests
// are not affected. With WithShare, the Server stops listening to and
// publishing on the shared bus. With WithTasks, the task runs in progress
// on this replica stop without an outcome, as if the replica had stopped:
// another replica takes each over once its lease lapses.
func (s *Server) Close() error {
	s.hub.closeOnce.Do(func() { close(s.closedChan()) })
	if s.tasks != nil {
		s.tasks.close()
	}
	s.closeShare()
	return nil
}

func (s *Server) closedChan() chan struct{} {
	s.hub.mu.Lock()
	defer s.hub.mu.Unlock()
	if s.hub.closed == nil {
		s.hub.closed = make(chan struct{})
	}
	return s.hub.closed
}

// listen serves subscriptions/listen: an acknowledgement naming the
// honoured subset of the filter, then the notifications asked for, each
// tagged with the listen request's id, until the client goes away or the
// server closes, when the listen request gets its final result.
func (s *Server) listen(ctx context.Context, c *call) (json.RawMessage, *Error) {
	var f SubscriptionFilter
	if n := c.p.Notifications; isAbsent(n) || n[0] != '{' || json.Unmarshal(n, &f) != nil {
		return nil, InvalidParamsError("subscriptions/listen needs params.notifications, a subscription filter object")
	}
	if c.in.Emit == nil {
		return nil, InvalidParamsError("subscriptions/listen needs a transport that can stream notifications")
	}
	caps := s.advertised()
	var honoured SubscriptionFilter
	l := &listener{wake: make(chan struct{}, 1)}
	if f.ToolsListChanged && caps.Tools != nil && caps.Tools.ListChanged {
		honoured.ToolsListChanged, l.want = true, l.want|changeTools
	}
	if f.PromptsListChanged && caps.Prompts != nil && caps.Prompts.ListChanged {
		honoured.PromptsListChanged, l.want = true, l.want|changePrompts
	}
	if f.ResourcesListChanged && caps.Resources != nil && caps.Resources.ListChanged {
		honoured.ResourcesListChanged, l.want = true, l.want|changeResources
	}
	if len(f.ResourceSubscriptions) > maxResourceSubscriptions {
		return nil, InvalidParamsError(fmt.Sprintf("subscriptions/listen names more than %d resources", maxResourceSubscriptions))
	}
	if len(f.ResourceSubscriptions) > 0 && caps.Resources != nil && caps.Resources.Subscribe {
		// Only resources the server has (by URI or template) are honoured;
		// the acknowledgement says which.
		l.uris = make(map[string]bool, len(f.ResourceSubscriptions))
		for _, u := range f.ResourceSubscriptions {
			if ep := s.findResource(c.in, u); ep.entry != nil && !l.uris[u] {
				l.uris[u] = true
				honoured.ResourceSubscriptions = append(honoured.ResourceSubscriptions, u)
			}
		}
	}
	lctx, stopExt := context.WithCancel(ctx)
	defer stopExt()
	extHonoured, extChans, xerr := s.openListenFilters(lctx, c, c.p.Notifications)
	if xerr != nil {
		return nil, xerr
	}
	extNotes := fanIn(lctx, extChans)
	c.stage = StageListenLimit
	release, lerr := s.limits.listen(limitKey(c.in))
	if lerr != nil {
		return nil, lerr
	}
	defer release()
	c.stage = StageNone
	id := c.in.Message.ID.raw
	meta := map[string]json.RawMessage{wire.MetaSubscriptionID: id}
	s.hub.add(l)
	defer s.hub.remove(l)
	var ackFilter any = honoured
	if len(extHonoured) > 0 {
		m := map[string]any{}
		if b, err := json.Marshal(honoured); err == nil {
			_ = json.Unmarshal(b, &m)
		}
		for k, v := range extHonoured {
			m[k] = v
		}
		ackFilter = m
	}
	ack, err := encodeNotification(notifyAcknowledged, struct {
		Meta          map[string]json.RawMessage `json:"_meta"`
		Notifications any                        `json:"notifications"`
	}{meta, ackFilter})
	if err != nil {
		return nil, s.internal("encoding a listen acknowledgement failed", err, c)
	}
	if c.in.Emit(ack) != nil {
		return nil, internalError()
	}
	tagged := struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}{meta}
	closed := s.closedChan()
	var expired <-chan time.Time
	if d := s.limits.listenLifetime; d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		expired = t.C
	}
	for {
		select {
		case <-ctx.Done():
			return nil, internalError() // the client went away; nothing is written
		case <-closed:
			return s.render(wire.ResultComplete, struct{}{}, Object{wire.MetaSubscriptionID: id}, nil)
		case <-expired:
			return s.render(wire.ResultComplete, struct{}{}, Object{wire.MetaSubscriptionID: id}, nil)
		case n := <-extNotes:
			b, err := tagNotification(n, meta)
			if err != nil {
				s.log.Error("mrtr: an extension's listen notification does not encode", "method", clip(n.Method), "err", errText(err))
				continue
			}
			if c.in.Emit(b) != nil {
				return nil, internalError()
			}
			continue
		case <-l.wake:
		}
		bits, uris := l.take()
		var out [][]byte
		for _, b := range []struct {
			bit    uint8
			method string
		}{{changeTools, notifyToolsListChanged}, {changePrompts, notifyPromptsListChanged}, {changeResources, notifyResourcesListChanged}} {
			if bits&b.bit != 0 {
				n, _ := encodeNotification(b.method, tagged)
				out = append(out, n)
			}
		}
		for _, u := range uris {
			n, _ := encodeNotification(notifyResourceUpdated, struct {
				Meta map[string]json.RawMessage `json:"_meta"`
				URI  string                     `json:"uri"`
			}{meta, u})
			out = append(out, n)
		}
		for _, n := range out {
			if c.in.Emit(n) != nil {
				return nil, internalError()
			}
		}
	}
}

// fanIn merges the notification channels of a listener's extension
// filters into one, until ctx ends; nil when there are none.
func fanIn(ctx context.Context, chans []<-chan Notification) <-chan Notification {
	switch len(chans) {
	case 0:
		return nil
	case 1:
		return chans[0]
	}
	out := make(chan Notification)
	for _, ch := range chans {
		go func() {
			for {
				select {
				case <-ctx.Done():
					return
				case n, ok := <-ch:
					if !ok {
						return
					}
					select {
					case out <- n:
					case <-ctx.Done():
						return
					}
				}
			}
		}()
	}
	return out
}

// tagNotification encodes an extension's notification with the listen
// request's subscription id in its _meta.
func tagNotification(n Notification, meta map[string]json.RawMessage) ([]byte, error) {
	b, err := json.Marshal(n.Params)
	if err != nil {
		return nil, err
	}
	var p map[string]json.RawMessage
	if err := json.Unmarshal(b, &p); err != nil {
		return nil, fmt.Errorf("params are not an object: %w", err)
	}
	if p == nil {
		p = map[string]json.RawMessage{}
	}
	m, _ := json.Marshal(meta)
	p["_meta"] = m
	return encodeNotification(n.Method, p)
}
