package activities

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"cloud.google.com/go/datastore"

	"socialstream/internal/ids"
	"socialstream/internal/store"
)

// KindStats is the kind of an activity's counter shards: Stats/{activityId}
// (shard 0) and Stats/{activityId}-{n}, root entities, not children of the
// Activity (children share an entity group, which the emulator, like legacy
// Datastore, serialises), so that writes to two shards never contend.
const KindStats = "Stats"

// Counting likes and comments.
//
// Likes (package likes) and comments (package comments) are entities of
// their own. Their counts live in the activity's counter shards, changed
// in the same transaction as the like, unlike, comment or deletion that
// changes them (through Reaction): exact as soon as the answer arrives,
// and exact under retries, since the transaction re-reads whether the like
// or comment is there before it counts. The counts are the sums of the
// shards, read in the batch lookup that already reads a feed's authors
// (Activity.Shards says how many to read): a count costs the same however
// many likes it counts.
//
// An activity starts with one shard. A reaction whose transaction met
// contention (a popular activity, liked by many at once) widens the
// activity to spreadFactor times as many shards, up to MaxShards; a
// reaction writes the shard its reactor's id hashes to, so concurrent
// reactions mostly write different entities. A shard may go below zero
// (a like counted in one shard, its unlike in another, after a widening);
// only the sum means anything.

// MaxShards bounds an activity's counter shards, and so what a feed reads
// per activity.
const MaxShards = 64

// spreadFactor is how much one widening multiplies the shards by.
const spreadFactor = 4

// Stats is one counter shard of an activity.
type Stats struct {
	Likes    int64 `datastore:"likes,noindex"`
	Comments int64 `datastore:"comments,noindex"`
	// Counted was set by the recount job of earlier versions; kept so
	// their entities still load.
	Counted time.Time `datastore:"counted,noindex"`
}

// StatsKey returns the key of an activity's counter shard n.
func StatsKey(db *store.DB, activity string, n int) *datastore.Key {
	if n == 0 {
		return db.NameKey(KindStats, activity, nil) // the single count of earlier versions
	}
	return db.NameKey(KindStats, activity+"-"+strconv.Itoa(n), nil)
}

// statsKeys returns the keys of n counter shards of an activity.
func statsKeys(db *store.DB, activity string, n int) []*datastore.Key {
	keys := make([]*datastore.Key, n)
	for i := range keys {
		keys[i] = StatsKey(db, activity, i)
	}
	return keys
}

// shards returns how many counter shards the activity has.
func (a *Activity) shards() int { return min(MaxShards, max(1, a.Shards)) }

// counts reads, into a lookup, every counter shard of an activity; the
// returned func sums them once the lookup has run.
func counts(l *store.Lookup, activity string, a *Activity) func() (likes, comments int64) {
	st := make([]Stats, a.shards())
	for i, k := range statsKeys(l.DB(), activity, len(st)) {
		l.Add(k, &st[i])
	}
	return func() (likes, comments int64) {
		for _, s := range st {
			likes, comments = likes+s.Likes, comments+s.Comments
		}
		return max(0, likes), max(0, comments)
	}
}

// Reaction is an activity and one of its counter shards as the transaction
// of a reaction to it (a like, a comment) read them.
type Reaction struct {
	id    string
	a     Activity
	found store.Ref // the activity, or with seen, the shard
	seen  bool
	shard int
	st    Stats
}

// ReadReaction adds one counter shard of an activity to a transaction's
// lookup: with seen, the activity as read before the transaction, the
// shard by's reactions count in (the next one for each retry of the
// transaction so far), and not the activity itself (every reaction to a
// popular activity would read it at once; the shard says the activity is
// there, as a post writes its first shard, a widening the others, and a
// delete deletes them all). An activity's shards only ever grow, so any
// shard it had is one it has. With seen nil (an erasure, a comment's
// delete), it adds the activity and its first shard.
func ReadReaction(l *store.Lookup, activity, by string, retry int, seen *Activity) *Reaction {
	r := &Reaction{id: activity, seen: seen != nil}
	if seen != nil {
		// A retry moves to the next shard: the one it met contention on
		// is busy.
		r.a, r.shard = *seen, (store.Shard(by, seen.shards())+retry)%seen.shards()
		r.found = l.Add(StatsKey(l.DB(), activity, r.shard), &r.st)
		return r
	}
	r.found = l.Add(Key(l.DB(), activity), &r.a)
	l.Add(StatsKey(l.DB(), activity, r.shard), &r.st)
	return r
}

