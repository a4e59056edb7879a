// Package groups owns groups (lists) and their members.
//
// Entities:
//   - Group/{id}: title, description, owner, join policy, member count.
//   - Membership/{groupId}_{userId}: one member, for member lists and a
//     user's groups (queries on groupId or userId, newest first).
//   - UserGroups/{userId}: the ids of the groups a user belongs to, read by
//     key when the user posts, so a post copies its author's groups without
//     a query.
//
// Join and leave update all three in one transaction.
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
	ErrNoSuchPerson  = derrors.New(derrors.NotFound, "no such person")
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

// Ended is the history of a user's memberships of a group (key
// MembershipEnded/{groupId}_{userId}) that jobs need: Gen is the
// generation of the last membership that ended; Removal, Done and Cutoff
// track the removal of the group id from the user's activities as
// graph.Ended does for follows.
type Ended struct {
	Gen     int64 `datastore:"gen,noindex"`
	Removal int64 `datastore:"removal,noindex"`
	Cutoff  int64 `datastore:"cutoff,noindex"`
	Done    int64 `datastore:"done,noindex"`
}

// Pending reports whether a removal is under way.
func (e Ended) Pending() bool { return e.Removal > e.Done }

// EndedKey returns the key of user's Ended record for group.
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

// Service manages groups.
type Service struct {
	db  *store.DB
	ids *ids.Generator
	now func() time.Time
}

