// Package groups owns groups (lists) and their members.
//
// Entities:
//
//   - Group/{id}: title, description, owner, join policy, member count.
//
//   - Membership/{groupId}_{userId}: one member, for member lists and a
//     user's groups (queries on groupId or userId, newest first).
//
//   - UserGroups/{userId}: the ids of the groups a user belongs to, read by
//     key when the user posts, so a post copies its author's groups without
//     a query.
//
//   - MembershipEnded/{groupId}_{userId}: the pair's history (pair.Ended)
//     that the rebuild jobs read.
//
// A join or a leave is one operation with all its side effects, updating
// all of them in one transaction: the rebuild job (Jobs, enqueued before
// the commit) and the owner's notification of a join (written in the same
// transaction). Other packages read groups through the functions here
// that add to their lookups.
package groups

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"cloud.google.com/go/datastore"

	"socialstream/internal/accounts"
	"socialstream/internal/derrors"
	"socialstream/internal/ids"
	"socialstream/internal/notifications"
	"socialstream/internal/pair"
	"socialstream/internal/store"
)

// Kinds of the entities this package owns.
const (
	KindGroup      = "Group"
	KindMembership = "Membership"
	KindUserGroups = "UserGroups"
	KindEnded      = "MembershipEnded"
)

// Limits.
const (
	MaxTitle       = 100
	MaxDescription = 1000
	// MaxGroupsPerUser bounds the group ids copied onto each activity, and so
	// its index entries (see activities.AudienceChunkSize).
	MaxGroupsPerUser = 100
)

// Join policies.
const (
	Open   = "open"
	Closed = "closed"
)

var (
	ErrNoSuchGroup   = derrors.New(derrors.NotFound, "no such group")
	ErrClosed        = derrors.New(derrors.PermissionDenied, "this group is closed: only its owner adds members")
	ErrNotOwner      = derrors.New(derrors.PermissionDenied, "only the group's owner may do that")
	ErrMembersOnly   = derrors.New(derrors.PermissionDenied, "this group is closed: only its members see it")
	ErrOwnerLeaves   = derrors.New(derrors.Conflict, "the owner cannot leave the group")
	ErrTooManyGroups = derrors.New(derrors.Conflict, fmt.Sprintf("a user belongs to at most %d groups", MaxGroupsPerUser))
)

// Group is the stored group.
type Group struct {
	Title        string    `datastore:"title,noindex"`
	Description  string    `datastore:"description,noindex"`
	OwnerID      string    `datastore:"ownerId,noindex"`
	JoinPolicy   string    `datastore:"joinPolicy,noindex"`
	MembersCount int64     `datastore:"membersCount,noindex"`
	Created      time.Time `datastore:"created,noindex"`
}

// Membership is one member of a group.
type Membership struct {
	GroupID string    `datastore:"groupId"`
	UserID  string    `datastore:"userId"`
	Created time.Time `datastore:"created"`
}

// EndedKey returns the key of user's history with group.
func EndedKey(db *store.DB, group, user string) *datastore.Key {
	return db.NameKey(KindEnded, group+"_"+user, nil)
}

// UserGroups lists the groups of a user.
type UserGroups struct {
	GroupIDs []string `datastore:"groupIds,noindex"`
}

// View is a group as the API shows it.
type View struct {
	ID           string `json:"id"`
	Title        string `json:"title"`
	Description  string `json:"description"`
	OwnerID      string `json:"ownerId"`
	JoinPolicy   string `json:"joinPolicy"`
	MembersCount int64  `json:"membersCount"`
}

// ToView converts a stored group.
func ToView(id string, g *Group) View {
	return View{ID: id, Title: g.Title, Description: g.Description, OwnerID: g.OwnerID, JoinPolicy: g.JoinPolicy, MembersCount: g.MembersCount}
}

// Jobs are the jobs a change of membership needs, enqueued before it
// commits (package rebuild).
type Jobs interface {
	// Joined enqueues the copying of group onto user's newest
	// activities, for the membership of generation gen.
	Joined(ctx context.Context, group, user string, gen int64) error
	// Left enqueues the removal of group from user's activities, named
	// removal.
	Left(ctx context.Context, group, user string, removal int64) error
}

