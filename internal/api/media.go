package api

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"slices"
	"strings"

	"github.com/gin-gonic/gin"

	"socialstream/internal/activities"
	"socialstream/internal/derrors"
	"socialstream/internal/media"
)

// mediaParams are the parameters of mediaItems.* as Shindig's
// MediaItemHandler names them (update takes mediaItemIds), and of
// albums.*.
type mediaParams struct {
	UserID       string          `json:"userId"`
	GroupID      string          `json:"groupId"`
	AlbumID      list            `json:"albumId"`
	MediaItemID  list            `json:"mediaItemId"`
	MediaItemIDs list            `json:"mediaItemIds"`
	MediaItem    *mediaItemInput `json:"mediaItem"`
	// ID and Data are the names later versions of Shindig's media item
	// handler also read an update's item id and item from.
	ID    list            `json:"id"`
	Data  *mediaItemInput `json:"data"`
	Album *albumInput     `json:"album"`
	pageParams
	// upload is the image a REST create sends as its body.
	upload *media.UploadInput
}

// mediaItemInput is a media item as a client sends it: an uploaded item
// by id (a create puts it into the album), or the image itself as a data:
// URL (JSON-RPC has no other way to carry bytes); and its text.
type mediaItemInput struct {
	ID          string  `json:"id"`
	URL         string  `json:"url"`
	Title       *string `json:"title"`
	Description *string `json:"description"`
}

// albumInput is an album as a client sends it.
type albumInput struct {
	Title       *string `json:"title"`
	Description *string `json:"description"`
}

// costUpload is an upload's cost: decoding and re-encoding an image.
const costUpload = 10

func (p mediaParams) cost() int {
	if p.upload != nil || p.MediaItem != nil && p.MediaItem.URL != "" {
		return costUpload
	}
	return costCall
}

// anyAlbum, in a path's album segment, names an item wherever it is (in
// an album or not).
const anyAlbum = "@all"

func mediaFromRequest(c *gin.Context) (mediaParams, error) {
	p := mediaParams{UserID: c.Param("userId"), GroupID: c.Param("groupId")}
	var err error
	if a := c.Param("albumId"); a != "" && a != anyAlbum {
		p.AlbumID = list{a}
	}
	if p.MediaItemID, err = splitList([]string{c.Param("mediaItemId")}); err != nil {
		return p, err
	}
	switch c.Request.Method {
	case http.MethodGet:
		p.pageParams, err = pagingFromQuery(c)
	case http.MethodPost, http.MethodPut:
		err = mediaBody(c, &p)
	}
	return p, err
}

// mediaBody reads a create's or an update's body: the image itself (its
// bytes, or a multipart form with a file), or JSON.
func mediaBody(c *gin.Context, p *mediaParams) error {
	kind, params, _ := mime.ParseMediaType(c.GetHeader("Content-Type"))
	switch {
	case kind == "application/json" || kind == "":
		var body struct {
			mediaItemInput
			MediaItem *mediaItemInput `json:"mediaItem"`
		}
		if err := decodeJSON(c.Request.Body, &body); err != nil {
			return err
		}
		p.MediaItem = body.MediaItem
		if p.MediaItem == nil {
			p.MediaItem = &body.mediaItemInput
		}
		return nil
	case c.Request.Method != http.MethodPost:
		return derrors.New(derrors.InvalidArgument, "an update is JSON: {\"title\", \"description\"}")
	case kind == "multipart/form-data":
		in, err := readForm(multipart.NewReader(c.Request.Body, params["boundary"]))
		p.upload = in
		return err
	case isUpload(kind):
		data, err := readUpload(c.Request.Body)
		p.upload = &media.UploadInput{Data: data, Title: c.Query("title"), Description: c.Query("description")}
		return err
	}
	return derrors.New(derrors.InvalidArgument, "send the image as its bytes (Content-Type image/...), as multipart/form-data with a file, or JSON")
}

var errTooLargeUpload = derrors.New(derrors.TooLarge, fmt.Sprintf("an image may be at most %d MiB", media.MaxBytes>>20))

// readUpload reads an image's bytes, up to media.MaxBytes.
func readUpload(r io.Reader) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, media.MaxBytes+1))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, errTooLargeUpload
		}
		return nil, derrors.New(derrors.InvalidArgument, "could not read the upload")
	}
	if len(data) > media.MaxBytes {
		return nil, errTooLargeUpload
	}
	return data, nil
}

