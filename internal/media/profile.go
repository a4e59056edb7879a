package media

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"cloud.google.com/go/datastore"

	"socialstream/internal/accounts"
	"socialstream/internal/derrors"
	"socialstream/internal/policy"
	"socialstream/internal/queue"
	"socialstream/internal/store"
)

// Profile pictures: a person's avatar and header are uploads of theirs
// (Upload: the same checks, metadata stripping and thumbnails as any
// picture), kept as their profile says (accounts.Profile) and marked on
// the item (Item.Profile), so that no collection takes them. Anyone who
// may see the person may see them (policy.SeePicture), through the link
// that names the person (accounts.PicturePath, ServeProfile).

var (
	errSamePicture  = derrors.New(derrors.InvalidArgument, "avatar and header must be different pictures")
	errIsProfile    = derrors.New(derrors.Conflict, "the media item is a profile picture: change the profile first")
	errNoSuchPerson = derrors.New(derrors.NotFound, "no such picture")
)

// ChangeProfile changes user's profile (accounts.ProfileInput) and returns
// the person as they see themselves then. A new avatar or header is one
// of their loose uploads, which it marks as theirs; the picture it
// replaces is loose again, and collected a day later (LooseFor) as any
// upload no post took. A lock changes with it: the profile and the lock
// are one change, or none. One transaction: the User and the card, which
// both hold the profile and the lock, and the pictures.
func (s *Service) ChangeProfile(ctx context.Context, user string, in accounts.ProfileInput) (accounts.Person, error) {
	in, err := in.Clean()
	if err != nil {
		return accounts.Person{}, err
	}
	for _, id := range []*string{in.Avatar, in.Header} {
		if id != nil && *id != "" && !ValidID(*id) {
			return accounts.Person{}, ErrNoSuchItem
		}
	}
	if in.Avatar != nil && in.Header != nil && *in.Avatar != "" && *in.Avatar == *in.Header {
		return accounts.Person{}, errSamePicture
	}
	now := s.now().UnixMicro()
	told, err := s.profileJobs(ctx, user, in, now)
	if err != nil {
		return accounts.Person{}, fmt.Errorf("media.ChangeProfile(%s): %w", user, err)
	}
	var jobs queue.Ahead
	err = jobs.Commit(ctx, told, func() error { return s.changeProfile(ctx, user, in, now) })
	if err != nil {
		return accounts.Person{}, fmt.Errorf("media.ChangeProfile(%s): %w", user, err)
	}
	p, _, err := accounts.Load(ctx, s.db, user)
	return p, err
}

// profileJobs are the jobs a change of profile at now (µs) enqueues
// ahead of its commit: other servers are told by one, which waits for the
// change to show (outbox.ProfileJob); an unlock approves what was pending
// by one too (Config.Unlocking), enqueued only when the account is locked
// now.
func (s *Service) profileJobs(ctx context.Context, user string, in accounts.ProfileInput, now int64) ([]queue.Pending, error) {
	var told []queue.Pending
	if s.cfg.Outbox != nil {
		told = append(told, s.cfg.Outbox.Profiled(user, now))
	}
	if in.Locked == nil || *in.Locked || s.cfg.Unlocking == nil {
		return told, nil
	}
	was, ok, err := accounts.Load(ctx, s.db, user)
	if err != nil || !ok || !was.Locked {
		return told, err
	}
	return append(told, s.cfg.Unlocking(user, now)), nil
}

