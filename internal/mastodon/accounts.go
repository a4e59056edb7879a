package mastodon

import (
	"errors"
	"slices"
	"strconv"
	"strings"
	"time"

	"socialstream/internal/accounts"
	"socialstream/internal/derrors"
	"socialstream/internal/federation"
	"socialstream/internal/graph"
	"socialstream/internal/media"
	"socialstream/internal/mutes"
	"socialstream/internal/paging"
)

// Accounts, follows, blocks and mutes, as Mastodon names them.

// accountList answers people by id, in order, as anyone may see them
// (the REST face's people), with the Link of the next page.
func (s *Server) accountList(m *mreq, idList []string, next string) (any, error) {
	return s.accountListWith(m, idList, next, nil)
}

// accountListWith is accountList, each account changed by with (if set)
// by its place in idList.
func (s *Server) accountListWith(m *mreq, idList []string, next string, with func(i int, a *mAccount)) (any, error) {
	found, err := s.accounts.Shown(m.ctx, m.caller, idList)
	if err != nil {
		return nil, err
	}
	origin := s.origin(m.c)
	out := make([]mAccount, 0, len(idList))
	for i, id := range idList {
		if p, ok := found[id]; ok {
			a := s.account(origin, p)
			if with != nil {
				with(i, &a)
			}
			out = append(out, a)
		}
	}
	return out, s.nextCursor(m, next)
}

// verifyCredentials is GET /api/v1/accounts/verify_credentials: the
// caller, with their source.
func (s *Server) verifyCredentials(m *mreq) (any, error) {
	p, err := s.accounts.Get(m.ctx, m.caller)
	if err != nil {
		return nil, err
	}
	return s.own(m, p), nil
}

// own is the caller's own Account, with its source.
func (s *Server) own(m *mreq, p accounts.Person) mAccount {
	a := s.account(s.origin(m.c), p)
	src := &mSource{Note: p.Note, Fields: []mField{}, Privacy: "public"}
	for _, f := range p.Fields {
		src.Fields = append(src.Fields, mField{Name: f.Name, Value: f.Value})
	}
	a.Source = src
	if p.Role != "" {
		a.Role = &mRole{ID: p.Role, Name: p.Role, Permissions: "0"}
	}
	return a
}

// updateCredentials is PATCH /api/v1/accounts/update_credentials: the
// operation of people.update, one change of a profile and its lock.
func (s *Server) updateCredentials(m *mreq) (any, error) {
	in, err := s.profileOf(m)
	if err != nil {
		return nil, err
	}
	var p accounts.Person
	if in == (accounts.ProfileInput{}) {
		p, err = s.accounts.Get(m.ctx, m.caller) // nothing to change: Mastodon answers the account
	} else {
		p, err = s.media.ChangeProfile(m.ctx, m.caller, in)
	}
	if err != nil {
		return nil, err
	}
	return s.own(m, p), nil
}

// profileOf reads the change of an update_credentials form: the texts,
// fields and lock named, and the avatar and header, uploaded through the
// picture pipeline last (their ids are what the profile takes), once
// every other parameter has read well.
func (s *Server) profileOf(m *mreq) (accounts.ProfileInput, error) {
	var in accounts.ProfileInput
	for _, f := range []struct {
		name string
		dst  **bool
	}{{"locked", &in.Locked}, {"indexable", &in.Indexable}} {
		if m.p.has(f.name) {
			v, err := m.p.flag(f.name, false)
			if err != nil {
				return in, err
			}
			*f.dst = &v
		}
	}
	if m.p.has("note") {
		n := m.p.str("note")
		in.Note = &n
	}
	var fields []accounts.Field
	for i := 0; i < 8; i++ {
		k := "fields_attributes[" + strconv.Itoa(i) + "]"
		if !m.p.has(k+"[name]") && !m.p.has(k+"[value]") {
			continue
		}
		if name := m.p.str(k + "[name]"); name != "" {
			fields = append(fields, accounts.Field{Name: name, Value: m.p.str(k + "[value]")})
		}
		in.Fields = &fields
	}
	if m.p.has("display_name") {
		d := m.p.str("display_name")
		in.DisplayName = &d
	}
	if m.p.has("avatar") || m.p.has("header") {
		return in, derrors.New(derrors.InvalidArgument, "Validation failed: send avatar and header as files of a multipart form")
	}
	for _, pic := range []struct {
		which string
		dst   **string
	}{{"avatar", &in.Avatar}, {"header", &in.Header}} {
		id, err := s.profilePicture(m, pic.which)
		if err != nil {
			return in, err
		}
		if id != "" {
			*pic.dst = &id
		}
	}
	return in, nil
}

