package accounts

import (
	"regexp"
	"strings"
	"time"

	"cloud.google.com/go/datastore"

	"socialstream/internal/store"
	"socialstream/internal/viewer"
)

// A person of another server (federation) has an account of its own kind
// here: a User and a card like anyone's, so that follows, feeds, the
// policy and the faces treat them as a person, under the username
// name@domain, which no one here can register (a local name has no @),
// and with no password, so no one signs in as them. Package federation
// makes them, the first time another server's actor is met, and keeps
// their card as their server shows it.

// Remote is what an account of a remote person holds.
type Remote struct {
	// Acct is name@domain.
	Acct        string
	DisplayName string
	Note        string
}

// remoteAcct is what a remote person's name here may be, lowercased:
// their server's name for them (as package federation takes it), @, and
// its host, with a port on loopback.
var remoteAcct = regexp.MustCompile(`^[a-z0-9_.-]{1,64}@[a-z0-9.-]{1,253}(:[0-9]{1,5})?$`)

// IsRemote reports whether a username is a remote person's (name@domain).
func IsRemote(username string) bool { return strings.Contains(username, "@") }

// Remote reports whether the person is of another server.
func (p Person) Remote() bool { return IsRemote(p.PreferredUsername) }

// Username returns the user's name as read ("" if not there): name@domain
// for a remote person.
func (r *Record) Username() string {
	if !r.Exists() {
		return ""
	}
	return r.u.Username
}

// Remote reports whether the user read is of another server.
func (r *Record) Remote() bool { return r.Exists() && IsRemote(r.u.Username) }

// AddRemote writes, in tx, the account of a remote person under the new
// id: their name, User, card and reader's state. The caller has read
// (in tx) that the name is free (ReadName).
func AddRemote(tx *store.Tx, id string, r Remote, now time.Time) error {
	db := tx.DB()
	// Locked: every follow of theirs is a request, which their server
	// answers (Accept or Reject), whatever they show of their lock.
	u := &User{Username: r.Acct, DisplayName: r.DisplayName, Published: now.UTC().Truncate(time.Second),
		Standing: Standing{Locked: true}, Profile: Profile{Note: r.Note}}
	if u.DisplayName == "" {
		u.DisplayName = r.Acct
	}
	if err := viewer.Start(tx, id); err != nil {
		return err
	}
	return tx.PutMulti([]*datastore.Key{db.NameKey(KindUsername, strings.ToLower(r.Acct), nil), UserKey(db, id), CountsKey(db, id)},
		[]any{&usernameEntity{UserID: id}, u, Card(u, Counts{})})
}

// Name is a username's holder as a lookup read it.
type Name struct {
	ref store.Ref
	e   usernameEntity
}

// ReadName adds the holder of username to l.
func ReadName(l *store.Lookup, username string) *Name {
	n := &Name{}
	n.ref = l.Add(l.DB().NameKey(KindUsername, strings.ToLower(username), nil), &n.e)
	return n
}

// Holder returns the id of the username's holder, if it has one.
func (n *Name) Holder() (string, bool) { return n.e.UserID, n.ref.Found() }

// Changed returns when what other servers show of the user last changed
// (µs; User.Changed), 0 if never or not there.
func (r *Record) Changed() int64 {
	if !r.Exists() {
		return 0
	}
	return r.u.Changed
}
