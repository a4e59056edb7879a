// Package filters owns a person's keyword filters, after Mastodon's: each
// names keywords (as a whole word or anywhere), the feeds it applies to,
// and whether it hides what matches or marks it with a warning, until an
// optional expiry. The server applies them as a feed is read.
//
// A person's filters live in their ViewerState (package viewer), which
// every feed page reads anyway: applying them costs no Datastore read.
// They are few and small (MaxFilters of MaxKeywords), each stored as one
// JSON string.
package filters

import (
	"context"
	"crypto/rand"
	"encoding/base32"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"socialstream/internal/accounts"
	"socialstream/internal/derrors"
	"socialstream/internal/store"
	"socialstream/internal/text"
	"socialstream/internal/viewer"
)

// Where a filter applies.
const (
	Home          = "home"          // the home feed, and groups' feeds
	Notifications = "notifications" // notifications and @mentions
	Public        = "public"        // @all
	Tags          = "tags"          // tags' feeds
	Account       = "account"       // a person's page, read by someone else
)

// Contexts are where a filter may apply.
var Contexts = []string{Home, Notifications, Public, Tags, Account}

// What a filter does with what matches.
const (
	Hide = "hide" // leaves it out
	Warn = "warn" // shows it, with the filter that matched
)

// Limits.
const (
	MaxFilters  = 20
	MaxKeywords = 10
	MaxKeyword  = 100 // characters
	MaxTitle    = 100 // characters
)

// Keyword is one keyword of a filter.
type Keyword struct {
	// ID names the keyword in its filter, kept across edits (a number;
	// one sent without is given the next).
	ID      string `json:"id,omitempty"`
	Keyword string `json:"keyword"`
	// WholeWord matches the keyword only between non-letters (as a word);
	// otherwise anywhere, inside words too.
	WholeWord bool `json:"wholeWord"`
}

// Filter is one filter, as stored and as the API shows it.
type Filter struct {
	ID        string    `json:"id"`
	Title     string    `json:"title"`
	Keywords  []Keyword `json:"keywords"`
	Context   []string  `json:"context"`
	Action    string    `json:"action"`
	ExpiresAt string    `json:"expiresAt,omitempty"` // RFC 3339; none: never
}

// Match is a filter that matched an activity shown with a warning.
type Match struct {
	FilterID       string   `json:"filterId"`
	Title          string   `json:"title"`
	KeywordMatches []string `json:"keywordMatches"`
}

var (
	ErrNoSuchFilter = derrors.New(derrors.NotFound, "no such filter")
	ErrTooMany      = derrors.New(derrors.InvalidArgument, fmt.Sprintf("at most %d filters", MaxFilters))
)

func invalid(msg string) error { return derrors.New(derrors.InvalidArgument, msg) }

// check checks and cleans f, as of now.
func (f *Filter) check(now time.Time) error {
	title, err := text.Clean("title", f.Title, text.Rules{Max: MaxTitle, Required: true})
	if err != nil {
		return err
	}
	f.Title = title
	if len(f.Keywords) == 0 || len(f.Keywords) > MaxKeywords {
		return invalid(fmt.Sprintf("a filter has 1 to %d keywords", MaxKeywords))
	}
	seen, ids := map[string]bool{}, map[string]bool{}
	for i, k := range f.Keywords {
		if k.ID != "" {
			if n, err := strconv.Atoi(k.ID); err != nil || n < 0 || ids[k.ID] {
				return invalid("a keyword's id is a number, once in its filter")
			}
			ids[k.ID] = true
		}
		kw, err := text.Clean("keyword", k.Keyword, text.Rules{Max: MaxKeyword, Required: true})
		if err != nil {
			return err
		}
		if seen[strings.ToLower(kw)] {
			return invalid("keyword " + kw + " is there twice")
		}
		seen[strings.ToLower(kw)] = true
		f.Keywords[i].Keyword = kw
	}
	if len(f.Context) == 0 {
		return invalid("context names where the filter applies: " + strings.Join(Contexts, ", "))
	}
	var ctxs []string
	for _, c := range f.Context {
		if !slices.Contains(Contexts, c) {
			return invalid("unknown context " + c + ": one of " + strings.Join(Contexts, ", "))
		}
		if !slices.Contains(ctxs, c) {
			ctxs = append(ctxs, c)
		}
	}
	f.Context = ctxs
	if f.Action == "" {
		f.Action = Warn
	}
	if f.Action != Hide && f.Action != Warn {
		return invalid("action is hide or warn")
	}
	if f.ExpiresAt != "" {
		t, err := time.Parse(time.RFC3339, f.ExpiresAt)
		if err != nil {
			return invalid("expiresAt is an RFC 3339 time")
		}
		if !t.After(now) {
			return invalid("expiresAt is in the past")
		}
		f.ExpiresAt = t.UTC().Format(time.RFC3339)
	}
	return nil
}

