package push

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/ecdh"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"cloud.google.com/go/datastore"

	"socialstream/internal/store"
)

// The deployment's VAPID keys (RFC 8292): P-256 key pairs the service
// makes itself, kept in one Datastore entity (KindKeys) beside the
// cursors' and the picture links' keys, never in app.yaml. The newest is
// the current one, the one the instance answer shows and new
// subscriptions are made with; a subscription remembers the key it was
// made with (a push service accepts only that key's signature for it),
// and is delivered with that key for as long as the ring holds it.
// RotateKeys adds a key and drops those no subscription names.

// KindKeys is the kind of the stored keyring: one entity.
const KindKeys = "PushKey"

// KeyRefresh is how long an instance keeps the keyring it read.
const KeyRefresh = 5 * time.Minute

func keyringKey(db *store.DB) *datastore.Key { return db.NameKey(KindKeys, "vapid", nil) }

// keyring is the stored keyring: each entry "CREATED.PRIVATE", the Unix
// second it was made and its private scalar, base64url; newest first.
type keyring struct {
	Keys []string `datastore:"keys,noindex"`
}

// VAPIDKey is one VAPID key pair.
type VAPIDKey struct {
	Created time.Time
	// Public is the uncompressed point, base64url without padding: what
	// apps are given (applicationServerKey) and Authorization's k.
	Public  string
	private *ecdh.PrivateKey
}

// Private is the private scalar, base64url without padding, as the
// sending library takes it.
func (k VAPIDKey) Private() string { return base64.RawURLEncoding.EncodeToString(k.private.Bytes()) }

// sealer is the AEAD that seals what a subscription keeps of its token,
// derived from the key's private half: a subscription's secret lives and
// ends with the key it was made with.
func (k VAPIDKey) sealer() (cipher.AEAD, error) {
	secret, err := hkdf.Key(sha256.New, k.private.Bytes(), nil, "socialstream push token seal", 32)
	if err != nil {
		return nil, err
	}
	block, err := aes.NewCipher(secret)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}

// seal encrypts token under the key.
func (k VAPIDKey) seal(token string) ([]byte, error) {
	aead, err := k.sealer()
	if err != nil {
		return nil, err
	}
	nonce := make([]byte, aead.NonceSize(), aead.NonceSize()+len(token)+aead.Overhead())
	if _, err := rand.Read(nonce); err != nil {
		return nil, err
	}
	return aead.Seal(nonce, nonce, []byte(token), nil), nil
}

// open decrypts what seal made.
func (k VAPIDKey) open(sealed []byte) (string, error) {
	aead, err := k.sealer()
	if err != nil {
		return "", err
	}
	if len(sealed) < aead.NonceSize() {
		return "", errors.New("push: a sealed token too short")
	}
	n := aead.NonceSize()
	plain, err := aead.Open(nil, sealed[:n], sealed[n:], nil)
	if err != nil {
		return "", fmt.Errorf("push: a sealed token does not open: %w", err)
	}
	return string(plain), nil
}

func newKey(now time.Time) (string, error) {
	priv, err := ecdh.P256().GenerateKey(rand.Reader)
	if err != nil {
		return "", err
	}
	return strconv.FormatInt(now.Unix(), 10) + "." + base64.RawURLEncoding.EncodeToString(priv.Bytes()), nil
}

func (r keyring) parse() ([]VAPIDKey, error) {
	out := make([]VAPIDKey, 0, len(r.Keys))
	for _, e := range r.Keys {
		created, b64, ok := strings.Cut(e, ".")
		sec, err := strconv.ParseInt(created, 10, 64)
		raw, err2 := base64.RawURLEncoding.DecodeString(b64)
		if !ok || err != nil || err2 != nil {
			return nil, errors.New("push: a malformed key in the VAPID keyring")
		}
		priv, err := ecdh.P256().NewPrivateKey(raw)
		if err != nil {
			return nil, fmt.Errorf("push: a key of the VAPID keyring: %w", err)
		}
		out = append(out, VAPIDKey{Created: time.Unix(sec, 0).UTC(), Public: base64.RawURLEncoding.EncodeToString(priv.PublicKey().Bytes()), private: priv})
	}
	return out, nil
}

// Keys reads and caches the keyring.
type Keys struct {
	db   *store.DB
	ring *store.Refreshed[[]VAPIDKey] // newest first
}

