package cards

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"socialstream/internal/media"
	"socialstream/internal/queue"
	"socialstream/internal/testenv"
)

// The tests name private addresses to see them refused: testenv.Main
// confines the process to loopback, so none is reached even if the guard
// broke, and a run in which the guard let one through fails.
func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

// keeper records the pictures a card keeps.
type keeper struct {
	mu   sync.Mutex
	kept []string
}

func (k *keeper) Keep(_ context.Context, holder, address string) (media.Attached, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.kept = append(k.kept, holder+" "+address)
	return media.Attached{ID: fmt.Sprint(len(k.kept)), Remote: address}, nil
}

// site serves pages on loopback and counts the requests of each path;
// /slow answers once release is called (or after 5 s); /flaky gives no
// answer twice.
func site(t *testing.T) (srv *httptest.Server, hits func(string) int64, release func()) {
	var mu sync.Mutex
	count := map[string]int64{}
	mux := http.NewServeMux()
	page := func(w http.ResponseWriter, body string) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, body)
	}
	mux.HandleFunc("/article", func(w http.ResponseWriter, r *http.Request) {
		page(w, `<head><meta property="og:title" content="An article"><meta property="og:image" content="/pic.png"></head>`)
	})
	mux.HandleFunc("/moved", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/article", http.StatusFound) })
	mux.HandleFunc("/inside", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://10.0.0.1/secret", http.StatusFound)
	})
	mux.HandleFunc("/loop", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/loop", http.StatusFound) })
	mux.HandleFunc("/broken", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "down", http.StatusInternalServerError) })
	mux.HandleFunc("/data", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/octet-stream")
		fmt.Fprint(w, `<title>not a page</title>`)
	})
	// /flaky gives no answer at first: its connection closed, then a
	// 503; then the page.
	var flaky atomic.Int32
	mux.HandleFunc("/flaky", func(w http.ResponseWriter, r *http.Request) {
		switch flaky.Add(1) {
		case 1:
			conn, _, err := http.NewResponseController(w).Hijack()
			if err != nil {
				t.Errorf("/flaky: %v", err)
				return
			}
			conn.Close()
		case 2:
			http.Error(w, "busy", http.StatusServiceUnavailable)
		default:
			page(w, `<title>Flaky</title>`)
		}
	})
	gate := make(chan struct{})
	var once sync.Once
	release = func() { once.Do(func() { close(gate) }) }
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-gate:
		case <-time.After(5 * time.Second):
		}
		page(w, `<title>Slow</title>`)
	})
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		count[r.URL.Path]++
		mu.Unlock()
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, func(p string) int64 { mu.Lock(); defer mu.Unlock(); return count[p] }, release
}

// A card is made once per address and kept a day: the page is fetched
// once whoever asks, redirects followed, its picture kept; a page that
// cannot be had or read makes none, is not asked again within the day,
// and is again after it.
func TestCardOfAnAddress(t *testing.T) {
	ctx := context.Background()
	srv, hits, _ := site(t)
	now := atomic.Int64{}
	now.Store(time.Now().UnixMicro())
	pics := &keeper{}
	s, err := New(testenv.DB(t), Config{Client: NewClient(true), Pictures: pics, Now: func() time.Time { return time.UnixMicro(now.Load()) }})
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		c, err := s.Of(ctx, srv.URL+"/moved", "a")
		if err != nil || c == nil || c.Title != "An article" || c.URL != srv.URL+"/moved" || c.Image.Remote != srv.URL+"/pic.png" {
			t.Fatalf("the card: %+v, %v", c, err)
		}
	}
	if hits("/moved") != 1 || hits("/article") != 1 || len(pics.kept) != 1 {
		t.Errorf("fetched %d and %d times, %d pictures kept; want once", hits("/moved"), hits("/article"), len(pics.kept))
	}
	for _, p := range []string{"/broken", "/data", "/loop", "/inside", "/nowhere"} {
		for range 2 {
			if c, err := s.Of(ctx, srv.URL+p, "a"); c != nil || err != nil {
				t.Errorf("%s: %+v, %v; want no card and no error", p, c, err)
			}
		}
	}
	if hits("/broken") != 1 || hits("/data") != 1 || hits("/inside") != 1 {
		t.Errorf("failed pages fetched again within the day: %d %d %d", hits("/broken"), hits("/data"), hits("/inside"))
	}
	now.Add(RefreshAfter.Microseconds() + 1)
	if _, err := s.Of(ctx, srv.URL+"/broken", "a"); err != nil || hits("/broken") != 2 {
		t.Errorf("a day later: %v, %d fetches", err, hits("/broken"))
	}
	if _, err := s.Of(ctx, srv.URL+"/moved", "a"); err != nil || hits("/article") != 2 || len(pics.kept) != 1 {
		t.Errorf("a card a day later: %v, %d fetches, %d pictures kept; want its picture kept once", err, hits("/article"), len(pics.kept))
	}
}

