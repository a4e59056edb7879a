package federation

import (
	"context"
	"log/slog"

	"socialstream/internal/ids"
	"socialstream/internal/store"
)

// Directory finds people of other servers by name@domain and keeps them
// here, for what names them before the service is built: a post made
// here, whose read step finds the people it mentions (package activities'
// Finder). It is a Service of no dependencies: finding someone reads and
// writes only the people it keeps, through the one guarded client.
type Directory struct {
	s   *Service
	log *slog.Logger
}

// NewDirectory returns the directory of the deployment that cfg says
// federates.
func NewDirectory(cfg Config, db *store.DB, gen *ids.Generator, keys *Keys, log *slog.Logger) *Directory {
	return &Directory{s: New(cfg, db, gen, keys, nil, Deps{}), log: log}
}

// Find finds the person acct names (Service.Find), and logs why not.
func (d *Directory) Find(ctx context.Context, acct string) error {
	_, err := d.s.Find(ctx, acct)
	if err != nil {
		d.log.InfoContext(ctx, "a person of another server not found", "acct", acct, "err", err)
	}
	return err
}
