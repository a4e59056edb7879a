// Package accounts owns people's accounts: registration with a unique
// username, passwords, login tokens, and looking people up.
//
// Entities:
//   - User/{id}: the account; id is a time-ordered id (package ids).
//   - Username/{lowercased name}: reserves a name for one user. Registration
//     creates it and the User in one transaction, so two sign-ups racing for
//     the same name (in any letter case) cannot both win.
//   - Token/{sha256 of the token}: a login session. The token itself is
//     never stored, so a copy of the database does not log anyone in.
//   - Counts/{id}: the user's card, what pages show of them with their
//     counts (see KindCounts).
//
// Other packages read people, and change their follow counts in their own
// transactions, through Read and Record.
package accounts

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"cloud.google.com/go/datastore"
	"github.com/hashicorp/golang-lru/v2/expirable"
	"golang.org/x/crypto/bcrypt"

	"socialstream/internal/derrors"
	"socialstream/internal/ids"
	"socialstream/internal/policy"
	"socialstream/internal/store"
	"socialstream/internal/text"
	"socialstream/internal/viewer"
)

// Kinds of the entities this package owns.
const (
	KindUser     = "User"
	KindUsername = "Username"
	KindToken    = "Token"
)

// Limits of the contract.
const (
	MinPassword    = 8
	MaxPassword    = 128
	MaxDisplayName = 64
)

var (
	ErrUsernameTaken = derrors.New(derrors.Conflict, "username is taken")
	ErrBadLogin      = derrors.New(derrors.Unauthenticated, "wrong username or password")
	ErrBadToken      = policy.ErrNoActor
	ErrNoSuchPerson  = derrors.New(derrors.NotFound, "no such person")
	ErrWrongPassword = derrors.New(derrors.PermissionDenied, "wrong password")
)

// User is the stored account.
//
// Its counts are on its card (Counts), never here: a User changes only
// when its owner or a moderator changes it, so the many transactions that
// read it to see that a person is there take a lock nobody else wants.
type User struct {
	Username     string    `datastore:"username,noindex"`
	DisplayName  string    `datastore:"displayName,noindex"`
	PasswordHash []byte    `datastore:"passwordHash,noindex"`
	Published    time.Time `datastore:"published,noindex"`
	Standing
	// Profile is what the person says of themselves (profile.go).
	Profile Profile `datastore:"profile,noindex"`
	// Changed is when what other servers show of the person (their
	// profile, their lock) last changed, µs: the job that tells them
	// (ProfileJob) waits for it.
	Changed int64 `datastore:"changed,noindex,omitempty"`
}

// Standing is what a person's account allows: whether it is locked (a
// follow is a request they decide), its role, and what moderation did to
// it. The User and the card (Counts) both hold it: transactions that read
// the User to see a person is there see it, and every page that shows the
// person's activities reads the card anyway, so a suspension or a limit
// hides them at once with no read more. SetStanding writes both.
type Standing struct {
	Locked bool `datastore:"locked,noindex"`
	// Unlocked names the last unlock (µs), which its job waits for.
	Unlocked int64 `datastore:"unlocked,noindex"`
	// Role is "", RoleModerator or RoleAdmin.
	Role string `datastore:"role,noindex,omitempty"`
	// Limited keeps the person's activities out of @all and tag feeds, and
	// from anyone who does not follow them.
	Limited bool `datastore:"limited,noindex"`
	// LimitChanged names the last limit or its lifting (µs): a job that
	// follows one and finds the other tells by it that a later change
	// replaced it, rather than that its own is not committed yet.
	LimitChanged int64 `datastore:"limitChanged,noindex,omitempty"`
	// Suspended is when the account was suspended; zero if it is not.
	Suspended time.Time `datastore:"suspended,noindex"`
	// SuspendedFor is the reason the suspension gave, which a sign-in
	// is told.
	SuspendedFor string `datastore:"suspendedFor,noindex,omitempty"`
	// Lifted names the last lifting of a suspension (µs): a job that
	// follows a suspension and finds none tells by it that a lifting
	// replaced it, rather than that the suspension is not committed yet.
	Lifted int64 `datastore:"lifted,noindex,omitempty"`
}

// Roles a person may have.
const (
	RoleModerator = "moderator"
	RoleAdmin     = "admin"
)

// IsSuspended reports whether the account is suspended.
func (s Standing) IsSuspended() bool { return !s.Suspended.IsZero() }

