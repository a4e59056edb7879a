package notifications

import (
	"context"
	"fmt"
	"slices"
	"socialstream/internal/accounts"
	"socialstream/internal/blocks"
	"socialstream/internal/derrors"
	"socialstream/internal/filters"
	"socialstream/internal/mutes"
	"socialstream/internal/order"
	"socialstream/internal/policy"
	"socialstream/internal/store"
	"socialstream/internal/viewer"
	"strconv"
	"strings"
	"time"

	"cloud.google.com/go/datastore"
)

// Reading one's notifications: the list, newest first; the unread count;
// the grouped list; marking them read. What a reader may not see (an
// actor suspended, gone, blocked or muted, an activity a filter hides)
// is left out of each, and of each count.

// Query asks for a page of a person's notifications.
type Query struct {
	Page store.PageRequest
	// Since, if set, keeps those newer than the notification of this seq
	// (Mastodon's since_id), by the query's range.
	Since int64
	// Types, if any, keeps those of these types alone.
	Types []string
	// Uncounted: the caller shows no unread count, and List counts none
	// (0), which saves it a query.
	Uncounted bool
}

// maxScan bounds what one page reads to fill itself past what it leaves
// out: the kept list, and as many again (those made since it was pruned).
const maxScan = 2 * MaxKept

// List returns a page of user's notifications, newest first, and how many
// are unread. What the reader may not see, and what is not of q's types,
// is left out by the page's decision (shown), and the page reads on, a
// range at a time, until it holds q.Page.Count or the list ends (at most
// maxScan read): a page is short only at the end of the list.
func (s *Service) List(ctx context.Context, user string, q Query) ([]View, int64, string, error) {
	tag := "notifications:" + user // as Below writes it
	from, err := order.DecodeCursor(tag, q.Page.Cursor)
	if err != nil {
		return nil, 0, "", err
	}
	var out []View
	var own *viewer.Ref
	offset, more, scanned := q.Page.Offset, true, 0
	for more && len(out) < q.Page.Count && scanned < maxScan {
		want := q.Page.Count - len(out)
		// Keys alone, and the notifications through the instance's
		// cache, when there is one.
		cached := s.db.Cache() != nil
		qs := s.newest(user, q.Since, from)
		if cached {
			qs[0] = qs[0].KeysOnly()
		}
		keys, vals, last, m, err := order.Page[Notification](ctx, s.db, qs, cached, placeOf, want, offset)
		read := len(keys)
		if err == nil && cached {
			keys, vals, last, err = s.loadPage(ctx, keys)
		}
		if err != nil {
			return nil, 0, "", fmt.Errorf("notifications.List(%s): %w", user, err)
		}
		offset, more, scanned = 0, m, scanned+read
		if len(vals) > 0 {
			from = last
		}
		shown, o, err := s.shown(ctx, user, keys, vals, q.Types, cached)
		if err != nil {
			return nil, 0, "", err
		}
		out, own = append(out, shown...), o
	}
	next := ""
	if more {
		next = order.EncodeCursor(tag, from)
	}
	if q.Uncounted {
		if out == nil {
			out = []View{}
		}
		return out, 0, next, nil
	}
	unread, err := s.unreadOf(ctx, user, own)
	if err != nil {
		return nil, 0, "", err
	}
	if out == nil {
		out = []View{}
	}
	return out, unread, next, nil
}

