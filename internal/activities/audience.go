package activities

import (
	"context"
	"fmt"
	"slices"
	"time"

	"cloud.google.com/go/datastore"

	"socialstream/internal/graph"
	"socialstream/internal/ids"
	"socialstream/internal/order"
	"socialstream/internal/policy"
	"socialstream/internal/store"
)

// Audience chunk n holds the ids of follower chunk n at posting time, plus
// those added by follow jobs since. Should a chunk ever be full (follows
// after unfollows that kept their history), ids spill into overflow chunks
// named "n.1", "n.2", ..., each under the same limit.
const maxOverflow = 64

func overflowKey(db *store.DB, activity string, base, j int) *datastore.Key {
	if j == 0 {
		return AudienceKey(db, activity, base)
	}
	return db.NameKey(KindAudience, fmt.Sprintf("%d.%d", base, j), Key(db, activity))
}

// Ref names an activity whose audience a job edits.
type Ref struct {
	ID     string
	Seq    int64
	Author string
	// Answers, for a reply to someone else, is whom it answers: its
	// chunks reach their followers alone (replyAudience).
	Answers string
	// Repost: the activity is a repost (Audience.Repost).
	Repost bool
}

// mergeIDs adds ids to audience chunk base of one activity and its
// overflows, in tx, skipping ids already there. It returns how many it
// added.
func mergeIDs(tx *store.Tx, ref Ref, base int, ids []string) (int, error) {
	added := 0
	for j := 0; len(ids) > 0 && j <= maxOverflow; j++ {
		key := overflowKey(tx.DB(), ref.ID, base, j)
		var aud Audience
		if _, err := tx.Get(key, &aud); err != nil {
			return added, err
		}
		aud.Seq, aud.UserID, aud.Answers, aud.Repost = ref.Seq, ref.Author, ref.Answers, ref.Repost
		before := len(aud.FollowerIDs)
		have := make(map[string]bool, before)
		for _, id := range aud.FollowerIDs {
			have[id] = true
		}
		var rest []string
		for _, id := range ids {
			switch {
			case have[id]:
			case len(aud.FollowerIDs) < AudienceChunkSize:
				have[id] = true
				aud.FollowerIDs = append(aud.FollowerIDs, id)
			default:
				rest = append(rest, id)
			}
		}
		if len(aud.FollowerIDs) > before {
			if err := checkAudience(&aud); err != nil {
				return added, err
			}
			if err := tx.Put(key, &aud); err != nil {
				return added, err
			}
			tx.Touches(key, aud.FollowerIDs[before:]...) // the others' homes keep it as it was
			added += len(aud.FollowerIDs) - before
		}
		ids = rest
	}
	if len(ids) > 0 {
		return added, fmt.Errorf("activities: audience %d of %s: no room after %d overflow chunks", base, ref.ID, maxOverflow)
	}
	return added, nil
}

// appendRoom is how far under AudienceChunkSize an audience chunk must be,
// as read outside a transaction, for a job to append to it blind: room for
// the appends of jobs under way at once.
const appendRoom = 64

// AddFollower adds follower to audience chunk base of each activity, in tx,
// and returns the ids of the activities it changed. Activities that no
// longer exist are skipped, so no audience outlives its activity.
//
// The chunks are read outside the transaction, which holds no lock on
// them: the follow jobs of a popular author's new followers, all adding to
// the same chunks at once, would otherwise wait on each other's locks. A
// chunk that is there with room gets the follower by a server-side
// AppendMissingElements that reads nothing (and fails the commit should
// the activity's deletion take the chunk meanwhile: the job retries). One
// missing (its activity deleted, or its fan-out still to come) or nearly
// full is read and written in tx.
func AddFollower(tx *store.Tx, refs []Ref, base int, follower string) ([]string, error) {
	db := tx.DB()
	l := db.Lookup() // outside tx
	auds := make([]Audience, len(refs))
	found := make([]store.Ref, len(refs))
	for i, r := range refs {
		found[i] = l.Add(AudienceKey(db, r.ID, base), &auds[i])
	}
	// A follower who takes none of the author's reposts: read only when
	// a repost is among them (its chunk says so).
	var quiet func(string) bool
	l.Then(func() {
		for i := range auds {
			if found[i].Found() && auds[i].Repost && len(refs) > 0 {
				quiet = graph.ReadQuiet(l, refs[0].Author, base)
				return
			}
		}
	})
	if err := l.Run(context.Background()); err != nil {
		return nil, err
	}
	reaches, err := answeredFollows(db, follower, auds, found)
	if err != nil {
		return nil, err
	}
	var changed []string
	for i, r := range refs {
		aud := &auds[i]
		switch {
		case found[i].Found() && (slices.Contains(aud.FollowerIDs, follower) || aud.UserID == MentionAudience(r.Author) || aud.Celebrity):
			continue // there already, for the mentioned alone, or a celebrity's (merged in)
		case found[i].Found() && !reaches(r.Author, aud.Answers):
			continue // a reply to someone the follower does not follow
		case found[i].Found() && aud.Repost && quiet != nil && quiet(follower):
			continue // a repost, which the follower takes none of
		case found[i].Found() && len(aud.FollowerIDs) < AudienceChunkSize-appendRoom:
			key := AudienceKey(db, r.ID, base)
			if err := tx.Transform(key, datastore.AppendMissingElements(homeProp, homePlace(follower, r.Seq))); err != nil {
				return nil, err
			}
			tx.Touches(key, follower)
		default:
			if added, err := addRead(tx, r, base, follower); err != nil {
				return nil, err
			} else if !added {
				continue
			}
		}
		changed = append(changed, r.ID)
	}
	return changed, nil
}

