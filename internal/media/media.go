// Package media owns pictures: their bytes in a Cloud Storage bucket, and
// in Datastore what is known of them, never the bytes themselves.
//
//   - MediaItem/{id}: one uploaded image (OpenSocial's MediaItem): its
//     owner, type, size, alt text, and where it belongs: on one activity
//     (activityId), in one album (albumId), or nowhere yet (loose). Its
//     bytes are the objects media/{id} and media/{id}/thumb.
//   - Album/{id}: a person's album (OpenSocial's Album).
//   - MediaKey/links: the secret that signs the links to pictures
//     (links.go), made once.
//
// An activity keeps a copy of its pictures (Attached) in its own entity,
// written in the post's commit, so a feed shows them with no further read.
//
// No object outlives what it belongs to. An upload enqueues its collection
// before it stores anything: a day later, the collect job deletes the
// objects of an item that is still loose, or was never stored. A deleted
// item's objects go at once, and by a job enqueued before the delete that
// waits for its commit; a deleted album's and
// a deleted activity's items go by jobs that delete the objects before the
// entities, so a retry finds what remains; an erased account's by a phase
// of its erasure. Every job can run any number of times.
package media

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync/atomic"
	"time"

	"cloud.google.com/go/datastore"
	"cloud.google.com/go/storage"
	"golang.org/x/sync/semaphore"
	"golang.org/x/sync/singleflight"
	"google.golang.org/api/googleapi"
	"google.golang.org/api/option"

	"socialstream/internal/accounts"
	"socialstream/internal/derrors"
	"socialstream/internal/ids"
	"socialstream/internal/outbox"
	"socialstream/internal/queue"
	"socialstream/internal/store"
	"socialstream/internal/text"
)

// Kinds of the entities this package owns.
const (
	KindItem  = "MediaItem"
	KindAlbum = "Album"
	KindKey   = "MediaKey"
)

// Limits of the contract.
const (
	MaxPerActivity = 4    // pictures on one activity
	MaxDescription = 1500 // alt text, in characters (Mastodon's limit)
	MaxTitle       = 200
	MaxAlbums      = 100 // albums per person
	MaxAlbumItems  = 1000
	// LooseFor is how long an item on no activity and in no album is
	// kept before it is collected.
	LooseFor = 24 * time.Hour
)

// Item is the stored record of a picture. Other packages read the items
// this one hands them; only this one reads or writes them in Datastore.
//
//ownership:value
type Item struct {
	UserID string `datastore:"userId"`
	// AlbumID and ActivityID say where it belongs (at most one is set):
	// indexed for a deleted album's and a deleted activity's jobs.
	AlbumID    string    `datastore:"albumId,omitempty"`
	ActivityID string    `datastore:"activityId,omitempty"`
	Created    time.Time `datastore:"created"`
	// Loose is, while it belongs nowhere, when it was uploaded (µs), and
	// 0 (not stored, so in no index) once it belongs somewhere: the
	// scheduled collection finds the loose past LooseFor by its index.
	Loose int64 `datastore:"loose,omitempty"`
	// Held, on a picture a scheduled post will carry, is that post's id:
	// it is kept for it (not loose) until the post is published, when it
	// goes on the activity, or cancelled, when it is loose again. On a
	// preview card's picture (Keep), it is "card:" and the card's key.
	Held string `datastore:"held,noindex,omitempty"`
	// Profile, on a profile picture, says which it is (accounts'
	// PictureAvatar or PictureHeader).
	Profile string `datastore:"profile,noindex,omitempty"`
	Attached
	Title string `datastore:"title,noindex,omitempty"`
	Bytes int64  `datastore:"bytes,noindex"`
	// Cached, on a picture from elsewhere (Attached.Remote), is when its
	// bytes were last fetched (µs), 0 while they are not here; Failed
	// when they last could not be had (remote.go).
	Cached int64 `datastore:"cached,noindex,omitempty"`
	Failed int64 `datastore:"failed,noindex,omitempty"`
	// Processing is, on an upload its job makes safe (UploadLater), when
	// it was uploaded (µs), until the job has: 0 after. Broken is then,
	// should the job have found it cannot be, why (a message for the
	// client).
	Processing int64  `datastore:"processing,noindex,omitempty"`
	Broken     string `datastore:"broken,noindex,omitempty"`
}