// unreadOf counts user's unread notifications (unread), with their state
// own as a page read it, or, if it read none (an empty page), as read
// now, through the instance's cache as a page reads it: an app asks for
// the count every few minutes, and the state it needs (whom its reader
// hides) changes far less often. It takes an ask for changes begun up to
// UnreadLag before it, so that it seldom asks for itself.
//
// The count is kept beside the page's entities (store.DB.KeptCount):
// every write of a notification of user's or of their state drops it,
// as it drops them, so an app's next ask finds it kept unless something
// it is made of changed; a count that reads the notifications (a state
// past its bounds, a keyword filter) is not kept.
func (s *Service) unreadOf(ctx context.Context, user string, own *viewer.Ref) (int64, error) {
	return s.db.KeptCount(ctx, unreadName(user), UnreadLag, func(ctx context.Context) (store.Count, error) {
		if own == nil {
			l := s.db.PageLookup().Lagging(UnreadLag)
			own = viewer.Read(l, user)
			if err := l.Run(ctx); err != nil {
				return store.Count{}, fmt.Errorf("notifications: the state of %s: %w", user, err)
			}
		}
		return s.unread(ctx, user, own)
	})
}

// keptUnread names the counts of unread notifications the page cache
// keeps (store.DB.KeptCount), as if a kind: no entity has it.
const keptUnread = "UnreadCount"

// unreadName is the name user's count of unread notifications is kept
// under.
func unreadName(user string) string { return "/" + keptUnread + "," + user }

// Derived is the page cache's store.CacheConfig.Derived for the counts of
// unread notifications: a write of a notification (named by its
// recipient: Key) or of a person's state (whom they hide) changes its
// person's count.
func Derived(name string) string {
	if rest, ok := strings.CutPrefix(name, "/"+Kind+","); ok {
		if user, _, ok := strings.Cut(rest, "_"); ok && user != "" && !strings.Contains(user, "/") {
			return unreadName(user)
		}
		return ""
	}
	if user, ok := viewer.OwnerOf(name); ok {
		return unreadName(user)
	}
	return ""
}

// loadPage reads the notifications at keys (a page's, by a keys-only
// query) through the instance's cache, and returns those still there and
// the place of the last.
func (s *Service) loadPage(ctx context.Context, keys []*datastore.Key) ([]*datastore.Key, []Notification, order.Place, error) {
	l := s.db.PageLookup()
	ns := make([]Notification, len(keys))
	refs := make([]store.Ref, len(keys))
	for i, k := range keys {
		refs[i] = l.Add(k, &ns[i])
	}
	if err := l.Run(ctx); err != nil {
		return nil, nil, order.Place{}, err
	}
	var found []*datastore.Key
	var vals []Notification
	for i := range keys {
		if refs[i].Found() && !ns[i].Dismissed {
			found, vals = append(found, keys[i]), append(vals, ns[i])
		}
	}
	var last order.Place
	if n := len(vals); n > 0 {
		last = placeOf(found[n-1], &vals[n-1])
	}
	return found, vals, last, nil
}

// PageKinds are the kinds of this package's that pages read through the
// instance's cache (store.Cache): notifications.
func PageKinds() []string { return []string{Kind} }

// shown decides which of ns user is shown, of types (all, if none), and
// returns them as views with user's state as read with their actors
// (through the instance's cache, if cached: for a page of the list).
func (s *Service) shown(ctx context.Context, user string, keys []*datastore.Key, ns []Notification, types []string, cached bool) ([]View, *viewer.Ref, error) {
	people, hidden, own, err := s.actors(ctx, user, ns, cached)
	if err != nil {
		return nil, nil, err
	}
	hide, warn, err := s.filter(ctx, user, own, ns)
	if err != nil {
		return nil, nil, err
	}
	out := make([]View, 0, len(ns))
	for i, n := range ns {
		if hidden[n.ActorID] || n.Withheld || hide[n.ActivityID] || len(types) > 0 && !slices.Contains(types, n.Type) {
			continue // from before a block, withheld, filtered out, or not asked for
		}
		v := View{ID: keys[i].Name, Seq: n.Seq, Type: n.Type, ActivityID: n.ActivityID, GroupID: n.GroupID, ActionID: n.ActionID,
			Published: n.Published.UTC().Format(time.RFC3339), Read: n.Read}
		if a, ok := people[n.ActorID]; ok {
			v.Actor = &a
		}
		v.Filtered = warn[n.ActivityID]
		out = append(out, v)
	}
	return out, own, nil
}

