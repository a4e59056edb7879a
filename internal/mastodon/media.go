package mastodon

import (
	"mime"
	"mime/multipart"

	"socialstream/internal/derrors"
	"socialstream/internal/media"
)

// Pictures, as Mastodon uploads, shows and describes them.

// uploadMedia is POST /api/v2/media (and /api/v1/media): the upload of
// mediaItems.create, streamed from the form's file part.
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
	it, _, err := s.media.Upload(m.ctx, m.caller, *in)
	if err != nil {
		return nil, err
	}
	mint, err := s.media.Links.Minter(m.ctx)
	if err != nil {
		return nil, err
	}
	return attachment(s.origin(m.c), mint.Item(it)), nil
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

func (s *Server) getMedia(m *mreq) (any, error) {
	v, err := s.ownMedia(m)
	if err != nil {
		return nil, err
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
