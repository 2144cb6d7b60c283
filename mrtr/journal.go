package mrtr

import (
	"bytes"
	"encoding/binary"
	"errors"
	"slices"
	"unsafe"

	"github.com/mrtrkit/mrtrkit/state"
)

// This file is the journal of a straight-line handler: what its earlier
// runs learned (answers, memo values, the questions still open), carried
// in the sealed requestState from round to round. The journal is inside
// the token's ciphertext (or MAC), so it inherits every binding of the
// token; within it, each answer is bound to the digest of the question it
// answers and each memo value to its Go type.

// journalKey is the reserved asked key that marks a state whose payload
// is a journal rather than a raw handler's State. Keys beginning with
// "mrtr." are reserved: a handler cannot ask under them.
const journalKey = "mrtr.journal"

// reservedKeyPrefix begins every key the framework reserves.
const reservedKeyPrefix = "mrtr."

// journalVersion is the first byte of an encoded journal.
const journalVersion = 1

// The tags of journal entries, in encoding order.
const (
	tagAnswer  byte = 1 // an answered question (or a server model's answer)
	tagPending byte = 2 // a question the client has not answered yet
	tagMemo    byte = 3 // a value Memo computed
)

// Entry flags.
const (
	flagInline  byte = 1 << 0 // answered by a server-side model, not the client
	flagChanged byte = 1 << 1 // asked again because its question changed
)

// digestLen is the length of a question digest or memo type fingerprint.
const digestLen = 16

// jentry is one journal jentry.
type jentry struct {
	tag      byte
	flags    byte
	kind     kind // 0 for memos
	attempts uint8
	key      string
	digest   [digestLen]byte
	value    []byte // the answer or memo value as JSON; nil when pending
}

// journal is the decoded journal.
type journal struct {
	callID  [16]byte
	start   int64 // Unix milliseconds of round 0
	entries []jentry
}

// maxJournalEntries bounds the entries a journal may hold; the token size
// cap bounds them first in practice.
const maxJournalEntries = 4096

// entryLess orders entries by tag, then key: the one order encoded.
func entryLess(a, b *jentry) bool {
	if a.tag != b.tag {
		return a.tag < b.tag
	}
	return a.key < b.key
}

// appendJournal encodes j, whose entries must be in entryLess order.
//
//	version   1 byte
//	callID    16 bytes
//	start     zig-zag varint, Unix milliseconds
//	count     uvarint
//	count × { tag, flags, kind, attempts (1 byte each),
//	          uvarint length + key, 16-byte digest,
//	          uvarint length + value }
func appendJournal(dst []byte, j *journal) []byte {
	n := 1 + len(j.callID) + binary.MaxVarintLen64*2
	for i := range j.entries {
		e := &j.entries[i]
		n += 4 + 2*binary.MaxVarintLen64 + len(e.key) + digestLen + len(e.value)
	}
	dst = slices.Grow(dst, n)
	dst = append(dst, journalVersion)
	dst = append(dst, j.callID[:]...)
	dst = binary.AppendVarint(dst, j.start)
	dst = binary.AppendUvarint(dst, uint64(len(j.entries)))
	for i := range j.entries {
		e := &j.entries[i]
		dst = append(dst, e.tag, e.flags, byte(e.kind), e.attempts)
		dst = binary.AppendUvarint(dst, uint64(len(e.key)))
		dst = append(dst, e.key...)
		dst = append(dst, e.digest[:]...)
		dst = binary.AppendUvarint(dst, uint64(len(e.value)))
		dst = append(dst, e.value...)
	}
	return dst
}

var errBadJournal = errors.New("mrtr: malformed journal")

// decodeJournalInto parses an encoded journal into j, its entries
// appended to buf (a run's own array, so that a short journal costs no
// allocation). Although a journal is only ever read from an authenticated
// state, it is decoded as untrusted input: every length is checked,
// entries must be in order and unique, and trailing bytes are refused.
// Values alias b.
func decodeJournalInto(j *journal, b []byte, buf []jentry) error {
	if len(b) < 1+16 || b[0] != journalVersion {
		return errBadJournal
	}
	copy(j.callID[:], b[1:17])
	i := 17
	start, n := minVarint(b[i:])
	if n <= 0 {
		return errBadJournal
	}
	j.start, i = start, i+n
	count, n := minUvarint(b[i:])
	if n <= 0 || count > maxJournalEntries || count > uint64(len(b)-i-n)/(4+1+digestLen+1) {
		return errBadJournal
	}
	i += n
	if uint64(cap(buf)) >= count {
		j.entries = buf[:count]
	} else {
		j.entries = make([]jentry, count)
	}
	for k := range j.entries {
		e := &j.entries[k]
		if len(b)-i < 4 {
			return errBadJournal
		}
		e.tag, e.flags, e.kind, e.attempts = b[i], b[i+1], kind(b[i+2]), b[i+3]
		i += 4
		if e.tag < tagAnswer || e.tag > tagMemo || e.flags&^(flagInline|flagChanged) != 0 {
			return errBadJournal
		}
		if (e.tag == tagMemo) != (e.kind == 0) || (e.tag != tagMemo && (e.kind < kindSampling || e.kind > kindRoots)) {
			return errBadJournal
		}
		kl, n := minUvarint(b[i:])
		if n <= 0 || kl == 0 || kl > state.MaxAskedKeyLen || kl > uint64(len(b)-i-n) {
			return errBadJournal
		}
		i += n
		// The key aliases b: a journal is decoded from the payload Open
		// returned, which the caller owns and nothing writes again.
		e.key = unsafe.String(&b[i], int(kl))
		i += int(kl)
		if len(b)-i < digestLen {
			return errBadJournal
		}
		copy(e.digest[:], b[i:])
		i += digestLen
		vl, n := minUvarint(b[i:])
		if n <= 0 || vl > uint64(len(b)-i-n) {
			return errBadJournal
		}
		i += n
		if vl > 0 {
			e.value = b[i : i+int(vl) : i+int(vl)]
		}
		i += int(vl)
		if (e.tag == tagPending) != (e.value == nil) {
			return errBadJournal
		}
		if k > 0 && !entryLess(&j.entries[k-1], e) {
			return errBadJournal
		}
	}
	if i != len(b) {
		return errBadJournal
	}
	return nil
}

// equalJournal reports whether two journals encode the same; for tests.
func equalJournal(a, b *journal) bool {
	return bytes.Equal(appendJournal(nil, a), appendJournal(nil, b))
}

// minUvarint is binary.Uvarint that also refuses a value not in its
// shortest encoding, so that a journal has one encoding.
func minUvarint(b []byte) (uint64, int) {
	v, n := binary.Uvarint(b)
	if n > 0 && n != uvarintSize(v) {
		return 0, -1
	}
	return v, n
}

// minVarint is binary.Varint that also refuses a non-minimal encoding.
func minVarint(b []byte) (int64, int) {
	v, n := binary.Varint(b)
	if n > 0 && n != uvarintSize(uint64(v<<1)^uint64(v>>63)) {
		return 0, -1
	}
	return v, n
}

func uvarintSize(v uint64) int {
	n := 1
	for v >= 0x80 {
		v >>= 7
		n++
	}
	return n
}
