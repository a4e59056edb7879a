package api

import (
	"context"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"

	"socialstream/internal/accounts"
	"socialstream/internal/derrors"
	"socialstream/internal/graph"
	"socialstream/internal/ids"
	"socialstream/internal/mutes"
	"socialstream/internal/paging"
)

// collection is the contract's list body.
type collection struct {
	List         any    `json:"list"`
	StartIndex   int    `json:"startIndex"`
	ItemsPerPage int    `json:"itemsPerPage"`
	TotalResults int64  `json:"totalResults"`
	NextCursor   string `json:"nextCursor,omitempty"`
}

// peopleParams are the parameters of people.get, as OpenSocial names them.
type peopleParams struct {
	UserID  string `json:"userId"`
	GroupID string `json:"groupId"`
	// PersonID asks whether one person is in the @friends or @followers
	// list: the answer is that person, or a 404.
	PersonID string `json:"personId"`
	// UserIDs are several people to read under @self (JSON-RPC's userId
	// as a list); then UserID is ignored.
	UserIDs list `json:"userIds"`
	Fields  list `json:"fields"`
	pageParams
}

func peopleGetFromRequest(c *gin.Context) (peopleParams, error) {
	p := peopleParams{UserID: c.Param("userId"), GroupID: c.Param("selector"), PersonID: c.Param("target")}
	var err error
	if p.Fields, err = listFromQuery(c, "fields"); err != nil {
		return p, err
	}
	p.pageParams, err = pagingFromQuery(c)
	return p, err
}

// peopleGet answers people.get, with only the fields asked for.
func (s *Server) peopleGet(ctx context.Context, caller string, p peopleParams) (any, error) {
	return selecting(p.Fields, func() (any, error) { return s.findPeople(ctx, caller, p) })
}

func (s *Server) findPeople(ctx context.Context, caller string, p peopleParams) (any, error) {
	if p.UserID == "" {
		p.UserID = "@me"
	}
	if p.GroupID == "" {
		p.GroupID = "@self"
	}
	if p.PersonID != "" && !slices.Contains(listSelectors, p.GroupID) {
		return nil, derrors.New(derrors.InvalidArgument, "a personId applies to @friends, @followers, @blocked, @muted, @requests and @requested only")
	}
	if len(p.UserIDs) > 0 {
		if p.GroupID != "@self" {
			return nil, derrors.New(derrors.InvalidArgument, "several userIds are read under @self only")
		}
		return s.several(ctx, caller, p.UserIDs)
	}
	if p.GroupID == "@self" {
		id, err := s.accounts.Resolve(ctx, caller, p.UserID)
		if err != nil {
			return nil, err
		}
		person, err := s.accounts.Card(ctx, caller, id) // hidden everywhere while suspended
		if err != nil {
			return nil, err
		}
		return entry{person}, nil
	}
	page, err := p.page()
	if err != nil {
		return nil, err
	}
	if p.GroupID == "@blocked" {
		return s.blocked(ctx, caller, p.UserID, p.PersonID, page)
	}
	if p.GroupID == "@muted" {
		return s.muted(ctx, caller, p.UserID, p.PersonID, page)
	}
	if p.GroupID == "@requests" || p.GroupID == "@requested" {
		return s.requests(ctx, caller, p.UserID, p.GroupID == "@requested", p.PersonID, page)
	}
	if p.GroupID != "@friends" && p.GroupID != "@followers" {
		if _, ok := ids.Parse(p.GroupID); !ok {
			return nil, derrors.New(derrors.NotFound, "unknown people selector "+p.GroupID)
		}
		g, members, next, err := s.groups.Members(ctx, caller, p.GroupID, page)
		if err != nil {
			return nil, err
		}
		return s.people(ctx, members, page, next, g.MembersCount)
	}
	id, err := s.accounts.Resolve(ctx, caller, p.UserID)
	if err != nil {
		return nil, err
	}
	if p.PersonID != "" {
		return s.inList(ctx, caller, id, p.GroupID, p.PersonID)
	}
	subject, err := s.accounts.Card(ctx, caller, id) // a suspended person's lists are not there either
	if err != nil {
		return nil, err
	}
	var list []string
	var next string
	total := subject.FollowingCount
	if p.GroupID == "@friends" {
		list, next, err = s.graph.Following(ctx, id, page)
	} else {
		list, next, err = s.graph.Followers(ctx, id, page)
		total = subject.FollowersCount
	}
	if err != nil {
		return nil, err
	}
	return s.people(ctx, list, page, next, total)
}