// ErrNoSuchNotification answers for a notification that is not there for
// its reader: never made, pruned, dismissed, or hidden from them.
var ErrNoSuchNotification = derrors.New(derrors.NotFound, "no such notification")

// find returns the key of user's notification id: its id (as List
// shows it) or its seq in decimal (Mastodon's id, which one keys-only
// range of their places finds). ErrNoSuchNotification if there is none of
// theirs.
func (s *Service) find(ctx context.Context, user, id string) (*datastore.Key, error) {
	if strings.HasPrefix(id, user+"_") && len(id) <= 500 {
		return s.db.NameKey(Kind, id, nil), nil
	}
	seq, err := strconv.ParseInt(id, 10, 64)
	if err != nil || seq <= 0 {
		return nil, ErrNoSuchNotification
	}
	keys, err := s.db.GetAll(ctx, s.newest(user, seq-1, order.Place{Seq: seq + 1})[0].Limit(1).KeysOnly(), nil)
	if err != nil {
		return nil, fmt.Errorf("notifications: %s's %d: %w", user, seq, err)
	}
	if len(keys) == 0 {
		return nil, ErrNoSuchNotification
	}
	return keys[0], nil
}

// One returns user's notification id (its id or seq: find), as List
// would show it: ErrNoSuchNotification if it is not in their list or List
// leaves it out.
func (s *Service) One(ctx context.Context, user, id string) (View, error) {
	key, err := s.find(ctx, user, id)
	if err != nil {
		return View{}, err
	}
	v, p, err := s.read(ctx, user, key)
	if err == nil && p != Shown {
		err = ErrNoSuchNotification
	}
	return v, err
}

// Presence says whether a notification is there for its reader.
type Presence int

// Presences.
const (
	Absent Presence = iota // not made, or not yet
	Hidden                 // made, and dismissed, or not for the reader to see now
	Shown                  // in the reader's list
)

// Told returns user's notification of event, and whether it is there
// for them as List would show it: for what follows a notification on
// (a push), which waits for it while it is Absent.
func (s *Service) Told(ctx context.Context, user, event string) (View, Presence, error) {
	return s.read(ctx, user, Key(s.db, user, event))
}

// Hides reports whether user's notifications of actor are kept from them
// now, as List decides it: a block either way, a mute, the actor gone or
// suspended. For what waits for a notification that may never be made:
// one of someone hidden is not.
func (s *Service) Hides(ctx context.Context, user, actor string) (bool, error) {
	if actor == "" {
		return false, nil
	}
	_, hidden, _, err := s.actors(ctx, user, []Notification{{ActorID: actor}}, false)
	return hidden[actor], err
}

func (s *Service) read(ctx context.Context, user string, key *datastore.Key) (View, Presence, error) {
	var n Notification
	if ok, err := s.db.Get(ctx, key, &n); err != nil {
		return View{}, Absent, fmt.Errorf("notifications: %s of %s: %w", key.Name, user, err)
	} else if !ok || n.UserID != user {
		return View{}, Absent, nil
	} else if n.Dismissed {
		return View{}, Hidden, nil
	}
	vs, _, err := s.shown(ctx, user, []*datastore.Key{key}, []Notification{n}, nil, false)
	if err != nil || len(vs) == 0 {
		return View{}, Hidden, err
	}
	return vs[0], Shown, nil
}

// Unread returns how many of user's notifications are unread, as their
// list would show them: in one lookup (the reader's state) and one count
// of the index (billed a read per 1,000 counted), or one count more per
// 30 people hidden past the first 10.
func (s *Service) Unread(ctx context.Context, user string) (int64, error) {
	return s.unreadOf(ctx, user, nil)
}

