package mastodon

import (
	"encoding/json"
	"maps"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/gin-gonic/gin"

	"socialstream/internal/accounts"
	"socialstream/internal/derrors"
	"socialstream/internal/notifications"
	"socialstream/internal/push"
)

// Web Push: /api/v1/push/subscription, one subscription per token, and
// the message each notification becomes (PushPayload).

// pushAlerts names Mastodon's alerts by our notification types; those we
// never make are kept by their own name, and never ring.
var pushAlerts = map[string][]string{
	"mention": {notifications.Mention, notifications.Reply}, "status": {notifications.Status},
	"reblog": {notifications.Repost}, "follow": {notifications.Follow}, "follow_request": {notifications.FollowRequest},
	"favourite": {notifications.Like}, "poll": {"poll"}, "update": {"update"},
	"admin.sign_up": {"admin.sign_up"}, "admin.report": {"admin.report"},
}

// mPushSubscription is Mastodon's WebPushSubscription.
type mPushSubscription struct {
	ID        string          `json:"id"`
	Endpoint  string          `json:"endpoint"`
	Standard  bool            `json:"standard"`
	Alerts    map[string]bool `json:"alerts"`
	Policy    string          `json:"policy"`
	ServerKey string          `json:"server_key"`
}

func pushEntity(sub push.Subscription) mPushSubscription {
	alerts := map[string]bool{}
	for name, ours := range pushAlerts {
		alerts[name] = len(ours) > 0 && !slices.ContainsFunc(ours, func(t string) bool { return !slices.Contains(sub.Alerts, t) })
	}
	return mPushSubscription{ID: strconv.FormatInt(sub.ID, 10), Endpoint: sub.Endpoint, Standard: true, Alerts: alerts,
		Policy: sub.Policy, ServerKey: sub.ServerKey}
}

// alertsOf reads data[alerts][...]: the types of the alerts sent true,
// from those of base (a subscription's, for an update) where one is not
// sent. An alert Mastodon does not name is refused.
func alertsOf(p mparams, base []string) ([]string, bool, error) {
	on := map[string]bool{}
	for _, t := range base {
		on[t] = true
	}
	sent := false
	for _, k := range slices.Sorted(maps.Keys(p)) { // in order: one refusal, the same every time
		name, ok := strings.CutPrefix(k, "data[alerts][")
		if !ok {
			continue
		}
		name = strings.TrimSuffix(name, "]")
		ours, known := pushAlerts[name]
		if !known {
			return nil, false, derrors.New(derrors.InvalidArgument, "data[alerts]["+name+"] is not an alert Mastodon names")
		}
		v, err := p.flag(k, false)
		if err != nil {
			return nil, false, err
		}
		for _, t := range ours {
			on[t] = v
		}
		sent = true
	}
	var out []string
	for _, t := range slices.Sorted(maps.Keys(on)) {
		if on[t] {
			out = append(out, t)
		}
	}
	return out, sent, nil
}

// pushToken returns the caller's token and its id: the subscription's
// name.
func (s *Server) pushToken(m *mreq) (string, string, error) {
	token, ok := s.host.Token(m.c)
	if !ok {
		return "", "", errMNoToken
	}
	return token, accounts.TokenID(token), nil
}

// subscribePush is POST /api/v1/push/subscription: the token's
// subscription, in place of any it had.
func (s *Server) subscribePush(m *mreq) (any, error) {
	token, _, err := s.pushToken(m)
	if err != nil {
		return nil, err
	}
	alerts, _, err := alertsOf(m.p, nil)
	if err != nil {
		return nil, err
	}
	if _, err := m.p.flag("subscription[standard]", true); err != nil {
		return nil, err
	}
	sub, err := s.push.Subscribe(m.ctx, m.caller, token, push.Settings{
		Endpoint: m.p.str("subscription[endpoint]"), P256dh: m.p.str("subscription[keys][p256dh]"),
		Auth: m.p.str("subscription[keys][auth]"), Alerts: alerts, Policy: m.p.str("data[policy]"), Origin: s.origin(m.c),
	})
	if err != nil {
		return nil, err
	}
	return pushEntity(sub), nil
}

