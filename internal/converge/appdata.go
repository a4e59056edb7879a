package converge

// The operations on app data.

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"
)

var (
	apps    = []string{"@app", "notes"}
	appKeys = []string{"k0", "k1", "k2", "k3", "k4"}
)

func (a *actor) someKeys(n int) []string {
	keys := slices.Clone(appKeys)
	a.rng.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
	return keys[:1+a.rng.IntN(n)]
}

// setAppData sets some keys, by REST or JSON-RPC; a third of the calls
// also name fields, and only the keys in both change.
func (r *runner) setAppData(ctx context.Context, a *actor) (bool, error) {
	u, app := a.pick(), apps[a.rng.IntN(len(apps))]
	data := map[string]string{}
	for _, k := range a.someKeys(3) {
		a.count++
		data[k] = fmt.Sprintf("v%d.%d", a.n, a.count)
	}
	var fields []string
	if a.rng.IntN(3) == 0 {
		fields = a.someKeys(4)
	}
	var out outcome
	if r.turns.Add(1)%2 == 0 {
		_, out = r.write(ctx, "set app data", viaRPC, "appdata.update", u.token, map[string]any{"appId": app, "data": data, "fields": fields})
	} else {
		path := "/social/rest/appdata/@me/@self/" + app
		if fields != nil {
			path += "?fields=" + strings.Join(fields, ",")
		}
		_, out = r.write(ctx, "set app data", http.MethodPut, path, u.token, data)
	}
	return true, r.appDataDone(ctx, "set app data", u, app, out, func(d map[string]string) {
		for k, v := range data {
			if fields == nil || slices.Contains(fields, k) {
				d[k] = v
			}
		}
	})
}

// deleteAppData deletes some keys, or all of an app's.
func (r *runner) deleteAppData(ctx context.Context, a *actor) (bool, error) {
	u, app := a.pick(), apps[a.rng.IntN(len(apps))]
	var keys []string
	if a.rng.IntN(4) > 0 {
		keys = a.someKeys(2)
	}
	var out outcome
	if r.turns.Add(1)%2 == 0 {
		_, out = r.write(ctx, "delete app data", viaRPC, "appdata.delete", u.token, map[string]any{"appId": app, "fields": keys})
	} else {
		_, out = r.write(ctx, "delete app data", http.MethodDelete, "/social/rest/appdata/@me/@self/"+app+"?fields="+strings.Join(keys, ","), u.token, nil)
	}
	return true, r.appDataDone(ctx, "delete app data", u, app, out, func(d map[string]string) {
		if keys == nil {
			clear(d)
		}
		for _, k := range keys {
			delete(d, k)
		}
	})
}

// appDataDone records a write of u's app data: applied when acknowledged,
// as read back when the answer was lost.
func (r *runner) appDataDone(ctx context.Context, op string, u *user, app string, out outcome, apply func(map[string]string)) error {
	r.m.done(op, out != acked, time.Now())
	var read map[string]string
	if out == unknown {
		rep, err := r.probe(ctx, op, "/social/rest/appdata/@me/@self/"+app, u.token, http.StatusOK)
		if err != nil {
			return err
		}
		read = appDataOf(rep, u.id)
	}
	r.m.mu.Lock()
	defer r.m.mu.Unlock()
	d := r.m.appData[pair{u.id, app}]
	if d == nil {
		d = map[string]string{}
		r.m.appData[pair{u.id, app}] = d
	}
	switch out {
	case acked:
		apply(d)
	case unknown:
		clear(d)
		maps.Copy(d, read)
	}
	return nil
}

// appDataOf is user's data in an app data answer.
func appDataOf(rep reply, user string) map[string]string {
	out := map[string]string{}
	d, _ := entry(rep)[user].(map[string]any)
	for k, v := range d {
		out[k], _ = v.(string)
	}
	return out
}
