// Package cards makes the preview card of a link a post carries
// (Mastodon's PreviewCard): the page's title, description, site and
// picture, read from its head (OpenGraph, Twitter card, <title>) by a
// well-kept HTML parser.
//
// A card is made once per address and shared by every post that links
// it: its entity (PreviewCard, named by the address) is fetched at most
// once a day, by whichever post's job claims the fetch; the others wait
// for it (queue.NotYet), then copy it. The fetch goes through the one
// guarded client (package egress: public addresses alone, checked on the
// address dialled, every redirect as the first; http or https; a cap on
// the bytes read; a timeout), and the page's picture through the picture
// pipeline (package media: fetched, re-encoded, served from here). A
// page that cannot be fetched or read makes no card, and no error for
// the poster; it is tried again a day later.
package cards

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"

	"cloud.google.com/go/datastore"

	"socialstream/internal/egress"
	"socialstream/internal/media"
	"socialstream/internal/queue"
	"socialstream/internal/store"
)

// KindPreviewCard is the card of one address, shared by the posts that
// link it.
const KindPreviewCard = "PreviewCard"

// Limits.
const (
	// MaxURL is the longest link that gets a card.
	MaxURL = 2048
	// MaxTitle and MaxDescription cut what a page says of itself.
	MaxTitle       = 200
	MaxDescription = 500
	// MaxPage is how much of a page is read for its head.
	MaxPage = 512 << 10
	// Timeout bounds one fetch, redirects and the read included.
	Timeout = 10 * time.Second
	// MaxRedirects is how many redirects a fetch follows.
	MaxRedirects = 3
	// RefreshAfter is how long a card (or the page's answer that it
	// makes none) is kept before its address is fetched again.
	RefreshAfter = 24 * time.Hour
	// RetryFor is how long a post's job tries again a page that gave no
	// answer (ErrNoAnswer), from the post or its edit: then the post goes
	// without a card.
	RetryFor = 10 * time.Minute
	// claimFor is how long a claim of a fetch holds: the others wait
	// that long at most for it.
	claimFor = 2 * time.Minute
)

// Card is a link's preview: a value a post keeps a copy of
// (activities.Activity.Card).
//
//ownership:value
type Card struct {
	// URL is the link as the post has it.
	URL          string `datastore:"url,noindex"`
	Title        string `datastore:"title,noindex"`
	Description  string `datastore:"description,noindex,omitempty"`
	Type         string `datastore:"type,noindex"` // link or video
	ProviderName string `datastore:"provider,noindex,omitempty"`
	// ImageURL is the page's picture at its server; Image its copy here
	// (a picture of media's, held for the card), when there is one.
	ImageURL string         `datastore:"imageUrl,noindex,omitempty"`
	Image    media.Attached `datastore:"image,noindex,omitempty"`
}

// stored is a PreviewCard.
type stored struct {
	Card Card `datastore:"card,noindex"`
	// Made says a card was made when last fetched; Fetched is when (µs),
	// made or not; Claimed is when a fetch under way began (µs), 0 if none.
	Made    bool  `datastore:"made,noindex"`
	Fetched int64 `datastore:"fetched,noindex"`
	Claimed int64 `datastore:"claimed,noindex"`
	// ClaimedBy names who claimed it: the same job, run again after a
	// failure, takes its claim back at once.
	ClaimedBy string `datastore:"claimedBy,noindex,omitempty"`
}

// Pictures keeps a card's picture: media.Service.
type Pictures interface {
	Keep(ctx context.Context, holder, address string) (media.Attached, error)
}

// Config holds what New may be given.
type Config struct {
	// Client fetches the pages: egress's, with plain http allowed
	// (NewClient).
	Client *http.Client
	// Pictures keeps their pictures; nil: cards show none.
	Pictures Pictures
	// Now is the clock (time.Now if nil).
	Now func() time.Time
}

// NewClient returns the guarded client cards fetch with (loopback only
// when allowLoopback: tests and the local stack).
func NewClient(allowLoopback bool) *http.Client {
	c := egress.New(egress.Config{AllowLoopback: allowLoopback, AllowHTTP: true, MaxBody: MaxPage, Timeout: Timeout})
	c.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if len(via) > MaxRedirects {
			return errTooManyRedirects
		}
		return nil // each address dialled is checked as the first
	}
	return c
}