// ownPush reads the caller's token's subscription, and its id.
func (s *Server) ownPush(m *mreq) (string, push.Subscription, error) {
	_, id, err := s.pushToken(m)
	if err != nil {
		return "", push.Subscription{}, err
	}
	sub, err := s.push.Get(m.ctx, m.caller, id)
	return id, sub, err
}

// pushSubscription is GET /api/v1/push/subscription.
func (s *Server) pushSubscription(m *mreq) (any, error) {
	_, sub, err := s.ownPush(m)
	if err != nil {
		return nil, err
	}
	return pushEntity(sub), nil
}

// updatePush is PUT /api/v1/push/subscription: its alerts and policy.
func (s *Server) updatePush(m *mreq) (any, error) {
	id, sub, err := s.ownPush(m)
	if err != nil {
		return nil, err
	}
	var d push.Data
	alerts, sent, err := alertsOf(m.p, sub.Alerts)
	if err != nil {
		return nil, err
	}
	if sent {
		d.Alerts = &alerts
	}
	if m.p.has("data[policy]") {
		policy := m.p.str("data[policy]")
		d.Policy = &policy
	}
	if sub, err = s.push.Update(m.ctx, m.caller, id, d); err != nil {
		return nil, err
	}
	return pushEntity(sub), nil
}

// unsubscribePush is DELETE /api/v1/push/subscription.
func (s *Server) unsubscribePush(m *mreq) (any, error) {
	_, id, err := s.pushToken(m)
	if err != nil {
		return nil, err
	}
	return gin.H{}, s.push.Unsubscribe(m.ctx, m.caller, id)
}

// vapidKey is the deployment's current VAPID public key, which apps
// subscribe with ("" when the face pushes nothing).
func (s *Server) vapidKey(m *mreq) (string, error) {
	if s.push == nil {
		return "", nil
	}
	k, err := s.push.Keys().Current(m.ctx)
	if err != nil {
		return "", err
	}
	return k.Public, nil
}

// pushTitles are Mastodon's titles of its push messages, by its type.
var pushTitles = map[string]string{
	"mention": "You were mentioned by %s", "status": "%s just posted", "reblog": "%s boosted your post",
	"follow": "%s is now following you", "follow_request": "New follow request from %s", "favourite": "%s favorited your post",
}

// maxPushBody is the longest body of a message, in characters, as
// Mastodon cuts it.
const maxPushBody = 140

// mPushMessage is Mastodon's Web Push payload.
type mPushMessage struct {
	AccessToken      string `json:"access_token"`
	PreferredLocale  string `json:"preferred_locale"`
	NotificationID   string `json:"notification_id"`
	NotificationType string `json:"notification_type"`
	Icon             string `json:"icon"`
	Title            string `json:"title"`
	Body             string `json:"body"`
}

// PushPayload is the message of a notice, as Mastodon sends it: the
// notification's id and type by Mastodon's names, its actor's picture,
// a title that says what happened and a body of the status it is about
// (its warning, if it has one) or of the actor's note. A type Mastodon
// has no name for is not pushed.
func PushPayload(n push.Notice) ([]byte, bool) {
	typ, ok := mastoNotice[n.Notification.Type]
	if !ok || n.Notification.Actor == nil {
		return nil, false
	}
	actor := *n.Notification.Actor
	name := actor.DisplayName
	if strings.TrimSpace(name) == "" {
		name = actor.PreferredUsername
	}
	icon := n.Origin + missingAvatar
	if actor.AvatarURL != "" {
		icon = absolute(n.Origin, actor.AvatarURL)
	}
	body := actor.Note
	if v := n.Activity; v != nil {
		body = v.Text()
		if v.SpoilerText != "" {
			body = v.SpoilerText
		}
	}
	msg := mPushMessage{AccessToken: n.Token, PreferredLocale: "en", NotificationID: strconv.FormatInt(n.Notification.Seq, 10),
		NotificationType: typ, Icon: icon, Title: strings.Replace(pushTitles[typ], "%s", name, 1), Body: cut(body, maxPushBody)}
	b, err := json.Marshal(msg)
	return b, err == nil
}

// cut shortens s to at most n characters, an ellipsis last when cut.
func cut(s string, n int) string {
	s = strings.TrimSpace(s)
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return strings.TrimSpace(string(r[:n-1])) + "…"
}
