package api

// Serving pictures: a post's picture by its signed link, a person's
// avatar and header by their card, each in the form the client takes
// (a thumbnail in WebP where its Accept header takes that), tagged so
// that a device holding one is answered 304.

import (
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"socialstream/internal/media"
)

// servePicture streams a picture whose link checks out: no token, no
// Datastore read (the link was handed out with what the reader could
// see; see media.Links). The answer is public for media.CacheFor, or the
// rest of the link's life if less: the link is the reader's permission,
// as a signed Cloud Storage URL is, so a shared cache (App Engine's edge
// cache, a CDN) may answer whoever holds the same link, and an instance
// serves each link's bytes once per cache and hour rather than once per
// view (docs/choices.md); a deleted picture leaves the caches within it.
func (s *Server) servePicture(c *gin.Context) {
	ctx := c.Request.Context()
	id, variant := c.Param("id"), c.Param("variant")
	c.Header("Cache-Control", "no-store") // a refusal is no cache's to keep
	left, err := s.media.Links.Check(ctx, id, variant, c.Query("e"), c.Query("s"))
	if err != nil {
		s.fail(c, err)
		return
	}
	cache := fmt.Sprintf("public, max-age=%d", int(min(left, media.CacheFor).Seconds()))
	if s.notModified(c, id, variant, cache) {
		return
	}
	s.stream(c, id, variant, formsOf(variant, c.GetHeader("Accept")), cache)
}

// notModified answers 304 (or the error) and reports true where the
// request's If-None-Match names a form of picture id's variant that is
// still stored. A picture's bytes never change (another picture is
// another id), so each form's tag is its name: a cache or device that
// holds one asks again with its tag and is answered 304, with no bytes,
// while it is still stored (a deleted one still leaves every cache
// within its max-age). The form it holds is good for it whatever else it
// now accepts.
func (s *Server) notModified(c *gin.Context, id, variant, cache string) bool {
	f, ok := heldForm(c.GetHeader("If-None-Match"), id, variant)
	if !ok {
		return false
	}
	stored, err := s.media.Stored(c.Request.Context(), id, f)
	switch {
	case err != nil:
		s.fail(c, err)
		return true
	case !stored:
		return false
	}
	h := c.Writer.Header()
	h.Set("Cache-Control", cache)
	h.Set("ETag", formTag(id, variant, f))
	if variant == media.VariantThumb {
		h.Set("Vary", "Accept")
	}
	c.Status(http.StatusNotModified)
	return true
}

// formsOf are the forms of a picture's variant to send, the first the
// item has: a thumbnail in WebP where the Accept header takes WebP at
// least as gladly as the thumbnail's own type (acceptsWebP).
func formsOf(variant, accept string) []media.Form {
	if variant == media.VariantThumb && !acceptsWebP(accept) {
		return []media.Form{media.FormThumb}
	}
	return variantForms(variant)
}

// variantForms are every form of an item a link's variant may be sent
// in, the one for WebP first.
func variantForms(variant string) []media.Form {
	if variant == media.VariantThumb {
		return []media.Form{media.FormThumbWebP, media.FormThumb}
	}
	return []media.Form{media.FormImage}
}

// formTag is the tag of an item's form: the one a link's variant names
// it by, ".webp" after it for the thumbnail in WebP.
func formTag(id, variant string, f media.Form) string {
	if f == media.FormThumbWebP {
		return `"` + id + "." + variant + `.webp"`
	}
	return `"` + id + "." + variant + `"`
}

// heldForm is the form of the variant an If-None-Match header names by
// its tag, if any.
func heldForm(header, id, variant string) (media.Form, bool) {
	if header == "" {
		return 0, false
	}
	for _, f := range variantForms(variant) {
		if matches(header, formTag(id, variant, f)) {
			return f, true
		}
	}
	return 0, false
}