// several answers the people users name, in order, in one batch lookup:
// an unknown id is left out, as a deleted user's is from any list.
func (s *Server) several(ctx context.Context, caller string, users []string) (any, error) {
	resolved, err := s.resolveAll(ctx, caller, users)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	list := slices.DeleteFunc(resolved, func(id string) bool {
		dup := seen[id]
		seen[id] = true
		return dup
	})
	body, err := s.people(ctx, list, paging.Request{Count: len(list)}, "", 0)
	if err != nil {
		return nil, err
	}
	c := body.(collection)
	c.TotalResults = int64(reflect.ValueOf(c.List).Len())
	return c, nil
}

// resolveAll resolves each of refs (ids, @me, @username:NAME).
func (s *Server) resolveAll(ctx context.Context, caller string, refs []string) ([]string, error) {
	out := make([]string, len(refs))
	for i, r := range refs {
		id, err := s.accounts.Resolve(ctx, caller, r)
		if err != nil {
			return nil, err
		}
		out[i] = id
	}
	return out, nil
}

// inList answers whether person is in user's @friends (user follows
// person) or @followers (person follows user) list: one lookup of the
// follow, one of the person.
func (s *Server) inList(ctx context.Context, caller, user, selector, person string) (any, error) {
	other, err := s.accounts.Resolve(ctx, caller, person)
	if err != nil {
		return nil, err
	}
	follower, followee, rel := user, other, "follow"
	if selector == "@followers" {
		follower, followee, rel = other, user, "be followed by"
	}
	_, ok, err := s.graph.Get(ctx, follower, followee)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, derrors.New(derrors.NotFound, fmt.Sprintf("%s does not %s %s", user, rel, other))
	}
	p, err := s.accounts.Card(ctx, caller, other)
	if err != nil {
		return nil, err
	}
	return entry{p}, nil
}

// people looks up ids in one batch and returns them as a collection, in
// order; ids of deleted users are left out.
func (s *Server) people(ctx context.Context, idList []string, page paging.Request, next string, total int64) (any, error) {
	found, err := s.accounts.Shown(ctx, "", idList)
	if err != nil {
		return nil, err
	}
	list := make([]accounts.Person, 0, len(idList))
	for _, id := range idList {
		if p, ok := found[id]; ok {
			list = append(list, p)
		}
	}
	return collection{List: list, StartIndex: page.Offset, ItemsPerPage: page.Count, TotalResults: total, NextCursor: next}, nil
}

// followParams are the parameters of a follow (people.create) and an
// unfollow (people.delete).
type followParams struct {
	UserID      string `json:"userId"`
	GroupID     string `json:"groupId"`
	ID          string `json:"id"`
	CopyLimit   *int   `json:"copyLimit"`
	KeepHistory bool   `json:"keepHistory"`
	// Notify and Reposts, on a follow (made, or there already): each of
	// the person's posts tells the caller; their reposts reach home.
	Notify  *bool `json:"notify"`
	Reposts *bool `json:"reposts"`
	// Duration is how long a mute lasts, in seconds; none or 0: without
	// end.
	Duration *int64 `json:"duration"`
}

// followOnly reports whether p sets what a follow alone takes.
func (p followParams) followOnly() bool {
	return p.CopyLimit != nil || p.KeepHistory || p.Notify != nil || p.Reposts != nil
}

var errFollowOnly = derrors.New(derrors.InvalidArgument, "copyLimit, keepHistory, notify and reposts apply to follows only")

func followFromRequest(c *gin.Context) (followParams, error) {
	p := followParams{UserID: c.Param("userId"), GroupID: c.Param("selector")}
	if err := decodeJSON(c.Request.Body, &p); err != nil {
		return p, err
	}
	p.UserID, p.GroupID = c.Param("userId"), c.Param("selector") // the path wins over the body
	if v, ok := c.GetQuery("copyLimit"); ok {
		n, err := strconv.Atoi(v)
		if err != nil {
			return p, derrors.New(derrors.InvalidArgument, "copyLimit must be an integer")
		}
		p.CopyLimit = &n
	}
	return p, nil
}

func unfollowFromRequest(c *gin.Context) (followParams, error) {
	p := followParams{UserID: c.Param("userId"), GroupID: c.Param("selector"), ID: c.Param("target")}
	if v, ok := c.GetQuery("keepHistory"); ok {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return p, derrors.New(derrors.InvalidArgument, "keepHistory must be true or false")
		}
		p.KeepHistory = b
	}
	return p, nil
}