// UnreadLag is how late a change of a reader's state made on another
// instance (a block, a mute, a filter) may reach their unread count:
// later than a page's (store.CacheConfig.Share), by so much that a count
// on a busy instance takes a page's ask for changes, and bills its count
// alone.
const UnreadLag = 2 * time.Second

// UnreadGroups returns how many of user's notifications are unread, and
// in how many groups (as Grouped groups them), reading the unread ones.
func (s *Service) UnreadGroups(ctx context.Context, user string) (int64, int, error) {
	l := s.db.PageLookup().Lagging(UnreadLag)
	own := viewer.Read(l, user)
	if err := l.Run(ctx); err != nil {
		return 0, 0, fmt.Errorf("notifications.UnreadGroups(%s): %w", user, err)
	}
	return s.readUnread(ctx, user, own)
}

// maxNotIn is how many values a not-in filter takes (Datastore's limit),
// and maxIn an in filter.
const (
	maxNotIn = 10
	maxIn    = 30
)

// unread counts user's unread notifications that the list shows: not
// withheld (their actor suspended) and not from anyone user's state
// (own) says is hidden from them. A count of the index answers: with a
// not-in filter of the hidden when they are 10 or fewer, else the count
// of all less a count of each 30 of them. A state that does not know
// whom its owner hides (one past its bounds), or a keyword filter that
// hides notifications, has the unread read (and the activities they are
// about, for the filter).
//
// The count is Volatile when it read the notifications, else kept
// until the first of the mutes that hide someone ends.
func (s *Service) unread(ctx context.Context, user string, own *viewer.Ref) (store.Count, error) {
	now := s.now()
	if !own.KnowsPeople() || filters.Active(own.Filters(), filters.Notifications, now).Hides() {
		n, _, err := s.readUnread(ctx, user, own)
		return store.Count{N: n, Volatile: true}, err
	}
	q := s.db.Query(Kind).FilterField("userId", "=", user).FilterField("read", "=", false).FilterField("withheld", "=", false)
	hidden := own.Hidden(now)
	kept := store.Count{Until: own.MutesEnd(now)}
	if len(hidden) > 0 && len(hidden) <= maxNotIn {
		n, err := s.db.Count(ctx, q.FilterField("actorId", "not-in", anys(hidden)))
		if err != nil {
			return store.Count{}, fmt.Errorf("notifications.unread(%s): %w", user, err)
		}
		kept.N = n
		return kept, nil
	}
	n, err := s.db.Count(ctx, q)
	if err != nil {
		return store.Count{}, fmt.Errorf("notifications.unread(%s): %w", user, err)
	}
	for start := 0; start < len(hidden) && n > 0; start += maxIn {
		h, err := s.db.Count(ctx, q.FilterField("actorId", "in", anys(hidden[start:min(start+maxIn, len(hidden))])))
		if err != nil {
			return store.Count{}, fmt.Errorf("notifications.unread(%s): %w", user, err)
		}
		n -= h
	}
	kept.N = max(0, n)
	return kept, nil
}

func anys(ss []string) []any {
	out := make([]any, len(ss))
	for i, v := range ss {
		out[i] = v
	}
	return out
}

// readUnread reads user's unread notifications and counts those shown,
// and the groups they fall in, with their actors' blocks and mutes
// should user's state (own) not know them, and the texts of what they
// are about should a keyword filter of user's hide some.
func (s *Service) readUnread(ctx context.Context, user string, own *viewer.Ref) (int64, int, error) {
	q := s.db.Query(Kind).FilterField("userId", "=", user).FilterField("read", "=", false)
	var ns []Notification
	keys, err := s.db.GetAll(ctx, q, &ns)
	if err != nil {
		return 0, 0, fmt.Errorf("notifications.readUnread(%s): %w", user, err)
	}
	// A lookup of nothing when the state knows (it makes no call).
	l := s.db.Lookup()
	hide := s.readHidden(l, user, ns, own)
	if err := l.Run(ctx); err != nil {
		return 0, 0, fmt.Errorf("notifications.readUnread(%s): %w", user, err)
	}
	hidden := hide()
	filtered, _, err := s.filter(ctx, user, own, ns)
	if err != nil {
		return 0, 0, err
	}
	count, seen := int64(0), map[string]bool{}
	for i, n := range ns {
		if !hidden[n.ActorID] && !n.Withheld && !filtered[n.ActivityID] {
			count++
			seen[groupKey(keys[i].Name, &n)] = true
		}
	}
	return count, len(seen), nil
}

