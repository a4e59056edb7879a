package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

	"socialstream/internal/activities"
	"socialstream/internal/ids"
)

// user is a seeded account.
type user struct {
	id, name, token string
}

// world is the synthetic graph, built through the stores.
type world struct {
	authors                   []user       // by popularity: authors[0] has the most followers
	followers                 [][]string   // followers of each author
	readers                   map[int]user // reader following the first k authors
	posters                   map[int]user // poster with k followers (synthetic ids)
	posterFollowers           map[int][]string
	star                      user // an author with starPosts activities, for follow→200
	starNewest, starOldest200 string
	graphStats                graphStats
}

type graphStats struct {
	Users          int     `json:"users"`
	Follows        int     `json:"follows"`
	Activities     int     `json:"activities"`
	MaxFollowers   int     `json:"maxFollowers"`
	MedianFollower int     `json:"medianFollowers"`
	SeedSeconds    float64 `json:"seedSeconds"`
}

const (
	firstAuthorPosts = 25  // so that the reader following one author has a full page
	starPosts        = 210 // more than the 200 a follow copies
)

func (s *stack) register(ctx context.Context, name string) (user, error) {
	p, token, err := s.acc.Register(ctx, name, "feedbench-"+name, "")
	if err != nil {
		return user{}, fmt.Errorf("register %s: %w", name, err)
	}
	return user{id: p.ID, name: name, token: token}, nil
}

// parallel runs f for 0..n-1 on limit goroutines.
func parallel(ctx context.Context, n, limit int, f func(ctx context.Context, i int) error) error {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(limit)
	for i := 0; i < n; i++ {
		g.Go(func() error { return f(gctx, i) })
	}
	return g.Wait()
}

// seed builds the graph: cfg.authors users, each following cfg.fanOut
// others drawn from a Zipf distribution (a few very popular, most not);
// readers following the 1, 100, ... most popular; posters with synthetic
// followers; every author's activities posted after the follows, so their
// audiences hold the followers.
func seed(ctx context.Context, s *stack, cfg config, progress func(string, ...any)) (*world, error) {
	start := time.Now()
	w := &world{readers: map[int]user{}, posters: map[int]user{}, posterFollowers: map[int][]string{}}
	w.authors = make([]user, cfg.authors)
	if err := parallel(ctx, cfg.authors, 16, func(ctx context.Context, i int) (err error) {
		w.authors[i], err = s.register(ctx, fmt.Sprintf("a%05d", i))
		return err
	}); err != nil {
		return nil, err
	}
	progress("registered %d authors", cfg.authors)

	r := rand.New(rand.NewPCG(1, 2)) // the same graph every run
	zipf := rand.NewZipf(r, 1.3, 20, uint64(cfg.authors-1))
	w.followers = make([][]string, cfg.authors)
	follows := 0
	for i := range w.authors {
		picked := map[int]bool{i: true}
		for n := 0; n < cfg.fanOut && len(picked) < cfg.authors; {
			j := int(zipf.Uint64())
			if !picked[j] {
				picked[j] = true
				w.followers[j] = append(w.followers[j], w.authors[i].id)
				n++
				follows++
			}
		}
	}
	for _, k := range cfg.readers {
		rd, err := s.register(ctx, "reader"+strconv.Itoa(k))
		if err != nil {
			return nil, err
		}
		w.readers[k] = rd
		for j := 0; j < k; j++ {
			w.followers[j] = append(w.followers[j], rd.id)
			follows++
		}
	}
	if err := parallel(ctx, cfg.authors, 8, func(ctx context.Context, j int) error {
		if len(w.followers[j]) == 0 {
			return nil
		}
		return s.graph.ImportFollowers(ctx, w.authors[j].id, w.followers[j])
	}); err != nil {
		return nil, err
	}
	progress("imported %d follows", follows)

	gen := ids.New()
	for _, k := range cfg.posters {
		p, err := s.register(ctx, "poster"+strconv.Itoa(k))
		if err != nil {
			return nil, err
		}
		w.posters[k] = p
		fs := make([]string, k)
		for i := range fs {
			fs[i] = strconv.FormatInt(gen.Next(), 10)
		}
		w.posterFollowers[k] = fs
		if k > 0 {
			if err := s.graph.ImportFollowers(ctx, p.id, fs); err != nil {
				return nil, err
			}
		}
		follows += k
		progress("poster with %d followers ready", k)
	}

	// Posts: the most popular author first, many; then one each.
	var posted atomic.Int64
	post := func(ctx context.Context, author user, i int) (string, error) {
		v, _, err := s.act.Post(ctx, author.id, activities.PostInput{Title: fmt.Sprintf("activity %d of %s", i, author.name)})
		if err == nil {
			posted.Add(1)
		}
		return v.ID, err
	}
	if err := parallel(ctx, firstAuthorPosts, 4, func(ctx context.Context, i int) error {
		_, err := post(ctx, w.authors[0], i)
		return err
	}); err != nil {
		return nil, err
	}
	if err := parallel(ctx, cfg.authors-1, 16, func(ctx context.Context, i int) error {
		_, err := post(ctx, w.authors[i+1], 0)
		return err
	}); err != nil {
		return nil, err
	}
	progress("posted %d activities", posted.Load())

	star, err := s.register(ctx, "star")
	if err != nil {
		return nil, err
	}
	w.star = star
	starIDs := make([]string, starPosts)
	for i := range starIDs { // in order: ids are time-ordered
		if starIDs[i], err = post(ctx, star, i); err != nil {
			return nil, err
		}
	}
	w.starNewest, w.starOldest200 = starIDs[starPosts-1], starIDs[starPosts-200]

	counts := make([]int, len(w.followers))
	for i, f := range w.followers {
		counts[i] = len(f)
	}
	slices.Sort(counts)
	w.graphStats = graphStats{
		Users:          cfg.authors + len(cfg.readers) + len(cfg.posters) + 1,
		Follows:        follows,
		Activities:     int(posted.Load()),
		MaxFollowers:   counts[len(counts)-1],
		MedianFollower: counts[len(counts)/2],
		SeedSeconds:    time.Since(start).Seconds(),
	}
	return w, nil
}
