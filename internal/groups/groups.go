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
//   - Invitation/{groupId}_{userId}: the owner's invitation, until the
//     user accepts (joins) or declines (leaves).
//
// A join or a leave is one operation with all its side effects, updating
// all of them in one transaction: the rebuild job (Jobs, enqueued before
// the commit) and the owner's notification of a join (written in the same
// transaction). Other packages read groups through the functions here
// that add to their lookups.
package groups

import (
	"cmp"
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
	"socialstream/internal/notifications"
	"socialstream/internal/pair"
	"socialstream/internal/policy"
	"socialstream/internal/queue"
	"socialstream/internal/store"
	"socialstream/internal/text"
)

// Kinds of the entities this package owns.
const (
	KindGroup      = "Group"
	KindMembership = "Membership"
	KindUserGroups = "UserGroups"
	KindEnded      = "MembershipEnded"
	KindInvitation = "Invitation"
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
	ErrClosed        = derrors.New(derrors.PermissionDenied, "this group is closed: join it by its owner's invitation")
	ErrNotOwner      = derrors.New(derrors.PermissionDenied, "only the group's owner may do that")
	ErrMembersOnly   = derrors.New(derrors.PermissionDenied, "this group is closed: only its members see it")
	ErrOwnerLeaves   = derrors.New(derrors.Conflict, "the owner cannot leave the group")
	ErrTooManyGroups = derrors.New(derrors.Conflict, fmt.Sprintf("a user belongs to at most %d groups", MaxGroupsPerUser))
	ErrOwnerGone     = derrors.New(derrors.Conflict, "the group's owner deleted their account; it is being handed to its longest member: try again shortly")
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

// Invitation is the owner's invitation of a user to a group, until the
// user joins (accepts) or leaves (declines).
type Invitation struct {
	GroupID string `datastore:"groupId,noindex"`
	// UserID and InviterID are indexed: erasing an account deletes the
	// invitations it received and made.
	UserID    string    `datastore:"userId"`
	InviterID string    `datastore:"inviterId"`
	Created   time.Time `datastore:"created,noindex"`
}

// InvitationKey returns the key of user's invitation to group.
func InvitationKey(db *store.DB, group, user string) *datastore.Key {
	return db.NameKey(KindInvitation, group+"_"+user, nil)
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
	return View{ID: id, Title: g.Title, Description: g.Description, OwnerID: g.OwnerID, JoinPolicy: g.JoinPolicy, MembersCount: max(0, g.MembersCount)}
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

// Create makes a group owned by owner, who becomes its first member.
func (s *Service) Create(ctx context.Context, owner, title, description, policy string) (View, error) {
	title, err := text.Clean("title", title, text.Rules{Max: MaxTitle, Required: true})
	if err != nil {
		return View{}, err
	}
	if description, err = text.Clean("description", description, text.Rules{Max: MaxDescription, Multiline: true}); err != nil {
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
			return accounts.ErrBadToken // deleted meanwhile
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

// Get returns a group as viewer may see it: a closed group only to its
// members and the people it invites.
func (s *Service) Get(ctx context.Context, viewer, id string) (View, error) {
	if _, ok := ids.Parse(id); !ok {
		return View{}, ErrNoSuchGroup
	}
	var g Group
	l := s.db.Lookup()
	found := l.Add(GroupKey(s.db, id), &g)
	isMember, invited := l.Add(MembershipKey(s.db, id, viewer), &Membership{}), l.Add(InvitationKey(s.db, id, viewer), &Invitation{})
	if err := l.Run(ctx); err != nil {
		return View{}, fmt.Errorf("groups.Get(%s): %w", id, err)
	}
	if !found.Found() {
		return View{}, ErrNoSuchGroup
	}
	if err := canSee(&g, isMember.Found() || invited.Found()); err != nil {
		return View{}, err
	}
	return ToView(id, &g), nil
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

// Outcome is what a Join did.
type Outcome int

// Outcomes of a Join.
const (
	AlreadyMember Outcome = iota // nothing to do
	Joined                       // user is a member now
	Invited                      // user is invited (or was already)
)

// Join is actor's call to add user to group. A user joins an open group
// themselves, and a closed one only with the owner's invitation, which
// the join accepts. When actor is someone else, it is an invitation: only
// the owner invites, and the invitee is notified and decides (Join to
// accept, Leave to decline); nobody becomes a member without their own
// call. Only memberships count towards MaxGroupsPerUser, never
// invitations.
//
// A join enqueues the job that copies the group id onto user's newest
// activities before the commit, and notifies the owner in the same
// transaction; an invitation notifies the invitee in its own.
func (s *Service) Join(ctx context.Context, actor, group, user string) (View, Outcome, error) {
	if _, ok := ids.Parse(group); !ok {
		return View{}, AlreadyMember, ErrNoSuchGroup
	}
	// A refused join, or a member already, needs no job.
	var g Group
	l := s.db.Lookup()
	hasGroup, isMember := l.Add(GroupKey(s.db, group), &g), l.Add(MembershipKey(s.db, group, user), &Membership{})
	invited := l.Add(InvitationKey(s.db, group, user), &Invitation{})
	u := accounts.Read(l, user)
	var between *blocks.Between
	if actor != user {
		between = blocks.ReadBetween(l, actor, user) // an invitation names someone the actor must see
	}
	if err := l.Run(ctx); err != nil {
		return View{}, AlreadyMember, fmt.Errorf("groups.Join(%s, %s): %w", group, user, err)
	}
	switch {
	case !hasGroup.Found():
		return View{}, AlreadyMember, ErrNoSuchGroup
	case !u.Exists(), actor != user && !policy.SeePerson(actor, u.Account(), policy.Ties{Blocked: between.Any()}):
		return View{}, AlreadyMember, accounts.ErrNoSuchPerson // gone, or hidden from the actor: not there
	}
	if err := checkJoin(&g, actor, user, invited.Found()); err != nil {
		return View{}, AlreadyMember, err
	}
	if isMember.Found() {
		return ToView(group, &g), AlreadyMember, nil
	}
	if actor != user {
		return s.invite(ctx, actor, group, user)
	}
	created := s.now().UTC().Truncate(time.Microsecond)
	event := notifications.Event{Type: notifications.GroupJoin, ActorID: user, Recipients: []string{g.OwnerID},
		GroupID: group, ID: fmt.Sprintf("join-%s-%s-%d", group, user, created.Unix())}
	joined := queue.PendingFunc(fmt.Sprintf("joined/%s/%s/%d", group, user, created.UnixMicro()), func(ctx context.Context) error {
		return s.jobs.Joined(ctx, group, user, created.UnixMicro())
	})
	out := AlreadyMember
	var jobs queue.Ahead
	err := jobs.Commit(ctx, []queue.Pending{joined, s.notes.Expecting(event)}, func() error {
		return s.db.Update(ctx, func(tx *store.Tx) error {
			out = AlreadyMember
			var (
				m     Membership
				ug    UserGroups
				ended pair.Ended
				l     = tx.Lookup()
			)
			// The Group is not read: every join of a popular group would hold
			// a lock on it. Its count changes by an increment that also checks,
			// at the commit, that it is there; what checkJoin reads of it
			// (policy, owner) is as read before, and an owner's erasure that
			// hands it on since is seen by ownerExists.
			isMember := l.Add(MembershipKey(s.db, group, user), &m)
			invited := l.Add(InvitationKey(s.db, group, user), &Invitation{})
			l.Add(UserGroupsKey(s.db, user), &ug)
			u := accounts.Read(l, user)
			l.Add(EndedKey(s.db, group, user), &ended)
			note := s.notes.Prepare(l, event)
			if err := l.Run(ctx); err != nil {
				return err
			}
			switch {
			case !u.Exists():
				return accounts.ErrBadToken // deleted meanwhile
			case isMember.Found():
				// Joined meanwhile, or by an attempt of this transaction whose
				// commit applied but answered an error (and took the
				// invitation that checkJoin would now miss).
				return nil
			}
			if err := checkJoin(&g, actor, user, invited.Found()); err != nil {
				return err
			}
			switch {
			case len(ug.GroupIDs) >= MaxGroupsPerUser:
				return ErrTooManyGroups
			}
			// Nobody joins while the owner's erasure hands the group on: it
			// decides from the members it finds.
			if owner, err := ownerExists(ctx, tx, &g); err != nil || !owner {
				return cmp.Or(err, ErrOwnerGone)
			}
			if !slices.Contains(ug.GroupIDs, group) {
				ug.GroupIDs = append(ug.GroupIDs, group)
			}
			if err := countMembers(tx, group, 1); err != nil {
				return err
			}
			keys := []*datastore.Key{MembershipKey(s.db, group, user), UserGroupsKey(s.db, user)}
			vals := []any{&Membership{GroupID: group, UserID: user, Created: created}, &ug}
			if ended.Begin(created.UnixMicro()) {
				// The removal under way spares what this membership sees.
				ended.Of(group, user)
				keys, vals = append(keys, EndedKey(s.db, group, user)), append(vals, &ended)
			}
			if err := tx.PutMulti(keys, vals); err != nil {
				return err
			}
			if invited.Found() {
				if err := tx.Delete(InvitationKey(s.db, group, user)); err != nil {
					return err
				}
			}
			out = Joined
			_, err := note.Write(tx)
			return err
		})
	})
	if errors.Is(err, store.ErrGone) {
		err = ErrNoSuchGroup // deleted since it was read
	}
	if err != nil {
		return View{}, AlreadyMember, fmt.Errorf("groups.Join(%s, %s, %s): %w", actor, group, user, err)
	}
	return s.answer(ctx, group, &g, out)
}

// invite records the owner's invitation of user to group and notifies
// user, in one transaction; inviting again changes nothing.
func (s *Service) invite(ctx context.Context, owner, group, user string) (View, Outcome, error) {
	now := s.now().UTC().Truncate(time.Microsecond)
	event := notifications.Event{Type: notifications.GroupInvite, ActorID: owner, Recipients: []string{user},
		GroupID: group, ID: fmt.Sprintf("invite-%s-%s", group, user)}
	var g Group
	out := AlreadyMember
	var jobs queue.Ahead
	err := jobs.Commit(ctx, []queue.Pending{s.notes.Expecting(event)}, func() error {
		return s.db.Update(ctx, func(tx *store.Tx) error {
			out = AlreadyMember
			var inv Invitation
			l := tx.Lookup()
			hasGroup, isMember := l.Add(GroupKey(s.db, group), &g), l.Add(MembershipKey(s.db, group, user), &Membership{})
			invited := l.Add(InvitationKey(s.db, group, user), &inv)
			me, them := accounts.Read(l, owner), accounts.Read(l, user)
			note := s.notes.Prepare(l, event)
			if err := l.Run(ctx); err != nil {
				return err
			}
			switch {
			case !hasGroup.Found():
				return ErrNoSuchGroup
			case !me.Exists():
				return accounts.ErrBadToken // deleted meanwhile
			case g.OwnerID != owner:
				return ErrNotOwner
			case !them.Exists():
				return accounts.ErrNoSuchPerson
			case isMember.Found():
				return nil
			}
			out = Invited
			if invited.Found() {
				return nil
			}
			if err := tx.Put(InvitationKey(s.db, group, user), &Invitation{GroupID: group, UserID: user, InviterID: owner, Created: now}); err != nil {
				return err
			}
			_, err := note.Write(tx)
			return err
		})
	})
	if err != nil {
		return View{}, AlreadyMember, fmt.Errorf("groups.invite(%s, %s): %w", group, user, err)
	}
	return ToView(group, &g), out, nil
}

// Leave removes user from group on behalf of actor: a member leaves, or the
// owner removes a member. It enqueues the job that removes the group id
// from every one of user's activities before the commit. For someone
// invited but not a member, it ends the invitation: the invitee declines,
// or the owner withdraws it. Otherwise it changes nothing.
func (s *Service) Leave(ctx context.Context, actor, group, user string) error {
	g, err := s.get(ctx, group)
	if err != nil {
		return err
	}
	if err := checkLeave(g, actor, user); err != nil {
		return err
	}
	l := s.db.Lookup()
	isMember, invited := l.Add(MembershipKey(s.db, group, user), &Membership{}), l.Add(InvitationKey(s.db, group, user), &Invitation{})
	if err := l.Run(ctx); err != nil {
		return fmt.Errorf("groups.Leave(%s, %s): %w", group, user, err)
	}
	if !isMember.Found() {
		if invited.Found() {
			return s.db.Delete(ctx, InvitationKey(s.db, group, user))
		}
		return nil
	}
	removal := s.now().UnixMicro()
	left := queue.PendingFunc(fmt.Sprintf("left/%s/%s/%d", group, user, removal), func(ctx context.Context) error {
		return s.jobs.Left(ctx, group, user, removal)
	})
	var jobs queue.Ahead
	err = jobs.Commit(ctx, []queue.Pending{left}, func() error {
		return s.db.Update(ctx, func(tx *store.Tx) error {
			// The Group is not read, as in Join; the owner it was checked
			// against (checkLeave, above) changes only with the owner's
			// erasure.
			var (
				m     Membership
				ug    UserGroups
				ended pair.Ended
				l     = tx.Lookup()
			)
			isMember := l.Add(MembershipKey(s.db, group, user), &m)
			l.Add(UserGroupsKey(s.db, user), &ug)
			l.Add(EndedKey(s.db, group, user), &ended)
			if err := l.Run(ctx); err != nil || !isMember.Found() {
				return err
			}
			if err := countMembers(tx, group, -1); err != nil {
				return err
			}
			ug.GroupIDs = slices.DeleteFunc(ug.GroupIDs, func(id string) bool { return id == group })
			ended.End(m.Gen(), removal)
			ended.Of(group, user)
			err := tx.PutMulti([]*datastore.Key{UserGroupsKey(s.db, user), EndedKey(s.db, group, user)}, []any{&ug, &ended})
			if err != nil {
				return err
			}
			return tx.Delete(MembershipKey(s.db, group, user))
		})
	})
	if errors.Is(err, store.ErrGone) {
		err = ErrNoSuchGroup // deleted since it was read
	}
	if err != nil {
		return fmt.Errorf("groups.Leave(%s, %s, %s): %w", actor, group, user, err)
	}
	return nil
}

// countMembers adds n to a group's member count with tx's commit, by a
// server-side increment that reads nothing; the commit fails with
// store.ErrGone if the group is gone by then.
func countMembers(tx *store.Tx, group string, n int64) error {
	return tx.Increment(GroupKey(tx.DB(), group), map[string]int64{"membersCount": n})
}

// answer returns a group as read again after a join, for its exact
// count; as read before, should it be gone meanwhile or the read fail.
func (s *Service) answer(ctx context.Context, group string, seen *Group, out Outcome) (View, Outcome, error) {
	var g Group
	if ok, err := s.db.Get(ctx, GroupKey(s.db, group), &g); err != nil || !ok {
		// The join is done: answer it as read before, counted.
		g = *seen
		if out == Joined {
			g.MembersCount++
		}
	}
	return ToView(group, &g), out, nil
}

// ownerExists reads, in tx, whether g's owner still has an account.
func ownerExists(ctx context.Context, tx *store.Tx, g *Group) (bool, error) {
	l := tx.Lookup()
	o := accounts.Read(l, g.OwnerID)
	if err := l.Run(ctx); err != nil {
		return false, err
	}
	return o.Exists(), nil
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

// InChunk is 0: members are in no follower chunk (pair.Link).
func (m *Membership) InChunk() int { return 0 }

// checkJoin checks that actor may add user to g: user themselves in an
// open group, or in a closed one they are invited to; only the owner for
// anyone else (an invitation).
func checkJoin(g *Group, actor, user string, invited bool) error {
	switch {
	case actor != user && actor != g.OwnerID:
		return ErrNotOwner
	case actor == user && user != g.OwnerID && g.JoinPolicy == Closed && !invited:
		return ErrClosed
	}
	return nil
}

// checkLeave checks that actor may remove user from g: user themselves or
// the owner; the owner never leaves.
func checkLeave(g *Group, actor, user string) error {
	switch {
	case actor != g.OwnerID && actor != user:
		return ErrNotOwner
	case user == g.OwnerID:
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

// OfUser lists the groups user belongs to, newest membership first, as
// viewer may see them: a closed group only when viewer is a member too
// (so a page may hold fewer than asked for). It also returns how many
// there are in all for viewer.
func (s *Service) OfUser(ctx context.Context, viewer, user string, p store.PageRequest) ([]View, int64, string, error) {
	q := s.db.Query(KindMembership).FilterField("userId", "=", user).Order("-created").KeysOnly()
	keys, _, next, err := store.Page[Membership](ctx, s.db, q, "groups:"+user, p)
	if err != nil {
		return nil, 0, "", err
	}
	groupIDs := make([]string, len(keys))
	for i, k := range keys {
		groupIDs[i], _, _ = strings.Cut(k.Name, "_")
	}
	out, err := s.visible(ctx, viewer, groupIDs, viewer == user)
	if err != nil {
		return nil, 0, "", fmt.Errorf("groups.OfUser(%s): %w", user, err)
	}
	total := int64(len(out))
	if next != "" || p.Offset > 0 {
		// At most MaxGroupsPerUser: count them all as viewer sees them.
		var ug UserGroups
		if _, err := s.db.Get(ctx, UserGroupsKey(s.db, user), &ug); err != nil {
			return nil, 0, "", fmt.Errorf("groups.OfUser(%s): %w", user, err)
		}
		total = int64(len(ug.GroupIDs))
		if viewer != user {
			vs, err := s.visible(ctx, viewer, ug.GroupIDs, false)
			if err != nil {
				return nil, 0, "", fmt.Errorf("groups.OfUser(%s): %w", user, err)
			}
			total = int64(len(vs))
		}
	}
	return out, total, next, nil
}

// visible reads the groups of groupIDs in one lookup, with viewer's
// memberships of them unless viewer is known to belong to them all
// (member), and returns those viewer may see, in order.
func (s *Service) visible(ctx context.Context, viewer string, groupIDs []string, member bool) ([]View, error) {
	gs := make([]Group, len(groupIDs))
	refs := make([]store.Ref, len(groupIDs))
	isMember := make([]store.Ref, len(groupIDs))
	l := s.db.Lookup()
	for i, id := range groupIDs {
		refs[i] = l.Add(GroupKey(s.db, id), &gs[i])
		if !member {
			isMember[i] = l.Add(MembershipKey(s.db, id, viewer), &Membership{})
		}
	}
	if err := l.Run(ctx); err != nil {
		return nil, err
	}
	out := make([]View, 0, len(gs))
	for i := range gs {
		if refs[i].Found() && canSee(&gs[i], member || isMember[i].Found()) == nil {
			out = append(out, ToView(groupIDs[i], &gs[i]))
		}
	}
	return out, nil
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

// ReadPair adds user's membership of group and its history to a lookup.
func ReadPair(l *store.Lookup, group, user string) *pair.Reader[Membership, *Membership] {
	return pair.Read[Membership](l, MembershipKey(l.DB(), group, user), EndedKey(l.DB(), group, user))
}

// FinishRemoval records that the removal of group from user's activities
// named removal is done, so the join jobs that wait for it go on.
func FinishRemoval(ctx context.Context, db *store.DB, group, user string, removal int64) error {
	return pair.Finish(ctx, db, EndedKey(db, group, user), removal)
}