// Service manages groups.
type Service struct {
	db    *store.DB
	ids   *ids.Generator
	notes *notifications.Service
	jobs  Jobs
	now   func() time.Time
}

// New returns a Service.
func New(db *store.DB, gen *ids.Generator, notes *notifications.Service, jobs Jobs) (*Service, error) {
	if db == nil || gen == nil || notes == nil || jobs == nil {
		return nil, errors.New("groups.New: nil dependency")
	}
	return &Service{db: db, ids: gen, notes: notes, jobs: jobs, now: time.Now}, nil
}

// GroupKey returns a group's key.
func GroupKey(db *store.DB, id string) *datastore.Key { return db.NameKey(KindGroup, id, nil) }

// MembershipKey returns the key of user's membership of group.
func MembershipKey(db *store.DB, group, user string) *datastore.Key {
	return db.NameKey(KindMembership, group+"_"+user, nil)
}

// UserGroupsKey returns the key of user's group list.
func UserGroupsKey(db *store.DB, user string) *datastore.Key {
	return db.NameKey(KindUserGroups, user, nil)
}

func cleanText(field, s string, max int, required bool) (string, error) {
	s = strings.TrimSpace(s)
	if required && s == "" {
		return "", derrors.New(derrors.InvalidArgument, field+" is required")
	}
	if !utf8.ValidString(s) || utf8.RuneCountInString(s) > max {
		return "", derrors.New(derrors.InvalidArgument, fmt.Sprintf("%s must be at most %d characters", field, max))
	}
	if strings.ContainsFunc(s, func(r rune) bool { return unicode.IsControl(r) && r != '\n' && r != '\t' }) {
		return "", derrors.New(derrors.InvalidArgument, field+" must not contain control characters")
	}
	return s, nil
}

// Create makes a group owned by owner, who becomes its first member.
func (s *Service) Create(ctx context.Context, owner, title, description, policy string) (View, error) {
	title, err := cleanText("title", title, MaxTitle, true)
	if err != nil {
		return View{}, err
	}
	if description, err = cleanText("description", description, MaxDescription, false); err != nil {
		return View{}, err
	}
	if policy == "" {
		policy = Open
	}
	if policy != Open && policy != Closed {
		return View{}, derrors.New(derrors.InvalidArgument, `joinPolicy must be "open" or "closed"`)
	}
	id := s.ids.NextString()
	g := &Group{Title: title, Description: description, OwnerID: owner, JoinPolicy: policy, MembersCount: 1, Created: s.now().UTC().Truncate(time.Microsecond)}
	err = s.db.Update(ctx, func(tx *store.Tx) error {
		var ug UserGroups
		var existing Group
		l := tx.Lookup()
		l.Add(UserGroupsKey(s.db, owner), &ug)
		u := accounts.Read(l, owner)
		taken := l.Add(GroupKey(s.db, id), &existing)
		if err := l.Run(ctx); err != nil {
			return err
		}
		if !u.Exists() {
			return accounts.ErrNoSuchPerson
		}
		if taken.Found() {
			if existing.OwnerID == owner && existing.Created.Equal(g.Created) {
				return nil // this very group: a retry after a commit that did apply
			}
			return derrors.New(derrors.Unavailable, "group id collision; retry")
		}
		if len(ug.GroupIDs) >= MaxGroupsPerUser {
			return ErrTooManyGroups
		}
		ug.GroupIDs = append(ug.GroupIDs, id)
		return tx.PutMulti(
			[]*datastore.Key{GroupKey(s.db, id), MembershipKey(s.db, id, owner), UserGroupsKey(s.db, owner)},
			[]any{g, &Membership{GroupID: id, UserID: owner, Created: g.Created}, &ug})
	})
	if err != nil {
		return View{}, fmt.Errorf("groups.Create(%s): %w", owner, err)
	}
	return ToView(id, g), nil
}

// Get returns a group.
func (s *Service) Get(ctx context.Context, id string) (View, error) {
	g, err := s.get(ctx, id)
	if err != nil {
		return View{}, err
	}
	return ToView(id, g), nil
}

