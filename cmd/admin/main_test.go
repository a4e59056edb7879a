package main

import (
	"bytes"
	"context"
	"image"
	"image/jpeg"
	"net/url"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/datastore"

	"socialstream/internal/accounts"
	"socialstream/internal/activities"
	"socialstream/internal/gcsemu"
	"socialstream/internal/ids"
	"socialstream/internal/likes"
	"socialstream/internal/media"
	"socialstream/internal/push"
	"socialstream/internal/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

// The command names an admin by username in the Datastore the
// environment names, and refuses what it cannot do.
func TestRole(t *testing.T) {
	ctx := context.Background()
	db := testenv.DB(t)
	acc, err := accounts.New(db, ids.New(), accounts.Config{BcryptCost: 4})
	if err != nil {
		t.Fatal(err)
	}
	ann, _, err := acc.Register(ctx, "ann", "password-ann", "")
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"DATASTORE_PROJECT_ID": testenv.Project, "DATASTORE_EMULATOR_HOST": testenv.EmulatorHost(t), "DATASTORE_NAMESPACE": db.Namespace()}
	run := func(args ...string) (string, error) {
		var out strings.Builder
		err := realMain(ctx, args, func(k string) string { return env[k] }, &out)
		return out.String(), err
	}
	role := func() string {
		p, err := acc.Get(ctx, ann.ID)
		if err != nil {
			t.Fatal(err)
		}
		return p.Role
	}
	for _, args := range [][]string{{}, {"role", "ann"}, {"role", "ann", "king"}, {"grant", "ann", "admin"}, {"role", "no one", "admin"}, {"role", "nobody", "admin"}} {
		if _, err := run(args...); err == nil {
			t.Errorf("admin %q: no error", args)
		}
	}
	if out, err := run("role", "ANN", "admin"); err != nil || !strings.Contains(out, "admin") || role() != accounts.RoleAdmin {
		t.Fatalf("role ann admin: %q %v, role %q", out, err, role())
	}
	if _, err := run("role", "ann", "none"); err != nil || role() != "" {
		t.Fatalf("role ann none: %v, role %q", err, role())
	}
	delete(env, "DATASTORE_PROJECT_ID")
	if _, err := run("role", "ann", "admin"); err == nil {
		t.Errorf("no project: no error")
	}
}

// The rotation adds a key to the links' keyring, and says when the one it
// replaces may go.
func TestRotateKeyring(t *testing.T) {
	ctx := context.Background()
	db := testenv.DB(t)
	links := media.NewLinks(db, "")
	if _, err := links.Minter(ctx); err != nil { // the first key, as the first instance makes it
		t.Fatal(err)
	}
	env := map[string]string{"DATASTORE_PROJECT_ID": testenv.Project, "DATASTORE_EMULATOR_HOST": testenv.EmulatorHost(t), "DATASTORE_NAMESPACE": db.Namespace()}
	var out strings.Builder
	if err := realMain(ctx, []string{"rotate-link-key"}, func(k string) string { return env[k] }, &out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "2 in the ring") {
		t.Errorf("output %q", out.String())
	}
	if err := realMain(ctx, []string{"rotate-link-key", "now"}, func(k string) string { return env[k] }, &out); err == nil {
		t.Error("rotate-link-key with an argument: no error")
	}
}

// The push keys' rotation makes a new current key.
func TestRotatePushKey(t *testing.T) {
	ctx := context.Background()
	db := testenv.DB(t)
	before, err := push.NewKeys(db).Current(ctx)
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"DATASTORE_PROJECT_ID": testenv.Project, "DATASTORE_EMULATOR_HOST": testenv.EmulatorHost(t), "DATASTORE_NAMESPACE": db.Namespace()}
	var out strings.Builder
	if err := realMain(ctx, []string{"rotate-push-key"}, func(k string) string { return env[k] }, &out); err != nil {
		t.Fatal(err)
	}
	after, err := push.NewKeys(db).Current(ctx)
	if err != nil || after.Public == before.Public || !strings.Contains(out.String(), after.Public) || !strings.Contains(out.String(), "1 in the ring") {
		t.Errorf("rotation: output %q; the key %q then %q (%v)", out.String(), before.Public, after.Public, err)
	}
}

// The operator blocks a domain, lists the blocks and lifts one; what is
// not a domain is refused.
func TestDomainBlocks(t *testing.T) {
	ctx := context.Background()
	db := testenv.DB(t)
	env := map[string]string{"DATASTORE_PROJECT_ID": testenv.Project, "DATASTORE_EMULATOR_HOST": testenv.EmulatorHost(t), "DATASTORE_NAMESPACE": db.Namespace()}
	run := func(args ...string) (string, error) {
		var out strings.Builder
		err := realMain(ctx, args, func(k string) string { return env[k] }, &out)
		return out.String(), err
	}
	for _, args := range [][]string{{"block-domain", "https://bad.example"}, {"block-domain", "bad"}, {"unblock-domain"}, {"block-domain"}} {
		if _, err := run(args...); err == nil {
			t.Errorf("admin %q: no error", args)
		}
	}
	if _, err := run("block-domain", "Bad.Example", "spam", "waves"); err != nil {
		t.Fatal(err)
	}
	if out, err := run("domain-blocks"); err != nil || !strings.HasPrefix(out, "bad.example\t") || !strings.Contains(out, "spam waves") {
		t.Errorf("domain-blocks: %q %v", out, err)
	}
	if _, err := run("unblock-domain", "bad.example"); err != nil {
		t.Fatal(err)
	}
	if out, err := run("domain-blocks"); err != nil || out != "" {
		t.Errorf("after the unblock: %q %v", out, err)
	}
}

