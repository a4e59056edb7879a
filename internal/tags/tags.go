// Package tags owns hashtags: how they are written in text and named, and
// who follows which, as TagFollow/{userId}:{tag}, one root entity per pair,
// indexed by userId (a person's list, an erasure) and by tag and created
// (the followers a post reaches).
//
// After Mastodon's: a #tag in an activity's title or body files it under
// the tag, whose feed anyone may read; following a tag brings its new
// public posts to the follower's home feed from then on. Unfollowing stops
// what comes next and leaves what came. A tag is named case-folded and in
// NFC, so #Café, #CAFÉ and #café (however composed) are one tag.
package tags

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"cloud.google.com/go/datastore"
	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"

	"socialstream/internal/derrors"
	"socialstream/internal/store"
)

// KindTagFollow is the kind of the entities this package owns.
const KindTagFollow = "TagFollow"

// Limits.
const (
	// MaxLen is the most characters a tag has.
	MaxLen = 100
	// MaxPerActivity is the most distinct tags one activity carries; a
	// post or edit with more is refused.
	MaxPerActivity = 20
)

var (
	// ErrBadTag refuses a tag name that is not one.
	ErrBadTag = derrors.New(derrors.InvalidArgument, fmt.Sprintf("a tag is 1 to %d letters, digits, marks or _, not digits alone, with or without a leading #", MaxLen))
	// ErrTooMany refuses text with more distinct tags than MaxPerActivity.
	ErrTooMany = derrors.New(derrors.InvalidArgument, fmt.Sprintf("an activity carries at most %d distinct #tags", MaxPerActivity))
)

// fold is the case folding of tag names. A cases.Caser keeps state, so
// each use makes its own.
func fold(s string) string { return norm.NFC.String(cases.Fold().String(norm.NFC.String(s))) }

// tagRune reports whether r may be part of a tag.
func tagRune(r rune) bool {
	return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.M, r)
}

// valid reports whether name, folded, is a tag: 1 to MaxLen tag runes, not
// digits alone (#1 is a number, not a tag).
func valid(name string) bool {
	n, letter := 0, false
	for _, r := range name {
		if !tagRune(r) {
			return false
		}
		if !unicode.IsDigit(r) {
			letter = true
		}
		n++
	}
	return n >= 1 && n <= MaxLen && letter
}

// Normalize returns the tag a client names, with or without a leading #,
// as stored, or ErrBadTag.
func Normalize(s string) (string, error) {
	if !utf8.ValidString(s) {
		return "", ErrBadTag
	}
	name := fold(strings.TrimPrefix(s, "#"))
	if !valid(name) {
		return "", ErrBadTag
	}
	return name, nil
}

