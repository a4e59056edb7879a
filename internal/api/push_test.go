package api_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/mattn/go-mastodon"

	"socialstream/internal/accounts"
	"socialstream/internal/app"
	"socialstream/internal/localstack"
	"socialstream/internal/notifications"
	"socialstream/internal/paging"
	"socialstream/internal/push"
	"socialstream/internal/push/receiver"
	"socialstream/internal/queue"
	"socialstream/internal/tasksemu"
	"socialstream/internal/testenv"
)

// Web Push, end to end: a Mastodon app subscribes its device, and a push
// service on loopback checks every message as a browser would (the VAPID
// JWT against the instance's key, the payload decrypted with the
// device's keys).

// pushed waits until d has received n messages, and returns their
// payloads.
func (e *env) pushed(ps *receiver.Service, d *receiver.Device, n int) []map[string]any {
	e.t.Helper()
	e.Eventually("push messages", func() bool { return len(ps.Messages(d)) >= n })
	var out []map[string]any
	for _, m := range ps.Messages(d) {
		v, err := m.JSON()
		if err != nil {
			e.t.Fatalf("a payload that is no JSON: %s", m.Plain)
		}
		out = append(out, v)
	}
	if errs := ps.Errors(); len(errs) > 0 {
		e.t.Fatalf("messages that did not check: %v", errs)
	}
	return out
}

// fastRetries keeps queue.yaml's retries at a second's backoff at most:
// what a push test shows is what is retried, and its queues empty within
// its waits (a delivery that failed three times waits 35 s at the
// queue's own backoff).
func fastRetries(q *tasksemu.QueueConfig) {
	q.Retry.MaxBackoff = min(q.Retry.MaxBackoff, time.Second)
	q.Retry.MinBackoff = min(q.Retry.MinBackoff, q.Retry.MaxBackoff)
}

func newPushEnv(t *testing.T) (*env, *receiver.Service, string) {
	e := newEnvFrom(t, localstack.Options{DB: testenv.DB(t), Config: app.Config{WebPushAllowLoopback: true, GiveUpAfter: 10 * time.Second},
		Queue: fastRetries})
	ps := receiver.New()
	t.Cleanup(ps.Close)
	_, inst := e.MastoForm("GET", "/api/v2/instance", "", nil)
	key, _ := inst["configuration"].(map[string]any)["vapid"].(map[string]any)["public_key"].(string)
	if len(key) != 87 { // 65 bytes, base64url
		t.Fatalf("the instance's VAPID key %q", key)
	}
	ps.Expect(key)
	return e, ps, key
}