// A post stored before posts had search terms is found by its words once
// reindex-posts has written it again.
func TestReindexPosts(t *testing.T) {
	ctx := context.Background()
	db := testenv.DB(t)
	env := map[string]string{"DATASTORE_PROJECT_ID": testenv.Project, "DATASTORE_EMULATOR_HOST": testenv.EmulatorHost(t), "DATASTORE_NAMESPACE": db.Namespace()}
	id := ids.Format(ids.New().Next())
	old := datastore.PropertyList{ // as an older version stored it: no terms
		{Name: "userId", Value: "42"}, {Name: "title", Value: "hello old world", NoIndex: true},
		{Name: "visibility", Value: "public", NoIndex: true},
	}
	key := activities.Key(db, id)
	if err := db.Put(ctx, key, &old); err != nil {
		t.Fatal(err)
	}
	found := func() int {
		t.Helper()
		keys, err := db.GetAll(ctx, db.Query(activities.KindActivity).FilterField("terms", "=", "hello").KeysOnly(), nil)
		if err != nil {
			t.Fatal(err)
		}
		return len(keys)
	}
	if n := found(); n != 0 {
		t.Fatalf("before: %d found", n)
	}
	var out strings.Builder
	if err := realMain(ctx, []string{"reindex-posts"}, func(k string) string { return env[k] }, &out); err != nil || !strings.HasPrefix(out.String(), "1 posts") {
		t.Fatalf("reindex-posts: %q %v", out.String(), err)
	}
	if n := found(); n != 1 {
		t.Errorf("after: %d found, want 1", n)
	}
}

// A like stored before likes had places is listed among its liker's
// likes once reindex-likes has written it again.
func TestReindexLikes(t *testing.T) {
	ctx := context.Background()
	db := testenv.DB(t)
	env := map[string]string{"DATASTORE_PROJECT_ID": testenv.Project, "DATASTORE_EMULATOR_HOST": testenv.EmulatorHost(t), "DATASTORE_NAMESPACE": db.Namespace()}
	old := datastore.PropertyList{ // as an older version stored it: no places
		{Name: "activityId", Value: "7"}, {Name: "userId", Value: "42"}, {Name: "created", Value: time.Now().UTC()},
	}
	if err := db.Put(ctx, likes.LikeKey(db, "7", "42"), &old); err != nil {
		t.Fatal(err)
	}
	listed := func() []string {
		t.Helper()
		var got []string
		if err := likes.Each(ctx, db, "42", func(activity string, _ time.Time) error {
			got = append(got, activity)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return got
	}
	if got := listed(); len(got) != 0 {
		t.Fatalf("before: %v listed", got)
	}
	var out strings.Builder
	if err := realMain(ctx, []string{"reindex-likes"}, func(k string) string { return env[k] }, &out); err != nil || !strings.HasPrefix(out.String(), "1 likes") {
		t.Fatalf("reindex-likes: %q %v", out.String(), err)
	}
	if got := listed(); !slices.Equal(got, []string{"7"}) {
		t.Errorf("after: %v listed, want [7]", got)
	}
}

// A picture stored before thumbnails had a form for WebP is given it by
// webp-thumbnails, from the bucket the environment names.
func TestWebPThumbnails(t *testing.T) {
	ctx := context.Background()
	db := testenv.DB(t)
	const bucket = "admin-test"
	gcs, err := gcsemu.Start(0, bucket)
	if err != nil {
		t.Fatal(err)
	}
	defer gcs.Stop()
	endpoint, err := url.Parse(gcs.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	client, err := media.Dial(ctx, gcs.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	env := map[string]string{"DATASTORE_PROJECT_ID": testenv.Project, "DATASTORE_EMULATOR_HOST": testenv.EmulatorHost(t), "DATASTORE_NAMESPACE": db.Namespace()}
	run := func() (string, error) {
		var out strings.Builder
		err := realMain(ctx, []string{"webp-thumbnails"}, func(k string) string { return env[k] }, &out)
		return out.String(), err
	}
	if _, err := run(); err == nil {
		t.Error("webp-thumbnails with no MEDIA_BUCKET: no error")
	}
	env["MEDIA_BUCKET"], env["STORAGE_EMULATOR_HOST"] = bucket, endpoint.Host

	// An older version's picture: its record, and its thumbnail alone.
	id := ids.Format(ids.New().Next())
	if err := db.Put(ctx, media.ItemKey(db, id), &media.Item{UserID: "42", Created: time.Now()}); err != nil {
		t.Fatal(err)
	}
	img := image.NewYCbCr(image.Rect(0, 0, 400, 300), image.YCbCrSubsampleRatio420)
	for i := range img.Y {
		img.Y[i] = byte(i * 7919 % 251) // noise, which WebP makes smaller than JPEG
	}
	var thumb bytes.Buffer
	if err := jpeg.Encode(&thumb, img, &jpeg.Options{Quality: 85}); err != nil {
		t.Fatal(err)
	}
	objects := media.ObjectsOf(id) // the image, the thumbnail, its form for WebP
	w := client.Bucket(bucket).Object(objects[1]).NewWriter(ctx)
	w.ContentType = media.JPEG
	if _, err := w.Write(thumb.Bytes()); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if out, err := run(); err != nil || !strings.HasPrefix(out, "1 pictures") {
		t.Fatalf("webp-thumbnails: %q %v", out, err)
	}
	attrs, err := client.Bucket(bucket).Object(objects[2]).Attrs(ctx)
	if err != nil || attrs.ContentType != media.WebP {
		t.Fatalf("the form for WebP: %+v %v", attrs, err)
	}
	if out, err := run(); err != nil || !strings.HasPrefix(out, "0 pictures") {
		t.Errorf("webp-thumbnails again: %q %v", out, err)
	}
}
