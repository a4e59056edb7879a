package store_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"strings"
	"testing"

	"cloud.google.com/go/datastore"

	"socialstream/internal/store"
	"socialstream/internal/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

type item struct {
	N int `datastore:"n"`
}

func TestPageWalksAllWithCursors(t *testing.T) {
	db := testenv.DB(t)
	ctx := context.Background()
	const total = 23
	keys := make([]*datastore.Key, total)
	items := make([]item, total)
	for i := range keys {
		keys[i] = db.NameKey("Item", fmt.Sprintf("k%02d", i), nil)
		items[i] = item{i}
	}
	if err := db.PutMulti(ctx, keys, items); err != nil {
		t.Fatal(err)
	}
	var got []int
	req := store.PageRequest{Count: 10}
	pages := 0
	for {
		_, vals, next, err := store.Page[item](ctx, db, db.Query("Item").Order("-n"), "items", req)
		if err != nil {
			t.Fatal(err)
		}
		pages++
		for _, v := range vals {
			got = append(got, v.N)
		}
		if next == "" {
			break
		}
		req.Cursor = next
	}
	if pages != 3 || len(got) != total {
		t.Fatalf("%d pages, %d items; want 3, %d", pages, len(got), total)
	}
	for i, n := range got {
		if n != total-1-i {
			t.Fatalf("item %d = %d, want %d", i, n, total-1-i)
		}
	}

	// An exact multiple has no empty last page.
	_, vals, next, err := store.Page[item](ctx, db, db.Query("Item").Order("-n"), "items", store.PageRequest{Count: 23})
	if err != nil || len(vals) != 23 || next != "" {
		t.Errorf("full page: %d items, next %q, err %v", len(vals), next, err)
	}
	// Offset paging.
	_, vals, _, err = store.Page[item](ctx, db, db.Query("Item").Order("-n"), "items", store.PageRequest{Count: 5, Offset: 20})
	if err != nil || len(vals) != 3 || vals[0].N != 2 {
		t.Errorf("offset 20: %v, %v", vals, err)
	}
	// A cursor of another query is refused.
	_, _, next, _ = store.Page[item](ctx, db, db.Query("Item").Order("-n"), "items", store.PageRequest{Count: 5})
	if _, _, _, err := store.Page[item](ctx, db, db.Query("Item").Order("-n"), "other", store.PageRequest{Count: 5, Cursor: next}); err != store.ErrBadCursor {
		t.Errorf("cursor replayed on another tag: %v, want ErrBadCursor", err)
	}
	// Our envelope around bytes Datastore never made: still the client's
	// error, for a page and for a job's cursor.
	for _, junk := range []string{"garbage", "\x00\x01\xff\xfe", strings.Repeat("Z", 300)} {
		forged := base64.RawURLEncoding.EncodeToString([]byte("items\x00" + base64.URLEncoding.EncodeToString([]byte(junk))))
		if _, _, _, err := store.Page[item](ctx, db, db.Query("Item").Order("-n"), "items", store.PageRequest{Count: 5, Cursor: forged}); err != store.ErrBadCursor {
			t.Errorf("envelope around %q: %v, want ErrBadCursor", junk, err)
		}
		if _, _, err := db.KeysFrom(ctx, db.Query("Item").Order("-n").KeysOnly(), base64.URLEncoding.EncodeToString([]byte(junk)), 5); err != store.ErrBadCursor {
			t.Errorf("job cursor %q: %v, want ErrBadCursor", junk, err)
		}
	}
}

func FuzzDecodeCursor(f *testing.F) {
	c, _ := datastore.DecodeCursor("")
	f.Add("feed:1", store.EncodeCursor("feed:1", c))
	f.Add("feed:1", "")
	f.Add("feed:1", "!!!")
	f.Add("feed:1", "ZmVlZDoxAA")
	f.Add("x", "eAB4")
	f.Fuzz(func(t *testing.T, tag, s string) {
		cur, err := store.DecodeCursor(tag, s)
		if err != nil {
			if err != store.ErrBadCursor {
				t.Fatalf("error %v is not ErrBadCursor", err)
			}
			return
		}
		// A cursor that decodes re-encodes to one that decodes the same.
		again, err := store.DecodeCursor(tag, store.EncodeCursor(tag, cur))
		if err != nil || again.String() != cur.String() {
			t.Fatalf("round trip of %q: %v", s, err)
		}
	})
}
