package media

import (
	"context"
	"errors"
	"net/url"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"cloud.google.com/go/storage"
	"golang.org/x/crypto/bcrypt"

	"socialstream/internal/accounts"
	"socialstream/internal/derrors"
	"socialstream/internal/gcsemu"
	"socialstream/internal/ids"
	"socialstream/internal/queue"
	"socialstream/internal/store"
	"socialstream/internal/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

const bucket = "media-test"

// fixture is a Service on the test's Datastore namespace, a Cloud Storage
// emulator of its own and a tasks emulator, on a clock the test moves.
type fixture struct {
	t   *testing.T
	s   *Service
	db  *store.DB
	gcs *gcsemu.Emulator
	// client is the Cloud Storage client of the emulator.
	client *storage.Client
	clock  time.Time
	user   string
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	ctx := context.Background()
	db := testenv.DB(t)
	gcs, err := gcsemu.Start(0, bucket)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(gcs.Stop)
	client, err := Dial(ctx, gcs.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	gen := ids.New()
	acc, err := accounts.New(db, gen, accounts.Config{BcryptCost: bcrypt.MinCost})
	if err != nil {
		t.Fatal(err)
	}
	p, _, err := acc.Register(ctx, "ann", "password-ann", "")
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{t: t, db: db, gcs: gcs, client: client, clock: time.Now(), user: p.ID}
	links := NewLinks(db, "")
	links.now = func() time.Time { return f.clock }
	f.s, err = New(db, gen, acc, client, testenv.StartTasks(t).Queue, links, Config{Bucket: bucket})
	if err != nil {
		t.Fatal(err)
	}
	f.s.now = func() time.Time { return f.clock }
	return f
}

func (f *fixture) objects() []string {
	f.t.Helper()
	names, err := f.gcs.Objects(bucket, "")
	if err != nil {
		f.t.Fatal(err)
	}
	slices.Sort(names)
	return names
}

func (f *fixture) upload(in UploadInput) string {
	f.t.Helper()
	if in.Data == nil {
		in.Data = encodePNG(f.t, twoTone(8, 8))
	}
	_, id, err := f.s.Upload(context.Background(), f.user, in)
	if err != nil {
		f.t.Fatal(err)
	}
	return id
}

func TestUploadStoresBothObjectsAndARecord(t *testing.T) {
	f := newFixture(t)
	id := f.upload(UploadInput{Description: "  two colours  "})
	if got, want := f.objects(), ObjectsOf(id); !slices.Equal(got, want) {
		t.Fatalf("objects %v, want %v", got, want)
	}
	it, err := f.s.Item(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if it.UserID != f.user || it.Description != "two colours" || it.MimeType != PNG || it.Width != 8 || !it.loose() {
		t.Errorf("item %+v", it)
	}
}

func TestFailedUploadLeavesNothing(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	for _, in := range []UploadInput{
		{Data: []byte("not an image at all")},
		{Data: encodePNG(t, twoTone(4, 4)), Description: string(make([]rune, MaxDescription+1))},
		{Data: encodePNG(t, twoTone(4, 4)), AlbumID: ids.Format(12345)}, // no such album
	} {
		if _, _, err := f.s.Upload(ctx, f.user, in); err == nil {
			t.Fatal("the upload was taken")
		}
	}
	// An account deleted meanwhile: the objects are written, the record
	// is refused, and the objects go at once.
	if _, _, err := f.s.Upload(ctx, ids.Format(999), UploadInput{Data: encodePNG(t, twoTone(4, 4))}); !errors.Is(err, accounts.ErrBadToken) {
		t.Fatalf("an upload by nobody: %v", err)
	}
	n, err := f.db.Count(ctx, f.db.Query(KindItem).KeysOnly())
	if err != nil {
		t.Fatal(err)
	}
	if got := f.objects(); n != 0 || len(got) != 0 {
		t.Fatalf("%d records and objects %v", n, got)
	}
	// Objects whose record never came (a commit that failed, or whose
	// outcome was not known): their collection, a day later, takes them.
	pic, err := Process(encodePNG(t, twoTone(4, 4)))
	if err != nil {
		t.Fatal(err)
	}
	id := ids.Format(4242)
	if err := f.s.write(ctx, id, pic); err != nil {
		t.Fatal(err)
	}
	f.clock = f.clock.Add(LooseFor + time.Minute)
	if did, err := f.s.Run(ctx, Task{Op: OpCollect, ID: id}); err != nil || did != "collected" {
		t.Fatalf("collect: %q %v", did, err)
	}
	if got := f.objects(); len(got) != 0 {
		t.Errorf("objects left: %v", got)
	}
}

func TestCollectTakesLooseItemsAfterADay(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	loose := f.upload(UploadInput{})
	albumID, _, err := f.s.CreateAlbum(ctx, f.user, AlbumInput{Title: ptr("trip")})
	if err != nil {
		t.Fatal(err)
	}
	kept := f.upload(UploadInput{AlbumID: albumID})

	// Early: nothing goes.
	if did, err := f.s.Run(ctx, Task{Op: OpCollect, ID: loose}); err != nil || did != "kept" {
		t.Fatalf("early collect: %q %v", did, err)
	}
	f.clock = f.clock.Add(LooseFor)
	for _, id := range []string{loose, kept} {
		for range 2 { // twice: a job may run again
			if _, err := f.s.Run(ctx, Task{Op: OpCollect, ID: id}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if got, want := f.objects(), ObjectsOf(kept); !slices.Equal(got, want) {
		t.Errorf("objects %v, want the album's alone %v", got, want)
	}
	if _, err := f.s.Item(ctx, loose); !errors.Is(err, ErrNoSuchItem) {
		t.Errorf("the loose item's record: %v", err)
	}
}

// The scheduled collection takes what stayed loose past its day and an
// hour (its own job gave up), and nothing that belongs somewhere: in an
// album, moved into one, or on an activity.
func TestScheduledCollectionTakesWhatItsJobLeft(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	albumID, _, err := f.s.CreateAlbum(ctx, f.user, AlbumInput{Title: ptr("trip")})
	if err != nil {
		t.Fatal(err)
	}
	left := []string{f.upload(UploadInput{}), f.upload(UploadInput{})}
	inAlbum := f.upload(UploadInput{AlbumID: albumID})
	moved := f.upload(UploadInput{})
	if _, err := f.s.Move(ctx, f.user, moved, albumID); err != nil {
		t.Fatal(err)
	}
	attached := f.upload(UploadInput{})
	err = f.db.Update(ctx, func(tx *store.Tx) error {
		l := tx.Lookup()
		check := ReadLoose(l, []string{attached}, "")
		if err := l.Run(ctx); err != nil {
			return err
		}
		keys, puts, _, err := check(f.user)
		if err != nil {
			return err
		}
		SetActivity(puts, ids.Format(777))
		return tx.PutMulti(keys, puts)
	})
	if err != nil {
		t.Fatal(err)
	}
	collect := func(n int) int {
		t.Helper()
		got, err := f.s.CollectLoose(ctx, n)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	f.clock = f.clock.Add(LooseFor)
	if n := collect(10); n != 0 {
		t.Fatalf("collected %d within the hour their own jobs have", n)
	}
	f.clock = f.clock.Add(time.Hour + time.Second)
	if n := collect(1); n != 1 {
		t.Fatalf("collected %d of a batch of 1", n)
	}
	if n := collect(10); n != 1 {
		t.Fatalf("collected %d of the one left loose", n)
	}
	if n := collect(10); n != 0 {
		t.Fatalf("collected %d once none is loose", n)
	}
	// What belongs somewhere is in the index of the loose no more, so
	// the hourly query reads none of it.
	if n, err := f.db.Count(ctx, f.db.Query(KindItem).FilterField("loose", ">", 0).KeysOnly()); err != nil || n != 0 {
		t.Errorf("%d items still indexed as loose (%v)", n, err)
	}
	var want []string
	for _, id := range []string{inAlbum, moved, attached} {
		want = append(want, ObjectsOf(id)...)
	}
	slices.Sort(want)
	if got := f.objects(); !slices.Equal(got, want) {
		t.Errorf("objects %v, want those of the pictures that belong somewhere %v", got, want)
	}
	for _, id := range left {
		if _, err := f.s.Item(ctx, id); !errors.Is(err, ErrNoSuchItem) {
			t.Errorf("the loose item %s's record: %v", id, err)
		}
	}
}

func TestDeleteAlbumTakesItsItems(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	albumID, _, err := f.s.CreateAlbum(ctx, f.user, AlbumInput{Title: ptr("trip")})
	if err != nil {
		t.Fatal(err)
	}
	in := f.upload(UploadInput{AlbumID: albumID})
	moved := f.upload(UploadInput{})
	if _, err := f.s.Move(ctx, f.user, moved, albumID); err != nil {
		t.Fatal(err)
	}
	// A move tried again (its answer lost) changes nothing more.
	if _, err := f.s.Move(ctx, f.user, moved, albumID); err != nil {
		t.Fatalf("the move again: %v", err)
	}
	other := f.upload(UploadInput{})
	a, err := f.s.AlbumOf(ctx, f.user, albumID)
	if err != nil || a.Count != 2 || a.Cover != moved {
		t.Fatalf("album %+v %v", a, err)
	}
	// The job, come before the delete's commit, waits for it.
	if _, err := f.s.Run(ctx, Task{Op: OpAlbum, ID: albumID, At: f.clock.UnixMicro()}); !errors.Is(err, derrors.Unavailable) {
		t.Fatalf("early album job: %v", err)
	}
	if err := f.s.DeleteAlbum(ctx, f.user, albumID); err != nil {
		t.Fatal(err)
	}
	if _, err := f.s.Run(ctx, Task{Op: OpAlbum, ID: albumID}); err != nil {
		t.Fatal(err)
	}
	if got, want := f.objects(), ObjectsOf(other); !slices.Equal(got, want) {
		t.Errorf("objects %v, want %v", got, want)
	}
	for _, id := range []string{in, moved} {
		if _, err := f.s.Item(ctx, id); !errors.Is(err, ErrNoSuchItem) {
			t.Errorf("item %s: %v", id, err)
		}
	}
}

func TestDeletedItemsJob(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	kept := f.upload(UploadInput{})
	// A delete's job that comes before the commit waits for it; once it
	// has waited long enough, the delete never happened and the objects
	// stay.
	early := Task{Op: OpCollect, ID: kept, Deleted: true, At: f.clock.UnixMicro()}
	if _, err := f.s.Run(ctx, early); !errors.Is(err, derrors.Unavailable) {
		t.Fatalf("before the delete's commit: %v", err)
	}
	f.clock = f.clock.Add(queue.GiveUpAfter)
	if did, err := f.s.Run(ctx, early); err != nil || did != "the item was never deleted" {
		t.Fatalf("after giving up: %q %v", did, err)
	}
	if got, want := f.objects(), ObjectsOf(kept); !slices.Equal(got, want) {
		t.Fatalf("objects %v, want %v", got, want)
	}
	// A delete: the objects go at once, and its job, run again, finds
	// nothing left to do.
	if err := f.s.Delete(ctx, f.user, kept, ""); err != nil {
		t.Fatal(err)
	}
	if got := f.objects(); len(got) != 0 {
		t.Fatalf("objects after the delete: %v", got)
	}
	for range 2 {
		if did, err := f.s.Run(ctx, Task{Op: OpCollect, ID: kept, Deleted: true, At: f.clock.UnixMicro()}); err != nil || did != "collected" {
			t.Fatalf("the delete's job: %q %v", did, err)
		}
	}
	// Nobody else's (one on an activity: the API's tests).
	if err := f.s.Delete(ctx, ids.Format(999), f.upload(UploadInput{}), ""); !errors.Is(err, ErrNoSuchItem) {
		t.Errorf("someone else's delete: %v", err)
	}
}

func TestEraseTakesEverything(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	albumID, _, err := f.s.CreateAlbum(ctx, f.user, AlbumInput{Title: ptr("trip")})
	if err != nil {
		t.Fatal(err)
	}
	f.upload(UploadInput{AlbumID: albumID})
	f.upload(UploadInput{})
	total := 0
	for {
		n, err := f.s.Erase(ctx, f.user, 2) // a small budget: it hands on
		if err != nil {
			t.Fatal(err)
		}
		total += n
		if n < 2 {
			break
		}
	}
	if total != 3 || len(f.objects()) != 0 {
		t.Errorf("erased %d, objects left %v", total, f.objects())
	}
	if _, err := f.s.AlbumOf(ctx, f.user, albumID); !errors.Is(err, ErrNoSuchAlbum) {
		t.Errorf("album: %v", err)
	}
}

func TestLinks(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	m, err := f.s.Links.Minter(ctx)
	if err != nil {
		t.Fatal(err)
	}
	id := ids.Format(777)
	v := m.Attached(Attached{ID: id})
	check := func(link string) error {
		u, err := url.Parse(link)
		if err != nil {
			return err
		}
		_, err = f.s.Links.Check(ctx, id, VariantImage, u.Query().Get("e"), u.Query().Get("s"))
		return err
	}
	if err := check(v.URL); err != nil {
		t.Fatalf("a fresh link: %v", err)
	}
	if err := check(v.ThumbnailURL); err == nil {
		t.Error("a thumbnail's signature opens the image")
	}
	// Another instance reads the same key.
	other := NewLinks(f.db, "")
	m2, err := other.Minter(ctx)
	if err != nil || m2.Attached(Attached{ID: id}).URL != v.URL {
		t.Errorf("another instance's link %v", err)
	}
	f.clock = f.clock.Add(LinkLife + LinkStep)
	if err := check(v.URL); !errors.Is(err, derrors.PermissionDenied) {
		t.Errorf("an ended link: %v", err)
	}
}

func ptr[T any](v T) *T { return &v }

// A rotation adds a key every instance checks before any signs with it:
// links of the old key keep working until they end, the new key signs
// once it starts, and the old one is dropped once its links have all
// ended; two keys are valid at once meanwhile, never a link refused that
// should work.
func TestLinkKeyRotation(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	id := ids.Format(777)
	// Two instances, one on the fixture's clock, one on its own a little
	// behind in reading the ring.
	a := f.s.Links
	b := NewLinks(f.db, "")
	b.now = func() time.Time { return f.clock }
	mint := func(l *Links) string {
		t.Helper()
		m, err := l.Minter(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return m.Attached(Attached{ID: id}).URL
	}
	check := func(l *Links, link string) error {
		t.Helper()
		u, err := url.Parse(link)
		if err != nil {
			t.Fatal(err)
		}
		_, err = l.Check(ctx, id, VariantImage, u.Query().Get("e"), u.Query().Get("s"))
		return err
	}
	old := mint(a)
	ring, err := a.keyring(ctx)
	if err != nil || len(ring) != 1 {
		t.Fatalf("the first keyring %d keys, %v", len(ring), err)
	}
	first := ring[0]
	if err := check(b, old); err != nil {
		t.Fatalf("the other instance refuses a link: %v", err)
	}
	rot, err := RotateKeyring(ctx, f.db, f.clock)
	if err != nil || rot.Kept != 2 || rot.Dropped != 0 || !rot.Starts.Equal(f.clock.Add(2*KeyRefresh)) {
		t.Fatalf("rotation %+v, %v", rot, err)
	}
	// signedBy reports whether link is signed with key.
	signedBy := func(link string, key signingKey) bool {
		u, err := url.Parse(link)
		if err != nil {
			t.Fatal(err)
		}
		end, _ := strconv.ParseInt(u.Query().Get("e"), 10, 64)
		return u.Query().Get("s") == sign(key.key, id, VariantImage, end)
	}
	// Before it starts, links are still signed with the old key.
	f.clock = f.clock.Add(KeyRefresh + time.Second)
	if got := mint(a); !signedBy(got, first) {
		t.Errorf("a link before the new key starts %s is not signed with the old key", got)
	}
	// Once it starts, the new key signs; every instance, having read the
	// ring since, checks both keys' links.
	f.clock = rot.Starts.Add(time.Second)
	fresh := mint(b)
	if signedBy(fresh, first) {
		t.Fatalf("a link after the new key starts %s is signed with the old key", fresh)
	}
	for _, link := range []string{old, fresh} {
		for _, l := range []*Links{a, b} {
			if err := check(l, link); err != nil {
				t.Errorf("%s: %v", link, err)
			}
		}
	}
	// A rotation too soon keeps the old key; once the old key's links
	// have all ended, the next rotation drops it.
	if rot, err := RotateKeyring(ctx, f.db, f.clock); err != nil || rot.Dropped != 0 || rot.Kept != 3 {
		t.Fatalf("a second rotation at once: %+v, %v", rot, err)
	}
	f.clock = f.clock.Add(KeyRefresh + LinkLife + LinkStep)
	rot, err = RotateKeyring(ctx, f.db, f.clock)
	if err != nil || rot.Dropped != 1 || rot.Kept != 3 {
		t.Fatalf("the rotation after the old key's links ended: %+v, %v", rot, err)
	}
	f.clock = f.clock.Add(KeyRefresh)
	end := f.clock.Add(time.Hour).Unix()
	if _, err := a.Check(ctx, id, VariantImage, strconv.FormatInt(end, 10), sign(first.key, id, VariantImage, end)); !errors.Is(err, errBadLink) {
		t.Errorf("a link of the dropped key: %v, want it refused", err)
	}
}
