package graph

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"cloud.google.com/go/datastore"

	"socialstream/internal/accounts"
	"socialstream/internal/blocks"
	"socialstream/internal/derrors"
	"socialstream/internal/ids"
	"socialstream/internal/pair"
	"socialstream/internal/queue"
	"socialstream/internal/store"
	"socialstream/internal/text"
	"socialstream/internal/viewer"
)

// Lists, as Mastodon has them: a person's private lists of people they
// follow, each with a timeline of what its members post. Nobody on a
// list is asked or told.
//
// A list reads its members as a follower does: its reader, "list" and
// the list's id (Reader), follows each member, by a Follow entity whose
// properties are named apart (list, member, owner: no list of followers
// nor count ever sees one), in the member's follower chunks. So every
// post of a member reaches the list by the same audience copies as it
// reaches a follower's home, a list's timeline is one range of one index
// (the audience chunks' home places of the reader), and an add or a
// removal runs the same jobs as a follow's (the copying of the member's
// newest activities, the removal of their copies). A reply to someone
// else reaches a list as its RepliesPolicy says (ReachesAmong).
//
//   - List/{id}: the list (KindList), its owner indexed: a person's lists.
//
// A list's members are people its owner follows: an unfollow or a block
// takes them off the owner's lists, with the removal of their copies. An
// exclusive list's members leave the owner's home: the owner's state
// (package viewer) holds "list/member" for each, which the home feed's
// page decides on.

// KindList is the kind of lists.
const KindList = "List"

// Replies policies of a list: which replies to someone else its timeline
// shows (a thread of a member's own it always does).
const (
	RepliesFollowed = "followed" // to people the owner follows
	RepliesList     = "list"     // to members of the list (the default)
	RepliesNone     = "none"     // none
)

// Bounds of lists.
const (
	MaxLists       = 100 // a person's lists
	MaxListMembers = 500 // a list's members
	MaxListTitle   = 100 // characters
)

// readerPrefix starts the reader of a list: letters, which no person's
// id (digits) starts with, and none that a task's name or a key's
// (follower_followee) may not hold.
const readerPrefix = "list"

// Reader returns the reader of list id: the follower its memberships
// are.
func Reader(id string) string { return readerPrefix + id }

// IsReader reports whether id is a list's reader, not a person.
func IsReader(id string) bool { return strings.HasPrefix(id, readerPrefix) }

// List is one list.
type List struct {
	Owner         string    `datastore:"owner"`
	Title         string    `datastore:"title,noindex"`
	RepliesPolicy string    `datastore:"repliesPolicy,noindex"`
	Exclusive     bool      `datastore:"exclusive,noindex"`
	Created       time.Time `datastore:"created"`
}

// ListView is a list as the API shows it.
type ListView struct {
	ID            string `json:"id"`
	Title         string `json:"title"`
	RepliesPolicy string `json:"repliesPolicy"`
	Exclusive     bool   `json:"exclusive"`
}

func (l *List) view(id string) ListView {
	return ListView{ID: id, Title: l.Title, RepliesPolicy: l.RepliesPolicy, Exclusive: l.Exclusive}
}

// ListKey returns the key of list id.
func ListKey(db *store.DB, id string) *datastore.Key { return db.NameKey(KindList, id, nil) }

// Names of a membership's properties (Follow.Save).
const (
	listProp   = "list"
	memberProp = "member"
	ownerProp  = "owner"
)

// ListInput is what a client sets of a list; nil leaves it.
type ListInput struct {
	Title         *string
	RepliesPolicy *string
	Exclusive     *bool
}

