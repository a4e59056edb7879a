// Package store holds the Datastore plumbing every domain package shares: a
// client bound to one namespace, key and query helpers that apply it, and the
// conversion of Datastore and gRPC errors into derrors kinds.
//
// Tests give each test a namespace of its own; a deployment may set one to
// keep several environments in one project.
package store

import (
	"context"
	"errors"
	"fmt"

	"cloud.google.com/go/datastore"
	"google.golang.org/api/option"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"socialstream/internal/derrors"
)

// MaxAttempts bounds the retries of a contended transaction. The client's
// default of 3 gives up too soon when many requests update one entity (a
// popular user's follower count); its backoff starts at 20ms and grows by
// 1.3 a try, so 25 tries wait up to about a minute in all, jittered.
const MaxAttempts = 25

// DB is a Datastore client bound to a namespace.
type DB struct {
	Client    *datastore.Client
	Namespace string
}

// New returns a DB; client must not be nil.
func New(client *datastore.Client, namespace string) (*DB, error) {
	if client == nil {
		return nil, errors.New("store.New: nil client")
	}
	return &DB{Client: client, Namespace: namespace}, nil
}

// Open connects to Datastore for project. A non-empty emulatorHost connects to
// that emulator without credentials; extra options (a gRPC interceptor, say)
// are applied after.
func Open(ctx context.Context, project, emulatorHost string, opts ...option.ClientOption) (*datastore.Client, error) {
	var o []option.ClientOption
	if emulatorHost != "" {
		o = append(o,
			option.WithEndpoint("passthrough:///"+emulatorHost),
			option.WithoutAuthentication(),
			option.WithGRPCDialOption(grpc.WithTransportCredentials(insecure.NewCredentials())),
		)
	}
	c, err := datastore.NewClient(ctx, project, append(o, opts...)...)
	if err != nil {
		return nil, fmt.Errorf("store.Open(%q): %w", project, err)
	}
	return c, nil
}

// NameKey returns a key with a string name in the DB's namespace.
func (db *DB) NameKey(kind, name string, parent *datastore.Key) *datastore.Key {
	k := datastore.NameKey(kind, name, parent)
	k.Namespace = db.Namespace
	return k
}

// IDKey returns a key with an integer id in the DB's namespace.
func (db *DB) IDKey(kind string, id int64, parent *datastore.Key) *datastore.Key {
	k := datastore.IDKey(kind, id, parent)
	k.Namespace = db.Namespace
	return k
}

// Query returns a query of kind in the DB's namespace.
func (db *DB) Query(kind string) *datastore.Query {
	return datastore.NewQuery(kind).Namespace(db.Namespace)
}

// RunInTransaction runs f in a transaction, retrying contention up to
// MaxAttempts times, and converts the error.
func (db *DB) RunInTransaction(ctx context.Context, f func(tx *datastore.Transaction) error) error {
	_, err := db.Client.RunInTransaction(ctx, f, datastore.MaxAttempts(MaxAttempts))
	return Convert(err)
}

// Convert maps Datastore and gRPC errors to derrors kinds, keeping the
// original in the chain. Errors that already carry a kind pass unchanged.
func Convert(err error) error {
	if err == nil {
		return nil
	}
	var de *derrors.Error
	if errors.As(err, &de) {
		return err
	}
	switch {
	case errors.Is(err, datastore.ErrNoSuchEntity):
		return fmt.Errorf("%w: %w", derrors.NotFound, err)
	case errors.Is(err, datastore.ErrConcurrentTransaction):
		return fmt.Errorf("%w: %w", derrors.Unavailable, err)
	}
	if s, ok := status.FromError(err); ok {
		switch s.Code() {
		case codes.AlreadyExists:
			return fmt.Errorf("%w: %w", derrors.Conflict, err)
		case codes.Aborted, codes.Unavailable, codes.DeadlineExceeded, codes.ResourceExhausted:
			return fmt.Errorf("%w: %w", derrors.Unavailable, err)
		}
	}
	return err
}

// IsMissing reports whether err, from a GetMulti, says that only some
// entities were missing and nothing else went wrong. The entities that were
// found are filled in; missing reports which were not.
func IsMissing(err error, n int) (missing []bool, ok bool) {
	missing = make([]bool, n)
	if err == nil {
		return missing, true
	}
	var me datastore.MultiError
	if !errors.As(err, &me) {
		return nil, false
	}
	for i, e := range me {
		switch {
		case e == nil:
		case errors.Is(e, datastore.ErrNoSuchEntity):
			missing[i] = true
		default:
			return nil, false
		}
	}
	return missing, true
}

// Find loads the entity at key into dst and reports whether it exists; a
// missing entity is not an error.
func (db *DB) Find(ctx context.Context, key *datastore.Key, dst any) (bool, error) {
	err := db.Client.Get(ctx, key, dst)
	switch {
	case errors.Is(err, datastore.ErrNoSuchEntity):
		return false, nil
	case err != nil:
		return false, Convert(err)
	}
	return true, nil
}