// listSelectors are the people lists a personId asks about.
var listSelectors = []string{"@friends", "@followers", "@blocked", "@muted", "@requests", "@requested"}

var errFollowPath = derrors.New(derrors.NotFound, "follows are made at /people/@me/@friends, blocks at /people/@me/@blocked, mutes at /people/@me/@muted, approvals at /people/@me/@followers, rejections at /people/@me/@requests")

// checkFollowPath checks that a follow, block or mute (or an approval,
// @followers, or a rejection, @requests) is the caller's own, and returns
// which it is: @friends (the default), @blocked, @muted, @followers or
// @requests.
func (s *Server) checkFollowPath(ctx context.Context, caller string, p followParams) (string, error) {
	if p.UserID == "" {
		p.UserID = "@me"
	}
	if p.GroupID == "" {
		p.GroupID = "@friends"
	}
	if !slices.Contains([]string{"@friends", "@blocked", "@muted", "@followers", "@requests"}, p.GroupID) {
		return "", errFollowPath
	}
	id, err := s.accounts.Resolve(ctx, caller, p.UserID)
	if err != nil {
		return "", err
	}
	if id != caller {
		return "", derrors.New(derrors.PermissionDenied, "you can only change whom you follow, block or mute")
	}
	return p.GroupID, nil
}

// follow follows, or with @blocked blocks, or with @muted mutes, the
// person in the body; with @followers it approves their pending request to
// follow the caller. A follow of a locked person is a request: 202.
func (s *Server) follow(ctx context.Context, caller string, p followParams) (any, error) {
	list, err := s.checkFollowPath(ctx, caller, p)
	if err != nil {
		return nil, err
	}
	if err := p.check(list); err != nil {
		return nil, err
	}
	target, err := s.accounts.Resolve(ctx, caller, p.ID)
	if err != nil {
		return nil, err
	}
	switch list {
	case "@followers":
		person, err := s.graph.Approve(ctx, caller, target)
		if err != nil {
			return nil, err
		}
		return entry{person}, nil
	case "@muted":
		return s.mute(ctx, caller, target, p.Duration)
	case "@blocked":
		person, err := s.graph.Block(ctx, caller, target)
		if err != nil {
			return nil, err
		}
		return entry{person}, nil
	}
	person, out, err := s.graph.Ask(ctx, caller, target, p.CopyLimit)
	if err == nil && out == graph.Requested {
		// Accepted for the person's decision.
		return statusEntry{entry: entry{requestedPerson{Person: person, Requested: true}}, status: http.StatusAccepted}, nil
	}
	if err == nil && (p.Notify != nil || p.Reposts != nil) {
		err = s.graph.FollowOptions(ctx, caller, target, p.Notify, p.Reposts)
	}
	if err != nil {
		return nil, err
	}
	return entry{person}, nil
}

// check refuses what p cannot ask of the list it is posted to: no one
// named; a duration but of a mute; a request made here (they are
// approved at @followers); a follow's own options but on a follow.
func (p followParams) check(list string) error {
	switch {
	case p.ID == "":
		return derrors.New(derrors.InvalidArgument, `give the id of the person as {"id": ...}`)
	case p.Duration != nil && list != "@muted":
		return derrors.New(derrors.InvalidArgument, "duration applies to mutes only")
	case list == "@requests":
		return derrors.New(derrors.NotFound, "follow requests are approved at /people/@me/@followers and rejected by DELETE /people/@me/@requests/{id}")
	case list != "@friends" && p.followOnly():
		return errFollowOnly
	}
	return nil
}

// mute mutes target for duration seconds (none or 0: without end).
func (s *Server) mute(ctx context.Context, caller, target string, duration *int64) (any, error) {
	var d int64
	if duration != nil {
		d = *duration
	}
	if d < 0 || d > int64(mutes.MaxDuration/time.Second) {
		return nil, mutes.ErrDuration
	}
	person, m, err := s.mutes.Mute(ctx, caller, target, time.Duration(d)*time.Second)
	if err != nil {
		return nil, err
	}
	return entry{mutedPerson(person, m)}, nil
}

// requestedPerson is a person as a follow that became a request shows
// them.
type requestedPerson struct {
	accounts.Person
	Requested bool `json:"requested"`
}