// readForm reads a multipart upload: the part named file (its bytes), and
// the fields title and description.
func readForm(r *multipart.Reader) (*media.UploadInput, error) {
	in := &media.UploadInput{}
	var found bool
	for {
		part, err := r.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			var mbe *http.MaxBytesError
			if errors.As(err, &mbe) {
				return nil, errTooLargeUpload
			}
			return nil, derrors.New(derrors.InvalidArgument, "the multipart form cannot be read")
		}
		switch part.FormName() {
		case "file":
			if in.Data, err = readUpload(part); err != nil {
				return nil, err
			}
			found = true
		case "title", "description":
			b, err := io.ReadAll(io.LimitReader(part, 8*media.MaxDescription+1))
			if err != nil {
				return nil, derrors.New(derrors.InvalidArgument, "the multipart form cannot be read")
			}
			if part.FormName() == "title" {
				in.Title = string(b)
			} else {
				in.Description = string(b)
			}
		}
	}
	if !found {
		return nil, derrors.New(derrors.InvalidArgument, "the form has no part named file")
	}
	return in, nil
}

// album returns the one album a media item call names, "" for none or
// anyAlbum (JSON-RPC passes it as REST's path does).
func (p mediaParams) album() (string, error) {
	a, err := one(p.AlbumID, "albumId")
	if a == anyAlbum {
		a = ""
	}
	return a, err
}

// one returns the single value of l, named name, or "".
func one(l list, name string) (string, error) {
	if len(l) > 1 {
		return "", derrors.New(derrors.InvalidArgument, "give one "+name)
	}
	if len(l) == 0 {
		return "", nil
	}
	return l[0], nil
}

// mediaTarget resolves whose items or albums a call names, and checks
// its groupId: @self alone.
func (s *Server) mediaTarget(ctx context.Context, caller string, p mediaParams) (string, error) {
	if p.GroupID != "" && p.GroupID != activities.Self {
		return "", derrors.New(derrors.InvalidArgument, "media items and albums are under @self")
	}
	return s.accounts.Resolve(ctx, caller, orMe(p.UserID))
}

// mediaOwner is mediaTarget for a write: the caller's own.
func (s *Server) mediaOwner(ctx context.Context, caller string, p mediaParams) error {
	user, err := s.mediaTarget(ctx, caller, p)
	if err == nil && user != caller {
		err = derrors.New(derrors.PermissionDenied, "you can only change your own media items and albums")
	}
	return err
}

// ownOne checks that a write names the caller's own, and returns the one
// id of ids it names (what, for the error).
func (s *Server) ownOne(ctx context.Context, caller string, p mediaParams, ids list, what string) (string, error) {
	if err := s.mediaOwner(ctx, caller, p); err != nil {
		return "", err
	}
	id, err := one(ids, what)
	if err != nil || id == "" {
		return "", derrors.New(derrors.InvalidArgument, "give the "+what+" of one")
	}
	return id, nil
}

// mediaItemsGet answers mediaItems.get: the caller's items, all or one
// album's or by id; another person's, only those on activities the
// caller may see (albums are their owner's alone).
func (s *Server) mediaItemsGet(ctx context.Context, caller string, p mediaParams) (any, error) {
	user, err := s.mediaTarget(ctx, caller, p)
	if err != nil {
		return nil, err
	}
	album, err := p.album()
	if err != nil {
		return nil, err
	}
	mint, err := s.media.Links.Minter(ctx)
	if err != nil {
		return nil, err
	}
	if len(p.MediaItemID) > 0 {
		if len(p.MediaItemID) > activities.MaxIDs {
			return nil, derrors.New(derrors.InvalidArgument, fmt.Sprintf("at most %d ids at once", activities.MaxIDs))
		}
		items, err := s.media.Items(ctx, p.MediaItemID)
		if err != nil {
			return nil, err
		}
		var mine []*media.Item
		for _, it := range items {
			if it.UserID == user && (album == "" || it.AlbumID == album) {
				mine = append(mine, it)
			}
		}
		if mine, err = s.readableOnly(ctx, caller, user, mine); err != nil {
			return nil, err
		}
		views := make([]media.View, len(mine))
		for i, it := range mine {
			views[i] = mint.Item(it)
		}
		if len(p.MediaItemID) == 1 {
			if len(views) == 0 {
				return nil, media.ErrNoSuchItem
			}
			return entry{views[0]}, nil
		}
		return collection{List: views, ItemsPerPage: len(views), TotalResults: int64(len(views))}, nil
	}
	if album != "" && user != caller {
		return nil, errPrivateAlbums
	}
	if album != "" {
		if _, err := s.media.AlbumOf(ctx, user, album); err != nil {
			return nil, err
		}
	}
	page, err := p.page()
	if err != nil {
		return nil, err
	}
	items, next, err := s.media.Of(ctx, user, album, page, func(items []*media.Item) ([]bool, error) {
		return s.activities.PicturesSeen(ctx, caller, user, items)
	})
	if err != nil {
		return nil, err
	}
	views := make([]media.View, len(items))
	for i, it := range items {
		views[i] = mint.Item(it)
	}
	return paged(views, len(views), page, next), nil
}