// MaxGroupActors is how many of a group's actors, the latest first, a
// grouped list shows.
const MaxGroupActors = 3

// Group is notifications of one kind about one thing, after Mastodon's
// grouped notifications: the likes of one activity, its reposts, the
// follows; any other notification is a group of its own.
type Group struct {
	Key        string `json:"groupKey"`
	Type       string `json:"type"`
	ActivityID string `json:"activityId,omitempty"`
	GroupID    string `json:"groupId,omitempty"`
	// Count is how many notifications it holds, of the ones kept.
	Count int `json:"count"`
	// Actors are the latest few, newest first.
	Actors    []accounts.Person `json:"actors"`
	Published string            `json:"published"` // of the newest
	Read      bool              `json:"read"`      // every one of them
	// IDs are its notifications', newest first: mark-read takes them.
	IDs []string `json:"ids"`
	// Newest and Oldest are the places of its newest and oldest
	// notifications: Mastodon's face names them so.
	Newest, Oldest int64 `json:"-"`
}

// groupKey is what groups n (whose key's name is id) with others.
func groupKey(id string, n *Notification) string {
	switch n.Type {
	case Like, Repost:
		return n.Type + ":" + n.ActivityID
	case Follow:
		return Follow
	}
	return "ungrouped:" + id
}

// GroupQuery asks for a page of a person's grouped notifications: count
// groups from offset, of those whose newest notification is below Below
// and above Since (0: no bound) and of Types (all, if none).
type GroupQuery struct {
	Offset, Count int
	Below, Since  int64
	Types         []string
}

// Grouped returns a page of user's kept notifications as groups, newest
// group first (by its newest notification), with how many groups q
// finds, how many of all hold an unread one, and whether more follow the
// page. Every notification kept is read at once (at most MaxKept, and
// those a pruning job has yet to drop) and grouped in memory: groups span
// the whole list, so no page can split one, and a page of q.Count is full
// whenever that many groups are there.
func (s *Service) Grouped(ctx context.Context, user string, q GroupQuery) ([]Group, int, int, bool, error) {
	groups, unread, err := s.grouped(ctx, user)
	if err != nil {
		return nil, 0, 0, false, err
	}
	var found []*Group
	for _, g := range groups {
		if q.Below > 0 && g.Newest >= q.Below || g.Newest <= q.Since || len(q.Types) > 0 && !slices.Contains(q.Types, g.Type) {
			continue
		}
		found = append(found, g)
	}
	out := []Group{}
	for _, g := range found[min(q.Offset, len(found)):min(q.Offset+q.Count, len(found))] {
		out = append(out, *g)
	}
	return out, len(found), unread, q.Offset+q.Count < len(found), nil
}

