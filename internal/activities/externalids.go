package activities

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	"cloud.google.com/go/datastore"

	"socialstream/internal/derrors"
	"socialstream/internal/store"
)

// The external ids a post may carry (a client's dedupe key, a Note's
// address at its server), recorded by their author: a post repeating
// one answers the activity it made; a Note its server deleted is
// forgotten, and not made again.

// ExternalIDOf returns the activity author posted with the external id
// ext, if there is one: "" and true when it is one of another server's
// that its server deleted (Forget).
func (s *Service) ExternalIDOf(ctx context.Context, author, ext string) (string, bool, error) {
	var e externalID
	ok, err := s.db.Get(ctx, externalIDKey(s.db, author, ext), &e)
	if err != nil || !ok {
		return "", false, err
	}
	if e.Gone {
		return "", true, nil
	}
	return e.ActivityID, true, nil
}

// ErrForgotten is a post from another server that its server deleted:
// it is not made again.
var ErrForgotten = derrors.New(derrors.Conflict, "the post was deleted by its server")

// Forget records that the post author's server made with the external
// id ext (one of another server's) is deleted there, so that a Create of
// it that comes after, late or again, makes no post: the post, should
// it be kept here meanwhile, is returned (true) for the caller to delete,
// which keeps the record (Delete). Its transaction and Post's read the
// same record, so a Create and a Delete that come at once end with no
// post either way.
func (s *Service) Forget(ctx context.Context, author, ext string) (string, bool, error) {
	if !fromElsewhere(ext) {
		return "", false, derrors.New(derrors.InvalidArgument, "only a post from another server is forgotten")
	}
	var kept string
	key := externalIDKey(s.db, author, ext)
	err := s.db.Update(ctx, func(tx *store.Tx) error {
		var e externalID
		ok, err := tx.Get(key, &e)
		switch {
		case err != nil:
			return err
		case ok && !e.Gone:
			kept = e.ActivityID
			return nil
		case ok:
			return nil
		}
		return tx.Put(key, &externalID{Gone: true})
	})
	if err != nil {
		return "", false, fmt.Errorf("activities.Forget(%s): %w", author, err)
	}
	return kept, kept != "", nil
}

func externalIDKey(db *store.DB, user, ext string) *datastore.Key {
	sum := sha256.Sum256([]byte(ext))
	return db.NameKey(KindExternalID, user+":"+hex.EncodeToString(sum[:16]), nil)
}