// New returns a Service.
func New(db *store.DB, gen *ids.Generator) (*Service, error) {
	if db == nil || gen == nil {
		return nil, errors.New("groups.New: nil dependency")
	}
	return &Service{db: db, ids: gen, now: time.Now}, nil
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
	err = s.db.RunInTransaction(ctx, func(tx *datastore.Transaction) error {
		var ug UserGroups
		var u accounts.User
		var existing Group
		err := tx.GetMulti([]*datastore.Key{UserGroupsKey(s.db, owner), accounts.UserKey(s.db, owner), GroupKey(s.db, id)}, []any{&ug, &u, &existing})
		missing, ok := store.IsMissing(err, 3)
		if !ok {
			return err
		}
		if missing[1] {
			return ErrNoSuchPerson
		}
		if !missing[2] {
			if existing.OwnerID == owner && existing.Created.Equal(g.Created) {
				return nil // this very group: a retry after a commit that did apply
			}
			return derrors.New(derrors.Unavailable, "group id collision; retry")
		}
		if len(ug.GroupIDs) >= MaxGroupsPerUser {
			return ErrTooManyGroups
		}
		ug.GroupIDs = append(ug.GroupIDs, id)
		_, err = tx.PutMulti(
			[]*datastore.Key{GroupKey(s.db, id), MembershipKey(s.db, id, owner), UserGroupsKey(s.db, owner)},
			[]any{g, &Membership{GroupID: id, UserID: owner, Created: g.Created}, &ug})
		return err
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
	err := s.db.Client.Get(ctx, GroupKey(s.db, id), &g)
	if errors.Is(err, datastore.ErrNoSuchEntity) {
		return nil, ErrNoSuchGroup
	}
	if err != nil {
		return nil, fmt.Errorf("groups.Get(%s): %w", id, store.Convert(err))
	}
	return &g, nil
}

// Join adds user to group on behalf of actor: anyone may join an open group
// themselves; only the owner adds others, and only the owner adds anyone to
// a closed group. It reports whether user was not a member before.
func (s *Service) Join(ctx context.Context, actor, group, user string) (bool, error) {
	return s.JoinAt(ctx, actor, group, user, s.now())
}

// JoinAt is Join with the membership's creation time given: its
// generation, which jobs enqueued before the commit use to recognise it.
func (s *Service) JoinAt(ctx context.Context, actor, group, user string, created time.Time) (bool, error) {
	if _, ok := ids.Parse(group); !ok {
		return false, ErrNoSuchGroup
	}
	var added bool
	err := s.db.RunInTransaction(ctx, func(tx *datastore.Transaction) error {
		added = false
		var (
			g     Group
			m     Membership
			ug    UserGroups
			u     accounts.User
			ended Ended
		)
		keys := []*datastore.Key{GroupKey(s.db, group), MembershipKey(s.db, group, user), UserGroupsKey(s.db, user), accounts.UserKey(s.db, user), EndedKey(s.db, group, user)}
		err := tx.GetMulti(keys, []any{&g, &m, &ug, &u, &ended})
		missing, ok := store.IsMissing(err, 5)
		if !ok {
			return err
		}
		if missing[0] {
			return ErrNoSuchGroup
		}
		if err := checkActor(&g, actor, user, true); err != nil {
			return err
		}
		switch {
		case missing[3]:
			return ErrNoSuchPerson
		case !missing[1]:
			return nil // already a member
		case len(ug.GroupIDs) >= MaxGroupsPerUser:
			return ErrTooManyGroups
		}
		g.MembersCount++
		if !slices.Contains(ug.GroupIDs, group) {
			ug.GroupIDs = append(ug.GroupIDs, group)
		}
		putKeys, putVals := keys[:3], []any{&g, &Membership{GroupID: group, UserID: user, Created: created.UTC()}, &ug}
		if ended.Pending() && ended.Cutoff == 0 {
			ended.Cutoff = created.UnixMicro() // the removal under way spares what this membership sees
			putKeys, putVals = append(putKeys, keys[4]), append(putVals, &ended)
		}
		_, err = tx.PutMulti(putKeys, putVals)
		added = err == nil
		return err
	})
	if err != nil {
		return false, fmt.Errorf("groups.Join(%s, %s, %s): %w", actor, group, user, err)
	}
	return added, nil
}

// Leave removes user from group on behalf of actor: a member leaves, or the
// owner removes a member. It reports whether user was a member. removal
// names the job, enqueued by the caller, that removes the group id from
// user's activities.
func (s *Service) Leave(ctx context.Context, actor, group, user string, removal int64) (bool, error) {
	if _, ok := ids.Parse(group); !ok {
		return false, ErrNoSuchGroup
	}
	var removed bool
	err := s.db.RunInTransaction(ctx, func(tx *datastore.Transaction) error {
		removed = false
		var (
			g     Group
			m     Membership
			ug    UserGroups
			ended Ended
		)
		keys := []*datastore.Key{GroupKey(s.db, group), MembershipKey(s.db, group, user), UserGroupsKey(s.db, user), EndedKey(s.db, group, user)}
		err := tx.GetMulti(keys, []any{&g, &m, &ug, &ended})
		missing, ok := store.IsMissing(err, 4)
		if !ok {
			return err
		}
		if missing[0] {
			return ErrNoSuchGroup
		}
		if err := checkActor(&g, actor, user, false); err != nil {
			return err
		}
		switch {
		case missing[1]:
			return nil // not a member
		}
		g.MembersCount = max(0, g.MembersCount-1)
		ug.GroupIDs = slices.DeleteFunc(ug.GroupIDs, func(id string) bool { return id == group })
		ended.Gen = m.Gen()
		if removal > 0 {
			ended.Removal, ended.Cutoff = max(removal, ended.Removal), 0
		}
		if _, err := tx.PutMulti([]*datastore.Key{keys[0], keys[2], keys[3]}, []any{&g, &ug, &ended}); err != nil {
			return err
		}
		removed = true
		return tx.Delete(keys[1])
	})
	if err != nil {
		return false, fmt.Errorf("groups.Leave(%s, %s, %s): %w", actor, group, user, err)
	}
	return removed, nil
}

// Membership returns user's membership of group, and whether there is one.
func (s *Service) Membership(ctx context.Context, group, user string) (Membership, bool, error) {
	var m Membership
	ok, err := s.db.Find(ctx, MembershipKey(s.db, group, user), &m)
	if err != nil {
		return Membership{}, false, fmt.Errorf("groups.Membership: %w", err)
	}
	return m, ok, nil
}

// Gen returns the generation of a membership: its creation time in
// microseconds.
func (m Membership) Gen() int64 { return m.Created.UnixMicro() }

// Authorize checks that actor may add (join) or remove user in group,
// without changing anything; Join and Leave check again in their
// transactions.
func (s *Service) Authorize(ctx context.Context, actor, group, user string, join bool) error {
	g, err := s.get(ctx, group)
	if err != nil {
		return err
	}
	return checkActor(g, actor, user, join)
}

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
func CanSee(g *Group, viewerIsMember bool) error {
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
	if err := CanSee(g, member); err != nil {
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
	err = s.db.Client.GetMulti(ctx, gkeys, gs)
	missing, ok := store.IsMissing(err, len(gkeys))
	if !ok {
		return nil, "", fmt.Errorf("groups.OfUser(%s): %w", user, store.Convert(err))
	}
	out := make([]View, 0, len(gs))
	for i := range gs {
		if !missing[i] {
			out = append(out, ToView(gkeys[i].Name, &gs[i]))
		}
	}
	return out, next, nil
}

// GroupIDs returns the groups user belongs to now, from its list.
func (s *Service) GroupIDs(ctx context.Context, user string) ([]string, error) {
	var ug UserGroups
	err := s.db.Client.Get(ctx, UserGroupsKey(s.db, user), &ug)
	if err != nil && !errors.Is(err, datastore.ErrNoSuchEntity) {
		return nil, fmt.Errorf("groups.GroupIDs(%s): %w", user, store.Convert(err))
	}
	return ug.GroupIDs, nil
}
