package activities

import (
	"slices"
	"strconv"

	"cloud.google.com/go/datastore"

	"socialstream/internal/ids"
	"socialstream/internal/order"
)

// The places of an activity (package order). An Activity's feeds property
// holds a value per feed whose query finds it, each its feed's prefix and
// its seq; the built-in index of feeds serves every feed's query, a range
// of one prefix read newest first, and seq itself is in no index. The
// prefixes:
//
//   - u:{user} and u:{user}:{app}: the author's own page (@self), read by
//     the author, of all apps or one;
//   - v:{user}:{audience} and v:{user}:{app}:{audience}: the page read by
//     someone else, for each audience of visibleTo (public, followers);
//   - a:{shard} and a:{shard}:{app}: @all, of public activities, split in
//     PublicShards by the seq, so that posts spread over that many ranges;
//   - m:{user}: @mentions, for each person it mentions;
//   - g:{group}: a group's feed, for each group copy (groupcopies.go);
//   - t:{tag}: a tag's feed, for each tag of a public activity;
//   - ut:{user}:{tag}: the same, of its author's alone (what their
//     featured hashtags count);
//   - c:{user}: a celebrity's posts that reach all their followers
//     (Activity.Celebrity), which their followers' homes merge in.
//
// An Audience chunk's home property holds {follower}/{seq} for each id it
// holds: the home feed is a range of it, and an unfollow finds the chunks
// of an author's activities that hold a follower by a range of it beside
// userId (the composite index (userId, home)). Its trim property,
// {shard}/{seq}, lets the trim job find the chunks past the home feed's
// edge in TrimShards ranges.

// PublicShards is how many ranges @all is split in. Each takes about 500
// posts a second (Firestore's guidance for a range that grows at one
// end), so @all takes about 2,000; a page of it reads one query a shard.
// It may grow, never shrink: a page reads shards 0..PublicShards-1, which
// must hold every shard a post was placed in.
const PublicShards = 4

// TrimShards is how many ranges the trim property is split in.
const TrimShards = 16

func selfFeed(user, app string) string {
	if app != "" {
		return "u:" + user + ":" + app
	}
	return "u:" + user
}

func pageFeed(user, app, audience string) string {
	if app != "" {
		return "v:" + user + ":" + app + ":" + audience
	}
	return "v:" + user + ":" + audience
}

func publicFeed(shard int, app string) string {
	s := "a:" + strconv.Itoa(shard)
	if app != "" {
		s += ":" + app
	}
	return s
}

func mentionFeed(user string) string { return "m:" + user }
func groupFeed(group string) string  { return "g:" + group }
func tagFeed(tag string) string      { return "t:" + tag }

// authorTagFeed is the place of an author's public posts with a tag
// (their featured hashtag's count and last use).
func authorTagFeed(author, tag string) string { return "ut:" + author + ":" + tag }

func trimShard(seq int64) string { return strconv.Itoa(order.Shard(seq, TrimShards)) }

// places returns the values of a's feeds property.
func (a *Activity) places() []string {
	var out []string
	add := func(prefix string) { out = append(out, order.Value(prefix, a.Seq)) }
	add(selfFeed(a.UserID, ""))
	if a.AppID != "" {
		add(selfFeed(a.UserID, a.AppID))
	}
	for _, v := range a.VisibleTo {
		add(pageFeed(a.UserID, "", v))
		if a.AppID != "" {
			add(pageFeed(a.UserID, a.AppID, v))
		}
	}
	if a.isPublic() {
		shard := order.Shard(a.Seq, PublicShards)
		add(publicFeed(shard, ""))
		if a.AppID != "" {
			add(publicFeed(shard, a.AppID))
		}
		for _, t := range a.Tags {
			add(tagFeed(t))
			add(authorTagFeed(a.UserID, t))
		}
	}
	if a.Celebrity {
		add(celebrityFeed(a.UserID))
	}
	for _, m := range a.MentionIDs {
		add(mentionFeed(m))
	}
	for _, g := range a.GroupIDs {
		add(groupFeed(g))
	}
	return out
}

const (
	feedsProp = "feeds"
	homeProp  = "home"
	trimProp  = "trim"
)

// Load loads an activity.
func (a *Activity) Load(ps []datastore.Property) error {
	return order.Load(a, ps, feedsProp, termsProp, foundProp)
}

// Save saves an activity with its places.
func (a *Activity) Save() ([]datastore.Property, error) {
	return order.Save(a, append([]datastore.Property{{Name: feedsProp, Value: list(a.places())}}, a.searchProperties()...)...)
}

// Load loads an audience chunk: its followers are the prefixes of its
// home places.
func (a *Audience) Load(ps []datastore.Property) error {
	a.FollowerIDs = a.FollowerIDs[:0]
	var keep []datastore.Property
	for _, p := range ps {
		switch p.Name {
		case homeProp:
			for _, v := range values(p.Value) {
				if prefix, _, ok := order.Parse(v); ok && !slices.Contains(a.FollowerIDs, prefix) {
					a.FollowerIDs = append(a.FollowerIDs, prefix)
				}
			}
		case trimProp:
		default:
			keep = append(keep, p)
		}
	}
	return datastore.LoadStruct(a, keep)
}

// Save saves an audience chunk with its places.
func (a *Audience) Save() ([]datastore.Property, error) {
	home := make([]string, len(a.FollowerIDs))
	for i, id := range a.FollowerIDs {
		home[i] = homePlace(id, a.Seq)
	}
	return order.Save(a,
		datastore.Property{Name: homeProp, Value: list(home)},
		datastore.Property{Name: trimProp, Value: order.Value(trimShard(a.Seq), a.Seq)})
}

// list returns ss as a list property's value.
func list(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// values returns the strings of a list property's value (or of a single
// string).
func values(v any) []string {
	switch v := v.(type) {
	case string:
		return []string{v}
	case []any:
		out := make([]string, 0, len(v))
		for _, x := range v {
			if s, ok := x.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

// homePlace is where follower's copy of an activity of seq is.
func homePlace(follower string, seq int64) string { return order.Value(follower, seq) }

// placeOfActivity is where an activity's key puts it in a feed.
func placeOfActivity(k *datastore.Key, _ *Activity) order.Place {
	seq, _ := ids.Parse(k.Name)
	return order.Place{Seq: seq}
}

// placeOfChunk is where an audience chunk's key puts it in a home feed.
func placeOfChunk(k *datastore.Key, _ *Audience) order.Place {
	if k.Parent == nil {
		return order.Place{}
	}
	seq, _ := ids.Parse(k.Parent.Name)
	return order.Place{Seq: seq}
}

// feedQueries returns the queries of one page of a feed of kind: a range
// of prop for each prefix.
func (s *Service) feedQueries(kind, prop string, prefixes []string, w window, from order.Place) []*datastore.Query {
	qs := make([]*datastore.Query, 0, len(prefixes))
	for _, p := range prefixes {
		if w.up {
			qs = append(qs, order.RangeUp(s.db.Query(kind), prop, p, w.since))
		} else {
			qs = append(qs, order.Range(s.db.Query(kind), prop, p, w.since, from))
		}
	}
	return qs
}
