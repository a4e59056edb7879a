package api_test

import (
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"socialstream/internal/moderation"
	"socialstream/internal/ratelimit"
)

// Failed logins sent at once, through two instances on one Datastore, are
// counted before they are checked: no more passwords are tried than the
// bucket holds, every other attempt is a 429, and the real person waits
// at most one refill (90 s by default), then gets in.
func TestLoginsAtOnceCheckNoMoreThanTheLimit(t *testing.T) {
	setup := newEnv(t)
	setup.register("carol")
	setup.register("dave")
	rules := func(login ratelimit.Rule) ratelimit.Config {
		return ratelimit.Config{
			Account: ratelimit.Rule{Quota: 100, Window: time.Minute}, Address: ratelimit.Rule{Quota: 10000, Window: time.Minute},
			Login: login, Register: ratelimit.Rule{Quota: 2, Window: time.Hour}, Upload: ratelimit.Rule{Quota: 30, Window: time.Hour},
		}
	}
	// burst sends 50 wrong passwords for name at once, half through each
	// instance, and counts the answers by status.
	burst := func(one, two *env, name string) map[int]int {
		statuses := make([]int, 50)
		var wg sync.WaitGroup
		for i := range statuses {
			e := []*env{one, two}[i%2]
			wg.Go(func() {
				statuses[i] = e.do("POST", "/auth/login", "", map[string]string{"username": name, "password": fmt.Sprintf("guess-%d", i)}).status
			})
		}
		wg.Wait()
		count := map[int]int{}
		for _, s := range statuses {
			count[s]++
		}
		return count
	}

	// The default rule, 10 per 15 minutes: no refill during the burst.
	lim := rules(ratelimit.Rule{Quota: 10, Window: 15 * time.Minute})
	one, two := limited(t, setup, lim), limited(t, setup, lim)
	count := burst(one, two, "carol")
	if count[http.StatusUnauthorized] > 10 || count[http.StatusUnauthorized]+count[http.StatusTooManyRequests] != 50 {
		t.Errorf("50 failed logins at once answered %v: want at most 10 checked (401), the rest 429", count)
	}
	r := one.do("POST", "/auth/login", "", map[string]string{"username": "carol", "password": "password-carol"})
	one.wantError(r, http.StatusTooManyRequests)
	if wait := retryAfter(t, r); wait > 90 {
		t.Errorf("the real person waits %d s, more than one refill (90 s)", wait)
	}

	// The same burst on a bucket that refills in a second: the real
	// person waits that long, and is let in; their login gives its unit
	// back, so a wrong guess just after is checked (401), not refused.
	lim = rules(ratelimit.Rule{Quota: 10, Window: 10 * time.Second})
	one, two = limited(t, setup, lim), limited(t, setup, lim)
	count = burst(one, two, "dave")
	if count[http.StatusUnauthorized]+count[http.StatusTooManyRequests] != 50 {
		t.Errorf("50 failed logins at once answered %v: want 401s and 429s", count)
	}
	right := map[string]string{"username": "dave", "password": "password-dave"}
	r = one.do("POST", "/auth/login", "", right)
	for tries := 0; r.status == http.StatusTooManyRequests && tries < 3; tries++ {
		wait := retryAfter(t, r)
		if wait > 1 {
			t.Errorf("the real person waits %d s, more than one refill (1 s)", wait)
		}
		time.Sleep(time.Duration(wait) * time.Second)
		r = two.do("POST", "/auth/login", "", right)
	}
	if r.status != http.StatusOK {
		t.Fatalf("the real person's login after the burst: %d %s", r.status, r.raw)
	}
	if r := one.do("POST", "/auth/login", "", map[string]string{"username": "dave", "password": "one-more-guess"}); r.status != http.StatusUnauthorized {
		t.Errorf("a guess after the real login: %d %s, want 401", r.status, r.raw)
	}
}

// Reports sent at once by one person, through two instances, file no
// more than the limit.
func TestReportsAtOnceFileNoMoreThanTheLimit(t *testing.T) {
	one, two := twoInstances(t)
	alice, bob := one.register("alice"), one.register("bob")
	statuses := make([]int, 30)
	var wg sync.WaitGroup
	for i := range statuses {
		e := []*env{one, two}[i%2]
		wg.Go(func() {
			statuses[i] = e.do("POST", "/social/rest/reports/@me", alice.token,
				map[string]any{"accountId": bob.id, "category": "spam", "comment": fmt.Sprintf("report %d", i)}).status
		})
	}
	wg.Wait()
	count := map[int]int{}
	for _, s := range statuses {
		count[s]++
	}
	if count[http.StatusCreated] != moderation.ReportsPerHour || count[http.StatusTooManyRequests] != len(statuses)-moderation.ReportsPerHour {
		t.Errorf("30 reports at once answered %v: want %d filed (201), the rest 429", count, moderation.ReportsPerHour)
	}
	mine := one.list(one.do("GET", "/social/rest/reports/@me?count=100", alice.token, nil))
	if len(mine) != count[http.StatusCreated] {
		t.Errorf("alice has %d reports, and %d were answered 201", len(mine), count[http.StatusCreated])
	}
}