// Staff reports whether the person may moderate.
func (s Standing) Staff() bool { return s.Role == RoleModerator || s.Role == RoleAdmin }

// ErrSuspended refuses sign-in to a suspended account, and any write of
// one whose token outlived the suspension on another instance.
var ErrSuspended = policy.ErrSuspended

// Account returns the standing as the policy knows it, of an account id
// that exists or not.
func (s Standing) Account(id string, exists bool) policy.Account {
	if !exists {
		return policy.Account{ID: id}
	}
	return policy.Account{ID: id, Exists: true, Suspended: s.IsSuspended(), Limited: s.Limited, Locked: s.Locked, Role: s.Role}
}

// Guard returns what every transaction of a request of user's, made
// with token ("" for none), reads and checks (see store.Guard): their
// User, and policy.MayAct; and the token, which must still be there and
// unexpired. A token cache may trust a suspended or deleted account's
// token, or one logged out or revoked on another instance, for a while;
// its writes are refused all the same (ErrBadToken for a token gone).
func (s *Service) Guard(user, token string) *store.Guard {
	g := &store.Guard{
		Key: UserKey(s.db, user),
		New: func() any { return &User{} },
		Check: func(found bool, dst any) error {
			u, ok := dst.(*User)
			if !ok {
				return fmt.Errorf("accounts: the guard of %s read a %T", user, dst)
			}
			return policy.MayAct(u.Standing.Account(user, found))
		},
	}
	if token != "" {
		g.Also = []store.GuardPart{{
			Key: tokenKey(s.db, token),
			New: func() any { return &tokenEntity{} },
			Check: func(found bool, dst any) error {
				te, ok := dst.(*tokenEntity)
				if !ok {
					return fmt.Errorf("accounts: the guard of %s read a %T", user, dst)
				}
				if !found || te.UserID != user || !te.live(s.now()) {
					return ErrBadToken
				}
				return nil
			},
		}}
	}
	return g
}

// Guarded returns ctx for a request of user's made with token ("" for
// none): every transaction it runs reads their account and token and
// refuses a suspended or deleted account, or a token gone (Guard),
// whatever a token cache says.
func (s *Service) Guarded(ctx context.Context, user, token string) context.Context {
	return store.WithGuard(ctx, s.Guard(user, token))
}

// Writing returns a guarded ctx (Guarded) for a request that writes: its
// first read outside a transaction checks the guard too, so that a
// write refused by it is refused before anything is planned.
func Writing(ctx context.Context) context.Context { return store.WithWrites(ctx) }

// Refusal is the error a sign-in to an account of this standing gets:
// ErrSuspended, with the reason the suspension gave.
func (s Standing) Refusal() error {
	if s.SuspendedFor == "" {
		return ErrSuspended
	}
	return fmt.Errorf("%w: %w", derrors.New(derrors.PermissionDenied, "this account is suspended: "+s.SuspendedFor), ErrSuspended)
}

type usernameEntity struct {
	UserID string `datastore:"userId,noindex"`
}

// Person is a user as the API shows it.
type Person struct {
	ID                string `json:"id"`
	DisplayName       string `json:"displayName"`
	PreferredUsername string `json:"preferredUsername"`
	FollowersCount    int64  `json:"followersCount"`
	FollowingCount    int64  `json:"followingCount"`
	// StatusesCount counts the activities they posted (but those for the
	// mentioned alone), and LastStatusTime is when they posted the latest
	// (ms since the epoch; 0: never).
	StatusesCount  int64  `json:"statusesCount"`
	LastStatusTime int64  `json:"lastStatusTime,omitempty"`
	Published      string `json:"published"`
	// Locked: a follow of this person is a request they decide.
	Locked bool `json:"locked"`
	// Role is shown for moderators and admins alone.
	Role string `json:"role,omitempty"`
	// Indexable: their public posts may be found by anyone's search.
	Indexable bool `json:"indexable"`
	// Featured are the hashtags they feature, as their card says (the
	// Mastodon face's; REST shows none).
	Featured []string `json:"-"`
	// Note (a bio) and Fields are what the person says of themselves;
	// AvatarURL, HeaderURL and ThumbnailURL (the avatar's thumbnail,
	// OpenSocial's name) link their profile pictures, from the service's
	// root (PicturePath).
	Note         string  `json:"note"`
	Fields       []Field `json:"fields"`
	AvatarURL    string  `json:"avatarUrl,omitempty"`
	ThumbnailURL string  `json:"thumbnailUrl,omitempty"`
	HeaderURL    string  `json:"headerUrl,omitempty"`
	// standing is the rest, for the operations that act on it.
	standing Standing
}

