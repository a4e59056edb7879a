package media

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"cloud.google.com/go/datastore"

	"socialstream/internal/derrors"
	"socialstream/internal/egress"
	"socialstream/internal/ids"
	"socialstream/internal/store"
	"socialstream/internal/text"
)

// Pictures of posts from other servers are kept by their address, and
// their bytes cached here within stated limits:
//
//   - A post from elsewhere keeps at most MaxPerActivity pictures, each an
//     item of its author's whose Remote is the picture's address at its
//     server; only images (JPEG, PNG, GIF, WebP) are kept.
//   - A fetch job, enqueued with the item, gets the bytes through the one
//     guarded client (Config.Client): at most MaxBytes, within
//     FetchTimeout, made safe as an upload is (Process: re-encoded, no
//     metadata, at most MaxPixels) and stored as an upload's objects.
//     Readers then get them from here, so the other server never learns
//     who looks at them.
//   - The bytes are kept RemoteCacheFor after their fetch; an uncache job
//     then deletes them. The first view after that (or before the first
//     fetch) fetches them again, once, while the reader waits; a picture
//     that could not be had is not tried again for RetryFailedAfter.
//   - The record, on the post, stays as long as the post: its deletion,
//     and its author's erasure, delete both as they do an upload.

// Limits of pictures from elsewhere.
const (
	// RemoteCacheFor is how long a picture from elsewhere is kept after
	// it was fetched (Cloud Tasks schedules at most 30 days ahead).
	RemoteCacheFor = 7 * 24 * time.Hour
	// FetchTimeout bounds one fetch, the bytes' read included.
	FetchTimeout = 20 * time.Second
	// RetryFailedAfter is how long a picture that could not be had is
	// not asked for again.
	RetryFailedAfter = time.Hour
	// fetchFor is how long the fetch job tries a picture whose server
	// fails; later views still try it.
	fetchFor = 24 * time.Hour
	// MaxRemoteAddress is the longest address of a picture kept.
	MaxRemoteAddress = 2048
	// MaxRedirects is how many redirects a fetch follows.
	MaxRedirects = 3
)

// RemoteInput is a picture of a post from another server, as it says.
type RemoteInput struct {
	URL           string // its address at its server
	MimeType      string // its type as said; "" when not said
	Description   string // its alt text
	Width, Height int    // its size as said; 0 when not said
}

// kept reports whether the picture is one this service keeps: an image,
// or of a type not said, at an http(s) address; a description cut to
// MaxDescription.
func (in *RemoteInput) kept() bool {
	u, err := url.Parse(in.URL)
	if err != nil || len(in.URL) > MaxRemoteAddress || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return false
	}
	switch strings.ToLower(strings.TrimSpace(in.MimeType)) {
	case JPEG, PNG, GIF, WebP:
		in.MimeType = strings.ToLower(strings.TrimSpace(in.MimeType))
	case "", "image/jpg":
		in.MimeType = JPEG // as shown until fetched; the fetch tells
	default:
		return false
	}
	in.Description = text.Strip(in.Description, MaxDescription, true)
	if in.Width < 0 || in.Height < 0 || in.Width > 1<<16 || in.Height > 1<<16 {
		in.Width, in.Height = 0, 0
	}
	return true
}