var (
	// ErrNoSuchList answers for a list that is not there for its reader:
	// never made, deleted, or another's (lists are private).
	ErrNoSuchList   = derrors.New(derrors.NotFound, "no such list")
	errPolicy       = derrors.New(derrors.InvalidArgument, "replies_policy must be followed, list or none")
	errTooMany      = derrors.New(derrors.InvalidArgument, fmt.Sprintf("at most %d lists", MaxLists))
	errFullList     = derrors.New(derrors.InvalidArgument, fmt.Sprintf("a list holds at most %d people", MaxListMembers))
	errNotFollowed  = derrors.New(derrors.InvalidArgument, "Validation failed: you can add only people you follow to a list")
	errTooExclusive = derrors.New(derrors.InvalidArgument,
		fmt.Sprintf("at most %d people in exclusive lists", viewer.MaxPeople))
)

// check checks and cleans in, for a new list if fresh.
func (in *ListInput) check(fresh bool) error {
	if in.Title != nil || fresh {
		t := ""
		if in.Title != nil {
			t = *in.Title
		}
		t, err := text.Clean("title", t, text.Rules{Max: MaxListTitle, Required: true})
		if err != nil {
			return err
		}
		in.Title = &t
	}
	if p := in.RepliesPolicy; p != nil && *p != RepliesFollowed && *p != RepliesList && *p != RepliesNone {
		return errPolicy
	}
	return nil
}

// CreateList makes a list of owner's.
func (s *Service) CreateList(ctx context.Context, owner string, in ListInput) (ListView, error) {
	if err := in.check(true); err != nil {
		return ListView{}, err
	}
	n, err := s.db.Count(ctx, s.db.Query(KindList).FilterField("owner", "=", owner).KeysOnly())
	if err != nil {
		return ListView{}, fmt.Errorf("graph.CreateList(%s): %w", owner, err)
	}
	if n >= MaxLists {
		return ListView{}, errTooMany
	}
	l := List{Owner: owner, Title: *in.Title, RepliesPolicy: RepliesList, Created: s.now().UTC()}
	if in.RepliesPolicy != nil {
		l.RepliesPolicy = *in.RepliesPolicy
	}
	if in.Exclusive != nil {
		l.Exclusive = *in.Exclusive
	}
	id := ids.Format(s.ids.Next())
	if err := s.db.Put(ctx, ListKey(s.db, id), &l); err != nil {
		return ListView{}, fmt.Errorf("graph.CreateList(%s): %w", owner, err)
	}
	return l.view(id), nil
}

// ownList reads owner's list id, outside any transaction.
func (s *Service) ownList(ctx context.Context, owner, id string) (*List, error) {
	if _, ok := ids.Parse(id); !ok {
		return nil, ErrNoSuchList
	}
	var l List
	if ok, err := s.db.Get(ctx, ListKey(s.db, id), &l); err != nil {
		return nil, fmt.Errorf("graph: list %s: %w", id, err)
	} else if !ok || l.Owner != owner {
		return nil, ErrNoSuchList
	}
	return &l, nil
}

// OwnsList checks, outside any transaction, that list is viewer's:
// ErrNoSuchList otherwise (another's is not there: lists are private).
// One read, of the list.
func OwnsList(ctx context.Context, db *store.DB, viewer, list string) error {
	var l List
	if _, ok := ids.Parse(list); !ok || viewer == "" {
		return ErrNoSuchList
	}
	if ok, err := db.Get(ctx, ListKey(db, list), &l); err != nil {
		return fmt.Errorf("graph: list %s: %w", list, err)
	} else if !ok || l.Owner != viewer {
		return ErrNoSuchList
	}
	return nil
}

// GetList returns owner's list id.
func (s *Service) GetList(ctx context.Context, owner, id string) (ListView, error) {
	l, err := s.ownList(ctx, owner, id)
	if err != nil {
		return ListView{}, err
	}
	return l.view(id), nil
}

// Lists returns owner's lists, oldest first (at most MaxLists).
func (s *Service) Lists(ctx context.Context, owner string) ([]ListView, error) {
	var ls []List
	keys, err := s.db.GetAll(ctx, s.db.Query(KindList).FilterField("owner", "=", owner).Order("created").Limit(MaxLists), &ls)
	if err != nil {
		return nil, fmt.Errorf("graph.Lists(%s): %w", owner, err)
	}
	out := make([]ListView, len(keys))
	for i, k := range keys {
		out[i] = ls[i].view(k.Name)
	}
	return out, nil
}

