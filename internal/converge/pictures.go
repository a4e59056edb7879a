package converge

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"mime/multipart"
	"net/http"
	"strconv"
	"sync"
	"time"

	"socialstream/internal/ids"
	"socialstream/internal/media"
)

// Pictures made safe by their job: a share of the mix's pictures are
// uploaded as Mastodon apps upload them (POST /api/v2/media), large
// enough to be answered 202 and made safe by the pictures queue's job,
// under the tasks emulator's faults (late, twice, out of order). The
// uploader waits for it as an app does (GET /api/v1/media/:id, 206 until
// then) and posts it once made safe; the oracle holds every such picture
// made safe once the queues are empty.

// laterUpload is a picture the mix uploaded by version 2 and did not see
// made safe while it waited.
type laterUpload struct {
	u        *user
	id, alt  string // its Mastodon id; its alt text
	uploaded time.Time
}

// largePNG is the picture the mix uploads by version 2: more pixels than
// a picture made safe on the request may have (media.InlinePixels); made
// once, when the mix first uploads one.
var largePNG = sync.OnceValue(func() []byte {
	var buf bytes.Buffer
	img := image.NewNRGBA(image.Rect(0, 0, largeWidth, 1300))
	for y := range 1300 {
		for x := range largeWidth {
			img.SetNRGBA(x, y, color.NRGBA{R: uint8(x / 8), G: uint8(y / 8), B: 90, A: 255})
		}
	}
	if err := png.Encode(&buf, img); err != nil {
		panic(err)
	}
	return buf.Bytes()
})

const largeWidth = 1600

// keptWide reports whether orig, a picture's size as made safe, is the
// large picture's kept: scaled down to within media.KeptPixels, which it
// has a few thousand more than, its shape kept.
func keptWide(orig map[string]any) bool {
	w, h := num(orig, "width"), num(orig, "height")
	return w <= largeWidth && w >= largeWidth*99/100 && w*h <= media.KeptPixels && h*largeWidth/w >= 1290 && h*largeWidth/w <= 1310
}

// laterWait is how long an uploader waits for its picture to be made
// safe before it posts without it (the oracle then checks it later).
const laterWait = 10 * time.Second

// uploadLater uploads a picture as u by version 2 and, once its job has
// made it safe, returns its id as the REST face names it; "" if it was
// not (yet) made safe or not taken.
func (r *runner) uploadLater(ctx context.Context, u *user, alt string) (string, error) {
	var body bytes.Buffer
	w := multipart.NewWriter(&body)
	f, err := w.CreateFormFile("file", "large.png")
	if err != nil {
		return "", err
	}
	f.Write(largePNG())
	w.WriteField("description", alt)
	w.Close()
	rep, err := r.c.send(ctx, http.MethodPost, "/api/v2/media", u.token, &body, w.FormDataContentType())
	ok := err == nil && rep.status == http.StatusAccepted
	switch {
	case err != nil, rep.status == http.StatusServiceUnavailable:
	case !ok && rep.status != http.StatusUnauthorized && rep.status != http.StatusForbidden:
		r.m.violate(fmt.Sprintf("upload by version 2: answered %d %v", rep.status, rep.body))
	case ok && (rep.body["url"] != nil || str(rep.body, "description") != alt):
		r.m.violate(fmt.Sprintf("upload by version 2: answered 202 with %v", rep.body))
	}
	r.m.done("upload later", !ok, time.Now())
	if !ok {
		return "", nil
	}
	return r.waitMadeSafe(ctx, u, str(rep.body, "id"), alt)
}

// waitMadeSafe waits, as an app does, for u's picture id to be made safe,
// and returns its id as the REST face names it; "" if it was not within
// laterWait (the oracle then checks it) or is not there for u.
func (r *runner) waitMadeSafe(ctx context.Context, u *user, id, alt string) (string, error) {
	start := time.Now()
	for time.Since(start) < laterWait {
		got, err := r.c.read(ctx, "/api/v1/media/"+id, u.token)
		if err != nil {
			return "", err
		}
		switch got.status {
		case http.StatusPartialContent:
			time.Sleep(100 * time.Millisecond)
			continue
		case http.StatusOK:
			r.checkMadeSafe(u, id, alt, got)
			return restID(id), nil
		case http.StatusUnauthorized, http.StatusForbidden, http.StatusNotFound, http.StatusServiceUnavailable:
			return "", nil // signed out, gone, or a fault: the oracle knows what it must be
		}
		r.m.violate(fmt.Sprintf("picture %s of %s while it is made safe: %d %v", id, u.name, got.status, got.body))
		return "", nil
	}
	r.m.mu.Lock()
	r.m.later = append(r.m.later, laterUpload{u: u, id: id, alt: alt, uploaded: start})
	r.m.mu.Unlock()
	return "", nil
}

// checkMadeSafe checks a picture's attachment once made safe: its links,
// its size as kept and its alt text.
func (r *runner) checkMadeSafe(u *user, id, alt string, got reply) {
	meta, _ := got.body["meta"].(map[string]any)
	orig, _ := meta["original"].(map[string]any)
	if str(got.body, "url") == "" || str(got.body, "preview_url") == "" || !keptWide(orig) || str(got.body, "description") != alt {
		r.m.violate(fmt.Sprintf("picture %s of %s made safe: %v", id, u.name, got.body))
	}
}

// restID is a Mastodon id of a picture as the REST face names it.
func restID(mastodon string) string {
	n, err := strconv.ParseInt(mastodon, 10, 64)
	if err != nil {
		return ""
	}
	return ids.Format(n)
}

// checkLater: every picture uploaded by version 2 that its uploader did
// not see made safe is made safe now that the queues are empty, unless
// its uploader is gone.
func (o *oracle) checkLater(ctx context.Context, rep *Report) error {
	for _, l := range o.m.later {
		if l.u.gone || l.u.deleted || o.m.suspended[l.u.id] {
			continue
		}
		got, err := o.r.c.read(ctx, "/api/v1/media/"+l.id, l.u.token)
		if err != nil {
			return err
		}
		if got.status == http.StatusUnauthorized {
			continue // signed out since
		}
		if got.status != http.StatusOK {
			rep.Violations = append(rep.Violations, fmt.Sprintf("picture %s of %s, uploaded at %s, is not made safe once the queues are empty: %d %v",
				l.id, l.u.name, l.uploaded.Format(time.RFC3339Nano), got.status, got.body))
			continue
		}
		meta, _ := got.body["meta"].(map[string]any)
		orig, _ := meta["original"].(map[string]any)
		if str(got.body, "url") == "" || !keptWide(orig) || str(got.body, "description") != l.alt {
			rep.Violations = append(rep.Violations, fmt.Sprintf("picture %s of %s made safe: %v", l.id, l.u.name, got.body))
		}
	}
	return nil
}