// addRead adds follower to audience chunk base of r's activity, read in
// tx (a chunk not there, or nearly full: AddFollower), and reports
// whether it changed it: not for an activity deleted or for the
// mentioned alone, a reply to someone the follower does not follow, nor
// a repost the follower takes none of.
func addRead(tx *store.Tx, r Ref, base int, follower string) (bool, error) {
	db := tx.DB()
	var a Activity
	if ok, err := tx.Get(Key(db, r.ID), &a); err != nil || !ok || !a.reachesFollowers() || a.Celebrity {
		return false, err
	}
	if reach, err := reachesFollower(db, &a, follower); err != nil || !reach {
		return false, err
	}
	if a.RepostOf != "" {
		if q, err := quietFor(db, a.UserID, base, follower); err != nil || q {
			return false, err
		}
	}
	r.Author, r.Repost = a.UserID, a.RepostOf != ""
	if a.answersOther() {
		r.Answers = a.InReplyToUser
	}
	n, err := mergeIDs(tx, r, base, []string{follower})
	return n > 0, err
}

// quietFor reports whether follower, in author's follower chunk n, takes
// none of author's reposts: one read, outside any transaction.
func quietFor(db *store.DB, author string, n int, follower string) (bool, error) {
	l := db.Lookup()
	quiet := graph.ReadQuiet(l, author, n)
	if err := l.Run(context.Background()); err != nil {
		return false, err
	}
	return quiet(follower), nil
}

// answeredFollows reads, in one lookup outside any transaction, the
// follower's follows of the people the replies whose chunks were found
// answer (Audience.Answers), and returns whether a post by author that
// answers whom reaches the follower at home (policy.ReplyReaches).
func answeredFollows(db *store.DB, follower string, auds []Audience, found []store.Ref) (func(author, whom string) bool, error) {
	follows := map[string]*graph.Tie{}
	l := db.Lookup()
	for i := range auds {
		if b := auds[i].Answers; found[i].Found() && b != "" && b != follower {
			if _, ok := follows[b]; !ok {
				follows[b] = graph.Reaches(l, follower, b)
			}
		}
	}
	if len(follows) > 0 {
		if err := l.Run(context.Background()); err != nil {
			return nil, err
		}
	}
	return func(author, whom string) bool {
		f, ok := follows[whom]
		return policy.ReplyReaches(follower, author, whom, ok && f.Found())
	}, nil
}

// AudienceOf returns the keys-only query of the audience chunks of
// author's activities that hold follower: every copy a removal must undo,
// in any chunk or overflow, however old: a range of the home places of
// follower beside userId (the composite index (userId, home)). Pass the
// keys it finds to RemoveFollower.
func AudienceOf(db *store.DB, follower, author string) *datastore.Query {
	return order.Range(db.Query(KindAudience).FilterField("userId", "=", author), homeProp, follower, 0, order.Place{}).KeysOnly()
}

// RemoveFollower removes follower, in tx, from the audience chunks with the
// given keys (from AudienceOf's query) whose activity was surely posted
// before cutoff (all of them when cutoff is zero). It returns the ids of
// the activities it changed.
func RemoveFollower(tx *store.Tx, keys []*datastore.Key, follower string, cutoff time.Time) ([]string, error) {
	type pick struct {
		key *datastore.Key
		seq int64
	}
	var picks []pick
	for _, k := range keys {
		seq, ok := ids.Parse(k.Parent.Name)
		if ok && (cutoff.IsZero() || ids.MintedBefore(seq, cutoff)) {
			picks = append(picks, pick{k, seq})
		}
	}
	if len(picks) == 0 {
		return nil, nil
	}
	// Each chunk loses the follower by a server-side RemoveAllFromArray
	// that reads nothing, so jobs removing followers of one author do not
	// wait on each other's locks. A chunk deleted with its activity since
	// the query fails the commit: the job retries, and its query no longer
	// finds it.
	var changed []string
	for _, p := range picks {
		if err := tx.Transform(p.key, datastore.RemoveAllFromArray(homeProp, homePlace(follower, p.seq))); err != nil {
			return nil, err
		}
		if !slices.Contains(changed, p.key.Parent.Name) {
			changed = append(changed, p.key.Parent.Name)
		}
	}
	return changed, nil
}
