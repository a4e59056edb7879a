package media

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"slices"
	"strings"
	"testing"

	"socialstream/internal/derrors"
)

// attachable runs ReadLoose's check for a post of the fixture's user
// carrying id, as a post's transaction does.
func (f *fixture) attachable(id string) error {
	f.t.Helper()
	l := f.db.Lookup()
	check := ReadLoose(l, []string{id}, "")
	if err := l.Run(context.Background()); err != nil {
		f.t.Fatal(err)
	}
	_, _, _, err := check(f.user)
	return err
}

func (f *fixture) item(id string) *Item {
	f.t.Helper()
	it, err := f.s.Item(context.Background(), id)
	if err != nil {
		f.t.Fatal(err)
	}
	return it
}

// An upload made safe by its job: kept as sent and processing until the
// job runs, which no post may carry; then its objects, its size, and the
// bytes as sent gone. The job again changes nothing.
func TestUploadLaterIsMadeSafeByItsJob(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	data := withExif(encodeJPEG(t, twoTone(40, 20)), 6, "a secret place")
	it, err := f.s.UploadLater(ctx, f.user, UploadInput{Data: data, Description: "sideways"})
	if err != nil {
		t.Fatal(err)
	}
	id := it.ID
	if got := f.objects(); !slices.Equal(got, []string{uploadObject(id)}) {
		t.Fatalf("objects before the job: %v", got)
	}
	got := f.item(id)
	if got.Ready() || got.Width != 20 || got.Height != 40 || got.Description != "sideways" || !got.loose() {
		t.Fatalf("the item before the job: %+v", got)
	}
	if err := f.attachable(id); !errors.Is(err, derrors.InvalidArgument) || !strings.Contains(err.Error(), "not finished processing") {
		t.Fatalf("a post carrying it before the job: %v", err)
	}
	mint, err := f.s.Links.Minter(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if v := mint.Item(got); v.URL != "" || v.ThumbnailURL != "" || !v.Processing {
		t.Errorf("its view before the job: %+v", v)
	}

	if did, err := f.s.Run(ctx, Task{Op: OpProcess, ID: id}); err != nil || !strings.HasPrefix(did, "made safe") {
		t.Fatalf("the job: %q %v", did, err)
	}
	if got, want := f.objects(), ObjectsOf(id); !slices.Equal(got, want) {
		t.Fatalf("objects after the job: %v, want %v", got, want)
	}
	got = f.item(id)
	if !got.Ready() || got.MimeType != JPEG || got.Width != 20 || got.Height != 40 || got.ThumbType != JPEG || got.Bytes == 0 {
		t.Fatalf("the item after the job: %+v", got)
	}
	if err := f.attachable(id); err != nil {
		t.Fatalf("a post carrying it after the job: %v", err)
	}
	// A job run again (its answer lost after its commit) finds it done,
	// and deletes bytes as sent that an earlier try left.
	if err := f.s.writeObject(ctx, uploadObject(id), JPEG, data); err != nil {
		t.Fatal(err)
	}
	if did, err := f.s.Run(ctx, Task{Op: OpProcess, ID: id}); err != nil || did != "processed before" {
		t.Fatalf("the job again: %q %v", did, err)
	}
	if got, want := f.objects(), ObjectsOf(id); !slices.Equal(got, want) {
		t.Fatalf("objects after the job again: %v, want %v", got, want)
	}
	if again := f.item(id); again.Bytes != got.Bytes || again.Width != got.Width {
		t.Errorf("the job again changed the item: %+v", again)
	}
}

// An upload whose header reads but whose pixels do not is recorded as
// broken, with why; no post may carry it.
func TestUploadLaterThatCannotBeMadeSafe(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	png := encodePNG(t, twoTone(64, 64))
	it, err := f.s.UploadLater(ctx, f.user, UploadInput{Data: png[:len(png)-30]}) // its end cut off
	if err != nil {
		t.Fatal(err)
	}
	if did, err := f.s.Run(ctx, Task{Op: OpProcess, ID: it.ID}); err != nil || !strings.HasPrefix(did, "broken") {
		t.Fatalf("the job: %q %v", did, err)
	}
	got := f.item(it.ID)
	if got.Ready() || got.Processing != 0 || !strings.Contains(got.Broken, "cannot be read") {
		t.Fatalf("the item: %+v", got)
	}
	if err := f.attachable(it.ID); !errors.Is(err, derrors.InvalidArgument) || !strings.Contains(err.Error(), "could not be processed") {
		t.Fatalf("a post carrying it: %v", err)
	}
	if objs := f.objects(); len(objs) != 0 {
		t.Errorf("objects left: %v", objs)
	}
}

// A job whose item is gone (its collection, or its owner's delete, came
// first) deletes what is left; what is not an image never gets that far.
func TestUploadLaterGoneOrRefused(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	it, err := f.s.UploadLater(ctx, f.user, UploadInput{Data: encodePNG(t, twoTone(8, 8))})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.s.Delete(ctx, f.user, it.ID, ""); err != nil {
		t.Fatal(err)
	}
	if err := f.s.writeObject(ctx, uploadObject(it.ID), PNG, []byte("left by a race")); err != nil {
		t.Fatal(err)
	}
	if did, err := f.s.Run(ctx, Task{Op: OpProcess, ID: it.ID}); err != nil || did != "the item is gone" {
		t.Fatalf("the job: %q %v", did, err)
	}
	if objs := f.objects(); len(objs) != 0 {
		t.Errorf("objects left: %v", objs)
	}
	for _, data := range [][]byte{[]byte("not an image"), nil} {
		if _, err := f.s.UploadLater(ctx, f.user, UploadInput{Data: data}); !errors.Is(err, derrors.InvalidArgument) {
			t.Errorf("an upload of %q: %v", data, err)
		}
	}
	if objs := f.objects(); len(objs) != 0 {
		t.Errorf("objects of refused uploads: %v", objs)
	}
}

// pngHeader is the start of a PNG of w × h, 16 bits a channel, RGBA,
// interlaced or not: all DecodeConfig reads.
func pngHeader(w, h int, interlaced bool) []byte {
	var ihdr bytes.Buffer
	ihdr.WriteString("IHDR")
	binary.Write(&ihdr, binary.BigEndian, []uint32{uint32(w), uint32(h)})
	il := byte(0)
	if interlaced {
		il = 1
	}
	ihdr.Write([]byte{16, 6, 0, 0, il})
	var out bytes.Buffer
	out.WriteString("\x89PNG\r\n\x1a\n")
	binary.Write(&out, binary.BigEndian, uint32(ihdr.Len()-4))
	out.Write(ihdr.Bytes())
	binary.Write(&out, binary.BigEndian, crc32.ChecksumIEEE(ihdr.Bytes()))
	return out.Bytes()
}

// jpegHeader is the start of a JPEG of w × h, three components at 4:2:0,
// progressive, up to its first scan: all DecodeConfig reads.
func jpegHeader(w, h int) []byte {
	sof := []byte{0xFF, 0xD8, 0xFF, 0xC2, 0, 17, 8, byte(h >> 8), byte(h), byte(w >> 8), byte(w), 3, 1, 0x22, 0, 2, 0x11, 1, 3, 0x11, 1}
	return append(sof, 0xFF, 0xDA, 0, 8)
}

// The least memory an instance may give pictures takes a phone's photo
// at its worst (12 megapixels, progressive, turned); an instance with it
// refuses, at once and with why, what would take more, and a larger
// budget takes every picture.
func TestMinMemoryTakesAPhonePhoto(t *testing.T) {
	photo := withExif(jpegHeader(4032, 3024), 6, "")
	h, err := ReadHeader(photo)
	if err != nil {
		t.Fatal(err)
	}
	if need := h.Footprint(photo); need > MinMemory {
		t.Errorf("a 12-megapixel progressive photo, turned, takes %d MiB, over MinMemory's %d", need>>20, MinMemory>>20)
	}
	if MaxFootprint > DefaultMemory {
		t.Errorf("the default memory (%d MiB) does not take the largest picture (%d MiB)", DefaultMemory>>20, MaxFootprint>>20)
	}

	f := newFixture(t)
	s, err := New(f.db, f.s.ids, f.s.accounts, f.client, f.s.queue, f.s.Links, Config{Bucket: bucket, Memory: MinMemory})
	if err != nil {
		t.Fatal(err)
	}
	big := pngHeader(4096, 4096, true)
	if hb, err := ReadHeader(big); err != nil || hb.Footprint(big) <= MinMemory {
		t.Fatalf("a 16-bit PNG of 4096 × 4096: %v, want one over MinMemory", err)
	}
	_, err = s.UploadLater(context.Background(), f.user, UploadInput{Data: big})
	if status, msg := derrors.Status(err); status != 413 || !strings.Contains(msg, "more than this server gives one picture") {
		t.Fatalf("the upload over the budget: %d %q", status, msg)
	}
	if _, _, err := s.Upload(context.Background(), f.user, UploadInput{Data: big}); !errors.Is(err, derrors.TooLarge) {
		t.Fatalf("the upload over the budget, made safe at once: %v", err)
	}
	if objs := f.objects(); len(objs) != 0 {
		t.Errorf("objects of refused uploads: %v", objs)
	}
}

// An item deleted while its job made it safe (the delete's own job may
// have run before the job wrote the picture's objects): the job's end
// finds it gone and deletes every object it wrote.
func TestUploadLaterDeletedWhileMadeSafe(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	data := encodePNG(t, twoTone(8, 8))
	it, err := f.s.UploadLater(ctx, f.user, UploadInput{Data: data})
	if err != nil {
		t.Fatal(err)
	}
	pic, err := Process(data)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.s.Delete(ctx, f.user, it.ID, ""); err != nil { // and its objects, at once
		t.Fatal(err)
	}
	if err := f.s.write(ctx, it.ID, pic); err != nil { // the job's write, after
		t.Fatal(err)
	}
	if err := f.s.settle(ctx, it.ID, pic, ""); err != nil {
		t.Fatal(err)
	}
	if objs := f.objects(); len(objs) != 0 {
		t.Errorf("objects of the deleted item left: %v", objs)
	}
}
