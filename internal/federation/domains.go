package federation

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"time"

	"cloud.google.com/go/datastore"

	"socialstream/internal/derrors"
	"socialstream/internal/policy"
	"socialstream/internal/store"
)

// A blocked domain is cut off: nothing it sends is read (its inbox
// requests are refused before their signer's key is fetched), nothing is
// fetched from it, and nothing is delivered to it. The operator blocks
// and unblocks (cmd/admin block-domain); each instance reads the blocks
// again every BlockRefresh. A block names a host (with its port, on
// loopback), and covers its subdomains.

// KindDomainBlock is the kind of a blocked domain, named by it.
const KindDomainBlock = "DomainBlock"

// BlockRefresh is how long an instance keeps the blocks it read.
const BlockRefresh = time.Minute

// maxBlocks bounds the blocks read.
const maxBlocks = 10000

func domainBlockKey(db *store.DB, domain string) *datastore.Key {
	return db.NameKey(KindDomainBlock, domain, nil)
}

type domainBlock struct {
	Created time.Time `datastore:"created,noindex"`
	Reason  string    `datastore:"reason,noindex"`
}

// DomainBlock is a blocked domain.
type DomainBlock struct {
	Domain  string
	Created time.Time
	Reason  string
}

// ErrBlocked is what is refused for its domain's block.
var ErrBlocked = derrors.New(derrors.PermissionDenied, "the domain is blocked here")

// ParseBlockDomain reads a domain to block: a host name (lowercased) or,
// on loopback, host:port.
func ParseBlockDomain(s string) (string, error) {
	s = strings.ToLower(strings.TrimSpace(s))
	if loopbackHost(s) {
		return s, nil
	}
	if err := checkHostName(s); err != nil {
		return "", derrors.New(derrors.InvalidArgument, fmt.Sprintf("%q is not a domain: %v", s, err))
	}
	return s, nil
}

// BlockDomain blocks a domain.
func BlockDomain(ctx context.Context, db *store.DB, domain, reason string, now time.Time) error {
	d, err := ParseBlockDomain(domain)
	if err != nil {
		return err
	}
	return db.Put(store.Unguarded(ctx), domainBlockKey(db, d), &domainBlock{Created: now.UTC(), Reason: reason})
}

// UnblockDomain lifts a domain's block.
func UnblockDomain(ctx context.Context, db *store.DB, domain string) error {
	d, err := ParseBlockDomain(domain)
	if err != nil {
		return err
	}
	return db.Delete(store.Unguarded(ctx), domainBlockKey(db, d))
}

// BlockedDomains lists the blocks, by domain.
func BlockedDomains(ctx context.Context, db *store.DB) ([]DomainBlock, error) {
	var blocks []domainBlock
	keys, err := db.GetAll(ctx, db.Query(KindDomainBlock).Limit(maxBlocks), &blocks)
	if err != nil {
		return nil, fmt.Errorf("federation: the domain blocks: %w", err)
	}
	out := make([]DomainBlock, len(keys))
	for i, k := range keys {
		out[i] = DomainBlock{Domain: k.Name, Created: blocks[i].Created, Reason: blocks[i].Reason}
	}
	return out, nil
}

func readBlocked(ctx context.Context, db *store.DB) ([]string, error) {
	blocks, err := BlockedDomains(ctx, db)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(blocks))
	for i, b := range blocks {
		out[i] = b.Domain
	}
	return out, nil
}

// blocked reports whether an address's host is of a blocked domain.
func (s *Service) blocked(ctx context.Context, raw string) (bool, error) {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return false, nil
	}
	domains, err := s.blocks.Get(ctx)
	if err != nil {
		return false, fmt.Errorf("federation: the domain blocks: %w", err)
	}
	return policy.DomainBlocked(domains, u.Host), nil
}

// checkNotBlocked is ErrBlocked for an address of a blocked domain.
func (s *Service) checkNotBlocked(ctx context.Context, raw string) error {
	switch b, err := s.blocked(ctx, raw); {
	case err != nil:
		return err
	case b:
		return fmt.Errorf("%w: %.100s", ErrBlocked, raw)
	}
	return nil
}
