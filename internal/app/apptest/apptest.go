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
	"socialstream/internal/app"
	"socialstream/internal/ids"
	"socialstream/internal/rebuild"
	"socialstream/internal/store"
	"socialstream/internal/testenv"
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
	db := testenv.DB(t)
	gen := ids.New()
	acc, err := accounts.New(db, gen, accounts.Config{BcryptCost: bcrypt.MinCost})
	if err != nil {
		t.Fatal(err)
	}
	svc, err := app.NewServices(db, gen, acc, testenv.StartTasks(t).Queue, slog.New(slog.DiscardHandler), rebuild.Config{}, app.Pictures{})
	if err != nil {
		t.Fatal(err)
	}
	return &Env{T: t, DB: db, Gen: gen, Acc: acc, Svc: svc}
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