// NewKeys returns the keyring kept in db: read again every KeyRefresh,
// made by the first instance that finds none.
func NewKeys(db *store.DB) *Keys {
	return &Keys{db: db, ring: store.NewRefreshed(KeyRefresh, func(ctx context.Context) ([]VAPIDKey, error) {
		return readKeyring(ctx, db, time.Now())
	}, nil)}
}

func (k *Keys) keys(ctx context.Context) ([]VAPIDKey, error) {
	ring, err := k.ring.Get(ctx)
	if err != nil {
		return nil, fmt.Errorf("push: the VAPID keys: %w", err)
	}
	return ring, nil
}

// Current returns the key new subscriptions are made with.
func (k *Keys) Current(ctx context.Context) (VAPIDKey, error) {
	ring, err := k.keys(ctx)
	if err != nil {
		return VAPIDKey{}, err
	}
	return ring[0], nil
}

// Find returns the key whose public half is public, if the ring holds it.
func (k *Keys) Find(ctx context.Context, public string) (VAPIDKey, bool, error) {
	ring, err := k.keys(ctx)
	if err != nil {
		return VAPIDKey{}, false, err
	}
	for _, key := range ring {
		if key.Public == public {
			return key, true, nil
		}
	}
	return VAPIDKey{}, false, nil
}

// Warm reads (or makes) the keyring now, as an instance starts.
func (k *Keys) Warm(ctx context.Context) error {
	_, err := k.keys(ctx)
	return err
}

// readKeyring reads the keyring, or makes it when there is none (the
// first instance to need it).
func readKeyring(ctx context.Context, db *store.DB, now time.Time) ([]VAPIDKey, error) {
	var ring keyring
	err := store.MakeOnce(ctx, db, keyringKey(db), &ring, func(r *keyring) bool { return len(r.Keys) == 0 },
		func(r *keyring) error {
			e, err := newKey(now)
			r.Keys = []string{e}
			return err
		})
	if err != nil {
		return nil, err
	}
	return ring.parse()
}

// Rotation is what RotateKeys did.
type Rotation struct {
	Public  string // the new current key's public half
	Dropped int    // older keys dropped: no subscription names them
	Kept    int    // keys in the ring now, the new one included
}

// RotateKeys makes a new current key and drops the older keys that no
// subscription names any more (their apps subscribed again with the new
// key, or their subscriptions went). Instances hand out the new key
// within KeyRefresh; subscriptions made with an older key are delivered
// with it until a later rotation finds it unused. cmd/admin runs it.
func RotateKeys(ctx context.Context, db *store.DB, now time.Time) (Rotation, error) {
	var old keyring
	if _, err := db.Get(ctx, keyringKey(db), &old); err != nil {
		return Rotation{}, fmt.Errorf("push.RotateKeys: %w", err)
	}
	keys, err := old.parse()
	if err != nil {
		return Rotation{}, err
	}
	unused := map[string]bool{}
	for _, k := range keys {
		ks, err := db.GetAll(ctx, db.Query(KindSubscription).FilterField("serverKey", "=", k.Public).KeysOnly().Limit(1), nil)
		if err != nil {
			return Rotation{}, fmt.Errorf("push.RotateKeys: %w", err)
		}
		unused[k.Public] = len(ks) == 0
	}
	var out Rotation
	err = db.Update(ctx, func(tx *store.Tx) error {
		var ring keyring
		if _, err := tx.Get(keyringKey(db), &ring); err != nil {
			return err
		}
		keys, err := ring.parse()
		if err != nil {
			return err
		}
		e, err := newKey(now)
		if err != nil {
			return err
		}
		next := keyring{Keys: []string{e}}
		out = Rotation{}
		for i, k := range keys {
			if unused[k.Public] {
				out.Dropped++
				continue
			}
			next.Keys = append(next.Keys, ring.Keys[i])
		}
		out.Kept = len(next.Keys)
		fresh, err := keyring{Keys: next.Keys[:1]}.parse()
		if err != nil {
			return err
		}
		out.Public = fresh[0].Public
		return tx.Put(keyringKey(db), &next)
	})
	if err != nil {
		return Rotation{}, fmt.Errorf("push.RotateKeys: %w", err)
	}
	return out, nil
}