// profilePicture uploads the file of the form named which (avatar or
// header), through the picture pipeline, and returns its id ("" if the
// form has none): the profile's change then takes it, as REST's does.
func (s *Server) profilePicture(m *mreq, which string) (string, error) {
	form := m.c.Request.MultipartForm
	if form == nil || len(form.File[which]) == 0 {
		return "", nil
	}
	f, err := form.File[which][0].Open()
	if err != nil {
		return "", derrors.New(derrors.InvalidArgument, "the "+which+" cannot be read")
	}
	defer f.Close()
	data, err := s.host.ReadUpload(f)
	if err != nil {
		return "", err
	}
	if err := s.host.UploadAllowed(m.ctx, m.caller); err != nil {
		return "", err
	}
	_, id, err := s.media.Upload(m.ctx, m.caller, media.UploadInput{Data: data})
	return id, err
}

// getAccount is GET /api/v1/accounts/:id.
func (s *Server) getAccount(m *mreq) (any, error) {
	p, err := s.accounts.Card(m.ctx, m.caller, m.c.Param("id"))
	if err != nil {
		return nil, err
	}
	return s.account(s.origin(m.c), p), nil
}

// maxRemoteAcct bounds the name@domain of another server's person.
const maxRemoteAcct = 320

// lookupAccount is GET /api/v1/accounts/lookup?acct=: a person here, or
// one of another server (federation): known, or, for someone signed in,
// found by their server's WebFinger.
func (s *Server) lookupAccount(m *mreq) (any, error) {
	id, err := s.findAccount(m, m.p.str("acct"), m.caller != "")
	if err != nil {
		return nil, err
	}
	p, err := s.accounts.Card(m.ctx, m.caller, id)
	if err != nil {
		return nil, err
	}
	return s.account(s.origin(m.c), p), nil
}

// findAccount returns the id of the person acct names: name (or
// name@this-domain) here, name@domain of another server when federation
// is on, found by WebFinger when resolve and not known yet; errMGone
// when there is none.
func (s *Server) findAccount(m *mreq, acct string, resolve bool) (string, error) {
	acct = strings.TrimPrefix(acct, "@")
	name, ours, err := s.acctName(m, acct)
	if err != nil {
		return "", err
	}
	found, err := s.accounts.LookupUsernames(m.ctx, []string{strings.ToLower(name)})
	if err != nil {
		return "", err
	}
	if id, ok := found[strings.ToLower(name)]; ok {
		return id, nil
	}
	if ours || !resolve || s.d.Remote == nil {
		return "", errMGone
	}
	a, err := s.d.Remote.Find(m.ctx, acct)
	if errors.Is(err, federation.ErrRemote) {
		s.log.InfoContext(m.ctx, "a person of another server not found", "acct", acct, "err", err)
		return "", errMGone
	}
	if err != nil {
		return "", derrors.New(derrors.Unavailable, "the other server did not answer: try again")
	}
	return a.UserID, nil
}

// acctName returns the name here of the person acct names (name, or
// name@this-domain, for one of ours; name@domain for another server's),
// and whether they are ours; errMGone for a name no one here may have.
func (s *Server) acctName(m *mreq, acct string) (string, bool, error) {
	name, host, _ := strings.Cut(acct, "@")
	ours := host == "" || host == m.c.Request.Host || host == s.originHost(m.c) || s.d.Federation.On() && strings.EqualFold(host, s.d.Federation.Domain)
	switch {
	case ours && accounts.ValidateUsername(name) != nil:
		return "", true, errMGone
	case !ours && (!s.d.Federation.On() || len(acct) > maxRemoteAcct):
		return "", false, errMGone // another server's: known here only by federation
	case !ours:
		return acct, false, nil // a remote person's name here is name@domain
	}
	return name, true, nil
}

// mRelationship is Mastodon's Relationship.
type mRelationship struct {
	ID                  string   `json:"id"`
	Following           bool     `json:"following"`
	ShowingReblogs      bool     `json:"showing_reblogs"`
	Notifying           bool     `json:"notifying"`
	Languages           []string `json:"languages"`
	FollowedBy          bool     `json:"followed_by"`
	Blocking            bool     `json:"blocking"`
	BlockedBy           bool     `json:"blocked_by"`
	Muting              bool     `json:"muting"`
	MutingNotifications bool     `json:"muting_notifications"`
	Requested           bool     `json:"requested"`
	RequestedBy         bool     `json:"requested_by"`
	DomainBlocking      bool     `json:"domain_blocking"`
	Endorsed            bool     `json:"endorsed"`
	Note                string   `json:"note"`
}

