package app

import (
	"log/slog"
	"net/http"

	"socialstream/internal/accounts"
	"socialstream/internal/activities"
	"socialstream/internal/activitypub"
	"socialstream/internal/appdata"
	"socialstream/internal/bookmarks"
	"socialstream/internal/cards"
	"socialstream/internal/comments"
	"socialstream/internal/conversations"
	"socialstream/internal/cursor"
	"socialstream/internal/federation"
	"socialstream/internal/filters"
	"socialstream/internal/graph"
	"socialstream/internal/groups"
	"socialstream/internal/ids"
	"socialstream/internal/lifecycle"
	"socialstream/internal/likes"
	"socialstream/internal/markers"
	"socialstream/internal/mastodon"
	"socialstream/internal/media"
	"socialstream/internal/moderation"
	"socialstream/internal/mutes"
	"socialstream/internal/notifications"
	"socialstream/internal/oauth"
	"socialstream/internal/outbox"
	"socialstream/internal/polls"
	"socialstream/internal/push"
	"socialstream/internal/queue"
	"socialstream/internal/rebuild"
	"socialstream/internal/scheduled"
	"socialstream/internal/store"
	"socialstream/internal/tags"
	"socialstream/internal/trends"
)

// NewServices builds the services over db and q, each by its
// constructor alone, with the owners below it: an owner below reaches one
// above through a small interface of its own (notifications.Activities,
// activities.Likes and Forgetter, media.Activities), which the owner
// above's Records implement, wired here. A post finds the people of
// other servers it mentions through the federation's Directory, built
// first (a Service of no dependencies). What tells other servers is a
// job the domain enqueues (package outbox, when fcfg federates), which
// package federation, built after everything its inbox acts through,
// runs; the erasure, built last, is told to other servers by it.
func NewServices(db *store.DB, gen *ids.Generator, acc *accounts.Service, q queue.Queue, log *slog.Logger, rcfg rebuild.Config, pics Pictures, pcfg Push,
	fcfg federation.Config, tcfg trends.Config) (*Services, error) {
	s := &Services{Accounts: acc, Cursors: cursor.New(db), Keys: federation.NewKeys(db)}
	var ob *outbox.Jobs // nil: the deployment does not federate
	var finder activities.Finder
	if fcfg.On() {
		ob = outbox.New(q, gen)
		finder = federation.NewDirectory(fcfg, db, gen, s.Keys, log)
	}
	var err error
	var links *media.Links
	if pics.Client != nil {
		links = media.NewLinks(db, pics.PublicURL)
		if s.Media, err = media.New(db, gen, acc, pics.Client, q, links, media.Config{
			Bucket: pics.Bucket, Activities: activities.Records{DB: db}, Memory: pics.Memory, Client: pics.Elsewhere, Outbox: ob,
			Unlocking: graph.Unlocking(q),
		}); err != nil {
			return nil, err
		}
	}
	var pictures activities.Forgetter
	if s.Media != nil {
		pictures = s.Media
	}
	previews, err := newPreviews(db, pics.Previews, s.Media)
	if err != nil {
		return nil, err
	}
	if s.Notifications, err = notifications.New(db, gen, acc, q, notifications.Config{
		Activities: activities.Records{DB: db}, Graph: graph.Records{}, GiveUpAfter: rcfg.GiveUpAfter,
		PruneWindow: rcfg.PruneWindow, Push: push.NewRinger(db, gen, q),
	}); err != nil {
		return nil, err
	}
	rcfg.Notices = s.Notifications
	if s.Rebuild, err = rebuild.New(db, q, log, rcfg); err != nil {
		return nil, err
	}
	if s.Graph, err = graph.New(db, gen, s.Notifications, s.Rebuild, q, ob); err != nil {
		return nil, err
	}
	if s.Groups, err = groups.New(db, gen, s.Notifications, s.Rebuild); err != nil {
		return nil, err
	}
	if s.Conversations, err = conversations.New(db); err != nil {
		return nil, err
	}
	if s.Trends, err = trends.New(db, tcfg); err != nil {
		return nil, err
	}
	if s.Activities, err = activities.New(db, gen, acc, s.Notifications, q, activities.Config{
		GiveUpAfter: rcfg.GiveUpAfter, HomeRetention: rcfg.HomeRetention, CelebrityFollowers: rcfg.CelebrityFollowers,
		Likes:     likes.Records{DB: db},
		Bookmarks: bookmarks.Records{DB: db},
		Forget:    []activities.Forgetter{likes.Records{DB: db}, comments.Records{DB: db}, bookmarks.Records{DB: db}, s.Notifications, s.Conversations, trends.Records{DB: db}},
		Links:     links, Pictures: pictures, Polls: polls.Records{DB: db}, Publisher: ob, Finder: finder, Cards: previews,
		Trends: s.Trends,
	}); err != nil {
		return nil, err
	}
	if s.Polls, err = polls.NewCloser(db, gen, s.Notifications, activities.Records{DB: db}); err != nil {
		return nil, err
	}
	if s.Scheduled, err = scheduled.New(db, gen, q, s.Activities, scheduled.Config{}); err != nil {
		return nil, err
	}
	if s.Comments, err = comments.New(db, gen, acc, s.Activities, s.Notifications); err != nil {
		return nil, err
	}
	if s.Likes, err = likes.New(db, s.Activities, s.Notifications, ob); err != nil {
		return nil, err
	}
	if s.Bookmarks, err = bookmarks.New(db, gen, s.Activities); err != nil {
		return nil, err
	}
	if err := s.newPersonal(db, gen, acc); err != nil {
		return nil, err
	}
	if s.Moderation, err = moderation.New(db, gen, acc, s.Activities, s.Notifications, q, ob); err != nil {
		return nil, err
	}
	if s.Push, err = push.New(db, gen, acc, q, push.NewKeys(db), push.Config{
		AllowLoopback: pcfg.AllowLoopback, Render: mastodon.PushPayload, GiveUpAfter: rcfg.GiveUpAfter,
		Notices: s.Notifications, Activities: s.Activities, Graph: graph.Records{},
	}); err != nil {
		return nil, err
	}
	fd := federation.Deps{Graph: s.Graph, Follows: graph.Records{}, Activities: s.Activities, Reposts: s.Activities, Likes: s.Likes,
		Liked: likes.Records{DB: db}, Accounts: acc, Reporter: s.Moderation,
		Render: federation.Renderers{Post: activitypub.Render(fcfg), Actor: activitypub.RenderActor(fcfg)}}
	if s.Media != nil {
		fd.Pictures = s.Media
	}
	s.Federation = federation.New(fcfg, db, gen, s.Keys, q, fd)
	var farewell lifecycle.Farewell
	if fcfg.On() {
		farewell = s.Federation
	}
	if s.Lifecycle, err = lifecycle.New(db, lifecycle.Services{Accounts: acc, Graph: s.Graph, Groups: s.Groups,
		Activities: s.Activities, Comments: s.Comments, Notifications: s.Notifications, Media: s.Media, Push: s.Push, Keys: s.Keys,
		Farewell: farewell}, q,
		lifecycle.Config{GiveUpAfter: rcfg.GiveUpAfter}); err != nil {
		return nil, err
	}
	return s, nil
}

// newPersonal builds the services of what a person keeps for themself
// (their sessions, app data, mutes, filters, read positions, followed
// tags), which depend on nothing above notifications.
func (s *Services) newPersonal(db *store.DB, gen *ids.Generator, acc *accounts.Service) error {
	var err error
	if s.OAuth, err = oauth.New(db, gen, acc); err != nil {
		return err
	}
	if s.AppData, err = appdata.New(db); err != nil {
		return err
	}
	if s.Mutes, err = mutes.New(db, acc); err != nil {
		return err
	}
	if s.Filters, err = filters.New(db); err != nil {
		return err
	}
	if s.Markers, err = markers.New(db, s.Notifications); err != nil {
		return err
	}
	s.Tags, err = tags.New(db)
	return err
}

// newPreviews builds the link previews' cards, fetched by client (nil:
// none), their pictures kept by m (nil: none).
func newPreviews(db *store.DB, client *http.Client, m *media.Service) (*cards.Service, error) {
	if client == nil {
		return nil, nil
	}
	cfg := cards.Config{Client: client}
	if m != nil {
		cfg.Pictures = m
	}
	return cards.New(db, cfg)
}
