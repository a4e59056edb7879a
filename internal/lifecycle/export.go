package lifecycle

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"socialstream/internal/activities"
	"socialstream/internal/appdata"
	"socialstream/internal/blocks"
	"socialstream/internal/bookmarks"
	"socialstream/internal/comments"
	"socialstream/internal/filters"
	"socialstream/internal/graph"
	"socialstream/internal/groups"
	"socialstream/internal/likes"
	"socialstream/internal/markers"
	"socialstream/internal/media"
	"socialstream/internal/moderation"
	"socialstream/internal/mutes"
	"socialstream/internal/store"
	"socialstream/internal/tags"
)

// ExportPage is how many activities an export reads at a time; the other
// lists go 500 at a time.
const ExportPage = 100

// Since is one link of the export's lists: a person, or an activity, and
// since when.
type Since struct {
	ID    string `json:"id,omitempty"`
	Since string `json:"since"`
}

// Like is a like, or a bookmark, as the export shows it.
type Like struct {
	ActivityID string `json:"activityId"`
	Since      string `json:"since"`
}

// Muted is one of the mutes of an export: whom, since when, until when
// (if it ends), ended ones included.
type Muted struct {
	ID    string `json:"id"`
	Since string `json:"since"`
	Until string `json:"until,omitempty"`
}

// FollowedTag is a tag the user follows, since when.
type FollowedTag struct {
	Name  string `json:"name"`
	Since string `json:"since"`
}

// ExportedActivity is an activity as an export shows it: an edited one
// with its versions.
type ExportedActivity struct {
	activities.View
	History []activities.VersionView `json:"history,omitempty"`
}

