package mrtr

import "sync"

// change bits a listener can be waiting on.
const (
	changeTools uint8 = 1 << iota
	changePrompts
	changeResources
)

// listener is one open subscriptions/listen stream. Pending changes are
// coalesced: two tools changes before the stream catches up are one
// notification, which is all a client needs to refetch the list.
type listener struct {
	want    uint8
	uris    map[string]bool
	mu      sync.Mutex
	pending uint8
	updated []string
	wake    chan struct{}
}

func (l *listener) post(bits uint8, uri string) {
	l.mu.Lock()
	switch {
	case uri != "":
		if !l.uris[uri] {
			l.mu.Unlock()
			return
		}
		for _, u := range l.updated {
			if u == uri {
				l.mu.Unlock()
				return
			}
		}
		l.updated = append(l.updated, uri)
	case l.want&bits == 0:
		l.mu.Unlock()
		return
	default:
		l.pending |= bits & l.want
	}
	l.mu.Unlock()
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

func (l *listener) take() (uint8, []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	bits, uris := l.pending, l.updated
	l.pending, l.updated = 0, nil
	return bits, uris
}

// hub fans changes out to open listeners.
type hub struct {
	mu        sync.Mutex
	listeners map[*listener]struct{}
	closed    chan struct{}
	closeOnce sync.Once
}

func (h *hub) add(l *listener) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.listeners == nil {
		h.listeners = map[*listener]struct{}{}
	}
	h.listeners[l] = struct{}{}
}

func (h *hub) remove(l *listener) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.listeners, l)
}

func (h *hub) post(bits uint8, uri string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for l := range h.listeners {
		l.post(bits, uri)
	}
}