// changeProfile is ChangeProfile's transaction, at now (µs).
func (s *Service) changeProfile(ctx context.Context, user string, in accounts.ProfileInput, now int64) error {
	return s.db.Update(ctx, func(tx *store.Tx) error {
		l := tx.Lookup()
		me := accounts.ReadProfile(l, user)
		f := profileFacts{user: user, in: in, now: now, items: map[string]*Item{}}
		found := map[string]store.Ref{}
		l.Then(func() {
			was := me.Profile()
			for _, id := range []string{was.Avatar, was.Header, deref(in.Avatar), deref(in.Header)} {
				if _, ok := found[id]; id != "" && !ok {
					it := &Item{}
					found[id] = l.Add(ItemKey(s.db, id), it)
					f.items[id] = it
				}
			}
		})
		if err := l.Run(ctx); err != nil {
			return err
		}
		if !me.Found() {
			return accounts.ErrNoSuchPerson
		}
		f.was = me.Profile()
		for id, ref := range found {
			if !ref.Found() {
				delete(f.items, id)
			}
		}
		plan, err := decideProfile(f)
		if err != nil {
			return err
		}
		var keys []*datastore.Key
		var puts []any
		for _, id := range slices.Sorted(maps.Keys(plan.items)) {
			it := plan.items[id]
			keys, puts = append(keys, ItemKey(s.db, id)), append(puts, &it)
		}
		if len(keys) > 0 {
			if err := tx.PutMulti(keys, puts); err != nil {
				return err
			}
		}
		return me.Set(tx, plan.profile, in.DisplayName, in.Locked, now)
	})
}

// profileFacts is what a change of profile read: the profile as it
// was, and the pictures it names, old and new (those found).
type profileFacts struct {
	user  string
	in    accounts.ProfileInput
	now   int64 // µs
	was   accounts.Profile
	items map[string]*Item
}

// profilePlan is what a change of profile writes: the profile, and the
// records of the pictures it changes, by id.
type profilePlan struct {
	profile accounts.Profile
	items   map[string]Item
}

// decideProfile decides a change of profile: the new pictures must be
// the person's loose uploads (or move between avatar and header), and
// are marked as theirs; the ones replaced are loose again.
func decideProfile(f profileFacts) (profilePlan, error) {
	to := f.in.Apply(f.was)
	if to.Avatar != "" && to.Avatar == to.Header {
		return profilePlan{}, errSamePicture
	}
	plan := profilePlan{profile: to, items: map[string]Item{}}
	// item is a picture's record as the change leaves it so far.
	item := func(id string) (Item, bool) {
		if it, ok := plan.items[id]; ok {
			return it, true
		}
		if it := f.items[id]; it != nil {
			return *it, true
		}
		return Item{}, false
	}
	for _, c := range []struct{ which, old, new string }{
		{accounts.PictureAvatar, f.was.Avatar, to.Avatar}, {accounts.PictureHeader, f.was.Header, to.Header},
	} {
		if c.old == c.new {
			continue
		}
		if it, ok := item(c.old); c.old != "" && ok && it.Profile == c.which {
			it.Profile, it.Loose = "", f.now // loose again: collected a day later
			plan.items[c.old] = it
		}
		if c.new == "" {
			continue
		}
		it, ok := item(c.new)
		switch {
		case !ok || it.UserID != f.user:
			return profilePlan{}, derrors.New(derrors.NotFound, fmt.Sprintf("no such media item %s of yours", c.new))
		case !it.loose() && it.Profile != otherOf(c.which):
			return profilePlan{}, errNotLoose
		}
		it.Profile, it.Loose = c.which, 0
		plan.items[c.new] = it
	}
	return plan, nil
}

// otherOf names the other profile picture: a picture may move from the
// header to the avatar (or back) in one change.
func otherOf(which string) string {
	if which == accounts.PictureAvatar {
		return accounts.PictureHeader
	}
	return accounts.PictureAvatar
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// ProfilePicture returns the id of user's avatar or header (which), if
// anyone may see it: the person must be there and not suspended
// (policy.SeePicture of a profile picture). One read, of the card.
func (s *Service) ProfilePicture(ctx context.Context, user, which string) (string, error) {
	if which != accounts.PictureAvatar && which != accounts.PictureHeader {
		return "", errNoSuchPerson
	}
	rec, err := accounts.LoadCard(ctx, s.db, user)
	if err != nil {
		return "", err
	}
	avatar, header := rec.Pictures()
	id := avatar
	if which == accounts.PictureHeader {
		id = header
	}
	if id == "" || !policy.SeePicture("", policy.Picture{Owner: user, Profile: true}, rec.Account(), policy.Ties{}) {
		return "", errNoSuchPerson
	}
	return id, nil
}