// Ready reports whether the item's picture is made safe and stored: a
// post may carry it.
func (it *Item) Ready() bool { return it.Processing == 0 && it.Broken == "" }

// Attached is what an activity keeps of each of its pictures, and what
// every view of a picture is made from: a value stored inside another
// owner's entity (activities.Activity.Media).
//
//ownership:value
type Attached struct {
	ID          string `datastore:"id,noindex" json:"-"`
	MimeType    string `datastore:"mimeType,noindex" json:"-"`
	Width       int    `datastore:"width,noindex" json:"-"`
	Height      int    `datastore:"height,noindex" json:"-"`
	ThumbType   string `datastore:"thumbType,noindex" json:"-"`
	ThumbWidth  int    `datastore:"thumbWidth,noindex" json:"-"`
	ThumbHeight int    `datastore:"thumbHeight,noindex" json:"-"`
	Description string `datastore:"description,noindex" json:"-"`
	// Remote is, for a picture of a post from another server, its
	// address there (remote.go).
	Remote string `datastore:"remote,noindex,omitempty" json:"-"`
}

// loose reports whether the item belongs nowhere yet.
func (it *Item) loose() bool {
	return it.AlbumID == "" && it.ActivityID == "" && it.Profile == "" && it.Held == ""
}

// Album is a stored album.
type Album struct {
	UserID      string    `datastore:"userId"`
	Title       string    `datastore:"title,noindex"`
	Description string    `datastore:"description,noindex"`
	Created     time.Time `datastore:"created"`
	Count       int       `datastore:"count,noindex"`
	// Cover is the item whose thumbnail stands for the album: the last
	// one added, while it is there ("" for none).
	Cover string `datastore:"cover,noindex"`
}

// ItemKey returns an item's key.
func ItemKey(db *store.DB, id string) *datastore.Key { return db.NameKey(KindItem, id, nil) }

// AlbumKey returns an album's key.
func AlbumKey(db *store.DB, id string) *datastore.Key { return db.NameKey(KindAlbum, id, nil) }

// Object names of an item's bytes in the bucket.
func imageObject(id string) string     { return "media/" + id }
func thumbObject(id string) string     { return "media/" + id + "/thumb" }
func thumbWebPObject(id string) string { return "media/" + id + "/thumb.webp" }

// uploadObject is an upload's bytes as sent, kept from the upload until
// its job has made them safe (UploadLater), and never served.
func uploadObject(id string) string { return "media/" + id + "/upload" }

// ObjectsOf returns the names of a made-safe item's objects: its image,
// its thumbnail, and the thumbnail for the clients that take WebP (an
// item made safe before those were made has none).
func ObjectsOf(id string) []string {
	return []string{imageObject(id), thumbObject(id), thumbWebPObject(id)}
}

var (
	ErrNoSuchItem  = derrors.New(derrors.NotFound, "no such media item")
	ErrNoSuchAlbum = derrors.New(derrors.NotFound, "no such album")
	errBadItemID   = derrors.New(derrors.InvalidArgument, "a media item id is the id an upload answered")
)

// ValidID reports whether s may be a media item's or an album's id.
func ValidID(s string) bool { return ids.Scattered(s) }

// Dial returns a client of Cloud Storage, or, when endpoint is set, of
// the emulator whose JSON API is there (no credentials; reads through
// the JSON API, since the XML API's host is production's).
func Dial(ctx context.Context, endpoint string) (*storage.Client, error) {
	var opts []option.ClientOption
	if endpoint != "" {
		opts = []option.ClientOption{option.WithEndpoint(endpoint), option.WithoutAuthentication(), storage.WithJSONReads()}
	}
	c, err := storage.NewClient(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("storage client: %w", err)
	}
	return c, nil
}

// Activities is what pictures change of activities (package activities,
// whose Records implement it).
type Activities interface {
	// Describe changes, in tx, the alt text of a picture in the copy the
	// activity it is on keeps of it.
	Describe(tx *store.Tx, activity, item, description string) error
	// Recopy replaces, in tx, the copy the activity keeps of a picture
	// with a: a picture from elsewhere's size and type, once fetched.
	Recopy(tx *store.Tx, activity string, a Attached) error
}

