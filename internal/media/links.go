package media

import (
	"cmp"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"cloud.google.com/go/datastore"

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
// Cloud Storage URL, anyone holding a link may use it until it ends, LinkLife after it was made at most: days, so that a
// timeline an app keeps open, or caches, shows its pictures. A deleted
// picture (its activity deleted, its owner erased, the item deleted)
// stops at once: its objects go with the job that follows the delete,
// and caches keep it CacheFor at most. One hidden from a reader since (a
// block, a suspension, a takedown) is in no answer to them from then on,
// and a link they were handed before works until it ends.
//
// The secrets are a keyring (MediaKey/links): each key signs the links
// made from its start, and checks them until they end. RotateKeyring
// adds a key that starts a while later, once every instance has read it
// (KeyRefresh), and drops those whose links have all ended; so two keys
// are valid at once while one takes over from the other.
type Links struct {
	db   *store.DB
	base string // PUBLIC_URL, or "" for links from the root
	now  func() time.Time
	keys *store.Refreshed[[]signingKey] // newest start first
}

// LinkLife is the least time a link works for; links are made for the
// end of the next LinkStep after it, so that one reader gets the same
// link, which the browser (or a CDN) caches, for LinkStep at a time.
const (
	LinkLife = 7 * 24 * time.Hour
	LinkStep = 24 * time.Hour
)

// CacheFor is how long a cache may keep a picture a link reads: the
// longest a deleted picture is still seen.
const CacheFor = time.Hour

// KeyRefresh is how long an instance keeps the keyring it read.
const KeyRefresh = 5 * time.Minute

// NewLinks returns the Links of the service at base ("" for links from
// the root: /media/...).
func NewLinks(db *store.DB, base string) *Links {
	l := &Links{db: db, base: base, now: time.Now}
	l.keys = store.NewRefreshed(KeyRefresh, func(ctx context.Context) ([]signingKey, error) { return readKeyring(ctx, db) },
		func() time.Time { return l.now() })
	return l
}

// keyring is the stored keyring: each entry "START.KEY", the Unix second
// from which links are signed with the key, and the key, base64.
type keyring struct {
	Keys []string `datastore:"keys,noindex"`
}

type signingKey struct {
	start int64
	key   []byte
}

func (r *keyring) parse() ([]signingKey, error) {
	out := make([]signingKey, 0, len(r.Keys))
	for _, e := range r.Keys {
		start, b64, ok := strings.Cut(e, ".")
		n, err := strconv.ParseInt(start, 10, 64)
		key, err2 := base64.RawURLEncoding.DecodeString(b64)
		if !ok || err != nil || err2 != nil || len(key) != 32 {
			return nil, fmt.Errorf("media: a malformed key in the links' keyring")
		}
		out = append(out, signingKey{start: n, key: key})
	}
	slices.SortFunc(out, func(a, b signingKey) int { return cmp.Compare(b.start, a.start) })
	return out, nil
}

func (r *keyring) add(start int64) error {
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return err
	}
	r.Keys = append(r.Keys, strconv.FormatInt(start, 10)+"."+base64.RawURLEncoding.EncodeToString(key))
	return nil
}

func keyringKey(db *store.DB) *datastore.Key { return db.NameKey(KindKey, "links", nil) }

// keyring returns the keys, newest start first: read again every
// KeyRefresh, made by the first instance that finds none.
func (l *Links) keyring(ctx context.Context) ([]signingKey, error) {
	ring, err := l.keys.Get(ctx)
	if err != nil {
		return nil, fmt.Errorf("media: the links' keys: %w", err)
	}
	return ring, nil
}

// Warm reads (or makes) the keyring now, as an instance starts: the
// first pages and uploads of a new deployment, many at once, then find
// it rather than each making it in a transaction of its own, all locked
// on the one entity.
func (l *Links) Warm(ctx context.Context) error {
	_, err := l.keyring(ctx)
	return err
}

// readKeyring reads the links' keyring by key, or makes it when there is
// none (the first instance to need it).
func readKeyring(ctx context.Context, db *store.DB) ([]signingKey, error) {
	var ring keyring
	err := store.MakeOnce(ctx, db, keyringKey(db), &ring, func(r *keyring) bool { return len(r.Keys) == 0 },
		func(r *keyring) error { return r.add(0) })
	if err != nil {
		return nil, err
	}
	return ring.parse()
}