// Service makes and keeps cards.
type Service struct {
	db  *store.DB
	cfg Config
}

// New returns the service over db.
func New(db *store.DB, cfg Config) (*Service, error) {
	if db == nil || cfg.Client == nil {
		return nil, errors.New("cards.New: nil dependency")
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Service{db: db, cfg: cfg}, nil
}

func key(db *store.DB, address string) *datastore.Key {
	sum := sha256.Sum256([]byte(address))
	return db.NameKey(KindPreviewCard, hex.EncodeToString(sum[:16]), nil)
}

// ErrNoAnswer is a page that gave no answer to tell whether it makes a
// card: none, or none in time or in whole, or one that says to try later
// (429, 502, 503, 504). Nothing is kept of it: whoever asks next fetches
// it again.
var ErrNoAnswer = errors.New("cards: the page gave no answer")

// errTooManyRedirects is a fetch past MaxRedirects: the page's answer.
var errTooManyRedirects = errors.New("cards: too many redirects")

// errFetching is a card another job is fetching.
var errFetching = queue.NotYet("the card another post's job is fetching")

// Of returns the card of address, fetching it if it is not kept or is
// older than RefreshAfter: nil if the page makes none. While another
// job's fetch of it is under way it answers queue.ErrNotYet; claimant
// names the job that asks (a run of the same job takes its own claim
// back). A page that gave no answer is ErrNoAnswer, and nothing is kept
// of it.
func (s *Service) Of(ctx context.Context, address, claimant string) (*Card, error) {
	k := key(s.db, address)
	var st stored
	ok, err := s.db.Get(ctx, k, &st)
	if err != nil {
		return nil, fmt.Errorf("cards.Of: %w", err)
	}
	if c, fresh := s.fresh(ok, &st); fresh {
		return c, nil
	}
	// Claim the fetch, unless it is done or under way.
	var kept *Card
	done := false
	err = s.db.Update(ctx, func(tx *store.Tx) error {
		st = stored{}
		ok, err := tx.Get(k, &st)
		if err != nil {
			return err
		}
		if kept, done = s.fresh(ok, &st); done {
			return nil
		}
		now := s.cfg.Now().UnixMicro()
		if st.Claimed > 0 && now-st.Claimed < claimFor.Microseconds() && st.ClaimedBy != claimant {
			return errFetching
		}
		st.Claimed, st.ClaimedBy = now, claimant
		return tx.Put(k, &st)
	})
	if err != nil || done {
		return kept, err
	}
	c, made, err := s.make(ctx, address, st.Card)
	if err != nil {
		// No answer: nothing is kept of it, so the next job to ask (this
		// one again, holding its claim) fetches it again.
		return nil, fmt.Errorf("cards.Of: %w", err) // its address, redacted, in err
	}
	st = stored{Made: made, Fetched: s.cfg.Now().UnixMicro()}
	if made {
		st.Card = c
	}
	if err := s.db.Put(ctx, k, &st); err != nil {
		return nil, fmt.Errorf("cards.Of: %w", err)
	}
	if !made {
		return nil, nil
	}
	return &c, nil
}

// fresh says whether st (found: ok) is younger than RefreshAfter, and
// its card.
func (s *Service) fresh(ok bool, st *stored) (*Card, bool) {
	if !ok || st.Fetched == 0 || s.cfg.Now().Sub(time.UnixMicro(st.Fetched)) >= RefreshAfter {
		return nil, false
	}
	if !st.Made {
		return nil, true
	}
	c := st.Card
	return &c, true
}

// make fetches address and reads its card, and keeps its picture (the
// one its card before kept, was, if it is the same); false if it makes
// none, and ErrNoAnswer if the page gave no answer to tell.
func (s *Service) make(ctx context.Context, address string, was Card) (Card, bool, error) {
	u, err := url.Parse(address)
	if err != nil {
		return Card{}, false, nil
	}
	body, final, err := s.fetch(ctx, u)
	if errors.Is(err, ErrNoAnswer) {
		return Card{}, false, err
	} else if err != nil {
		return Card{}, false, nil
	}
	c, ok := read(body).card(final)
	if !ok {
		return Card{}, false, nil
	}
	c.URL = address // as the post links it, whatever it redirected to
	if c.ImageURL != "" && c.ImageURL == was.ImageURL && was.Image.ID != "" {
		c.Image = was.Image // kept already: fetched again when shown, once uncached
	} else if c.ImageURL != "" && s.cfg.Pictures != nil {
		if img, err := s.cfg.Pictures.Keep(ctx, "card:"+key(s.db, address).Name, c.ImageURL); err == nil {
			c.Image = img
		}
	}
	return c, true, nil
}

// fetch gets a page's first MaxPage bytes, and the address it ended at.
// A page that gave no answer to tell (no answer at all, in time or in
// whole, or one that says to try later) is ErrNoAnswer; an address
// refused or whose name does not resolve, or an answer that makes no
// page, is another error.
func (s *Service) fetch(ctx context.Context, u *url.URL) (io.Reader, *url.URL, error) {
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, nil, err
	}
	req.Header.Set("Accept", "text/html,application/xhtml+xml;q=0.9")
	resp, err := s.cfg.Client.Do(req)
	if err != nil {
		// A name that does not resolve (but for a time-out) is the
		// address's answer, as is a refusal.
		var dns *net.DNSError
		if errors.Is(err, egress.ErrRefused) || errors.Is(err, errTooManyRedirects) || errors.As(err, &dns) && !dns.IsTimeout {
			return nil, nil, err
		}
		return nil, nil, fmt.Errorf("%w: %s: %w", ErrNoAnswer, u.Redacted(), err)
	}
	defer egress.Drain(resp)
	switch resp.StatusCode {
	case http.StatusOK:
	case http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return nil, nil, fmt.Errorf("%w: %s: %s", ErrNoAnswer, u.Redacted(), resp.Status)
	default:
		return nil, nil, fmt.Errorf("cards: %s: %s", u.Redacted(), resp.Status)
	}
	if ct := strings.ToLower(resp.Header.Get("Content-Type")); !strings.HasPrefix(ct, "text/html") && !strings.HasPrefix(ct, "application/xhtml+xml") {
		return nil, nil, fmt.Errorf("cards: %s is %q, not a page", u.Redacted(), ct)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, MaxPage))
	if err != nil && !errors.Is(err, egress.ErrTooLarge) {
		return nil, nil, fmt.Errorf("%w: %s: %w", ErrNoAnswer, u.Redacted(), err)
	}
	return strings.NewReader(string(data)), resp.Request.URL, nil
}

