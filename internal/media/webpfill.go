package media

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"

	"cloud.google.com/go/datastore"
	"cloud.google.com/go/storage"

	"socialstream/internal/store"
)

// FillWebP gives pictures stored before thumbnails had a form for the
// clients that take WebP the form they lack (thumbWebPObject: the
// thumbnail in WebP, or the thumbnail itself where that is not smaller,
// as Process makes it), so that a client taking WebP is sent it rather
// than, after a missed read, the JPEG. It looks at up to n items from
// cursor (empty: the first), and returns how many it gave the form and
// the cursor of the rest ("" once there are none).
//
// It is safe beside the service and safe to run again: an item that has
// the form, or is not made safe yet, or whose thumbnail is not here (a
// picture from elsewhere not cached now, whose next fetch makes every
// form), is left as it is; a form written for an item deleted meanwhile
// is deleted again.
func FillWebP(ctx context.Context, db *store.DB, bucket *storage.BucketHandle, cursor string, n int) (int, string, error) {
	keys, next, err := db.KeysFrom(ctx, db.Query(KindItem).KeysOnly(), cursor, n)
	if err != nil {
		return 0, "", fmt.Errorf("media.FillWebP: %w", err)
	}
	if len(keys) < n {
		next = "" // the last of them
	}
	items := make([]Item, len(keys))
	refs := make([]store.Ref, len(keys))
	l := db.Lookup()
	for i, k := range keys {
		refs[i] = l.Add(k, &items[i])
	}
	if err := l.Run(ctx); err != nil {
		return 0, "", fmt.Errorf("media.FillWebP: %w", err)
	}
	// The Service's objects and records alone: no queue, no uploads'
	// memory, no links (what fillWebP uses is Stored, readTyped,
	// writeObject and deleteObject).
	s := &Service{db: db, bucket: bucket}
	filled := 0
	for i, k := range keys {
		if !refs[i].Found() || !items[i].Ready() {
			continue
		}
		made, err := s.fillWebP(ctx, k)
		if err != nil {
			return filled, "", fmt.Errorf("media.FillWebP(%s): %w", k.Name, err)
		}
		if made {
			filled++
		}
	}
	return filled, next, nil
}

// fillWebP gives the item of key the form for WebP if it lacks it, and
// reports whether it did.
func (s *Service) fillWebP(ctx context.Context, key *datastore.Key) (bool, error) {
	id := key.Name
	if ok, err := s.Stored(ctx, id, FormThumbWebP); err != nil || ok {
		return false, err
	}
	thumb, kind, err := s.readTyped(ctx, thumbObject(id))
	if errors.Is(err, storage.ErrObjectNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	img, _, err := image.Decode(bytes.NewReader(thumb))
	if err != nil {
		return false, fmt.Errorf("its thumbnail (%s): %w", kind, err)
	}
	webp, err := encodeWebP(img)
	if err != nil {
		return false, err
	}
	if len(webp) < len(thumb) {
		thumb, kind = webp, WebP
	}
	if err := s.writeObject(ctx, thumbWebPObject(id), kind, thumb); err != nil {
		return false, err
	}
	// Deleted meanwhile, its objects' deletion may have come before this
	// write: the form goes too.
	if found, err := s.db.Get(ctx, key, &Item{}); err != nil || found {
		return err == nil, err
	}
	return false, s.deleteObject(ctx, thumbWebPObject(id))
}
