package main

import (
	"context"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"runtime/pprof"
	"slices"
	"strings"
	"time"
)

type machine struct {
	OS   string `json:"os"`
	Arch string `json:"arch"`
	CPUs int    `json:"cpus"`
	Go   string `json:"go"`
	Date string `json:"date"`
	Args string `json:"args"`
}

type callRow struct {
	Op    string         `json:"op"`
	Calls map[string]int `json:"calls"`
}

type homeRow struct {
	Clients int  `json:"clients"`
	Ours    dist `json:"ours"`
	Floor   dist `json:"floor"`
	// Mean time of one Datastore call, by method.
	OursCallMs  map[string]float64 `json:"oursCallMs"`
	FloorCallMs map[string]float64 `json:"floorCallMs"`
	RatioP50    float64            `json:"ratioP50"`
	RatioP99    float64            `json:"ratioP99"`
}

type flatRow struct {
	Following int     `json:"following"`
	Ours      dist    `json:"ours"`
	Floor     dist    `json:"floor"`
	PullMerge dist    `json:"pullMerge"`
	OursVs1   float64 `json:"oursP50VsFirst"`
	// Mean time of one Datastore call, by method.
	FloorCallMs map[string]float64 `json:"floorCallMs"`
	MergeCallMs map[string]float64 `json:"pullMergeCallMs"`
}

type postRow struct {
	Followers int  `json:"followers"`
	Post      dist `json:"post"`
	AllSee    dist `json:"allFollowersSee"`
}

type target struct {
	What   string  `json:"what"`
	Target float64 `json:"target"`
	Got    float64 `json:"got"`
	Met    bool    `json:"met"`
}

type report struct {
	Machine      machine    `json:"machine"`
	Graph        graphStats `json:"graph"`
	Calls        []callRow  `json:"calls"`
	Home         []homeRow  `json:"home"`
	Flatness     []flatRow  `json:"flatness"`
	Posts        []postRow  `json:"posts"`
	FollowToHome dist       `json:"followTo200AtHome"`
	Storms       []stormRow `json:"storms"`
	StormPosts   stormPosts `json:"stormPosts"`
	Targets      []target   `json:"targets"`
}

// mergeSamples bounds the pull-merge reads of a reader following k, each
// of which is k queries: n, but no more than 5,000 queries in all unless
// that leaves fewer than 3 reads.
func mergeSamples(n, k int) int {
	return min(n, max(3, 5_000/k))
}

