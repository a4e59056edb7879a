package media

import (
	"bytes"
	"context"
	"image"
	"image/color"
	"io"
	"testing"

	"golang.org/x/image/webp"
)

// Pictures stored before thumbnails had a form for WebP are given it: a
// photo's thumbnail in WebP, a flat drawing's the thumbnail itself, in
// its own type; one that has it is left as it is; a second run gives
// none, however the run is cut in steps.
func TestFillWebPGivesOlderPicturesTheForm(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	photo := f.upload(UploadInput{Data: encodeJPEG(t, noise(600, 450, color.YCbCrModel))})
	flat := f.upload(UploadInput{Data: encodePNG(t, image.NewNRGBA(image.Rect(0, 0, 8, 8)))}) // all see-through: WebP is no smaller
	has := f.upload(UploadInput{Data: encodeJPEG(t, noise(300, 200, color.YCbCrModel))})
	b := f.client.Bucket(bucket)
	read := func(name string) ([]byte, string) {
		t.Helper()
		r, err := b.Object(name).NewReader(ctx)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		defer r.Close()
		data, err := io.ReadAll(r)
		if err != nil {
			t.Fatal(err)
		}
		return data, r.Attrs.ContentType
	}
	kept, _ := read(thumbWebPObject(has))
	for _, id := range []string{photo, flat} { // as a version before the form stored them
		if err := b.Object(thumbWebPObject(id)).Delete(ctx); err != nil {
			t.Fatal(err)
		}
	}
	fill := func() int {
		t.Helper()
		filled, cursor := 0, ""
		for range 10 {
			n, next, err := FillWebP(ctx, f.db, b, cursor, 1)
			if err != nil {
				t.Fatal(err)
			}
			filled += n
			if next == "" {
				return filled
			}
			cursor = next
		}
		t.Fatal("FillWebP went on past its items")
		return 0
	}
	if n := fill(); n != 2 {
		t.Fatalf("filled %d, want the 2 without the form", n)
	}
	data, kind := read(thumbWebPObject(photo))
	img, err := webp.Decode(bytes.NewReader(data))
	if err != nil || kind != WebP {
		t.Fatalf("the photo's form: %s, %v", kind, err)
	}
	if bd := img.Bounds(); bd.Dx() != 400 || bd.Dy() != 300 {
		t.Errorf("the photo's form is %v, want its thumbnail's 400 × 300", bd)
	}
	thumb, thumbKind := read(thumbObject(flat))
	if data, kind := read(thumbWebPObject(flat)); !bytes.Equal(data, thumb) || kind != thumbKind {
		t.Errorf("the flat picture's form: %d bytes of %s, want its thumbnail's %d of %s", len(data), kind, len(thumb), thumbKind)
	}
	if data, _ := read(thumbWebPObject(has)); !bytes.Equal(data, kept) {
		t.Error("the form a picture had was written again")
	}
	if n := fill(); n != 0 {
		t.Errorf("a second run filled %d, want none", n)
	}
}

// A picture deleted while its form was being written (its record gone by
// the time the form is, its objects' deletion perhaps before the form's
// write) does not keep the form: the fill looks at the record again after
// the write and deletes what it wrote.
func TestFillWebPOfAPictureDeletedMeanwhile(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	id := f.upload(UploadInput{Data: encodeJPEG(t, noise(300, 200, color.YCbCrModel))})
	b := f.client.Bucket(bucket)
	if err := b.Object(thumbWebPObject(id)).Delete(ctx); err != nil { // as a version before the form stored it
		t.Fatal(err)
	}
	key := ItemKey(f.db, id)
	if err := f.db.Delete(ctx, key); err != nil { // deleted, its objects not yet
		t.Fatal(err)
	}
	s := &Service{db: f.db, bucket: b}
	if made, err := s.fillWebP(ctx, key); made || err != nil {
		t.Fatalf("fillWebP: %v, %v; want nothing made", made, err)
	}
	if ok, err := s.Stored(ctx, id, FormThumbWebP); ok || err != nil {
		t.Errorf("the form of a picture deleted meanwhile is stored (%v)", err)
	}
}