var errPrivateAlbums = derrors.New(derrors.PermissionDenied, "albums are visible to their owner only")

// readableOnly keeps of items those the caller may see
// (activities.PicturesSeen).
func (s *Server) readableOnly(ctx context.Context, caller, user string, items []*media.Item) ([]*media.Item, error) {
	keep, err := s.activities.PicturesSeen(ctx, caller, user, items)
	if err != nil {
		return nil, err
	}
	var out []*media.Item
	for i, it := range items {
		if keep[i] {
			out = append(out, it)
		}
	}
	return out, nil
}

// mediaItemsCreate answers mediaItems.create: an upload (the image in
// the body, or a data: URL), into the album named or none; or an
// uploaded item by id, put into the album.
func (s *Server) mediaItemsCreate(ctx context.Context, caller string, p mediaParams) (any, error) {
	if err := s.mediaOwner(ctx, caller, p); err != nil {
		return nil, err
	}
	album, err := p.album()
	if err != nil {
		return nil, err
	}
	in, err := p.uploadOf()
	if err != nil {
		return nil, err
	}
	mint, err := s.media.Links.Minter(ctx)
	if err != nil {
		return nil, err
	}
	if in != nil {
		if err := s.uploadAllowed(ctx, caller); err != nil {
			return nil, err
		}
		in.AlbumID = album
		it, _, err := s.media.Upload(ctx, caller, *in)
		if err != nil {
			return nil, err
		}
		return statusEntry{entry: entry{mint.Item(it)}, status: http.StatusCreated}, nil
	}
	if p.MediaItem == nil || p.MediaItem.ID == "" {
		return nil, derrors.New(derrors.InvalidArgument, "give the image (its bytes, or mediaItem.url as a data: URL), or mediaItem.id of an uploaded item")
	}
	if album == "" {
		return nil, derrors.New(derrors.InvalidArgument, "albumId is required to put an uploaded item into an album")
	}
	it, err := s.media.Move(ctx, caller, p.MediaItem.ID, album)
	if err != nil {
		return nil, err
	}
	return statusEntry{entry: entry{mint.Item(it)}, status: http.StatusOK}, nil
}

// uploadOf is the upload p carries, nil for none: the image in the
// body, or a data: URL with its title and description.
func (p mediaParams) uploadOf() (*media.UploadInput, error) {
	if p.upload != nil || p.MediaItem == nil || p.MediaItem.URL == "" {
		return p.upload, nil
	}
	data, err := dataURL(p.MediaItem.URL)
	if err != nil {
		return nil, err
	}
	in := &media.UploadInput{Data: data}
	if p.MediaItem.Title != nil {
		in.Title = *p.MediaItem.Title
	}
	if p.MediaItem.Description != nil {
		in.Description = *p.MediaItem.Description
	}
	return in, nil
}

// dataURL decodes a data: URL of base64 bytes.
func dataURL(u string) ([]byte, error) {
	head, payload, ok := strings.Cut(u, ",")
	if !ok || !strings.HasPrefix(head, "data:") || !strings.HasSuffix(head, ";base64") {
		return nil, derrors.New(derrors.InvalidArgument, "mediaItem.url must be a data: URL of base64 bytes (the service fetches no URL)")
	}
	if base64.StdEncoding.DecodedLen(len(payload)) > media.MaxBytes+3 {
		return nil, errTooLargeUpload
	}
	data, err := base64.StdEncoding.DecodeString(payload)
	if err != nil {
		return nil, derrors.New(derrors.InvalidArgument, "mediaItem.url is not valid base64")
	}
	return data, nil
}

