// Command admin is the operator's tool for what no API call may do for
// itself: naming the first admin of a deployment (after which admins
// grant roles through the API), rotating the keys that sign the links to
// pictures and the Web Push messages, and the steps an upgrade asks for
// (posts and likes written again, pictures' thumbnails given their form
// for WebP). It works on the Datastore the server uses, from the
// same environment: GOOGLE_CLOUD_PROJECT (or DATASTORE_PROJECT_ID),
// DATASTORE_NAMESPACE, and DATASTORE_EMULATOR_HOST for an emulator.
//
//	go run ./cmd/admin role USERNAME admin|moderator|none
//	go run ./cmd/admin rotate-link-key
//	go run ./cmd/admin rotate-push-key
//	go run ./cmd/admin block-domain DOMAIN [REASON]
//	go run ./cmd/admin unblock-domain DOMAIN
//	go run ./cmd/admin domain-blocks
//	go run ./cmd/admin reindex-posts
//	go run ./cmd/admin reindex-likes
//	go run ./cmd/admin webp-thumbnails
//
// webp-thumbnails also reads MEDIA_BUCKET, and STORAGE_EMULATOR_HOST for
// an emulator.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"socialstream/internal/accounts"
	"socialstream/internal/activities"
	"socialstream/internal/federation"
	"socialstream/internal/ids"
	"socialstream/internal/likes"
	"socialstream/internal/media"
	"socialstream/internal/moderation"
	"socialstream/internal/push"
	"socialstream/internal/store"
)

const usage = "usage: admin role USERNAME admin|moderator|none\n       admin rotate-link-key\n       admin rotate-push-key\n" +
	"       admin block-domain DOMAIN [REASON]\n       admin unblock-domain DOMAIN\n       admin domain-blocks\n       admin reindex-posts\n       admin reindex-likes\n" +
	"       admin webp-thumbnails"

func main() {
	if err := realMain(context.Background(), os.Args[1:], os.Getenv, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "admin:", err)
		os.Exit(1)
	}
}

func realMain(ctx context.Context, args []string, getenv func(string) string, out io.Writer) error {
	switch {
	case len(args) == 3 && args[0] == "role":
		return setRole(ctx, args[1], args[2], getenv, out)
	case len(args) == 1 && args[0] == "rotate-link-key":
		return withDB(ctx, getenv, func(db *store.DB) error {
			rot, err := media.RotateKeyring(ctx, db, time.Now())
			if err != nil {
				return err
			}
			fmt.Fprintf(out, "a new key signs the links to pictures from %s; the old keys check them until they end.\n"+
				"dropped %d keys whose links have all ended; %d in the ring. Run it again after %s to drop the one it replaced.\n",
				rot.Starts.UTC().Format(time.RFC3339), rot.Dropped, rot.Kept, rot.Starts.Add(media.KeyRefresh+media.LinkLife+media.LinkStep).UTC().Format(time.RFC3339))
			return nil
		})
	case len(args) == 1 && args[0] == "rotate-push-key":
		return withDB(ctx, getenv, func(db *store.DB) error {
			rot, err := push.RotateKeys(ctx, db, time.Now())
			if err != nil {
				return err
			}
			fmt.Fprintf(out, "a new VAPID key %s: new subscriptions are made with it within %s; those made before keep theirs.\n"+
				"dropped %d older keys no subscription names; %d in the ring. Run it again later to drop the ones apps have left.\n",
				rot.Public, push.KeyRefresh, rot.Dropped, rot.Kept)
			return nil
		})
	case len(args) >= 2 && args[0] == "block-domain":
		return withDB(ctx, getenv, func(db *store.DB) error {
			if err := federation.BlockDomain(ctx, db, args[1], strings.Join(args[2:], " "), time.Now()); err != nil {
				return err
			}
			fmt.Fprintf(out, "%s is blocked: every instance refuses its requests and sends it nothing within %s.\n", args[1], federation.BlockRefresh)
			return nil
		})
	case len(args) == 2 && args[0] == "unblock-domain":
		return withDB(ctx, getenv, func(db *store.DB) error {
			if err := federation.UnblockDomain(ctx, db, args[1]); err != nil {
				return err
			}
			fmt.Fprintf(out, "%s is no longer blocked (within %s on every instance).\n", args[1], federation.BlockRefresh)
			return nil
		})
	case len(args) == 1 && args[0] == "reindex-posts":
		return withDB(ctx, getenv, func(db *store.DB) error {
			return reindex(ctx, db, out, activities.Reindex, "posts", "each is found by its words, and counted by its author's featured hashtags")
		})
	case len(args) == 1 && args[0] == "reindex-likes":
		return withDB(ctx, getenv, func(db *store.DB) error {
			return reindex(ctx, db, out, likes.Reindex, "likes", "each is listed among its post's likes and its liker's")
		})
	case len(args) == 1 && args[0] == "webp-thumbnails":
		return withDB(ctx, getenv, func(db *store.DB) error { return webpThumbnails(ctx, db, getenv, out) })
	case len(args) == 1 && args[0] == "domain-blocks":
		return withDB(ctx, getenv, func(db *store.DB) error {
			blocks, err := federation.BlockedDomains(ctx, db)
			if err != nil {
				return err
			}
			for _, b := range blocks {
				fmt.Fprintf(out, "%s\t%s\t%s\n", b.Domain, b.Created.Format(time.RFC3339), b.Reason)
			}
			return nil
		})
	}
	return errors.New(usage)
}