func (s *Service) get(ctx context.Context, id string) (*Group, error) {
	if _, ok := ids.Parse(id); !ok {
		return nil, ErrNoSuchGroup
	}
	var g Group
	ok, err := s.db.Get(ctx, GroupKey(s.db, id), &g)
	if err != nil {
		return nil, fmt.Errorf("groups.Get(%s): %w", id, err)
	}
	if !ok {
		return nil, ErrNoSuchGroup
	}
	return &g, nil
}

// Join adds user to group on behalf of actor: anyone may join an open group
// themselves; only the owner adds others, and only the owner adds anyone to
// a closed group. It returns the group and whether user was not a member
// before. It enqueues the job that copies the group id onto user's newest
// activities before the commit, and notifies the owner in the same
// transaction.
func (s *Service) Join(ctx context.Context, actor, group, user string) (View, bool, error) {
	if _, ok := ids.Parse(group); !ok {
		return View{}, false, ErrNoSuchGroup
	}
	// A refused join, or a member already, needs no job.
	var g Group
	l := s.db.Lookup()
	hasGroup, isMember := l.Add(GroupKey(s.db, group), &g), l.Add(MembershipKey(s.db, group, user), &Membership{})
	u := accounts.Read(l, user)
	if err := l.Run(ctx); err != nil {
		return View{}, false, fmt.Errorf("groups.Join(%s, %s): %w", group, user, err)
	}
	switch {
	case !hasGroup.Found():
		return View{}, false, ErrNoSuchGroup
	case !u.Exists():
		return View{}, false, accounts.ErrNoSuchPerson
	}
	if err := checkActor(&g, actor, user, true); err != nil {
		return View{}, false, err
	}
	if isMember.Found() {
		return ToView(group, &g), false, nil
	}
	created := s.now().UTC().Truncate(time.Microsecond)
	if err := s.jobs.Joined(ctx, group, user, created.UnixMicro()); err != nil {
		return View{}, false, err
	}
	event := notifications.Event{Type: notifications.GroupJoin, ActorID: user, Recipients: []string{g.OwnerID},
		GroupID: group, ID: fmt.Sprintf("join-%s-%s-%d", group, user, created.Unix())}
	if err := s.notes.Expect(ctx, event); err != nil {
		return View{}, false, err
	}
	var added bool
	err := s.db.Update(ctx, func(tx *store.Tx) error {
		added = false
		var (
			m     Membership
			ug    UserGroups
			ended pair.Ended
			l     = tx.Lookup()
		)
		hasGroup, isMember := l.Add(GroupKey(s.db, group), &g), l.Add(MembershipKey(s.db, group, user), &m)
		l.Add(UserGroupsKey(s.db, user), &ug)
		u := accounts.Read(l, user)
		l.Add(EndedKey(s.db, group, user), &ended)
		note := s.notes.Prepare(l, event)
		if err := l.Run(ctx); err != nil {
			return err
		}
		if !hasGroup.Found() {
			return ErrNoSuchGroup
		}
		if err := checkActor(&g, actor, user, true); err != nil {
			return err
		}
		switch {
		case !u.Exists():
			return accounts.ErrNoSuchPerson
		case isMember.Found():
			return nil // joined meanwhile
		case len(ug.GroupIDs) >= MaxGroupsPerUser:
			return ErrTooManyGroups
		}
		g.MembersCount++
		if !slices.Contains(ug.GroupIDs, group) {
			ug.GroupIDs = append(ug.GroupIDs, group)
		}
		keys := []*datastore.Key{GroupKey(s.db, group), MembershipKey(s.db, group, user), UserGroupsKey(s.db, user)}
		vals := []any{&g, &Membership{GroupID: group, UserID: user, Created: created}, &ug}
		if ended.Begin(created.UnixMicro()) {
			// The removal under way spares what this membership sees.
			keys, vals = append(keys, EndedKey(s.db, group, user)), append(vals, &ended)
		}
		if err := tx.PutMulti(keys, vals); err != nil {
			return err
		}
		added = true
		_, err := note.Write(tx)
		return err
	})
	if err != nil {
		return View{}, false, fmt.Errorf("groups.Join(%s, %s, %s): %w", actor, group, user, err)
	}
	return ToView(group, &g), added, nil
}

