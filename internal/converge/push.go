package converge

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"

	"socialstream/internal/ids"
	"socialstream/internal/push/receiver"
)

// Web Push: every user's registration subscribes a device of theirs at
// the stack's push service, for every type Mastodon's alerts name, and
// the oracle holds what the devices received to what the readers' lists
// show (checkPush).

// expectPushKey has the push service check messages against the
// instance's VAPID key.
func (r *runner) expectPushKey(ctx context.Context) error {
	rep, err := r.c.read(ctx, "/api/v2/instance", "")
	if err != nil {
		return fmt.Errorf("the instance: %w", err)
	}
	conf, _ := rep.body["configuration"].(map[string]any)
	vapid, _ := conf["vapid"].(map[string]any)
	key := str(vapid, "public_key")
	if key == "" {
		return fmt.Errorf("the instance names no VAPID key: %v", rep.body)
	}
	r.push.Expect(key)
	return nil
}

// pushAlerts are the alerts every device asks for.
var pushAlerts = map[string]bool{"mention": true, "favourite": true, "reblog": true, "follow": true, "follow_request": true, "status": true}

// subscribe subscribes a device of u's with u's token. One whose answer
// was lost may or may not be there: the device stays, and the oracle
// expects nothing of it (pushed false).
func (r *runner) subscribe(ctx context.Context, u *user) {
	d := r.push.Device()
	_, out := r.write(ctx, "push subscription", http.MethodPost, "/api/v1/push/subscription", u.token, map[string]any{
		"subscription": map[string]any{"endpoint": d.Endpoint, "keys": map[string]string{"p256dh": d.P256dh(), "auth": d.Auth()}},
		"data":         map[string]any{"alerts": pushAlerts},
	})
	u.device, u.pushToken, u.pushed = d, u.token, out == acked
}

// checkPush: every message the push service took checks (signed with the
// instance's key, decrypted with the device's), carries the token its
// subscription was made with, and is of a type it asked for; a
// notification comes twice only as the same message (its Topic). Every
// notification of a reader whose subscription still stands, shown in
// their list, reached their device, unless its actor was ever hidden from
// them (blocked, muted), or either was limited or suspended, or the
// reader ever filtered words, or it is about another's post that is
// neither public nor unlisted (seen through a follow that may have come
// later): those a delivery may rightly have left out when it ran.
func (o *oracle) checkPush(ctx context.Context, rep *Report) error {
	m := o.m
	for _, err := range o.r.push.Errors() {
		o.violate("push: a message that does not check: %v", err)
	}
	for _, u := range m.users {
		if u.device == nil {
			continue
		}
		got := o.checkDevice(u)
		if !slices.Contains(o.people, u) || u.gone || !u.pushed || u.token != u.pushToken || m.everFiltered[u.id] || len(m.standings[u.id]) > 0 {
			continue
		}
		list, err := o.r.mastodonList(ctx, "/api/v1/notifications", u.token)
		if errors.Is(err, errSignedOut) {
			continue // its token ended (and its subscription's deliveries with it)
		}
		if err != nil {
			return fmt.Errorf("read %s's notifications: %w", u.name, err)
		}
		rep.Checked++
		for _, n := range list {
			if _, ok := got[str(n, "id")]; !ok && o.expectsPush(u, n) {
				acc, _ := n["account"].(map[string]any)
				st, _ := n["status"].(map[string]any)
				activity := ""
				if id, err := strconv.ParseInt(str(st, "id"), 10, 64); err == nil {
					activity = ids.Format(id)
				}
				o.violate("push: %s's %s notification %s from %s (made %s) never reached their device, which got %d messages, of this type %s; "+
					"the deliveries of this type to them: %q; the jobs of its post %s: %q",
					u.name, str(n, "type"), str(n, "id"), str(acc, "id"), str(n, "created_at"), len(got), ofType(o.r.push.Messages(u.device), str(n, "type")),
					o.r.deliveries.of(u.id, str(n, "type")), activity, o.r.deliveries.about(activity))
			}
		}
	}
	return nil
}

// checkDevice holds the messages u's device got to their checks, and
// returns the topic of each notification's.
func (o *oracle) checkDevice(u *user) map[string]string {
	got := map[string]string{} // notification id → topic
	for _, msg := range o.r.push.Messages(u.device) {
		v, err := msg.JSON()
		id := str(v, "notification_id")
		switch topic, seen := got[id]; {
		case err != nil:
			o.violate("push: %s's device got a payload that is no JSON: %.100s", u.name, msg.Plain)
		case str(v, "access_token") != u.pushToken:
			o.violate("push: %s's device got a message with another token", u.name)
		case !pushAlerts[str(v, "notification_type")]:
			o.violate("push: %s's device got a %q it never asked for", u.name, str(v, "notification_type"))
		case seen && topic != msg.Headers.Get("Topic"):
			o.violate("push: %s's notification %s came twice as two messages (topics %q, %q)", u.name, id, topic, msg.Headers.Get("Topic"))
		}
		got[id] = msg.Headers.Get("Topic")
	}
	return got
}

// expectsPush reports whether notification n (Mastodon's) of u's list
// must have reached their device: whatever a delivery could rightly
// have left out when it ran is not.
func (o *oracle) expectsPush(u *user, n map[string]any) bool {
	m := o.m
	acc, _ := n["account"].(map[string]any)
	a := str(acc, "id")
	if m.everBlocked[pair{u.id, a}] || m.everBlocked[pair{a, u.id}] || m.everMuted[pair{u.id, a}] || len(m.standings[a]) > 0 {
		return false
	}
	if st, _ := n["status"].(map[string]any); st != nil {
		by, _ := st["account"].(map[string]any)
		if v := str(st, "visibility"); str(by, "id") != u.id && v != "public" && v != "unlisted" {
			return false // another's post the reader may not have seen when it ran (before a follow)
		}
	}
	return true
}

var errSignedOut = errors.New("the token is no one's")

// mastodonList reads every page of a Mastodon list (a JSON array, paged
// by max_id).
func (r *runner) mastodonList(ctx context.Context, path, token string) ([]map[string]any, error) {
	var out []map[string]any
	below := ""
	for range 100 {
		p := path + "?limit=80"
		if below != "" {
			p += "&max_id=" + below
		}
		page, err := r.mastodonPage(ctx, p, token)
		if err != nil {
			return nil, err
		}
		if len(page) == 0 {
			return out, nil
		}
		out = append(out, page...)
		below = str(page[len(page)-1], "id")
		if _, err := strconv.ParseInt(below, 10, 64); err != nil {
			return nil, fmt.Errorf("GET %s: an id %q", p, below)
		}
	}
	return out, nil
}

// mastodonPage reads one page of a Mastodon list (a JSON array).
func (r *runner) mastodonPage(ctx context.Context, p, token string) ([]map[string]any, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, r.c.base+p, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := r.c.http.Do(req)
	if err != nil {
		return nil, err
	}
	data, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	var page []map[string]any
	if resp.StatusCode == http.StatusUnauthorized {
		return nil, errSignedOut
	}
	if resp.StatusCode != http.StatusOK || json.NewDecoder(bytes.NewReader(data)).Decode(&page) != nil {
		return nil, fmt.Errorf("GET %s: %d %.200s", p, resp.StatusCode, data)
	}
	return page, nil
}

// ofType lists the notification ids of a device's messages of type typ,
// for a violation's message.
func ofType(msgs []receiver.Message, typ string) []string {
	var out []string
	for _, msg := range msgs {
		if v, err := msg.JSON(); err == nil && str(v, "notification_type") == typ {
			out = append(out, str(v, "notification_id"))
		}
	}
	return out
}
