package converge

import (
	"context"
	"fmt"
	"maps"
	"slices"
)

// The checks of what is not a feed: markers, people and their counts,
// follow requests, notifications, app data and groups (with the heirs of
// a deleted owner's groups).

// checkMarkers: home markers are where the last acknowledged move left
// them.
func (o *oracle) checkMarkers(ctx context.Context, _ *Report) error {
	for _, u := range o.people {
		rm, err := o.r.c.read(ctx, "/social/rest/markers/@me?feeds=home", u.token)
		if err != nil || rm.status != 200 {
			return fmt.Errorf("read %s's markers: %v %v", u.name, err, rm.body)
		}
		home, _ := entry(rm)["home"].(map[string]any)
		if got, want := str(home, "lastReadId"), o.m.marks[u.id]; got != want {
			o.violate("%s: home marker %q, want %q", u.name, got, want)
		}
	}
	return nil
}

// checkPeople checks people's counts, lock and pending requests, and
// their notifications.
func (o *oracle) checkPeople(ctx context.Context, rep *Report) error {
	for _, u := range o.people {
		if err := o.checkPerson(ctx, u, rep); err != nil {
			return err
		}
		if err := o.checkRequests(ctx, u, rep); err != nil {
			return err
		}
		if err := o.checkNotifications(ctx, u, rep); err != nil {
			return err
		}
	}
	return nil
}

func (o *oracle) checkPerson(ctx context.Context, u *user, rep *Report) error {
	m := o.m
	var followers, following int64
	for k, on := range m.following {
		if !on || m.deleted(k.a) || m.deleted(k.b) {
			continue
		}
		if k.b == u.id {
			followers++
		}
		if k.a == u.id {
			following++
		}
	}
	for k, on := range m.rFollowing { // of the other server's people
		if on && k.a == u.id {
			following++
		}
	}
	for _, q := range o.r.remote.people { // the other server's people's follows (farfollowers.go)
		if m.farFollows(q.id, u.id) {
			followers++
		}
	}
	rp, err := o.r.c.read(ctx, "/social/rest/people/"+u.id+"/@self", u.token)
	if err != nil || rp.status != 200 {
		return fmt.Errorf("read %s: %v %v", u.name, err, rp.body)
	}
	e := entry(rp)
	rep.Checked++
	o.checkCard("the person", e, u.id)
	if got := num(e, "followersCount"); got != followers {
		o.violate("%s: followersCount %d, want %d", u.name, got, followers)
	}
	if got := num(e, "followingCount"); got != following {
		o.violate("%s: followingCount %d, want %d", u.name, got, following)
	}
	if got := e["locked"] == true; got != m.locked[u.id] {
		o.violate("%s: locked %v, want %v", u.name, got, m.locked[u.id])
	}
	return nil
}

// checkRequests: the requests pending are those of people still there.
func (o *oracle) checkRequests(ctx context.Context, u *user, rep *Report) error {
	m := o.m
	var wantAsked, gotAsked []string
	for k := range m.requested {
		if k.b == u.id && !m.gone(k.a) {
			wantAsked = append(wantAsked, k.a)
		}
	}
	asked, err := o.r.c.list(ctx, "/social/rest/people/@me/@requests", u.token)
	if err != nil {
		return fmt.Errorf("read %s's follow requests: %w", u.name, err)
	}
	rep.Checked++
	for _, it := range asked {
		if id := str(it, "id"); !m.gone(id) {
			gotAsked = append(gotAsked, id)
		}
	}
	slices.Sort(wantAsked)
	slices.Sort(gotAsked)
	if !slices.Equal(gotAsked, wantAsked) {
		o.violate("%s: follow requests pending %v, want %v", u.name, gotAsked, wantAsked)
	}
	return nil
}

// checkNotifications: grouped, the same notifications (every one in one
// group, the unread groups those holding an unread one); none from
// someone deleted or pointing at a deleted activity.
func (o *oracle) checkNotifications(ctx context.Context, u *user, rep *Report) error {
	m := o.m
	ns, err := o.r.c.list(ctx, "/social/rest/notifications/@me", u.token)
	if err != nil {
		return fmt.Errorf("read notifications of %s: %w", u.name, err)
	}
	rep.Checked++
	rg, err := o.r.c.read(ctx, "/social/rest/notifications/@me?grouped=true&count=100", u.token)
	if err != nil || rg.status != 200 {
		return fmt.Errorf("read %s's grouped notifications: %v %v", u.name, err, rg.body)
	}
	rep.Checked++
	inGroups, unreadGroups := map[string]bool{}, int64(0)
	groups, _ := rg.body["list"].([]any)
	for _, g := range groups {
		gm, _ := g.(map[string]any)
		ids, _ := gm["ids"].([]any)
		if num(gm, "count") != int64(len(ids)) {
			o.violate("%s: group %s counts %d of %d ids", u.name, str(gm, "groupKey"), num(gm, "count"), len(ids))
		}
		for _, id := range ids {
			inGroups[fmt.Sprint(id)] = true
		}
		if gm["read"] != true {
			unreadGroups++
		}
	}
	if got := num(rg.body, "unreadCount"); got != unreadGroups {
		o.violate("%s: grouped unreadCount %d, want the %d unread groups", u.name, got, unreadGroups)
	}
	// The unread count, by a count of the index on both faces, is what
	// the list shows unread.
	unread := int64(0)
	for _, n := range ns {
		if n["read"] != true {
			unread++
		}
	}
	if err := o.checkUnread(ctx, u, unread, rep); err != nil {
		return err
	}
	for _, n := range ns {
		if len(ns) < 100 && !inGroups[str(n, "id")] {
			o.violate("%s: notification %s (%s) in no group", u.name, str(n, "id"), str(n, "type"))
		}
		if n["actor"] == nil && str(n, "type") != "moderation" { // the service's own notice has no actor
			o.violate("%s: notification %s (%s) from someone deleted", u.name, str(n, "id"), str(n, "type"))
		}
		if id := str(n, "activityId"); id != "" {
			if p := m.postByID[id]; p == nil || p.deleted {
				o.violate("%s: notification %s (%s) points at deleted activity %s", u.name, str(n, "id"), str(n, "type"), id)
			}
		}
	}
	return nil
}