// Parse returns the distinct tags written as #tag in text, folded, in
// order of first appearance. A # starts a tag at the start of the text or
// after a character that cannot be part of one, nor a / or ) (so a URL's
// #fragment and a character reference like &#39; are not tags); the tag
// runs over letters, digits, marks and _. Digits alone are no tag. A tag
// longer than MaxLen, or more than MaxPerActivity distinct tags, is a 400:
// the writer is told, never cut short in silence.
func Parse(text string) ([]string, error) {
	var out []string
	seen := map[string]bool{}
	var err error
	EachIn(text, func(_, _ int, name string) bool {
		switch {
		case utf8.RuneCountInString(name) > MaxLen:
			err = derrors.New(derrors.InvalidArgument, fmt.Sprintf("#%s… is longer than %d characters", string([]rune(name)[:20]), MaxLen))
		case seen[name]:
		case len(out) == MaxPerActivity:
			err = ErrTooMany
		default:
			seen[name] = true
			out = append(out, name)
		}
		return err == nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// EachIn calls f with each #tag of text, by Parse's rules, in order:
// where its # starts and its name ends, and its name folded (of any
// length), until f returns false.
func EachIn(text string, f func(start, end int, name string) bool) {
	prev := rune(-1) // the rune before i; -1 at the start
	for i := 0; i < len(text); {
		r, size := utf8.DecodeRuneInString(text[i:])
		if r != '#' || prev != -1 && (tagRune(prev) || prev == '#' || prev == '/' || prev == ')' || prev == '&') {
			prev = r
			i += size
			continue
		}
		hash, start, end, n := i, i+size, i+size, 0
		for end < len(text) {
			c, w := utf8.DecodeRuneInString(text[end:])
			if !tagRune(c) {
				break
			}
			end += w
			n++
		}
		prev, i = '#', end
		if n == 0 {
			continue
		}
		prev, _ = utf8.DecodeLastRuneInString(text[:end])
		name := fold(text[start:end])
		if !strings.ContainsFunc(name, func(c rune) bool { return !unicode.IsDigit(c) }) {
			continue // a number
		}
		if !f(hash, end, name) {
			return
		}
	}
}

// follow is one person's follow of a tag, as stored.
type follow struct {
	UserID  string    `datastore:"userId"`
	Tag     string    `datastore:"tag"`
	Created time.Time `datastore:"created"`
}

// Followed is a follow of a tag as this package answers it.
type Followed struct {
	Tag     string
	Created time.Time
}

// Key returns the key of user's follow of tag.
func Key(db *store.DB, user, tag string) *datastore.Key {
	return db.NameKey(KindTagFollow, user+":"+tag, nil)
}

// Read adds user's follow of tag to a lookup: its Ref says whether it is
// there.
func Read(l *store.Lookup, user, tag string) store.Ref {
	return l.Add(Key(l.DB(), user, tag), &follow{})
}

// Service makes, ends and lists follows of tags.
type Service struct {
	db  *store.DB
	now func() time.Time
}

// New returns a Service.
func New(db *store.DB) (*Service, error) {
	if db == nil {
		return nil, errors.New("tags.New: nil dependency")
	}
	return &Service{db: db, now: time.Now}, nil
}

// Follow makes user follow tag (a name as a client gives it) and returns
// the follow. Following a tag followed already changes nothing: its posts
// reach the follower from the first follow on.
func (s *Service) Follow(ctx context.Context, user, name string) (Followed, error) {
	tag, err := Normalize(name)
	if err != nil {
		return Followed{}, err
	}
	key := Key(s.db, user, tag)
	var f follow
	err = s.db.Update(ctx, func(tx *store.Tx) error {
		if ok, err := tx.Get(key, &f); err != nil || ok {
			return err
		}
		f = follow{UserID: user, Tag: tag, Created: s.now().UTC()}
		return tx.Put(key, &f)
	})
	if err != nil {
		return Followed{}, fmt.Errorf("tags.Follow(%s, %s): %w", user, tag, err)
	}
	return Followed{Tag: f.Tag, Created: f.Created}, nil
}

// Unfollow ends user's follow of tag, if any.
func (s *Service) Unfollow(ctx context.Context, user, name string) error {
	tag, err := Normalize(name)
	if err != nil {
		return err
	}
	if err := s.db.DeleteMulti(ctx, []*datastore.Key{Key(s.db, user, tag)}); err != nil {
		return fmt.Errorf("tags.Unfollow(%s, %s): %w", user, tag, err)
	}
	return nil
}

// Get returns tag (a name as a client gives it), as stored, and user's
// follow of it if there is one.
func (s *Service) Get(ctx context.Context, user, name string) (string, *Followed, error) {
	tag, err := Normalize(name)
	if err != nil {
		return "", nil, err
	}
	var f follow
	ok, err := s.db.Get(ctx, Key(s.db, user, tag), &f)
	if err != nil || !ok {
		return tag, nil, err
	}
	return tag, &Followed{Tag: f.Tag, Created: f.Created}, nil
}

// List returns the tags user follows, newest follow first.
func (s *Service) List(ctx context.Context, user string, p store.PageRequest) ([]Followed, string, error) {
	q := s.db.Query(KindTagFollow).FilterField("userId", "=", user).Order("-created")
	_, vals, next, err := store.Page[follow](ctx, s.db, q, "tags:"+user, p)
	if err != nil {
		return nil, "", fmt.Errorf("tags.List(%s): %w", user, err)
	}
	out := make([]Followed, len(vals))
	for i, f := range vals {
		out[i] = Followed{Tag: f.Tag, Created: f.Created}
	}
	return out, next, nil
}

// Each calls f with each tag user follows, newest first, a page at a time
// (for an export).
func Each(ctx context.Context, db *store.DB, user string, f func(Followed) error) error {
	q := db.Query(KindTagFollow).FilterField("userId", "=", user).Order("-created")
	return store.Each[follow](ctx, db, q, 500, func(_ *datastore.Key, v *follow) error {
		return f(Followed{Tag: v.Tag, Created: v.Created})
	})
}

// Followers returns up to n of the people who followed tag before the
// given time, in the order they followed, from cursor (empty: the
// first), and the cursor of the rest (empty: none left).
func Followers(ctx context.Context, db *store.DB, tag string, before time.Time, cursor string, n int) ([]string, string, error) {
	q := db.Query(KindTagFollow).FilterField("tag", "=", tag).FilterField("created", "<", before).Order("created")
	_, vals, next, err := store.Page[follow](ctx, db, q, "tagfollowers:"+tag, store.PageRequest{Count: n, Cursor: cursor})
	if err != nil {
		return nil, "", fmt.Errorf("tags.Followers(%s): %w", tag, err)
	}
	out := make([]string, len(vals))
	for i, f := range vals {
		out[i] = f.UserID
	}
	return out, next, nil
}

// Erase deletes up to n of a deleted user's follows of tags, and returns
// how many it deleted.
func Erase(ctx context.Context, db *store.DB, user string, n int) (int, error) {
	deleted, err := db.DeleteWhere(ctx, KindTagFollow, []string{"userId"}, user, n)
	if err != nil {
		return deleted, fmt.Errorf("tags.Erase(%s): %w", user, err)
	}
	return deleted, nil
}
