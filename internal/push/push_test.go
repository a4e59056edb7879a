package push

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"golang.org/x/crypto/bcrypt"

	"socialstream/internal/accounts"
	"socialstream/internal/derrors"
	"socialstream/internal/ids"
	"socialstream/internal/testenv"
)

// pushKey is a device's P-256 public key (the generator's point).
const pushKey = "BGsX0fLhLEJH-Lzm5WOkQPJ3A32BLeszoPShOUXYmMKWT-NC4v4af5uO5-tKfA-eFivOM1drMV7Oy7ZAaDe_UfU"

const auth16 = "AAAAAAAAAAAAAAAAAAAAAA"

func newService(t *testing.T) (*Service, *accounts.Service) {
	t.Helper()
	db, gen := testenv.DB(t), ids.New()
	acc, err := accounts.New(db, gen, accounts.Config{BcryptCost: bcrypt.MinCost})
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(db, gen, acc, testenv.StartTasks(t).Queue, NewKeys(db), Config{})
	if err != nil {
		t.Fatal(err)
	}
	return s, acc
}

func TestSubscribeRefusesWhatNoDeliveryTakes(t *testing.T) {
	s, acc := newService(t)
	ctx := context.Background()
	p, token, err := acc.Register(ctx, "ann", "password-ann", "")
	if err != nil {
		t.Fatal(err)
	}
	good := Settings{Endpoint: "https://push.example.com/d/1", P256dh: pushKey, Auth: auth16, Alerts: []string{"mention"}}
	for name, change := range map[string]func(*Settings){
		"http":             func(s *Settings) { s.Endpoint = "http://push.example.com/d/1" },
		"http to loopback": func(s *Settings) { s.Endpoint = "http://127.0.0.1:9/d" }, // loopback is not allowed here
		"no host":          func(s *Settings) { s.Endpoint = "https:///d" },
		"user info":        func(s *Settings) { s.Endpoint = "https://me:pw@push.example.com/d" },
		"too long":         func(s *Settings) { s.Endpoint = "https://push.example.com/" + strings.Repeat("d", MaxEndpoint) },
		"not a point":      func(s *Settings) { s.P256dh = "BAAA" + strings.Repeat("A", 83) },
		"compressed":       func(s *Settings) { s.P256dh = "AmsX0fLhLEJH-Lzm5WOkQPJ3A32BLeszoPShOUXYmMKW" },
		"not base64":       func(s *Settings) { s.P256dh = "!!!" },
		"short auth":       func(s *Settings) { s.Auth = "AAAA" },
		"a bad policy":     func(s *Settings) { s.Policy = "friends" },
		"too many alerts":  func(s *Settings) { s.Alerts = make([]string, MaxAlerts+1) },
		"an empty alert":   func(s *Settings) { s.Alerts = []string{""} },
	} {
		set := good
		change(&set)
		if _, err := s.Subscribe(ctx, p.ID, token, set); !errors.Is(err, derrors.InvalidArgument) {
			t.Errorf("%s: %v, want InvalidArgument", name, err)
		}
	}
	if _, err := s.Get(ctx, p.ID, accounts.TokenID(token)); !errors.Is(err, ErrNoSubscription) {
		t.Errorf("after refusals: %v, want none", err)
	}
	sub, err := s.Subscribe(ctx, p.ID, token, good)
	if err != nil || sub.Policy != All || sub.ServerKey == "" {
		t.Fatalf("Subscribe: %+v, %v", sub, err)
	}
	// Another's token id names nothing of theirs.
	if _, err := s.Get(ctx, "someone else", accounts.TokenID(token)); !errors.Is(err, ErrNoSubscription) {
		t.Errorf("another's Get: %v", err)
	}
	if err := s.Unsubscribe(ctx, "someone else", accounts.TokenID(token)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ctx, p.ID, accounts.TokenID(token)); err != nil {
		t.Errorf("another's Unsubscribe deleted it: %v", err)
	}
}

