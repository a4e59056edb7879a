// Command costmodel prints what a workload costs on Firestore in Datastore
// mode with this service's design, and beside it fan-out on write into
// Redis (Mastodon's home timelines) and pull (a query per followee), per
// day and per month.
//
//	go run ./cmd/costmodel                       # the three communities of the README
//	go run ./cmd/costmodel -preset million -posts 5 -retention-days 7
//	go run ./cmd/costmodel -measure-redis        # the Redis figures, measured (needs redis-server)
//	go run ./cmd/costmodel -database-location nam5   # the database in the multi-region nam5
//
// The per-operation figures are the billing meter's (feedbench -bill);
// the workload is an assumption, set by flags.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"

	"socialstream/internal/costmodel"
)

func main() {
	if err := run(context.Background(), os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "costmodel:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("costmodel", flag.ContinueOnError)
	preset := fs.String("preset", "", "one workload of: "+presetNames()+" (default all three)")
	measure := fs.Bool("measure-redis", false, "measure Redis's memory per home entry and its delivery rate, and stop")
	prices := costmodel.Regional
	fs.Func("database-location", "the database's location, whose prices the bill takes: "+locationNames()+" (default "+costmodel.Regional.Location+")",
		func(s string) error {
			p, ok := costmodel.Locations[s]
			if !ok {
				return fmt.Errorf("want one of %s", locationNames())
			}
			prices = p
			return nil
		})
	var sets []func(*costmodel.Workload)
	num := func(name, usage string, field func(*costmodel.Workload) *float64) {
		fs.Func(name, usage, func(s string) error {
			v, err := strconv.ParseFloat(s, 64)
			if err != nil || v < 0 {
				return fmt.Errorf("want a number at least 0")
			}
			sets = append(sets, func(w *costmodel.Workload) { *field(w) = v })
			return nil
		})
	}
	num("people", "people", func(w *costmodel.Workload) *float64 { return &w.People })
	num("active", "share of people active in a day (0..1)", func(w *costmodel.Workload) *float64 { return &w.Active })
	num("following", "people an ordinary person follows", func(w *costmodel.Workload) *float64 { return &w.Following })
	num("celebrities", "people with -celebrity-followers each", func(w *costmodel.Workload) *float64 { return &w.Celebrities })
	num("celebrity-followers", "followers of each celebrity", func(w *costmodel.Workload) *float64 { return &w.CelebrityFollowers })
	num("celebrity-posts", "posts a day of each celebrity", func(w *costmodel.Workload) *float64 { return &w.CelebrityPosts })
	num("celebrity-threshold", "CELEBRITY_FOLLOWERS: followers past which posts are merged into homes as read (0: off)", func(w *costmodel.Workload) *float64 { return &w.CelebrityThreshold })
	num("posts", "posts a day of an active person", func(w *costmodel.Workload) *float64 { return &w.Posts })
	num("home-pages", "home pages a day of an active person", func(w *costmodel.Workload) *float64 { return &w.HomePages })
	num("other-pages", "other feed pages a day of an active person", func(w *costmodel.Workload) *float64 { return &w.OtherPages })
	num("likes", "likes a day of an active person", func(w *costmodel.Workload) *float64 { return &w.Likes })
	num("follows", "follows a day of an active person", func(w *costmodel.Workload) *float64 { return &w.Follows })
	num("retention-days", "HOME_RETENTION in days (0: for ever)", func(w *costmodel.Workload) *float64 { return &w.RetentionDays })
	num("peak", "the busiest second over the mean", func(w *costmodel.Workload) *float64 { return &w.Peak })
	num("cache-ttl", "PAGE_CACHE_TTL in seconds (0: no page cache)", func(w *costmodel.Workload) *float64 { return &w.CacheTTL })
	num("cache-sync", "PAGE_CACHE_SYNC in seconds", func(w *costmodel.Workload) *float64 { return &w.CacheSync })
	num("mark-shards", "PAGE_CACHE_SHARDS (0: as many as the workload needs)", func(w *costmodel.Workload) *float64 { return &w.MarkShards })
	num("shared-cache", "1: a cache tier the instances share (PAGE_CACHE_REDIS), 0: none", func(w *costmodel.Workload) *float64 { return &w.SharedCache })
	num("local-cache", "with -shared-cache 1: 1 keeps a cache on each instance too, 0 none (PAGE_CACHE_LOCAL=off: no marks of changes)", func(w *costmodel.Workload) *float64 { return &w.LocalCache })
	num("picture-share", "share of posts with a picture (0..1)", func(w *costmodel.Workload) *float64 { return &w.PictureShare })
	num("picture-bytes", "bytes of a picture as kept, sent whole when opened (default: a 12-megapixel photo kept at media.KeptPixels)", func(w *costmodel.Workload) *float64 { return &w.ImageBytes })
	num("fresh-share", "share of a page's items an app has not fetched before (0..1)", func(w *costmodel.Workload) *float64 { return &w.FreshShare })
	num("open-share", "share of thumbnails seen whose picture is opened (0..1)", func(w *costmodel.Workload) *float64 { return &w.OpenShare })
	num("webp-share", "share of thumbnails fetched that are sent in WebP (0..1)", func(w *costmodel.Workload) *float64 { return &w.WebPShare })
	num("words", "words a post past the meter's, each a search term", func(w *costmodel.Workload) *float64 { return &w.Words })
	num("searches", "searches of posts a day of an active person", func(w *costmodel.Workload) *float64 { return &w.Searches })
	num("tags", "share of posts with hashtags (3 each), each counted toward trends", func(w *costmodel.Workload) *float64 { return &w.TagShare })
	num("trend-pages", "trends pages a day of an active person", func(w *costmodel.Workload) *float64 { return &w.TrendPages })
	num("fed-inboxes", "other servers' inboxes a post goes to, on average (federation)", func(w *costmodel.Workload) *float64 { return &w.FedInboxes })
	num("fed-posts", "posts taken from other servers a day, for each active person", func(w *costmodel.Workload) *float64 { return &w.FedPosts })
	num("fed-reach", "people here each post from another server reaches", func(w *costmodel.Workload) *float64 { return &w.FedReach })
	num("fed-follows", "follows from other servers a day, for each active person", func(w *costmodel.Workload) *float64 { return &w.FedFollows })
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if *measure {
		return measureRedis(ctx, out)
	}
	var ws []costmodel.Workload
	for _, w := range costmodel.Presets {
		if *preset == "" || w.Name == *preset {
			ws = append(ws, w)
		}
	}
	if len(ws) == 0 {
		return fmt.Errorf("no preset %q (%s)", *preset, presetNames())
	}
	for i := range ws {
		for _, set := range sets {
			set(&ws[i])
		}
	}
	results := make([]costmodel.Result, len(ws))
	for i, w := range ws {
		results[i] = costmodel.Model(w, prices)
	}
	Report(out, results, prices)
	return nil
}

func locationNames() string {
	return strings.Join(slices.Sorted(maps.Keys(costmodel.Locations)), ", ")
}

func presetNames() string {
	var names []string
	for _, w := range costmodel.Presets {
		names = append(names, strconv.Quote(w.Name))
	}
	return strings.Join(names, ", ")
}
