package accounts

import (
	"context"
	"fmt"
	"strings"

	"socialstream/internal/derrors"
	"socialstream/internal/ids"
	"socialstream/internal/store"
)

// Reading people: by id, as a reader may see them, and by name.

// Get returns a person by id.
func (s *Service) Get(ctx context.Context, id string) (Person, error) {
	if _, ok := ids.Parse(id); !ok {
		return Person{}, ErrNoSuchPerson
	}
	p, ok, err := Load(ctx, s.db, id)
	if err != nil {
		return Person{}, fmt.Errorf("accounts.Get(%q): %w", id, err)
	}
	if !ok {
		return Person{}, ErrNoSuchPerson
	}
	return p, nil
}

// GetMulti returns the people with the given ids, in one batch lookup, as a
// map; unknown ids are left out.
func (s *Service) GetMulti(ctx context.Context, idList []string) (map[string]Person, error) {
	out := make(map[string]Person, len(idList))
	l := s.db.Lookup()
	var recs []*Record
	seen := map[string]bool{}
	for _, id := range idList {
		if _, ok := ids.Parse(id); !ok || seen[id] {
			continue
		}
		seen[id] = true
		recs = append(recs, Read(l, id))
	}
	if err := l.Run(ctx); err != nil {
		return nil, fmt.Errorf("accounts.GetMulti: %w", err)
	}
	for _, r := range recs {
		if p, ok := r.Person(); ok {
			out[r.id] = p
		}
	}
	return out, nil
}

// Card returns person id as reader ("" for no one signed in) may see
// their card (SeenBy: not suspended nor gone, but to themselves), or
// ErrNoSuchPerson: a person hidden is not there. Blocks are the caller's
// to weigh.
func (s *Service) Card(ctx context.Context, reader, id string) (Person, error) {
	p, err := s.Get(ctx, id)
	if err == nil && !p.SeenBy(reader) {
		err = ErrNoSuchPerson
	}
	return p, err
}

// Shown reads the people of idList that viewer may see (SeenBy: not
// suspended nor gone; blocks are the caller's to weigh), by id, in one
// lookup: GetMulti, as the policy lets viewer see it.
func (s *Service) Shown(ctx context.Context, viewer string, idList []string) (map[string]Person, error) {
	found, err := s.GetMulti(ctx, idList)
	if err != nil {
		return nil, err
	}
	for id, p := range found {
		if !p.SeenBy(viewer) {
			delete(found, id)
		}
	}
	return found, nil
}

// Resolve turns a userId of the API into an id: @me and @viewer are the
// caller, @username:NAME looks the name up, anything else must be an id.
// It does not check that an id exists.
func (s *Service) Resolve(ctx context.Context, caller, ref string) (string, error) {
	switch {
	case ref == "@me" || ref == "@viewer":
		if caller == "" {
			return "", ErrBadToken
		}
		return caller, nil
	case strings.HasPrefix(ref, "@username:"):
		name := strings.TrimPrefix(ref, "@username:")
		if ValidateUsername(name) != nil {
			return "", ErrNoSuchPerson
		}
		var ue usernameEntity
		ok, err := s.db.Get(ctx, s.db.NameKey(KindUsername, strings.ToLower(name), nil), &ue)
		if err != nil {
			return "", fmt.Errorf("accounts.Resolve(%q): %w", ref, err)
		}
		if !ok {
			return "", ErrNoSuchPerson
		}
		return ue.UserID, nil
	default:
		if _, ok := ids.Parse(ref); !ok {
			return "", derrors.New(derrors.InvalidArgument, "userId must be an id, @me or @username:NAME")
		}
		return ref, nil
	}
}

// LookupUsernames maps lowercased usernames to user ids in one batch lookup;
// unknown names are left out.
func (s *Service) LookupUsernames(ctx context.Context, names []string) (map[string]string, error) {
	return UserIDsByName(ctx, s.db, names)
}

// UserIDsByName is LookupUsernames over db, for the operator's tools.
func UserIDsByName(ctx context.Context, db *store.DB, names []string) (map[string]string, error) {
	out := map[string]string{}
	l := db.Lookup()
	refs := map[string]store.Ref{}
	ents := map[string]*usernameEntity{}
	for _, n := range names {
		lower := strings.ToLower(n)
		if ValidateUsername(lower) != nil && !remoteAcct.MatchString(lower) {
			continue
		}
		ents[lower] = &usernameEntity{}
		refs[lower] = l.Add(db.NameKey(KindUsername, lower, nil), ents[lower])
	}
	if err := l.Run(ctx); err != nil {
		return nil, fmt.Errorf("accounts.LookupUsernames: %w", err)
	}
	for lower, r := range refs {
		if r.Found() {
			out[lower] = ents[lower].UserID
		}
	}
	return out, nil
}