// acceptsWebP reports whether an Accept header takes image/webp, by the
// most specific range that names it (image/webp, image/*, */*), at a
// quality above 0 and at least that of JPEG and PNG, a thumbnail's own
// types (RFC 9110, section 12.5.1). A client that sends no Accept header
// says nothing of what it decodes, and is sent the thumbnail's own type;
// one that sends */* takes any, and is sent WebP, as browsers and the
// platforms' image libraries have all read it for years.
func acceptsWebP(accept string) bool {
	if strings.TrimSpace(accept) == "" {
		return false
	}
	webp := acceptQuality(accept, "image/webp")
	return webp > 0 && webp >= max(acceptQuality(accept, "image/jpeg"), acceptQuality(accept, "image/png"))
}

// acceptQuality is the quality an Accept header gives a media type: that
// of the most specific range that matches it, 0 if none does.
func acceptQuality(accept, mediaType string) float64 {
	kind, _, _ := strings.Cut(mediaType, "/")
	best, q := -1, 0.0
	for _, r := range strings.Split(accept, ",") {
		name, params, _ := strings.Cut(r, ";")
		name = strings.ToLower(strings.TrimSpace(name))
		rank := -1
		switch name {
		case mediaType:
			rank = 2
		case kind + "/*":
			rank = 1
		case "*/*":
			rank = 0
		}
		if rank <= best {
			continue
		}
		best, q = rank, 1
		for _, p := range strings.Split(params, ";") {
			k, v, _ := strings.Cut(p, "=")
			if strings.EqualFold(strings.TrimSpace(k), "q") {
				if f, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil && f >= 0 && f <= 1 {
					q = f
				} else {
					q = 0 // a quality that is none: the range is taken as refused
				}
			}
		}
	}
	return q
}

// matches reports whether an If-None-Match header names tag (or is *).
func matches(header, tag string) bool {
	for _, t := range strings.Split(header, ",") {
		t = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(t), "W/"))
		if t == tag || t == "*" {
			return true
		}
	}
	return false
}

// ProfilePictureAge is how long a cache may keep a profile picture: its
// link names the person and the picture (accounts.PicturePath), so a new
// picture is a new link at once, and a suspension hides the picture from
// every cache within this.
const ProfilePictureAge = 5 * time.Minute

// serveProfilePicture streams a person's avatar or header, to anyone who
// may see the person (policy.SeePicture): one read, of their card. It
// needs no token, as an <img> element sends none. Its tag is the
// picture's, as a post's picture's is: an app that shows the avatar on
// every item asks again each ProfilePictureAge and is answered 304.
func (s *Server) serveProfilePicture(c *gin.Context) {
	ctx := c.Request.Context()
	c.Header("Cache-Control", "no-store")
	variant := c.Param("variant")
	if variant != media.VariantImage && variant != media.VariantThumb {
		s.fail(c, errNoRoute)
		return
	}
	id, err := s.media.ProfilePicture(ctx, c.Param("userId"), c.Param("which"))
	if err != nil {
		s.fail(c, err)
		return
	}
	cache := fmt.Sprintf("public, max-age=%d", int(ProfilePictureAge.Seconds()))
	if s.notModified(c, id, variant, cache) {
		return
	}
	s.stream(c, id, variant, formsOf(variant, c.GetHeader("Accept")), cache)
}

// stream sends the first of picture id's forms it has, as caches may
// keep it, with its tag; an answer that could have been another form
// says it varies by Accept.
func (s *Server) stream(c *gin.Context, id, variant string, forms []media.Form, cache string) {
	ctx := c.Request.Context()
	r, f, err := s.media.Open(ctx, id, forms...)
	if err != nil {
		s.fail(c, err)
		return
	}
	defer r.Close()
	h := c.Writer.Header()
	h.Set("Content-Type", r.Attrs.ContentType)
	h.Set("Content-Length", strconv.FormatInt(r.Attrs.Size, 10))
	h.Set("Cache-Control", cache)
	h.Set("ETag", formTag(id, variant, f))
	if variant == media.VariantThumb {
		h.Set("Vary", "Accept")
	}
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Security-Policy", "default-src 'none'; sandbox")
	h.Set("Cross-Origin-Resource-Policy", "cross-origin")
	c.Status(http.StatusOK)
	if c.Request.Method == http.MethodHead {
		return
	}
	if _, err := io.Copy(c.Writer, r); err != nil {
		s.log.WarnContext(ctx, "picture not sent whole", "id", id, "err", err)
	}
}