// relations is how the caller stands with each of others (people,
// their cards by id): one domain read (graph.Relations).
func (s *Server) relations(m *mreq, others []string, people map[string]accounts.Person) ([]mRelationship, error) {
	cards := make([]accounts.Person, len(others))
	for i, id := range others {
		cards[i] = people[id]
		cards[i].ID = id
	}
	rels, err := s.graph.Relations(m.ctx, m.caller, cards)
	if err != nil {
		return nil, err
	}
	out := make([]mRelationship, len(others))
	for i, r := range rels {
		out[i] = mRelationship{ID: others[i], Languages: []string{}, Following: r.Following, ShowingReblogs: r.ShowingReposts, Notifying: r.Notifying,
			FollowedBy: r.FollowedBy, Blocking: r.Blocking, BlockedBy: r.BlockedBy, Muting: r.Muting, MutingNotifications: r.Muting,
			Requested: r.Requested, RequestedBy: r.RequestedBy, DomainBlocking: r.DomainBlocking}
	}
	return out, nil
}

// relationships is GET /api/v1/accounts/relationships?id[]=: of the
// people the caller may see (the others are left out, as if not there).
func (s *Server) relationships(m *mreq) (any, error) {
	idList := m.p.list("id")
	if len(idList) > 40 {
		return nil, derrors.New(derrors.InvalidArgument, "at most 40 ids")
	}
	found, err := s.accounts.Shown(m.ctx, m.caller, idList)
	if err != nil {
		return nil, err
	}
	seen := slices.DeleteFunc(slices.Clone(idList), func(id string) bool { _, ok := found[id]; return !ok })
	return s.relations(m, seen, found)
}

// MaxFamiliar is how many familiar followers an account is answered
// with, as a web client shows a few.
const MaxFamiliar = 5

// familiarFollowers is GET /api/v1/accounts/familiar_followers?id[]=: for
// each account asked (at most 40), in order, up to MaxFamiliar of its
// followers whom the caller follows (graph.Familiar); none for one the
// caller may not see, and none the caller may not see.
func (s *Server) familiarFollowers(m *mreq) (any, error) {
	idList := m.p.list("id")
	if len(idList) > 40 {
		return nil, derrors.New(derrors.InvalidArgument, "at most 40 ids")
	}
	seen := map[string]bool{}
	idList = slices.DeleteFunc(slices.Clone(idList), func(id string) bool { was := seen[id]; seen[id] = true; return was })
	type familiar struct {
		ID       string     `json:"id"`
		Accounts []mAccount `json:"accounts"`
	}
	out := make([]familiar, len(idList))
	for i, id := range idList {
		out[i] = familiar{ID: id, Accounts: []mAccount{}}
	}
	shown, err := s.accounts.Shown(m.ctx, m.caller, idList)
	if err != nil {
		return nil, err
	}
	fam, err := s.graph.Familiar(m.ctx, m.caller, slices.DeleteFunc(slices.Clone(idList), func(id string) bool { _, ok := shown[id]; return !ok }), MaxFamiliar)
	if err != nil {
		return nil, err
	}
	var all []string
	for _, f := range fam {
		all = append(all, f...)
	}
	found, err := s.accounts.Shown(m.ctx, m.caller, all)
	if err != nil {
		return nil, err
	}
	origin := s.origin(m.c)
	for i, id := range idList {
		for _, f := range fam[id] {
			if p, ok := found[f]; ok {
				out[i].Accounts = append(out[i].Accounts, s.account(origin, p))
			}
		}
	}
	return out, nil
}

// relate is an action on an account (follow, block, mute, ...) that
// answers the relationship after it.
func (s *Server) relate(op func(m *mreq, id string) error) mhandler {
	return func(m *mreq) (any, error) {
		id := m.c.Param("id")
		p, err := s.accounts.Card(m.ctx, m.caller, id)
		if err != nil {
			return nil, err
		}
		if err := op(m, id); err != nil {
			return nil, err
		}
		rels, err := s.relations(m, []string{id}, map[string]accounts.Person{id: p})
		if err != nil {
			return nil, err
		}
		return rels[0], nil
	}
}