// linkPattern finds a link in a post's text: http or https, up to a
// space or what cannot be in one.
var linkPattern = regexp.MustCompile(`https?://[^\s<>"]+`)

// FirstLink returns the first http(s) link of a post's text, without
// what trails it and cannot end one (.,;:!?, closing quotes and brackets
// it does not open), or "" if it has none (or only one too long). A
// mention or a hashtag is written @name or #tag, never as a link.
func FirstLink(s string) string {
	for _, m := range linkPattern.FindAllString(s, -1) {
		m = trimTrailing(m)
		if len(m) > MaxURL {
			continue
		}
		if u, err := url.Parse(m); err == nil && u.Host != "" && (u.Scheme == "http" || u.Scheme == "https") {
			return m
		}
	}
	return ""
}

// trimTrailing drops the punctuation that ends a sentence after a link,
// and a closing bracket the link does not open.
func trimTrailing(m string) string {
	for m != "" {
		last := m[len(m)-1]
		switch {
		case strings.IndexByte(".,;:!?'\"", last) >= 0:
			m = m[:len(m)-1]
		case last == ')' && strings.Count(m, "(") < strings.Count(m, ")"),
			last == ']' && strings.Count(m, "[") < strings.Count(m, "]"):
			m = m[:len(m)-1]
		default:
			return m
		}
	}
	return m
}

// Kept returns the cards kept of addresses, in order: nil for one that
// makes none or was never fetched. It fetches nothing.
func (s *Service) Kept(ctx context.Context, addresses []string) ([]*Card, error) {
	l := s.db.Lookup()
	sts := make([]stored, len(addresses))
	refs := make([]store.Ref, len(addresses))
	for i, a := range addresses {
		refs[i] = l.Add(key(s.db, a), &sts[i])
	}
	if err := l.Run(ctx); err != nil {
		return nil, fmt.Errorf("cards.Kept: %w", err)
	}
	out := make([]*Card, len(addresses))
	for i := range addresses {
		if refs[i].Found() && sts[i].Made {
			c := sts[i].Card
			out[i] = &c
		}
	}
	return out, nil
}
