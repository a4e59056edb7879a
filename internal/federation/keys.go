package federation

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"time"

	"cloud.google.com/go/datastore"
	"github.com/hashicorp/golang-lru/v2/expirable"
	"golang.org/x/sync/singleflight"

	"socialstream/internal/store"
)

// Each person's key pair is theirs alone: RSA of KeyBits, as every
// fediverse server verifies (rsa-sha256), made by the service the first
// time the person's actor is read or something is signed for them, and
// kept in Datastore (one ActorKey entity a person, named by their id),
// never in app.yaml, as the deployment's VAPID and cursor keys are. The
// public half is on the actor (publicKeyPem); the private half signs
// the requests sent for them. An instance keeps the keys it read for
// KeyKeep; a key goes with its person's erasure.

// KindActorKey is the kind of a person's key pair.
const KindActorKey = "ActorKey"

// KeyBits is the size of a person's RSA key.
const KeyBits = 2048

// KeyKeep is how long an instance keeps a key it read, and keepKeys how
// many at most.
const (
	KeyKeep  = 10 * time.Minute
	keepKeys = 4096
)

func actorKeyKey(db *store.DB, user string) *datastore.Key {
	return db.NameKey(KindActorKey, user, nil)
}

// actorKey is the stored key pair.
type actorKey struct {
	Private []byte    `datastore:"private,noindex"` // PKCS #8, DER
	Public  string    `datastore:"public,noindex"`  // PEM of the SubjectPublicKeyInfo
	Created time.Time `datastore:"created,noindex"`
}

// Key is a person's key pair.
type Key struct {
	// PublicPEM is the public half as actors show it.
	PublicPEM string
	private   *rsa.PrivateKey
}

// Private is the private half, which signs.
func (k Key) Private() *rsa.PrivateKey { return k.private }

// Keys reads and makes people's keys.
type Keys struct {
	db   *store.DB
	kept *expirable.LRU[string, Key]
	// reading has the instance's requests for one person's key at once
	// read it, or make it, once: a new person's first deliveries, each a
	// job of its own, would each make a key pair (seconds of CPU on a
	// busy instance) for one to be kept.
	reading singleflight.Group
}

// NewKeys returns the keys kept in db.
func NewKeys(db *store.DB) *Keys {
	return &Keys{db: db, kept: expirable.NewLRU[string, Key](keepKeys, nil, KeyKeep)}
}

// Of returns the key pair of the person whose id is user, made now if
// they have none. The caller has checked the person is there.
func (k *Keys) Of(ctx context.Context, user string) (Key, error) {
	if key, ok := k.kept.Get(user); ok {
		return key, nil
	}
	// Not the first caller's cancellation: the others wait on it too.
	v, err, _ := k.reading.Do(user, func() (any, error) { return k.of(context.WithoutCancel(ctx), user) })
	if err != nil {
		return Key{}, err
	}
	return v.(Key), nil
}

// of is Of, once for the callers at once.
func (k *Keys) of(ctx context.Context, user string) (Key, error) {
	var stored actorKey
	err := store.MakeOnce(ctx, k.db, actorKeyKey(k.db, user), &stored, func(a *actorKey) bool { return len(a.Private) == 0 },
		func(a *actorKey) error {
			made, err := newActorKey(time.Now())
			*a = made
			return err
		})
	if err != nil {
		return Key{}, fmt.Errorf("federation: the key of %s: %w", user, err)
	}
	key, err := stored.parse()
	if err != nil {
		return Key{}, fmt.Errorf("federation: the key of %s: %w", user, err)
	}
	k.kept.Add(user, key)
	return key, nil
}

// Stored returns the key pair of user if they have one, making none.
func (k *Keys) Stored(ctx context.Context, user string) (Key, bool, error) {
	if key, ok := k.kept.Get(user); ok {
		return key, true, nil
	}
	var stored actorKey
	ok, err := k.db.Get(ctx, actorKeyKey(k.db, user), &stored)
	if err != nil || !ok || len(stored.Private) == 0 {
		return Key{}, false, err
	}
	key, err := stored.parse()
	if err != nil {
		return Key{}, false, fmt.Errorf("federation: the key of %s: %w", user, err)
	}
	k.kept.Add(user, key)
	return key, true, nil
}

// Erase deletes the key pair of a deleted person, if there is one (an
// erasure's phase: it counts nothing).
func (k *Keys) Erase(ctx context.Context, user string) (int, error) {
	k.kept.Remove(user)
	if err := k.db.Delete(store.Unguarded(ctx), actorKeyKey(k.db, user)); err != nil {
		return 0, fmt.Errorf("federation: erasing the key of %s: %w", user, err)
	}
	return 0, nil
}

func newActorKey(now time.Time) (actorKey, error) {
	priv, err := rsa.GenerateKey(rand.Reader, KeyBits)
	if err != nil {
		return actorKey{}, err
	}
	der, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		return actorKey{}, err
	}
	pub, err := PublicPEM(&priv.PublicKey)
	if err != nil {
		return actorKey{}, err
	}
	return actorKey{Private: der, Public: pub, Created: now.UTC()}, nil
}

// PublicPEM writes a public key as actors show it: PEM of its
// SubjectPublicKeyInfo ("PUBLIC KEY").
func PublicPEM(pub *rsa.PublicKey) (string, error) {
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		return "", err
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})), nil
}

func (a actorKey) parse() (Key, error) {
	parsed, err := x509.ParsePKCS8PrivateKey(a.Private)
	if err != nil {
		return Key{}, err
	}
	priv, ok := parsed.(*rsa.PrivateKey)
	if !ok {
		return Key{}, errors.New("a stored key that is not RSA")
	}
	return Key{PublicPEM: a.Public, private: priv}, nil
}
