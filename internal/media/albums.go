package media

import (
	"context"
	"fmt"

	"socialstream/internal/derrors"
	"socialstream/internal/ids"
	"socialstream/internal/store"
	"socialstream/internal/text"
)

// AlbumInput is what a create or an update says of an album: nil is
// unchanged (on a create, empty).
type AlbumInput struct {
	Title       *string
	Description *string
}

func (in AlbumInput) apply(a *Album) error {
	var err error
	if in.Title != nil {
		if a.Title, err = text.Clean("title", *in.Title, text.Rules{Max: MaxTitle, Required: true}); err != nil {
			return err
		}
	}
	if in.Description != nil {
		if a.Description, err = text.Clean("description", *in.Description, text.Rules{Max: MaxDescription, Multiline: true}); err != nil {
			return err
		}
	}
	if a.Title == "" {
		return derrors.New(derrors.InvalidArgument, "title is required")
	}
	return nil
}

var errTooManyAlbums = derrors.New(derrors.Conflict, fmt.Sprintf("a person has at most %d albums", MaxAlbums))

// CreateAlbum makes an album of user's.
func (s *Service) CreateAlbum(ctx context.Context, user string, in AlbumInput) (string, *Album, error) {
	a := &Album{UserID: user, Created: s.now().UTC()}
	if err := in.apply(a); err != nil {
		return "", nil, err
	}
	n, err := s.db.Count(ctx, s.db.Query(KindAlbum).FilterField("userId", "=", user).KeysOnly().Limit(MaxAlbums))
	if err != nil {
		return "", nil, err
	}
	if n >= MaxAlbums {
		return "", nil, errTooManyAlbums
	}
	id := ids.Format(s.ids.Next())
	if err := s.db.Put(ctx, AlbumKey(s.db, id), a); err != nil {
		return "", nil, fmt.Errorf("media.CreateAlbum(%s): %w", user, err)
	}
	return id, a, nil
}

// ownAlbum reads an album of user's.
func (s *Service) ownAlbum(ctx context.Context, user, id string) (*Album, error) {
	if !ValidID(id) {
		return nil, ErrNoSuchAlbum
	}
	var a Album
	ok, err := s.db.Get(ctx, AlbumKey(s.db, id), &a)
	if err != nil {
		return nil, err
	}
	if !ok || a.UserID != user {
		return nil, ErrNoSuchAlbum
	}
	return &a, nil
}

// AlbumOf returns an album of user's.
func (s *Service) AlbumOf(ctx context.Context, user, id string) (*Album, error) {
	return s.ownAlbum(ctx, user, id)
}

// Albums lists user's albums, newest first.
func (s *Service) Albums(ctx context.Context, user string, p store.PageRequest) ([]string, []Album, string, error) {
	q := s.db.Query(KindAlbum).FilterField("userId", "=", user).Order("-created")
	keys, vals, next, err := store.Page[Album](ctx, s.db, q, "albums:"+user, p)
	if err != nil {
		return nil, nil, "", err
	}
	idList := make([]string, len(keys))
	for i, k := range keys {
		idList[i] = k.Name
	}
	return idList, vals, next, nil
}

// UpdateAlbum changes an album of user's.
func (s *Service) UpdateAlbum(ctx context.Context, user, id string, in AlbumInput) (*Album, error) {
	if !ValidID(id) {
		return nil, ErrNoSuchAlbum
	}
	var out Album
	err := s.db.Update(ctx, func(tx *store.Tx) error {
		ok, err := tx.Get(AlbumKey(s.db, id), &out)
		if err != nil {
			return err
		}
		if !ok || out.UserID != user {
			return ErrNoSuchAlbum
		}
		if err := in.apply(&out); err != nil {
			return err
		}
		return tx.Put(AlbumKey(s.db, id), &out)
	})
	return &out, err
}

// DeleteAlbum deletes an album of user's, and by a job the items in it.
func (s *Service) DeleteAlbum(ctx context.Context, user, id string) error {
	if _, err := s.ownAlbum(ctx, user, id); err != nil {
		return err
	}
	if err := s.enqueue(ctx, Task{Op: OpAlbum, ID: id}, 0); err != nil {
		return err
	}
	return s.db.Update(ctx, func(tx *store.Tx) error {
		var a Album
		ok, err := tx.Get(AlbumKey(s.db, id), &a)
		if err != nil {
			return err
		}
		if !ok || a.UserID != user {
			return ErrNoSuchAlbum
		}
		return tx.Delete(AlbumKey(s.db, id))
	})
}