// Export writes user's data to w as one JSON document: person, then
// activities (newest first, with their counts, and an edited one's
// versions), follows, followers, the pending follow requests received
// (followRequests) and sent (followRequested), groups, comments, likes, blocked, muted, followedTags, filters,
// the reports filed (reports) and what moderation did to the account
// (moderationNotices), markers and appData (by application), each list read a page at
// a time and written as it is read, so the document is never held in
// memory; flush, when set, is called after each page. It checks the
// person before writing anything: an error then has written nothing. An
// error later leaves the document unfinished (the caller must make that
// visible: the last field, "complete": true, is missing).
func (s *Service) Export(ctx context.Context, user string, w io.Writer, flush func()) error {
	person, err := s.svc.Accounts.Get(ctx, user)
	if err != nil {
		return err
	}
	d := &doc{w: bufio.NewWriterSize(w, 32<<10), flush: flush}
	d.raw("{")
	d.field("exported", s.now().UTC().Format(time.RFC3339))
	d.field("person", person)
	// What the person may read of their own activities (a removed one is
	// kept for the record, not for them), which also says which of their
	// pictures they may read.
	exported := map[string]bool{}
	d.list("activities", func(item func(any) error) error {
		page := store.PageRequest{Count: ExportPage}
		for {
			vs, next, err := s.svc.Activities.Feed(ctx, activities.FeedRequest{Viewer: user, Selector: activities.Self, UserID: user, Page: page})
			if err != nil {
				return err
			}
			for _, v := range vs {
				exported[v.ID] = true
				a := ExportedActivity{View: v}
				if v.EditedTime != 0 {
					if a.History, err = s.svc.Activities.History(ctx, user, v.ID); err != nil {
						return err
					}
				}
				if err := item(a); err != nil {
					return err
				}
			}
			if next == "" {
				return nil
			}
			page.Cursor = next
			d.pageDone()
		}
	})
	for _, followers := range []bool{false, true} {
		name := "follows"
		if followers {
			name = "followers"
		}
		d.list(name, func(item func(any) error) error {
			return graph.Each(ctx, s.db, user, followers, func(id string, since time.Time) error {
				return item(Since{ID: id, Since: stamp(since)})
			})
		})
	}
	for _, sent := range []bool{false, true} {
		name := "followRequests"
		if sent {
			name = "followRequested"
		}
		d.list(name, func(item func(any) error) error {
			return graph.EachRequest(ctx, s.db, user, sent, func(r graph.Pending) error {
				return item(Since{ID: r.Person, Since: stamp(r.Since)})
			})
		})
	}
	d.list("groups", func(item func(any) error) error {
		// At most groups.MaxGroupsPerUser: one page.
		gs, _, _, err := s.svc.Groups.OfUser(ctx, user, user, store.PageRequest{Count: groups.MaxGroupsPerUser})
		for _, g := range gs {
			if err == nil {
				err = item(g)
			}
		}
		return err
	})
	if s.svc.Media != nil {
		d.list("mediaItems", func(item func(any) error) error {
			return s.svc.Media.EachItem(ctx, user, func(activity string) bool { return !exported[activity] },
				func(v media.View) error { return item(v) })
		})
		d.list("albums", func(item func(any) error) error {
			return s.svc.Media.EachAlbum(ctx, user, func(v media.AlbumView) error { return item(v) })
		})
	}
	d.list("comments", func(item func(any) error) error {
		return comments.Each(ctx, s.db, user, func(v comments.View) error { return item(v) })
	})
	d.list("likes", func(item func(any) error) error {
		return likes.Each(ctx, s.db, user, func(activity string, since time.Time) error {
			return item(Like{ActivityID: activity, Since: stamp(since)})
		})
	})
	d.list("bookmarks", func(item func(any) error) error {
		return bookmarks.Each(ctx, s.db, user, func(activity string, since time.Time) error {
			return item(Like{ActivityID: activity, Since: stamp(since)})
		})
	})
	d.list("blocked", func(item func(any) error) error {
		return blocks.Each(ctx, s.db, user, func(id string, since time.Time) error { return item(Since{ID: id, Since: stamp(since)}) })
	})
	d.list("muted", func(item func(any) error) error {
		return mutes.Each(ctx, s.db, user, func(m mutes.Mute) error {
			v := Muted{ID: m.Muted, Since: stamp(m.Created)}
			if !m.Until.IsZero() {
				v.Until = stamp(m.Until)
			}
			return item(v)
		})
	})
	d.list("followedTags", func(item func(any) error) error {
		return tags.Each(ctx, s.db, user, func(f tags.Followed) error {
			return item(FollowedTag{Name: f.Tag, Since: stamp(f.Created)})
		})
	})
	fs, err := filters.Of(ctx, s.db, user)
	if d.err == nil {
		d.err = err
	}
	d.field("filters", fs)
	reports, notices, err := moderation.Export(ctx, s.db, user)
	if d.err == nil {
		d.err = err
	}
	d.field("reports", reports)
	d.field("moderationNotices", notices)
	marks, err := markers.All(ctx, s.db, user)
	if d.err == nil {
		d.err = err
	}
	d.field("markers", marks)
	apps, err := appdata.Export(ctx, s.db, user)
	if d.err == nil {
		d.err = err
	}
	d.field("appData", apps)
	d.field("complete", true)
	d.raw("}\n")
	if d.err == nil {
		d.err = d.w.Flush()
	}
	if d.err != nil {
		return fmt.Errorf("lifecycle.Export(%s): %w", user, d.err)
	}
	return nil
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// doc writes a JSON object a field at a time; its first error sticks.
type doc struct {
	w      *bufio.Writer
	flush  func()
	err    error
	fields int
}

func (d *doc) raw(s string) {
	if d.err == nil {
		_, d.err = d.w.WriteString(s)
	}
}

func (d *doc) value(v any) {
	if d.err != nil {
		return
	}
	b, err := json.Marshal(v)
	if err != nil {
		d.err = err
		return
	}
	_, d.err = d.w.Write(b)
}

func (d *doc) name(n string) {
	if d.fields > 0 {
		d.raw(",")
	}
	d.fields++
	d.value(n)
	d.raw(":")
}

func (d *doc) field(n string, v any) {
	d.name(n)
	d.value(v)
}

// pageDone sends what is written so far.
func (d *doc) pageDone() {
	if d.err == nil {
		d.err = d.w.Flush()
	}
	if d.err == nil && d.flush != nil {
		d.flush()
	}
}

// list writes a field whose value is the list of what each gives item.
func (d *doc) list(n string, each func(item func(any) error) error) {
	d.name(n)
	d.raw("[")
	count := 0
	err := each(func(v any) error {
		if count > 0 {
			d.raw(",")
		}
		count++
		d.value(v)
		if count%500 == 0 {
			d.pageDone()
		}
		return d.err
	})
	if d.err == nil {
		d.err = err
	}
	d.raw("]")
	d.pageDone()
}
