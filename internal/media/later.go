package media

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"cloud.google.com/go/storage"

	"socialstream/internal/derrors"
	"socialstream/internal/ids"
	"socialstream/internal/store"
)

// Uploads made safe off the request (Mastodon's POST /api/v2/media): the
// upload checks what its header says (type, pixels, the memory it will
// take), keeps the bytes as sent (uploadObject) and records the item as
// processing; the process job then makes it safe as Upload does, stores
// its objects, records its size and types and deletes the bytes as sent.
// A post cannot carry the item until then (ReadLoose: 422). What went
// wrong, should the job find the bytes cannot be made safe, is recorded
// on the item (Broken) for the client that asks.
//
// Every step can run again: the objects are written once each (the same
// bytes, Process being deterministic), the record changes only while it
// is processing, and the bytes as sent go last. An item the job never
// gets to is loose, and its collection deletes it a day later with every
// object it has.

// UploadLater stores an upload of user's to be made safe by its job, once
// its header shows it is an image the instance can process, and returns
// its item, processing.
func (s *Service) UploadLater(ctx context.Context, user string, in UploadInput) (*Item, error) {
	if err := cleanText(&in.Title, &in.Description); err != nil {
		return nil, err
	}
	if in.AlbumID != "" {
		if _, err := s.ownAlbum(ctx, user, in.AlbumID); err != nil {
			return nil, err
		}
	}
	h, err := ReadHeader(in.Data)
	if err != nil {
		return nil, err
	}
	if err := s.admit.fits(h.Footprint(in.Data)); err != nil {
		return nil, err
	}
	id := ids.Format(s.ids.Next())
	if err := s.enqueue(ctx, Task{Op: OpCollect, ID: id}, LooseFor+time.Minute); err != nil {
		return nil, err
	}
	if err := s.writeObject(ctx, uploadObject(id), h.Kind, in.Data); err != nil {
		return nil, err
	}
	now := s.now().UTC()
	w, ht := turned(h.Config.Width, h.Config.Height, h.Orientation)
	it := &Item{
		UserID: user, AlbumID: in.AlbumID, Created: now, Title: in.Title, Bytes: int64(len(in.Data)), Processing: now.UnixMicro(),
		Attached: Attached{ID: id, MimeType: h.Kind, Width: w, Height: ht, Description: in.Description},
	}
	if it.loose() {
		it.Loose = it.Created.UnixMicro()
	}
	if err := s.saveUpload(ctx, user, in.AlbumID, id, it); err != nil {
		if status, _ := derrors.Status(err); status >= 400 && status < 500 {
			s.dropUnsaved(context.WithoutCancel(ctx), id)
		}
		return nil, fmt.Errorf("media.UploadLater(%s): %w", user, err)
	}
	// After the record, which the job reads: should this fail, the item
	// stays processing until its collection.
	if err := s.enqueue(ctx, Task{Op: OpProcess, ID: id}, 0); err != nil {
		return nil, err
	}
	return it, nil
}

// InlinePixels is the most pixels of a picture Later leaves to be made
// safe on the request (a screenshot, a picture an app has shrunk): a
// fifth of a second or so of F1's CPU.
const InlinePixels = 1920 * 1080

// Later reports whether an upload is better made safe by its job: a
// picture of more than InlinePixels, which takes an F1 instance a second
// or more. What is not a picture is refused either way.
func Later(data []byte) bool {
	h, err := ReadHeader(data)
	return err == nil && int64(h.Config.Width)*int64(h.Config.Height) > InlinePixels
}

// processJob is the process job.
func (s *Service) processJob(ctx context.Context, t Task) (string, error) {
	it, err := s.itemOfJob(ctx, t.ID)
	switch {
	case err != nil:
		return "", err
	case it == nil:
		return "the item is gone", nil
	case it.Processing == 0:
		return "processed before", s.deleteObject(ctx, uploadObject(t.ID))
	}
	data, err := s.readObject(ctx, uploadObject(t.ID))
	if errors.Is(err, storage.ErrObjectNotExist) {
		return "the upload's bytes are gone", s.settle(ctx, t.ID, nil, "the upload's bytes were lost: upload the picture again")
	}
	if err != nil {
		return "", err
	}
	pic, err := s.process(ctx, data)
	if status, msg := derrors.Status(err); status >= 400 && status < 500 && status != http.StatusTooManyRequests {
		return "broken: " + msg, s.settle(ctx, t.ID, nil, msg)
	}
	if err != nil {
		return "", err // busy, or the context's end: tried again
	}
	if err := s.write(ctx, t.ID, pic); err != nil {
		return "", err
	}
	if err := s.settle(ctx, t.ID, pic, ""); err != nil {
		return "", err
	}
	return fmt.Sprintf("made safe: %d bytes", len(pic.Data)+len(pic.Thumb)), nil
}

