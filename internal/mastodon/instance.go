package mastodon

import (
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"socialstream/internal/activities"
	"socialstream/internal/media"
	"socialstream/internal/polls"
)

// The instance, as apps read it, and what Mastodon has and the service
// does not.

// instance is GET /api/v2/instance: what apps read of a server.
func (s *Server) instance(m *mreq) (any, error) {
	origin := s.origin(m.c)
	vapid, err := s.vapidKey(m)
	if err != nil {
		return nil, err
	}
	return gin.H{
		"domain":      s.domain(m.c),
		"title":       "socialstream",
		"version":     mastoVersion,
		"source_url":  "",
		"description": "An activity stream service on App Engine.",
		"usage":       gin.H{"users": gin.H{"active_month": 0}},
		"thumbnail":   gin.H{"url": origin + missingAvatar},
		"languages":   []string{"en"},
		"configuration": gin.H{
			"urls":     gin.H{"streaming": nil, "status": nil},
			"vapid":    gin.H{"public_key": vapid},
			"accounts": gin.H{"max_featured_tags": 0, "max_pinned_statuses": activities.MaxPins},
			"statuses": gin.H{"max_characters": maxStatus, "max_media_attachments": media.MaxPerActivity, "characters_reserved_per_url": 23},
			"media_attachments": gin.H{"supported_mime_types": []string{media.JPEG, media.PNG, media.GIF, media.WebP}, "image_size_limit": media.MaxBytes,
				"image_matrix_limit": media.KeptPixels, "video_size_limit": 0, "video_frame_rate_limit": 0, "video_matrix_limit": 0,
				"description_limit": media.MaxDescription},
			"polls":            pollLimits,
			"translation":      gin.H{"enabled": false},
			"timelines_access": gin.H{"live_feeds": gin.H{"local": "public", "remote": "disabled"}, "hashtag_feeds": gin.H{"local": "public", "remote": "disabled"}},
		},
		"registrations": gin.H{"enabled": true, "approval_required": false, "message": nil},
		"api_versions":  gin.H{"mastodon": 2},
		"contact":       gin.H{"email": "", "account": nil},
		"rules":         []any{},
	}, nil
}

// domain is the domain the instance answers as: the one it federates
// as, or the request's host (origin's).
func (s *Server) domain(c *gin.Context) string {
	if s.d.Federation.On() {
		return s.d.Federation.Domain
	}
	return s.originHost(c)
}

// mastoVersion is the Mastodon version the face answers as: apps read
// it to know what a server offers.
const mastoVersion = "4.3.0 (compatible; socialstream)"

// instanceV1 is GET /api/v1/instance, the older shape.
func (s *Server) instanceV1(m *mreq) (any, error) {
	return gin.H{
		"uri": s.domain(m.c), "title": "socialstream", "short_description": "", "description": "An activity stream service on App Engine.",
		"email": "", "version": mastoVersion, "urls": gin.H{"streaming_api": nil}, "stats": gin.H{"user_count": 0, "status_count": 0, "domain_count": 1},
		"thumbnail": nil, "languages": []string{"en"}, "registrations": true, "approval_required": false, "invites_enabled": false,
		"configuration": gin.H{
			"statuses":          gin.H{"max_characters": maxStatus, "max_media_attachments": media.MaxPerActivity, "characters_reserved_per_url": 23},
			"media_attachments": gin.H{"supported_mime_types": []string{media.JPEG, media.PNG, media.GIF, media.WebP}, "image_size_limit": media.MaxBytes, "image_matrix_limit": media.KeptPixels, "video_size_limit": 0, "video_frame_rate_limit": 0, "video_matrix_limit": 0},
			"polls":             pollLimits,
		},
		"contact_account": nil, "rules": []any{},
	}, nil
}

// preferences is GET /api/v1/preferences.
func (s *Server) preferences(*mreq) (any, error) {
	return gin.H{"posting:default:visibility": "public", "posting:default:sensitive": false, "posting:default:language": nil,
		"reading:expand:media": "default", "reading:expand:spoilers": false}, nil
}

// empty answers what Mastodon has and the service does not, as a server
// without any of it answers: an empty list.
func empty(*mreq) (any, error) { return []any{}, nil }

// notHere answers a method of what the service does not have by
// Mastodon's 404.
func notHere(*mreq) (any, error) { return nil, errMGone }

// missingPicture serves the picture of an account without one.
func missingPicture(c *gin.Context) {
	c.Header("Cache-Control", "public, max-age=86400")
	c.Data(http.StatusOK, "image/png", missingPNG)
}

// missingPNG is a 1x1 grey PNG.
var missingPNG = []byte{
	0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52,
	0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x00, 0x00, 0x00, 0x00, 0x3a, 0x7e, 0x9b,
	0x55, 0x00, 0x00, 0x00, 0x0a, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9c, 0x63, 0x68, 0x00, 0x00, 0x00,
	0x82, 0x00, 0x81, 0x4c, 0x17, 0xd7, 0xdf, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4e, 0x44, 0xae,
	0x42, 0x60, 0x82,
}

// nodeInfoSchema names NodeInfo 2.0, which /nodeinfo/2.0 answers.
const nodeInfoSchema = "http://nodeinfo.diaspora.software/ns/schema/2.0"

// nodeInfoLinks is GET /.well-known/nodeinfo: where the NodeInfo is.
func (s *Server) nodeInfoLinks(c *gin.Context) {
	c.JSON(http.StatusOK, gin.H{"links": []gin.H{{"rel": nodeInfoSchema, "href": s.origin(c) + "/nodeinfo/2.0"}}})
}

// nodeInfo is GET /nodeinfo/2.0: what the server is, after NodeInfo 2.0.
// It counts no one (a count would be reads on every crawler's visit),
// and names ActivityPub when the deployment federates.
func (s *Server) nodeInfo(c *gin.Context) {
	protocols := []string{}
	if s.d.Federation.On() {
		protocols = append(protocols, "activitypub")
	}
	c.Header("Content-Type", `application/json; profile="`+nodeInfoSchema+`#"`)
	c.JSON(http.StatusOK, gin.H{
		"version":           "2.0",
		"software":          gin.H{"name": "socialstream", "version": "1.0.0"},
		"protocols":         protocols,
		"services":          gin.H{"inbound": []string{}, "outbound": []string{}},
		"openRegistrations": true,
		"usage":             gin.H{"users": gin.H{}},
		"metadata":          gin.H{},
	})
}

// pollLimits are the polls' limits the instance answer states, which a
// post's are held to (package polls).
var pollLimits = gin.H{"max_options": polls.MaxOptions, "max_characters_per_option": polls.MaxOptionChars,
	"min_expiration": int(polls.MinExpiry / time.Second), "max_expiration": int(polls.MaxExpiry / time.Second)}