// Check returns ErrNoSuchActivity when the activity does not exist. A
// shard read without the activity that is missing is one an activity of an
// earlier version never wrote, or one its delete took: the activity, read
// then, tells.
func (r *Reaction) Check(tx *store.Tx) error {
	if r.found.Found() {
		return nil
	}
	if r.seen {
		if ok, err := tx.Get(Key(tx.DB(), r.id), &r.a); err != nil || ok {
			return err
		}
	}
	return ErrNoSuchActivity
}

// ID returns the activity's id.
func (r *Reaction) ID() string { return r.id }

// Author returns the activity's author.
func (r *Reaction) Author() string { return r.a.UserID }

// Shards returns how many counter shards the reaction chose its shard
// among: the value for Widen should its transaction have met contention.
func (r *Reaction) Shards() int { return r.a.shards() }

// Count adds likes and comments to the counts, in the shard the lookup
// read, and writes it in tx. The transaction must have read the change it
// counts.
func (r *Reaction) Count(tx *store.Tx, likes, comments int64) error {
	r.st.Likes += likes
	r.st.Comments += comments
	return tx.Put(StatsKey(tx.DB(), r.id, r.shard), &r.st)
}

// Widen gives an activity spreadFactor times the counter shards it had
// when a reaction's transaction, which met contention, saw it have seen,
// unless it was widened since (by a reaction that saw the same). Losing the
// race to a delete is no error.
func (s *Service) Widen(ctx context.Context, activity string, seen int) error {
	if seen >= MaxShards {
		return nil
	}
	err := s.db.Update(ctx, func(tx *store.Tx) error {
		var a Activity
		if ok, err := tx.Get(Key(s.db, activity), &a); err != nil || !ok || a.shards() != seen {
			return err
		}
		a.Shards = min(MaxShards, seen*spreadFactor)
		// Each new shard exists from now, as the reactions that pick it
		// read it to know the activity is there.
		keys := append([]*datastore.Key{Key(s.db, activity)}, statsKeys(s.db, activity, a.Shards)[seen:]...)
		vals := []any{&a}
		for range keys[1:] {
			vals = append(vals, &Stats{})
		}
		return tx.PutMulti(keys, vals)
	})
	if err != nil {
		return fmt.Errorf("activities.Widen(%s): %w", activity, err)
	}
	return nil
}

// ReactionView returns the activity a reaction's transaction read as
// viewer, the reactor, sees it once it has committed: with its counts,
// read in one lookup with its author. A block between them does not hide
// it: the reaction happened (an unlike is allowed across a block, and a
// block may land just after a like), and its answer says so.
//
// The lookup reads every shard the activity may have (MaxShards), not
// those it had: a widening since, with a like and its unlike counted in
// different shards meanwhile, would make a count of the old shards alone
// wrong; one lookup reads all at one time.
func (s *Service) ReactionView(ctx context.Context, viewer string, r *Reaction) (View, error) {
	a := r.a
	a.Shards = MaxShards
	vs, err := s.viewsOf(ctx, viewer, []*datastore.Key{Key(s.db, r.id)}, []*Activity{&a}, "", false)
	if err != nil {
		return View{}, err
	}
	return vs[0], nil
}

// Exists checks that an activity exists and returns it.
func (s *Service) Exists(ctx context.Context, id string) (*Activity, error) {
	if _, ok := ids.Parse(id); !ok {
		return nil, ErrNoSuchActivity
	}
	var a Activity
	ok, err := s.db.Get(ctx, Key(s.db, id), &a)
	if err != nil {
		return nil, fmt.Errorf("activities.Exists(%s): %w", id, err)
	}
	if !ok {
		return nil, ErrNoSuchActivity
	}
	return &a, nil
}