// Config tunes a Service.
type Config struct {
	// Bucket is the Cloud Storage bucket of the pictures (MEDIA_BUCKET).
	Bucket string
	// Activities, when set, change the copy an activity keeps of its
	// pictures.
	Activities Activities
	// Memory is how many bytes one instance's uploads may hold at once
	// while they are decoded and encoded again (UPLOAD_MEMORY): each is
	// admitted for its Footprint, told from its header, and the rest
	// wait. An upload whose Footprint is more is refused (413): below
	// MaxFootprint, the largest are (docs/performance.md). Default
	// DefaultMemory; at least MinMemory.
	Memory int64
	// Wait is how long an upload waits for its memory before it is
	// answered 503 (try again); default 10 s.
	Wait time.Duration
	// Client, when set, is the one guarded client (package egress) that
	// fetches pictures of posts from other servers; its answers capped
	// at MaxBytes. Without it, such pictures are never had.
	Client *http.Client
	// Outbox, when set (the deployment federates), makes the job that
	// tells other servers of a profile's change.
	Outbox *outbox.Jobs
	// Unlocking makes the job that approves, once an unlock at at (µs)
	// shows, what the person had pending (graph.Unlocking): a change of
	// profile that unlocks enqueues it ahead of its commit.
	Unlocking func(user string, at int64) queue.Pending
}

// DefaultMemory is Config.Memory's default, for App Engine's F2 class
// (768 MB): room for the largest upload (MaxFootprint) and a little more,
// and for the rest of the service beside it.
const DefaultMemory = 320 << 20

// MinMemory is the least Config.Memory, what App Engine's F1 class (384
// MB) can give uploads: it takes a 12-megapixel phone photo, progressive
// and turned (TestMinMemoryTakesAPhonePhoto).
const MinMemory = 176 << 20

// Service keeps pictures and albums.
type Service struct {
	db       *store.DB
	ids      *ids.Generator
	accounts *accounts.Service
	bucket   *storage.BucketHandle
	queue    queue.Queue
	cfg      Config
	now      func() time.Time
	admit    *admission // of cfg.Memory bytes
	Links    *Links
	// fetching is the fetches of pictures from elsewhere that readers
	// wait for, one an item however many wait.
	fetching singleflight.Group
}

// New returns a Service over the bucket cfg.Bucket of client, whose
// links are signed by links.
func New(db *store.DB, gen *ids.Generator, acc *accounts.Service, client *storage.Client, q queue.Queue, links *Links, cfg Config) (*Service, error) {
	if db == nil || gen == nil || acc == nil || client == nil || q == nil || links == nil {
		return nil, errors.New("media.New: nil dependency")
	}
	if cfg.Bucket == "" {
		return nil, errors.New("media.New: no bucket")
	}
	if cfg.Memory == 0 {
		cfg.Memory = DefaultMemory
	}
	if cfg.Memory < MinMemory {
		return nil, fmt.Errorf("media.New: the uploads' memory (%d MiB) is under the least, %d MiB", cfg.Memory>>20, MinMemory>>20)
	}
	if cfg.Wait == 0 {
		cfg.Wait = 10 * time.Second
	}
	return &Service{db: db, ids: gen, accounts: acc, bucket: client.Bucket(cfg.Bucket), queue: q, cfg: cfg,
		now: time.Now, admit: newAdmission(cfg.Memory, cfg.Wait), Links: links}, nil
}

// UploadInput is an upload: the bytes as sent, and what the person says
// of them.
type UploadInput struct {
	Data        []byte
	AlbumID     string // the album it goes into; "" for none (a post's)
	Title       string
	Description string // alt text
}

func cleanText(title, description *string) error {
	var err error
	if *title, err = text.Clean("title", *title, text.Rules{Max: MaxTitle}); err != nil {
		return err
	}
	if *description, err = text.Clean("description", *description, text.Rules{Max: MaxDescription, Multiline: true}); err != nil {
		return err
	}
	return nil
}

