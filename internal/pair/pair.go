// Package pair describes what follows (package graph) and memberships
// (package groups) have in common for the jobs that keep copies in step
// (package rebuild): the state of one pair (a follower and a followee, a
// group and a member) and the history of the pair's ended links. It owns no
// entity: graph and groups store the history under kinds and keys of their
// own, in the shape Ended gives.
package pair

import (
	"context"
	"fmt"

	"cloud.google.com/go/datastore"

	"socialstream/internal/store"
)

// State is what a job reads of its pair, in one lookup.
type State struct {
	Exists bool  // the follow or membership exists now
	Gen    int64 // its generation (creation time, µs), when it exists
	Chunk  int   // the follower chunk that holds the follower, for a follow
	Ended  Ended
}

// Ended is the history of a pair's links that jobs need to decide,
// whenever they run, what their change still asks for:
//   - Gen is the generation of the last link that ended, so a late job
//     can tell a link that was undone from one not committed yet.
//   - Removal names the newest end that asked for the copies to be removed
//     (its time, µs); Done is the newest removal that finished. Removal >
//     Done means one is under way, and adding jobs wait for it, so a
//     removal never undoes what a later link copied.
//   - Cutoff is the generation of the first link after that removal was
//     asked for: the removal leaves alone what was posted since (posted
//     while linked again). Zero means none yet.
type Ended struct {
	Gen     int64 `datastore:"gen,noindex"`
	Removal int64 `datastore:"removal,noindex"`
	Cutoff  int64 `datastore:"cutoff,noindex"`
	Done    int64 `datastore:"done,noindex"`
	// Pair holds the pair's two ids, indexed, so that erasing an account
	// finds every history it is part of.
	Pair []string `datastore:"pair"`
}

// Of records the pair's ids; the owner calls it before each write.
func (e *Ended) Of(a, b string) { e.Pair = []string{a, b} }

// Pending reports whether a removal is under way.
func (e Ended) Pending() bool { return e.Removal > e.Done }

// Begin records a new link made at gen; it reports whether the record
// changed (a removal under way must spare what the new link sees).
func (e *Ended) Begin(gen int64) bool {
	if !e.Pending() || e.Cutoff != 0 {
		return false
	}
	e.Cutoff = gen
	return true
}

// End records the end of the link of generation gen; a non-zero removal
// names the job that removes the copies.
func (e *Ended) End(gen, removal int64) {
	e.Gen = gen
	if removal > 0 {
		e.Removal, e.Cutoff = max(removal, e.Removal), 0
	}
}

// Finish records that removal is done; it reports whether the record
// changed.
func (e *Ended) Finish(removal int64) bool {
	if e.Removal != removal || e.Done >= removal {
		return false
	}
	e.Done = removal
	return true
}

// Finish records, in the history at key (the owner's), that removal is
// done.
func Finish(ctx context.Context, db *store.DB, key *datastore.Key, removal int64) error {
	err := db.Update(ctx, func(tx *store.Tx) error {
		var e Ended
		if _, err := tx.Get(key, &e); err != nil || !e.Finish(removal) {
			return err
		}
		return tx.Put(key, &e)
	})
	if err != nil {
		return fmt.Errorf("pair.Finish(%s): %w", key.Name, err)
	}
	return nil
}