// itemOfJob reads the item a job is about; nil, its objects deleted, if
// it is gone.
func (s *Service) itemOfJob(ctx context.Context, id string) (*Item, error) {
	var it Item
	ok, err := s.db.Get(ctx, ItemKey(s.db, id), &it)
	switch {
	case err != nil:
		return nil, err
	case !ok:
		return nil, s.deleteObjects(ctx, id)
	}
	return &it, nil
}

// settle records the end of item id's processing, if it is still
// processing: its picture's size and types, or why it is broken; then
// deletes the bytes as sent. An item deleted meanwhile (by its owner, or
// its collection) has every object deleted again: its delete's own job
// may have run before this job wrote the picture's.
func (s *Service) settle(ctx context.Context, id string, pic *Picture, broken string) error {
	found := false
	err := s.db.Update(ctx, func(tx *store.Tx) error {
		var it Item
		ok, err := tx.Get(ItemKey(s.db, id), &it)
		found = ok
		if err != nil || !ok || it.Processing == 0 {
			return err
		}
		it.Processing, it.Broken = 0, broken
		if pic != nil {
			it.MimeType, it.Width, it.Height = pic.MimeType, pic.Width, pic.Height
			it.ThumbType, it.ThumbWidth, it.ThumbHeight = pic.ThumbType, pic.ThumbWidth, pic.ThumbHeight
			it.Bytes = int64(len(pic.Data))
		}
		return tx.Put(ItemKey(s.db, id), &it)
	})
	switch {
	case err != nil:
		return err
	case !found:
		return s.deleteObjects(ctx, id)
	}
	return s.deleteObject(ctx, uploadObject(id))
}

// writeObject writes one object, once: an object there is the same
// bytes, written by an earlier try.
func (s *Service) writeObject(ctx context.Context, name, kind string, data []byte) error {
	w := s.bucket.Object(name).If(storage.Conditions{DoesNotExist: true}).NewWriter(ctx)
	w.ContentType = kind
	w.CacheControl = "private, max-age=31536000, immutable"
	w.ChunkSize = 0 // one request: the bytes are all here
	if _, err := w.Write(data); err != nil {
		w.Close()
		return fmt.Errorf("media: write %s: %w", name, err)
	}
	if err := w.Close(); err != nil && !written(err) {
		return fmt.Errorf("media: write %s: %w", name, err)
	}
	return nil
}

// readObject reads one object whole: an upload's bytes as sent, at most
// MaxBytes.
func (s *Service) readObject(ctx context.Context, name string) ([]byte, error) {
	data, _, err := s.readTyped(ctx, name)
	return data, err
}

// readTyped is readObject, with the object's content type.
func (s *Service) readTyped(ctx context.Context, name string) ([]byte, string, error) {
	r, err := s.bucket.Object(name).NewReader(ctx)
	if err != nil {
		return nil, "", err
	}
	defer r.Close()
	data, err := io.ReadAll(io.LimitReader(r, MaxBytes+1))
	if err != nil {
		return nil, "", fmt.Errorf("media: read %s: %w", name, err)
	}
	return data, r.Attrs.ContentType, nil
}

// deleteObject deletes one object; one already gone counts as deleted.
func (s *Service) deleteObject(ctx context.Context, name string) error {
	if err := s.bucket.Object(name).Delete(ctx); err != nil && !errors.Is(err, storage.ErrObjectNotExist) {
		return fmt.Errorf("media: delete %s: %w", name, err)
	}
	return nil
}

// ErrProcessing refuses a post (or a scheduled one) that would carry an
// upload not yet made safe; Mastodon's words, and its 422.
func errProcessing(id string) error {
	return derrors.New(derrors.InvalidArgument, fmt.Sprintf("Cannot attach files that have not finished processing. Try again in a moment! (media item %s)", id))
}

// errBroken refuses a post that would carry an upload that could not be
// made safe.
func errBroken(id, why string) error {
	return derrors.New(derrors.InvalidArgument, fmt.Sprintf("media item %s could not be processed: %s", id, why))
}
