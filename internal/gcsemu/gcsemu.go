// Package gcsemu runs a Cloud Storage emulator in the process: the Go
// fake-gcs-server, serving Cloud Storage's JSON API on real HTTP, so that
// the service reaches it through the real cloud.google.com/go/storage
// client as it reaches Cloud Storage in production. cmd/dev, the tests
// and the convergence checker start it through package localstack. It
// keeps its objects in memory.
package gcsemu

import (
	"fmt"
	"io"

	"github.com/fsouza/fake-gcs-server/fakestorage"
)

// Emulator is a running Cloud Storage emulator.
type Emulator struct {
	// Endpoint is its JSON API's base URL, for media.Dial.
	Endpoint string
	srv      *fakestorage.Server
}

// Start starts an emulator on 127.0.0.1 (port 0 picks a free one) with the
// buckets named.
func Start(port uint16, buckets ...string) (*Emulator, error) {
	srv, err := fakestorage.NewServerWithOptions(fakestorage.Options{
		Scheme: "http", Host: "127.0.0.1", Port: port, Writer: io.Discard,
	})
	if err != nil {
		return nil, fmt.Errorf("gcsemu: %w", err)
	}
	for _, b := range buckets {
		srv.CreateBucketWithOpts(fakestorage.CreateBucketOpts{Name: b})
	}
	return &Emulator{Endpoint: srv.URL() + "/storage/v1/", srv: srv}, nil
}

// Objects lists the names of the objects in bucket under prefix, for
// tests and the convergence checker.
func (e *Emulator) Objects(bucket, prefix string) ([]string, error) {
	attrs, _, err := e.srv.ListObjects(bucket, prefix, "", false)
	if err != nil {
		return nil, err
	}
	names := make([]string, len(attrs))
	for i, a := range attrs {
		names[i] = a.Name
	}
	return names, nil
}

// Stop stops it.
func (e *Emulator) Stop() { e.srv.Stop() }
