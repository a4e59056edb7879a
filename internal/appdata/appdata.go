// Package appdata owns OpenSocial's AppData: each user's per-application
// key/value store, where gadgets keep their settings.
//
// All of a user's app data is one entity, AppData/{userId}, holding every
// application's keys as one unindexed JSON document: a read of one or many
// users is one batch lookup, a write is a transaction on the writer's own
// entity (so only that user's own writes ever contend), and the bound on a
// user's data (MaxBytes) is checked where it is written. Each write reads
// its writer's account in its transaction, so nothing is written for an
// account that is gone; the account's erasure deletes the entity.
package appdata

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"time"
	"unicode/utf8"

	"cloud.google.com/go/datastore"

	"socialstream/internal/accounts"
	"socialstream/internal/derrors"
	"socialstream/internal/store"
)

// KindAppData is the kind of the entities this package owns.
const KindAppData = "AppData"

// Limits of a user's app data.
const (
	// MaxKey is the longest key.
	MaxKey = 64
	// MaxApp is the longest application id.
	MaxApp = 100
	// MaxBytes bounds all of one user's app data: the sum over every
	// application of its id's length, and over its keys of the key's and
	// the value's lengths, in bytes.
	MaxBytes = 64 << 10
	// MaxKeys bounds the keys one call names, and those one user keeps.
	MaxKeys = 500
	// DefaultApp is the application a call means by "@app" or no appId:
	// without a gadget container the service cannot tell which gadget is
	// calling, so every such gadget shares it.
	DefaultApp = "@app"
)

var (
	errTooLarge = derrors.New(derrors.TooLarge, fmt.Sprintf("a user keeps at most %d bytes and %d keys of app data", MaxBytes, MaxKeys))
	errTooMany  = derrors.New(derrors.InvalidArgument, fmt.Sprintf("a call names at most %d keys", MaxKeys))
)

// Data are one application's keys and values.
type Data map[string]string

// Entity is a user's app data: Apps is the JSON of map[appId]Data.
type Entity struct {
	Apps    []byte    `datastore:"apps,noindex"`
	Size    int       `datastore:"size,noindex"`
	Updated time.Time `datastore:"updated,noindex"`
}

// AppDataKey returns the key of user's app data.
func AppDataKey(db *store.DB, user string) *datastore.Key {
	return db.NameKey(KindAppData, user, nil)
}

// Service reads and writes app data.
type Service struct {
	db  *store.DB
	now func() time.Time
}

// New returns a Service over db.
func New(db *store.DB) (*Service, error) {
	if db == nil {
		return nil, fmt.Errorf("appdata.New: nil db")
	}
	return &Service{db: db, now: time.Now}, nil
}

// ValidKeyName reports whether k is a valid key: 1 to MaxKey of A-Z a-z 0-9 . _ -.
func ValidKeyName(k string) bool { return validName(k, MaxKey) }