// Standing returns what the person's account allows.
func (p Person) Standing() Standing { return p.standing }

// ToPerson converts a stored user (its counts are its card's).
func ToPerson(id string, u *User) Person {
	p := Person{
		ID:                id,
		DisplayName:       u.DisplayName,
		PreferredUsername: u.Username,
		Published:         u.Published.UTC().Format(time.RFC3339),
		Locked:            u.Locked,
		Role:              u.Role,
		Indexable:         u.Profile.Indexable,
		standing:          u.Standing,
	}
	p.setPictures(u.Profile)
	return p
}

// Config tunes a Service.
type Config struct {
	// BcryptCost is the work factor of password hashes; 0 means bcrypt's default.
	BcryptCost int
	// TokenTTL is how long a login token lasts; 0 means 30 days.
	TokenTTL time.Duration
	// TokenCacheTTL, when positive, keeps a verified token in this
	// instance's memory for that long, so most requests authenticate
	// without a Datastore read. A logout evicts the token here at once; on
	// other instances it keeps working until their entry expires. Zero
	// reads the Datastore on every request.
	TokenCacheTTL time.Duration
}

// tokenCacheSize bounds the verified tokens an instance keeps (about 150
// bytes each).
const tokenCacheSize = 50_000

// Service manages accounts.
type Service struct {
	db    *store.DB
	ids   *ids.Generator
	cost  int
	ttl   time.Duration
	now   func() time.Time
	dummy []byte // a hash to compare against for unknown usernames
	// tokens caches verified tokens by key name; nil when disabled.
	tokens *expirable.LRU[string, tokenEntity]
}

// New returns a Service.
func New(db *store.DB, gen *ids.Generator, cfg Config) (*Service, error) {
	if db == nil || gen == nil {
		return nil, errors.New("accounts.New: nil dependency")
	}
	if cfg.BcryptCost == 0 {
		cfg.BcryptCost = bcrypt.DefaultCost
	}
	if cfg.BcryptCost < bcrypt.MinCost || cfg.BcryptCost > bcrypt.MaxCost {
		return nil, fmt.Errorf("accounts.New: bcrypt cost %d out of range", cfg.BcryptCost)
	}
	if cfg.TokenTTL == 0 {
		cfg.TokenTTL = 30 * 24 * time.Hour
	}
	dummy, err := bcrypt.GenerateFromPassword(prehash("not a password"), cfg.BcryptCost)
	if err != nil {
		return nil, err
	}
	if cfg.TokenCacheTTL < 0 {
		return nil, errors.New("accounts.New: negative token cache TTL")
	}
	s := &Service{db: db, ids: gen, cost: cfg.BcryptCost, ttl: cfg.TokenTTL, now: time.Now, dummy: dummy}
	if cfg.TokenCacheTTL > 0 {
		s.tokens = expirable.NewLRU[string, tokenEntity](tokenCacheSize, nil, cfg.TokenCacheTTL)
	}
	return s, nil
}

// UserKey returns the key of a user.
func UserKey(db *store.DB, id string) *datastore.Key { return db.NameKey(KindUser, id, nil) }

// Record is a user as a batch lookup read it, for operations of other
// packages that read or count a person in their own transaction.
type Record struct {
	id     string
	ref    store.Ref // the User's in a transaction, the card's outside one
	u      User
	counts *Counts // nil in a transaction: not read
}

// Read adds user id to a lookup; the Record answers once the lookup has
// run. Outside a transaction the lookup reads the user's card (Counts),
// which is the person with their counts (registration writes it with the
// User, the erasure deletes it with the User). In a transaction it reads
// only the User, which tells that the person is there.
func Read(l *store.Lookup, id string) *Record {
	r := &Record{id: id}
	if l.InTx() {
		r.ref = l.Add(UserKey(l.DB(), id), &r.u)
		return r
	}
	r.counts = &Counts{}
	r.ref = l.Add(CountsKey(l.DB(), id), r.counts)
	l.Then(func() {
		c := r.counts
		r.u = User{Username: c.Username, DisplayName: c.DisplayName, Published: c.Published, Standing: c.Standing, Profile: c.Profile,
			Changed: c.Changed}
	})
	return r
}

// Exists reports whether the user exists.
func (r *Record) Exists() bool { return r.ref.Found() }