// webpThumbnails gives every picture stored before thumbnails had a form
// for WebP that form (media.FillWebP), and says how many it gave it.
func webpThumbnails(ctx context.Context, db *store.DB, getenv func(string) string, out io.Writer) error {
	bucket := getenv("MEDIA_BUCKET")
	if bucket == "" {
		return errors.New("MEDIA_BUCKET names the bucket of the pictures")
	}
	endpoint := ""
	if host := getenv("STORAGE_EMULATOR_HOST"); host != "" {
		endpoint = "http://" + host + "/storage/v1/"
	}
	client, err := media.Dial(ctx, endpoint)
	if err != nil {
		return err
	}
	defer client.Close()
	total, cursor := 0, ""
	for {
		n, next, err := media.FillWebP(ctx, db, client.Bucket(bucket), cursor, 500)
		total += n
		if err != nil {
			return fmt.Errorf("after %d pictures: %w", total, err)
		}
		if next == "" {
			fmt.Fprintf(out, "%d pictures given a thumbnail for the clients that take WebP; the rest had one.\n", total)
			return nil
		}
		cursor = next
	}
}

// reindex runs one of the reindexing steps (activities.Reindex,
// likes.Reindex) until it has written every entity of what, and says so.
func reindex(ctx context.Context, db *store.DB, out io.Writer, step func(context.Context, *store.DB, string, int) (int, string, error), what, done string) error {
	total, cursor := 0, ""
	for {
		n, next, err := step(ctx, db, cursor, 1000)
		total += n
		if err != nil {
			return fmt.Errorf("after %d %s: %w", total, what, err)
		}
		if next == "" {
			fmt.Fprintf(out, "%d %s written again: %s.\n", total, what, done)
			return nil
		}
		cursor = next
	}
}

// withDB runs f on the Datastore the environment names.
func withDB(ctx context.Context, getenv func(string) string, f func(*store.DB) error) error {
	db, closeDB, err := open(ctx, getenv)
	if err != nil {
		return err
	}
	defer closeDB()
	return f(db)
}

// open opens the Datastore the environment names.
func open(ctx context.Context, getenv func(string) string) (*store.DB, func(), error) {
	project := getenv("GOOGLE_CLOUD_PROJECT")
	if project == "" {
		project = getenv("DATASTORE_PROJECT_ID")
	}
	if project == "" {
		return nil, nil, errors.New("GOOGLE_CLOUD_PROJECT (or DATASTORE_PROJECT_ID) names the project")
	}
	client, err := store.Open(ctx, project, getenv("DATASTORE_EMULATOR_HOST"))
	if err != nil {
		return nil, nil, err
	}
	db, err := store.New(client, getenv("DATASTORE_NAMESPACE"))
	if err != nil {
		client.Close()
		return nil, nil, err
	}
	return db, func() { client.Close() }, nil
}

// setRole gives the person named name role.
func setRole(ctx context.Context, name, role string, getenv func(string) string, out io.Writer) error {
	switch role {
	case accounts.RoleAdmin, accounts.RoleModerator:
	case "none":
		role = ""
	default:
		return fmt.Errorf("unknown role %q\n%s", role, usage)
	}
	if accounts.ValidateUsername(name) != nil {
		return fmt.Errorf("%q is not a username", name)
	}
	db, closeDB, err := open(ctx, getenv)
	if err != nil {
		return err
	}
	defer closeDB()
	found, err := accounts.UserIDsByName(ctx, db, []string{name})
	if err != nil {
		return err
	}
	id, ok := found[strings.ToLower(name)]
	if !ok {
		return fmt.Errorf("no person is named %q", name)
	}
	if err := moderation.SetRole(ctx, db, ids.New(), id, role); err != nil {
		return err
	}
	if role == "" {
		role = "none"
	}
	fmt.Fprintf(out, "%s (%s) now has role %s\n", name, id, role)
	return nil
}