func validName(s string, max int) bool {
	if s == "" || len(s) > max {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// App checks an application id and returns the one stored: DefaultApp for
// "" and "@app".
func App(app string) (string, error) {
	if app == "" || app == DefaultApp {
		return DefaultApp, nil
	}
	if !validName(app, MaxApp) {
		return "", derrors.New(derrors.InvalidArgument, fmt.Sprintf("appId must be @app or 1 to %d of A-Z a-z 0-9 . _ -", MaxApp))
	}
	return app, nil
}

// CheckKeys checks keys a call names.
func CheckKeys(keys []string) error {
	if len(keys) > MaxKeys {
		return errTooMany
	}
	for _, k := range keys {
		if !ValidKeyName(k) {
			return derrors.New(derrors.InvalidArgument, fmt.Sprintf("app data keys are 1 to %d of A-Z a-z 0-9 . _ -: %.80q is not", MaxKey, k))
		}
	}
	return nil
}

func decode(e *Entity) (map[string]Data, error) {
	apps := map[string]Data{}
	if len(e.Apps) == 0 {
		return apps, nil
	}
	if err := json.Unmarshal(e.Apps, &apps); err != nil {
		return nil, fmt.Errorf("appdata: stored data: %w", err)
	}
	return apps, nil
}

// size is what apps count against MaxBytes, and how many keys they hold.
func size(apps map[string]Data) (bytes, keys int) {
	for app, d := range apps {
		bytes += len(app)
		for k, v := range d {
			bytes += len(k) + len(v)
			keys++
		}
	}
	return bytes, keys
}

// Get returns app's data of each of users, only the keys named when keys
// is not empty: every user is in the answer, with no keys when they keep
// none. One batch lookup.
func (s *Service) Get(ctx context.Context, users []string, app string, keys []string) (map[string]Data, error) {
	app, err := App(app)
	if err != nil {
		return nil, err
	}
	if err := CheckKeys(keys); err != nil {
		return nil, err
	}
	users = slices.Compact(slices.Sorted(slices.Values(users))) // a lookup names each key once
	l := s.db.Lookup()
	es := make([]Entity, len(users))
	for i, u := range users {
		l.Add(AppDataKey(s.db, u), &es[i])
	}
	if err := l.Run(ctx); err != nil {
		return nil, fmt.Errorf("appdata.Get: %w", err)
	}
	out := make(map[string]Data, len(users))
	for i, u := range users {
		apps, err := decode(&es[i])
		if err != nil {
			return nil, err
		}
		out[u] = pick(apps[app], keys)
	}
	return out, nil
}

func pick(d Data, keys []string) Data {
	if len(keys) == 0 {
		if d == nil {
			return Data{}
		}
		return d
	}
	out := Data{}
	for _, k := range keys {
		if v, ok := d[k]; ok {
			out[k] = v
		}
	}
	return out
}

// Update sets, in user's data of app, the keys of values: only those of
// them named in keys when keys is not empty. Other keys keep their values.
func (s *Service) Update(ctx context.Context, user, app string, values map[string]string, keys []string) error {
	app, err := App(app)
	if err != nil {
		return err
	}
	if err := CheckKeys(keys); err != nil {
		return err
	}
	if err := CheckKeys(slices.Collect(maps.Keys(values))); err != nil {
		return err
	}
	for k, v := range values {
		if !utf8.ValidString(v) {
			return derrors.New(derrors.InvalidArgument, fmt.Sprintf("the value of %s is not valid UTF-8", k))
		}
	}
	if len(keys) > 0 {
		values = pick(values, keys)
	}
	if len(values) == 0 {
		return nil
	}
	return s.edit(ctx, user, func(apps map[string]Data) {
		d := apps[app]
		if d == nil {
			d = Data{}
			apps[app] = d
		}
		maps.Copy(d, values)
	})
}

// Delete removes keys from user's data of app; with no keys, all of it.
func (s *Service) Delete(ctx context.Context, user, app string, keys []string) error {
	app, err := App(app)
	if err != nil {
		return err
	}
	if err := CheckKeys(keys); err != nil {
		return err
	}
	return s.edit(ctx, user, func(apps map[string]Data) {
		if len(keys) == 0 {
			delete(apps, app)
			return
		}
		for _, k := range keys {
			delete(apps[app], k)
		}
		if len(apps[app]) == 0 {
			delete(apps, app)
		}
	})
}

// edit changes user's data with f in a transaction that reads the user:
// 401 for an account that is gone; 413 when the result is over the
// limits. It writes nothing when f changes nothing, and deletes the entity
// when no data is left.
func (s *Service) edit(ctx context.Context, user string, f func(map[string]Data)) error {
	key := AppDataKey(s.db, user)
	err := s.db.Update(ctx, func(tx *store.Tx) error {
		var e Entity
		l := tx.Lookup()
		ref := l.Add(key, &e)
		u := accounts.Read(l, user)
		if err := l.Run(ctx); err != nil {
			return err
		}
		if !u.Exists() {
			return accounts.ErrBadToken
		}
		apps, err := decode(&e)
		if err != nil {
			return err
		}
		before := string(e.Apps)
		f(apps)
		n, keys := size(apps)
		if n > MaxBytes || keys > MaxKeys {
			return errTooLarge
		}
		if len(apps) == 0 {
			if !ref.Found() {
				return nil
			}
			return tx.Delete(key)
		}
		data, err := json.Marshal(apps) // sorted keys: the same data, the same bytes
		if err != nil {
			return err
		}
		if string(data) == before {
			return nil
		}
		return tx.Put(key, &Entity{Apps: data, Size: n, Updated: s.now().UTC()})
	})
	if err != nil {
		return fmt.Errorf("appdata: edit %s: %w", user, err)
	}
	return nil
}

// Export returns all of user's app data, by application.
func Export(ctx context.Context, db *store.DB, user string) (map[string]Data, error) {
	var e Entity
	if _, err := db.Get(ctx, AppDataKey(db, user), &e); err != nil {
		return nil, fmt.Errorf("appdata.Export(%s): %w", user, err)
	}
	return decode(&e)
}

// Erase deletes all of user's app data; it reports 1 when there was some.
func Erase(ctx context.Context, db *store.DB, user string) (int, error) {
	key := AppDataKey(db, user)
	var e Entity
	ok, err := db.Get(ctx, key, &e)
	if err != nil || !ok {
		return 0, err
	}
	if err := db.Delete(ctx, key); err != nil {
		return 0, fmt.Errorf("appdata.Erase(%s): %w", user, err)
	}
	return 1, nil
}
