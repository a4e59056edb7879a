package mastodon

import (
	"slices"
	"strings"

	"socialstream/internal/derrors"
	"socialstream/internal/federation"
)

// A person's own domain blocks (Mastodon's /api/v1/domain_blocks): the
// domains of other servers whose people they no longer see, nor follow,
// nor are followed by (package graph).

// domainBlocks is GET /api/v1/domain_blocks: the domains the caller
// blocks, newest first, a page of limit (100, at most 200) below max_id
// (a domain of the list).
func (s *Server) domainBlocks(m *mreq) (any, error) {
	limit, err := m.p.limit(100, 200)
	if err != nil {
		return nil, err
	}
	list, err := s.graph.BlockedDomains(m.ctx, m.caller)
	if err != nil {
		return nil, err
	}
	slices.Reverse(list)
	if below := m.p.str("max_id"); below != "" {
		i := slices.Index(list, below)
		if i < 0 {
			return nil, derrors.New(derrors.InvalidArgument, "max_id is not a domain of the list")
		}
		list = list[i+1:]
	}
	if len(list) > limit {
		list = list[:limit]
		m.link(s, list[len(list)-1], "")
	}
	return append([]string{}, list...), nil
}

// blockDomain is POST /api/v1/domain_blocks (domain): the caller blocks
// it; its people's posts and notifications leave their feeds, and the
// follows between them end.
func (s *Server) blockDomain(m *mreq) (any, error) {
	domain, err := s.domainParam(m)
	if err != nil {
		return nil, err
	}
	return struct{}{}, s.graph.BlockDomain(m.ctx, m.caller, domain)
}

// unblockDomain is DELETE /api/v1/domain_blocks (domain).
func (s *Server) unblockDomain(m *mreq) (any, error) {
	domain, err := s.domainParam(m)
	if err != nil {
		return nil, err
	}
	return struct{}{}, s.graph.UnblockDomain(m.ctx, m.caller, domain)
}

// domainParam reads the domain a block names: a host name (host:port on
// loopback), not this server's own.
func (s *Server) domainParam(m *mreq) (string, error) {
	raw := m.p.str("domain")
	if strings.TrimSpace(raw) == "" {
		return "", derrors.New(derrors.InvalidArgument, "domain names the domain to block")
	}
	domain, err := federation.ParseBlockDomain(raw)
	if err != nil {
		return "", err
	}
	if own := strings.ToLower(s.d.Federation.Domain); domain == own || domain == strings.ToLower(m.c.Request.Host) || domain == strings.ToLower(s.originHost(m.c)) {
		return "", derrors.New(derrors.InvalidArgument, "that is this server's own domain")
	}
	return domain, nil
}