// ListsWith returns those of owner's lists that hold member, oldest
// first: one keys-only query of the memberships and a lookup of the
// lists.
func (s *Service) ListsWith(ctx context.Context, owner, member string) ([]ListView, error) {
	keys, err := s.db.GetAll(ctx, s.db.Query(KindFollow).FilterField("owner", "=", owner).FilterField("member", "=", member).KeysOnly(), nil)
	if err != nil {
		return nil, fmt.Errorf("graph.ListsWith(%s, %s): %w", owner, member, err)
	}
	l := s.db.Lookup()
	ls := make([]List, len(keys))
	found := make([]store.Ref, len(keys))
	for i, k := range keys {
		found[i] = l.Add(ListKey(s.db, listOf(k)), &ls[i])
	}
	if err := l.Run(ctx); err != nil {
		return nil, fmt.Errorf("graph.ListsWith(%s, %s): %w", owner, member, err)
	}
	out := []ListView{}
	for i, k := range keys {
		if found[i].Found() && ls[i].Owner == owner {
			out = append(out, ls[i].view(listOf(k)))
		}
	}
	slices.SortFunc(out, func(a, b ListView) int { return strings.Compare(a.ID, b.ID) })
	return out, nil
}

// listOf returns the list a membership's key names.
func listOf(k *datastore.Key) string {
	reader, _, _ := strings.Cut(k.Name, "_")
	return strings.TrimPrefix(reader, readerPrefix)
}

// Members lists the members of owner's list id, newest first, as ids.
func (s *Service) Members(ctx context.Context, owner, id string, p store.PageRequest) ([]string, string, error) {
	if _, err := s.ownList(ctx, owner, id); err != nil {
		return nil, "", err
	}
	q := s.db.Query(KindFollow).FilterField("list", "=", Reader(id)).Order("-created").KeysOnly()
	return s.page(ctx, q, "members:"+id, p, func(_, member string) string { return member })
}

// UpdateList changes owner's list id as in says, and returns it. Making
// it exclusive, or not, changes which of its members the owner's home
// leaves out, at once.
func (s *Service) UpdateList(ctx context.Context, owner, id string, in ListInput) (ListView, error) {
	if err := in.check(false); err != nil {
		return ListView{}, err
	}
	cur, err := s.ownList(ctx, owner, id)
	if err != nil {
		return ListView{}, err
	}
	var members []string
	if in.Exclusive != nil && *in.Exclusive != cur.Exclusive {
		if members, err = s.allMembers(ctx, id); err != nil {
			return ListView{}, err
		}
	}
	var out ListView
	err = s.db.Update(ctx, func(tx *store.Tx) error {
		var l List
		lk := tx.Lookup()
		found, own := lk.Add(ListKey(s.db, id), &l), viewer.Read(lk, owner)
		if err := lk.Run(ctx); err != nil {
			return err
		}
		if !found.Found() || l.Owner != owner {
			return ErrNoSuchList
		}
		if in.Title != nil {
			l.Title = *in.Title
		}
		if in.RepliesPolicy != nil {
			l.RepliesPolicy = *in.RepliesPolicy
		}
		if in.Exclusive != nil && *in.Exclusive != l.Exclusive {
			l.Exclusive = *in.Exclusive
			if err := setExclusive(tx, own, id, members, l.Exclusive); err != nil {
				return err
			}
		}
		out = l.view(id)
		return tx.Put(ListKey(s.db, id), &l)
	})
	if err != nil {
		return ListView{}, fmt.Errorf("graph.UpdateList(%s): %w", id, err)
	}
	return out, nil
}

