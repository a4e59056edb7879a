// Package blocks owns who blocks whom: Block/{blocker}_{blocked}, one root
// entity per pair, indexed by blocker (the blocker's list) and by blocked
// (to erase an account).
//
// A block is read by key in the transactions and lookups that must honour
// it, never queried there: a follow reads the pair both ways, a like or a
// comment the activity's author and the actor, a notification each
// recipient and the actor, a feed each author and the viewer (in the
// batch lookup it does anyway). Package graph makes and ends blocks, in the
// transaction that also ends the follows between the two people, through
// Set and Clear.
package blocks

import (
	"context"
	"fmt"
	"strings"
	"time"

	"cloud.google.com/go/datastore"

	"socialstream/internal/derrors"
	"socialstream/internal/store"
	"socialstream/internal/viewer"
)

// KindBlock is the kind of the entities this package owns.
const KindBlock = "Block"

var (
	// ErrBlocked refuses what a block keeps away: a follow, like or
	// comment between two people one of whom blocks the other.
	ErrBlocked = derrors.New(derrors.PermissionDenied, "one of you blocks the other")
	// ErrSelfBlock refuses a block of oneself.
	ErrSelfBlock = derrors.New(derrors.InvalidArgument, "you cannot block yourself")
)

// Block is one person's block of another.
type Block struct {
	Blocker string    `datastore:"blocker"`
	Blocked string    `datastore:"blocked"`
	Created time.Time `datastore:"created"`
}

// BlockKey returns the key of blocker's block of blocked.
func BlockKey(db *store.DB, blocker, blocked string) *datastore.Key {
	return db.NameKey(KindBlock, blocker+"_"+blocked, nil)
}

// Between is whether two people block each other, as a lookup read it.
type Between struct {
	ab, ba store.Ref
}

// ReadBetween adds a's block of b and b's block of a to a lookup.
func ReadBetween(l *store.Lookup, a, b string) *Between {
	return &Between{ab: l.Add(BlockKey(l.DB(), a, b), &Block{}), ba: l.Add(BlockKey(l.DB(), b, a), &Block{})}
}

// Any reports whether either blocks the other.
func (b *Between) Any() bool { return b.ab.Found() || b.ba.Found() }

// First reports whether the first of the two (a of ReadBetween) blocks
// the second.
func (b *Between) First() bool { return b.ab.Found() }

// Second reports whether the second of the two blocks the first.
func (b *Between) Second() bool { return b.ba.Found() }

// Set writes blocker's block of blocked in tx, made at now.
func Set(tx *store.Tx, blocker, blocked string, now time.Time) error {
	return tx.Put(BlockKey(tx.DB(), blocker, blocked), &Block{Blocker: blocker, Blocked: blocked, Created: now.UTC()})
}

// Clear deletes blocker's block of blocked in tx.
func Clear(tx *store.Tx, blocker, blocked string) error {
	return tx.Delete(BlockKey(tx.DB(), blocker, blocked))
}

// List returns the ids of the people blocker blocks, newest block first.
func List(ctx context.Context, db *store.DB, blocker string, p store.PageRequest) ([]string, string, error) {
	q := db.Query(KindBlock).FilterField("blocker", "=", blocker).Order("-created")
	_, vals, next, err := store.Page[Block](ctx, db, q, "blocked:"+blocker, p)
	if err != nil {
		return nil, "", fmt.Errorf("blocks.List(%s): %w", blocker, err)
	}
	out := make([]string, len(vals))
	for i, b := range vals {
		out[i] = b.Blocked
	}
	return out, next, nil
}

// Each calls f with each person blocker blocks and when, newest first, a
// page at a time (for an export).
func Each(ctx context.Context, db *store.DB, blocker string, f func(id string, created time.Time) error) error {
	q := db.Query(KindBlock).FilterField("blocker", "=", blocker).Order("-created")
	return store.Each[Block](ctx, db, q, 500, func(_ *datastore.Key, b *Block) error { return f(b.Blocked, b.Created) })
}

// Erase deletes up to n blocks made by or of a deleted user, and returns
// how many it deleted. Each goes with its line in the other person's
// state (package viewer), in one commit.
func Erase(ctx context.Context, db *store.DB, user string, n int) (int, error) {
	deleted, err := db.DeleteWhereWith(ctx, KindBlock, []string{"blocker", "blocked"}, user, n, 25,
		func(tx *store.Tx, keys []*datastore.Key) error {
			others := make([]string, len(keys))
			for i, k := range keys {
				blocker, blocked, _ := strings.Cut(k.Name, "_")
				others[i] = blocker
				if blocker == user {
					others[i] = blocked
				}
			}
			return viewer.Unlist(ctx, tx, others, user)
		})
	if err != nil {
		return deleted, fmt.Errorf("blocks.Erase(%s): %w", user, err)
	}
	return deleted, nil
}