// One device is pushed once: subscribed again under a new token, its
// old subscription goes. A person has MaxPerUser at most, those of
// tokens that no longer work not counted.
func TestSubscriptionsPerPerson(t *testing.T) {
	s, acc := newService(t)
	ctx := context.Background()
	p, first, err := acc.Register(ctx, "bea", "password-bea", "")
	if err != nil {
		t.Fatal(err)
	}
	login := func() string {
		t.Helper()
		_, token, err := acc.Login(ctx, "bea", "password-bea")
		if err != nil {
			t.Fatal(err)
		}
		return token
	}
	device := Settings{Endpoint: "https://push.example.com/same", P256dh: pushKey, Auth: auth16}
	if _, err := s.Subscribe(ctx, p.ID, first, device); err != nil {
		t.Fatal(err)
	}
	second := login()
	if _, err := s.Subscribe(ctx, p.ID, second, device); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ctx, p.ID, accounts.TokenID(first)); !errors.Is(err, ErrNoSubscription) {
		t.Errorf("the same device under its old token: %v, want replaced", err)
	}
	tokens := []string{second}
	for i := 1; i < MaxPerUser; i++ {
		tok := login()
		tokens = append(tokens, tok)
		if _, err := s.Subscribe(ctx, p.ID, tok, Settings{Endpoint: fmt.Sprintf("https://push.example.com/%d", i), P256dh: pushKey, Auth: auth16}); err != nil {
			t.Fatal(i, err)
		}
	}
	extra := login()
	other := Settings{Endpoint: "https://push.example.com/extra", P256dh: pushKey, Auth: auth16}
	if _, err := s.Subscribe(ctx, p.ID, extra, other); !errors.Is(err, ErrTooMany) {
		t.Fatalf("subscription %d: %v, want ErrTooMany", MaxPerUser+1, err)
	}
	// A token's own subscription may always be made again.
	if _, err := s.Subscribe(ctx, p.ID, tokens[3], Settings{Endpoint: "https://push.example.com/moved", P256dh: pushKey, Auth: auth16}); err != nil {
		t.Errorf("a token subscribing again at the cap: %v", err)
	}
	if err := acc.Logout(ctx, tokens[5]); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Subscribe(ctx, p.ID, extra, other); err != nil {
		t.Fatalf("with a token logged out: %v", err)
	}
	if _, err := s.Get(ctx, p.ID, accounts.TokenID(tokens[5])); !errors.Is(err, ErrNoSubscription) {
		t.Errorf("the logged out token's subscription: %v, want gone", err)
	}
}

// A ring reads its recipients' subscriptions 30 a query, and enqueues a
// delivery for each that wants the type, none for one that does not or
// whose policy is none.
func TestRingManyRecipients(t *testing.T) {
	db, gen := testenv.DB(t), ids.New()
	acc, err := accounts.New(db, gen, accounts.Config{BcryptCost: bcrypt.MinCost})
	if err != nil {
		t.Fatal(err)
	}
	tasks := testenv.StartTasks(t)
	tasks.Server.Hold() // kept, not dispatched: there is no app
	s, err := New(db, gen, acc, tasks.Queue, NewKeys(db), Config{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var recipients []string
	subscribed := map[int]Settings{
		0:  {Alerts: []string{"mention"}},
		31: {Alerts: []string{"mention", "like"}},
		34: {Alerts: []string{"like"}},                  // not of the type
		20: {Alerts: []string{"mention"}, Policy: None}, // none
	}
	want := map[string]bool{}
	for i := range 35 {
		name := fmt.Sprintf("ring%02d", i)
		p, token, err := acc.Register(ctx, name, "password-"+name, "")
		if err != nil {
			t.Fatal(err)
		}
		recipients = append(recipients, p.ID)
		if set, ok := subscribed[i]; ok {
			set.Endpoint, set.P256dh, set.Auth = fmt.Sprintf("https://push.example.com/%d", i), pushKey, auth16
			if _, err := s.Subscribe(ctx, p.ID, token, set); err != nil {
				t.Fatal(err)
			}
			if i == 0 || i == 31 {
				want[DeliverJob.TaskName(Delivery{Sub: accounts.TokenID(token), Event: "mention-1"})] = true
			}
		}
	}
	if err := s.Ring(ctx, "mention-1", "mention", "someone", recipients, false); err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, line := range tasks.Server.Describe() {
		name, _, _ := strings.Cut(line, " to ")
		name = name[strings.LastIndex(name, "/")+1:]
		got[name[9:]] = true // behind the hashed prefix (queue.TaskID)
	}
	if len(got) != len(want) {
		t.Errorf("deliveries %v, want %v", got, want)
	}
	for name := range want {
		if !got[name] {
			t.Errorf("no delivery %s among %v", name, got)
		}
	}
}