// active reports whether f applies in where at now.
func (f *Filter) active(where string, now time.Time) bool {
	if !slices.Contains(f.Context, where) {
		return false
	}
	if f.ExpiresAt == "" {
		return true
	}
	t, err := time.Parse(time.RFC3339, f.ExpiresAt)
	return err == nil && now.Before(t)
}

// decode decodes the stored filters; one that does not decode is left out.
func decode(raw []string) []Filter {
	out := make([]Filter, 0, len(raw))
	for _, r := range raw {
		var f Filter
		if json.Unmarshal([]byte(r), &f) == nil && f.ID != "" {
			f.number(-1) // one stored before keywords had ids: their places
			out = append(out, f)
		}
	}
	return out
}

func encode(fs []Filter) ([]string, error) {
	out := make([]string, len(fs))
	for i, f := range fs {
		b, err := json.Marshal(f)
		if err != nil {
			return nil, err
		}
		out[i] = string(b)
	}
	return out, nil
}

// Set is the filters that apply to one feed as it is read.
type Set struct{ fs []Filter }

// Active returns the filters of a state (as viewer.Ref.Filters gives them)
// that apply in where at now; nil if none.
func Active(raw []string, where string, now time.Time) *Set {
	if len(raw) == 0 || where == "" {
		return nil
	}
	var s Set
	for _, f := range decode(raw) {
		if f.active(where, now) {
			s.fs = append(s.fs, f)
		}
	}
	if len(s.fs) == 0 {
		return nil
	}
	return &s
}

// Hides reports whether any of the filters hides what it matches.
func (s *Set) Hides() bool {
	return s != nil && slices.ContainsFunc(s.fs, func(f Filter) bool { return f.Action == Hide })
}

// Apply says what the filters do with an activity of the given texts
// (its title and body, and those of what it shares): hide it, or show it
// with the matches to warn of.
func (s *Set) Apply(texts ...string) (hide bool, warn []Match) {
	if s == nil {
		return false, nil
	}
	lower := make([]string, len(texts))
	for i, t := range texts {
		lower[i] = strings.ToLower(t)
	}
	for _, f := range s.fs {
		var matched []string
		for _, k := range f.Keywords {
			kw := strings.ToLower(k.Keyword)
			if slices.ContainsFunc(lower, func(t string) bool { return contains(t, kw, k.WholeWord) }) {
				matched = append(matched, k.Keyword)
			}
		}
		if len(matched) == 0 {
			continue
		}
		if f.Action == Hide {
			return true, nil
		}
		warn = append(warn, Match{FilterID: f.ID, Title: f.Title, KeywordMatches: matched})
	}
	return false, warn
}

// contains reports whether t holds kw (both lower case), as a whole word
// if whole: with no letter or digit just before or after it.
func contains(t, kw string, whole bool) bool {
	for from := 0; from <= len(t); {
		i := strings.Index(t[from:], kw)
		if i < 0 {
			return false
		}
		i += from
		if !whole || boundary(t, i, i+len(kw)) {
			return true
		}
		_, size := utf8.DecodeRuneInString(t[i:])
		from = i + max(size, 1)
	}
	return false
}

func boundary(t string, start, end int) bool {
	word := func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' }
	if start > 0 {
		if r, _ := utf8.DecodeLastRuneInString(t[:start]); word(r) {
			return false
		}
	}
	if end < len(t) {
		if r, _ := utf8.DecodeRuneInString(t[end:]); word(r) {
			return false
		}
	}
	return true
}

// Service keeps people's filters.
type Service struct {
	db  *store.DB
	now func() time.Time
}

// New returns a Service.
func New(db *store.DB) (*Service, error) {
	if db == nil {
		return nil, errors.New("filters.New: nil dependency")
	}
	return &Service{db: db, now: time.Now}, nil
}

// List returns user's filters, expired ones too, oldest first.
func (s *Service) List(ctx context.Context, user string) ([]Filter, error) {
	return Of(ctx, s.db, user)
}