// setExclusive records on the owner's state (own, read in tx) that the
// members of list id leave their home (on) or no longer.
func setExclusive(tx *store.Tx, own *viewer.Ref, id string, members []string, on bool) error {
	st := own.Edit()
	for _, m := range members {
		if !st.SetExclusive(id, m, on) {
			return errTooExclusive
		}
	}
	return own.Save(tx)
}

// allMembers returns every member of list id (at most MaxListMembers),
// by a keys-only query.
func (s *Service) allMembers(ctx context.Context, id string) ([]string, error) {
	keys, err := s.db.GetAll(ctx, s.db.Query(KindFollow).FilterField("list", "=", Reader(id)).KeysOnly().Limit(MaxListMembers+1), nil)
	if err != nil {
		return nil, fmt.Errorf("graph: members of %s: %w", id, err)
	}
	out := make([]string, len(keys))
	for i, k := range keys {
		_, out[i], _ = strings.Cut(k.Name, "_")
	}
	return out, nil
}

// DeleteList deletes owner's list id: its members leave it, their copies
// removed by jobs, as RemoveFromList does.
func (s *Service) DeleteList(ctx context.Context, owner, id string) error {
	if _, err := s.ownList(ctx, owner, id); err != nil {
		return err
	}
	members, err := s.allMembers(ctx, id)
	if err != nil {
		return err
	}
	if err := s.RemoveFromList(ctx, owner, id, members); err != nil && !errors.Is(err, ErrNoSuchList) {
		return err
	}
	err = s.db.Update(ctx, func(tx *store.Tx) error {
		var l List
		if ok, err := tx.Get(ListKey(s.db, id), &l); err != nil || !ok || l.Owner != owner {
			return err
		}
		return tx.Delete(ListKey(s.db, id))
	})
	if err != nil {
		return fmt.Errorf("graph.DeleteList(%s): %w", id, err)
	}
	return nil
}

// AddToList adds people owner follows to owner's list id, without asking
// or telling them; each member's newest activities are copied to the
// list by the job a follow's would be (limit of them, as a follow's
// copyLimit). Adding a member again changes nothing.
func (s *Service) AddToList(ctx context.Context, owner, id string, members []string, copyLimit *int) error {
	limit, err := s.jobs.CopyLimit(copyLimit)
	if err != nil {
		return err
	}
	if _, err := s.ownList(ctx, owner, id); err != nil {
		return err
	}
	for _, m := range members {
		if err := s.addMember(ctx, owner, id, m, limit); err != nil {
			return err
		}
	}
	return nil
}

// addMember adds member to owner's list id.
func (s *Service) addMember(ctx context.Context, owner, id, member string, limit int) error {
	reader := Reader(id)
	var (
		seen      Index
		seenChunk Chunk
		hint      int
	)
	l := s.db.Lookup()
	already := l.Add(FollowKey(s.db, reader, member), &Follow{})
	l.Add(IndexKey(s.db, member), &seen)
	l.Then(func() {
		hint = seen.chunkFor()
		l.Add(seen.chunkKey(s.db, member, hint), &seenChunk)
	})
	if err := l.Run(ctx); err != nil {
		return fmt.Errorf("graph.AddToList(%s, %s): %w", id, member, err)
	}
	if already.Found() {
		return nil
	}
	n, err := s.db.Count(ctx, s.db.Query(KindFollow).FilterField("list", "=", reader).KeysOnly())
	if err != nil {
		return fmt.Errorf("graph.AddToList(%s, %s): %w", id, member, err)
	}
	if n >= MaxListMembers {
		return errFullList
	}
	created := s.now().UTC().Truncate(time.Microsecond)
	var expected []queue.Pending
	if limit > 0 {
		expected = append(expected, s.copying(reader, member, created.UnixMicro(), limit))
	}
	var jobs queue.Ahead
	err = jobs.Commit(ctx, expected, func() error {
		return s.db.Update(ctx, func(tx *store.Tx) error {
			var (
				list  List
				idx   Index
				ended pair.Ended
			)
			tl := tx.Lookup()
			found := tl.Add(ListKey(s.db, id), &list)
			exists := tl.Add(FollowKey(s.db, reader, member), &Follow{})
			follows := tl.Add(FollowKey(s.db, owner, member), &Follow{})
			person := accounts.Read(tl, member)
			between := blocks.ReadBetween(tl, owner, member)
			tl.Add(IndexKey(s.db, member), &idx)
			tl.Add(EndedKey(s.db, reader, member), &ended)
			own := viewer.Read(tl, owner)
			if err := tl.Run(ctx); err != nil {
				return err
			}
			switch {
			case !found.Found() || list.Owner != owner:
				return ErrNoSuchList // deleted meanwhile
			case !person.SeenBy(owner) || between.Any():
				return accounts.ErrNoSuchPerson // gone, suspended or a block either way: not there
			case exists.Found():
				return nil // added meanwhile
			case !follows.Found():
				return errNotFollowed
			}
			if list.Exclusive {
				if err := setExclusive(tx, own, id, []string{member}, true); err != nil {
					return err
				}
			}
			return s.join(tx, &Follow{Follower: reader, Followee: member, Owner: owner, Created: created}, idx, hint, seenChunk, &ended)
		})
	})
	if err != nil {
		return fmt.Errorf("graph.AddToList(%s, %s): %w", id, member, err)
	}
	return nil
}