// grouped returns all of user's kept notifications as groups, newest
// first, and how many hold an unread one.
func (s *Service) grouped(ctx context.Context, user string) ([]*Group, int, error) {
	keys, ns, _, _, err := order.Page[Notification](ctx, s.db, s.newest(user, 0, order.Place{}), false, placeOf, 2*MaxKept, 0)
	if err != nil {
		return nil, 0, fmt.Errorf("notifications.Grouped(%s): %w", user, err)
	}
	people, hidden, own, err := s.actors(ctx, user, ns, false)
	if err != nil {
		return nil, 0, err
	}
	hide, _, err := s.filter(ctx, user, own, ns)
	if err != nil {
		return nil, 0, err
	}
	var groups []*Group
	byKey := map[string]*Group{}
	unread := 0
	for i, n := range ns {
		if hidden[n.ActorID] || n.Withheld || hide[n.ActivityID] {
			continue // from before a block or mute, withheld, or filtered out
		}
		k := groupKey(keys[i].Name, &n)
		g := byKey[k]
		if g == nil {
			g = &Group{Key: k, Type: n.Type, ActivityID: n.ActivityID, GroupID: n.GroupID,
				Published: n.Published.UTC().Format(time.RFC3339), Read: true, Actors: []accounts.Person{}, Newest: n.Seq}
			byKey[k] = g
			groups = append(groups, g)
		}
		g.Count++
		g.IDs = append(g.IDs, keys[i].Name)
		g.Oldest = n.Seq
		if p, ok := people[n.ActorID]; ok && len(g.Actors) < MaxGroupActors &&
			!slices.ContainsFunc(g.Actors, func(a accounts.Person) bool { return a.ID == p.ID }) {
			g.Actors = append(g.Actors, p)
		}
		if !n.Read {
			if g.Read {
				unread++
			}
			g.Read = false
		}
	}
	return groups, unread, nil
}

// actors reads the actors of user's notifications ns in one lookup, with
// user's own state (package viewer), which says whom user blocks, is
// blocked by or mutes (or, should it not know, the blocks and mutes
// between user and each actor, by key): it returns the actors that exist,
// and those whose notifications from before are not shown.
func (s *Service) actors(ctx context.Context, user string, ns []Notification, cached bool) (map[string]accounts.Person, map[string]bool, *viewer.Ref, error) {
	l := s.db.Lookup()
	if cached {
		l = s.db.PageLookup()
	}
	own := viewer.Read(l, user)
	recs := map[string]*accounts.Record{}
	for _, n := range ns {
		if recs[n.ActorID] == nil && n.ActorID != "" {
			recs[n.ActorID] = accounts.Read(l, n.ActorID)
		}
	}
	hide := s.readHidden(l, user, ns, own)
	if err := l.Run(ctx); err != nil {
		return nil, nil, nil, fmt.Errorf("notifications: actors of %s: %w", user, err)
	}
	people := map[string]accounts.Person{}
	hidden := hide()
	for id, r := range recs {
		if p, ok := r.Person(); ok {
			people[id] = p
		}
		if !policy.SeeNotification(user, r.Account(), policy.Ties{}, nil, policy.Account{}, policy.Ties{}) {
			hidden[id] = true // what a suspended or gone person did is not there
		}
	}
	return people, hidden, own, nil
}

// filter applies the reader's keyword filters of the notifications
// context (from their state own) to the activities ns are about (those
// of others: one's own are never filtered): the
// activities a filter hides, and the filters that warn of each. Their
// texts are read, in one batch lookup, only when such a filter is active.
func (s *Service) filter(ctx context.Context, user string, own *viewer.Ref, ns []Notification) (hide map[string]bool, warn map[string][]filters.Match, err error) {
	set := filters.Active(own.Filters(), filters.Notifications, s.now())
	if set == nil || s.cfg.Activities == nil {
		return nil, nil, nil
	}
	var idList []string
	for _, n := range ns {
		if n.ActivityID != "" && !slices.Contains(idList, n.ActivityID) {
			idList = append(idList, n.ActivityID)
		}
	}
	if len(idList) == 0 {
		return nil, nil, nil
	}
	texts, err := s.cfg.Activities.Texts(ctx, user, idList)
	if err != nil {
		return nil, nil, fmt.Errorf("notifications: filtered activities: %w", err)
	}
	hide, warn = map[string]bool{}, map[string][]filters.Match{}
	for id, t := range texts {
		h, w := set.Apply(t...)
		hide[id], warn[id] = h, w
	}
	return hide, warn, nil
}