// Many posts' jobs asking at once fetch the page once: one claims the
// fetch, the others wait for it (a retry), then share its card. The page
// answers only once one of them has been told to wait.
func TestOneFetchAtOnce(t *testing.T) {
	ctx := context.Background()
	srv, hits, release := site(t)
	s, err := New(testenv.DB(t), Config{Client: NewClient(true)})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var waited atomic.Int32
	for i := range 8 {
		wg.Go(func() {
			for {
				c, err := s.Of(ctx, srv.URL+"/slow", fmt.Sprint("job ", i))
				if errors.Is(err, queue.ErrNotYet) {
					waited.Add(1)
					release()
					time.Sleep(100 * time.Millisecond)
					continue
				}
				if err != nil || c == nil || c.Title != "Slow" {
					t.Errorf("a card of the slow page: %+v, %v", c, err)
				}
				return
			}
		})
	}
	wg.Wait()
	if hits("/slow") != 1 || waited.Load() == 0 {
		t.Errorf("the slow page fetched %d times, %d waits; want once, and waits", hits("/slow"), waited.Load())
	}
}

// A link to this machine, or to a private address, makes no card, and
// nothing reaches it: the guarded client refuses the address it would
// dial (the process is confined besides). A name that does not resolve
// (here: the confined process asks no name server) is no card either,
// not a page that gave no answer to ask again.
func TestRefusedAddresses(t *testing.T) {
	ctx := context.Background()
	srv, hits, _ := site(t)
	s, err := New(testenv.DB(t), Config{Client: NewClient(false)})
	if err != nil {
		t.Fatal(err)
	}
	for _, address := range []string{srv.URL + "/article", "http://10.0.0.1/", "http://169.254.169.254/latest/meta-data/", "https://[fd00:ec2::254]/", "https://example.com/"} {
		if c, err := s.Of(ctx, address, "a"); c != nil || err != nil {
			t.Errorf("%s: %+v, %v; want no card", address, c, err)
		}
	}
	if hits("/article") != 0 {
		t.Errorf("the loopback page was fetched %d times", hits("/article"))
	}
}

// A claim left by a run that failed after it holds the others off for
// claimFor, but not the same job run again, which takes it back.
func TestClaimTakenBack(t *testing.T) {
	ctx := context.Background()
	srv, hits, _ := site(t)
	db := testenv.DB(t)
	s, err := New(db, Config{Client: NewClient(true)})
	if err != nil {
		t.Fatal(err)
	}
	address := srv.URL + "/article"
	if err := db.Put(ctx, key(db, address), &stored{Claimed: time.Now().UnixMicro(), ClaimedBy: "job 1"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Of(ctx, address, "job 2"); !errors.Is(err, queue.ErrNotYet) {
		t.Errorf("another job, while the claim holds: %v, want to wait", err)
	}
	if c, err := s.Of(ctx, address, "job 1"); err != nil || c == nil || hits("/article") != 1 {
		t.Errorf("the claimant again: %+v, %v, %d fetches", c, err, hits("/article"))
	}
	if c, err := s.Of(ctx, address, "job 2"); err != nil || c == nil || hits("/article") != 1 {
		t.Errorf("the other job, after: %+v, %v, %d fetches", c, err, hits("/article"))
	}
}

// A page that gave no answer (its connection closed, a 503) makes no
// card and keeps nothing: the job is told so (ErrNoAnswer, which it tries
// again), the claim holds the others off meanwhile, and the next try
// fetches it again and makes the card every post that links it shares.
func TestNoAnswerIsAskedAgain(t *testing.T) {
	ctx := context.Background()
	srv, hits, _ := site(t)
	s, err := New(testenv.DB(t), Config{Client: NewClient(true)})
	if err != nil {
		t.Fatal(err)
	}
	address := srv.URL + "/flaky"
	for try := 1; try <= 2; try++ {
		if c, err := s.Of(ctx, address, "job 1"); !errors.Is(err, ErrNoAnswer) || c != nil {
			t.Fatalf("try %d: %+v, %v; want ErrNoAnswer", try, c, err)
		}
		if kept, err := s.Kept(ctx, []string{address}); err != nil || kept[0] != nil {
			t.Fatalf("try %d: kept %v, %v; want nothing", try, kept, err)
		}
		if _, err := s.Of(ctx, address, "job 2"); !errors.Is(err, queue.ErrNotYet) {
			t.Errorf("try %d: another post's job: %v, want it to wait for the claim", try, err)
		}
	}
	if c, err := s.Of(ctx, address, "job 1"); err != nil || c == nil || c.Title != "Flaky" {
		t.Fatalf("the third try: %+v, %v", c, err)
	}
	if c, err := s.Of(ctx, address, "job 2"); err != nil || c == nil || c.Title != "Flaky" || hits("/flaky") != 3 {
		t.Errorf("another post's job, after: %+v, %v, %d fetches; want the card, fetched 3 times", c, err, hits("/flaky"))
	}
}