// Upload stores a picture of user's: made safe (Process), its objects
// written, then its record; its collection is enqueued first, so that
// whatever fails after, nothing is left behind for more than a day.
func (s *Service) Upload(ctx context.Context, user string, in UploadInput) (*Item, string, error) {
	if err := cleanText(&in.Title, &in.Description); err != nil {
		return nil, "", err
	}
	if in.AlbumID != "" {
		if _, err := s.ownAlbum(ctx, user, in.AlbumID); err != nil {
			return nil, "", err
		}
	}
	pic, err := s.process(ctx, in.Data)
	if err != nil {
		return nil, "", err
	}
	id := ids.Format(s.ids.Next())
	if err := s.enqueue(ctx, Task{Op: OpCollect, ID: id}, LooseFor+time.Minute); err != nil {
		return nil, "", err
	}
	if err := s.write(ctx, id, pic); err != nil {
		s.deleteObjects(context.WithoutCancel(ctx), id) // best effort: the collection follows anyway
		return nil, "", err
	}
	it := &Item{
		UserID: user, AlbumID: in.AlbumID, Created: s.now().UTC(), Title: in.Title, Bytes: int64(len(pic.Data)),
		Attached: Attached{ID: id, MimeType: pic.MimeType, Width: pic.Width, Height: pic.Height, ThumbType: pic.ThumbType,
			ThumbWidth: pic.ThumbWidth, ThumbHeight: pic.ThumbHeight, Description: in.Description},
	}
	if it.loose() {
		it.Loose = it.Created.UnixMicro()
	}
	err = s.saveUpload(ctx, user, in.AlbumID, id, it)
	if err != nil {
		if status, _ := derrors.Status(err); status >= 400 && status < 500 {
			s.dropUnsaved(context.WithoutCancel(ctx), id)
		}
		// Otherwise the objects stay: the commit may have applied all
		// the same, and the collection will know.
		return nil, "", fmt.Errorf("media.Upload(%s): %w", user, err)
	}
	return it, id, nil
}

// saveUpload records upload id, it, of user's, in albumID if not "": in
// one transaction that reads them (their account still there and not
// suspended) and the album (theirs, not full).
func (s *Service) saveUpload(ctx context.Context, user, albumID, id string, it *Item) error {
	return s.db.Update(ctx, func(tx *store.Tx) error {
		var refused error
		l := tx.Lookup()
		me := accounts.Read(l, user)
		var album Album
		var inAlbum store.Ref
		if albumID != "" {
			inAlbum = l.Add(AlbumKey(s.db, albumID), &album)
		}
		if err := l.Run(ctx); err != nil {
			return err
		}
		switch {
		case !me.Exists():
			refused = accounts.ErrBadToken
		case me.Standing().IsSuspended():
			refused = accounts.ErrSuspended
		case albumID != "":
			refused = album.add(inAlbum.Found(), user, id)
		}
		if refused != nil {
			return refused
		}
		if albumID != "" {
			if err := tx.Put(AlbumKey(s.db, albumID), &album); err != nil {
				return err
			}
		}
		return tx.Put(ItemKey(s.db, id), it)
	})
}

// dropUnsaved deletes the objects of upload id, now, once its
// transaction was refused (by itself, or by the guard of its request: an
// account deleted, suspended or signed out while the upload was in
// flight), unless an earlier attempt of that transaction committed (its
// item is there). Best effort: the collection job follows anyway.
func (s *Service) dropUnsaved(ctx context.Context, id string) {
	ctx = store.Unguarded(ctx)
	if ok, err := s.db.Get(ctx, ItemKey(s.db, id), &Item{}); err == nil && !ok {
		s.deleteObjects(ctx, id)
	}
}

// process runs Process once the instance's memory for uploads holds the
// upload's Footprint.
func (s *Service) process(ctx context.Context, data []byte) (*Picture, error) {
	return s.admit.process(ctx, data)
}

// admission admits uploads while their footprints fit a budget of bytes,
// and makes the rest wait, at most wait.
type admission struct {
	memory *semaphore.Weighted
	budget int64
	wait   time.Duration
}

func newAdmission(budget int64, wait time.Duration) *admission {
	return &admission{memory: semaphore.NewWeighted(budget), budget: budget, wait: wait}
}