// profile starts a CPU profile into path, if path is set and on is true,
// and returns what stops it.
func profile(path string, on bool) (func(), error) {
	if path == "" || !on {
		return func() {}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}, nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

func run(ctx context.Context, s *stack, w *world, cfg config, progress func(string, ...any)) (*report, error) {
	rep := &report{}
	mid := middle(w, cfg)

	// Warm up the JVM and the connections before anything is timed.
	if _, _, err := interleaved(ctx, 200, 4, s.homeHTTP(mid), s.homeFloor(mid)); err != nil {
		return nil, err
	}
	if err := measureCalls(ctx, s, w, cfg, rep, mid); err != nil {
		return nil, err
	}
	for _, measure := range []func(context.Context, *stack, *world, config, *report, func(string, ...any)) error{measureHome, measureFlatness, measurePosts, measureFollows} {
		if err := measure(ctx, s, w, cfg, rep, progress); err != nil {
			return nil, err
		}
	}
	// Hot spots.
	var err error
	if rep.Storms, rep.StormPosts, err = storms(ctx, s, cfg, progress); err != nil {
		return nil, err
	}
	rep.Targets = targets(cfg, rep)
	return rep, nil
}

// measureCalls counts the Datastore calls of a feed page and of posts.
func measureCalls(ctx context.Context, s *stack, w *world, cfg config, rep *report, mid user) error {
	// In the steady state: the reader's token verified just before (the warm-up may have outlasted the token
	// cache).
	if err := s.homeHTTP(mid)(ctx); err != nil {
		return err
	}
	s.calls.take(fromRequest)
	if err := s.homeHTTP(mid)(ctx); err != nil {
		return err
	}
	rep.Calls = append(rep.Calls, callRow{"home feed page (API)", s.calls.take(fromRequest).Calls})
	s.direct.take(fromDirect)
	if err := s.homeFloor(mid)(ctx); err != nil {
		return err
	}
	rep.Calls = append(rep.Calls, callRow{"home feed page (floor)", s.direct.take(fromDirect).Calls})
	for _, k := range cfg.posters[:min(2, len(cfg.posters))] {
		// The poster's token verified first, as the reader's is: the
		// post's own calls alone are counted.
		if _, err := s.expect(ctx, http.StatusOK, "GET", "/social/rest/people/@me/@self", w.posters[k].token, nil); err != nil {
			return err
		}
		s.calls.take(fromRequest)
		if _, err := s.postHTTP(ctx, w.posters[k], "counted"); err != nil {
			return err
		}
		rep.Calls = append(rep.Calls, callRow{fmt.Sprintf("post, %d followers", k), s.calls.take(fromRequest).Calls})
	}
	return nil
}

// measureHome times the home feed against the floor, and where each
// one's time goes.
func measureHome(ctx context.Context, s *stack, w *world, cfg config, rep *report, progress func(string, ...any)) error {
	mid := middle(w, cfg)
	for _, c := range cfg.clients {
		s.calls.take(fromRequest)
		s.direct.take(fromDirect)
		stop, err := profile(cfg.cpuProfile, c == 1)
		if err != nil {
			return err
		}
		ours, floor, err := interleaved(ctx, cfg.samples, c, s.homeHTTP(mid), s.homeFloor(mid))
		stop()
		if err != nil {
			return err
		}
		row := homeRow{Clients: c, Ours: summarise(ours), Floor: summarise(floor),
			OursCallMs: s.calls.take(fromRequest).meanMs(), FloorCallMs: s.direct.take(fromDirect).meanMs()}
		row.RatioP50, row.RatioP99 = ratio(row.Ours.P50, row.Floor.P50), ratio(row.Ours.P99, row.Floor.P99)
		rep.Home = append(rep.Home, row)
		progress("home, %d clients: ours p50 %.2f ms, floor p50 %.2f ms", c, row.Ours.P50, row.Floor.P50)
	}
	return nil
}

// measureFlatness times the home feed by how many one follows, beside pull-merge.
func measureFlatness(ctx context.Context, s *stack, w *world, cfg config, rep *report, progress func(string, ...any)) error {
	for _, k := range cfg.readers {
		rd := w.readers[k]
		s.direct.take(fromDirect)
		ours, floor, err := interleaved(ctx, cfg.samples/2, 1, s.homeHTTP(rd), s.homeFloor(rd))
		if err != nil {
			return err
		}
		floorMs := s.direct.take(fromDirect).meanMs()
		merge, err := timed(ctx, mergeSamples(cfg.mergeSamples, k), 1, s.pullMerge(rd, w.authors[:k]))
		if err != nil {
			return err
		}
		mergeMs := s.direct.take(fromDirect).meanMs()
		row := flatRow{Following: k, Ours: summarise(ours), Floor: summarise(floor), PullMerge: summarise(merge),
			FloorCallMs: floorMs, MergeCallMs: mergeMs}
		rep.Flatness = append(rep.Flatness, row)
		progress("following %d: ours p50 %.2f ms, pull-merge p50 %.2f ms", k, row.Ours.P50, row.PullMerge.P50)
	}
	for i := range rep.Flatness {
		rep.Flatness[i].OursVs1 = ratio(rep.Flatness[i].Ours.P50, rep.Flatness[0].Ours.P50)
	}
	return nil
}

// measurePosts times posts, and until every follower sees them.
func measurePosts(ctx context.Context, s *stack, w *world, cfg config, rep *report, progress func(string, ...any)) error {
	for _, k := range cfg.posters {
		p := w.posters[k]
		var post, all []time.Duration
		var lastID string
		for i := 0; i < cfg.postSamples; i++ {
			start := time.Now()
			id, err := s.postHTTP(ctx, p, fmt.Sprintf("post %d", i))
			if err != nil {
				return err
			}
			post = append(post, time.Since(start))
			lastID = id
			if err := s.waitAllSee(ctx, id, p.id, w.posterFollowers[k]); err != nil {
				return fmt.Errorf("post by an author with %d followers: %w", k, err)
			}
			all = append(all, time.Since(start))
		}
		// The check above looks at the first and last follower of each
		// chunk; count the whole audience once to be sure.
		var size int
		err := retry(ctx, func() (err error) { size, err = s.audienceSize(ctx, lastID); return err })
		if err != nil {
			return err
		}
		if size != k+1 {
			return fmt.Errorf("post by an author with %d followers: audience of %d ids, want %d", k, size, k+1)
		}
		rep.Posts = append(rep.Posts, postRow{Followers: k, Post: summarise(post), AllSee: summarise(all)})
		progress("%d followers: post p50 %.0f ms, all see it p50 %.0f ms", k, rep.Posts[len(rep.Posts)-1].Post.P50, rep.Posts[len(rep.Posts)-1].AllSee.P50)
	}
	return nil
}

// measureFollows times a follow until the newest 200 are at home.
func measureFollows(ctx context.Context, s *stack, w *world, cfg config, rep *report, progress func(string, ...any)) error {
	var took []time.Duration
	for i := 0; i < cfg.follows; i++ {
		rd, err := s.register(ctx, fmt.Sprintf("f%04d", i))
		if err != nil {
			return err
		}
		s.calls.take(fromRequest)
		start := time.Now()
		status, body, err := s.call(ctx, "POST", "/social/rest/people/@me/@friends", rd.token, map[string]string{"id": w.star.id})
		if err != nil || status != http.StatusCreated {
			return fmt.Errorf("follow: %d %s %v", status, body, err)
		}
		if i == 0 {
			rep.Calls = append(rep.Calls, callRow{"follow", s.calls.take(fromRequest).Calls})
		}
		err = waitFor(ctx, 2*time.Minute, 10*time.Millisecond, func() (bool, error) {
			id, err := s.atHome(ctx, rd.id, 199)
			return id == w.starOldest200, err
		})
		if err != nil {
			return fmt.Errorf("follow %d: the 200th activity never reached home: %w", i, err)
		}
		took = append(took, time.Since(start))
		if id, err := s.atHome(ctx, rd.id, 0); err != nil || id != w.starNewest {
			return fmt.Errorf("follow %d: newest at home is %q (%v), want %s", i, id, err, w.starNewest)
		}
	}
	rep.FollowToHome = summarise(took)
	progress("follow → 200 at home: p50 %.0f ms", rep.FollowToHome.P50)
	return nil
}

// targets are the report's targets, met or not.
func targets(cfg config, rep *report) []target {
	var ts []target
	for _, h := range rep.Home {
		ts = append(ts,
			target{fmt.Sprintf("home p50 vs floor, %d clients", h.Clients), 1.15, h.RatioP50, h.RatioP50 <= 1.15},
			target{fmt.Sprintf("home p99 vs floor, %d clients", h.Clients), 1.15, h.RatioP99, h.RatioP99 <= 1.15})
	}
	worst := 0.0
	for _, f := range rep.Flatness {
		worst = max(worst, f.OursVs1)
	}
	ts = append(ts,
		target{fmt.Sprintf("home p50, following %d vs %d", cfg.readers[len(cfg.readers)-1], cfg.readers[0]), 1.1, worst, worst <= 1.1},
		target{"follow → 200 at home, p50 seconds", 3, rep.FollowToHome.P50 / 1000, rep.FollowToHome.P50 <= 3000})
	for _, st := range rep.Storms {
		ts = append(ts, target{st.What + ", errors", 0, float64(st.Errors), st.Errors == 0},
			target{st.What + ", count exact after the last answer (1 = yes)", 1, float64(boolInt(st.Exact)), st.Exact})
	}
	// Every reaction to one activity is as cheap under contention as a
	// like: none reads what the others write.
	for _, st := range rep.Storms[1:3] {
		r := ratio(st.Latency.P99, rep.Storms[0].Latency.P99)
		ts = append(ts, target{st.What + ", p99 vs the like storm's", 2, r, r <= 2})
	}
	// A vote in one poll, within 1.5x of a like: it too reads nothing the
	// others write.
	votes := ratio(rep.Storms[3].Latency.P99, rep.Storms[0].Latency.P99)
	ts = append(ts, target{rep.Storms[3].What + ", p99 vs the like storm's", 1.5, votes, votes <= 1.5})
	// The storm loads the whole emulator: the followed user's posts must
	// be slowed no more than anyone's.
	during := ratio(rep.StormPosts.During.P50, rep.StormPosts.Bystander.P50)
	ts = append(ts, target{"post p50 during the follow storm, the followed user's vs a bystander's", 1.5, during, during <= 1.5})
	return ts
}

// middle is the reader the calls and home measures read as: the one who
// follows 100, or else the middle one.
func middle(w *world, cfg config) user {
	mid := w.readers[cfg.readers[len(cfg.readers)/2]]
	for _, k := range cfg.readers {
		if k == 100 {
			mid = w.readers[k]
		}
	}
	return mid
}

// sorted formats a map's entries, sorted by key, joined by commas.
func sorted[V any](m map[string]V, format func(k string, v V) string) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, format(k, m[k]))
	}
	return strings.Join(parts, ", ")
}