// RemoveFromList takes people off owner's list id; the jobs that remove
// their copies from it are enqueued before the commit. Removing one who
// is not on it changes nothing.
func (s *Service) RemoveFromList(ctx context.Context, owner, id string, members []string) error {
	l, err := s.ownList(ctx, owner, id)
	if err != nil {
		return err
	}
	for start := 0; start < len(members); start += eraseBatch {
		part := members[start:min(start+eraseBatch, len(members))]
		if err := s.endMemberships(ctx, owner, id, part, l.Exclusive); err != nil {
			return fmt.Errorf("graph.RemoveFromList(%s): %w", id, err)
		}
	}
	return nil
}

// endMemberships ends the memberships of members in owner's list id, in
// one transaction, with their removal jobs enqueued before it.
func (s *Service) endMemberships(ctx context.Context, owner, id string, members []string, exclusive bool) error {
	reader, removal := Reader(id), s.now().UnixMicro()
	expected := make([]queue.Pending, len(members))
	for i, m := range members {
		expected[i] = s.removing(reader, m, removal)
	}
	var jobs queue.Ahead
	return jobs.Commit(ctx, expected, func() error {
		return s.db.Update(ctx, func(tx *store.Tx) error {
			l := tx.Lookup()
			fs := make([]Follow, len(members))
			found := make([]store.Ref, len(members))
			for i, m := range members {
				found[i] = l.Add(FollowKey(s.db, reader, m), &fs[i])
			}
			own := viewer.Read(l, owner)
			if err := l.Run(ctx); err != nil {
				return err
			}
			var ending []*Follow
			var left []string
			for i := range fs {
				if found[i].Found() {
					ending, left = append(ending, &fs[i]), append(left, members[i])
				}
			}
			if len(ending) == 0 {
				return nil
			}
			if exclusive {
				if err := setExclusive(tx, own, id, left, false); err != nil {
					return err
				}
			}
			return s.end(ctx, tx, ending, removal, false, nil)
		})
	})
}

// leaveLists takes followee off follower's lists, as an unfollow or a
// block of follower's ends their follow: the memberships found by one
// keys-only query, ended with their removal jobs.
func (s *Service) leaveLists(ctx context.Context, follower, followee string) error {
	keys, err := s.db.GetAll(ctx, s.db.Query(KindFollow).FilterField("owner", "=", follower).FilterField("member", "=", followee).KeysOnly(), nil)
	if err != nil || len(keys) == 0 {
		return err
	}
	for _, k := range keys {
		id := listOf(k)
		var l List
		if ok, err := s.db.Get(ctx, ListKey(s.db, id), &l); err != nil {
			return err
		} else if ok && l.Owner != follower {
			continue
		}
		if err := s.endMemberships(ctx, follower, id, []string{followee}, l.Exclusive); err != nil {
			return err
		}
	}
	return nil
}