// Standing returns what the user's account allows (zero if there is no
// such user).
func (r *Record) Standing() Standing {
	if !r.Exists() {
		return Standing{}
	}
	return r.u.Standing
}

// Account returns the user as the policy knows them.
func (r *Record) Account() policy.Account { return r.Standing().Account(r.id, r.Exists()) }

// Indexable reports whether the user lets anyone's search find their
// public posts.
func (r *Record) Indexable() bool { return r.Exists() && r.u.Profile.Indexable }

// MayAct returns the policy's refusal of the user as an actor, if any
// (gone, or suspended): for an operation that reads its actor anyway.
func (r *Record) MayAct() error { return policy.MayAct(r.Account()) }

// SeenBy reports whether reader may see the user's card (policy.SeePerson):
// no one sees a suspended or gone account's but its owner. Blocks are the
// caller's to weigh.
func (r *Record) SeenBy(reader string) bool {
	return policy.SeePerson(reader, r.Account(), policy.Ties{})
}

// SeenBy reports whether reader may see p's card (policy.SeePerson).
func (p Person) SeenBy(reader string) bool {
	return policy.SeePerson(reader, p.standing.Account(p.ID, p.ID != ""), policy.Ties{})
}

// Person returns the user as the API shows it, if the user exists. Its
// counts are those of a lookup outside a transaction: one in a
// transaction reads none.
func (r *Record) Person() (Person, bool) {
	if !r.Exists() {
		return Person{}, false
	}
	p := ToPerson(r.id, &r.u)
	if r.counts != nil {
		p.FollowersCount, p.FollowingCount = max(0, r.counts.Followers), max(0, r.counts.Following)
		p.StatusesCount, p.LastStatusTime = max(0, r.counts.Statuses), r.counts.LastStatus/1000
		p.Featured = r.counts.Featured
	}
	return p, true
}

// Pins reports whether the user pins activity id, as their card says
// (false in a transaction, which reads no card).
func (r *Record) Pins(id string) bool {
	return r.counts != nil && r.Exists() && slices.Contains(r.counts.Pinned, id)
}

// Pinned returns the ids of the activities the user pins, the last pinned
// first, as their card says (nil in a transaction).
func (r *Record) Pinned() []string {
	if r.counts == nil || !r.Exists() {
		return nil
	}
	return r.counts.Pinned
}

// Count adds to the user's follower and following counts with tx's
// commit, by server-side increments that read nothing. A user read and not
// found is left alone. The transaction must have read the user and the
// change it counts.
func (r *Record) Count(tx *store.Tx, followers, following int64) error {
	if !r.Exists() {
		return nil
	}
	return tx.IncrementAny(CountsKey(tx.DB(), r.id), map[string]int64{"followers": followers, "following": following})
}

var usernameRE = regexp.MustCompile(`^[A-Za-z0-9_]{3,30}$`)

// ValidateUsername checks the contract's username rules.
func ValidateUsername(name string) error {
	if !usernameRE.MatchString(name) {
		return derrors.New(derrors.InvalidArgument, "username must be 3 to 30 letters, digits or _")
	}
	return nil
}

func validatePassword(pw string) error {
	n := utf8.RuneCountInString(pw)
	if !utf8.ValidString(pw) || n < MinPassword || n > MaxPassword {
		return derrors.New(derrors.InvalidArgument, fmt.Sprintf("password must be %d to %d characters", MinPassword, MaxPassword))
	}
	return nil
}

// CleanDisplayName trims name and checks it; empty gives fallback.
func CleanDisplayName(name, fallback string) (string, error) {
	name, err := text.Clean("displayName", name, text.Rules{Max: MaxDisplayName})
	if err != nil || name != "" {
		return name, err
	}
	return fallback, nil
}

// prehash lets passwords longer than bcrypt's 72-byte input count in full:
// bcrypt sees the base64 of their SHA-256 (44 bytes).
func prehash(pw string) []byte {
	sum := sha256.Sum256([]byte(pw))
	return []byte(base64.StdEncoding.EncodeToString(sum[:]))
}

var errIDTaken = errors.New("accounts: id collision")

// CheckRegistration says, without hashing anything, whether Register
// would refuse these: a name, password or display name against the rules,
// or a name taken already (it may still be taken before Register commits).
func (s *Service) CheckRegistration(ctx context.Context, username, password, displayName string) error {
	_, err := s.checkRegistration(ctx, username, password, displayName)
	return err
}