func callString(m map[string]int) string {
	if len(m) == 0 {
		return "none"
	}
	return sorted(m, func(k string, n int) string { return fmt.Sprintf("%d %s", n, k) })
}

func msString(m map[string]float64) string {
	return sorted(m, func(k string, ms float64) string { return fmt.Sprintf("%s %.2f ms", k, ms) })
}

func (r *report) markdown(w io.Writer) {
	p := func(format string, a ...any) { fmt.Fprintf(w, format+"\n", a...) }
	p("## feedbench")
	p("")
	p("%s/%s, %d CPUs, %s, %s. Graph: %d users, %d follows (most followers %d, median %d), %d activities; seeded in %.0f s.",
		r.Machine.OS, r.Machine.Arch, r.Machine.CPUs, r.Machine.Go, r.Machine.Date,
		r.Graph.Users, r.Graph.Follows, r.Graph.MaxFollowers, r.Graph.MedianFollower, r.Graph.Activities, r.Graph.SeedSeconds)
	p("")
	p("### Datastore calls per operation")
	p("")
	p("| operation | calls |")
	p("| --- | --- |")
	for _, c := range r.Calls {
		p("| %s | %s |", c.Op, callString(c.Calls))
	}
	p("")
	p("### Home feed (page of %d) against the floor", pageSize)
	p("")
	p("| clients | ours p50 | ours p99 | floor p50 | floor p99 | p50 ratio | p99 ratio |")
	p("| ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
	for _, h := range r.Home {
		p("| %d | %.2f ms | %.2f ms | %.2f ms | %.2f ms | %.2fx | %.2fx |", h.Clients, h.Ours.P50, h.Ours.P99, h.Floor.P50, h.Floor.P99, h.RatioP50, h.RatioP99)
	}
	p("")
	p("Mean time of one Datastore call during those reads: ")
	for _, h := range r.Home {
		p("- %d clients: ours %s; floor %s", h.Clients, msString(h.OursCallMs), msString(h.FloorCallMs))
	}
	p("")
	p("### Flatness: home feed by how many the reader follows (1 client)")
	p("")
	p("| following | ours p50 | ours p99 | vs first | floor p50 | ours vs floor | floor's query | pull-merge p50 | pull-merge p99 | pull-merge reads |")
	p("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
	for _, f := range r.Flatness {
		p("| %d | %.2f ms | %.2f ms | %.2fx | %.2f ms | %.2fx | %.2f ms | %.1f ms | %.1f ms | %d |", f.Following, f.Ours.P50, f.Ours.P99, f.OursVs1,
			f.Floor.P50, ratio(f.Ours.P50, f.Floor.P50), f.FloorCallMs["RunQuery"], f.PullMerge.P50, f.PullMerge.P99, f.PullMerge.N)
	}
	p("")
	p("### Posts: answer, and until every follower sees it")
	p("")
	p("| followers | posts | post p50 | post max | all see it p50 | all see it max |")
	p("| ---: | ---: | ---: | ---: | ---: | ---: |")
	for _, x := range r.Posts {
		p("| %d | %d | %.0f ms | %.0f ms | %.0f ms | %.0f ms |", x.Followers, x.Post.N, x.Post.P50, x.Post.Max, x.AllSee.P50, x.AllSee.Max)
	}
	p("")
	p("### Follow until the newest 200 activities are at home")
	p("")
	p("%d follows: p50 %.0f ms, p90 %.0f ms, max %.0f ms.", r.FollowToHome.N, r.FollowToHome.P50, r.FollowToHome.P90, r.FollowToHome.Max)
	p("")
	r.hotSpots(w)
	p("### Targets")
	p("")
	p("| what | target | got | met |")
	p("| --- | ---: | ---: | --- |")
	for _, t := range r.Targets {
		p("| %s | %.2f | %.2f | %s |", t.What, t.Target, t.Got, mark(t.Met, "yes", "**no**"))
	}
}

// hotSpots writes the storms' section of the report.
func (r *report) hotSpots(w io.Writer) {
	p := func(format string, a ...any) { fmt.Fprintf(w, format+"\n", a...) }
	p("### Hot spots")
	p("")
	p("| storm | ops | clients | per second | p50 | p99 | p99 over the like storm's | max | errors | count after the last answer |")
	p("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |")
	for _, st := range r.Storms {
		ratio := st.Latency.P99 / r.Storms[0].Latency.P99 // the like storm is the first
		p("| %s | %d | %d | %.0f | %.0f ms | %.0f ms | %.2fx | %.0f ms | %d | %d, %s |", st.What, st.Ops, st.Clients, st.PerSecond,
			st.Latency.P50, st.Latency.P99, ratio, st.Latency.Max, st.Errors, st.Count, mark(st.Exact, "exact", "**wrong**"))
	}
	p("")
	p("Posts by the user the follow storm is on:")
	p("")
	p("| when | posts | p50 | p99 | max |")
	p("| --- | ---: | ---: | ---: | ---: |")
	for _, x := range []struct {
		when string
		d    dist
	}{{"before the storm", r.StormPosts.Before}, {"during the storm", r.StormPosts.During},
		{"after it (the storm's followers)", r.StormPosts.After}, {"a bystander's, during the storm", r.StormPosts.Bystander},
		{"a user given the same followers by import, no storm", r.StormPosts.Control}} {
		p("| %s | %d | %.0f ms | %.0f ms | %.0f ms |", x.when, x.d.N, x.d.P50, x.d.P99, x.d.Max)
	}
	p("")
}

// mark says yes or no, as the report shows it.
func mark(ok bool, yes, no string) string {
	if ok {
		return yes
	}
	return no
}