// process runs Process once data's Footprint fits, waiting at most
// a.wait: then the upload is refused with errBusy, a 503 to try again.
func (a *admission) process(ctx context.Context, data []byte) (*Picture, error) {
	h, err := ReadHeader(data)
	if err != nil {
		return nil, err
	}
	need := h.Footprint(data)
	if err := a.fits(need); err != nil {
		return nil, err
	}
	first := !webpCompiled.Load()
	if first {
		need = min(a.budget, need+webpCompile) // as much as the budget: this picture fits the rest
	}
	wait, cancel := context.WithTimeout(ctx, a.wait)
	defer cancel()
	if err := a.memory.Acquire(wait, need); err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, errBusy
	}
	defer a.memory.Release(need)
	p, err := h.process(data)
	if first && err == nil {
		webpCompiled.Store(true)
	}
	return p, err
}

// webpCompiled is whether this instance has compiled the WebP encoder
// (webpCompile).
var webpCompiled atomic.Bool

// fits refuses a picture whose footprint is more than the whole budget.
func (a *admission) fits(need int64) error {
	if need <= a.budget {
		return nil
	}
	return derrors.New(derrors.TooLarge, fmt.Sprintf("making this picture safe takes %d MiB, more than this server gives one picture (%d MiB): send it with fewer pixels, or as a baseline JPEG", (need+1<<20-1)>>20, a.budget>>20))
}

var errBusy = derrors.New(derrors.Unavailable, "too many pictures are being processed at once: try again shortly")

var errAlbumFull = derrors.New(derrors.Conflict, fmt.Sprintf("an album holds at most %d media items", MaxAlbumItems))

// add counts item into the album a, found or not, of user's.
func (a *Album) add(found bool, user, item string) error {
	if !found || a.UserID != user {
		return ErrNoSuchAlbum
	}
	if a.Count >= MaxAlbumItems {
		return errAlbumFull
	}
	a.Count++
	a.Cover = item
	return nil
}

// drop takes item out of the album a's count and cover.
func (a *Album) drop(item string) {
	a.Count = max(0, a.Count-1)
	if a.Cover == item {
		a.Cover = ""
	}
}

func (s *Service) write(ctx context.Context, id string, p *Picture) error {
	if err := s.writeObject(ctx, imageObject(id), p.MimeType, p.Data); err != nil {
		return err
	}
	// The form for the clients that take WebP: the thumbnail in WebP, or
	// the thumbnail itself where WebP is not smaller, so that every
	// picture has it and serving it never misses.
	webp, kind := p.ThumbWebP, WebP
	if webp == nil {
		webp, kind = p.Thumb, p.ThumbType
	}
	if err := s.writeObject(ctx, thumbWebPObject(id), kind, webp); err != nil {
		return err
	}
	return s.writeObject(ctx, thumbObject(id), p.ThumbType, p.Thumb)
}

// written reports whether a write failed because its object is there.
func written(err error) bool {
	var g *googleapi.Error
	return errors.As(err, &g) && g.Code == http.StatusPreconditionFailed
}

// deleteObjects deletes an item's objects, its bytes as sent among them;
// those already gone count as deleted.
func (s *Service) deleteObjects(ctx context.Context, id string) error {
	var errs []error
	for _, name := range append(ObjectsOf(id), uploadObject(id)) {
		errs = append(errs, s.deleteObject(ctx, name))
	}
	return errors.Join(errs...)
}

// A Form is one of the forms of an item a link names: its image, its
// thumbnail, or its thumbnail for a client that takes WebP (ThumbWebP,
// or the thumbnail itself where that is not smaller), which such a
// client is sent in the thumbnail's place.
type Form int

const (
	FormImage Form = iota
	FormThumb
	FormThumbWebP
)

func (f Form) object(id string) string {
	switch f {
	case FormThumb:
		return thumbObject(id)
	case FormThumbWebP:
		return thumbWebPObject(id)
	}
	return imageObject(id)
}

// Stored reports whether an item's form is in the bucket now: one Class B
// operation, its attributes, no bytes.
func (s *Service) Stored(ctx context.Context, id string, f Form) (bool, error) {
	_, err := s.bucket.Object(f.object(id)).Attrs(ctx)
	if errors.Is(err, storage.ErrObjectNotExist) {
		return false, nil
	}
	return err == nil, err
}