// Rotation is what RotateKeyring did.
type Rotation struct {
	Starts  time.Time // when the new key starts signing
	Dropped int       // keys dropped, their links all ended
	Kept    int       // keys in the ring now, the new one included
}

// RotateKeyring adds a key to the links' keyring that starts signing
// twice KeyRefresh from now (every instance has read it by then, so each
// checks the links the others sign with it), and drops the keys whose
// links have all ended: those a newer key took over from more than
// KeyRefresh (an instance may sign with the older one until it reads the
// ring again) and LinkLife and LinkStep (the longest a link works) ago.
// cmd/admin runs it.
func RotateKeyring(ctx context.Context, db *store.DB, now time.Time) (Rotation, error) {
	var out Rotation
	err := db.Update(ctx, func(tx *store.Tx) error {
		var ring keyring
		if _, err := tx.Get(keyringKey(db), &ring); err != nil {
			return err
		}
		keys, err := ring.parse()
		if err != nil {
			return err
		}
		start := now.Add(2 * KeyRefresh)
		out = Rotation{Starts: start}
		kept := keyring{}
		over := now.Add(-KeyRefresh - LinkLife - LinkStep).Unix()
		for i, k := range keys { // newest start first
			if i > 0 && keys[i-1].start <= over {
				out.Dropped++
				continue
			}
			kept.Keys = append(kept.Keys, strconv.FormatInt(k.start, 10)+"."+base64.RawURLEncoding.EncodeToString(k.key))
		}
		if err := kept.add(start.Unix()); err != nil {
			return err
		}
		out.Kept = len(kept.Keys)
		return tx.Put(keyringKey(db), &kept)
	})
	if err != nil {
		return Rotation{}, fmt.Errorf("media.RotateKeyring: %w", err)
	}
	return out, nil
}

// Minter makes links that end at one time.
type Minter struct {
	key  []byte
	base string
	end  int64 // Unix seconds
}

// Minter returns a Minter of links that work for LinkLife at least,
// signed with the newest key that has started.
func (l *Links) Minter(ctx context.Context) (Minter, error) {
	keys, err := l.keyring(ctx)
	if err != nil {
		return Minter{}, err
	}
	now := l.now()
	key := keys[len(keys)-1].key // the oldest, should none have started
	for _, k := range keys {
		if k.start <= now.Unix() {
			key = k.key
			break
		}
	}
	end := now.Add(LinkLife).Truncate(LinkStep).Add(LinkStep)
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

// Ready says whether m makes links (a Minter's zero value makes none).
func (m Minter) Ready() bool { return len(m.key) > 0 }

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
	keys, err := l.keyring(ctx)
	if err != nil {
		return 0, err
	}
	if !slices.ContainsFunc(keys, func(k signingKey) bool {
		return hmac.Equal([]byte(sign(k.key, id, variant, e)), []byte(sig))
	}) {
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
	// Remote is, for a picture of a post from elsewhere, its address
	// there (Mastodon's remote_url); its links are still ours.
	Remote string `json:"-"`
	// Processing says an upload is still being made safe, with no link
	// yet; Broken, why it could not be (UploadLater).
	Processing bool   `json:"-"`
	Broken     string `json:"-"`
}

// Attached returns the view of a picture on an activity.
func (m Minter) Attached(a Attached) View {
	return View{
		ID: a.ID, Type: "image", MimeType: a.MimeType, Description: a.Description, Width: a.Width, Height: a.Height,
		URL: m.link(a.ID, VariantImage), ThumbnailURL: m.link(a.ID, VariantThumb), Remote: a.Remote,
	}
}

// Item returns the view of an item, for its owner or a reader of the
// activity it is on.
func (m Minter) Item(it *Item) View {
	v := m.Attached(it.Attached)
	v.AlbumID, v.ActivityID, v.UserID = it.AlbumID, it.ActivityID, it.UserID
	v.Title, v.FileSize, v.Created = it.Title, it.Bytes, it.Created.UTC().Format(time.RFC3339)
	if !it.Ready() {
		// Nothing to link to until its job has made it safe.
		v.URL, v.ThumbnailURL, v.Processing, v.Broken = "", "", it.Processing != 0, it.Broken
	}
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