// Leave removes user from group on behalf of actor: a member leaves, or the
// owner removes a member. It enqueues the job that removes the group id
// from every one of user's activities before the commit. Leaving a group
// one is not a member of changes nothing.
func (s *Service) Leave(ctx context.Context, actor, group, user string) error {
	g, err := s.get(ctx, group)
	if err != nil {
		return err
	}
	if err := checkActor(g, actor, user, false); err != nil {
		return err
	}
	if ok, err := s.db.Get(ctx, MembershipKey(s.db, group, user), &Membership{}); err != nil || !ok {
		return err
	}
	removal := s.now().UnixMicro()
	if err := s.jobs.Left(ctx, group, user, removal); err != nil {
		return err
	}
	err = s.db.Update(ctx, func(tx *store.Tx) error {
		var (
			g     Group
			m     Membership
			ug    UserGroups
			ended pair.Ended
			l     = tx.Lookup()
		)
		hasGroup, isMember := l.Add(GroupKey(s.db, group), &g), l.Add(MembershipKey(s.db, group, user), &m)
		l.Add(UserGroupsKey(s.db, user), &ug)
		l.Add(EndedKey(s.db, group, user), &ended)
		if err := l.Run(ctx); err != nil {
			return err
		}
		if !hasGroup.Found() {
			return ErrNoSuchGroup
		}
		if err := checkActor(&g, actor, user, false); err != nil || !isMember.Found() {
			return err
		}
		g.MembersCount = max(0, g.MembersCount-1)
		ug.GroupIDs = slices.DeleteFunc(ug.GroupIDs, func(id string) bool { return id == group })
		ended.End(m.Gen(), removal)
		err := tx.PutMulti([]*datastore.Key{GroupKey(s.db, group), UserGroupsKey(s.db, user), EndedKey(s.db, group, user)}, []any{&g, &ug, &ended})
		if err != nil {
			return err
		}
		return tx.Delete(MembershipKey(s.db, group, user))
	})
	if err != nil {
		return fmt.Errorf("groups.Leave(%s, %s, %s): %w", actor, group, user, err)
	}
	return nil
}

// Membership returns user's membership of group, and whether there is one.
func (s *Service) Membership(ctx context.Context, group, user string) (Membership, bool, error) {
	var m Membership
	ok, err := s.db.Get(ctx, MembershipKey(s.db, group, user), &m)
	if err != nil {
		return Membership{}, false, fmt.Errorf("groups.Membership: %w", err)
	}
	return m, ok, nil
}

// Gen returns the generation of a membership: its creation time in
// microseconds.
func (m Membership) Gen() int64 { return m.Created.UnixMicro() }

// checkActor checks that actor may add (join) or remove user in g: anyone
// themselves in an open group, only the owner for others or a closed group;
// the owner never leaves.
func checkActor(g *Group, actor, user string, join bool) error {
	switch {
	case actor != g.OwnerID && actor != user:
		return ErrNotOwner
	case join && actor != g.OwnerID && g.JoinPolicy == Closed:
		return ErrClosed
	case !join && user == g.OwnerID:
		return ErrOwnerLeaves
	}
	return nil
}

// IsMember reports whether user belongs to group now.
func (s *Service) IsMember(ctx context.Context, group, user string) (bool, error) {
	_, ok, err := s.Membership(ctx, group, user)
	return ok, err
}

// CanSee checks that viewer may see the feed and members of a group.
func canSee(g *Group, viewerIsMember bool) error {
	if g.JoinPolicy == Closed && !viewerIsMember {
		return ErrMembersOnly
	}
	return nil
}

// Members lists a group's member ids, newest first, if viewer may see them,
// with the group.
func (s *Service) Members(ctx context.Context, viewer, group string, p store.PageRequest) (View, []string, string, error) {
	g, err := s.get(ctx, group)
	if err != nil {
		return View{}, nil, "", err
	}
	member, err := s.IsMember(ctx, group, viewer)
	if err != nil {
		return View{}, nil, "", err
	}
	if err := canSee(g, member); err != nil {
		return View{}, nil, "", err
	}
	q := s.db.Query(KindMembership).FilterField("groupId", "=", group).Order("-created").KeysOnly()
	keys, _, next, err := store.Page[Membership](ctx, s.db, q, "members:"+group, p)
	if err != nil {
		return View{}, nil, "", err
	}
	out := make([]string, len(keys))
	for i, k := range keys {
		_, out[i], _ = strings.Cut(k.Name, "_")
	}
	return ToView(group, g), out, next, nil
}