// Open opens the first of an item's forms it has, to be streamed, and
// says which it is: the thumbnail for WebP, say, and then the thumbnail
// for an item made before those were.
func (s *Service) Open(ctx context.Context, id string, forms ...Form) (*storage.Reader, Form, error) {
	r, f, err := s.open(ctx, id, forms)
	if !errors.Is(err, storage.ErrObjectNotExist) {
		return r, f, err
	}
	// A picture from elsewhere not here (yet, or any more) is fetched
	// while the reader waits.
	_, err, _ = s.fetching.Do(id, func() (any, error) { return s.cache(context.WithoutCancel(ctx), id, true) })
	if err != nil {
		var p permanent
		if errors.As(err, &p) || errors.Is(err, errUnavailable) {
			return nil, 0, errUnavailable
		}
		return nil, 0, err
	}
	r, f, err = s.open(ctx, id, forms)
	if errors.Is(err, storage.ErrObjectNotExist) {
		return nil, 0, ErrNoSuchItem
	}
	return r, f, err
}

func (s *Service) open(ctx context.Context, id string, forms []Form) (*storage.Reader, Form, error) {
	err := storage.ErrObjectNotExist
	for _, f := range forms {
		var r *storage.Reader
		if r, err = s.bucket.Object(f.object(id)).NewReader(ctx); !errors.Is(err, storage.ErrObjectNotExist) {
			return r, f, err
		}
	}
	return nil, 0, err
}

// Item returns one item, whoever owns it; ErrNoSuchItem if there is none.
func (s *Service) Item(ctx context.Context, id string) (*Item, error) {
	if !ValidID(id) {
		return nil, ErrNoSuchItem
	}
	var it Item
	ok, err := s.db.Get(ctx, ItemKey(s.db, id), &it)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, ErrNoSuchItem
	}
	it.ID = id
	return &it, nil
}

// Items returns the items named, in the order asked; unknown ids are left
// out.
func (s *Service) Items(ctx context.Context, idList []string) ([]*Item, error) {
	l := s.db.Lookup()
	vals := make([]*Item, len(idList))
	refs := make([]store.Ref, len(idList))
	for i, id := range idList {
		if !ValidID(id) {
			return nil, errBadItemID
		}
		vals[i] = &Item{}
		refs[i] = l.Add(ItemKey(s.db, id), vals[i])
	}
	if err := l.Run(ctx); err != nil {
		return nil, err
	}
	var out []*Item
	for i, r := range refs {
		if r.Found() {
			vals[i].ID = idList[i]
			out = append(out, vals[i])
		}
	}
	return out, nil
}

// scanItems bounds the items one page of a listing reads for the ones
// its reader may see.
const scanItems = 500

// Of lists user's items, newest first, in one album or all of them: those
// seen says the reader may see, in full pages (see store.PageFiltered).
func (s *Service) Of(ctx context.Context, user, album string, p store.PageRequest, seen func([]*Item) ([]bool, error)) ([]*Item, string, error) {
	q := s.db.Query(KindItem).FilterField("userId", "=", user).Order("-created")
	tag := "media:" + user
	if album != "" {
		q = s.db.Query(KindItem).FilterField("albumId", "=", album).Order("-created")
		tag = "album:" + album
	}
	keys, vals, next, err := store.PageFiltered(ctx, s.db, q, tag, p, scanItems, func(keys []*datastore.Key, vals []Item) ([]bool, error) {
		items := make([]*Item, len(vals))
		for i := range vals {
			vals[i].ID = keys[i].Name
			items[i] = &vals[i]
		}
		return seen(items)
	})
	if err != nil {
		return nil, "", err
	}
	out := make([]*Item, len(vals))
	for i := range vals {
		vals[i].ID = keys[i].Name
		out[i] = &vals[i]
	}
	return out, next, nil
}

// ItemUpdate is what an update may change of an item: nil is unchanged.
type ItemUpdate struct {
	Title       *string
	Description *string
	// Album, when set, is the album the call named the item under: an
	// item not in it is not there.
	Album string
}