// Of returns user's filters, expired ones too, oldest first (for an
// export).
func Of(ctx context.Context, db *store.DB, user string) ([]Filter, error) {
	l := db.Lookup()
	own := viewer.Read(l, user)
	if err := l.Run(ctx); err != nil {
		return nil, fmt.Errorf("filters.List(%s): %w", user, err)
	}
	return decode(own.Filters()), nil
}

// Get returns one of user's filters.
func (s *Service) Get(ctx context.Context, user, id string) (Filter, error) {
	fs, err := s.List(ctx, user)
	if err != nil {
		return Filter{}, err
	}
	if i := slices.IndexFunc(fs, func(f Filter) bool { return f.ID == id }); i >= 0 {
		return fs[i], nil
	}
	return Filter{}, ErrNoSuchFilter
}

// change changes user's filters in a transaction.
func (s *Service) change(ctx context.Context, user string, f func([]Filter) ([]Filter, error)) error {
	return s.db.Update(ctx, func(tx *store.Tx) error {
		l := tx.Lookup()
		own, who := viewer.Read(l, user), accounts.Read(l, user)
		if err := l.Run(ctx); err != nil {
			return err
		}
		if !who.Exists() {
			return accounts.ErrBadToken
		}
		fs, err := f(decode(own.Filters()))
		if err != nil {
			return err
		}
		raw, err := encode(fs)
		if err != nil {
			return err
		}
		own.Edit().Filters = raw
		return own.Save(tx)
	})
}

func newID() string {
	var b [10]byte
	rand.Read(b[:])
	return strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(b[:]))
}

// number gives each keyword without an id the next number above after
// and above those the filter's keywords hold; after -1 numbers a filter
// of none by their places.
func (f *Filter) number(after int) {
	next := after + 1
	for _, k := range f.Keywords {
		if n, err := strconv.Atoi(k.ID); err == nil && n >= next {
			next = n + 1
		}
	}
	for i := range f.Keywords {
		if f.Keywords[i].ID == "" {
			f.Keywords[i].ID = strconv.Itoa(next)
			next++
		}
	}
}

// maxKeywordID is the greatest keyword id of f (-1: none).
func (f *Filter) maxKeywordID() int {
	most := -1
	for _, k := range f.Keywords {
		if n, err := strconv.Atoi(k.ID); err == nil && n > most {
			most = n
		}
	}
	return most
}

// Create adds a filter to user's and returns it.
func (s *Service) Create(ctx context.Context, user string, f Filter) (Filter, error) {
	if err := f.check(s.now()); err != nil {
		return Filter{}, err
	}
	f.ID = newID()
	f.number(-1)
	err := s.change(ctx, user, func(fs []Filter) ([]Filter, error) {
		if slices.ContainsFunc(fs, func(x Filter) bool { return x.ID == f.ID }) {
			return fs, nil // a retry after the commit
		}
		if len(fs) >= MaxFilters {
			return nil, ErrTooMany
		}
		return append(fs, f), nil
	})
	if err != nil {
		return Filter{}, fmt.Errorf("filters.Create(%s): %w", user, err)
	}
	return f, nil
}

// Update replaces user's filter id by f.
func (s *Service) Update(ctx context.Context, user, id string, f Filter) (Filter, error) {
	if err := f.check(s.now()); err != nil {
		return Filter{}, err
	}
	f.ID = id
	err := s.change(ctx, user, func(fs []Filter) ([]Filter, error) {
		i := slices.IndexFunc(fs, func(x Filter) bool { return x.ID == id })
		if i < 0 {
			return nil, ErrNoSuchFilter
		}
		// A keyword kept keeps its id; a new one takes the next, never
		// one that named another before.
		f.number(max(fs[i].maxKeywordID(), f.maxKeywordID()))
		fs[i] = f
		return fs, nil
	})
	if err != nil {
		return Filter{}, fmt.Errorf("filters.Update(%s, %s): %w", user, id, err)
	}
	return f, nil
}

// Delete deletes user's filter id, if it is there.
func (s *Service) Delete(ctx context.Context, user, id string) error {
	err := s.change(ctx, user, func(fs []Filter) ([]Filter, error) {
		return slices.DeleteFunc(fs, func(x Filter) bool { return x.ID == id }), nil
	})
	if err != nil {
		return fmt.Errorf("filters.Delete(%s, %s): %w", user, id, err)
	}
	return nil
}