// checkUnread: u's unread count on both faces, and through the second
// instance, which kept the count the mix read there (readElsewhere) and
// must have dropped it at every change since, is unread, what the list
// shows unread.
func (o *oracle) checkUnread(ctx context.Context, u *user, unread int64, rep *Report) error {
	ru, err := o.r.c.read(ctx, "/social/rest/notifications/@me/unread", u.token)
	if err != nil || ru.status != 200 {
		return fmt.Errorf("read %s's unread count: %v %v", u.name, err, ru.body)
	}
	rm, err := o.r.c.read(ctx, "/api/v1/notifications/unread_count", u.token)
	if err != nil || rm.status != 200 {
		return fmt.Errorf("read %s's Mastodon unread count: %v %v", u.name, err, rm.body)
	}
	ro, err := o.r.other.read(ctx, "/api/v1/notifications/unread_count", u.token)
	if err != nil || ro.status != 200 {
		return fmt.Errorf("read %s's Mastodon unread count on the second instance: %v %v", u.name, err, ro.body)
	}
	rep.Checked += 3
	if got := num(entry(ru), "unreadCount"); got != unread {
		o.violate("%s: unreadCount %d, the list shows %d unread", u.name, got, unread)
	}
	if got := num(rm.body, "count"); got != unread {
		o.violate("%s: Mastodon's unread_count %d, the list shows %d unread", u.name, got, unread)
	}
	if got := num(ro.body, "count"); got != unread {
		o.violate("%s: Mastodon's unread_count on the second instance %d, the list shows %d unread", u.name, got, unread)
	}
	return nil
}

// checkAppData: a living user's app data is what they wrote, a deleted
// user's is gone, read by someone else (anyone may read it).
func (o *oracle) checkAppData(ctx context.Context, rep *Report) error {
	m := o.m
	if len(o.people) == 0 {
		return nil
	}
	reader := o.people[0]
	for _, u := range m.users {
		for _, app := range apps {
			want := map[string]string{}
			if !m.deleted(u.id) {
				maps.Copy(want, m.appData[pair{u.id, app}])
			}
			ra, err := o.r.c.read(ctx, "/social/rest/appdata/"+u.id+"/@self/"+app, reader.token)
			if err != nil || ra.status != 200 {
				return fmt.Errorf("read %s's app data: %v %v", u.name, err, ra.body)
			}
			rep.Checked++
			if got := appDataOf(ra, u.id); !maps.Equal(got, want) {
				o.violate("%s: app data of %s is %v, want %v", u.name, app, got, want)
			}
		}
	}
	return nil
}

// checkGroups checks the groups' member counts.
func (o *oracle) checkGroups(ctx context.Context, rep *Report) error {
	m := o.m
	for _, g := range m.groups {
		var members int64
		for k, on := range m.isMember {
			if on && k.a == g.id && !m.deleted(k.b) {
				members++
			}
		}
		reader := o.groupReader(g)
		if reader == nil {
			continue
		}
		rg, err := o.r.c.read(ctx, "/social/rest/groups/@all/"+g.id, reader.token)
		if err != nil || rg.status != 200 {
			return fmt.Errorf("read group %s: %v %v", g.title, err, rg.body)
		}
		rep.Checked++
		if got := num(entry(rg), "membersCount"); got != members {
			o.violate("group %s: membersCount %d, want %d", g.title, got, members)
		}
	}
	return nil
}

// heirs finds who holds each group whose owner was deleted, under the
// model's lock: the group must have gone to one of its members, or, when
// none is left, be gone itself.
func (r *runner) heirs(ctx context.Context, rep *Report) (map[string]*user, error) {
	m := r.m
	out := map[string]*user{}
	for _, g := range m.groups {
		if !m.deleted(g.owner) {
			continue
		}
		var members []*user
		for _, u := range m.users {
			if !u.deleted && m.isMember[pair{g.id, u.id}] {
				members = append(members, u)
			}
		}
		rep.Checked++
		if len(members) == 0 {
			var anyone *user
			for _, u := range m.users {
				if !u.deleted && !m.suspended[u.id] {
					anyone = u
					break
				}
			}
			rg, err := r.c.read(ctx, "/social/rest/groups/@all/"+g.id, anyone.token)
			if err != nil {
				return nil, err
			}
			if rg.status != 404 {
				m.violations = append(m.violations, fmt.Sprintf("group %s: its owner is deleted and no member is left, yet it answers %d", g.title, rg.status))
			}
			continue
		}
		reader := members[0]
		for _, u := range members {
			if !m.suspended[u.id] {
				reader = u // one who may sign in
				break
			}
		}
		if m.suspended[reader.id] {
			continue // no member may sign in to read it
		}
		rg, err := r.c.read(ctx, "/social/rest/groups/@all/"+g.id, reader.token)
		if err != nil {
			return nil, err
		}
		owner := str(entry(rg), "ownerId")
		i := slices.IndexFunc(members, func(u *user) bool { return u.id == owner })
		if rg.status != 200 || i < 0 {
			m.violations = append(m.violations, fmt.Sprintf("group %s: its owner is deleted; answers %d with owner %q, not one of its members", g.title, rg.status, owner))
			continue
		}
		out[g.id] = members[i]
	}
	return out, nil
}
