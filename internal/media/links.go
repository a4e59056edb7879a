package media

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"strconv"
	"sync"
	"time"

	"socialstream/internal/derrors"
	"socialstream/internal/store"
)

// Links makes and checks the links to pictures. A picture is read through
// the service, never from the bucket: a link names the item and the
// variant (image or thumb), ends at a time, and is signed with a secret
// of the service's (HMAC-SHA256). It is handed out only with something
// the reader was allowed to see (the activity it is on, in a feed; an
// owner's own items), so reading one needs no Datastore read at all, and
// it works in an <img> element, which carries no token. Like a signed
// Cloud Storage URL, anyone holding a link may use it until it ends:
// LinkLife after it was made at most, so a picture whose activity is
// deleted, or hidden, stops being readable within that.
type Links struct {
	db   *store.DB
	base string // PUBLIC_URL, or "" for links from the root
	now  func() time.Time

	mu  sync.Mutex
	key []byte
}

// LinkLife is the least time a link works for; links are made for the
// end of the next LinkStep after it, so that one reader gets the same
// link, which the browser caches, for LinkStep at a time.
const (
	LinkLife = time.Hour
	LinkStep = 30 * time.Minute
)

// NewLinks returns the Links of the service at base ("" for links from
// the root: /media/...).
func NewLinks(db *store.DB, base string) *Links {
	return &Links{db: db, base: base, now: time.Now}
}

// linkKey is the stored secret.
type linkKey struct {
	Key []byte `datastore:"key,noindex"`
}

// secret returns the signing key: read once per instance, made by the
// first instance that finds none.
func (l *Links) secret(ctx context.Context) ([]byte, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.key != nil {
		return l.key, nil
	}
	k := l.db.NameKey(KindKey, "links", nil)
	var stored linkKey
	err := l.db.Update(ctx, func(tx *store.Tx) error {
		ok, err := tx.Get(k, &stored)
		if err != nil || ok {
			return err
		}
		stored.Key = make([]byte, 32)
		if _, err := rand.Read(stored.Key); err != nil {
			return err
		}
		return tx.Put(k, &stored)
	})
	if err != nil {
		return nil, fmt.Errorf("media: the links' key: %w", err)
	}
	l.key = stored.Key
	return l.key, nil
}

// Minter makes links that end at one time.
type Minter struct {
	key  []byte
	base string
	end  int64 // Unix seconds
}

// Minter returns a Minter of links that work for LinkLife at least.
func (l *Links) Minter(ctx context.Context) (Minter, error) {
	key, err := l.secret(ctx)
	if err != nil {
		return Minter{}, err
	}
	end := l.now().Add(LinkLife).Truncate(LinkStep).Add(LinkStep)
	return Minter{key: key, base: l.base, end: end.Unix()}, nil
}

func sign(key []byte, id, variant string, end int64) string {
	m := hmac.New(sha256.New, key)
	fmt.Fprintf(m, "%s/%s/%d", id, variant, end)
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil)[:16])
}

// Variants of a picture.
const (
	VariantImage = "image"
	VariantThumb = "thumb"
)

func (m Minter) link(id, variant string) string {
	return fmt.Sprintf("%s/media/%s/%s?e=%d&s=%s", m.base, id, variant, m.end, sign(m.key, id, variant, m.end))
}

var (
	errBadLink = derrors.New(derrors.NotFound, "no such picture")
	errExpired = derrors.New(derrors.PermissionDenied, "the link has ended: read what it was on again for a new one")
)

// Check checks a link's end and signature, and returns how long it still
// works.
func (l *Links) Check(ctx context.Context, id, variant, end, sig string) (time.Duration, error) {
	if !ValidID(id) || variant != VariantImage && variant != VariantThumb {
		return 0, errBadLink
	}
	e, err := strconv.ParseInt(end, 10, 64)
	if err != nil {
		return 0, errBadLink
	}
	key, err := l.secret(ctx)
	if err != nil {
		return 0, err
	}
	if !hmac.Equal([]byte(sign(key, id, variant, e)), []byte(sig)) {
		return 0, errBadLink
	}
	left := time.Unix(e, 0).Sub(l.now())
	if left <= 0 {
		return 0, errExpired
	}
	return left, nil
}

// View is a picture as clients see it: OpenSocial's MediaItem, with its
// alt text (description), size, and links that work for a while.
type View struct {
	ID           string `json:"id"`
	AlbumID      string `json:"albumId,omitempty"`
	ActivityID   string `json:"activityId,omitempty"`
	UserID       string `json:"userId,omitempty"`
	Type         string `json:"type"`
	MimeType     string `json:"mimeType"`
	URL          string `json:"url"`
	ThumbnailURL string `json:"thumbnailUrl"`
	Title        string `json:"title,omitempty"`
	Description  string `json:"description"`
	Width        int    `json:"width"`
	Height       int    `json:"height"`
	FileSize     int64  `json:"fileSize,omitempty"`
	Created      string `json:"created,omitempty"`
}

// Attached returns the view of a picture on an activity.
func (m Minter) Attached(a Attached) View {
	return View{
		ID: a.ID, Type: "image", MimeType: a.MimeType, Description: a.Description, Width: a.Width, Height: a.Height,
		URL: m.link(a.ID, VariantImage), ThumbnailURL: m.link(a.ID, VariantThumb),
	}
}

// Item returns the view of an item, for its owner or a reader of the
// activity it is on.
func (m Minter) Item(it *Item) View {
	v := m.Attached(it.Attached)
	v.AlbumID, v.ActivityID, v.UserID = it.AlbumID, it.ActivityID, it.UserID
	v.Title, v.FileSize, v.Created = it.Title, it.Bytes, it.Created.UTC().Format(time.RFC3339)
	return v
}

// AlbumView is an album as clients see it: OpenSocial's Album.
type AlbumView struct {
	ID             string `json:"id"`
	OwnerID        string `json:"ownerId"`
	Title          string `json:"title"`
	Description    string `json:"description"`
	MediaItemCount int    `json:"mediaItemCount"`
	MediaType      string `json:"mediaType"`
	ThumbnailURL   string `json:"thumbnailUrl,omitempty"`
	Created        string `json:"created"`
}

// Album returns the view of an album.
func (m Minter) Album(id string, a *Album) AlbumView {
	v := AlbumView{ID: id, OwnerID: a.UserID, Title: a.Title, Description: a.Description, MediaItemCount: a.Count,
		MediaType: "image", Created: a.Created.UTC().Format(time.RFC3339)}
	if a.Cover != "" {
		v.ThumbnailURL = m.link(a.Cover, VariantThumb)
	}
	return v
}