// uploadAllowed spends a unit of the caller's shared bucket of uploads.
func (s doors) uploadAllowed(ctx context.Context, caller string) error {
	if s.guard.Limits == nil {
		return nil
	}
	d, err := s.guard.Limits.Upload.Take(ctx, caller, 1)
	if err != nil || d.Allowed {
		return err
	}
	if m, ok := ctx.Value(meterKey{}).(*meter); ok {
		d.SetHeaders(m.header)
	}
	return d.Err()
}

// mediaItemsUpdate answers mediaItems.update: an item's title and alt
// text.
func (s *Server) mediaItemsUpdate(ctx context.Context, caller string, p mediaParams) (any, error) {
	ids := slices.Compact(slices.Sorted(slices.Values(slices.Concat(p.MediaItemID, p.MediaItemIDs, p.ID))))
	id, err := s.ownOne(ctx, caller, p, ids, "mediaItemId")
	if err != nil {
		return nil, err
	}
	item := p.MediaItem
	switch {
	case item == nil:
		item = p.Data
	case p.Data != nil:
		return nil, derrors.New(derrors.InvalidArgument, "give the item as mediaItem or as data, not both")
	}
	if item == nil {
		return nil, derrors.New(derrors.InvalidArgument, "mediaItem (or data) is required")
	}
	album, err := p.album()
	if err != nil {
		return nil, err
	}
	it, err := s.media.Update(ctx, caller, id, media.ItemUpdate{Title: item.Title, Description: item.Description, Album: album})
	if err != nil {
		return nil, err
	}
	mint, err := s.media.Links.Minter(ctx)
	if err != nil {
		return nil, err
	}
	return entry{mint.Item(it)}, nil
}

// mediaItemsDelete answers mediaItems.delete: one item of the caller's
// on no activity.
func (s *Server) mediaItemsDelete(ctx context.Context, caller string, p mediaParams) (any, error) {
	id, err := s.ownOne(ctx, caller, p, p.MediaItemID, "mediaItemId")
	if err != nil {
		return nil, err
	}
	album, err := p.album()
	if err != nil {
		return nil, err
	}
	return nil, s.media.Delete(ctx, caller, id, album) // one not in the album named is not there
}

// albumsGet answers albums.get: the caller's albums, all or by id.
func (s *Server) albumsGet(ctx context.Context, caller string, p mediaParams) (any, error) {
	user, err := s.mediaTarget(ctx, caller, p)
	if err != nil {
		return nil, err
	}
	if user != caller {
		return nil, errPrivateAlbums
	}
	mint, err := s.media.Links.Minter(ctx)
	if err != nil {
		return nil, err
	}
	if len(p.AlbumID) > 0 {
		if len(p.AlbumID) > activities.MaxIDs {
			return nil, derrors.New(derrors.InvalidArgument, fmt.Sprintf("at most %d ids at once", activities.MaxIDs))
		}
		var views []media.AlbumView
		for _, id := range p.AlbumID {
			a, err := s.media.AlbumOf(ctx, user, id)
			if errors.Is(err, media.ErrNoSuchAlbum) && len(p.AlbumID) > 1 {
				continue
			}
			if err != nil {
				return nil, err
			}
			views = append(views, mint.Album(id, a))
		}
		if len(p.AlbumID) == 1 {
			return entry{views[0]}, nil
		}
		return collection{List: views, ItemsPerPage: len(views), TotalResults: int64(len(views))}, nil
	}
	page, err := p.page()
	if err != nil {
		return nil, err
	}
	idList, albums, next, err := s.media.Albums(ctx, user, page)
	if err != nil {
		return nil, err
	}
	views := make([]media.AlbumView, len(albums))
	for i := range albums {
		views[i] = mint.Album(idList[i], &albums[i])
	}
	return paged(views, len(views), page, next), nil
}