// Remote keeps, as loose items of user's (a person of another server),
// the pictures of one of their posts, and returns their ids for
// activities.PostInput.Media: at most MaxPerActivity of those it keeps,
// in order. Each item's collection (should the post not be made) is
// enqueued before it is stored, and its fetch after.
func (s *Service) Remote(ctx context.Context, user string, list []RemoteInput) ([]string, error) {
	var keys []*datastore.Key
	var items []any
	var out []string
	now := s.now().UTC()
	for _, in := range list {
		if len(out) == MaxPerActivity {
			break
		}
		if !in.kept() {
			continue
		}
		id := ids.Format(s.ids.Next())
		it := &Item{UserID: user, Created: now, Loose: now.UnixMicro(),
			Attached: Attached{ID: id, MimeType: in.MimeType, Width: in.Width, Height: in.Height, Description: in.Description, Remote: in.URL}}
		if err := s.enqueue(ctx, Task{Op: OpCollect, ID: id}, LooseFor+time.Minute); err != nil {
			return nil, err
		}
		keys, items, out = append(keys, ItemKey(s.db, id)), append(items, it), append(out, id)
	}
	if len(keys) == 0 {
		return nil, nil
	}
	if err := s.db.PutMulti(ctx, keys, items); err != nil {
		return nil, fmt.Errorf("media.Remote(%s): %w", user, err)
	}
	// The fetches follow the records, which they read.
	for _, id := range out {
		if err := s.enqueue(ctx, Task{Op: OpFetch, ID: id}, 0); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Keep keeps the picture at address, of a page's preview card, for
// holder (the card): an item of no one's, held (so never collected as
// loose), fetched at once (by its job, should that fail) and cached as a
// picture of a post from elsewhere is (made safe, served from here,
// uncached after RemoteCacheFor and fetched again when next shown). It
// returns what the card keeps of it.
func (s *Service) Keep(ctx context.Context, holder, address string) (Attached, error) {
	in := RemoteInput{URL: address}
	if holder == "" || !in.kept() {
		return Attached{}, derrors.New(derrors.InvalidArgument, "not a picture this service keeps")
	}
	id := ids.Format(s.ids.Next())
	it := &Item{Created: s.now().UTC(), Held: holder, Attached: Attached{ID: id, MimeType: in.MimeType, Remote: in.URL}}
	if err := s.db.Put(ctx, ItemKey(s.db, id), it); err != nil {
		return Attached{}, fmt.Errorf("media.Keep: %w", err)
	}
	// Fetched now, so the card shows its size (apps lay it out by it);
	// should that fail, its job tries again.
	if _, err := s.cache(ctx, id, false); err != nil {
		return it.Attached, s.enqueue(ctx, Task{Op: OpFetch, ID: id}, 0)
	}
	got, err := s.Item(ctx, id)
	if err != nil {
		return Attached{}, err
	}
	return got.Attached, nil
}

// errUnavailable is a picture from elsewhere that could not be had.
var errUnavailable = derrors.New(derrors.NotFound, "the picture could not be had from its server")

// permanent marks a fetch's failure that trying again will not mend.
type permanent struct{ err error }

func (p permanent) Error() string { return p.err.Error() }
func (p permanent) Unwrap() error { return p.err }

// fetchJob is the fetch job: a failure that may pass is retried for
// fetchFor, one that will not is recorded, and either leaves the
// picture to be fetched when it is first seen.
func (s *Service) fetchJob(ctx context.Context, t Task) (string, error) {
	what, err := s.cache(ctx, t.ID, false)
	var p permanent
	switch {
	case err == nil:
		return what, nil
	case errors.As(err, &p):
		return "not had: " + err.Error(), nil
	case s.now().Sub(time.UnixMicro(t.At)) > fetchFor:
		return "given up: " + err.Error(), nil
	}
	return "", err
}

// cache fetches the bytes of item id, from elsewhere, unless they are
// here (or it is not one from elsewhere); onView says a reader waits for
// them, who is not made to wait for a picture that failed lately. It
// says what it did.
func (s *Service) cache(ctx context.Context, id string, onView bool) (string, error) {
	var it Item
	ok, err := s.db.Get(ctx, ItemKey(s.db, id), &it)
	switch {
	case err != nil:
		return "", err
	case !ok || it.Remote == "":
		return "no picture from elsewhere", nil
	case it.Cached != 0 && !onView:
		return "cached before", nil
	case onView && it.Failed != 0 && s.now().Sub(time.UnixMicro(it.Failed)) < RetryFailedAfter:
		return "", errUnavailable
	}
	pic, err := s.fetch(ctx, it.Remote)
	if err != nil {
		var p permanent
		if errors.As(err, &p) {
			s.mark(ctx, id, func(it *Item) { it.Failed = s.now().UnixMicro() })
		}
		return "", err
	}
	if err := s.write(ctx, id, pic); err != nil {
		return "", err
	}
	at := s.now().UnixMicro()
	if err := s.enqueue(ctx, Task{Op: OpUncache, ID: id, Cached: at}, RemoteCacheFor); err != nil {
		return "", err
	}
	if err := s.fetched(ctx, id, pic, at); err != nil {
		return "", err
	}
	return fmt.Sprintf("cached %d bytes", len(pic.Data)+len(pic.Thumb)), nil
}

// fetched records, in item id's record, that its bytes were fetched at
// at, and their size and type, which the activity it is on then shows
// too (a post made meanwhile copies them from the record).
func (s *Service) fetched(ctx context.Context, id string, pic *Picture, at int64) error {
	return s.db.Update(ctx, func(tx *store.Tx) error {
		var it Item
		ok, err := tx.Get(ItemKey(s.db, id), &it)
		if err != nil || !ok {
			return err
		}
		it.Cached, it.Failed = at, 0
		it.MimeType, it.Width, it.Height = pic.MimeType, pic.Width, pic.Height
		it.ThumbType, it.ThumbWidth, it.ThumbHeight = pic.ThumbType, pic.ThumbWidth, pic.ThumbHeight
		it.Bytes, it.ID = int64(len(pic.Data)), id
		if it.ActivityID != "" && s.cfg.Activities != nil {
			if err := s.cfg.Activities.Recopy(tx, it.ActivityID, it.Attached); err != nil {
				return err
			}
		}
		return tx.Put(ItemKey(s.db, id), &it)
	})
}

// mark changes item id's record, if it is still there.
func (s *Service) mark(ctx context.Context, id string, change func(*Item)) error {
	return s.db.Update(ctx, func(tx *store.Tx) error {
		var it Item
		ok, err := tx.Get(ItemKey(s.db, id), &it)
		if err != nil || !ok {
			return err
		}
		change(&it)
		return tx.Put(ItemKey(s.db, id), &it)
	})
}

// fetch gets a picture from elsewhere and makes it safe to serve.
func (s *Service) fetch(ctx context.Context, address string) (*Picture, error) {
	if s.cfg.Client == nil {
		return nil, permanent{errors.New("this deployment fetches nothing from elsewhere")}
	}
	ctx, cancel := context.WithTimeout(ctx, FetchTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, address, nil)
	if err != nil {
		return nil, permanent{err}
	}
	req.Header.Set("Accept", "image/*")
	resp, err := s.cfg.Client.Do(req)
	if errors.Is(err, egress.ErrRefused) {
		return nil, permanent{err}
	}
	if err != nil {
		return nil, fmt.Errorf("media: fetch %s: %w", address, err)
	}
	defer egress.Drain(resp)
	switch {
	case resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusRequestTimeout || resp.StatusCode >= 500:
		return nil, fmt.Errorf("media: fetch %s: %s", address, resp.Status)
	case resp.StatusCode != http.StatusOK:
		return nil, permanent{fmt.Errorf("media: fetch %s: %s", address, resp.Status)}
	}
	data, err := io.ReadAll(resp.Body)
	if errors.Is(err, egress.ErrTooLarge) {
		return nil, permanent{fmt.Errorf("media: fetch %s: more than %d MiB", address, MaxBytes>>20)}
	}
	if err != nil {
		return nil, fmt.Errorf("media: fetch %s: %w", address, err)
	}
	pic, err := s.process(ctx, data)
	if status, _ := derrors.Status(err); status >= 400 && status < 500 && status != http.StatusTooManyRequests {
		return nil, permanent{fmt.Errorf("media: %s: %w", address, err)}
	}
	return pic, err
}

// uncache is the uncache job: it deletes the bytes of a picture from
// elsewhere fetched at t.Cached, unless they were fetched again since
// (that fetch's own job will).
func (s *Service) uncache(ctx context.Context, t Task) (string, error) {
	it, err := s.itemOfJob(ctx, t.ID)
	switch {
	case err != nil:
		return "", err
	case it == nil:
		return "the item is gone", nil
	case it.Remote == "" || it.Cached != t.Cached:
		return "fetched again since", nil
	}
	if err := s.deleteObjects(ctx, t.ID); err != nil {
		return "", err
	}
	return "uncached", s.mark(ctx, t.ID, func(it *Item) {
		if it.Cached == t.Cached {
			it.Cached = 0
		}
	})
}