func (s *Service) checkRegistration(ctx context.Context, username, password, displayName string) (string, error) {
	if err := ValidateUsername(username); err != nil {
		return "", err
	}
	if err := validatePassword(password); err != nil {
		return "", err
	}
	display, err := CleanDisplayName(displayName, username)
	if err != nil {
		return "", err
	}
	taken, err := s.db.Get(ctx, s.db.NameKey(KindUsername, strings.ToLower(username), nil), &usernameEntity{})
	if err != nil {
		return "", fmt.Errorf("accounts.CheckRegistration(%q): %w", username, err)
	}
	if taken {
		return "", ErrUsernameTaken
	}
	return display, nil
}

// Register creates an account and logs it in. The name is checked before
// the password is hashed, so a taken name costs no hash.
func (s *Service) Register(ctx context.Context, username, password, displayName string) (Person, string, error) {
	return s.register(ctx, username, password, displayName, &Grant{})
}

// Create creates an account and signs no one in: the sign-up of an
// app's sign-in page, whose approval makes the app's code (package
// oauth).
func (s *Service) Create(ctx context.Context, username, password string) (Person, error) {
	p, _, err := s.register(ctx, username, password, "", nil)
	return p, err
}

// RegisterFor creates an account as an OAuth app signs a person up
// (package oauth): its token is the app's, with the grant's scopes.
func (s *Service) RegisterFor(ctx context.Context, username, password string, g Grant) (Person, string, error) {
	if g.App == "" {
		return Person{}, "", errors.New("accounts.RegisterFor: a grant names its app")
	}
	return s.register(ctx, username, password, "", &g)
}

// register creates an account, and a token of g's for it (none for a nil
// g).
func (s *Service) register(ctx context.Context, username, password, displayName string, g *Grant) (Person, string, error) {
	display, err := s.checkRegistration(ctx, username, password, displayName)
	if err != nil {
		return Person{}, "", err
	}
	hash, err := bcrypt.GenerateFromPassword(prehash(password), s.cost)
	if err != nil {
		return Person{}, "", fmt.Errorf("accounts.Register: %w", err)
	}
	u := &User{Username: username, DisplayName: display, PasswordHash: hash, Published: s.now().UTC().Truncate(time.Second)}
	nameKey := s.db.NameKey(KindUsername, strings.ToLower(username), nil)
	var id string
	for attempt := 0; ; attempt++ {
		id = s.ids.NextString()
		userKey := UserKey(s.db, id)
		err = s.db.Update(ctx, func(tx *store.Tx) error {
			var taken usernameEntity
			l := tx.Lookup()
			name, user := l.Add(nameKey, &taken), l.Add(userKey, &User{})
			if err := l.Run(ctx); err != nil {
				return err
			}
			if name.Found() {
				if taken.UserID == id && user.Found() {
					return nil // ours: a retry after a commit that did apply
				}
				return ErrUsernameTaken
			}
			if user.Found() {
				return errIDTaken
			}
			if err := viewer.Start(tx, id); err != nil {
				return err
			}
			return tx.PutMulti([]*datastore.Key{nameKey, userKey, CountsKey(s.db, id)},
				[]any{&usernameEntity{UserID: id}, u, Card(u, Counts{})})
		})
		if !errors.Is(err, errIDTaken) || attempt == 3 {
			break
		}
	}
	if err != nil {
		return Person{}, "", fmt.Errorf("accounts.Register(%q): %w", username, err)
	}
	if g == nil {
		return ToPerson(id, u), "", nil
	}
	g.User = id
	token, err := s.newToken(ctx, id, *g)
	if err != nil {
		return Person{}, "", err
	}
	return ToPerson(id, u), token, nil
}

// Login checks a username and password and returns a new token.
func (s *Service) Login(ctx context.Context, username, password string) (Person, string, error) {
	p, err := s.Check(ctx, username, password)
	if err != nil {
		return Person{}, "", err
	}
	token, err := s.newToken(ctx, p.ID, Grant{})
	if err != nil {
		return Person{}, "", err
	}
	return p, token, nil
}

// Check checks a username and password and returns whose they are: the
// sign-in of Login, and of an app's authorization (package oauth), which
// makes a token of its own.
func (s *Service) Check(ctx context.Context, username, password string) (Person, error) {
	p, _, err := s.check(ctx, username, password)
	return p, err
}

