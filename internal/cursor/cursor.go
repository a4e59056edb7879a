// Package cursor seals the cursors the API hands out, so that a client can
// neither read nor change them: a cursor says where in a list the next
// page starts (a Datastore cursor, or a place in a feed), and in a list
// the reader sees only part of, that would tell of what they may not see
// (the ids and times of another's private pictures, say).
//
// A sealed cursor is the cursor a list made, encrypted and authenticated
// with AES-256-GCM under a key of the service's: made once, by the first
// instance that finds none, and kept in Datastore (as the picture links'
// key is), so every instance opens what any instance sealed. A cursor that
// does not open (edited, cut, made by hand, of another deployment) is a
// 400, as a cursor of another list already was.
package cursor

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"sync"

	"cloud.google.com/go/datastore"

	"socialstream/internal/derrors"
	"socialstream/internal/store"
)

// KindKey is the kind of the stored key: one entity.
const KindKey = "CursorKey"

// Key returns the key of the stored key.
func Key(db *store.DB) *datastore.Key { return db.NameKey(KindKey, "cursors", nil) }

// stored is the stored key.
type stored struct {
	Key []byte `datastore:"key,noindex"`
}

// MaxSealed bounds the length of a sealed cursor a client may send.
const MaxSealed = 8192

// ErrBad refuses a cursor that does not open.
var ErrBad = derrors.New(derrors.InvalidArgument, "invalid cursor")

// Sealer seals and opens cursors.
type Sealer struct {
	db *store.DB

	mu   sync.Mutex
	aead cipher.AEAD
}

// New returns a Sealer whose key is kept in db.
func New(db *store.DB) *Sealer { return &Sealer{db: db} }

// cipher returns the AEAD of the key: read once per instance, made by the
// first instance that finds none.
func (s *Sealer) cipher(ctx context.Context) (cipher.AEAD, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.aead != nil {
		return s.aead, nil
	}
	var k stored
	// The service's own key, whoever's request first needs it.
	err := store.MakeOnce(ctx, s.db, Key(s.db), &k, func(k *stored) bool { return len(k.Key) == 0 }, func(k *stored) error {
		k.Key = make([]byte, 32)
		_, err := rand.Read(k.Key)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("cursor: the key: %w", err)
	}
	block, err := aes.NewCipher(k.Key)
	if err != nil {
		return nil, fmt.Errorf("cursor: the key: %w", err)
	}
	if s.aead, err = cipher.NewGCM(block); err != nil {
		return nil, fmt.Errorf("cursor: the key: %w", err)
	}
	return s.aead, nil
}

// Warm reads (or makes) the key now, as an instance starts, so that no
// request pays for it.
func (s *Sealer) Warm(ctx context.Context) error {
	_, err := s.cipher(ctx)
	return err
}

// Seal returns the sealed form of a list's cursor ("" stays "").
func (s *Sealer) Seal(ctx context.Context, inner string) (string, error) {
	if inner == "" {
		return "", nil
	}
	aead, err := s.cipher(ctx)
	if err != nil {
		return "", err
	}
	nonce := make([]byte, aead.NonceSize(), aead.NonceSize()+len(inner)+aead.Overhead())
	if _, err := rand.Read(nonce); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(aead.Seal(nonce, nonce, []byte(inner), nil)), nil
}

// Open returns the list's cursor a sealed one holds ("" stays ""), or
// ErrBad.
func (s *Sealer) Open(ctx context.Context, sealed string) (string, error) {
	if sealed == "" {
		return "", nil
	}
	if len(sealed) > MaxSealed {
		return "", ErrBad
	}
	raw, err := base64.RawURLEncoding.Strict().DecodeString(sealed) // strict: one text per cursor
	if err != nil {
		return "", ErrBad
	}
	aead, err := s.cipher(ctx)
	if err != nil {
		return "", err
	}
	if len(raw) < aead.NonceSize()+aead.Overhead() {
		return "", ErrBad
	}
	inner, err := aead.Open(nil, raw[:aead.NonceSize()], raw[aead.NonceSize():], nil)
	if err != nil {
		return "", ErrBad
	}
	return string(inner), nil
}