// mFollow follows, or asks to follow a locked account (the
// relationship then says requested); notify and reblogs, where sent, set
// how a follow (made now, or there already) tells and takes reposts. A
// request keeps neither: they are set once it is approved.
func (s *Server) mFollow(m *mreq, id string) error {
	var notify, reblogs *bool
	for _, o := range []struct {
		name string
		dst  **bool
	}{{"notify", &notify}, {"reblogs", &reblogs}} {
		if m.p.has(o.name) {
			v, err := m.p.flag(o.name, false)
			if err != nil {
				return err
			}
			*o.dst = &v
		}
	}
	_, out, err := s.graph.Ask(m.ctx, m.caller, id, nil)
	if err != nil || out != graph.Followed || notify == nil && reblogs == nil {
		return err
	}
	return s.graph.FollowOptions(m.ctx, m.caller, id, notify, reblogs)
}

// mUnfollow unfollows, or withdraws a request.
func (s *Server) mUnfollow(m *mreq, id string) error {
	return s.graph.Unfollow(m.ctx, m.caller, id, false)
}

func (s *Server) mBlock(m *mreq, id string) error {
	_, err := s.graph.Block(m.ctx, m.caller, id)
	return err
}

func (s *Server) mUnblock(m *mreq, id string) error { return s.graph.Unblock(m.ctx, m.caller, id) }

// mMute mutes, for duration seconds (0 or none: without end).
func (s *Server) mMute(m *mreq, id string) error {
	var d int64
	if v := m.p.str("duration"); v != "" {
		var err error
		if d, err = strconv.ParseInt(v, 10, 64); err != nil || d < 0 || d > int64(mutes.MaxDuration/time.Second) {
			return mutes.ErrDuration
		}
	}
	_, _, err := s.mutes.Mute(m.ctx, m.caller, id, time.Duration(d)*time.Second)
	return err
}

func (s *Server) mUnmute(m *mreq, id string) error { return s.mutes.Unmute(m.ctx, m.caller, id) }

func (s *Server) authorizeFollow(m *mreq, id string) error {
	_, err := s.graph.Approve(m.ctx, m.caller, id)
	return err
}

func (s *Server) rejectFollow(m *mreq, id string) error { return s.graph.Reject(m.ctx, m.caller, id) }

// people lists, by cursor: followers, following, blocks, mutes,
// follow requests.
func (s *Server) peopleOf(list func(m *mreq, p paging.Request) ([]string, string, error)) mhandler {
	return func(m *mreq) (any, error) {
		page, err := s.cursorPage(m, 40, 80)
		if err != nil {
			return nil, err
		}
		idList, next, err := list(m, page)
		if err != nil {
			return nil, err
		}
		return s.accountList(m, idList, next)
	}
}

// theirs checks that the caller may see the account of the path, and
// returns its id.
func (s *Server) theirs(m *mreq) (string, error) {
	id := m.c.Param("id")
	_, err := s.accounts.Card(m.ctx, m.caller, id)
	return id, err
}

func (s *Server) followersOf(m *mreq, p paging.Request) ([]string, string, error) {
	id, err := s.theirs(m)
	if err != nil {
		return nil, "", err
	}
	return s.graph.Followers(m.ctx, id, p)
}

func (s *Server) followingOf(m *mreq, p paging.Request) ([]string, string, error) {
	id, err := s.theirs(m)
	if err != nil {
		return nil, "", err
	}
	return s.graph.Following(m.ctx, id, p)
}

func (s *Server) blocksOf(m *mreq, p paging.Request) ([]string, string, error) {
	return s.graph.Blocked(m.ctx, m.caller, p)
}

// mutesList is GET /api/v1/mutes: the muted, each with mute_expires_at.
func (s *Server) mutesList(m *mreq) (any, error) {
	page, err := s.cursorPage(m, 40, 80)
	if err != nil {
		return nil, err
	}
	list, next, err := s.mutes.List(m.ctx, m.caller, page)
	if err != nil {
		return nil, err
	}
	idList := make([]string, len(list))
	for i, mu := range list {
		idList[i] = mu.Muted
	}
	return s.accountListWith(m, idList, next, func(i int, a *mAccount) {
		if until := list[i].Until; !until.IsZero() {
			t := until.UTC().Format("2006-01-02T15:04:05.000Z")
			a.MuteExpiresAt = &t
		}
	})
}

func (s *Server) requestsOf(m *mreq, p paging.Request) ([]string, string, error) {
	list, next, err := s.graph.Requests(m.ctx, m.caller, false, p)
	out := make([]string, len(list))
	for i, r := range list {
		out[i] = r.Person
	}
	return out, next, err
}

// searchAccounts is GET /api/v1/accounts/search.
func (s *Server) searchAccounts(m *mreq) (any, error) {
	r, err := s.search(m)
	if err != nil {
		return nil, err
	}
	return r.(map[string]any)["accounts"], nil
}