// Update changes an item of user's; the alt text of one on an activity
// changes in the activity's copy in the same commit.
func (s *Service) Update(ctx context.Context, user, id string, in ItemUpdate) (*Item, error) {
	var out *Item
	err := s.db.Update(ctx, func(tx *store.Tx) error {
		it, err := s.ownItem(tx, user, id, in.Album)
		if err != nil {
			return err
		}
		title, desc := it.Title, it.Description
		if in.Title != nil {
			title = *in.Title
		}
		if in.Description != nil {
			desc = *in.Description
		}
		if err := cleanText(&title, &desc); err != nil {
			return err
		}
		it.Title = title
		if desc != it.Description && it.ActivityID != "" && s.cfg.Activities != nil {
			if err := s.cfg.Activities.Describe(tx, it.ActivityID, id, desc); err != nil {
				return err
			}
		}
		it.Description = desc
		out = it
		return tx.Put(ItemKey(s.db, id), it)
	})
	return out, err
}

// ownItem reads an item of user's in tx, in album if one is named.
func (s *Service) ownItem(tx *store.Tx, user, id, album string) (*Item, error) {
	if !ValidID(id) {
		return nil, ErrNoSuchItem
	}
	var it Item
	ok, err := tx.Get(ItemKey(s.db, id), &it)
	if err != nil {
		return nil, err
	}
	if !ok || it.UserID != user || album != "" && it.AlbumID != album {
		return nil, ErrNoSuchItem
	}
	it.ID = id
	return &it, nil
}

var errOnActivity = derrors.New(derrors.Conflict, "the media item is on an activity: it goes when the activity is deleted")

// Delete deletes an item of user's that is on no activity (and in album,
// if one is named), and at once its objects. Its collection, enqueued
// before the delete, deletes them too once the delete has committed,
// should this instance not get to it.
func (s *Service) Delete(ctx context.Context, user, id, album string) error {
	it, err := s.Item(ctx, id)
	switch {
	case err != nil:
		return err
	case it.UserID != user, album != "" && it.AlbumID != album:
		return ErrNoSuchItem
	case it.ActivityID != "":
		return errOnActivity
	case it.Profile != "":
		return errIsProfile
	}
	if err := s.enqueue(ctx, Task{Op: OpCollect, ID: id, Deleted: true}, 0); err != nil {
		return err
	}
	err = s.db.Update(ctx, func(tx *store.Tx) error {
		it, err := s.ownItem(tx, user, id, album)
		if err != nil {
			return err
		}
		if it.ActivityID != "" {
			return errOnActivity
		}
		if it.Profile != "" {
			return errIsProfile
		}
		if it.AlbumID != "" {
			var a Album
			ok, err := tx.Get(AlbumKey(s.db, it.AlbumID), &a)
			if err != nil {
				return err
			}
			if ok {
				a.drop(id)
				if err := tx.Put(AlbumKey(s.db, it.AlbumID), &a); err != nil {
					return err
				}
			}
		}
		return tx.Delete(ItemKey(s.db, id))
	})
	if err != nil {
		return err
	}
	_ = s.deleteObjects(ctx, id) // at once, as well as by the job: best effort
	return nil
}

// Move puts a loose item of user's into one of their albums (OpenSocial's
// mediaItems.create of an uploaded item).
func (s *Service) Move(ctx context.Context, user, id, album string) (*Item, error) {
	var out *Item
	err := s.db.Update(ctx, func(tx *store.Tx) error {
		it, err := s.ownItem(tx, user, id, "")
		if err != nil {
			return err
		}
		if it.AlbumID == album {
			out = it
			return nil // done before: a retry
		}
		if !it.loose() {
			return errNotLoose
		}
		var a Album
		ok, err := tx.Get(AlbumKey(s.db, album), &a)
		if err != nil {
			return err
		}
		if err := a.add(ok, user, id); err != nil {
			return err
		}
		it.AlbumID, it.Loose = album, 0
		out = it
		return tx.PutMulti([]*datastore.Key{AlbumKey(s.db, album), ItemKey(s.db, id)}, []any{&a, it})
	})
	return out, err
}

var errNotLoose = derrors.New(derrors.Conflict, "the media item is already on an activity or in an album")
