package mrtr

import (
	"context"
	"errors"
	"sync"
	"time"
)

// ErrTaskNotFound is what a TaskStore answers for an id it does not hold
// (never stored, deleted, or expired).
var ErrTaskNotFound = errors.New("mrtr: task not found")

// ErrTaskExists is what TaskStore.Create answers for an id already held.
var ErrTaskExists = errors.New("mrtr: task already exists")

// TaskStore keeps task records for the Tasks extension (WithTasks). A
// record is opaque bytes: the Server seals it under its own purpose
// before storing it, so a store holds only ciphertext. Create must be
// strongly consistent: once it returns, Get on any replica sharing the
// store finds the record (the Server answers CreateTaskResult only then).
// Implementations must be safe for concurrent use.
type TaskStore interface {
	// Create stores a new record that expires after ttl; ErrTaskExists
	// if id is held.
	Create(ctx context.Context, id string, record []byte, ttl time.Duration) error
	// Get returns the record under id; ErrTaskNotFound if there is none.
	Get(ctx context.Context, id string) ([]byte, error)
	// Put replaces the record under id, keeping it until ttl from now;
	// ErrTaskNotFound if there is none.
	Put(ctx context.Context, id string, record []byte, ttl time.Duration) error
}

// MemoryTaskStore is the in-process TaskStore, the default of WithTasks.
// It serves one replica: tasks created on it are not seen by others.
// Expired records are dropped when read and by a sweep on writes.
type MemoryTaskStore struct {
	mu      sync.Mutex
	m       map[string]memTask
	writes  int
	nowFunc func() time.Time
}

type memTask struct {
	b   []byte
	exp time.Time
}

// NewMemoryTaskStore returns an empty in-process store.
func NewMemoryTaskStore() *MemoryTaskStore {
	return &MemoryTaskStore{m: make(map[string]memTask), nowFunc: time.Now}
}

// Create implements TaskStore.
func (s *MemoryTaskStore) Create(_ context.Context, id string, record []byte, ttl time.Duration) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.nowFunc()
	if t, ok := s.m[id]; ok && now.Before(t.exp) {
		return ErrTaskExists
	}
	s.m[id] = memTask{b: record, exp: now.Add(ttl)}
	s.sweepLocked(now)
	return nil
}

// Get implements TaskStore.
func (s *MemoryTaskStore) Get(_ context.Context, id string) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.m[id]
	if !ok {
		return nil, ErrTaskNotFound
	}
	if !s.nowFunc().Before(t.exp) {
		delete(s.m, id)
		return nil, ErrTaskNotFound
	}
	return t.b, nil
}

// Put implements TaskStore.
func (s *MemoryTaskStore) Put(_ context.Context, id string, record []byte, ttl time.Duration) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.nowFunc()
	t, ok := s.m[id]
	if !ok || !now.Before(t.exp) {
		delete(s.m, id)
		return ErrTaskNotFound
	}
	s.m[id] = memTask{b: record, exp: now.Add(ttl)}
	s.sweepLocked(now)
	return nil
}

// Len returns how many records the store holds, expired ones included
// until they are swept.
func (s *MemoryTaskStore) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.m)
}

// sweepLocked drops expired records every so many writes, so that the
// store's memory follows the live tasks.
func (s *MemoryTaskStore) sweepLocked(now time.Time) {
	s.writes++
	if s.writes < 256 {
		return
	}
	s.writes = 0
	for id, t := range s.m {
		if !now.Before(t.exp) {
			delete(s.m, id)
		}
	}
}
