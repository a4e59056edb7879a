package media

import (
	"context"
	"fmt"

	"cloud.google.com/go/datastore"

	"socialstream/internal/accounts"
	"socialstream/internal/derrors"
	"socialstream/internal/policy"
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

// SetProfile changes user's profile (accounts.ProfileInput) and returns
// the person as they see themselves then. A new avatar or header is one
// of their loose uploads, which it marks as theirs; the picture it
// replaces is loose again, and collected a day later (LooseFor) as any
// upload no post took. One transaction: the User and the card, which both
// hold the profile, and the pictures.
func (s *Service) SetProfile(ctx context.Context, user string, in accounts.ProfileInput) (accounts.Person, error) {
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
	err = s.db.Update(ctx, func(tx *store.Tx) error {
		l := tx.Lookup()
		me := accounts.ReadProfile(l, user)
		pictures := map[string]*Item{} // the items the change touches, old and new
		found := map[string]store.Ref{}
		l.Then(func() {
			was := me.Profile()
			for _, id := range []string{was.Avatar, was.Header, deref(in.Avatar), deref(in.Header)} {
				if id != "" && pictures[id] == nil {
					pictures[id] = &Item{}
					found[id] = l.Add(ItemKey(s.db, id), pictures[id])
				}
			}
		})
		if err := l.Run(ctx); err != nil {
			return err
		}
		if !me.Found() {
			return accounts.ErrNoSuchPerson
		}
		was := me.Profile()
		to := in.Apply(was)
		if to.Avatar != "" && to.Avatar == to.Header {
			return errSamePicture
		}
		var keys []*datastore.Key
		var puts []any
		for _, c := range []struct{ which, old, new string }{
			{accounts.PictureAvatar, was.Avatar, to.Avatar}, {accounts.PictureHeader, was.Header, to.Header},
		} {
			if c.old == c.new {
				continue
			}
			if it := pictures[c.old]; c.old != "" && found[c.old].Found() && it.Profile == c.which {
				it.Profile, it.Loose = "", now // loose again: collected a day later
				keys, puts = append(keys, ItemKey(s.db, c.old)), append(puts, it)
			}
			if c.new == "" {
				continue
			}
			it := pictures[c.new]
			switch {
			case !found[c.new].Found() || it.UserID != user:
				return derrors.New(derrors.NotFound, fmt.Sprintf("no such media item %s of yours", c.new))
			case !it.loose() && it.Profile != otherOf(c.which):
				return errNotLoose
			}
			it.Profile, it.Loose = c.which, 0
			keys, puts = append(keys, ItemKey(s.db, c.new)), append(puts, it)
		}
		if len(keys) > 0 {
			if err := tx.PutMulti(keys, puts); err != nil {
				return err
			}
		}
		return me.Set(tx, to)
	})
	if err != nil {
		return accounts.Person{}, fmt.Errorf("media.SetProfile(%s): %w", user, err)
	}
	p, _, err := accounts.Load(ctx, s.db, user)
	return p, err
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