// OfUser lists the groups user belongs to, newest membership first.
func (s *Service) OfUser(ctx context.Context, user string, p store.PageRequest) ([]View, string, error) {
	q := s.db.Query(KindMembership).FilterField("userId", "=", user).Order("-created").KeysOnly()
	keys, _, next, err := store.Page[Membership](ctx, s.db, q, "groups:"+user, p)
	if err != nil {
		return nil, "", err
	}
	gkeys := make([]*datastore.Key, len(keys))
	for i, k := range keys {
		g, _, _ := strings.Cut(k.Name, "_")
		gkeys[i] = GroupKey(s.db, g)
	}
	gs := make([]Group, len(gkeys))
	l := s.db.Lookup()
	refs := make([]store.Ref, len(gkeys))
	for i, k := range gkeys {
		refs[i] = l.Add(k, &gs[i])
	}
	if err := l.Run(ctx); err != nil {
		return nil, "", fmt.Errorf("groups.OfUser(%s): %w", user, err)
	}
	out := make([]View, 0, len(gs))
	for i := range gs {
		if refs[i].Found() {
			out = append(out, ToView(gkeys[i].Name, &gs[i]))
		}
	}
	return out, next, nil
}

// GroupIDs returns the groups user belongs to now, from its list.
func (s *Service) GroupIDs(ctx context.Context, user string) ([]string, error) {
	var ug UserGroups
	if _, err := s.db.Get(ctx, UserGroupsKey(s.db, user), &ug); err != nil {
		return nil, fmt.Errorf("groups.GroupIDs(%s): %w", user, err)
	}
	return ug.GroupIDs, nil
}

// Memberships is what a post reads of its author's groups, in its own
// transaction's lookup.
type Memberships struct{ ug UserGroups }

// ReadGroupsOf adds user's group list to a lookup.
func ReadGroupsOf(l *store.Lookup, user string) *Memberships {
	m := &Memberships{}
	l.Add(UserGroupsKey(l.DB(), user), &m.ug)
	return m
}

// IDs returns the ids of the user's groups.
func (m *Memberships) IDs() []string { return m.ug.GroupIDs }

// Access is whether a viewer may see a group's feed, as a lookup read it.
type Access struct {
	g        Group
	group    store.Ref
	isMember store.Ref
}

// ReadAccess adds group and viewer's membership of it to a lookup.
func ReadAccess(l *store.Lookup, group, viewer string) *Access {
	a := &Access{}
	a.group = l.Add(GroupKey(l.DB(), group), &a.g)
	a.isMember = l.Add(MembershipKey(l.DB(), group, viewer), &Membership{})
	return a
}

// Check returns ErrNoSuchGroup or ErrMembersOnly when the viewer may not
// see the group's feed.
func (a *Access) Check() error {
	if !a.group.Found() {
		return ErrNoSuchGroup
	}
	return canSee(&a.g, a.isMember.Found())
}

// Pair is a membership and its history as a job's lookup read them.
type Pair struct {
	m      Membership
	exists store.Ref
	ended  pair.Ended
}

// ReadPair adds user's membership of group and its history to a lookup.
func ReadPair(l *store.Lookup, group, user string) *Pair {
	p := &Pair{}
	p.exists = l.Add(MembershipKey(l.DB(), group, user), &p.m)
	l.Add(EndedKey(l.DB(), group, user), &p.ended)
	return p
}

// State returns what the lookup read.
func (p *Pair) State() pair.State {
	st := pair.State{Exists: p.exists.Found(), Ended: p.ended}
	if st.Exists {
		st.Gen = p.m.Gen()
	}
	return st
}

// FinishRemoval records that the removal of group from user's activities
// named removal is done, so the join jobs that wait for it go on.
func FinishRemoval(ctx context.Context, db *store.DB, group, user string, removal int64) error {
	return pair.Finish(ctx, db, EndedKey(db, group, user), removal)
}
