package pair

import (
	"cloud.google.com/go/datastore"

	"socialstream/internal/store"
)

// Link is the entity that holds a pair together now: a follow or a
// membership.
type Link interface {
	// Gen is the link's generation: its creation time in µs.
	Gen() int64
	// InChunk is the follower chunk that holds the follower of a follow;
	// links of other pairs answer 0.
	InChunk() int
}

// Reader is a pair's link and its history as one lookup read them.
type Reader[L any, P interface {
	*L
	Link
}] struct {
	link   L
	exists store.Ref
	ended  Ended
}

// Read adds a pair's link (at linkKey) and its history (at endedKey) to a
// lookup; the Reader answers once the lookup has run.
func Read[L any, P interface {
	*L
	Link
}](l *store.Lookup, linkKey, endedKey *datastore.Key) *Reader[L, P] {
	r := &Reader[L, P]{}
	r.exists = l.Add(linkKey, P(&r.link))
	l.Add(endedKey, &r.ended)
	return r
}

// State returns what the lookup read.
func (r *Reader[L, P]) State() State {
	st := State{Exists: r.exists.Found(), Ended: r.ended}
	if st.Exists {
		link := P(&r.link)
		st.Gen, st.Chunk = link.Gen(), link.InChunk()
	}
	return st
}