// unfollow unfollows (or withdraws the request to follow), or with
// @blocked unblocks, or with @requests rejects the request of, the person
// in the path.
func (s *Server) unfollow(ctx context.Context, caller string, p followParams) (any, error) {
	list, err := s.checkFollowPath(ctx, caller, p)
	if err != nil {
		return nil, err
	}
	target, err := s.accounts.Resolve(ctx, caller, p.ID)
	if err != nil {
		return nil, err
	}
	if list != "@friends" && p.KeepHistory {
		return nil, derrors.New(derrors.InvalidArgument, "keepHistory applies to unfollows only")
	}
	switch list {
	case "@blocked":
		return nil, s.graph.Unblock(ctx, caller, target)
	case "@muted":
		return nil, s.mutes.Unmute(ctx, caller, target)
	case "@requests":
		return nil, s.graph.Reject(ctx, caller, target)
	case "@followers":
		return nil, derrors.New(derrors.NotFound, "a follower leaves by their own unfollow; a pending request is rejected at /people/@me/@requests/{id}")
	}
	return nil, s.graph.Unfollow(ctx, caller, target, p.KeepHistory)
}

// checkOwn checks that userID names the caller, for what only its owner
// sees.
func (s *Server) checkOwn(ctx context.Context, caller, userID, what string) error {
	id, err := s.accounts.Resolve(ctx, caller, userID)
	if err != nil {
		return err
	}
	if id != caller {
		return derrors.New(derrors.PermissionDenied, what+" is visible to its owner only")
	}
	return nil
}

// blocked lists the people the caller blocks: nobody else's list is
// shown.
// With person, it answers whether the caller blocks that person: the
// person, or a 404.
func (s *Server) blocked(ctx context.Context, caller, userID, person string, page paging.Request) (any, error) {
	if err := s.checkOwn(ctx, caller, userID, "a block list"); err != nil {
		return nil, err
	}
	if person != "" {
		other, err := s.accounts.Resolve(ctx, caller, person)
		if err != nil {
			return nil, err
		}
		if ok, err := s.graph.Blocks(ctx, caller, other); err != nil {
			return nil, err
		} else if !ok {
			return nil, derrors.New(derrors.NotFound, fmt.Sprintf("%s does not block %s", caller, other))
		}
		p, err := s.accounts.Card(ctx, caller, other)
		if err != nil {
			return nil, err
		}
		return entry{p}, nil
	}
	list, next, err := s.graph.Blocked(ctx, caller, page)
	if err != nil {
		return nil, err
	}
	return s.people(ctx, list, page, next, int64(page.Offset+len(list)+boolInt(next != "")))
}

// muted lists the people the caller mutes now, each with when the mute
// ends (mutedUntil, if it does): nobody else's list is shown. With person,
// it answers whether the caller mutes that person: the person, or a 404.
func (s *Server) muted(ctx context.Context, caller, userID, person string, page paging.Request) (any, error) {
	if err := s.checkOwn(ctx, caller, userID, "a mute list"); err != nil {
		return nil, err
	}
	if person != "" {
		other, err := s.accounts.Resolve(ctx, caller, person)
		if err != nil {
			return nil, err
		}
		m, ok, err := s.mutes.Get(ctx, caller, other)
		if err != nil {
			return nil, err
		} else if !ok {
			return nil, derrors.New(derrors.NotFound, fmt.Sprintf("%s does not mute %s", caller, other))
		}
		p, err := s.accounts.Card(ctx, caller, other)
		if err != nil {
			return nil, err
		}
		return entry{mutedPerson(p, m)}, nil
	}
	ms, next, err := s.mutes.List(ctx, caller, page)
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(ms))
	for i, m := range ms {
		ids[i] = m.Muted
	}
	found, err := s.accounts.GetMulti(ctx, ids)
	if err != nil {
		return nil, err
	}
	list := make([]mutedView, 0, len(ms))
	for _, m := range ms {
		if p, ok := found[m.Muted]; ok {
			list = append(list, mutedPerson(p, m))
		}
	}
	return collection{List: list, StartIndex: page.Offset, ItemsPerPage: page.Count,
		TotalResults: int64(page.Offset + len(list) + boolInt(next != "")), NextCursor: next}, nil
}

// mutedView is a person as a mute list shows them.
type mutedView struct {
	accounts.Person
	MutedUntil string `json:"mutedUntil,omitempty"`
}

func mutedPerson(p accounts.Person, m mutes.Mute) mutedView {
	v := mutedView{Person: p}
	if !m.Until.IsZero() {
		v.MutedUntil = m.Until.UTC().Format(time.RFC3339)
	}
	return v
}

// page checks the paging parameters.
func (p pageParams) page() (paging.Request, error) {
	count, start, err := p.limits()
	if err != nil {
		return paging.Request{}, err
	}
	return paging.Request{Count: count, Offset: start, Cursor: p.Cursor}, nil
}
