package accounts

import (
	"cmp"
	"context"
	"fmt"
	"net/url"

	"cloud.google.com/go/datastore"

	"socialstream/internal/derrors"
	"socialstream/internal/store"
	"socialstream/internal/text"
)

// Limits of a profile, after Mastodon's.
const (
	MaxNote       = 500 // characters of the bio
	MaxFields     = 4
	MaxFieldName  = 255
	MaxFieldValue = 255
)

// Profile is what a person says of themselves: a bio (note), up to
// MaxFields name/value fields, and the ids of their avatar and header
// pictures (package media, which keeps the pictures and sets these). The
// User holds it and the card copies it (Card), so every page that shows
// the person shows their profile with no read more. Package media reads
// and changes it as a value (ReadProfile, Profiled.Set).
//
//ownership:value
type Profile struct {
	Note   string  `datastore:"note,noindex,omitempty"`
	Fields []Field `datastore:"fields,noindex,omitempty"`
	Avatar string  `datastore:"avatar,noindex,omitempty"`
	Header string  `datastore:"header,noindex,omitempty"`
	// Indexable: their public posts may be found by anyone's search of
	// posts' words (Mastodon's indexable, off until they turn it on).
	// Their posts keep a copy of it as it was when posted, and a search
	// reads it again, so turning it off hides them from strangers' search
	// at once.
	Indexable bool `datastore:"indexable,noindex,omitempty"`
}

// Field is one name/value line of a profile: a value others read and
// write inside the Profile of this package's entities.
//
//ownership:value
type Field struct {
	Name  string `datastore:"name,noindex" json:"name"`
	Value string `datastore:"value,noindex" json:"value"`
}

// ProfileInput is a change of a profile: a nil field is left as it is.
// Avatar and Header name uploads of the person's ("" takes the picture
// away); package media checks and keeps them.
type ProfileInput struct {
	// DisplayName is the name shown (empty: the username again).
	DisplayName    *string
	Note           *string
	Fields         *[]Field
	Avatar, Header *string
	// Locked locks or unlocks the account: follows of it then wait for
	// its owner's approval (an unlock approves what is pending, by a job
	// enqueued ahead).
	Locked *bool
	// Indexable opts their public posts into anyone's search, or out.
	Indexable *bool
}

// Clean checks a change of a profile and returns it cleaned: the note
// multiline, the fields one line each, names required.
func (in ProfileInput) Clean() (ProfileInput, error) {
	if in.DisplayName == nil && in.Note == nil && in.Fields == nil && in.Avatar == nil && in.Header == nil && in.Locked == nil && in.Indexable == nil {
		return in, derrors.New(derrors.InvalidArgument, "give a display name, a note, fields, an avatar, a header, a lock or indexable to change")
	}
	if in.DisplayName != nil {
		name, err := text.Clean("displayName", *in.DisplayName, text.Rules{Max: MaxDisplayName})
		if err != nil {
			return in, err
		}
		in.DisplayName = &name
	}
	if in.Note != nil {
		note, err := text.Clean("note", *in.Note, text.Rules{Max: MaxNote, Multiline: true})
		if err != nil {
			return in, err
		}
		in.Note = &note
	}
	if in.Fields != nil {
		fields, err := cleanFields(*in.Fields)
		if err != nil {
			return in, err
		}
		in.Fields = &fields
	}
	return in, nil
}

// cleanFields checks a profile's fields and returns them cleaned: at
// most MaxFields, each name required, each one line.
func cleanFields(in []Field) ([]Field, error) {
	if len(in) > MaxFields {
		return nil, derrors.New(derrors.InvalidArgument, fmt.Sprintf("at most %d fields", MaxFields))
	}
	fields := make([]Field, len(in))
	for i, f := range in {
		var err error
		if fields[i].Name, err = text.Clean(fmt.Sprintf("fields[%d].name", i), f.Name, text.Rules{Max: MaxFieldName, Required: true}); err != nil {
			return nil, err
		}
		if fields[i].Value, err = text.Clean(fmt.Sprintf("fields[%d].value", i), f.Value, text.Rules{Max: MaxFieldValue}); err != nil {
			return nil, err
		}
	}
	return fields, nil
}

