package mastodon

import (
	"context"
	"socialstream/internal/activities"
	"socialstream/internal/oauth"
	"socialstream/internal/paging"
	"socialstream/internal/trends"

	"github.com/gin-gonic/gin"
)

// mastoRoutes adds the Mastodon face (docs/mastodon.md) to r.
func (s *Server) mastoRoutes(r *gin.Engine) {
	r.GET("/.well-known/oauth-authorization-server", s.oauthMetadata)
	r.GET("/avatars/original/missing.png", missingPicture)
	r.GET("/.well-known/nodeinfo", s.nodeInfoLinks)
	r.GET("/nodeinfo/2.0", s.nodeInfo)
	o := r.Group("/oauth")
	o.GET("/authorize", s.authorizePage)
	o.POST("/authorize", s.host.MeterAddress, s.authorize)
	o.POST("/token", s.masto(anyone, "", s.token))
	o.POST("/revoke", s.masto(anyone, "", s.revoke))

	v1 := r.Group("/api/v1")
	v2 := r.Group("/api/v2")
	v1.POST("/apps", s.masto(anyone, "", s.createApp))
	v1.GET("/apps/verify_credentials", s.masto(appOnly, "", s.verifyApp))
	v1.GET("/instance", s.masto(anyone, "", s.instanceV1))
	v2.GET("/instance", s.masto(anyone, "", s.instance))
	v1.GET("/custom_emojis", s.masto(anyone, "", empty))
	v1.GET("/preferences", s.masto(person, "read:accounts", s.preferences))

	// Accounts.
	v1.POST("/accounts", s.masto(appOnly, "write:accounts", s.mRegister))
	v1.GET("/accounts/verify_credentials", s.masto(person, "profile", s.verifyCredentials))
	v1.PATCH("/accounts/update_credentials", s.masto(person, "write:accounts", s.updateCredentials))
	v1.GET("/accounts/lookup", s.masto(anyone, "", s.lookupAccount))
	v1.GET("/accounts/relationships", s.masto(person, "read:follows", s.relationships))
	v1.GET("/accounts/familiar_followers", s.masto(person, "read:follows", s.familiarFollowers))
	v1.GET("/accounts/search", s.masto(person, "read:accounts", s.searchAccounts))
	v1.GET("/accounts/:id", s.masto(anyone, "", s.getAccount))
	v1.GET("/accounts/:id/statuses", s.masto(anyone, "", s.accountStatuses))
	v1.GET("/accounts/:id/followers", s.masto(anyone, "", s.peopleOf(s.followersOf)))
	v1.GET("/accounts/:id/following", s.masto(anyone, "", s.peopleOf(s.followingOf)))
	v1.GET("/accounts/:id/featured_tags", s.masto(anyone, "", s.accountFeaturedTags))
	v1.POST("/accounts/:id/follow", s.masto(person, "write:follows", s.relate(s.mFollow)))
	v1.POST("/accounts/:id/unfollow", s.masto(person, "write:follows", s.relate(s.mUnfollow)))
	v1.POST("/accounts/:id/block", s.masto(person, "write:blocks", s.relate(s.mBlock)))
	v1.POST("/accounts/:id/unblock", s.masto(person, "write:blocks", s.relate(s.mUnblock)))
	v1.POST("/accounts/:id/mute", s.masto(person, "write:mutes", s.relate(s.mMute)))
	v1.POST("/accounts/:id/unmute", s.masto(person, "write:mutes", s.relate(s.mUnmute)))
	v1.GET("/blocks", s.masto(person, "read:blocks", s.peopleOf(s.blocksOf)))
	v1.GET("/mutes", s.masto(person, "read:mutes", s.mutesList))
	v1.GET("/follow_requests", s.masto(person, "read:follows", s.peopleOf(s.requestsOf)))
	v1.POST("/follow_requests/:id/authorize", s.masto(person, "write:follows", s.relate(s.authorizeFollow)))
	v1.POST("/follow_requests/:id/reject", s.masto(person, "write:follows", s.relate(s.rejectFollow)))
	v2.GET("/search", s.masto(person, "read:search", s.search))

	// Statuses.
	v1.POST("/statuses", s.masto(person, "write:statuses", s.postStatus))
	v1.GET("/statuses/:id", s.masto(anyone, "", s.getStatus))
	v1.PUT("/statuses/:id", s.masto(person, "write:statuses", s.editStatus))
	v1.DELETE("/statuses/:id", s.masto(person, "write:statuses", s.deleteStatus))
	v1.GET("/statuses/:id/source", s.masto(person, "read:statuses", s.statusSource))
	v1.GET("/statuses/:id/history", s.masto(person, "read:statuses", s.statusHistory))
	v1.GET("/statuses/:id/context", s.masto(anyone, "", s.statusContext))
	v1.GET("/scheduled_statuses", s.masto(person, "read:statuses", s.scheduledStatuses))
	v1.GET("/scheduled_statuses/:id", s.masto(person, "read:statuses", s.getScheduledStatus))
	v1.PUT("/scheduled_statuses/:id", s.masto(person, "write:statuses", s.rescheduleStatus))
	v1.DELETE("/scheduled_statuses/:id", s.masto(person, "write:statuses", s.cancelScheduledStatus))
	v1.GET("/polls/:id", s.masto(anyone, "", s.getPoll))
	v1.POST("/polls/:id/votes", s.masto(person, "write:statuses", s.votePoll))
	v1.GET("/statuses/:id/favourited_by", s.masto(anyone, "", s.reactors(s.favouritedBy)))
	v1.GET("/statuses/:id/reblogged_by", s.masto(anyone, "", s.reactors(s.rebloggedBy)))
	v1.POST("/statuses/:id/favourite", s.masto(person, "write:favourites", s.react(s.favourite)))
	v1.POST("/statuses/:id/unfavourite", s.masto(person, "write:favourites", s.react(s.unfavourite)))
	v1.POST("/statuses/:id/reblog", s.masto(person, "write:statuses", s.react(s.reblog)))
	v1.POST("/statuses/:id/unreblog", s.masto(person, "write:statuses", s.react(s.unreblog)))
	v1.POST("/statuses/:id/bookmark", s.masto(person, "write:bookmarks", s.react(s.bookmark)))
	v1.POST("/statuses/:id/unbookmark", s.masto(person, "write:bookmarks", s.react(s.unbookmark)))
	v1.POST("/statuses/:id/pin", s.masto(person, "write:accounts", s.react(s.pin)))
	v1.POST("/statuses/:id/unpin", s.masto(person, "write:accounts", s.react(s.unpin)))
	v1.GET("/bookmarks", s.masto(person, "read:bookmarks", s.mKept(s.bookmarks.List)))
	v1.GET("/favourites", s.masto(person, "read:favourites", s.mKept(s.likes.Liked)))

	// Direct conversations.
	v1.GET("/conversations", s.masto(person, "read:statuses", s.conversationsList))
	v1.POST("/conversations/:id/read", s.masto(person, "write:conversations", s.readConversation))
	v1.DELETE("/conversations/:id", s.masto(person, "write:conversations", s.removeConversation))

	// Timelines.
	v1.GET("/timelines/home", s.masto(person, "read:statuses", s.homeTimeline))
	v1.GET("/timelines/public", s.masto(anyone, "", s.publicTimeline))
	v1.GET("/timelines/tag/:tag", s.masto(anyone, "", s.tagTimeline))
	v1.GET("/timelines/list/:id", s.masto(person, "read:lists", s.listTimeline))

	// Notifications.
	v1.GET("/notifications", s.masto(person, "read:notifications", s.mNotifications))
	v1.GET("/notifications/unread_count", s.masto(person, "read:notifications", s.unreadCount))
	v1.POST("/notifications/clear", s.masto(person, "write:notifications", s.clearNotifications))
	v1.POST("/notifications/:id/dismiss", s.masto(person, "write:notifications", s.dismissNotification))
	v1.GET("/notifications/:id", s.masto(person, "read:notifications", s.oneNotification))

	v2.GET("/notifications", s.masto(person, "read:notifications", s.groupedNotifications))

	// Web Push: one subscription per token.
	v1.POST("/push/subscription", s.masto(person, "push", s.subscribePush))
	v1.GET("/push/subscription", s.masto(person, "push", s.pushSubscription))
	v1.PUT("/push/subscription", s.masto(person, "push", s.updatePush))
	v1.DELETE("/push/subscription", s.masto(person, "push", s.unsubscribePush))

	// Lists, markers, filters, followed tags, reports, media.
	v1.GET("/lists", s.masto(person, "read:lists", s.lists))
	v1.POST("/lists", s.masto(person, "write:lists", s.createList))
	v1.GET("/lists/:id", s.masto(person, "read:lists", s.getList))
	v1.PUT("/lists/:id", s.masto(person, "write:lists", s.updateList))
	v1.DELETE("/lists/:id", s.masto(person, "write:lists", s.deleteList))
	v1.GET("/accounts/:id/lists", s.masto(person, "read:lists", s.accountLists))
	v1.GET("/lists/:id/accounts", s.masto(person, "read:lists", s.listAccounts))
	v1.POST("/lists/:id/accounts", s.masto(person, "write:lists", s.addToList))
	v1.DELETE("/lists/:id/accounts", s.masto(person, "write:lists", s.removeFromList))
	v1.GET("/markers", s.masto(person, "read:statuses", s.getMarkers))
	v1.POST("/markers", s.masto(person, "write:statuses", s.moveMarkers))
	v2.GET("/filters", s.masto(person, "read:filters", s.listFilters))
	v2.POST("/filters", s.masto(person, "write:filters", s.createFilter))
	v2.GET("/filters/:id", s.masto(person, "read:filters", s.getFilter))
	v2.PUT("/filters/:id", s.masto(person, "write:filters", s.updateFilter))
	v2.DELETE("/filters/:id", s.masto(person, "write:filters", s.deleteFilter))
	v1.GET("/filters", s.masto(person, "read:filters", empty)) // v1's, which apps read when v2's fails
	v1.GET("/followed_tags", s.masto(person, "read:follows", s.followedTags))
	v1.GET("/featured_tags", s.masto(person, "read:accounts", s.featuredTags))
	v1.POST("/featured_tags", s.masto(person, "write:accounts", s.featureTag))
	v1.DELETE("/featured_tags/:id", s.masto(person, "write:accounts", s.unfeatureTag))
	v1.GET("/featured_tags/suggestions", s.masto(person, "read:accounts", s.featuredSuggestions))
	v1.GET("/tags/:name", s.masto(anyone, "", s.getTag))
	v1.POST("/tags/:name/follow", s.masto(person, "write:follows", s.followTag))
	v1.POST("/tags/:name/unfollow", s.masto(person, "write:follows", s.unfollowTag))
	v1.POST("/reports", s.masto(person, "write:reports", s.report))
	v1.GET("/domain_blocks", s.masto(person, "read:blocks", s.domainBlocks))
	v1.POST("/domain_blocks", s.masto(person, "write:blocks", s.blockDomain))
	v1.DELETE("/domain_blocks", s.masto(person, "write:blocks", s.unblockDomain))
	v2.POST("/media", s.masto(person, "write:media", s.uploadMedia))
	v1.POST("/media", s.masto(person, "write:media", s.uploadMedia))
	v1.GET("/media/:id", s.masto(person, "write:media", s.getMedia))
	v1.PUT("/media/:id", s.masto(person, "write:media", s.updateMedia))

	// What Mastodon has and the service does not: as a server without it.
	v1.GET("/trends", s.masto(anyone, "", s.trendingTags))
	v1.GET("/trends/tags", s.masto(anyone, "", s.trendingTags))
	v1.GET("/trends/statuses", s.masto(anyone, "", s.trendingStatuses))
	v1.GET("/trends/links", s.masto(anyone, "", s.trendingLinks))
	for _, k := range trends.Kinds {
		v1.GET("/admin/trends/"+string(k), s.masto(person, oauth.AdminRead, s.adminTrends(k)))
		v1.POST("/admin/trends/"+string(k)+"/:id/approve", s.masto(person, oauth.AdminWrite, s.reviewTrend(k, true)))
		v1.POST("/admin/trends/"+string(k)+"/:id/reject", s.masto(person, oauth.AdminWrite, s.reviewTrend(k, false)))
	}
	for _, p := range []string{"/announcements",
		"/endorsements", "/suggestions", "/directory"} {
		v1.GET(p, s.masto(anyone, "", empty))
	}
	v2.GET("/suggestions", s.masto(anyone, "", empty))
	v1.GET("/streaming/*any", s.masto(anyone, "", notHere))
	v1.GET("/statuses/:id/card", s.masto(anyone, "", notHere))
}

// mKept is GET /api/v1/bookmarks and /api/v1/favourites: a page of what
// the caller keeps, newest first, by list.
func (s *Server) mKept(list func(context.Context, string, paging.Request) ([]activities.View, string, error)) func(*mreq) (any, error) {
	return func(m *mreq) (any, error) {
		page, err := s.cursorPage(m, 20, 40)
		if err != nil {
			return nil, err
		}
		vs, next, err := list(m.ctx, m.caller, page)
		if err != nil {
			return nil, err
		}
		return s.statuses(s.origin(m.c), vs), s.nextCursor(m, next)
	}
}
