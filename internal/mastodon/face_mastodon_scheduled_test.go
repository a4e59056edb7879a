package mastodon_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mattn/go-mastodon"

	"socialstream/internal/stacktest"
)

// Scheduled statuses through a Mastodon client library nobody here
// wrote: a status with scheduled_at answers a ScheduledStatus, is listed,
// shown, moved and cancelled by its author alone, holds its pictures
// (no other status may take them, and a cancel lets them go), and keeps
// a poll's params.
func TestMastodonScheduledStatuses(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	alice, bob := e.Register("alice"), e.Register("bob")
	ca := e.MastoClient(alice, "read write follow")
	at := time.Now().Add(3 * time.Hour).UTC().Truncate(time.Second)
	att, err := ca.UploadMediaFromMedia(ctx, &mastodon.Media{File: bytes.NewReader(stacktest.Picture(t, "png", 40, 30)), Description: "a square"})
	if err != nil {
		t.Fatal(err)
	}
	st, err := ca.PostStatus(ctx, &mastodon.Toot{Status: "good morning", ScheduledAt: &at, MediaIDs: []mastodon.ID{att.ID},
		Visibility: "unlisted", SpoilerText: "early"})
	if err != nil {
		t.Fatal(err)
	}
	p := st.ScheduledParams
	if st.ID == "" || p.Text != "good morning" || p.Visibility != "unlisted" || p.SpoilerText != "early" || !p.Sensitive ||
		len(p.MediaIDs) != 1 || p.MediaIDs[0] != att.ID {
		t.Fatalf("the scheduled status: %+v", st)
	}
	r := e.Do("GET", "/api/v1/scheduled_statuses/"+string(st.ID), alice.Token, nil)
	if r.Status != http.StatusOK || r.Body["scheduled_at"] != at.Format("2006-01-02T15:04:05.000Z") ||
		len(r.Body["media_attachments"].([]any)) != 1 {
		t.Errorf("GET it: %d %s", r.Status, r.Raw)
	}
	if r := e.Do("GET", "/api/v1/scheduled_statuses/"+string(st.ID), bob.Token, nil); r.Status != http.StatusNotFound {
		t.Errorf("GET it as bob: %d %s", r.Status, r.Raw)
	}
	// Its picture is held for it.
	_, err = ca.PostStatus(ctx, &mastodon.Toot{Status: "now", MediaIDs: []mastodon.ID{att.ID}})
	wantStatus(t, err, http.StatusConflict)

	// A poll's params; a page of one, with its Link.
	poll := e.Do("POST", "/api/v1/statuses", alice.Token, map[string]any{"status": "tea?", "scheduled_at": at.Add(time.Hour).Format(time.RFC3339),
		"poll": map[string]any{"options": []string{"yes", "no"}, "expires_in": 3600, "multiple": true}}, stacktest.JSON...)
	pp, _ := poll.Body["params"].(map[string]any)["poll"].(map[string]any)
	if poll.Status != http.StatusOK || pp == nil || pp["expires_in"] != "3600" || pp["multiple"] != true || len(pp["options"].([]any)) != 2 {
		t.Fatalf("a scheduled poll: %d %s", poll.Status, poll.Raw)
	}
	page := e.Do("GET", "/api/v1/scheduled_statuses?limit=1", alice.Token, nil)
	list := array(t, page)
	if page.Status != http.StatusOK || len(list) != 1 || list[0].(map[string]any)["id"] != poll.Body["id"] ||
		!strings.Contains(page.Header.Get("Link"), "max_id="+poll.Body["id"].(string)) {
		t.Errorf("the first page: %d %s %q", page.Status, page.Raw, page.Header.Get("Link"))
	}
	next := e.Do("GET", "/api/v1/scheduled_statuses?max_id="+poll.Body["id"].(string), alice.Token, nil)
	if list := array(t, next); next.Status != http.StatusOK || len(list) != 1 || list[0].(map[string]any)["id"] != string(st.ID) {
		t.Errorf("the next page: %d %s", next.Status, next.Raw)
	}
	if r := e.Do("GET", "/api/v1/scheduled_statuses", bob.Token, nil); r.Status != http.StatusOK || string(r.Raw) != "[]" {
		t.Errorf("bob's: %d %s", r.Status, r.Raw)
	}

	// Moved: by its author, not too soon, not by bob.
	later := at.Add(2 * time.Hour)
	if r := e.Do("PUT", "/api/v1/scheduled_statuses/"+string(st.ID), alice.Token, map[string]any{"scheduled_at": later.Format(time.RFC3339)}, stacktest.JSON...); r.Status != http.StatusOK || r.Body["scheduled_at"] != later.Format("2006-01-02T15:04:05.000Z") {
		t.Errorf("moving it: %d %s", r.Status, r.Raw)
	}
	for _, c := range []struct {
		token, when string
		want        int
	}{{alice.Token, time.Now().Add(time.Minute).Format(time.RFC3339), http.StatusUnprocessableEntity},
		{alice.Token, "soon", http.StatusUnprocessableEntity},
		{bob.Token, later.Format(time.RFC3339), http.StatusNotFound}} {
		if r := e.Do("PUT", "/api/v1/scheduled_statuses/"+string(st.ID), c.token, map[string]any{"scheduled_at": c.when}, stacktest.JSON...); r.Status != c.want || r.Body["error"] == nil {
			t.Errorf("moving it to %s: %d %s, want %d", c.when, r.Status, r.Raw, c.want)
		}
	}

	// Cancelled: by its author alone; its picture is free again.
	if r := e.Do("DELETE", "/api/v1/scheduled_statuses/"+string(st.ID), bob.Token, nil); r.Status != http.StatusNotFound {
		t.Errorf("bob cancelling it: %d %s", r.Status, r.Raw)
	}
	if r := e.Do("DELETE", "/api/v1/scheduled_statuses/"+string(st.ID), alice.Token, nil); r.Status != http.StatusOK || string(r.Raw) != "{}" {
		t.Errorf("cancelling it: %d %s", r.Status, r.Raw)
	}
	if r := e.Do("GET", "/api/v1/scheduled_statuses/"+string(st.ID), alice.Token, nil); r.Status != http.StatusNotFound {
		t.Errorf("GET it cancelled: %d %s", r.Status, r.Raw)
	}
	if now, err := ca.PostStatus(ctx, &mastodon.Toot{Status: "now", MediaIDs: []mastodon.ID{att.ID}}); err != nil || len(now.MediaAttachments) != 1 {
		t.Errorf("a status with the picture let go: %+v, %v", now, err)
	}
	if r := e.Do("GET", "/api/v1/scheduled_statuses?max_id=abc", alice.Token, nil); r.Status != http.StatusUnprocessableEntity {
		t.Errorf("a max_id that is none: %d %s", r.Status, r.Raw)
	}
}

// array decodes an answer that is a JSON array.
func array(t *testing.T, r stacktest.Resp) []any {
	t.Helper()
	var out []any
	if err := json.Unmarshal(r.Raw, &out); err != nil {
		t.Errorf("%d %s: %v", r.Status, r.Raw, err)
	}
	return out
}