func TestWebPush(t *testing.T) {
	e, ps, key := newPushEnv(t)
	ctx := context.Background()
	alice, bob, carol := e.register("alice"), e.register("bob"), e.register("carol")
	ac := e.mastoClient(alice, "read write follow push")
	token := ac.Config.AccessToken
	bc := e.mastoClient(bob, "read write follow")

	dev := ps.Device()
	yes := mastodon.Sbool(true)

	sub, err := ac.AddPushSubscription(ctx, dev.Endpoint, dev.PublicKey(), dev.Secret(),
		mastodon.PushAlerts{Follow: &yes, Favourite: &yes, Reblog: &yes, Mention: &yes})
	if err != nil {
		t.Fatal(err)
	}
	if sub.ServerKey != key || sub.Endpoint != dev.Endpoint {
		t.Fatalf("subscription %+v: server key %q, want the instance's %q", sub, sub.ServerKey, key)
	}
	if st, got := e.MastoForm("PUT", "/api/v1/push/subscription", token, url.Values{"data[alerts][status]": {"true"}}); st != 200 ||
		got["alerts"].(map[string]any)["status"] != true || got["alerts"].(map[string]any)["mention"] != true || got["policy"] != "all" {
		t.Fatalf("PUT: %d %v", st, got)
	}

	// Each type, as Mastodon names and words it.
	post, err := ac.PostStatus(ctx, &mastodon.Toot{Status: "hello from alice"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bc.AccountFollow(ctx, mastodon.ID(alice.id)); err != nil {
		t.Fatal(err)
	}
	e.pushed(ps, dev, 1)
	if _, err := bc.Favourite(ctx, post.ID); err != nil {
		t.Fatal(err)
	}
	e.pushed(ps, dev, 2)
	if _, err := bc.Reblog(ctx, post.ID); err != nil {
		t.Fatal(err)
	}
	e.pushed(ps, dev, 3)
	if _, err := bc.PostStatus(ctx, &mastodon.Toot{Status: "@alice are you there?"}); err != nil {
		t.Fatal(err)
	}
	e.pushed(ps, dev, 4)
	e.MastoForm("POST", "/api/v1/accounts/"+bob.id+"/follow", token, url.Values{"notify": {"true"}})
	if _, err := bc.PostStatus(ctx, &mastodon.Toot{Status: "news from bob", SpoilerText: "a warning"}); err != nil {
		t.Fatal(err)
	}
	got := e.pushed(ps, dev, 5)
	list, err := ac.GetNotifications(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]string{}
	for _, n := range list {
		ids[n.Type] = string(n.ID)
	}
	for i, want := range []struct{ typ, title, body string }{
		{"follow", "bob is now following you", ""},
		{"favourite", "bob favorited your post", "hello from alice"},
		{"reblog", "bob boosted your post", "hello from alice"},
		{"mention", "You were mentioned by bob", "@alice are you there?"},
		{"status", "bob just posted", "a warning"},
	} {
		m := got[i]
		if m["notification_type"] != want.typ || m["title"] != want.title || m["body"] != want.body ||
			m["access_token"] != token || m["preferred_locale"] != "en" || m["notification_id"] != ids[want.typ] ||
			!strings.HasPrefix(m["icon"].(string), e.url+"/") {
			t.Errorf("message %d: %v; want %+v, the token, id %s", i, m, want, ids[want.typ])
		}
	}
	for _, m := range ps.Messages(dev) {
		if m.Claims["aud"] != strings.TrimSuffix(e.url, "/") && !strings.HasPrefix(dev.Endpoint, m.Claims["aud"].(string)) {
			t.Errorf("aud %v", m.Claims["aud"])
		}
		if m.Headers.Get("Topic") == "" || m.Headers.Get("Urgency") != "normal" {
			t.Errorf("headers %v", m.Headers)
		}
	}

	// Hidden: a muted person's mention, and a blocked one's, never made,
	// are never pushed.
	cc := e.mastoClient(carol, "read write follow")
	e.MastoForm("POST", "/api/v1/accounts/"+carol.id+"/mute", token, nil)
	if _, err := cc.PostStatus(ctx, &mastodon.Toot{Status: "@alice hear me"}); err != nil {
		t.Fatal(err)
	}
	// Alerts off: nothing is even enqueued.
	e.MastoForm("PUT", "/api/v1/push/subscription", token, url.Values{"data[alerts][favourite]": {"false"}})
	if _, err := bc.Unfavourite(ctx, post.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := bc.Favourite(ctx, post.ID); err != nil {
		t.Fatal(err)
	}
	// Policy: followed alone; carol, whom alice does not follow, is not
	// pushed, and bob, whom she does, is.
	e.MastoForm("POST", "/api/v1/accounts/"+carol.id+"/unmute", token, nil)
	if st, got := e.MastoForm("PUT", "/api/v1/push/subscription", token, url.Values{"data[policy]": {"followed"}}); st != 200 || got["policy"] != "followed" {
		t.Fatalf("PUT policy: %d %v", st, got)
	}
	if _, err := cc.AccountFollow(ctx, mastodon.ID(alice.id)); err != nil {
		t.Fatal(err)
	}
	if _, err := bc.PostStatus(ctx, &mastodon.Toot{Status: "@alice followed one"}); err != nil {
		t.Fatal(err)
	}
	e.Settle()
	// The followed one's post mentions alice, whose follow rings besides:
	// two notifications, both pushed.
	got = e.pushed(ps, dev, 7)
	if len(got) != 7 || got[5]["body"] != "@alice followed one" || got[6]["body"] != "@alice followed one" {
		t.Errorf("after the hidden, the alert off and the policy: %d messages, the last %v; want the followed one's alone", len(got), got[len(got)-1])
	}

	// Policy none sends nothing; bad settings are 422s and change nothing.
	for _, bad := range []url.Values{{"data[policy]": {"some"}}, {"data[alerts][nonsense]": {"true"}}, {"data[alerts][mention]": {"maybe"}}} {
		if st, got := e.MastoForm("PUT", "/api/v1/push/subscription", token, bad); st != http.StatusUnprocessableEntity {
			t.Errorf("PUT %v: %d %v, want 422", bad, st, got)
		}
	}
	if s, err := ac.GetPushSubscription(ctx); err != nil || !bool(*s.Alerts.Mention) || bool(*s.Alerts.Favourite) {
		t.Errorf("after refused changes: %+v, %v", s, err)
	}

	// A locked account's follow request.
	e.MastoForm("PUT", "/api/v1/push/subscription", token, url.Values{"data[policy]": {"all"}, "data[alerts][follow_request]": {"true"}})
	if st, got := e.MastoForm("PATCH", "/api/v1/accounts/update_credentials", token, url.Values{"locked": {"true"}}); st != 200 || got["locked"] != true {
		t.Fatalf("lock: %d %v", st, got)
	}
	dc := e.mastoClient(e.register("dave"), "read write follow")
	if _, err := dc.AccountFollow(ctx, mastodon.ID(alice.id)); err != nil {
		t.Fatal(err)
	}
	got = e.pushed(ps, dev, 8)
	if m := got[7]; m["notification_type"] != "follow_request" || m["title"] != "New follow request from dave" {
		t.Errorf("a follow request: %v", m)
	}
	// Refused and asked again: the same event, a new notification, rung
	// anew (its first delivery's name must not stop the second).
	dave, err := dc.GetAccountCurrentUser(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st, got := e.MastoForm("POST", "/api/v1/follow_requests/"+string(dave.ID)+"/reject", token, nil); st != 200 {
		t.Fatalf("reject: %d %v", st, got)
	}
	if _, err := dc.AccountFollow(ctx, mastodon.ID(alice.id)); err != nil {
		t.Fatal(err)
	}
	got = e.pushed(ps, dev, 9)
	if m := got[8]; m["notification_type"] != "follow_request" {
		t.Errorf("a follow request asked again: %v", m)
	}
	// A reply (its own notification, made in the reply's commit) is a
	// mention on Mastodon.
	if _, err := bc.PostStatus(ctx, &mastodon.Toot{Status: "a reply to alice", InReplyToID: post.ID}); err != nil {
		t.Fatal(err)
	}
	got = e.pushed(ps, dev, 10)
	if m := got[9]; m["notification_type"] != "mention" || m["body"] != "a reply to alice" || m["title"] != "You were mentioned by bob" {
		t.Errorf("a reply: %v", m)
	}
}

func TestWebPushSubscriptions(t *testing.T) {
	e, ps, _ := newPushEnv(t)
	ctx := context.Background()
	alice, bob := e.register("alice"), e.register("bob")
	ac := e.mastoClient(alice, "read write follow push")
	token := ac.Config.AccessToken
	bc := e.mastoClient(bob, "read write follow")
	dev := ps.Device()

	// Without the push scope, and with bad keys or endpoints: refused.
	noPush := e.mastoClient(alice, "read write")
	good := url.Values{"subscription[endpoint]": {dev.Endpoint}, "subscription[keys][p256dh]": {dev.P256dh()},
		"subscription[keys][auth]": {dev.Auth()}, "data[alerts][mention]": {"true"}}
	if st, _ := e.MastoForm("POST", "/api/v1/push/subscription", noPush.Config.AccessToken, good); st != http.StatusForbidden {
		t.Errorf("a token without push: %d, want 403", st)
	}
	for name, change := range map[string][2]string{
		"ftp endpoint":       {"subscription[endpoint]", "ftp://example.com/push"},
		"http to elsewhere":  {"subscription[endpoint]", "http://example.com/push"},
		"no endpoint":        {"subscription[endpoint]", ""},
		"a key off curve":    {"subscription[keys][p256dh]", "BAAA" + strings.Repeat("A", 83)},
		"a short key":        {"subscription[keys][p256dh]", "BCVx"},
		"a long auth secret": {"subscription[keys][auth]", strings.Repeat("A", 30)},
		"an unknown alert":   {"data[alerts][sometimes]", "true"},
		"a bad policy":       {"data[policy]", "friends"},
	} {
		form := url.Values{}
		for k, v := range good {
			form[k] = v
		}
		form.Set(change[0], change[1])
		if st, got := e.MastoForm("POST", "/api/v1/push/subscription", token, form); st != http.StatusUnprocessableEntity {
			t.Errorf("%s: %d %v, want 422", name, st, got)
		}
	}
	if st, _ := e.MastoForm("GET", "/api/v1/push/subscription", token, nil); st != http.StatusNotFound {
		t.Errorf("GET before any: %d, want 404", st)
	}
	if st, _ := e.MastoForm("PUT", "/api/v1/push/subscription", token, url.Values{"data[policy]": {"all"}}); st != http.StatusNotFound {
		t.Errorf("PUT before any: %d, want 404", st)
	}
	if st, got := e.MastoForm("POST", "/api/v1/push/subscription", token, good); st != 200 || got["endpoint"] != dev.Endpoint {
		t.Fatalf("POST: %d %v", st, got)
	}
	// One per token: another token's is its own, and a POST replaces.
	other := e.mastoClient(alice, "push read")
	dev2 := ps.Device()
	form := url.Values{"subscription[endpoint]": {dev2.Endpoint}, "subscription[keys][p256dh]": {dev2.P256dh()},
		"subscription[keys][auth]": {dev2.Auth()}, "data[alerts][mention]": {"true"}, "data[alerts][favourite]": {"true"}}
	if st, _ := e.MastoForm("POST", "/api/v1/push/subscription", other.Config.AccessToken, form); st != 200 {
		t.Fatalf("a second token's: %d", st)
	}
	if s, err := ac.GetPushSubscription(ctx); err != nil || s.Endpoint != dev.Endpoint {
		t.Fatalf("the first token's: %+v, %v", s, err)
	}

	// Both devices hear a mention.
	if _, err := bc.PostStatus(ctx, &mastodon.Toot{Status: "@alice both of you"}); err != nil {
		t.Fatal(err)
	}
	e.pushed(ps, dev, 1)
	e.pushed(ps, dev2, 1)

	// 410 from the push service: that subscription is deleted.
	ps.Answer(dev2, http.StatusGone)
	if _, err := bc.PostStatus(ctx, &mastodon.Toot{Status: "@alice gone?"}); err != nil {
		t.Fatal(err)
	}
	e.pushed(ps, dev2, 2)
	e.Settle()
	if st, _ := e.MastoForm("GET", "/api/v1/push/subscription", other.Config.AccessToken, nil); st != http.StatusNotFound {
		t.Errorf("after a 410: GET %d, want 404", st)
	}

	// 503, then taken: the queue tries again, and the same message (its
	// notification's id and topic) comes twice, as RFC 8030 allows.
	ps.Answer(dev, http.StatusServiceUnavailable)
	if _, err := bc.PostStatus(ctx, &mastodon.Toot{Status: "@alice again"}); err != nil {
		t.Fatal(err)
	}
	got := e.pushed(ps, dev, 3)
	ps.Answer(dev, 0)
	got = e.pushed(ps, dev, 4)
	msgs := ps.Messages(dev)
	if got[2]["notification_id"] != got[3]["notification_id"] || msgs[2].Headers.Get("Topic") != msgs[3].Headers.Get("Topic") {
		t.Errorf("a retry: %v then %v", got[2], got[3])
	}
	e.Settle()

	// A revoked token: nothing more is sent, and its subscription goes.
	e.FormPost("/oauth/revoke", "", url.Values{"token": {token}, "client_id": {ac.Config.ClientID}, "client_secret": {ac.Config.ClientSecret}})
	if _, err := bc.PostStatus(ctx, &mastodon.Toot{Status: "@alice revoked"}); err != nil {
		t.Fatal(err)
	}
	e.Settle()
	if n := len(ps.Messages(dev)); n != 4 {
		t.Errorf("after the token's revocation: %d messages, want 4", n)
	}
	if _, err := e.svc.Push.Get(ctx, alice.id, accounts.TokenID(token)); err != push.ErrNoSubscription {
		t.Errorf("a revoked token's subscription: %v, want gone", err)
	}

	// DELETE: gone, and DELETE again is fine.
	ps2 := e.mastoClient(alice, "push")
	if st, _ := e.MastoForm("POST", "/api/v1/push/subscription", ps2.Config.AccessToken, form); st != 200 {
		t.Fatal(st)
	}
	for range 2 {
		if err := ps2.RemovePushSubscription(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := ps2.GetPushSubscription(ctx); err == nil {
		t.Error("GET after DELETE: found")
	}
}

// A delivery decides when it runs, not when it was enqueued: what
// changed between (an alert turned off, a block, a dismissal) stops it,
// and one that fails on the queue's last attempt drops its subscription.
func TestWebPushDecidesWhenItRuns(t *testing.T) {
	e, ps, _ := newPushEnv(t)
	ctx := context.Background()
	alice, bob := e.register("alice"), e.register("bob")
	ac := e.mastoClient(alice, "read write follow push")
	token := ac.Config.AccessToken
	dev := ps.Device()
	if st, _ := e.MastoForm("POST", "/api/v1/push/subscription", token, url.Values{"subscription[endpoint]": {dev.Endpoint},
		"subscription[keys][p256dh]": {dev.P256dh()}, "subscription[keys][auth]": {dev.Auth()},
		"data[alerts][mention]": {"true"}, "data[alerts][favourite]": {"true"}}); st != 200 {
		t.Fatal(st)
	}
	// A notification made with no push (alerts off then), delivered by
	// hand as a job would be.
	e.MastoForm("PUT", "/api/v1/push/subscription", token, url.Values{"data[alerts][mention]": {"false"}})
	bc := e.mastoClient(bob, "read write follow")
	if _, err := bc.PostStatus(ctx, &mastodon.Toot{Status: "@alice one"}); err != nil {
		t.Fatal(err)
	}
	e.Settle()
	list, _, _, err := e.svc.Notifications.List(ctx, alice.id, notifications.Query{Page: paging.Request{Count: 20}})
	if err != nil || len(list) != 1 {
		t.Fatalf("notifications %v, %v", list, err)
	}
	event := strings.TrimPrefix(list[0].ID, alice.id+"_")
	d := push.Delivery{Sub: accounts.TokenID(token), User: alice.id, Event: event, Type: notifications.Mention, Actor: bob.id, At: time.Now().Unix()}
	deliver := func(ctx context.Context, want string) {
		t.Helper()
		if got, err := e.svc.Push.Deliver(ctx, d); got != want || err != nil {
			t.Errorf("Deliver: %q, %v; want %q", got, err, want)
		}
	}
	deliver(ctx, push.NotWanted)
	e.MastoForm("PUT", "/api/v1/push/subscription", token, url.Values{"data[alerts][mention]": {"true"}})
	deliver(ctx, push.Sent)
	e.MastoForm("POST", "/api/v1/accounts/"+bob.id+"/block", token, nil)
	deliver(ctx, push.NotShown)
	e.MastoForm("POST", "/api/v1/accounts/"+bob.id+"/unblock", token, nil)
	deliver(ctx, push.Sent)
	// The policy, as it is when the job runs: bob and alice follow
	// neither the other, then each.
	for _, policy := range []string{"none", "follower", "followed"} {
		e.MastoForm("PUT", "/api/v1/push/subscription", token, url.Values{"data[policy]": {policy}})
		deliver(ctx, push.NotWanted)
	}
	if _, err := bc.AccountFollow(ctx, mastodon.ID(alice.id)); err != nil {
		t.Fatal(err)
	}
	deliver(ctx, push.NotWanted) // followed: alice does not follow bob
	e.MastoForm("PUT", "/api/v1/push/subscription", token, url.Values{"data[policy]": {"follower"}})
	deliver(ctx, push.Sent)
	if _, err := ac.AccountFollow(ctx, mastodon.ID(bob.id)); err != nil {
		t.Fatal(err)
	}
	e.MastoForm("PUT", "/api/v1/push/subscription", token, url.Values{"data[policy]": {"followed"}})
	deliver(ctx, push.Sent)
	e.MastoForm("PUT", "/api/v1/push/subscription", token, url.Values{"data[policy]": {"all"}})
	if err := e.svc.Notifications.Dismiss(ctx, alice.id, list[0].ID); err != nil {
		t.Fatal(err)
	}
	deliver(ctx, push.NotShown)
	if n := len(ps.Messages(dev)); n != 4 {
		t.Errorf("%d messages, want the 4 sent", n)
	}
	// Not made yet: wait; given up after GiveUpAfter, or at once when
	// its actor is hidden from the reader (it never will be made).
	// Its waiting is a task of its own, so that a commit later than the
	// queue's attempts allow (at the shortest backoff) is still pushed:
	// the convergence checker lost one so.
	d.Event, d.Actor, d.At = "mention-never", bob.id, time.Now().Unix()
	deliver(queue.WithAttempt(ctx, queue.Push, queue.RetryLimits[queue.Push]), push.Waiting)
	if tasks := strings.Join(e.tasks.Server.Describe(), "\n"); !strings.Contains(tasks, "-mention-never-w1 to /_tasks/push") {
		t.Errorf("no task waits on: %s", tasks)
	}
	e.MastoForm("POST", "/api/v1/accounts/"+bob.id+"/mute", token, nil)
	d.At = time.Now().Unix() // within GiveUpAfter: it is the mute that stops it
	deliver(ctx, push.NotMade)
	e.MastoForm("POST", "/api/v1/accounts/"+bob.id+"/unmute", token, nil)
	d.At = time.Now().Add(-time.Minute).Unix()
	deliver(ctx, push.NotMade)
	d.Actor = bob.id

	// 503 on the last attempt: the subscription goes. The mention is
	// made while the alert is off, so that no queued delivery of it
	// runs beside the ones run here.
	e.MastoForm("PUT", "/api/v1/push/subscription", token, url.Values{"data[alerts][mention]": {"false"}})
	if _, err := bc.PostStatus(ctx, &mastodon.Toot{Status: "@alice two"}); err != nil {
		t.Fatal(err)
	}
	e.Settle()
	e.MastoForm("PUT", "/api/v1/push/subscription", token, url.Values{"data[alerts][mention]": {"true"}})
	list, _, _, _ = e.svc.Notifications.List(ctx, alice.id, notifications.Query{Page: paging.Request{Count: 20}})
	d.Event, d.At = strings.TrimPrefix(list[0].ID, alice.id+"_"), time.Now().Unix()
	ps.Answer(dev, http.StatusServiceUnavailable)
	if _, err := e.svc.Push.Deliver(queue.WithAttempt(ctx, queue.Push, queue.RetryLimits[queue.Push]-1), d); err == nil {
		t.Error("a 503 before the last attempt: no error to retry")
	}
	deliver(queue.WithAttempt(ctx, queue.Push, queue.RetryLimits[queue.Push]), push.Abandoned)
	if _, err := e.svc.Push.Get(ctx, alice.id, d.Sub); err != push.ErrNoSubscription {
		t.Errorf("after the last attempt: %v, want the subscription gone", err)
	}
	if n := len(ps.Messages(dev)); n != 6 {
		t.Errorf("%d messages, want the 4 sent and the two answered 503", n)
	}

	// A deleted account: its subscription, made again, stops at once
	// (its tokens end with it), and the erasure deletes it.
	ps.Answer(dev, 0)
	if st, _ := e.MastoForm("POST", "/api/v1/push/subscription", token, url.Values{"subscription[endpoint]": {dev.Endpoint},
		"subscription[keys][p256dh]": {dev.P256dh()}, "subscription[keys][auth]": {dev.Auth()}, "data[alerts][mention]": {"true"}}); st != 200 {
		t.Fatal(st)
	}
	deliver(ctx, push.Sent)
	sent := len(ps.Messages(dev))
	if r := e.do("DELETE", "/auth/account", token, map[string]string{"password": "password-alice"}); r.status != http.StatusAccepted {
		t.Fatalf("delete: %d %s", r.status, r.raw)
	}
	if got, err := e.svc.Push.Deliver(ctx, d); err != nil || got != push.Dropped && got != push.Gone {
		t.Errorf("Deliver to a deleted account: %q, %v", got, err)
	}
	e.Settle()
	if _, err := e.svc.Push.Get(ctx, alice.id, d.Sub); err != push.ErrNoSubscription || len(ps.Messages(dev)) != sent {
		t.Errorf("after the account's deletion: %v, %d messages (%d before)", err, len(ps.Messages(dev)), sent)
	}
}

// Under the faults Cloud Tasks may have (deliveries twice, late, out of
// order, failed, timed out after running), every notification its reader
// sees and wants reaches the device, nothing else does, and a message
// comes twice only as the same message (its notification's id and
// topic), which RFC 8030 lets a push service deliver again.
func TestWebPushUnderTaskFaults(t *testing.T) {
	e := newEnvFrom(t, localstack.Options{DB: testenv.DB(t), Config: app.Config{WebPushAllowLoopback: true, GiveUpAfter: 3 * time.Second},
		TaskFaults: tasksemu.Faults{Seed: 7, Duplicate: 0.3, Delay: 0.3, MaxDelay: 2 * time.Second, Fail: 0.2, Timeout: 0.15},
		Queue:      fastRetries})
	ps := receiver.New()
	t.Cleanup(ps.Close)
	ctx := context.Background()
	alice := e.register("alice")
	ac := e.mastoClient(alice, "read write follow push")
	token := ac.Config.AccessToken
	key, err := e.svc.Push.Keys().Current(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ps.Expect(key.Public)
	dev := ps.Device()
	if st, _ := e.MastoForm("POST", "/api/v1/push/subscription", token, url.Values{"subscription[endpoint]": {dev.Endpoint},
		"subscription[keys][p256dh]": {dev.P256dh()}, "subscription[keys][auth]": {dev.Auth()},
		"data[alerts][mention]": {"true"}, "data[alerts][favourite]": {"true"}, "data[alerts][follow]": {"true"}}); st != 200 {
		t.Fatal(st)
	}
	post, err := ac.PostStatus(ctx, &mastodon.Toot{Status: "hello"})
	if err != nil {
		t.Fatal(err)
	}
	muted := e.register("muted")
	e.MastoForm("POST", "/api/v1/accounts/"+muted.id+"/mute", token, nil)
	for i, u := range []user{e.register("pat"), e.register("pam"), e.register("pia"), muted} {
		c := e.mastoClient(u, "read write follow")
		if _, err := c.AccountFollow(ctx, mastodon.ID(alice.id)); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Favourite(ctx, post.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := c.PostStatus(ctx, &mastodon.Toot{Status: fmt.Sprintf("@alice number %d", i)}); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Reblog(ctx, post.ID); err != nil { // of a type not wanted
			t.Fatal(err)
		}
	}
	e.Settle()
	if errs := ps.Errors(); len(errs) > 0 {
		t.Fatalf("messages that did not check: %v", errs)
	}
	list, err := ac.GetNotifications(ctx, &mastodon.Pagination{Limit: 80})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{}
	for _, n := range list {
		if n.Type != "reblog" {
			want[string(n.ID)] = n.Type
		}
	}
	if len(want) != 9 {
		t.Fatalf("%d notifications wanted, not 9 (3 people's follows, favourites and mentions): %v", len(want), want)
	}
	topics := map[string]string{}
	seen := map[string]int{}
	for _, m := range ps.Messages(dev) {
		v, _ := m.JSON()
		id, _ := v["notification_id"].(string)
		if want[id] != v["notification_type"] {
			t.Errorf("a message of no notification shown and wanted: %v", v)
		}
		if topic, ok := topics[id]; ok && topic != m.Headers.Get("Topic") {
			t.Errorf("notification %s came twice with topics %q and %q", id, topic, m.Headers.Get("Topic"))
		}
		topics[id] = m.Headers.Get("Topic")
		seen[id]++
	}
	again := 0
	for id, typ := range want {
		if seen[id] == 0 {
			t.Errorf("the %s notification %s never came", typ, id)
		}
		again += max(0, seen[id]-1)
	}
	t.Logf("%d messages for %d notifications (%d again); faults %v", len(ps.Messages(dev)), len(want), again, e.tasks.Server.FaultCounts())
}
