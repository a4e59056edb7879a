package mastodon

import (
	"strconv"

	"github.com/gin-gonic/gin"

	"socialstream/internal/derrors"
	"socialstream/internal/ids"
	"socialstream/internal/markers"
)

// Markers, as Mastodon names them, over the service's markers.

// mastoMarkers are Mastodon's timelines a marker may name, by ours.
var mastoMarkers = map[string]string{"home": "home", "notifications": "notifications"}

// getMarkers is GET /api/v1/markers?timeline[]=.
func (s *Server) getMarkers(m *mreq) (any, error) {
	feeds := m.p.list("timeline")
	if len(feeds) == 0 {
		feeds = []string{"home", "notifications"}
	}
	for _, f := range feeds {
		if _, ok := mastoMarkers[f]; !ok {
			return nil, derrors.New(derrors.InvalidArgument, "timeline must be home or notifications")
		}
	}
	got, err := s.markers.Get(m.ctx, m.caller, feeds)
	if err != nil {
		return nil, err
	}
	return markerViews(got), nil
}

// markerViews shows markers as Mastodon does. The service keeps no
// version nor time of a marker's move: updated_at is the time of what
// it marks (the id's), and version 0.
func markerViews(got map[string]markers.Marker) gin.H {
	out := gin.H{}
	for f, mk := range got {
		seq, _ := ids.Parse(mk.LastReadID)
		out[f] = gin.H{"last_read_id": strconv.FormatInt(seq, 10), "version": 0, "updated_at": ids.Time(seq).UTC().Format("2006-01-02T15:04:05.000Z")}
	}
	return out
}

// moveMarkers is POST /api/v1/markers: home[last_read_id] (a status) and
// notifications[last_read_id] (a notification).
func (s *Server) moveMarkers(m *mreq) (any, error) {
	to := map[string]markers.Marker{}
	for f := range mastoMarkers {
		if v := m.p.str(f + "[last_read_id]"); v != "" {
			id := scattered(v)
			if id == "" {
				return nil, derrors.New(derrors.InvalidArgument, f+"[last_read_id] is not an id")
			}
			to[f] = markers.Marker{LastReadID: id}
		}
	}
	if len(to) == 0 {
		return nil, derrors.New(derrors.InvalidArgument, "give home[last_read_id] or notifications[last_read_id]")
	}
	got, err := s.markers.Move(m.ctx, m.caller, to)
	if err != nil {
		return nil, err
	}
	return markerViews(got), nil
}
