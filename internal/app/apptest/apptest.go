// Package apptest builds, for the tests of the domain packages, the
// services as the app wires them, on the test's own Datastore namespace
// and a tasks emulator of its own (whose jobs reach no handler: a test
// runs the jobs it needs itself).
package apptest

import (
	"context"
	"log/slog"
	"testing"

	"golang.org/x/crypto/bcrypt"

	"socialstream/internal/accounts"
	"socialstream/internal/activities"
	"socialstream/internal/app"
	"socialstream/internal/federation"
	"socialstream/internal/ids"
	"socialstream/internal/queue"
	"socialstream/internal/rebuild"
	"socialstream/internal/store"
	"socialstream/internal/testenv"
	"socialstream/internal/trends"
)

// Env is a test's services and its store.
type Env struct {
	T   testing.TB
	DB  *store.DB
	Gen *ids.Generator
	Acc *accounts.Service
	Svc *app.Services
}

// New builds the services for t.
func New(t testing.TB) *Env {
	t.Helper()
	db, gen := testenv.DB(t), ids.New()
	acc := Accounts(t, db, gen)
	return &Env{T: t, DB: db, Gen: gen, Acc: acc, Svc: Services(t, db, gen, acc, testenv.StartTasks(t).Queue)}
}

// Accounts builds the accounts service over db, with the cheapest
// password hashes.
func Accounts(t testing.TB, db *store.DB, gen *ids.Generator) *accounts.Service {
	t.Helper()
	acc, err := accounts.New(db, gen, accounts.Config{BcryptCost: bcrypt.MinCost})
	if err != nil {
		t.Fatal(err)
	}
	return acc
}

// Services builds the services over db, acc and q, as the app does.
func Services(t testing.TB, db *store.DB, gen *ids.Generator, acc *accounts.Service, q queue.Queue) *app.Services {
	t.Helper()
	svc, err := app.NewServices(db, gen, acc, q, slog.New(slog.DiscardHandler), rebuild.Config{}, app.Pictures{}, app.Push{}, federation.Config{}, trends.Config{})
	if err != nil {
		t.Fatal(err)
	}
	return svc
}

// Person registers name (password "password-"+name) and returns its id.
func (e *Env) Person(name string) string {
	e.T.Helper()
	p, _, err := e.Acc.Register(context.Background(), name, "password-"+name, "")
	if err != nil {
		e.T.Fatal(err)
	}
	return p.ID
}

// Post posts title as author and returns the activity.
func (e *Env) Post(author, title string) activities.View {
	e.T.Helper()
	v, _, err := e.Svc.Activities.Post(context.Background(), author, activities.PostInput{Title: title})
	if err != nil {
		e.T.Fatal(err)
	}
	return v
}

// Activity reads activity id as viewer sees it; it must be there.
func (e *Env) Activity(viewer, id string) activities.View {
	e.T.Helper()
	vs, err := e.Svc.Activities.Get(context.Background(), viewer, viewer, "", []string{id})
	if err != nil || len(vs) != 1 {
		e.T.Fatalf("activity %s as %s: %v, %v", id, viewer, vs, err)
	}
	return vs[0]
}