func albumsFromRequest(c *gin.Context) (mediaParams, error) {
	p := mediaParams{UserID: c.Param("userId"), GroupID: c.Param("groupId")}
	var err error
	if p.AlbumID, err = splitList([]string{c.Param("albumId")}); err != nil {
		return p, err
	}
	switch c.Request.Method {
	case http.MethodGet:
		p.pageParams, err = pagingFromQuery(c)
	case http.MethodPost, http.MethodPut:
		var body struct {
			albumInput
			Album *albumInput `json:"album"`
		}
		if err = decodeJSON(c.Request.Body, &body); err == nil {
			p.Album = body.Album
			if p.Album == nil {
				p.Album = &body.albumInput
			}
		}
	}
	return p, err
}

// albumsCreate answers albums.create.
func (s *Server) albumsCreate(ctx context.Context, caller string, p mediaParams) (any, error) {
	if err := s.mediaOwner(ctx, caller, p); err != nil {
		return nil, err
	}
	if len(p.AlbumID) > 0 {
		return nil, derrors.New(derrors.InvalidArgument, "a create names no albumId")
	}
	if p.Album == nil {
		return nil, derrors.New(derrors.InvalidArgument, `give the album: {"title", "description"}`)
	}
	id, a, err := s.media.CreateAlbum(ctx, caller, media.AlbumInput{Title: p.Album.Title, Description: p.Album.Description})
	if err != nil {
		return nil, err
	}
	mint, err := s.media.Links.Minter(ctx)
	if err != nil {
		return nil, err
	}
	return statusEntry{entry: entry{mint.Album(id, a)}, status: http.StatusCreated}, nil
}

// albumsUpdate answers albums.update.
func (s *Server) albumsUpdate(ctx context.Context, caller string, p mediaParams) (any, error) {
	id, err := s.ownOne(ctx, caller, p, p.AlbumID, "albumId")
	if err != nil {
		return nil, err
	}
	if p.Album == nil {
		return nil, derrors.New(derrors.InvalidArgument, "album is required")
	}
	a, err := s.media.UpdateAlbum(ctx, caller, id, media.AlbumInput{Title: p.Album.Title, Description: p.Album.Description})
	if err != nil {
		return nil, err
	}
	mint, err := s.media.Links.Minter(ctx)
	if err != nil {
		return nil, err
	}
	return entry{mint.Album(id, a)}, nil
}

// albumsDelete answers albums.delete: the album, and by a job its items.
func (s *Server) albumsDelete(ctx context.Context, caller string, p mediaParams) (any, error) {
	id, err := s.ownOne(ctx, caller, p, p.AlbumID, "albumId")
	if err != nil {
		return nil, err
	}
	return nil, s.media.DeleteAlbum(ctx, caller, id)
}

// Supported fields of albums and media items, as @supportedFields answers.
var (
	albumFields     = []string{"id", "ownerId", "title", "description", "mediaItemCount", "mediaType", "thumbnailUrl", "created"}
	mediaItemFields = []string{"id", "albumId", "activityId", "userId", "type", "mimeType", "url", "thumbnailUrl", "title", "description", "width", "height", "fileSize", "created"}
)

func supportedFields(fields []string) operation[struct{}] {
	return func(context.Context, string, struct{}) (any, error) { return fields, nil }
}

func noParams(*gin.Context) (struct{}, error) { return struct{}{}, nil }

// mediaRefs are the pictures a post names: OpenSocial's mediaItems, each
// an object with the id of an upload (other fields are the server's), or
// the id alone.
type mediaRefs []string

func (m *mediaRefs) UnmarshalJSON(b []byte) error {
	var raw []json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return derrors.New(derrors.InvalidArgument, "mediaItems is an array of {\"id\"} of uploaded items")
	}
	out := make([]string, 0, len(raw))
	for _, r := range raw {
		r = bytes.TrimSpace(r)
		var id string
		if len(r) > 0 && r[0] == '{' {
			var it struct {
				ID string `json:"id"`
			}
			if err := json.Unmarshal(r, &it); err != nil {
				return derrors.New(derrors.InvalidArgument, "mediaItems is an array of {\"id\"} of uploaded items")
			}
			id = it.ID
		} else if err := json.Unmarshal(r, &id); err != nil {
			return derrors.New(derrors.InvalidArgument, "mediaItems is an array of {\"id\"} of uploaded items")
		}
		out = append(out, id)
	}
	*m = out
	return nil
}
