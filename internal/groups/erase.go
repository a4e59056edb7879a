package groups

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"cloud.google.com/go/datastore"

	"socialstream/internal/store"
)

// errMoved says the group changed hands, or the member a handover chose
// left, since the handover looked: look again.
var errMoved = errors.New("groups: the chosen member left")

// Erase takes a deleted user out of up to n of their groups, and returns
// how many it handled. A membership of someone else's group ends (the
// group counts one member fewer). A group the user owned goes to its
// longest member; with no other member it is deleted. Nobody joins or is
// invited while its owner is gone (Join and the invitation read the
// owner in their transactions), so the members the handover finds are
// all there are. The user's activities, which carry the group's id, are
// deleted by their own part of the erasure.
func (s *Service) Erase(ctx context.Context, user string, n int) (int, error) {
	done := 0
	for done < n {
		keys, _, err := s.db.KeysFrom(ctx, s.db.Query(KindMembership).FilterField("userId", "=", user).KeysOnly(), "", 1)
		if err != nil {
			return done, fmt.Errorf("groups.Erase(%s): %w", user, err)
		}
		if len(keys) == 0 {
			break
		}
		group, _, _ := strings.Cut(keys[0].Name, "_")
		for attempt := 0; ; attempt++ {
			err = s.leaveGone(ctx, group, user)
			if !errors.Is(err, errMoved) || attempt == 5 {
				break
			}
		}
		if err != nil {
			return done, fmt.Errorf("groups.Erase(%s): %w", user, err)
		}
		done++
	}
	return done, nil
}

// leaveGone ends a deleted user's membership of group, handing the group
// on or deleting it when the user owned it.
func (s *Service) leaveGone(ctx context.Context, group, user string) error {
	var g Group
	ok, err := s.db.Get(ctx, GroupKey(s.db, group), &g)
	if err != nil {
		return err
	}
	heir := ""
	owned := ok && g.OwnerID == user
	if owned {
		if heir, err = s.heirOf(ctx, group, user); err != nil {
			return err
		}
	}
	return s.db.Update(ctx, func(tx *store.Tx) error {
		var g Group
		l := tx.Lookup()
		hasGroup := l.Add(GroupKey(s.db, group), &g)
		isMember := l.Add(MembershipKey(s.db, group, user), &Membership{})
		var heirMember store.Ref
		if heir != "" {
			heirMember = l.Add(MembershipKey(s.db, group, heir), &Membership{})
		}
		if err := l.Run(ctx); err != nil {
			return err
		}
		gone := []*datastore.Key{MembershipKey(s.db, group, user)}
		switch {
		case !hasGroup.Found() || !isMember.Found():
			return tx.DeleteMulti(gone)
		case g.OwnerID == user && !owned:
			return errMoved // handed to the user since: choose an heir
		case g.OwnerID != user:
		case heir == "":
			return tx.DeleteMulti(append(gone, GroupKey(s.db, group)))
		case !heirMember.Found():
			return errMoved
		default:
			g.OwnerID = heir
		}
		g.MembersCount = max(0, g.MembersCount-1)
		if err := tx.Put(GroupKey(s.db, group), &g); err != nil {
			return err
		}
		return tx.DeleteMulti(gone)
	})
}

// heirOf returns the member of group who has been one longest, user
// left out ("" if none): who owns it once its owner is gone.
func (s *Service) heirOf(ctx context.Context, group, user string) (string, error) {
	q := s.db.Query(KindMembership).FilterField("groupId", "=", group).Order("created").KeysOnly()
	keys, _, err := s.db.KeysFrom(ctx, q, "", 2)
	if err != nil {
		return "", err
	}
	for _, k := range keys {
		if _, member, _ := strings.Cut(k.Name, "_"); member != user {
			return member, nil
		}
	}
	return "", nil
}

// EraseRest deletes, once Erase has ended every membership of a deleted
// user, up to n of what is left of them: the invitations they received
// and made, the history of every membership they had, and their group
// list. It returns how many it deleted.
func EraseRest(ctx context.Context, db *store.DB, user string, n int) (int, error) {
	var keys []*datastore.Key
	for _, q := range []*datastore.Query{
		db.Query(KindInvitation).FilterField("userId", "=", user),
		db.Query(KindInvitation).FilterField("inviterId", "=", user),
		db.Query(KindEnded).FilterField("pair", "=", user),
	} {
		found, _, err := db.KeysFrom(ctx, q.KeysOnly(), "", n-len(keys))
		if err != nil {
			return 0, fmt.Errorf("groups.EraseRest(%s): %w", user, err)
		}
		if keys = append(keys, found...); len(keys) >= n {
			break
		}
	}
	if len(keys) < n {
		keys = append(keys, UserGroupsKey(db, user))
	}
	if err := db.DeleteMulti(ctx, keys); err != nil {
		return 0, fmt.Errorf("groups.EraseRest(%s): %w", user, err)
	}
	return len(keys), nil
}