func (s *Service) check(ctx context.Context, username, password string) (Person, string, error) {
	if ValidateUsername(username) != nil || len(password) > 4*MaxPassword {
		bcrypt.CompareHashAndPassword(s.dummy, prehash(password)) // same time as a real miss
		return Person{}, "", ErrBadLogin
	}
	var ue usernameEntity
	ok, err := s.db.Get(ctx, s.db.NameKey(KindUsername, strings.ToLower(username), nil), &ue)
	if err != nil {
		return Person{}, "", fmt.Errorf("accounts.Login(%q): %w", username, err)
	}
	if !ok {
		bcrypt.CompareHashAndPassword(s.dummy, prehash(password))
		return Person{}, "", ErrBadLogin
	}
	var u User
	l := s.db.Lookup()
	r, found := Read(l, ue.UserID), l.Add(UserKey(s.db, ue.UserID), &u) // the card, and the User for its password
	if err := l.Run(ctx); err != nil || !found.Found() || !r.Exists() {
		return Person{}, "", fmt.Errorf("accounts.Login(%q): user %s: found %v: %w", username, ue.UserID, found.Found(), err)
	}
	if bcrypt.CompareHashAndPassword(u.PasswordHash, prehash(password)) != nil {
		return Person{}, "", ErrBadLogin
	}
	if u.IsSuspended() {
		return Person{}, "", u.Refusal()
	}
	p, _ := r.Person()
	return p, "", nil
}

// Delete deletes user's account, once password proves it theirs. The
// User and its Username go in one transaction, so the name is free at
// once and every operation of the user's that commits later finds no
// actor (each reads its actor in its transaction); then every token of
// the user ends. erase runs first, before the commit: it enqueues the
// erasure of everything else the user left (package lifecycle). Deleting
// an account that is gone already checks no password, runs erase again
// and ends the tokens, so a retry after a commit that answered an error
// finishes the work.
//
// The account's own standing decides, not the request's guard (see
// store.Guard): a suspended account may not delete itself (it is erased
// when its suspension ends unlifted), and a retry that finds it gone
// finishes what the deletion began.
func (s *Service) Delete(ctx context.Context, user, password string, erase func(context.Context) error) error {
	ctx = store.Unguarded(ctx)
	var u User
	ok, err := s.db.Get(ctx, UserKey(s.db, user), &u)
	if err != nil {
		return fmt.Errorf("accounts.Delete(%s): %w", user, err)
	}
	if ok {
		if err := policy.MayAct(u.Standing.Account(user, true)); err != nil {
			return err
		}
	}
	if ok && (len(password) > 4*MaxPassword || bcrypt.CompareHashAndPassword(u.PasswordHash, prehash(password)) != nil) {
		return ErrWrongPassword
	}
	return s.remove(ctx, user, ok, &u, erase)
}

// Remove deletes user's account as Delete does, without a password: the
// end of a suspension that was not lifted (package lifecycle).
func (s *Service) Remove(ctx context.Context, user string, erase func(context.Context) error) error {
	var u User
	ok, err := s.db.Get(ctx, UserKey(s.db, user), &u)
	if err != nil {
		return fmt.Errorf("accounts.Remove(%s): %w", user, err)
	}
	return s.remove(ctx, user, ok, &u, erase)
}

// remove runs erase, then deletes user's account (u, read before, if ok)
// and ends their tokens.
func (s *Service) remove(ctx context.Context, user string, ok bool, u *User, erase func(context.Context) error) error {
	if err := erase(ctx); err != nil {
		return err
	}
	var err error
	if ok {
		err = s.db.Update(ctx, func(tx *store.Tx) error {
			var ue usernameEntity
			nameKey := s.db.NameKey(KindUsername, strings.ToLower(u.Username), nil)
			if ok, err := tx.Get(nameKey, &ue); err != nil {
				return err
			} else if !ok || ue.UserID != user {
				nameKey = nil // taken again since: not ours to free
			}
			if err := viewer.Forget(tx, user); err != nil {
				return err
			}
			keys := []*datastore.Key{UserKey(s.db, user), CountsKey(s.db, user)}
			if nameKey != nil {
				keys = append(keys, nameKey)
			}
			return tx.DeleteMulti(keys)
		})
		if err != nil {
			return fmt.Errorf("accounts.Delete(%s): %w", user, err)
		}
	}
	// The account is gone: what is left of it is not the actor's to
	// guard (a retry of a deletion that committed must finish it).
	_, err = s.LogoutAll(store.Unguarded(ctx), user)
	return err
}