// readHidden adds to a lookup what tells whose notifications of ns are
// kept from user: nothing more if user's state own knows (read in the same
// lookup, or before), else the blocks and mutes between user and each
// actor. The function it returns answers once the lookup has run.
func (s *Service) readHidden(l *store.Lookup, user string, ns []Notification, own *viewer.Ref) func() map[string]bool {
	between := map[string]*blocks.Between{}
	muted := map[string]*mutes.Ref{}
	add := func() {
		if own.KnowsPeople() {
			return
		}
		for _, n := range ns {
			if between[n.ActorID] == nil && n.ActorID != "" {
				between[n.ActorID], muted[n.ActorID] = blocks.ReadBetween(l, user, n.ActorID), mutes.Read(l, user, n.ActorID)
			}
		}
	}
	if own != nil {
		l.Then(add) // once the state says whether it knows
	} else {
		add()
	}
	return func() map[string]bool {
		hidden := map[string]bool{}
		now := s.now()
		for _, n := range ns {
			if own.KnowsPeople() {
				hidden[n.ActorID] = own.Hides(n.ActorID, now)
			} else if b := between[n.ActorID]; b != nil {
				hidden[n.ActorID] = b.Any() || muted[n.ActorID].ActiveAt(now)
			}
		}
		return hidden
	}
}

// ReadThrough marks read user's notifications up to the one at seq (a
// notifications marker moved there: Mastodon counts unread only what is
// newer): one keys-only range of the unread ones' places.
func (s *Service) ReadThrough(ctx context.Context, user string, seq int64) error {
	if seq <= 0 {
		return nil
	}
	q := order.Range(s.db.Query(Kind).FilterField("read", "=", false), orderProp, user, 0, order.Place{Seq: seq + 1}).KeysOnly()
	keys, err := s.db.GetAll(ctx, q, nil)
	if err != nil {
		return fmt.Errorf("notifications.ReadThrough(%s): %w", user, err)
	}
	if len(keys) == 0 {
		return nil
	}
	if _, err := s.edit(ctx, user, keys, markRead); err != nil {
		return fmt.Errorf("notifications.ReadThrough(%s): %w", user, err)
	}
	return nil
}

// markRead marks a notification read: nil if it was.
func markRead(n *Notification) *Notification {
	if n.Read {
		return nil
	}
	n.Read = true
	return n
}

// MarkRead marks user's notifications read: those with the given ids, or
// all of them. Ids of other users' notifications are ignored.
func (s *Service) MarkRead(ctx context.Context, user string, idList []string, all bool) error {
	var keys []*datastore.Key
	switch {
	case all && len(idList) > 0:
		return derrors.New(derrors.InvalidArgument, `give "ids" or "all", not both`)
	case all:
		var err error
		keys, err = s.db.GetAll(ctx, s.db.Query(Kind).FilterField("userId", "=", user).FilterField("read", "=", false).KeysOnly(), nil)
		if err != nil {
			return fmt.Errorf("notifications.MarkRead: %w", err)
		}
	case len(idList) == 0:
		return derrors.New(derrors.InvalidArgument, `give "ids" (a non-empty list) or "all": true`)
	case len(idList) > MaxReadIDs:
		return derrors.New(derrors.InvalidArgument, fmt.Sprintf("at most %d ids at once", MaxReadIDs))
	default:
		for _, id := range idList {
			if !strings.HasPrefix(id, user+"_") || len(id) > 500 {
				continue // not the caller's
			}
			keys = append(keys, s.db.NameKey(Kind, id, nil))
		}
	}
	if len(keys) == 0 {
		return s.db.CheckGuard(ctx) // nothing to mark: refused all the same
	}
	_, err := s.edit(ctx, user, keys, markRead)
	if err != nil {
		return fmt.Errorf("notifications.MarkRead: %w", err)
	}
	return nil
}