// EraseLists ends up to n memberships of a deleted person, as a member
// and as an owner (with the removal of their copies), and then deletes
// their lists; it returns how many it ended or deleted.
func (s *Service) EraseLists(ctx context.Context, user string, n int) (int, error) {
	done := 0
	for _, field := range []string{"member", "owner"} {
		q := s.db.Query(KindFollow).FilterField(field, "=", user).KeysOnly()
		k, err := s.db.Drain(ctx, q, n-done, eraseBatch, func(keys []*datastore.Key) error {
			for _, key := range keys {
				_, member, _ := strings.Cut(key.Name, "_")
				var f Follow
				var l List
				lk := s.db.Lookup()
				got, list := lk.Add(key, &f), lk.Add(ListKey(s.db, listOf(key)), &l)
				if err := lk.Run(ctx); err != nil || !got.Found() {
					return err
				}
				// An erased owner's state is gone: none to edit.
				exclusive := list.Found() && l.Exclusive && field == "member"
				if err := s.endMemberships(ctx, f.Owner, listOf(key), []string{member}, exclusive); err != nil {
					return err
				}
			}
			return nil
		})
		if done += k; err != nil {
			return done, fmt.Errorf("graph.EraseLists(%s): %w", user, err)
		}
		if done >= n {
			return done, nil
		}
	}
	k, err := s.db.DeleteWhere(ctx, KindList, []string{"owner"}, user, n-done)
	return done + k, err
}

// ReachesAmong returns which of candidates (people, and lists' readers)
// a reply to followee reaches at home or in a list, read outside any
// transaction: a person if they follow followee (FollowersAmong); a list
// as its RepliesPolicy says: if followee is a member ("list"), if its
// owner follows followee ("followed"), never ("none").
func ReachesAmong(ctx context.Context, db *store.DB, followee string, candidates []string) (map[string]bool, error) {
	var people, lists []string
	for _, c := range candidates {
		if IsReader(c) {
			lists = append(lists, c)
		} else {
			people = append(people, c)
		}
	}
	out, err := FollowersAmong(ctx, db, followee, people)
	if err != nil || len(lists) == 0 {
		return out, err
	}
	l := db.Lookup()
	ties := make([]*Tie, len(lists))
	for i, r := range lists {
		ties[i] = Reaches(l, r, followee)
	}
	if err := l.Run(ctx); err != nil {
		return nil, fmt.Errorf("graph.ReachesAmong(%s): %w", followee, err)
	}
	for i, r := range lists {
		if ties[i].Found() {
			out[r] = true
		}
	}
	return out, nil
}

// Tie says, once its lookup has run, whether a follower (a person, or a
// list's reader) takes followee's replies to others: Follows for a
// person; a list's RepliesPolicy for a list.
type Tie struct {
	ref  store.Ref
	none bool
}

// Found reports whether the tie holds.
func (t *Tie) Found() bool { return !t.none && t.ref.Found() }

// Reaches adds to a lookup whether follower takes followee's replies to
// others (see Tie): for a list, its list first, and then, in a further
// round, the follow its policy names.
func Reaches(l *store.Lookup, follower, followee string) *Tie {
	t := &Tie{}
	if !IsReader(follower) {
		t.ref = Follows(l, follower, followee)
		return t
	}
	var list List
	found := l.Add(ListKey(l.DB(), strings.TrimPrefix(follower, readerPrefix)), &list)
	l.Then(func() {
		switch {
		case !found.Found(), list.RepliesPolicy == RepliesNone:
			t.none = true
		case list.RepliesPolicy == RepliesFollowed:
			t.ref = Follows(l, list.Owner, followee)
		default:
			t.ref = Follows(l, follower, followee)
		}
	})
	return t
}
