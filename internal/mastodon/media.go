package mastodon

import (
	"mime"
	"mime/multipart"
	"net/http"

	"socialstream/internal/derrors"
	"socialstream/internal/media"
)

// Pictures, as Mastodon uploads, shows and describes them.

// uploadMedia is POST /api/v2/media (and /api/v1/media): the upload of
// mediaItems.create, streamed from the form's file part. Version 2 answers
// a picture of more than media.InlinePixels 202 at once, with no links,
// and a job makes it safe (GET /api/v1/media/:id answers 206 until then);
// a smaller one, and any by version 1, is made safe before the answer, as
// Mastodon's are.
func (s *Server) uploadMedia(m *mreq) (any, error) {
	_, params, _ := mime.ParseMediaType(m.c.GetHeader("Content-Type"))
	if params["boundary"] == "" {
		return nil, derrors.New(derrors.InvalidArgument, "send the picture as multipart/form-data with a file")
	}
	in, err := s.host.ReadForm(multipart.NewReader(m.c.Request.Body, params["boundary"]))
	if err != nil {
		return nil, err
	}
	if err := s.host.UploadAllowed(m.ctx, m.caller); err != nil {
		return nil, err
	}
	later := m.c.Request.URL.Path == "/api/v2/media" && media.Later(in.Data)
	var it *media.Item
	if later {
		it, err = s.media.UploadLater(m.ctx, m.caller, *in)
	} else {
		it, _, err = s.media.Upload(m.ctx, m.caller, *in)
	}
	if err != nil {
		return nil, err
	}
	mint, err := s.media.Links.Minter(m.ctx)
	if err != nil {
		return nil, err
	}
	a := attachment(s.origin(m.c), mint.Item(it))
	if later {
		return answered{http.StatusAccepted, a}, nil
	}
	return a, nil
}

// ownMedia reads one of the caller's pictures, by the path's id.
func (s *Server) ownMedia(m *mreq) (media.View, error) {
	id := scattered(m.c.Param("id"))
	if id == "" {
		return media.View{}, errMGone
	}
	it, err := s.media.Item(m.ctx, id)
	if err != nil {
		return media.View{}, err
	}
	if it.UserID != m.caller {
		return media.View{}, errMGone
	}
	mint, err := s.media.Links.Minter(m.ctx)
	if err != nil {
		return media.View{}, err
	}
	return mint.Item(it), nil
}

// getMedia is GET /api/v1/media/:id: 206 while the picture is being made
// safe, 422 if it could not be.
func (s *Server) getMedia(m *mreq) (any, error) {
	v, err := s.ownMedia(m)
	switch {
	case err != nil:
		return nil, err
	case v.Broken != "":
		return nil, derrors.New(derrors.InvalidArgument, "Error processing the media: "+v.Broken)
	case v.Processing:
		return answered{http.StatusPartialContent, attachment(s.origin(m.c), v)}, nil
	}
	return attachment(s.origin(m.c), v), nil
}

// updateMedia is PUT /api/v1/media/:id: its description (alt text).
func (s *Server) updateMedia(m *mreq) (any, error) {
	v, err := s.ownMedia(m)
	if err != nil {
		return nil, err
	}
	d := m.p.str("description")
	it, err := s.media.Update(m.ctx, m.caller, v.ID, media.ItemUpdate{Description: &d})
	if err != nil {
		return nil, err
	}
	mint, err := s.media.Links.Minter(m.ctx)
	if err != nil {
		return nil, err
	}
	return attachment(s.origin(m.c), mint.Item(it)), nil
}