// Apply returns p changed by in (cleaned); the pictures are the caller's.
func (in ProfileInput) Apply(p Profile) Profile {
	if in.Note != nil {
		p.Note = *in.Note
	}
	if in.Fields != nil {
		p.Fields = *in.Fields
	}
	if in.Avatar != nil {
		p.Avatar = *in.Avatar
	}
	if in.Header != nil {
		p.Header = *in.Header
	}
	if in.Indexable != nil {
		p.Indexable = *in.Indexable
	}
	return p
}

// Profiled is a person as a transaction read them, to change their
// profile: the User and the card, which both hold it.
type Profiled struct {
	user       string
	u          User
	c          Counts
	uRef, cRef store.Ref
}

// ReadProfile adds user's User and card to a lookup in a transaction.
func ReadProfile(l *store.Lookup, user string) *Profiled {
	p := &Profiled{user: user}
	p.uRef, p.cRef = l.Add(UserKey(l.DB(), user), &p.u), l.Add(CountsKey(l.DB(), user), &p.c)
	return p
}

// Found reports whether the person is there.
func (p *Profiled) Found() bool { return p.uRef.Found() }

// Profile returns the profile as read.
func (p *Profiled) Profile() Profile { return p.u.Profile }

// DisplayName returns the display name as read.
func (p *Profiled) DisplayName() string { return p.u.DisplayName }

// Locked reports whether the account was locked as read.
func (p *Profiled) Locked() bool { return p.u.Standing.Locked }

// Set writes, in tx, the person's profile on the User and the card,
// their display name if display is not nil (empty: their username), and
// their lock if locked is not nil (an unlock noted at at: UnlockTask's
// wait), as changed at (µs; User.Changed).
func (p *Profiled) Set(tx *store.Tx, to Profile, display *string, locked *bool, at int64) error {
	u := p.u
	u.Profile, u.Changed = to, max(u.Changed, at)
	if display != nil {
		u.DisplayName = cmp.Or(*display, u.Username)
	}
	if locked != nil {
		lock(&u.Standing, *locked, at)
	}
	return tx.PutMulti([]*datastore.Key{UserKey(tx.DB(), p.user), CountsKey(tx.DB(), p.user)}, []any{&u, Card(&u, p.c)})
}

// Picture names one of a person's profile pictures, as its link says it.
const (
	PictureAvatar = "avatar"
	PictureHeader = "header"
)

// PicturePath is the path, from the service's root, that serves a
// person's profile picture (avatar or header) in variant ("image" or
// "thumb"): it names the person, so it lasts, and the picture's id, so a
// new picture is a new link to every cache.
func PicturePath(user, which, item, variant string) string {
	return "/media/people/" + url.PathEscape(user) + "/" + which + "/" + variant + "?v=" + url.QueryEscape(item)
}

// setPictures fills the links of p's profile pictures.
func (p *Person) setPictures(prof Profile) {
	p.Note, p.Fields = prof.Note, prof.Fields
	if p.Fields == nil {
		p.Fields = []Field{}
	}
	if prof.Avatar != "" {
		p.AvatarURL = PicturePath(p.ID, PictureAvatar, prof.Avatar, "image")
		p.ThumbnailURL = PicturePath(p.ID, PictureAvatar, prof.Avatar, "thumb")
	}
	if prof.Header != "" {
		p.HeaderURL = PicturePath(p.ID, PictureHeader, prof.Header, "image")
	}
}

// Pictures returns the ids of a person's profile pictures ("" for none).
func (r *Record) Pictures() (avatar, header string) {
	if !r.Exists() {
		return "", ""
	}
	return r.u.Profile.Avatar, r.u.Profile.Header
}

// LoadCard reads a person's card outside a transaction: the Record of
// Read, for the picture links.
func LoadCard(ctx context.Context, db *store.DB, id string) (*Record, error) {
	l := db.Lookup()
	r := Read(l, id)
	if err := l.Run(ctx); err != nil {
		return nil, fmt.Errorf("accounts.LoadCard(%s): %w", id, err)
	}
	return r, nil
}
